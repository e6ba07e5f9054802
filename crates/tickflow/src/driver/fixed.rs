//! [`FixedStep`]: a render loop's variable frames turned into fixed simulation steps.

use std::time::Duration;

use crate::scheduler::{FrameReport, Scheduler};
use crate::time::{Span, TimeError, FLICKS_PER_SECOND};

/// Exact time units: 1/441,000,000,000,000 s, the least common multiple of the nanosecond and
/// the flick, so that nanosecond frame times add up to flick steps with nothing rounded away.
const UNITS_PER_NANO: u128 = 441_000;
const UNITS_PER_FLICK: u128 = 625_000;
const _: () =
    assert!(UNITS_PER_NANO * 1_000_000_000 == UNITS_PER_FLICK * FLICKS_PER_SECOND as u128);

/// How much time one rendered frame took, as [`FixedStep::push`] takes it: a [`Duration`]
/// (what `Instant` gives) or a [`Span`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Elapsed(u128);

impl From<Duration> for Elapsed {
    fn from(d: Duration) -> Elapsed {
        Elapsed(d.as_nanos() * UNITS_PER_NANO)
    }
}

impl From<Span> for Elapsed {
    fn from(s: Span) -> Elapsed {
        Elapsed(u128::from(s.flicks()) * UNITS_PER_FLICK)
    }
}

/// What one [`FixedStep::push`] decided.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Due {
    /// Steps to run now.
    pub steps: u32,
    /// Time thrown away because more than the cap of steps was due (the spiral of death:
    /// a machine that cannot keep up must not fall further behind every frame).
    pub dropped: Span,
    /// How far into the next step the accumulated time is, from 0 to 1: the interpolation
    /// factor for rendering between the last two simulated states.
    pub alpha: f64,
}

/// A fixed-step driver (Glenn Fiedler's "Fix Your Timestep", Bevy's `Time<Fixed>`, Unity's
/// `FixedUpdate`): feed it each rendered frame's real duration; it says how many fixed steps
/// of exactly [`step`](Self::step) are due, and the interpolation factor.
///
/// Time is accumulated exactly: a frame time in nanoseconds and a step in flicks are added in
/// a common unit, so the sub-flick part of every nanosecond input is carried, and an hour of
/// frames of any length gives exactly an hour of steps. At most
/// [`max_steps`](Self::max_steps) steps run per frame; the time past them is dropped and
/// reported.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tickflow::driver::FixedStep;
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<u32>::new();
/// sched.ticks().add(TickSettings::named("physics"), |steps, _| *steps += 1);
/// let mut fixed = FixedStep::new(60);
/// let mut steps = 0;
/// // A render loop whose frames take 7 ms, 25 ms and 16.9 ms.
/// for ms in [7, 25, 17] {
///     fixed.run(Duration::from_micros(ms * 1000 - 100), &mut sched, &mut steps);
/// }
/// assert_eq!(steps, 2); // 48.7 ms of frames hold two 16.67 ms steps
/// assert!((fixed.alpha() - 0.922).abs() < 0.001); // 15.37 ms into the third
///
/// // An hour of 60 Hz frames timed in nanoseconds is exactly an hour of steps.
/// let mut hour = FixedStep::new(60);
/// let frame = Duration::from_nanos(16_666_667); // 1/60 s, rounded up to the nanosecond
/// let mut n = 0;
/// for _ in 0..216_000 {
///     n += hour.push(frame).steps;
/// }
/// assert_eq!(n, 216_000);
/// ```
#[derive(Clone, Debug)]
pub struct FixedStep {
    step: Span,
    step_units: u128,
    /// Accumulated time not yet stepped, in exact units.
    acc: u128,
    max_steps: u32,
}

impl FixedStep {
    /// Steps of one frame at `hz` (exact for every common rate: [`Span::frames`]). At most as
    /// many steps per frame as fit in 250 ms (the scheduler's default `max_delta`), and one
    /// at least.
    ///
    /// # Panics
    ///
    /// When `hz` is zero or too high for a step of at least one flick; [`try_new`](Self::try_new)
    /// returns the error instead.
    #[track_caller]
    pub fn new(hz: u32) -> Self {
        Self::try_new(hz).unwrap_or_else(|e| panic!("FixedStep::new({hz}): {e}"))
    }

