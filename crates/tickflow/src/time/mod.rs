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
mod clocks;
mod error;
mod frames;
mod point;
mod span;
mod stopwatch;

pub(crate) use catch_up::{assert_catch_up_cap, valid_catch_up_cap};
pub use catch_up::{CatchUp, DEFAULT_CATCH_UP_CAP, MAX_CATCH_UP_CAP};
pub(crate) use clocks::valid_dilation;
pub use clocks::{Clocks, Domain, MAX_TIME_DILATION};
pub use error::TimeError;
pub use frames::{Frames, Interval};
pub use point::Time;
pub use span::{millis, secs, Span, FLICKS_PER_SECOND};
pub use stopwatch::Stopwatch;
