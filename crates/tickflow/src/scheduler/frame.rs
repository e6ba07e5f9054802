//! One frame: `Scheduler::tick`.

use std::panic::{self, AssertUnwindSafe};

use super::stages::StageClock;
use super::{FrameReport, Scheduler};
use crate::time::{Span, Time};

impl<C: 'static> Scheduler<C> {
    /// Runs one frame of `dt` (see the [module docs](crate::scheduler) for the order) and reports it.
    ///
    /// # Panics
    ///
    /// A panic in a callback reaches the caller after the scheduler has put itself back in
    /// order; the rest of the frame is skipped and the next `tick` works.
    pub fn tick(&mut self, dt: Span, ctx: &mut C) -> FrameReport {
        let opened = self.open_frame();
        self.flush();
        let clamped = dt.min(self.max_delta);
        let game_dt = if self.paused {
            Span::ZERO
        } else if self.dilation == 1.0 {
            clamped
        } else {
            Span::from_flicks((clamped.flicks() as f64 * self.dilation).round() as u64)
        };
        self.run_frame(opened, dt, clamped, game_dt, ctx)
    }

    /// Runs one frame whose game time the host computed: the game clock advances by
    /// `game_dt` and the real clock by `real_dt`, both clamped to
    /// [`max_delta`](Self::set_max_delta). For hosts with clocks of their own (a fixed step
    /// of a game engine whose virtual clock pauses and changes speed: the plugin of
    /// `tickflow-bevy`), where deriving one delta from the other would round.
    ///
    /// The scheduler's own pause still stops the game clock (a paused frame has no game
    /// time, whatever `game_dt` says); its [time dilation](Self::set_time_dilation) is not
    /// applied (the host applied its own).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<()>::new();
    /// // A fixed step of 1/64 s of game time, during which 40 ms of real time passed.
    /// let report = sched.tick_split(Span::frames(1, 64), millis(40), &mut ());
    /// assert_eq!(report.game_dt, Span::frames(1, 64));
    /// assert_eq!(report.real_dt, millis(40));
    /// assert_eq!(sched.clocks().now(Domain::Real).since_start(), millis(40));
    /// ```
    ///
    /// # Panics
    ///
    /// As [`tick`](Self::tick).
    pub fn tick_split(&mut self, game_dt: Span, real_dt: Span, ctx: &mut C) -> FrameReport {
        let opened = self.open_frame();
        self.flush();
        let clamped = real_dt.min(self.max_delta);
        let game_dt = if self.paused {
            Span::ZERO
        } else {
            game_dt.min(self.max_delta)
        };
        self.run_frame(opened, real_dt, clamped, game_dt, ctx)
    }

    /// Whether a paused frame moves the [`Domain::Frames`](crate::time::Domain::Frames)
    /// clock: `false` (the default) counts every frame there, `true` stops it while paused,
    /// as the game clock stops, so that
    /// frame timers, frame intervals and frame-counted latent actions count the frames the
    /// game ran. Use it when paused frames only keep a pause menu alive (the plugin of
    /// `tickflow-bevy` sets it: its frames are fixed steps, and a paused app makes none).
    ///
    /// The frame number ([`Clocks::frame`](crate::time::Clocks::frame), and `next_frame` in
    /// tasks) counts every frame either way. Saved in snapshots.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<u32>::new();
    /// sched.set_frame_clock_pauses(true);
    /// sched.timers().after(Frames(3)).call(|n: &mut u32, _| *n += 1);
    /// let mut fired = 0;
    /// sched.tick(millis(16), &mut fired);
    /// sched.set_paused(true);
    /// for _ in 0..10 {
    ///     sched.tick(millis(16), &mut fired); // a pause menu: real time runs, frames do not count
    /// }
    /// sched.set_paused(false);
    /// sched.tick(millis(16), &mut fired);
    /// assert_eq!(fired, 0);
    /// sched.tick(millis(16), &mut fired); // the third running frame
    /// assert_eq!(fired, 1);
    /// assert_eq!((sched.clocks().frame(), sched.clocks().now(Domain::Frames).flicks()), (13, 3));
    /// ```
    pub fn set_frame_clock_pauses(&mut self, on: bool) {
        self.frame_clock_pauses = on;
    }

    /// Whether paused frames leave the `Frames` clock where it is (see
    /// [`set_frame_clock_pauses`](Self::set_frame_clock_pauses)).
    pub fn frame_clock_pauses(&self) -> bool {
        self.frame_clock_pauses
    }

    /// Starts the clock of the frame's first stage
    /// ([`Stage::FrameStart`](crate::scheduler::Stage::FrameStart)) and, with the `tracing`
    /// feature, the frame's span, before anything of the frame runs.
    fn open_frame(&self) -> Opened {
        Opened {
            #[cfg(feature = "tracing")]
            span: tracing::info_span!("frame", frame = self.clocks.frame().saturating_add(1))
                .entered(),
            stages: StageClock::start(self.stage_timing),
        }
    }

    /// One frame: real time `dt` (`clamped` to the maximum), game time `game_dt`.
    fn run_frame(
        &mut self,
        opened: Opened,
        dt: Span,
        clamped: Span,
        game_dt: Span,
        ctx: &mut C,
    ) -> FrameReport {
        // `tick_when_paused` functions and tickables get the clamped real delta while paused.
        let unpaused_dt = if self.paused { clamped } else { game_dt };
        // The one place the clocks move: every stage reads this value.
        let count_frame = !(self.paused && self.frame_clock_pauses);
        self.clocks = self.clocks.advanced(game_dt, dt, unpaused_dt, count_frame);
        let clocks = self.clocks;
        let mut report = FrameReport {
            frame: clocks.frame(),
            game_dt,
            real_dt: dt,
            discarded: dt.saturating_sub(clamped),
            paused: self.paused,
            errors: std::mem::take(&mut self.errors),
            ..FrameReport::default()
        };
        // `Commands` may read it from other threads.
        self.shared.set_clocks(clocks);
        self.timers.open_frame();
        self.latent.open_frame();
        self.tasks.exec().begin_frame(&clocks);
        self.ticks.begin_frame(&clocks, self.paused);
        let Opened {
            #[cfg(feature = "tracing")]
            span,
            stages,
        } = opened;
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            self.run_stages(stages, &clocks, ctx, &mut report)
        }));
        #[cfg(feature = "tracing")]
        drop(span);
        if let Err(p) = result {
            // The stages that did not run still see the frame's time pass, and their open
            // frames close, so that what is set before the next frame counts from now.
            self.ticks.recover();
            self.timers.abort_frame(&clocks);
            self.latent.abort_frame(&clocks);
            self.tasks.exec().abort_frame();
            panic::resume_unwind(p);
        }
        self.ticks.end_frame();
        report.end_of_time =
            self.timers.at_end_of_time() || clocks.unpaused() == Time::from_flicks(u64::MAX);
        report
    }
}

/// What [`Scheduler::open_frame`] started.
struct Opened {
    #[cfg(feature = "tracing")]
    span: tracing::span::EnteredSpan,
    stages: StageClock,
}
