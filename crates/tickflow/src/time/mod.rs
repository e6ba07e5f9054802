//! Exact integer time: the flick, [`Span`], [`Time`] and the three clocks ([`Domain`]).
//!
//! # Design
//!
//! Every duration and point in tickflow is a whole number of *flicks* (1/705,600,000 s) in a
//! `u64`. Floats drift: 0.1 s added ten times is not 1.0 s, so a float timer that loops for an
//! hour fires at the wrong frame. Integer flicks make the k-th call of a looping timer due at
//! exactly `start + first_delay + k * period`, forever, and make a frame at any common rate an
//! exact number of flicks.
//!
//! Ground rules:
//!
//! - Arithmetic saturates: `Span::MAX` / `Time::MAX` mean "never", and nothing panics on
//!   overflow (use the `checked_*` methods where overflow is an error in your program).
//! - Conversions from `f64` reject NaN, infinities and negative values with a [`TimeError`]
//!   naming the value; [`secs`] and [`Span::from_secs_f64`] panic with that message.
//!
//! Limits: resolution 1.42 ns; range about 829 years.

mod catch_up;
mod frames;
mod span;
mod stopwatch;

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

pub(crate) use catch_up::{assert_catch_up_cap, valid_catch_up_cap};
pub use catch_up::{CatchUp, DEFAULT_CATCH_UP_CAP, MAX_CATCH_UP_CAP};
pub use frames::{Frames, Interval};
pub use span::{Span, FLICKS_PER_SECOND};
pub use stopwatch::Stopwatch;

/// A point on one clock: the flicks since that clock started.
///
/// `Time + Span` gives a later point (saturating at [`Time::MAX`], "never"); `Time - Time`
/// gives the span between two points (zero if the right one is later); `Time - Span` gives an
/// earlier point (saturating at [`Time::ZERO`]).
///
/// On the [`Domain::Frames`] clock a `Time` counts frames: `flicks()` is the number of frames
/// that clock counted.
///
/// # Examples
///
/// ```
/// use tickflow::time::{secs, Time};
///
/// let t = Time::ZERO + secs(1.5);
/// assert_eq!(t - Time::ZERO, secs(1.5));
/// assert_eq!(Time::ZERO - t, secs(0.0));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub struct Time(u64);

impl Time {
    /// The moment a clock starts.
    pub const ZERO: Time = Time(0);
    /// The end of time: a timer due then never fires, and no clock reaches it.
    pub const MAX: Time = Time(u64::MAX);

    /// A point `flicks` flicks after the clock started.
    pub const fn from_flicks(flicks: u64) -> Time {
        Time(flicks)
    }

    /// The point `span` after the clock started: "30 s of game time" is `Time::at(secs(30.0))`
    /// (the same as `Time::ZERO + secs(30.0)`).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// assert_eq!(Time::at(secs(30.0)), Time::ZERO + secs(30.0));
    /// assert_eq!(Time::from_secs(30.0), Time::at(secs(30.0)));
    /// ```
    pub const fn at(span: Span) -> Time {
        Time(span.flicks())
    }

    /// The point `secs` seconds after the clock started, as [`secs`] makes the span (its
    /// rounding and its panics).
    #[track_caller]
    pub fn from_secs(secs: f64) -> Time {
        Time::at(self::secs(secs))
    }

    /// Flicks since the clock started.
    pub const fn flicks(self) -> u64 {
        self.0
    }

    /// The span since the clock started.
    pub const fn since_start(self) -> Span {
        Span::from_flicks(self.0)
    }

    /// This point in seconds since the clock started.
    pub fn as_secs_f64(self) -> f64 {
        self.since_start().as_secs_f64()
    }

    /// `self + span`, or `None` on overflow.
    pub const fn checked_add(self, span: Span) -> Option<Time> {
        match self.0.checked_add(span.flicks()) {
            Some(v) => Some(Time(v)),
            None => None,
        }
    }
}

impl Add<Span> for Time {
    type Output = Time;
    fn add(self, rhs: Span) -> Time {
        Time(self.0.saturating_add(rhs.flicks()))
    }
}

impl AddAssign<Span> for Time {
    fn add_assign(&mut self, rhs: Span) {
        *self = *self + rhs;
    }
}

impl Sub for Time {
    type Output = Span;
    fn sub(self, rhs: Time) -> Span {
        Span::from_flicks(self.0.saturating_sub(rhs.0))
    }
}

