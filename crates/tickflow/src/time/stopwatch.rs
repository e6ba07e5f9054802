//! [`Stopwatch`]: elapsed time on one of the scheduler's clocks.

use crate::time::clocks::{Clocks, Domain};
use crate::time::point::Time;
use crate::time::span::Span;

/// Time elapsed on one of the scheduler's clocks while it runs: on the game clock (the
/// default) it stops while the game is paused and runs slower or faster with time dilation,
/// as `bevy_time::Stopwatch` does when ticked with `Time<Virtual>`. "How long has this round
/// lasted", "time spent in this zone".
///
/// It is plain data (a start time and the time banked before it): it costs nothing per frame,
/// reads any [`Clocks`] (a callback's `cx.clocks()`, [`Scheduler::clocks`](crate::Scheduler::clocks)),
/// and goes into a save game or rollback state as it is (`serde`, with that feature). Read it
/// with the clocks of the scheduler that started it.
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::time::Stopwatch;
///
/// let mut sched = Scheduler::<()>::new();
/// let mut round = Stopwatch::started(&sched.clocks(), Domain::Game);
/// sched.tick(secs(0.1), &mut ());
/// sched.set_paused(true);
/// sched.tick(secs(0.1), &mut ()); // the pause menu: the game clock stops
/// sched.set_paused(false);
/// sched.set_time_dilation(0.5);
/// sched.tick(secs(0.1), &mut ()); // slow motion: 0.05 s of game time
/// assert_eq!(round.elapsed(&sched.clocks()), secs(0.15));
///
/// round.stop(&sched.clocks());
/// sched.tick(secs(0.1), &mut ());
/// assert_eq!(round.elapsed(&sched.clocks()), secs(0.15));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Stopwatch {
    domain: Domain,
    /// Where the clock was when it last started; `None` while stopped.
    since: Option<Time>,
    /// Time counted before `since`.
    banked: Span,
}

impl Stopwatch {
    /// A stopped stopwatch at zero, counting on `domain`'s clock once started.
    pub fn new(domain: Domain) -> Self {
        Stopwatch {
            domain,
            since: None,
            banked: Span::ZERO,
        }
    }

    /// A stopwatch at zero, running from `clocks`' time on `domain`.
    pub fn started(clocks: &Clocks, domain: Domain) -> Self {
        let mut watch = Stopwatch::new(domain);
        watch.start(clocks);
        watch
    }

    /// The clock it counts on.
    pub fn domain(&self) -> Domain {
        self.domain
    }

    /// Starts it, or resumes it where it stopped (nothing when it is running).
    pub fn start(&mut self, clocks: &Clocks) {
        if self.since.is_none() {
            self.since = Some(clocks.now(self.domain));
        }
    }

    /// Stops it, keeping what it counted (nothing when it is stopped).
    pub fn stop(&mut self, clocks: &Clocks) {
        self.banked = self.elapsed(clocks);
        self.since = None;
    }

    /// Back to zero; a running stopwatch goes on running from `clocks`' time.
    pub fn reset(&mut self, clocks: &Clocks) {
        self.banked = Span::ZERO;
        if self.since.is_some() {
            self.since = Some(clocks.now(self.domain));
        }
    }

    /// `true` while it counts.
    pub fn is_running(&self) -> bool {
        self.since.is_some()
    }

    /// Time counted so far, read at `clocks`' time (clocks from before it started count
    /// nothing more).
    pub fn elapsed(&self, clocks: &Clocks) -> Span {
        let now = clocks.now(self.domain);
        let running = self.since.map_or(Span::ZERO, |since| now - since.min(now));
        self.banked.saturating_add(running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn counts_frames_and_real_time_through_a_pause() {
        let mut sched = Scheduler::<()>::new();
        let real = Stopwatch::started(&sched.clocks(), Domain::Real);
        let mut frames = Stopwatch::new(Domain::Frames);
        assert!(!frames.is_running());
        frames.start(&sched.clocks());
        sched.set_paused(true);
        sched.tick(secs(0.2), &mut ());
        sched.tick(secs(0.2), &mut ());
        assert_eq!(real.elapsed(&sched.clocks()), secs(0.4));
        assert_eq!(frames.elapsed(&sched.clocks()), Span::from_flicks(2));
        frames.reset(&sched.clocks());
        assert_eq!(frames.elapsed(&sched.clocks()), Span::ZERO);
        assert!(frames.is_running());
        // Read with clocks from before it started: nothing is counted, nothing panics.
        let early = Clocks::default();
        assert_eq!(frames.elapsed(&early), Span::ZERO);
    }
}
