//! One frame: `Scheduler::tick`.

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::apply::{apply, Parts};
use super::{FrameReport, Scheduler, Stage};
use crate::tick::{Env, TickFunctions, TickGroup};
use crate::time::{Domain, Span};
use crate::timer::TimerManager;

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
    /// assert_eq!(sched.real_now().since_start(), millis(40));
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

    /// Starts the clock of the frame's first stage ([`Stage::FrameStart`]) and, with the
    /// `tracing` feature, the frame's span, before anything of the frame runs.
    fn open_frame(&self) -> Opened {
        Opened {
            #[cfg(feature = "tracing")]
            span: tracing::info_span!("frame", frame = self.frame.saturating_add(1)).entered(),
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
        self.frame += 1;
        // `tick_when_paused` functions and tickables get the clamped real delta while paused.
        let free_dt = if self.paused { clamped } else { game_dt };
        self.unpaused = self.unpaused.saturating_add(free_dt.flicks());
        let mut report = FrameReport {
            frame: self.frame,
            game_dt,
            real_dt: dt,
            discarded: dt.saturating_sub(clamped),
            paused: self.paused,
            errors: std::mem::take(&mut self.errors),
            ..FrameReport::default()
        };

        // The one value of this frame's clocks: the time it reaches, seen by every stage
        // (the timer stage moves the timer manager's clocks to the same place).
        let clocks = self
            .timers
            .clocks()
            .advanced([game_dt.flicks(), dt.flicks(), 1]);
        debug_assert_eq!(clocks.frame(), self.frame);
        self.shared.set_clocks(clocks);
        self.timers.open_frame();
        self.latent.open_frame();
        self.tasks.exec().begin_frame();
        self.ticks.begin_frame(
            clocks,
            [clocks.now(Domain::Game).flicks(), self.unpaused],
            [game_dt.flicks(), free_dt.flicks()],
            self.paused,
        );
        let Opened {
            #[cfg(feature = "tracing")]
            span,
            stages,
        } = opened;
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            self.run_stages(stages, game_dt, dt, free_dt, ctx, &mut report)
        }));
        #[cfg(feature = "tracing")]
        drop(span);
        if let Err(p) = result {
            // The stages that did not run still see the frame's time pass, and their open
            // frames close, so that what is set before the next frame counts from now.
            self.ticks.recover();
            self.timers.abort_frame(game_dt, dt);
            self.latent.abort_frame([game_dt.flicks(), dt.flicks(), 1]);
            self.tasks.exec().abort_frame(self.timers.clocks());
            panic::resume_unwind(p);
        }
        self.ticks.end_frame();
        report.end_of_time = self.timers.at_end_of_time() || self.unpaused == u64::MAX;
        report
    }

    fn run_stages(
        &mut self,
        mut stages: StageClock,
        game_dt: Span,
        real_dt: Span,
        free_dt: Span,
        ctx: &mut C,
        report: &mut FrameReport,
    ) {
        let Scheduler {
            timers,
            ticks,
            tickables,
            latent,
            tasks,
            shared,
            paused,
            ..
        } = self;
        let shared = &**shared;
        let exec = tasks.exec();
        // Task futures, task handles and `Commands` reach the executor while it is active.
        exec.activate(|| {
            let errors = &mut report.errors;

            macro_rules! apply_with {
                ($parts:expr) => {
                    if shared.has_pending() || exec.has_dropped() {
                        apply(shared, &mut $parts, &mut *errors);
                    }
                };
            }
            macro_rules! env {
                () => {
                    Env {
                        ctx: &mut *ctx,
                        timers: &mut *timers,
                        after_call: &mut |t: &mut TickFunctions<C>, tm: &mut TimerManager<C>| {
                            apply_with!(Parts {
                                ticks: t,
                                tickables: &mut *tickables,
                                timers: tm,
                                latent: &mut *latent,
                                exec,
                            });
                        },
                    }
                };
            }

            // The group that ran last: functions spawned by the stages after it land later.
            let mut last_group = TickGroup::PrePhysics;
            for stage in Stage::ALL {
                match stage {
                    // Done by `run_frame` before the stages: it only needs its lap.
                    Stage::FrameStart => {}
                    Stage::Group(g) => {
                        let n = ticks.run_group(g, &mut env!());
                        report.ticks_per_group[g.index()] += n;
                        last_group = g;
                    }
                    Stage::Timers => {
                        ticks.past(last_group);
                        let dropped = timers.calls_dropped();
                        report.timers_fired = timers.run_tick(game_dt, real_dt, ctx, &mut |tm| {
                            apply_with!(Parts {
                                ticks: &mut *ticks,
                                tickables: &mut *tickables,
                                timers: tm,
                                latent: &mut *latent,
                                exec,
                            });
                        });
                        report.calls_dropped = timers.calls_dropped() - dropped;
                        exec.after_timers(timers.clocks());
                        apply(
                            shared,
                            &mut Parts {
                                ticks: &mut *ticks,
                                tickables: &mut *tickables,
                                timers: &mut *timers,
                                latent: &mut *latent,
                                exec,
                            },
                            &mut *errors,
                        );
                    }
                    Stage::Tickables => {
                        ticks.past(last_group);
                        report.tickables_ticked = tickables.run(free_dt, *paused, ctx, &mut |tk| {
                            apply_with!(Parts {
                                ticks: &mut *ticks,
                                tickables: tk,
                                timers: &mut *timers,
                                latent: &mut *latent,
                                exec,
                            });
                        });
                    }
                    Stage::Latent => {
                        ticks.past(last_group);
                        let dts = [game_dt.flicks(), real_dt.flicks(), 1];
                        report.latent_completed = latent.run(dts, ctx, &mut |la| {
                            apply_with!(Parts {
                                ticks: &mut *ticks,
                                tickables: &mut *tickables,
                                timers: &mut *timers,
                                latent: la,
                                exec,
                            });
                        });
                        let (polls, ended) = exec.run(ctx, timers, &mut |_, tm| {
                            apply_with!(Parts {
                                ticks: &mut *ticks,
                                tickables: &mut *tickables,
                                timers: tm,
                                latent: &mut *latent,
                                exec,
                            });
                        });
                        report.tasks_polled = polls;
                        report.tasks_ended = ended;
                    }
                    Stage::NewlySpawned => {
                        let (n, passes, held) = ticks.run_extra_passes(&mut env!());
                        report.ticks_per_group[TickGroup::LastDemotable.index()] += n;
                        report.spawn_passes = passes;
                        report.held_back = held;
                    }
                }
                stages.lap(stage);
            }

            report.ticks_run = report.ticks_per_group.iter().sum();
            report.stage_times = stages.times;
        });
    }
}

