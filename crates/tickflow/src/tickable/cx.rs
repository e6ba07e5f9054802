//! [`TickableCx`]: what a ticking tickable can see and do.

use std::fmt;

use crate::commands::Commands;
use crate::time::{Clocks, Span};
use crate::timer::Timers;

/// The second argument of [`Tickable::tick`](super::Tickable::tick): its delta, the frame's
/// clocks, the timers and the scheduler's commands, by the names every callback context uses.
pub struct TickableCx<'a, C> {
    dt: Span,
    clocks: Clocks,
    timers: &'a mut Timers<C>,
}

impl<'a, C: 'static> TickableCx<'a, C> {
    pub(crate) fn new(dt: Span, clocks: Clocks, timers: &'a mut Timers<C>) -> Self {
        TickableCx { dt, clocks, timers }
    }

    /// The frame's delta: the game delta, or the real one (clamped to `max_delta`) while
    /// paused.
    pub fn dt(&self) -> Span {
        self.dt
    }

    /// Every clock as this frame sees it (see [`Clocks`]).
    pub fn clocks(&self) -> Clocks {
        self.clocks
    }

    /// The timers: a timer set here counts from this frame's timer stage, which has run.
    pub fn timers(&mut self) -> &mut Timers<C> {
        self.timers
    }

    /// The scheduler's [`Commands`], applied right after this tickable returns.
    pub fn commands(&self) -> &Commands<C> {
        self.timers.commands()
    }
}

impl<C: 'static> fmt::Debug for TickableCx<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickableCx")
            .field("dt", &self.dt)
            .field("frame", &self.clocks.frame())
            .finish_non_exhaustive()
    }
}
