//! [`TimerManager`]: timers that run on their own, driven by your loop instead of a
//! [`Scheduler`](crate::Scheduler).

use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::time::Span;
use crate::timer::manager::Timers;

/// Timers on their own: [`Timers`] (every method to set, clear, pause and query timers,
/// through `Deref`) plus the clock, which only its owner advances with
/// [`tick`](Self::tick). A [`Scheduler`](crate::Scheduler) holds [`Timers`] without this
/// part, since its frames move the clocks.
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut timers = TimerManager::<u32>::new();
/// let h = timers.every(secs(0.5)).call(|n, _| *n += 1);
/// let mut n = 0;
/// for _ in 0..4 {
///     timers.tick(secs(0.25), &mut n);
/// }
/// assert_eq!((n, timers.calls_made(h)), (2, Some(2)));
/// ```
///
/// A scheduler's timers have no clock of their own to move (it would put them out of step
/// with the rest of the frame), so this does not compile:
///
/// ```compile_fail
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<()>::new();
/// sched.timers().tick(secs(1.0), &mut ());
/// ```
pub struct TimerManager<C: 'static> {
    timers: Timers<C>,
}

impl<C: 'static> TimerManager<C> {
    /// An empty manager with all clocks at zero.
    pub fn new() -> Self {
        TimerManager {
            timers: Timers::new(),
        }
    }

    /// An empty manager with room for `capacity` timers before its tables grow (like
    /// `Vec::with_capacity`): at 1e6 timers this saves the ~5 % slack of doubling growth.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut m = Self::new();
        m.timers.reserve_exact(capacity);
        m
    }

    /// Tells the manager that a new frame has begun: until the next [`tick`](Self::tick),
    /// new timers are *pending* and count their delay from the time that tick reaches (the
    /// delta of the frame they were set in never counts). A
    /// [`Scheduler`](crate::Scheduler) does this for its own timers.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<u32>::new();
    /// timers.begin_frame();
    /// let h = timers.after(secs(1.0)).call(|n, _| *n += 1);
    /// assert!(timers.is_pending(h));
    /// let mut n = 0;
    /// timers.tick(secs(0.5), &mut n); // the countdown starts at 0.5
    /// assert_eq!(timers.remaining(h), Some(secs(1.0)));
    /// ```
    pub fn begin_frame(&mut self) {
        self.timers.open_frame();
    }

    /// Advances the game and real clocks by `dt` and the frame clock by one, then makes every
    /// call that is due, in order. Returns how many calls it made.
    ///
    /// # Panics
    ///
    /// A panic in a callback reaches the caller after the manager is made consistent (the
    /// remaining due calls run at the next tick).
    pub fn tick(&mut self, dt: Span, ctx: &mut C) -> usize {
        self.tick_step(dt, dt, ctx)
    }

    /// Like [`tick`](Self::tick) with separate deltas for the game clock (scaled, paused) and
    /// the real clock.
    ///
    /// # Panics
    ///
    /// As [`tick`](Self::tick).
    pub fn tick_step(&mut self, game_dt: Span, real_dt: Span, ctx: &mut C) -> usize {
        let to = self
            .timers
            .clocks()
            .advanced(game_dt, real_dt, game_dt, true);
        self.timers.run_tick(&to, ctx, &mut |_| {})
    }

    /// A manager holding `timers` (a restore builds them).
    pub(crate) fn from_timers(timers: Timers<C>) -> Self {
        TimerManager { timers }
    }
}

impl<C: 'static> Deref for TimerManager<C> {
    type Target = Timers<C>;

    fn deref(&self) -> &Timers<C> {
        &self.timers
    }
}

impl<C: 'static> DerefMut for TimerManager<C> {
    fn deref_mut(&mut self) -> &mut Timers<C> {
        &mut self.timers
    }
}

impl<C: 'static> Default for TimerManager<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: 'static> fmt::Debug for TimerManager<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.timers.fmt(f)
    }
}
