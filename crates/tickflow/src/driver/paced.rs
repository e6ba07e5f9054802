//! [`Pacer`] and [`PacedRunner`]: steps on absolute deadlines, for loops with no renderer.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::scheduler::Scheduler;
use crate::sleep::{sleep_until, PreciseThread};
use crate::time::{CatchUp, DEFAULT_CATCH_UP_CAP};
use crate::time::{Span, TimeError};

/// When the steps of a fixed-rate loop are due: step `n` at exactly `start + n × period`
/// (rounded to the nanosecond per step, never accumulated), so the loop never drifts from the
/// wall clock however late its wake-ups are. A loop that fell behind (a stall, a debugger)
/// follows a [`CatchUp`] policy, on the same timeline as a looping timer's.
///
/// Runtime-agnostic: wait for [`next_deadline`](Self::next_deadline) however your loop waits (a
/// thread sleep, `tokio::time::sleep_until`), then ask [`due`](Self::due) how many steps to run.
/// [`PacedRunner`] does it on the calling thread with precise sleeps. In an async runtime,
/// sleep until [`next_deadline`](Self::next_deadline) and ask [`due`](Self::due): the
/// `tokio_rooms` example wraps that as `pacer.tick().await`, as tokio's `interval` is used,
/// in an adapter of a dozen lines to copy (tickflow itself needs no runtime).
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use tickflow::driver::Pacer;
/// use tickflow::time::CatchUp;
///
/// let t0 = Instant::now();
/// let mut pacer = Pacer::new(50).starting_at(t0); // 20 ms steps
/// assert_eq!(pacer.due(t0 + Duration::from_millis(19)), 0);
/// assert_eq!(pacer.due(t0 + Duration::from_millis(21)), 1); // step 1 was due at 20 ms
/// assert_eq!(pacer.next_deadline(), t0 + Duration::from_millis(40));
/// // A 100 ms stall: Burst runs every missed step, Once just one and keeps the grid.
/// assert_eq!(pacer.due(t0 + Duration::from_millis(121)), 5);
/// let mut once = Pacer::new(50).starting_at(t0).catch_up(CatchUp::Once);
/// assert_eq!(once.due(t0 + Duration::from_millis(121)), 1);
/// assert_eq!(once.next_deadline(), t0 + Duration::from_millis(140));
/// ```
#[derive(Clone, Debug)]
pub struct Pacer {
    start: Instant,
    period: Span,
    /// Index of the next step.
    next: u64,
    catch_up: CatchUp,
    cap: u64,
    skipped: u64,
}

impl Pacer {
    /// Steps at `hz` per second (exact periods: [`Span::frames`]), the first one period from
    /// now, catching up with [`CatchUp::Burst`] (at most
    /// [`DEFAULT_CATCH_UP_CAP`] steps at once).
    ///
    /// # Panics
    ///
    /// When `hz` is zero or too high for a step of at least one flick; [`try_new`](Self::try_new)
    /// returns the error instead.
    #[track_caller]
    pub fn new(hz: u32) -> Self {
        Self::try_new(hz).unwrap_or_else(|e| panic!("Pacer::new({hz}): {e}"))
    }

    /// [`new`](Self::new), or an error for a rate no step fits.
    ///
    /// # Errors
    ///
    /// [`TimeError`] when `hz` is zero or so high that a step would be zero flicks long
    /// ([`Span::try_frames`]).
    pub fn try_new(hz: u32) -> Result<Self, TimeError> {
        Ok(Self::with_period(Span::try_frames(1, hz)?))
    }

    /// Steps every `period`.
    ///
    /// # Panics
    ///
    /// When `period` is zero.
    #[track_caller]
    pub fn with_period(period: Span) -> Self {
        assert!(
            !period.is_zero(),
            "Pacer: the period must be longer than zero"
        );
        Pacer {
            start: Instant::now(),
            period,
            next: 1,
            catch_up: CatchUp::Burst,
            cap: DEFAULT_CATCH_UP_CAP,
            skipped: 0,
        }
    }

    /// The grid starts at `start` (step 1 is due one period after it).
    pub fn starting_at(mut self, start: Instant) -> Self {
        self.start = start;
        self.next = 1;
        self
    }

    /// What to do after a stall: [`CatchUp::Burst`] runs every missed step (up to the cap),
    /// `Once` runs one and keeps the grid, `Delay` runs one and starts a new grid from now.
    pub fn catch_up(mut self, policy: CatchUp) -> Self {
        self.catch_up = policy;
        self
    }

