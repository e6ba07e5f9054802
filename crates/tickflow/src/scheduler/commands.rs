//! What [`Commands`] queue for a scheduler: the per-service views and the cross-service
//! operations, pushed onto the queue `apply.rs` empties at each boundary.

use std::fmt;
use std::sync::Arc;

use super::apply::{Command, Shared};
use super::queued::{LatentCommands, TaskCommands, TickCommands, TickableCommands};
use crate::commands::Commands;
use crate::owner::OwnerId;
use crate::time::Clocks;
use crate::timer::Timers;

impl<C: 'static> fmt::Debug for Commands<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shared() {
            Some(s) => f
                .debug_struct("Commands")
                .field("queued", &s.pending())
                .finish(),
            None => f.write_str("Commands(no scheduler)"),
        }
    }
}

impl<C: 'static> Commands<C> {
    /// The scheduler's shared state; `None` when there is no scheduler.
    pub(crate) fn shared(&self) -> Option<Arc<Shared<C>>> {
        self.upgrade::<Shared<C>>()
    }

    /// Queues `c`; dropped at once when there is no scheduler.
    pub(crate) fn push(&self, c: Command<C>) {
        if let Some(s) = self.shared() {
            s.push(c);
        }
    }

    /// The clocks of the frame the scheduler runs (or ran last), for code that has no
    /// context of its own (another thread). Zero when there is no scheduler.
    pub fn clocks(&self) -> Clocks {
        self.shared().map(|s| s.clocks()).unwrap_or_default()
    }

    /// Queues tick-function changes: [`TickCommands`].
    pub fn ticks(&self) -> TickCommands<'_, C> {
        TickCommands::new(self)
    }

    /// Queues tickable changes: [`TickableCommands`].
    pub fn tickables(&self) -> TickableCommands<'_, C> {
        TickableCommands::new(self)
    }

    /// Queues latent actions: [`LatentCommands`].
    pub fn latent(&self) -> LatentCommands<'_, C> {
        LatentCommands::new(self)
    }

    /// Spawns tasks: [`TaskCommands`].
    pub fn tasks(&self) -> TaskCommands<'_, C> {
        TaskCommands::new(self)
    }

    /// Queues work on the scheduler's timers: `op` runs at the next boundary with `&mut`
    /// access to them (set, clear, pause or query timers). For code that has no `timers()`
    /// of its own (another thread, say): every callback context has one.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<u32>::new();
    /// let cmds = sched.commands();
    /// let handle = Arc::new(Mutex::new(TimerHandle::default()));
    /// let h = handle.clone();
    /// std::thread::spawn(move || {
    ///     cmds.timers(move |t| *h.lock().unwrap() = t.every(secs(0.1)).call(|n, _| *n += 1));
    /// })
    /// .join()
    /// .unwrap();
    /// let mut n = 0;
    /// sched.tick(secs(0.1), &mut n); // applied at the start of the frame
    /// sched.tick(secs(0.1), &mut n);
    /// assert_eq!(n, 2);
    /// assert!(sched.timers().exists(*handle.lock().unwrap()));
    /// ```
    pub fn timers(&self, op: impl FnOnce(&mut Timers<C>) + Send + 'static) {
        self.push(Command::Timers(Box::new(op)));
    }

    /// Queues removing all of an owner's timers, tick functions, tickables, latent actions and
    /// tasks.
    pub fn remove_owner(&self, owner: OwnerId) {
        self.push(Command::RemoveOwner(owner));
    }
}
