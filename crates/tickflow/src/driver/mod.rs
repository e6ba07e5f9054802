//! Drivers for the loops games run in: a render loop with fixed simulation steps
//! ([`FixedStep`]), and a headless server ticking at a fixed rate ([`Pacer`], [`PacedRunner`]).
//!
//! Both keep tickflow's exact time: every step is a frame of exactly one period (a whole number
//! of flicks), however the loop measures its frames.
//!
//! | loop | use | what it gives |
//! |---|---|---|
//! | a game that renders | [`FixedStep`] | steps due for each rendered frame's time, capped; the interpolation factor |
//! | a server on its own thread | [`PacedRunner`] | frames on absolute deadlines, precise sleeps, a stop handle |
//! | a server in an async runtime | [`Pacer`] | the deadlines and catch-up decisions; your runtime waits |
//!
//! Bevy apps use `tickflow-bevy`'s plugin, which runs a scheduler in Bevy's own schedules.

mod fixed;
mod paced;

pub use fixed::{Due, Elapsed, FixedStep};
pub use paced::{PacedFrame, PacedRunner, Pacer, RunReport, StopHandle};
