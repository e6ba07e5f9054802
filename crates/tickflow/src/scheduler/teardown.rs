//! Dropping a scheduler: everything it holds goes while its executor is reachable, so that a
//! destructor may use the `TaskCx` or `Commands` it holds, and nothing a destructor spawns
//! can keep the drop going.

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use super::{apply, Scheduler};
use crate::latent::LatentActions;
use crate::tick::TickFunctions;
use crate::tickable::Tickables;
use crate::timer::Timers;

impl<C: 'static> Drop for Scheduler<C> {
    /// Closes the executor first: what destructors spawn from now on is cancelled at birth,
    /// and what they queue is dropped at once. Then the queued commands, timers, tick
    /// functions, tickables and latent actions are dropped inside the executor's activation,
    /// each under the panic guard; the tasks are cancelled last, when the executor is dropped.
    fn drop(&mut self) {
        let exec = self.tasks.exec();
        exec.close();
        let ticks = TickFunctions::new(Arc::clone(&self.shared.ticks), exec.wake().clone());
        let ticks = mem::replace(&mut self.ticks, ticks);
        let tickables = Tickables::new(Arc::clone(&self.shared.tickables));
        let tickables = mem::replace(&mut self.tickables, tickables);
        let timers = mem::replace(&mut self.timers, Timers::new());
        let latent = mem::replace(&mut self.latent, LatentActions::new());
        let shared = &self.shared;
        let parts: [Box<dyn FnOnce() + '_>; 5] = [
            Box::new(|| apply::discard_queue(shared, exec)),
            Box::new(move || drop(timers)),
            Box::new(move || drop(ticks)),
            Box::new(move || drop(tickables)),
            Box::new(move || drop(latent)),
        ];
        let dropped = panic::catch_unwind(AssertUnwindSafe(|| {
            exec.activate(|| {
                crate::unwind::each_then_raise(parts, |part| {
                    part();
                    true
                })
            })
        }));
        // A destructor's panic goes on, unless one is already unwinding (a second panic
        // would abort the process).
        if let Err(p) = dropped {
            if !std::thread::panicking() {
                panic::resume_unwind(p);
            }
        }
    }
}
