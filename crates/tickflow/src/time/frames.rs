//! [`Frames`], the unit of frame timers, and [`Interval`]: what a timer's delay or period may
//! be given in.

use std::time::Duration;

use crate::time::clocks::Domain;
use crate::time::span::Span;

/// A number of frames: the unit of timers that count frames rather than time.
///
/// `timers.after(Frames(3))` fires in the third frame from now, `every(Frames(1))` every
/// frame; `Frames(0)` means the next frame. They count on the frame clock
/// ([`Domain::Frames`]), which moves once per frame (and stands still while paused when the
/// scheduler says so: [`set_frame_clock_pauses`](crate::Scheduler::set_frame_clock_pauses)).
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut timers = TimerManager::<Vec<u64>>::new();
/// timers.every(Frames(2)).first_delay(Frames(1)).call(|log, cx| log.push(cx.now().flicks()));
/// let mut log = vec![];
/// for _ in 0..6 {
///     timers.tick(secs(0.1), &mut log);
/// }
/// assert_eq!(log, [1, 3, 5]); // frame numbers
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub struct Frames(pub u64);

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Span {}
    impl Sealed for std::time::Duration {}
    impl Sealed for super::Frames {}
}

/// What a timer's delay or period is given in: time ([`Span`], or a `std::time::Duration`)
/// or [`Frames`]. The builder takes its unit from the first one, so `first_delay` takes the
/// same unit as the rate, and mixing frames with time does not compile:
///
/// ```compile_fail
/// use tickflow::prelude::*;
///
/// let mut timers = TimerManager::<()>::new();
/// timers.every(Frames(2)).first_delay(secs(0.5)).call(|_, _| {});
/// ```
///
/// Sealed: implemented for these three types only.
pub trait Interval: sealed::Sealed {
    /// [`Span`] for time, [`Frames`] for frames.
    type Unit;

    /// The clock it counts on and the amount on that clock (flicks, or frames).
    #[doc(hidden)]
    fn clock_amount(self) -> (Domain, u64);
}

impl Interval for Span {
    type Unit = Span;

    #[inline]
    fn clock_amount(self) -> (Domain, u64) {
        (Domain::Game, self.flicks())
    }
}

impl Interval for Duration {
    type Unit = Span;

    #[inline]
    fn clock_amount(self) -> (Domain, u64) {
        (Domain::Game, Span::from(self).flicks())
    }
}

impl Interval for Frames {
    type Unit = Frames;

    #[inline]
    fn clock_amount(self) -> (Domain, u64) {
        (Domain::Frames, self.0)
    }
}
