//! [`TimeError`]: an input that is not a valid length of time.

use std::fmt;

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

    /// `true` when a frame rate of zero was given
    /// ([`Span::try_frames`](crate::time::Span::try_frames)).
    pub fn is_zero_rate(&self) -> bool {
        self.kind == TimeErrorKind::ZeroRate
    }

    /// `true` when a frame rate was so high that a frame is shorter than half a flick (above
    /// about 1.4 GHz, [`Span::try_frames`](crate::time::Span::try_frames)): it would round to
    /// no time at all.
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
