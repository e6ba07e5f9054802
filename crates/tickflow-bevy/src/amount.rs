//! [`Amount`]: what a timer's read-out counts in — time for a timer on the game or real clock,
//! frames for one that counts frames — so that 20 frames left never reads as 20 flicks.

use std::fmt;

use tickflow::prelude::{Frames, Span};

/// An amount on a timer's own clock, as [`TickflowTimers`](crate::TickflowTimers) reads it:
/// [`Time`](Amount::Time) for a timer set with a `Span`, [`Frames`](Amount::Frames) for one
/// set with [`Frames`]. `Display` prints seconds (`1.5s`) or frames (`20 frames`).
///
/// ```
/// use tickflow_bevy::Amount;
/// use tickflow_bevy::prelude::*;
///
/// let left = Amount::Frames(Frames(20));
/// assert_eq!((left.frames(), left.time()), (Some(Frames(20)), None));
/// assert_eq!(format!("{left} and {}", Amount::Time(secs(1.5))), "20 frames and 1.5s");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub enum Amount {
    /// Time, on the game clock or the real one.
    Time(Span),
    /// Frames, on the frame clock.
    Frames(Frames),
}

impl Amount {
    /// The amount of a timer that counts frames (`frames`) or time, from the scheduler's
    /// count: frames, or flicks.
    pub(crate) fn of(frames: bool, n: u64) -> Amount {
        match frames {
            true => Amount::Frames(Frames(n)),
            false => Amount::Time(Span::from_flicks(n)),
        }
    }

    /// The time, for a timer that counts time.
    pub fn time(self) -> Option<Span> {
        match self {
            Amount::Time(s) => Some(s),
            Amount::Frames(_) => None,
        }
    }

    /// The frames, for a timer that counts frames.
    pub fn frames(self) -> Option<Frames> {
        match self {
            Amount::Frames(f) => Some(f),
            Amount::Time(_) => None,
        }
    }

    /// `true` for no time or no frames.
    pub fn is_zero(self) -> bool {
        matches!(self, Amount::Time(Span::ZERO) | Amount::Frames(Frames(0)))
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Amount::Time(s) => fmt::Display::fmt(s, f),
            Amount::Frames(Frames(1)) => f.write_str("1 frame"),
            Amount::Frames(Frames(n)) => write!(f, "{n} frames"),
        }
    }
}