    /// At most `steps` at once under `Burst` (default 1,000); the missed steps past it are
    /// skipped on the grid.
    ///
    /// # Panics
    ///
    /// When `steps` is zero.
    #[track_caller]
    pub fn catch_up_cap(mut self, steps: u64) -> Self {
        assert!(steps > 0, "Pacer::catch_up_cap: at least one step");
        self.cap = steps;
        self
    }

    /// The period.
    pub fn period(&self) -> Span {
        self.period
    }

    /// When step `n` is due.
    fn deadline(&self, n: u64) -> Instant {
        self.start + Duration::from(self.period * n)
    }

    /// When the next step is due.
    pub fn next_deadline(&self) -> Instant {
        self.deadline(self.next)
    }

    /// Steps skipped by `Once`, `Delay` or the cap since the pacer started.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The steps to run at `now` (0 when the next one is not due yet), following the catch-up
    /// policy; the grid moves past them.
    pub fn due(&mut self, now: Instant) -> u64 {
        // The last step whose deadline a `Span` can hold (about 830 years of steps); later
        // ones are never due.
        let last_step = Span::MAX.flicks() / self.period.flicks();
        if self.next > last_step || now < self.deadline(self.next) {
            return 0;
        }
        // Steps due: the last n with deadline(n) <= now (by the nanosecond, then adjusted for
        // the per-step rounding, a step or two).
        let since = now.duration_since(self.start);
        let period_ns = Duration::from(self.period).as_nanos().max(1);
        let guess = u64::try_from(since.as_nanos() / period_ns).unwrap_or(u64::MAX);
        let mut last = guess.min(last_step);
        while last > self.next && self.deadline(last) > now {
            last -= 1;
        }
        while last < last_step && self.deadline(last + 1) <= now {
            last += 1;
        }
        let behind = last - self.next + 1;
        let run = match self.catch_up {
            CatchUp::Burst => behind.min(self.cap),
            CatchUp::Once | CatchUp::Delay => 1,
        };
        self.skipped += behind - run;
        match self.catch_up {
            CatchUp::Delay if behind > 1 => {
                self.start = now;
                self.next = 1;
            }
            _ => self.next = last + 1,
        }
        run
    }
}

/// Stops a [`PacedRunner`] from any thread: it ends after the frame it is in (or its wait for
/// the next one), within one period. `Clone + Send + Sync`.
#[derive(Clone, Debug, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// Asks the runner to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// `true` once [`stop`](Self::stop) was called.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// One frame of a [`PacedRunner`], as its `until` callback sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PacedFrame {
    /// Frames run so far by this runner, this one included.
    pub frames: u64,
    /// When the step was due.
    pub deadline: Instant,
    /// How late it started (zero when on time).
    pub lateness: Duration,
}

/// What a [`PacedRunner`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Frames run.
    pub frames: u64,
    /// Steps skipped by the catch-up policy after stalls.
    pub skipped: u64,
}

/// Runs a [`Scheduler`] at a fixed rate on the calling thread, for a headless server: each
/// step is a frame of exactly one period, started at its absolute deadline
/// (`start + n × period`: no drift, unlike a loop that sleeps "period minus the time the frame
/// took"), sleeping in between (no spinning) with the thread's timer slack reduced, so it wakes
/// within tens of microseconds of the deadline. Stops when [`StopHandle::stop`] is called or
/// the `until` callback says so.
///
/// ```
/// use tickflow::driver::PacedRunner;
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<u32>::new();
/// sched.timers().every(millis(20)).call(|n, _| *n += 1);
/// let mut runner = PacedRunner::new(200); // 5 ms frames
/// let mut n = 0;
/// let report = runner.run_until(&mut sched, &mut n, |frame, _| frame.frames == 10);
/// assert_eq!((report.frames, n), (10, 2)); // 50 ms of frames, calls at 20 and 40 ms
/// ```
pub struct PacedRunner {
    pacer: Pacer,
    stop: StopHandle,
}

impl fmt::Debug for PacedRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PacedRunner")
            .field("pacer", &self.pacer)
            .field("stopped", &self.stop.is_stopped())
            .finish()
    }
}

impl PacedRunner {
    /// Frames at `hz` per second.
    ///
    /// # Panics
    ///
    /// When `hz` is zero.
    #[track_caller]
    pub fn new(hz: u32) -> Self {
        Self::with_pacer(Pacer::new(hz))
    }

