//! What a running tick function can see and do: [`TickCx`] (serial) and [`Deferred`]
//! (parallel).

use std::fmt;

use crate::cx::Cx;
use crate::tick::handle::TickHandle;
use crate::tick::settings::TickGroup;
use crate::time::{Clocks, Span};

/// The second argument of a tick function: its delta, group and handle, and, as every
/// [`Cx`], the frame's clocks, the timers and the scheduler's commands.
///
/// Commands queued here are applied as soon as this function returns: a function removed or
/// disabled then does not run later in this frame, and a function added or enabled runs
/// later in this frame, in the first group after the current one that it may run in. The
/// frame's order was fixed when it started, so prerequisites added or removed here shape the
/// order from the next frame.
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<Vec<String>>::new();
/// sched.ticks().add(TickSettings::named("spawner"), |log, cx| {
///     log.push(format!("spawner in {:?}", cx.group()));
///     if cx.clocks().frame() == 1 {
///         cx.commands().ticks().add(TickSettings::named("child"), |log, cx| {
///             log.push(format!("child in {:?}", cx.group()));
///         });
///     }
/// });
/// let mut log = Vec::new();
/// sched.tick(secs(0.1), &mut log);
/// assert_eq!(log, ["spawner in PrePhysics", "child in DuringPhysics"]);
/// ```
pub type TickCx<'a, C> = Cx<'a, C, TickCall>;

/// What a [`TickCx`] knows of its call.
#[derive(Clone, Debug)]
pub struct TickCall {
    pub(crate) dt: Span,
    pub(crate) group: TickGroup,
    pub(crate) handle: TickHandle,
}

impl<C: 'static> Cx<'_, C, TickCall> {
    /// The delta this function receives: the frame's game delta (the real delta while
    /// paused), accumulated since the previous tick for interval functions, times the
    /// function's own time dilation.
    pub fn dt(&self) -> Span {
        self.kind().dt
    }

    /// The group this function actually runs in (after demotion, or where it was spawned).
    pub fn group(&self) -> TickGroup {
        self.kind().group
    }

    /// This function's handle.
    pub fn handle(&self) -> TickHandle {
        self.kind().handle
    }
}

/// A change a parallel function asks for, applied on the game thread at its group's end.
type Later<C> = Box<dyn FnOnce(&mut C, &mut TickCx<'_, C>) + Send>;

/// The third argument of a parallel tick function: its delta and frame, and a buffer of
/// changes that run on the game thread when the group ends.
///
/// Buffers are applied in the functions' registration order, each in the order it was filled,
/// so the outcome does not depend on which worker finished first.
///
/// ```
/// use tickflow::prelude::*;
///
/// struct World { total: u64 }
/// let mut sched = Scheduler::<World>::new();
/// for i in 1..=4u64 {
///     sched.ticks().add_parallel(TickSettings::default(), i, |n: &mut u64, world: &World, out| {
///         *n *= 10; // the function's own state
///         let add = *n + world.total;
///         out.run(move |world: &mut World| world.total += add);
///     });
/// }
/// let mut world = World { total: 0 };
/// sched.tick(secs(0.1), &mut world);
/// assert_eq!(world.total, 100);
/// ```
pub struct Deferred<C> {
    pub(crate) dt: Span,
    pub(crate) clocks: Clocks,
    pub(crate) group: TickGroup,
    pub(crate) handle: TickHandle,
    pub(crate) later: Vec<Later<C>>,
}

impl<C> Deferred<C> {
    pub(crate) fn new(
        dt: Span,
        clocks: Clocks,
        group: TickGroup,
        handle: TickHandle,
    ) -> Deferred<C> {
        Deferred {
            dt,
            clocks,
            group,
            handle,
            later: Vec::new(),
        }
    }

    /// The delta this function receives (as [`TickCx::dt`]).
    pub fn dt(&self) -> Span {
        self.dt
    }

    /// Every clock as this frame sees it (as [`TickCx::clocks`]).
    pub fn clocks(&self) -> Clocks {
        self.clocks
    }

    /// The group this function runs in.
    pub fn group(&self) -> TickGroup {
        self.group
    }

    /// This function's handle.
    pub fn handle(&self) -> TickHandle {
        self.handle
    }

    /// Changes the context when the group ends.
    pub fn run(&mut self, f: impl FnOnce(&mut C) + Send + 'static) {
        self.later.push(Box::new(move |ctx, _| f(ctx)));
    }

    /// Runs `f` on the game thread when the group ends, with the context and a [`TickCx`] for
    /// this function: its `timers()` and `commands()` are how a parallel function reaches the
    /// scheduler's services.
    pub fn later(&mut self, f: impl FnOnce(&mut C, &mut TickCx<'_, C>) + Send + 'static) {
        self.later.push(Box::new(f));
    }

    /// `true` when nothing was asked for.
    pub(crate) fn is_empty(&self) -> bool {
        self.later.is_empty()
    }
}

impl<C> fmt::Debug for Deferred<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deferred")
            .field("handle", &self.handle)
            .field("frame", &self.clocks.frame())
            .field("pending", &self.later.len())
            .finish_non_exhaustive()
    }
}
