//! [`LatentCx`]: what a latent completion can see and do.

use std::fmt;

use crate::commands::Commands;
use crate::time::Clocks;
use crate::timer::Timers;

/// The second argument of a latent completion: the frame's clocks, the timers and the
/// scheduler's commands, by the names every callback context uses.
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<Vec<u64>>::new();
/// sched.latent().delay(OwnerId::new(1), 0, secs(0.2), |seen, cx| {
///     seen.push(cx.clocks().frame());
///     cx.timers().after(secs(0.1)).call(|seen, cx| seen.push(cx.clocks().frame()));
/// });
/// let mut seen = vec![];
/// for _ in 0..4 {
///     sched.tick(secs(0.1), &mut seen);
/// }
/// assert_eq!(seen, [2, 3]);
/// ```
pub struct LatentCx<'a, C> {
    clocks: Clocks,
    timers: &'a mut Timers<C>,
}

impl<'a, C: 'static> LatentCx<'a, C> {
    pub(crate) fn new(clocks: Clocks, timers: &'a mut Timers<C>) -> Self {
        LatentCx { clocks, timers }
    }

    /// Every clock as this frame sees it (see [`Clocks`]).
    pub fn clocks(&self) -> Clocks {
        self.clocks
    }

    /// The timers: a timer set here counts from this frame's timer stage, which has run.
    pub fn timers(&mut self) -> &mut Timers<C> {
        self.timers
    }

    /// The scheduler's [`Commands`], applied right after this completion returns.
    pub fn commands(&self) -> &Commands<C> {
        self.timers.commands()
    }
}

impl<C: 'static> fmt::Debug for LatentCx<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatentCx")
            .field("frame", &self.clocks.frame())
            .finish_non_exhaustive()
    }
}
