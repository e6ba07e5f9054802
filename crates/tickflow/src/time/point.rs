//! [`Time`]: a point on one clock.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use crate::time::span::Span;

/// A point on one clock: the flicks since that clock started.
///
/// `Time + Span` gives a later point (saturating at [`Time::MAX`], "never"); `Time - Time`
/// gives the span between two points (zero if the right one is later); `Time - Span` gives an
/// earlier point (saturating at [`Time::ZERO`]).
///
/// On the [`Domain::Frames`](crate::time::Domain::Frames) clock a `Time` counts frames:
/// `flicks()` is the number of frames that clock counted.
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

    /// The point `secs` seconds after the clock started, as [`secs`](crate::time::secs) makes
    /// the span (its rounding and its panics).
    #[track_caller]
    pub fn from_secs(secs: f64) -> Time {
        Time::at(crate::time::span::secs(secs))
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
