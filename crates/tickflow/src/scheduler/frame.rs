//! One frame: `Scheduler::tick`.

use std::panic::{self, AssertUnwindSafe};
use std::time::Instant;

use super::commands::apply;
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
            shared,
            paused,
            ..
        } = self;
        let shared = &**shared;
        let mut clock = Instant::now();
        let mut lap = |stage: Stage, report: &mut FrameReport| {
            let now = Instant::now();
            report.stage_times[stage.index()] += now - clock;
            clock = now;
        };

        macro_rules! env {
            () => {
                Env {
                    ctx: &mut *ctx,
                    timers: &mut *timers,
                    after_call: &mut |t: &mut TickFunctions<C>, tm: &mut TimerManager<C>| {
                        if shared.has_pending() {
                            apply(shared, t, &mut *tickables, tm, &mut report.errors);
                        }
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
            lap(Stage::Group(g), report);
        }

        ticks.past(TickGroup::PostPhysics);
        report.timers_fired = timers.tick_step(game_dt, real_dt, ctx);
        apply(shared, ticks, tickables, timers, &mut report.errors);
        lap(Stage::Timers, report);

        report.tickables_ticked = tickables.run(free_dt, *paused, ctx, &mut |tk| {
            if shared.has_pending() {
                apply(shared, ticks, tk, timers, &mut report.errors);
            }
        });
        lap(Stage::Tickables, report);

        for g in [TickGroup::PostUpdateWork, TickGroup::LastDemotable] {
            let n = ticks.run_group(g, &mut env!());
            report.ticks_per_group[g.index()] += n;
            lap(Stage::Group(g), report);
        }

        let (n, passes, held) = ticks.run_extra_passes(&mut env!());
        report.ticks_per_group[TickGroup::LastDemotable.index()] += n;
        report.spawn_passes = passes;
        report.held_back = held;
        lap(Stage::NewlySpawned, report);

        report.ticks_run = report.ticks_per_group.iter().sum();
    }
}
