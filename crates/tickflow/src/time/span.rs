//! [`Span`]: a length of time in flicks.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};
use std::time::Duration;

use crate::time::error::TimeError;

/// Flicks in one second: 705,600,000.
///
/// The flick (from "frame-tick") is the smallest unit that divides every common video frame
/// rate (24, 25, 30, 48, 50, 60, 72, 90, 100, 120, 144, 240 Hz) and 1 ms exactly, so the
/// duration of one frame at any of those rates is a whole number of flicks and a sum of frames
/// never drifts. A `u64` of flicks covers about 829 years.
pub const FLICKS_PER_SECOND: u64 = 705_600_000;

const FLICKS_PER_MILLI: u64 = FLICKS_PER_SECOND / 1_000;

/// A length of time, counted in flicks (1/705,600,000 s).
///
/// Arithmetic saturates instead of panicking: a sum past [`Span::MAX`] stays at `Span::MAX`
/// (which a timer treats as "never"), and a difference below zero stays at [`Span::ZERO`].
/// Use [`checked_add`](Span::checked_add) and [`checked_sub`](Span::checked_sub) where an
/// overflow is an error in your program.
///
/// # Examples
///
/// ```
/// use tickflow::time::{secs, Span, FLICKS_PER_SECOND};
///
/// // One frame at 60 Hz is exact, and a year of them is exactly one year.
/// let frame = Span::frames(1, 60);
/// assert_eq!(frame.flicks(), FLICKS_PER_SECOND / 60);
/// assert_eq!(frame * (60 * 3600 * 24 * 365), Span::from_secs(3600 * 24 * 365));
///
/// assert_eq!(secs(0.5) + secs(0.25), Span::from_millis(750));
/// assert_eq!(Span::from_millis(10) - Span::from_secs(1), Span::ZERO); // saturates
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
pub struct Span(u64);

impl Span {
    /// No time at all.
    pub const ZERO: Span = Span(0);
    /// The longest representable span (about 829 years); timers treat it as "never".
    pub const MAX: Span = Span(u64::MAX);

    /// A span of `flicks` flicks.
    pub const fn from_flicks(flicks: u64) -> Span {
        Span(flicks)
    }

    /// The number of flicks in this span.
    pub const fn flicks(self) -> u64 {
        self.0
    }

    /// A span of whole seconds, saturating at [`Span::MAX`].
    pub const fn from_secs(secs: u64) -> Span {
        Span(secs.saturating_mul(FLICKS_PER_SECOND))
    }

    /// A span of whole milliseconds, saturating at [`Span::MAX`].
    pub const fn from_millis(millis: u64) -> Span {
        Span(millis.saturating_mul(FLICKS_PER_MILLI))
    }

    /// Converts seconds to the nearest flick.
    ///
    /// Values too large to represent saturate to [`Span::MAX`] ("never"); `-0.0` is zero.
    ///
    /// # Errors
    ///
    /// [`TimeError`] naming the value when it is NaN, infinite or negative.
    ///
    /// # Examples
    ///
    /// ```
    /// use tickflow::time::Span;
    ///
    /// assert_eq!(Span::try_from_secs_f64(1.0 / 24.0).unwrap(), Span::frames(1, 24));
    /// assert!(Span::try_from_secs_f64(f64::NAN).is_err());
    /// assert!(Span::try_from_secs_f64(-1.0).unwrap_err().to_string().contains("-1"));
    /// assert_eq!(Span::try_from_secs_f64(1e300).unwrap(), Span::MAX);
    /// ```
    pub fn try_from_secs_f64(secs: f64) -> Result<Span, TimeError> {
        if secs.is_nan() || secs.is_infinite() || secs < 0.0 {
            return Err(TimeError::seconds(secs));
        }
        let flicks = (secs * FLICKS_PER_SECOND as f64).round();
        // `as` saturates for floats past u64::MAX, which is exactly the "never" we want.
        Ok(Span(flicks as u64))
    }

    /// Converts seconds to the nearest flick.
    ///
    /// # Panics
    ///
    /// When `secs` is NaN, infinite or negative, with [`TimeError`]'s message. Use
    /// [`try_from_secs_f64`](Span::try_from_secs_f64) for input you do not control.
    #[track_caller]
    pub fn from_secs_f64(secs: f64) -> Span {
        match Span::try_from_secs_f64(secs) {
            Ok(span) => span,
            Err(err) => panic!("{err}"),
        }
    }

