//! [`LatentActionManager`]: latent actions that run on their own, driven by your loop instead
//! of a [`Scheduler`](crate::Scheduler).

use std::fmt;
use std::ops::{Deref, DerefMut};

use super::engine::LatentActions;
use crate::time::Span;
use crate::timer::{TimerManager, Timers};

/// Latent actions on their own (Unreal's `FLatentActionManager`): [`LatentActions`] (every
/// method to add, find and remove actions, through `Deref`) plus the stage that updates
/// them, which only its owner runs with [`tick`](Self::tick). A
/// [`Scheduler`](crate::Scheduler) holds [`LatentActions`] without this part: they run in its
/// latent stage.
///
/// Completions reach timers through their [`LatentCx`](super::LatentCx), as in a scheduler:
/// the manager keeps timers of its own ([`timers`](Self::timers)), which each `tick` runs
/// first, as a scheduler's timer stage comes before its latent stage. Their
/// [`commands`](super::LatentCx::commands) reach no scheduler, so they do nothing.
///
/// ```
/// use tickflow::latent::LatentActionManager;
/// use tickflow::prelude::*;
///
/// let door = OwnerId::new(7);
/// let mut latent = LatentActionManager::<Vec<&str>>::new();
/// latent.delay(door, 1, secs(0.3), |log, cx| {
///     log.push("open");
///     cx.timers().after(secs(0.1)).call(|log, _| log.push("swing"));
/// });
/// let mut log = Vec::new();
/// for _ in 0..4 {
///     latent.tick(secs(0.1), &mut log);
/// }
/// // Inclusive: 0.3 s is reached in the third frame; its timer fires in the fourth.
/// assert_eq!(log, ["open", "swing"]);
/// ```
///
/// A scheduler's latent actions run only in its latent stage, so this does not compile:
///
/// ```compile_fail
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<()>::new();
/// sched.latent().tick(secs(1.0), &mut ());
/// ```
pub struct LatentActionManager<C: 'static> {
    actions: LatentActions<C>,
    timers: TimerManager<C>,
}

impl<C: 'static> LatentActionManager<C> {
    /// No actions.
    pub fn new() -> Self {
        LatentActionManager {
            actions: LatentActions::new(),
            timers: TimerManager::new(),
        }
    }

    /// Tells the actions that a frame has begun: ones added before its latent stage get a
    /// zero delta at their first update (a [`Scheduler`](crate::Scheduler) does this for its
    /// own).
    pub fn begin_frame(&mut self) {
        self.timers.begin_frame();
        self.actions.open_frame();
    }

    /// The timers the completions reach through their context, run first in each `tick`.
    pub fn timers(&mut self) -> &mut Timers<C> {
        &mut self.timers
    }

    /// Runs the timers due by `dt`, then one latent stage: every action is updated with `dt`
    /// (game and real clocks; one frame on the frame clock), then the completions run.
    /// Returns how many completions ran.
    ///
    /// # Panics
    ///
    /// A panic in an action or a completion reaches the caller; the actions stay consistent
    /// and the completions still due run at the next `tick`.
    pub fn tick(&mut self, dt: Span, ctx: &mut C) -> usize {
        self.tick_step(dt, dt, ctx)
    }

    /// Like [`tick`](Self::tick) with separate game and real deltas.
    ///
    /// # Panics
    ///
    /// As [`tick`](Self::tick).
    pub fn tick_step(&mut self, game_dt: Span, real_dt: Span, ctx: &mut C) -> usize {
        self.timers.tick_step(game_dt, real_dt, ctx);
        let dts = [game_dt.flicks(), real_dt.flicks(), 1];
        let clocks = self.timers.clocks();
        self.actions
            .run(dts, (ctx, &clocks, &mut self.timers), &mut |_, _| {})
    }
}

impl<C: 'static> Deref for LatentActionManager<C> {
    type Target = LatentActions<C>;

    fn deref(&self) -> &LatentActions<C> {
        &self.actions
    }
}

impl<C: 'static> DerefMut for LatentActionManager<C> {
    fn deref_mut(&mut self) -> &mut LatentActions<C> {
        &mut self.actions
    }
}

impl<C: 'static> Default for LatentActionManager<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: 'static> fmt::Debug for LatentActionManager<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.actions.fmt(f)
    }
}
