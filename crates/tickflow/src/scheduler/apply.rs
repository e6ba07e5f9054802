//! Queued commands and how they are applied: the state a scheduler shares with its
//! [`Commands`](super::Commands) handles, and the boundary where their queue is emptied.

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::executor::{Exec, NewTask, TaskFactory};
use crate::handle::SharedAlloc;
use crate::latent::{Completion, LatentAction, LatentActions, LatentHandle};
use crate::owner::OwnerId;
use crate::tick::{Body, TickError, TickFunctions, TickHandle, TickSettings};
use crate::tickable::{Tickable, TickableHandle, Tickables};
use crate::time::{Clocks, Span};
use crate::timer::Timers;

/// Something to do to a timer manager, queued from anywhere.
pub(crate) type TimerOp<C> = Box<dyn FnOnce(&mut Timers<C>) + Send>;

pub(crate) enum Command<C> {
    AddTick(TickHandle, TickSettings, Body<C>),
    RemoveTick(TickHandle),
    SetEnabled(TickHandle, bool),
    SetInterval(TickHandle, Span),
    AddPrereq(TickHandle, TickHandle),
    RemovePrereq(TickHandle, TickHandle),
    AddTickable(TickableHandle, Box<dyn Tickable<C>>),
    RemoveTickable(TickableHandle),
    AddLatent(OwnerId, u64, Box<dyn LatentAction<C>>, Completion<C>),
    RetriggerableDelay(OwnerId, u64, Span, Completion<C>),
    RemoveLatent(OwnerId, u64),
    CancelLatent(LatentHandle),
    Spawn(NewTask),
    Timers(TimerOp<C>),
    RemoveOwner(OwnerId),
}

/// State shared by a scheduler and its `Commands` handles (which may be on other threads).
pub(crate) struct Shared<C: 'static> {
    pub(crate) ticks: SharedAlloc,
    pub(crate) tickables: SharedAlloc,
    /// Spawns tasks with their handles at once, to join the executor at the next boundary.
    pub(crate) tasks: TaskFactory,
    queue: Mutex<Vec<Command<C>>>,
    /// Set when something is queued (or, by the executor, when a dropped delay's timer waits
    /// to be cleared; or by the tick graph, when a call changed it): the boundaries skip the
    /// lock while it is clear.
    wake: Arc<AtomicBool>,
    /// The clocks of the frame being run (or the last one), for `Commands::clocks`.
    clocks: Mutex<Clocks>,
}

impl<C: 'static> Shared<C> {
    /// `wake` is the executor's flag (see [`Exec::wake`]).
    pub(crate) fn new(tasks: TaskFactory, wake: Arc<AtomicBool>) -> Self {
        Shared {
            ticks: SharedAlloc::default(),
            tickables: SharedAlloc::default(),
            tasks,
            queue: Mutex::new(Vec::new()),
            wake,
            clocks: Mutex::new(Clocks::default()),
        }
    }

    pub(crate) fn clocks(&self) -> Clocks {
        *self.clocks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set_clocks(&self, clocks: Clocks) {
        *self.clocks.lock().unwrap_or_else(PoisonError::into_inner) = clocks;
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Command<C>>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn push(&self, c: Command<C>) {
        if self.tasks.is_closed() {
            // The scheduler is being dropped: the command is dropped here, by the destructor
            // that queued it.
            return;
        }
        self.lock().push(c);
        self.wake.store(true, Ordering::Release);
    }

    /// The flag a tick function's boundary tests.
    pub(crate) fn wake(&self) -> &AtomicBool {
        &self.wake
    }

    pub(crate) fn has_pending(&self) -> bool {
        self.wake.load(Ordering::Acquire)
    }

    /// Commands queued and not applied yet.
    pub(crate) fn pending(&self) -> usize {
        self.lock().len()
    }

    fn take(&self) -> Vec<Command<C>> {
        self.wake.store(false, Ordering::Release);
        mem::take(&mut *self.lock())
    }

    /// Puts commands that were taken but not applied back at the front of the queue.
    fn put_back(&self, rest: impl Iterator<Item = Command<C>>) {
        let mut q = self.lock();
        let later = mem::take(&mut *q);
        q.extend(rest);
        q.extend(later);
        if !q.is_empty() {
            self.wake.store(true, Ordering::Release);
        }
    }
}

/// The parts of a scheduler that commands change.
pub(crate) struct Parts<'a, C: 'static> {
    pub(crate) ticks: &'a mut TickFunctions<C>,
    pub(crate) tickables: &'a mut Tickables<C>,
    pub(crate) timers: &'a mut Timers<C>,
    pub(crate) latent: &'a mut LatentActions<C>,
    pub(crate) exec: &'a Exec<C>,
}

/// Removes everything of `owner` (tasks are cancelled: their destructors run here). A
/// destructor that panics stops none of it: the first panic goes on once all is removed.
pub(crate) fn remove_owner<C: 'static>(p: &mut Parts<'_, C>, owner: OwnerId) {
    let exec = p.exec;
    let steps: [&mut dyn FnMut(); 5] = [
        &mut || {
            p.ticks.remove_owner(owner);
        },
        &mut || {
            p.tickables.remove_owner(owner);
        },
        &mut || {
            p.timers.clear_owner(owner);
        },
        &mut || {
            p.latent.remove_owner(owner);
        },
        &mut || {
            exec.cancel_owner(owner);
        },
    ];
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        crate::unwind::each_then_raise(steps, |step| {
            step();
            true
        })
    }));
    exec.clear_dropped(p.timers);
    if let Err(payload) = result {
        panic::resume_unwind(payload);
    }
}