    /// This span in seconds (rounded to the nearest `f64`).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / FLICKS_PER_SECOND as f64
    }

    /// The length of `n` frames at `hz` frames per second.
    ///
    /// Exact when `hz` divides 705,600,000 (every common rate and many more); otherwise the
    /// result is rounded to the nearest flick. Saturates at [`Span::MAX`].
    ///
    /// # Panics
    ///
    /// When `hz` is zero (a frame at 0 Hz never ends: a rate read from a config file that is
    /// missing is the usual cause), or above 1,411,200,000 (a frame would round to zero
    /// flicks). [`try_frames`](Span::try_frames) returns the error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use tickflow::time::Span;
    ///
    /// for hz in [24, 25, 30, 48, 50, 60, 72, 90, 100, 120, 144, 240] {
    ///     assert_eq!(Span::frames(hz as u64, hz), Span::from_secs(1));
    /// }
    /// ```
    #[track_caller]
    pub fn frames(n: u64, hz: u32) -> Span {
        match Span::try_frames(n, hz) {
            Ok(span) => span,
            Err(err) => panic!("Span::frames({n}, {hz}): {err}"),
        }
    }

    /// The length of `n` frames at `hz` frames per second, or an error for a rate no frame
    /// length fits.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] whose [`is_zero_rate`](TimeError::is_zero_rate) is `true` when `hz` is
    /// zero, or whose [`is_rate_too_high`](TimeError::is_rate_too_high) is `true` when one
    /// frame would round to zero flicks (`hz` above 1,411,200,000: `u32::MAX` from a bad
    /// config, say).
    ///
    /// # Examples
    ///
    /// ```
    /// use tickflow::time::Span;
    ///
    /// assert_eq!(Span::try_frames(3, 60).unwrap(), Span::from_millis(50));
    /// assert!(Span::try_frames(1, 0).unwrap_err().is_zero_rate());
    /// assert!(Span::try_frames(1, u32::MAX).unwrap_err().is_rate_too_high());
    /// ```
    pub fn try_frames(n: u64, hz: u32) -> Result<Span, TimeError> {
        if hz == 0 {
            return Err(TimeError::zero_rate());
        }
        let rate = u128::from(hz);
        // A frame shorter than half a flick rounds to none: n of them would be no time.
        if rate > 2 * u128::from(FLICKS_PER_SECOND) {
            return Err(TimeError::rate_too_high(hz));
        }
        let total = u128::from(n) * u128::from(FLICKS_PER_SECOND);
        let flicks = (total + rate / 2) / rate;
        Ok(Span(u64::try_from(flicks).unwrap_or(u64::MAX)))
    }

    /// `self + rhs`, or `None` on overflow.
    pub const fn checked_add(self, rhs: Span) -> Option<Span> {
        match self.0.checked_add(rhs.0) {
            Some(v) => Some(Span(v)),
            None => None,
        }
    }

    /// `self - rhs`, or `None` when `rhs` is longer.
    pub const fn checked_sub(self, rhs: Span) -> Option<Span> {
        match self.0.checked_sub(rhs.0) {
            Some(v) => Some(Span(v)),
            None => None,
        }
    }

    /// `self + rhs`, saturating at [`Span::MAX`] (the same as `+`).
    pub const fn saturating_add(self, rhs: Span) -> Span {
        Span(self.0.saturating_add(rhs.0))
    }

    /// `self - rhs`, saturating at [`Span::ZERO`] (the same as `-`).
    pub const fn saturating_sub(self, rhs: Span) -> Span {
        Span(self.0.saturating_sub(rhs.0))
    }

    /// `true` for [`Span::ZERO`].
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

// A flick is 1/705,600,000 s, and 705,600,000 / 10^9 = 441 / 625: a second is a whole number
// of flicks, so a conversion splits off the whole seconds (exact) and rounds only the
// sub-second part, in `u64` (a `u128` product and division took about 50 instructions, a
// tenth of setting and clearing a timer).
const FLICKS_PER_NANO: (u64, u64) = (441, 625);