    /// Frames on the deadlines of `pacer` (its period, catch-up policy and cap).
    pub fn with_pacer(pacer: Pacer) -> Self {
        PacedRunner {
            pacer,
            stop: StopHandle::default(),
        }
    }

    /// What to do after a stall (see [`Pacer::catch_up`]).
    pub fn catch_up(mut self, policy: CatchUp) -> Self {
        self.pacer = self.pacer.catch_up(policy);
        self
    }

    /// A handle that stops the runner from another thread. A stopped runner can run again;
    /// its handles stop that run too.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Runs frames until stopped.
    pub fn run<C: 'static>(&mut self, sched: &mut Scheduler<C>, ctx: &mut C) -> RunReport {
        self.run_until(sched, ctx, |_, _| false)
    }

    /// Runs frames until stopped or until `until` (called after every frame) returns `true`.
    /// The grid starts now: the first frame is due one period from now.
    pub fn run_until<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        ctx: &mut C,
        mut until: impl FnMut(&PacedFrame, &mut C) -> bool,
    ) -> RunReport {
        let _precise = PreciseThread::new();
        self.pacer = self.pacer.clone().starting_at(Instant::now());
        let skipped_before = self.pacer.skipped();
        let step = self.pacer.period();
        let mut frames = 0;
        while !self.stop.is_stopped() {
            let deadline = self.pacer.next_deadline();
            sleep_until(deadline);
            let now = Instant::now();
            for _ in 0..self.pacer.due(now) {
                // A stop ends the run after the frame it came in, even among catch-up frames.
                if self.stop.is_stopped() {
                    break;
                }
                sched.tick(step, ctx);
                frames += 1;
                let frame = PacedFrame {
                    frames,
                    deadline,
                    lateness: now.saturating_duration_since(deadline),
                };
                if until(&frame, ctx) {
                    self.stop.stop();
                    break;
                }
            }
        }
        // Ready to run again, stopped by the same handles.
        self.stop.0.store(false, Ordering::Release);
        RunReport {
            frames,
            skipped: self.pacer.skipped() - skipped_before,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An hour at 60 Hz, woken at every deadline plus a random lateness: the 216,000th step is
    /// due exactly one hour after the start, and no step is lost or added.
    #[test]
    fn an_hour_of_steps_does_not_drift() {
        let t0 = Instant::now();
        let mut pacer = Pacer::new(60).starting_at(t0);
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut steps = 0;
        while steps < 216_000 {
            let late = Duration::from_micros(rng.below(3_000)); // up to 3 ms late, less than a frame
            steps += pacer.due(pacer.next_deadline() + late);
        }
        assert_eq!(steps, 216_000);
        assert_eq!(
            pacer.next_deadline() - t0,
            Duration::from_secs(3600) + Duration::from(Span::frames(1, 60))
        );
    }

    #[test]
    fn catch_up_policies_after_a_stall() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut delay = Pacer::new(100).starting_at(t0).catch_up(CatchUp::Delay);
        assert_eq!(delay.due(at(10)), 1);
        assert_eq!(delay.due(at(55)), 1); // 20..50 due: one, then a new grid from 55
        assert_eq!(delay.next_deadline(), at(65));
        assert_eq!(delay.skipped(), 3);
        let mut capped = Pacer::new(1000).starting_at(t0).catch_up_cap(10);
        assert_eq!(capped.due(at(100)), 10);
        assert_eq!((capped.skipped(), capped.next_deadline()), (90, at(101)));
    }

    #[test]
    fn a_runner_stops_from_another_thread() {
        let mut sched = Scheduler::<u64>::new();
        let mut runner = PacedRunner::new(1_000);
        let stop = runner.stop_handle();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            stop.stop();
        });
        let mut n = 0;
        let report = runner.run(&mut sched, &mut n);
        stopper.join().unwrap();
        assert!(report.frames > 0 && sched.clocks().frame() == report.frames);
        // The same handle stops the next run, after the frame it came in even when more
        // frames are due at once: a 20 ms stall at frame 2 makes frame 3 one of 20 catch-up
        // frames.
        let stop = runner.stop_handle();
        let again = runner.run_until(&mut sched, &mut n, |frame, _| {
            if frame.frames == 2 {
                std::thread::sleep(Duration::from_millis(20));
            }
            if frame.frames == 3 {
                stop.stop();
            }
            frame.frames == 1_000
        });
        assert_eq!(again.frames, 3);
    }
}
