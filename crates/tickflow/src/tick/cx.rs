//! What a running tick function can see and do: [`TickCx`] (serial) and [`Deferred`]
//! (parallel).

use std::fmt;

use super::body::Body;
use super::{TickError, TickGraph, TickGroup, TickHandle, TickSettings};
use crate::time::{Clocks, Span};
use crate::timer::Timers;

/// The second argument of a tick function: its delta, the frame, the timer manager, and
/// structural changes to the tick graph.
///
/// Changes apply at once: a function removed or disabled here does not run later in this
/// frame, and a function added or enabled here runs later in this frame, in the first group
/// after the current one that it may run in. The frame's order was fixed when it started, so
/// prerequisites added or removed here shape the order from the next frame.
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<Vec<String>>::new();
/// sched.ticks().add(TickSettings::named("spawner"), |log, cx| {
///     log.push(format!("spawner in {:?}", cx.group()));
///     if cx.frame() == 1 {
///         cx.add_tick(TickSettings::named("child"), |log, cx| {
///             log.push(format!("child in {:?}", cx.group()));
///         });
///     }
/// });
/// let mut log = Vec::new();
/// sched.tick(secs(0.1), &mut log);
/// assert_eq!(log, ["spawner in PrePhysics", "child in DuringPhysics"]);
/// ```
pub struct TickCx<'a, C> {
    pub(crate) dt: Span,
    pub(crate) clocks: &'a Clocks,
    pub(crate) group: TickGroup,
    pub(crate) handle: TickHandle,
    pub(crate) timers: &'a mut Timers<C>,
    pub(crate) graph: &'a mut TickGraph<C>,
}

impl<C: 'static> TickCx<'_, C> {
    /// The delta this function receives: the frame's game delta (the real delta while
    /// paused), accumulated since the previous tick for interval functions, times the
    /// function's own time dilation.
    pub fn dt(&self) -> Span {
        self.dt
    }

    /// The number of the frame being run (the first frame is 1).
    pub fn frame(&self) -> u64 {
        self.clocks.frame()
    }

    /// Every clock as this frame sees it (the time the frame reaches), and how far each moved
    /// in it (see [`Clocks`]).
    pub fn clocks(&self) -> &Clocks {
        self.clocks
    }

    /// The group this function actually runs in (after demotion, or where it was spawned).
    pub fn group(&self) -> TickGroup {
        self.group
    }

    /// This function's handle.
    pub fn handle(&self) -> TickHandle {
        self.handle
    }

    /// The scheduler's timer manager. Timers set before the frame's timer stage are pending
    /// and count from the time that stage reaches (the frame's delta never counts).
    pub fn timers(&mut self) -> &mut Timers<C> {
        self.timers
    }

    /// Registers a tick function; it runs later in this frame.
    ///
    /// # Panics
    ///
    /// When the settings are invalid (see [`TickSettings`]); [`try_add_tick`](Self::try_add_tick)
    /// returns the error instead.
    #[track_caller]
    pub fn add_tick(
        &mut self,
        settings: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> TickHandle {
        self.try_add_tick(settings, f)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Registers a tick function, or says why the settings are refused.
    pub fn try_add_tick(
        &mut self,
        settings: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> Result<TickHandle, TickError> {
        self.graph.insert(settings, Body::Serial(Box::new(f)))
    }

    /// Unregisters a function (this one included: it finishes this call). `false` for a
    /// stale handle.
    pub fn remove_tick(&mut self, h: TickHandle) -> bool {
        self.graph.remove(h)
    }

    /// Enables or disables a function. Disabling resets its interval, so once enabled again it
    /// ticks at once. `false` for a stale handle.
    pub fn set_tick_enabled(&mut self, h: TickHandle, on: bool) -> bool {
        self.graph.set_enabled(h, on)
    }

    /// Changes a function's interval and restarts its cooldown. `false` for a stale handle.
    pub fn set_tick_interval(&mut self, h: TickHandle, interval: Span) -> bool {
        self.graph.set_interval(h, interval)
    }

    /// Makes `tick` run after `before` from the next frame on.
    ///
    /// # Errors
    ///
    /// [`TickError::Cycle`] or [`TickError::UnknownTick`]; nothing changes then.
    pub fn add_prerequisite(
        &mut self,
        tick: TickHandle,
        before: TickHandle,
    ) -> Result<(), TickError> {
        self.graph.add_prereq(tick, before)
    }

    /// Removes a prerequisite; `false` when there was none.
    pub fn remove_prerequisite(&mut self, tick: TickHandle, before: TickHandle) -> bool {
        self.graph.remove_prereq(tick, before)
    }

    /// `true` while `h` is registered and enabled.
    pub fn is_tick_enabled(&self, h: TickHandle) -> bool {
        self.graph.get(h).is_some_and(|n| n.settings.enabled)
    }
}

impl<C> fmt::Debug for TickCx<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickCx")
            .field("handle", &self.handle)
            .field("frame", &self.clocks.frame())
            .field("group", &self.group)
            .field("dt", &self.dt)
            .finish_non_exhaustive()
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

    /// The number of the frame being run.
    pub fn frame(&self) -> u64 {
        self.clocks.frame()
    }

    /// Every clock as this frame sees it (as [`TickCx::clocks`]).
    pub fn clocks(&self) -> &Clocks {
        &self.clocks
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
    /// this function: set timers, add or remove tick functions.
    pub fn later(&mut self, f: impl FnOnce(&mut C, &mut TickCx<'_, C>) + Send + 'static) {
        self.later.push(Box::new(f));
    }

    /// `true` when nothing was asked for.
    pub fn is_empty(&self) -> bool {
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