    /// [`new`](Self::new), or an error for a rate no step fits.
    ///
    /// # Errors
    ///
    /// [`TimeError`] when `hz` is zero or so high that a step would be zero flicks long
    /// ([`Span::try_frames`]).
    pub fn try_new(hz: u32) -> Result<Self, TimeError> {
        let step = Span::try_frames(1, hz)?;
        Ok(Self::with_step(step))
    }

    /// Steps of `step` (a rate that is not a whole number of hertz).
    ///
    /// # Panics
    ///
    /// When `step` is zero.
    #[track_caller]
    pub fn with_step(step: Span) -> Self {
        assert!(
            !step.is_zero(),
            "FixedStep::with_step: the step must be longer than zero"
        );
        let max_steps = (crate::scheduler::DEFAULT_MAX_DELTA.flicks() / step.flicks()).max(1);
        FixedStep {
            step,
            step_units: u128::from(step.flicks()) * UNITS_PER_FLICK,
            acc: 0,
            max_steps: u32::try_from(max_steps).unwrap_or(u32::MAX),
        }
    }

    /// At most `n` steps per frame (the spiral-of-death cap).
    ///
    /// # Panics
    ///
    /// When `n` is zero.
    #[track_caller]
    pub fn max_steps(mut self, n: u32) -> Self {
        assert!(n > 0, "FixedStep::max_steps: at least one step per frame");
        self.max_steps = n;
        self
    }

    /// The length of one step.
    pub fn step(&self) -> Span {
        self.step
    }

    /// How far into the next step the accumulated time is, from 0 to 1.
    pub fn alpha(&self) -> f64 {
        self.acc as f64 / self.step_units as f64
    }

    /// Adds one rendered frame's time; returns the steps now due (the caller runs them).
    pub fn push(&mut self, elapsed: impl Into<Elapsed>) -> Due {
        self.acc = self.acc.saturating_add(elapsed.into().0);
        let due = self.acc / self.step_units;
        self.acc %= self.step_units;
        let steps = u32::try_from(due).unwrap_or(u32::MAX).min(self.max_steps);
        let dropped = due - u128::from(steps);
        let dropped_flicks = dropped.saturating_mul(u128::from(self.step.flicks()));
        Due {
            steps,
            dropped: Span::from_flicks(u64::try_from(dropped_flicks).unwrap_or(u64::MAX)),
            alpha: self.alpha(),
        }
    }

    /// Adds one rendered frame's time and runs the steps due on `sched`, each a frame of
    /// exactly [`step`](Self::step). Returns what was due and the report of the last step.
    pub fn run<C: 'static>(
        &mut self,
        elapsed: impl Into<Elapsed>,
        sched: &mut Scheduler<C>,
        ctx: &mut C,
    ) -> (Due, Option<FrameReport>) {
        let due = self.push(elapsed);
        let mut last = None;
        for _ in 0..due.steps {
            last = Some(sched.tick(self.step, ctx));
        }
        (due, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanosecond_frames_carry_their_sub_flick_remainder() {
        // 1 ns is 0.7056 flicks: a million 1 ns frames are exactly 705,600 flicks.
        let mut f = FixedStep::with_step(Span::from_flicks(705_600)).max_steps(u32::MAX);
        let mut steps = 0;
        for _ in 0..1_000_000 {
            steps += f.push(Duration::from_nanos(1)).steps;
        }
        assert_eq!((steps, f.alpha()), (1, 0.0));
    }

    #[test]
    fn the_cap_drops_whole_steps_and_keeps_the_fraction() {
        let mut f = FixedStep::new(100).max_steps(3);
        let due = f.push(Duration::from_millis(105)); // 10.5 steps
        assert_eq!(due.steps, 3);
        assert_eq!(due.dropped, Span::from_millis(70));
        assert!((due.alpha - 0.5).abs() < 1e-9);
        assert_eq!(FixedStep::new(60).max_steps, 15, "250 ms of 60 Hz steps");
    }

    #[test]
    fn spans_and_durations_agree() {
        let (mut a, mut b) = (FixedStep::new(30), FixedStep::new(30));
        for ms in [1, 33, 34, 500, 2] {
            assert_eq!(
                a.push(Duration::from_millis(ms)),
                b.push(Span::from_millis(ms))
            );
        }
        assert!(FixedStep::try_new(0).unwrap_err().is_zero_rate());
    }
}
