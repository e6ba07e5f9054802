//! The three clocks ([`Domain`]) and one frame's reading of them ([`Clocks`]), with the
//! limit on time dilation.

use crate::time::point::Time;
use crate::time::span::Span;

/// The largest time dilation [`Scheduler::set_time_dilation`](crate::Scheduler::set_time_dilation)
/// and [`TickSettings::time_dilation`](crate::TickSettings::time_dilation) accept: a million times real speed.
///
/// Dilation is applied after the `max_delta` clamp, so it decides how much game time one frame
/// can cover: at this maximum a 250 ms frame is about three days of game time. Faster-than-this
/// simulation is better done with more frames (the clocks stay exact), and a larger factor
/// would reach the end of representable time (about 829 years) in a few hours of frames.
pub const MAX_TIME_DILATION: f64 = 1e6;

/// `true` for a dilation the scheduler accepts.
pub(crate) fn valid_dilation(factor: f64) -> bool {
    factor.is_finite() && (0.0..=MAX_TIME_DILATION).contains(&factor)
}

/// Which clock a timer, tick interval or latent delay counts on.
///
/// | domain | advances by | while paused |
/// |---|---|---|
/// | `Game` | the frame's delta × time dilation, clamped to `max_delta` | stopped |
/// | `Real` | the true frame delta | runs |
/// | `Frames` | one per frame (a `Span`/`Time` on it counts frames) | runs ([unless set](crate::Scheduler::set_frame_clock_pauses)) |
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub enum Domain {
    /// Scaled game time (the default).
    #[default]
    Game,
    /// Unscaled wall time, as the loop measured it.
    Real,
    /// Frame count.
    Frames,
}

impl Domain {
    /// All three domains, in index order.
    pub const ALL: [Domain; 3] = [Domain::Game, Domain::Real, Domain::Frames];

    /// A dense index (0, 1, 2) for per-domain tables.
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Every clock as one frame sees it: each [`Domain`]'s time and how far it moved in that
/// frame. The value is the same for every callback of a frame, whichever stage it runs in: the
/// time the frame reaches (a tick function in `PrePhysics` sees the same `now` as a timer
/// callback). Between frames it is the last frame's.
///
/// # Examples
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<Vec<(u64, f64, f64)>>::new();
/// sched.ticks().add(TickSettings::default(), |log, cx| {
///     let c = cx.clocks();
///     log.push((c.frame(), c.now(Domain::Game).as_secs_f64(), c.delta(Domain::Game).as_secs_f64()));
/// });
/// sched.set_time_dilation(0.5);
/// let mut log = Vec::new();
/// sched.tick(secs(0.2), &mut log);
/// sched.tick(secs(0.2), &mut log);
/// assert_eq!(log, [(1, 0.1, 0.1), (2, 0.2, 0.1)]);
/// assert_eq!(sched.clocks().now(Domain::Real), Time::ZERO + secs(0.4));
/// ```
///
/// Beside the three domains it carries the **unpaused** clock, the one
/// [`tick_when_paused`](crate::tick::TickSettings::tick_when_paused) functions and tickables
/// run on: it moves with the game clock while the game runs, and by the real delta (clamped
/// to `max_delta`) while it is paused, so it never stops.
///
/// A [`Scheduler`](crate::Scheduler) owns one value of it, advanced once at the start of each
/// frame and lent to every stage: tick functions, timers,
/// tickables, latent actions and tasks all read that one value.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Clocks {
    now: [u64; 3],
    delta: [u64; 3],
    unpaused: u64,
    unpaused_delta: u64,
    /// Frames run, paused ones included: the frame's number. The `Frames` clock is the same
    /// count unless paused frames do not move it.
    frame: u64,
}

impl Clocks {
    /// Clocks at `now` that moved by `delta` in the frame (each in [`Domain`] order) in frame
    /// number `frame`, never paused (the unpaused clock is the game clock: a timer manager on
    /// its own).
    pub(crate) const fn new(now: [u64; 3], delta: [u64; 3], frame: u64) -> Clocks {
        Clocks {
            now,
            delta,
            unpaused: now[0],
            unpaused_delta: delta[0],
            frame,
        }
    }

    /// These clocks with the unpaused clock at `now`, having moved by `delta` (a restore).
    pub(crate) const fn with_unpaused(self, now: u64, delta: u64) -> Clocks {
        Clocks {
            unpaused: now,
            unpaused_delta: delta,
            ..self
        }
    }

    /// The clocks one frame later: the game and real clocks moved by their deltas, the frame
    /// clock by one if `count_frame` (else it stays), the unpaused clock by `unpaused`, the
    /// frame number by one. The domains and the frame number stop one flick short of "never"
    /// (so that a timer due never stays never); the unpaused clock saturates.
    pub(crate) fn advanced(
        self,
        game: Span,
        real: Span,
        unpaused: Span,
        count_frame: bool,
    ) -> Clocks {
        let delta = [game.flicks(), real.flicks(), u64::from(count_frame)];
        let mut now = self.now;
        for (t, dt) in now.iter_mut().zip(delta) {
            *t = t.saturating_add(dt).min(u64::MAX - 1);
        }
        Clocks {
            now,
            delta,
            unpaused: self.unpaused.saturating_add(unpaused.flicks()),
            unpaused_delta: unpaused.flicks(),
            frame: self.frame.saturating_add(1).min(u64::MAX - 1),
        }
    }

    /// The raw times, in [`Domain`] order.
    pub(crate) const fn raw(&self) -> [u64; 3] {
        self.now
    }

    /// The raw deltas, in [`Domain`] order.
    pub(crate) const fn raw_deltas(&self) -> [u64; 3] {
        self.delta
    }

    /// The time of one clock (on [`Domain::Frames`], `flicks()` counts frames).
    pub const fn now(&self, domain: Domain) -> Time {
        Time::from_flicks(self.now[domain as usize])
    }

    /// How far one clock moved in the frame (on [`Domain::Frames`]: one frame).
    pub const fn delta(&self, domain: Domain) -> Span {
        Span::from_flicks(self.delta[domain as usize])
    }

    /// The unpaused clock (see above).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<()>::new();
    /// sched.tick(secs(0.1), &mut ());
    /// sched.set_paused(true);
    /// sched.tick(secs(0.1), &mut ());
    /// let c = sched.clocks();
    /// assert_eq!(c.now(Domain::Game), Time::ZERO + secs(0.1)); // stopped
    /// assert_eq!(c.unpaused(), Time::ZERO + secs(0.2)); // ran on
    /// assert_eq!(c.unpaused_delta(), secs(0.1));
    /// ```
    pub const fn unpaused(&self) -> Time {
        Time::from_flicks(self.unpaused)
    }

    /// How far the unpaused clock moved in the frame: the game delta, or while paused the
    /// real delta clamped to `max_delta`.
    pub const fn unpaused_delta(&self) -> Span {
        Span::from_flicks(self.unpaused_delta)
    }

    /// The frame number (the first frame is 1; 0 before it). Every frame counts, paused ones
    /// included; it equals `now(Domain::Frames)` unless the scheduler's
    /// [frame clock pauses](crate::Scheduler::set_frame_clock_pauses).
    pub const fn frame(&self) -> u64 {
        self.frame
    }
}
