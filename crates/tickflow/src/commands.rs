//! [`Commands`]: the handle every callback context hands out for structural changes, defined
//! here, below the services, so that each of them can carry one; what it queues, and where it
//! is applied, is the scheduler's (`scheduler/commands.rs`).

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::{Arc, Weak};

/// A cloneable handle for changing a scheduler from code that does not hold it: every
/// callback reaches one with `cx.commands()`, and [`Scheduler::commands`](crate::Scheduler::commands)
/// hands one to other threads. It has the scheduler's services by the same names —
/// [`ticks`](Self::ticks), [`tickables`](Self::tickables), [`latent`](Self::latent),
/// [`tasks`](Self::tasks), [`timers`](Self::timers) — and removes owners.
///
/// Commands are queued and applied at the next boundary: after the current tick function,
/// timer callback, tickable, latent completion or task poll returns, or at the start of the
/// next frame (or the next direct call on the scheduler) when queued between frames or from
/// another thread. A tick function added during a frame runs in that frame, in the first group
/// after the stage it was applied in. Handles are handed out at once; a task spawned from code
/// the scheduler runs is not queued at all.
///
/// `Send + Sync + Clone`. Commands that reach no scheduler — those of a standalone
/// [`TimerManager`](crate::TimerManager) or [`LatentActionManager`](crate::LatentActionManager),
/// or of a scheduler that was dropped — do nothing, as a send on a closed channel: the work is
/// dropped, the handles they return name nothing, a spawned task is cancelled at birth, and
/// [`is_connected`](Self::is_connected) says `false`.
///
/// Errors found when a command is applied (a prerequisite that would form a cycle) are
/// reported in [`FrameReport::errors`](crate::FrameReport::errors); a stale handle is not an
/// error and does nothing.
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<Vec<&'static str>>::new();
/// sched.timers().after(secs(0.1)).call(|_, cx| {
///     // Timers run after PostPhysics: the new function runs in PostUpdateWork this frame.
///     cx.commands().ticks().add(TickSettings::named("late"), |log, cx| {
///         log.push(if cx.group() == TickGroup::PostUpdateWork { "same frame" } else { "?" });
///     });
/// });
/// let mut log = vec![];
/// sched.tick(secs(0.1), &mut log);
/// assert_eq!(log, ["same frame"]);
/// ```
pub struct Commands<C> {
    /// The scheduler's shared state, type-erased so that this leaf needs nothing above it.
    link: Weak<dyn Any + Send + Sync + RefUnwindSafe + UnwindSafe>,
    _context: PhantomData<fn() -> C>,
}

impl<C> Clone for Commands<C> {
    fn clone(&self) -> Self {
        Commands {
            link: Weak::clone(&self.link),
            _context: PhantomData,
        }
    }
}

impl<C> Commands<C> {
    /// Commands that reach no scheduler.
    pub(crate) fn disconnected() -> Self {
        Commands {
            link: Weak::<()>::new(),
            _context: PhantomData,
        }
    }

    /// Commands that reach `shared`.
    pub(crate) fn connected<T: Any + Send + Sync + RefUnwindSafe + UnwindSafe>(
        shared: &Arc<T>,
    ) -> Self {
        let weak: Weak<T> = Arc::downgrade(shared);
        Commands {
            link: weak,
            _context: PhantomData,
        }
    }

    /// The shared state, while its scheduler exists.
    pub(crate) fn upgrade<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let shared: Arc<dyn Any + Send + Sync> = self.link.upgrade()?;
        shared.downcast::<T>().ok()
    }

    /// `true` while the scheduler these commands go to exists.
    pub fn is_connected(&self) -> bool {
        self.link.strong_count() > 0
    }
}