impl Sub<Span> for Time {
    type Output = Time;
    fn sub(self, rhs: Span) -> Time {
        Time(self.0.saturating_sub(rhs.flicks()))
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Time::MAX {
            return f.write_str("Time::MAX");
        }
        write!(f, "@{}s", self.as_secs_f64())
    }
}

impl fmt::Display for Time {
    /// Seconds since the clock started, e.g. `@1.5s`, with the precision asked for
    /// (`{:.1}` gives `@1.5s` for 1.4999 s).
    ///
    /// ```
    /// use tickflow::time::{secs, Time};
    ///
    /// assert_eq!(format!("{:.1}", Time::ZERO + secs(1.0 / 3.0)), "@0.3s");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Time::MAX {
            return f.write_str("never");
        }
        match f.precision() {
            Some(p) => write!(f, "@{:.*}s", p, self.as_secs_f64()),
            None => write!(f, "@{}s", self.as_secs_f64()),
        }
    }
}

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

/// An input that is not a valid length of time: a number of seconds that is NaN, infinite or
/// negative, or a frame rate of zero.
///
/// # Examples
///
/// ```
/// use tickflow::time::Span;
///
/// let err = Span::try_from_secs_f64(f64::NAN).unwrap_err();
/// assert!(err.value().is_nan());
/// assert_eq!(err.to_string(), "invalid span: NaN seconds (must be finite and not negative)");
///
/// let err = Span::try_frames(1, 0).unwrap_err();
/// assert!(err.is_zero_rate());
/// assert_eq!(err.to_string(), "invalid span: a frame rate of 0 Hz (frames at 0 Hz never end)");
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TimeError {
    kind: TimeErrorKind,
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum TimeErrorKind {
    Seconds(f64),
    ZeroRate,
    /// A frame rate so high that one frame rounds to zero flicks.
    RateTooHigh(u32),
}

impl TimeError {
    pub(crate) fn seconds(value: f64) -> TimeError {
        TimeError {
            kind: TimeErrorKind::Seconds(value),
        }
    }

    pub(crate) fn zero_rate() -> TimeError {
        TimeError {
            kind: TimeErrorKind::ZeroRate,
        }
    }

    pub(crate) fn rate_too_high(hz: u32) -> TimeError {
        TimeError {
            kind: TimeErrorKind::RateTooHigh(hz),
        }
    }

    /// The rejected number: the seconds given, the frame rate (`0.0` for a zero rate).
    pub fn value(&self) -> f64 {
        match self.kind {
            TimeErrorKind::Seconds(v) => v,
            TimeErrorKind::ZeroRate => 0.0,
            TimeErrorKind::RateTooHigh(hz) => f64::from(hz),
        }
    }

    /// `true` when a frame rate of zero was given ([`Span::try_frames`]).
    pub fn is_zero_rate(&self) -> bool {
        self.kind == TimeErrorKind::ZeroRate
    }

    /// `true` when a frame rate was so high that a frame is shorter than half a flick
    /// (above about 1.4 GHz, [`Span::try_frames`]): it would round to no time at all.
    pub fn is_rate_too_high(&self) -> bool {
        matches!(self.kind, TimeErrorKind::RateTooHigh(_))
    }
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            TimeErrorKind::Seconds(v) => write!(
                f,
                "invalid span: {v} seconds (must be finite and not negative)"
            ),
            TimeErrorKind::ZeroRate => {
                f.write_str("invalid span: a frame rate of 0 Hz (frames at 0 Hz never end)")
            }
            TimeErrorKind::RateTooHigh(hz) => write!(
                f,
                "invalid span: a frame rate of {hz} Hz (a frame would round to zero flicks)"
            ),
        }
    }
}

impl std::error::Error for TimeError {}

/// `secs` seconds as a [`Span`], rounded to the nearest flick.
///
/// # Panics
///
/// When `secs` is NaN, infinite or negative (see [`Span::try_from_secs_f64`]).
///
/// # Examples
///
/// ```
/// use tickflow::time::{secs, Span};
///
/// assert_eq!(secs(0.25), Span::from_millis(250));
/// ```
#[track_caller]
pub fn secs(secs: f64) -> Span {
    Span::from_secs_f64(secs)
}

/// `ms` milliseconds as a [`Span`] (exact).
pub const fn millis(ms: u64) -> Span {
    Span::from_millis(ms)
}
