//! One frame: `Scheduler::tick`.

use std::panic::{self, AssertUnwindSafe};
use std::time::Instant;

use super::commands::{apply, Parts};
use super::{FrameReport, Scheduler, Stage};
use crate::tick::{Env, TickFunctions, TickGroup};
use crate::time::Span;
use crate::timer::TimerManager;

impl<C: 'static> Scheduler<C> {
    /// Runs one frame of `dt` (see the [module docs](crate::scheduler) for the order) and reports it.
    ///
    /// # Panics
    ///
    /// A panic in a callback reaches the caller after the scheduler has put itself back in
    /// order; the rest of the frame is skipped and the next `tick` works.
    pub fn tick(&mut self, dt: Span, ctx: &mut C) -> FrameReport {
        self.flush();
        self.frame += 1;
        let clamped = dt.min(self.max_delta);
        let game_dt = if self.paused {
            Span::ZERO
        } else if self.dilation == 1.0 {
            clamped
        } else {
            Span::from_flicks((clamped.flicks() as f64 * self.dilation).round() as u64)
        };
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

        self.timers.begin_frame();
        self.latent.begin_frame();
        self.tasks.exec.begin_frame();
        let game_now = self.timers.now().flicks().saturating_add(game_dt.flicks());
        self.ticks.begin_frame(
            self.frame,
            [game_now, self.unpaused],
            [game_dt.flicks(), free_dt.flicks()],
            self.paused,
        );
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            self.run_stages(game_dt, dt, free_dt, ctx, &mut report)
        }));
        if let Err(p) = result {
            self.ticks.recover();
            self.tasks.exec.after_timers(self.timers.clocks());
            panic::resume_unwind(p);
        }
        self.ticks.end_frame();
        report
    }

    fn run_stages(
        &mut self,
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
        let exec = &*tasks.exec;
        let errors = &mut report.errors;
        let mut clock = Instant::now();
        let mut times = [std::time::Duration::ZERO; Stage::ALL.len()];
        let mut lap = |stage: Stage| {
            let now = Instant::now();
            times[stage.index()] += now - clock;
            clock = now;
        };

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
                        });
                    },
                }
            };
        }

        for g in [
            TickGroup::PrePhysics,
            TickGroup::StartPhysics,
            TickGroup::DuringPhysics,
            TickGroup::EndPhysics,
            TickGroup::PostPhysics,
        ] {
            let n = ticks.run_group(g, &mut env!());
            report.ticks_per_group[g.index()] += n;
            lap(Stage::Group(g));
        }

        ticks.past(TickGroup::PostPhysics);
        report.timers_fired = timers.tick_step(game_dt, real_dt, ctx);
        exec.after_timers(timers.clocks());
        apply(
            shared,
            &mut Parts {
                ticks: &mut *ticks,
                tickables: &mut *tickables,
                timers: &mut *timers,
                latent: &mut *latent,
            },
            &mut *errors,
        );
        lap(Stage::Timers);

        report.tickables_ticked = tickables.run(free_dt, *paused, ctx, &mut |tk| {
            apply_with!(Parts {
                ticks: &mut *ticks,
                tickables: tk,
                timers: &mut *timers,
                latent: &mut *latent,
            });
        });
        lap(Stage::Tickables);

        let dts = [game_dt.flicks(), real_dt.flicks(), 1];
        report.latent_completed = latent.run(dts, ctx, &mut |la| {
            apply_with!(Parts {
                ticks: &mut *ticks,
                tickables: &mut *tickables,
                timers: &mut *timers,
                latent: la,
            });
        });
        let (polls, ended) = exec.run(ctx, timers, &mut |_, tm| {
            apply_with!(Parts {
                ticks: &mut *ticks,
                tickables: &mut *tickables,
                timers: tm,
                latent: &mut *latent,
            });
        });
        report.tasks_polled = polls;
        report.tasks_ended = ended;
        lap(Stage::Latent);

        for g in [TickGroup::PostUpdateWork, TickGroup::LastDemotable] {
            let n = ticks.run_group(g, &mut env!());
            report.ticks_per_group[g.index()] += n;
            lap(Stage::Group(g));
        }

        let (n, passes, held) = ticks.run_extra_passes(&mut env!());
        report.ticks_per_group[TickGroup::LastDemotable.index()] += n;
        report.spawn_passes = passes;
        report.held_back = held;
        lap(Stage::NewlySpawned);

        report.ticks_run = report.ticks_per_group.iter().sum();
        report.stage_times = times;
    }
}