/// The scheduler is being dropped (its executor is closed, so nothing can be queued after):
/// its queued commands are dropped, not applied. The executor must be active (a destructor
/// may use a `TaskCx`). Queued tasks join the executor, whose drop cancels them, so their
/// handles say so. A destructor that panics stops none of it: the first panic goes on once
/// all is dropped.
pub(crate) fn discard_queue<C: 'static>(shared: &Shared<C>, exec: &Exec<C>) {
    crate::unwind::each_then_raise(shared.take(), |c| {
        if let Command::Spawn(task) = c {
            exec.insert(task);
        }
        true
    });
}

/// Applies every queued command (including ones queued while applying, by destructors), and
/// drops the futures of tasks cancelled from other threads. The executor must be active.
pub(crate) fn apply<C: 'static>(
    shared: &Shared<C>,
    p: &mut Parts<'_, C>,
    errors: &mut Vec<TickError>,
) {
    if p.exec.has_remote_cancels() {
        let reaped = p.exec.reap_cancelled();
        p.exec.clear_dropped(p.timers);
        if let Err(payload) = reaped {
            panic::resume_unwind(payload);
        }
    }
    if p.exec.has_dropped() {
        p.exec.clear_dropped(p.timers);
    }
    while shared.has_pending() {
        let mut queue = shared.take().into_iter();
        let applied = panic::catch_unwind(AssertUnwindSafe(|| apply_each(p, errors, &mut queue)));
        // The batch's new tick functions are placed once all of it is applied, so that a
        // prerequisite queued after them (in the same callback) already counts.
        let settled = panic::catch_unwind(AssertUnwindSafe(|| p.ticks.settle()));
        p.exec.clear_dropped(p.timers);
        if let Err(payload) = applied {
            // A destructor panicked (a removed closure's, a cancelled task's): the commands
            // after it stay queued, ahead of any queued since, for the next boundary.
            shared.put_back(queue);
            panic::resume_unwind(payload);
        }
        if let Err(payload) = settled {
            panic::resume_unwind(payload);
        }
    }
}

fn apply_each<C: 'static>(
    p: &mut Parts<'_, C>,
    errors: &mut Vec<TickError>,
    queue: &mut impl Iterator<Item = Command<C>>,
) {
    for c in queue {
        match c {
            Command::AddTick(h, s, body) => p.ticks.graph_mut().insert_reserved(h, s, body),
            Command::RemoveTick(h) => {
                p.ticks.remove(h);
            }
            Command::SetEnabled(h, on) => {
                p.ticks.graph_mut().set_enabled(h, on);
            }
            Command::SetInterval(h, i) => {
                p.ticks.graph_mut().set_interval(h, i);
            }
            Command::AddPrereq(t, b) => {
                if let Err(e) = p.ticks.graph_mut().add_prereq(t, b) {
                    errors.push(e);
                }
            }
            Command::RemovePrereq(t, b) => {
                p.ticks.graph_mut().remove_prereq(t, b);
            }
            Command::AddTickable(h, t) => p.tickables.add_reserved(h, t),
            Command::RemoveTickable(h) => {
                p.tickables.remove(h);
            }
            Command::AddLatent(owner, uuid, action, f) => {
                p.latent.add_boxed(owner, uuid, action, f);
            }
            Command::RetriggerableDelay(owner, uuid, d, f) => {
                p.latent.retrigger_boxed(owner, uuid, d, f);
            }
            Command::RemoveLatent(owner, uuid) => {
                p.latent.remove(owner, uuid);
            }
            Command::CancelLatent(h) => {
                p.latent.cancel(h);
            }
            Command::Spawn(task) => p.exec.insert(task),
            Command::Timers(op) => op(p.timers),
            Command::RemoveOwner(owner) => remove_owner(p, owner),
        }
    }
}