impl From<Duration> for Span {
    /// Rounds to the nearest flick; saturates at [`Span::MAX`].
    fn from(d: Duration) -> Span {
        let (num, den) = FLICKS_PER_NANO;
        // At most 999,999,999 × 441 + 312: no overflow.
        let sub = (u64::from(d.subsec_nanos()) * num + den / 2) / den;
        let flicks = d
            .as_secs()
            .checked_mul(FLICKS_PER_SECOND)
            .and_then(|f| f.checked_add(sub));
        Span(flicks.unwrap_or(u64::MAX))
    }
}

impl From<Span> for Duration {
    /// Rounds to the nearest nanosecond.
    fn from(s: Span) -> Duration {
        let (num, den) = FLICKS_PER_NANO;
        let (secs, rem) = (s.0 / FLICKS_PER_SECOND, s.0 % FLICKS_PER_SECOND);
        // At most (705,599,999 × 625 + 220) / 441 = 999,999,999: never a whole second.
        Duration::new(secs, ((rem * den + num / 2) / num) as u32)
    }
}

impl Add for Span {
    type Output = Span;
    fn add(self, rhs: Span) -> Span {
        self.saturating_add(rhs)
    }
}

impl AddAssign for Span {
    fn add_assign(&mut self, rhs: Span) {
        *self = *self + rhs;
    }
}

impl Sub for Span {
    type Output = Span;
    fn sub(self, rhs: Span) -> Span {
        self.saturating_sub(rhs)
    }
}

impl SubAssign for Span {
    fn sub_assign(&mut self, rhs: Span) {
        *self = *self - rhs;
    }
}

impl Mul<u64> for Span {
    type Output = Span;
    fn mul(self, rhs: u64) -> Span {
        Span(self.0.saturating_mul(rhs))
    }
}

impl Div<u64> for Span {
    type Output = Span;
    /// Integer division (rounds down).
    ///
    /// # Panics
    ///
    /// When `rhs` is zero, like integer division.
    fn div(self, rhs: u64) -> Span {
        Span(self.0 / rhs)
    }
}

impl std::iter::Sum for Span {
    fn sum<I: Iterator<Item = Span>>(iter: I) -> Span {
        iter.fold(Span::ZERO, Add::add)
    }
}