/// What [`Scheduler::open_frame`] started.
struct Opened {
    #[cfg(feature = "tracing")]
    span: tracing::span::EnteredSpan,
    stages: StageClock,
}

/// Times the stages of one frame and, with the `tracing` feature, keeps a span open for the
/// stage that is running (stages run in the order of [`Stage::ALL`]).
struct StageClock {
    /// `None` when the scheduler does not time its stages.
    clock: Option<Instant>,
    times: [Duration; Stage::ALL.len()],
    #[cfg(feature = "tracing")]
    span: Option<tracing::span::EnteredSpan>,
}

impl StageClock {
    fn start(timed: bool) -> Self {
        StageClock {
            clock: timed.then(Instant::now),
            times: [Duration::ZERO; Stage::ALL.len()],
            #[cfg(feature = "tracing")]
            span: Some(stage_span(Stage::ALL[0]).entered()),
        }
    }

    /// `done` has finished: charge it the time since the last lap and open the next stage.
    fn lap(&mut self, done: Stage) {
        if let Some(clock) = self.clock.as_mut() {
            let now = Instant::now();
            self.times[done.index()] += now - *clock;
            *clock = now;
        }
        #[cfg(feature = "tracing")]
        {
            // Close before opening, so the spans of a frame never overlap.
            self.span = None;
            self.span = Stage::ALL
                .get(done.index() + 1)
                .map(|&next| stage_span(next).entered());
        }
    }
}

/// Span names must be literals, so one arm per stage.
#[cfg(feature = "tracing")]
fn stage_span(stage: Stage) -> tracing::Span {
    use tracing::info_span as span;
    match stage {
        Stage::FrameStart => span!("FrameStart"),
        Stage::Group(TickGroup::PrePhysics) => span!("PrePhysics"),
        Stage::Group(TickGroup::StartPhysics) => span!("StartPhysics"),
        Stage::Group(TickGroup::DuringPhysics) => span!("DuringPhysics"),
        Stage::Group(TickGroup::EndPhysics) => span!("EndPhysics"),
        Stage::Group(TickGroup::PostPhysics) => span!("PostPhysics"),
        Stage::Timers => span!("Timers"),
        Stage::Tickables => span!("Tickables"),
        Stage::Latent => span!("Latent"),
        Stage::Group(TickGroup::PostUpdateWork) => span!("PostUpdateWork"),
        Stage::Group(TickGroup::LastDemotable) => span!("LastDemotable"),
        Stage::NewlySpawned => span!("NewlySpawned"),
    }
}