impl fmt::Debug for Span {
    /// Seconds, as [`Display`](fmt::Display) prints them (`1.5s`; `Span::MAX`): what an
    /// assertion or a warning shows is read in seconds, never in raw flicks.
    ///
    /// ```
    /// use tickflow::time::{secs, Span};
    ///
    /// assert_eq!(format!("{:?}", Some(secs(1.5))), "Some(1.5s)");
    /// assert_eq!(format!("{:?}", Span::MAX), "Span::MAX");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Span::MAX {
            return f.write_str("Span::MAX");
        }
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Span {
    /// Seconds, e.g. `0.25s`, with the precision asked for (`{:.2}` gives `0.10s`); `never`
    /// for [`Span::MAX`].
    ///
    /// ```
    /// use tickflow::time::{secs, Span};
    ///
    /// assert_eq!(format!("{}", secs(0.1)), "0.1s");
    /// assert_eq!(format!("{:.2}", Span::frames(1, 60)), "0.02s");
    /// assert_eq!(format!("{:.3}", Span::MAX), "never");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Span::MAX {
            return f.write_str("never");
        }
        match f.precision() {
            Some(p) => write!(f, "{:.*}s", p, self.as_secs_f64()),
            None => write!(f, "{}s", self.as_secs_f64()),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NANOS_PER_SECOND: u128 = 1_000_000_000;

    proptest! {
        /// The conversions in `u64` against the obvious formula in `u128`: nanoseconds times
        /// flicks per second over nanoseconds per second, rounded half up.
        #[test]
        fn conversions_match_the_wide_formula(
            secs in any::<u64>(),
            nanos in 0..1_000_000_000u32,
            flicks in any::<u64>(),
        ) {
            for secs in [secs, secs % 100_000, secs % 30_000_000_000] {
                let d = Duration::new(secs, nanos);
                let wide = (d.as_nanos() * u128::from(FLICKS_PER_SECOND) + NANOS_PER_SECOND / 2)
                    / NANOS_PER_SECOND;
                prop_assert_eq!(Span::from(d).flicks(), u64::try_from(wide).unwrap_or(u64::MAX));
            }
            let fps = u128::from(FLICKS_PER_SECOND);
            let wide = (u128::from(flicks) * NANOS_PER_SECOND + fps / 2) / fps;
            prop_assert_eq!(Duration::from(Span(flicks)).as_nanos(), wide);
        }
    }

    #[test]
    fn conversions_round_half_up_and_saturate() {
        // 1 ns is 0.7056 flicks, 3 ns 2.1168, 625 ns exactly 441.
        assert_eq!(Span::from(Duration::from_nanos(1)).flicks(), 1);
        assert_eq!(Span::from(Duration::from_nanos(3)).flicks(), 2);
        assert_eq!(Span::from(Duration::from_nanos(625)).flicks(), 441);
        assert_eq!(Span::from(Duration::MAX), Span::MAX);
        assert_eq!(Duration::from(Span(441)), Duration::from_nanos(625));
        assert_eq!(Duration::from(Span(1)), Duration::from_nanos(1));
    }

    #[test]
    fn common_frame_rates_are_exact() {
        for hz in [24u32, 25, 30, 48, 50, 60, 72, 90, 100, 120, 144, 240] {
            let frame = Span::frames(1, hz);
            assert_eq!(frame.flicks() * u64::from(hz), FLICKS_PER_SECOND, "{hz} Hz");
            assert_eq!(
                Span::from_secs_f64(1.0 / f64::from(hz)),
                frame,
                "{hz} Hz via f64"
            );
        }
        assert_eq!(Span::from_millis(1).flicks() * 1000, FLICKS_PER_SECOND);
    }

    #[test]
    fn a_year_of_60hz_frames_is_one_year() {
        let frame = Span::frames(1, 60);
        let mut total = Span::ZERO;
        for _ in 0..60 * 60 * 60 {
            total += frame; // one hour by repeated addition
        }
        assert_eq!(total, Span::from_secs(3600));
        assert_eq!(frame * (60 * 86_400 * 365), Span::from_secs(86_400 * 365));
    }

    #[test]
    fn bad_seconds_are_rejected_with_the_value() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.5] {
            let err = Span::try_from_secs_f64(bad).unwrap_err();
            assert_eq!(err.value().to_bits(), bad.to_bits());
            assert!(err.to_string().contains(&format!("{bad}")), "{err}");
        }
        assert_eq!(Span::try_from_secs_f64(-0.0).unwrap(), Span::ZERO);
    }

    /// A zero rate from a config file once became `Span::MAX`, and one tick with it put the
    /// real clock at the end of time.
    #[test]
    #[should_panic(expected = "frame rate of 0 Hz")]
    fn frames_at_zero_hz_panic() {
        let _ = Span::frames(1, 0);
    }

    #[test]
    #[should_panic(expected = "NaN")]
    fn from_secs_f64_panics_on_nan() {
        let _ = Span::from_secs_f64(f64::NAN);
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Span::MAX + Span::from_secs(1), Span::MAX);
        assert_eq!(Span::from_secs(1) - Span::from_secs(2), Span::ZERO);
        assert_eq!(Span::MAX * 2, Span::MAX);
        assert_eq!(Span::from_secs(u64::MAX), Span::MAX);
        assert_eq!(Span::frames(u64::MAX, 1), Span::MAX);
        assert_eq!(Span::try_frames(1, 0).unwrap_err(), TimeError::zero_rate());
        assert_eq!(Span::MAX.checked_add(Span::from_flicks(1)), None);
        assert_eq!(Span::ZERO.checked_sub(Span::from_flicks(1)), None);
    }

    #[test]
    fn duration_round_trip_is_nearest() {
        assert_eq!(
            Span::from(Duration::from_millis(250)),
            Span::from_millis(250)
        );
        // 1 ns is 0.7056 flicks: rounds to 1.
        assert_eq!(Span::from(Duration::from_nanos(1)), Span::from_flicks(1));
        assert_eq!(Duration::from(Span::from_secs(3)), Duration::from_secs(3));
        assert_eq!(Span::from(Duration::MAX), Span::MAX);
    }
}
