//! The stages of one frame, run in the order of [`Stage::ALL`], each with the parts of the
//! scheduler borrowed apart, so that a stage's callbacks can apply queued commands to every
//! other part between two calls.

use std::time::{Duration, Instant};

use super::apply::{apply, Parts, Shared};
use super::{FrameReport, Scheduler, Stage};
use crate::executor::Exec;
use crate::latent::LatentActions;
use crate::tick::{Env, TickError, TickFunctions, TickGroup};
use crate::tickable::Tickables;
use crate::time::Clocks;
use crate::timer::Timers;

impl<C: 'static> Scheduler<C> {
    /// Runs every stage after [`Stage::FrameStart`] (done by `run_frame`), timing each with
    /// `stages`; every stage reads this frame's `clocks`.
    pub(super) fn run_stages(
        &mut self,
        mut stages: StageClock,
        clocks: &Clocks,
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
        let exec = tasks.exec();
        // Task futures, task handles and `Commands` reach the executor while it is active.
        exec.activate(|| {
            let mut frame = Stages {
                ctx,
                timers,
                ticks,
                tickables,
                latent,
                exec,
                shared,
                paused: *paused,
                clocks,
                report,
                last_group: TickGroup::PrePhysics,
            };
            for stage in Stage::ALL {
                let worked = frame.run(stage);
                stages.lap(stage, worked);
            }
            frame.report.ticks_run = frame.report.ticks_per_group.iter().sum();
            frame.report.stage_times = stages.times;
        });
    }
}

/// The parts of a scheduler, borrowed apart for the stages of one frame.
struct Stages<'f, C: 'static> {
    ctx: &'f mut C,
    timers: &'f mut Timers<C>,
    ticks: &'f mut TickFunctions<C>,
    tickables: &'f mut Tickables<C>,
    latent: &'f mut LatentActions<C>,
    exec: &'f Exec<C>,
    shared: &'f Shared<C>,
    paused: bool,
    clocks: &'f Clocks,
    report: &'f mut FrameReport,
    /// The group that ran last: functions spawned by the stages after it land later.
    last_group: TickGroup,
}

/// Applies the commands queued by a callback, if there are any, before the next call.
fn settle<C: 'static>(shared: &Shared<C>, mut parts: Parts<'_, C>, errors: &mut Vec<TickError>) {
    if shared.has_pending() || parts.exec.has_dropped() {
        apply(shared, &mut parts, errors);
    }
}

impl<C: 'static> Stages<'_, C> {
    /// Runs one stage; `false` when it had nothing to do (then it is not timed).
    fn run(&mut self, stage: Stage) -> bool {
        if matches!(stage, Stage::Timers | Stage::Tickables | Stage::Latent) {
            // Functions spawned by these stages land after the group that ran last.
            self.ticks.past(self.last_group);
        }
        match stage {
            // Done by `run_frame` before the stages: it only needs its lap.
            Stage::FrameStart => true,
            Stage::Group(g) => {
                let n = self.with_env(|ticks, env| ticks.run_group(g, env));
                self.report.ticks_per_group[g.index()] += n;
                self.last_group = g;
                n > 0
            }
            Stage::Timers => {
                self.timers();
                self.report.timers_fired > 0 || !self.timers.is_empty()
            }
            Stage::Tickables => {
                self.tickables();
                self.report.tickables_ticked > 0
            }
            Stage::Latent => {
                self.latent();
                let r = &self.report;
                r.latent_completed + r.tasks_polled > 0 || self.latent.len() + self.exec.len() > 0
            }
            Stage::NewlySpawned => {
                let (n, passes, held) = self.with_env(|ticks, env| ticks.run_extra_passes(env));
                self.report.ticks_per_group[TickGroup::LastDemotable.index()] += n;
                self.report.spawn_passes = passes;
                self.report.held_back = held;
                passes > 0
            }
        }
    }

    /// Lends the tick functions and what they run with (the context, the timers, and the
    /// hook that applies queued commands between two calls) to `f`.
    fn with_env<R>(&mut self, f: impl FnOnce(&mut TickFunctions<C>, &mut Env<'_, C>) -> R) -> R {
        let Stages {
            ctx,
            timers,
            ticks,
            tickables,
            latent,
            exec,
            shared,
            report,
            clocks,
            ..
        } = self;
        let errors = &mut report.errors;
        f(
            ticks,
            &mut Env {
                ctx: &mut **ctx,
                clocks,
                timers: &mut **timers,
                wake: shared.wake(),
                after_call: &mut |t: &mut TickFunctions<C>, tm: &mut Timers<C>| {
                    let parts = Parts {
                        ticks: t,
                        tickables: &mut **tickables,
                        timers: tm,
                        latent: &mut **latent,
                        exec,
                    };
                    settle(shared, parts, errors);
                },
            },
        )
    }

    fn timers(&mut self) {
        let Stages {
            ctx,
            timers,
            ticks,
            tickables,
            latent,
            exec,
            shared,
            report,
            clocks,
            ..
        } = self;
        let errors = &mut report.errors;
        let dropped = timers.calls_dropped();
        let fired = timers.run_tick(clocks, ctx, &mut |tm| {
            let parts = Parts {
                ticks: &mut **ticks,
                tickables: &mut **tickables,
                timers: tm,
                latent: &mut **latent,
                exec,
            };
            settle(shared, parts, errors);
        });
        exec.after_timers();
        let mut parts = Parts {
            ticks: &mut **ticks,
            tickables: &mut **tickables,
            timers: &mut **timers,
            latent: &mut **latent,
            exec,
        };
        apply(shared, &mut parts, errors);
        report.timers_fired = fired;
        report.calls_dropped = timers.calls_dropped() - dropped;
    }

    fn tickables(&mut self) {
        let Stages {
            ctx,
            timers,
            ticks,
            tickables,
            latent,
            exec,
            shared,
            report,
            paused,
            clocks,
            ..
        } = self;
        let errors = &mut report.errors;
        let env = (&mut **ctx, *clocks, &mut **timers);
        let ticked = tickables.run(clocks.unpaused_delta(), *paused, env, &mut |tk, tm| {
            let parts = Parts {
                ticks: &mut **ticks,
                tickables: tk,
                timers: tm,
                latent: &mut **latent,
                exec,
            };
            settle(shared, parts, errors);
        });
        report.tickables_ticked = ticked;
    }

    /// Latent actions, then the async tasks their timers or wakers woke.
    fn latent(&mut self) {
        let Stages {
            ctx,
            timers,
            ticks,
            tickables,
            latent,
            exec,
            shared,
            report,
            clocks,
            ..
        } = self;
        let errors = &mut report.errors;
        let env = (&mut **ctx, *clocks, &mut **timers);
        let completed = latent.run(clocks.raw_deltas(), env, &mut |la, tm| {
            let parts = Parts {
                ticks: &mut **ticks,
                tickables: &mut **tickables,
                timers: tm,
                latent: la,
                exec,
            };
            settle(shared, parts, errors);
        });
        let (polls, ended) = exec.run(ctx, timers, &mut |_, tm| {
            let parts = Parts {
                ticks: &mut **ticks,
                tickables: &mut **tickables,
                timers: tm,
                latent: &mut **latent,
                exec,
            };
            settle(shared, parts, errors);
        });
        report.latent_completed = completed;
        report.tasks_polled = polls;
        report.tasks_ended = ended;
    }
}

/// Times the stages of one frame and, with the `tracing` feature, keeps a span open for the
/// stage that is running (stages run in the order of [`Stage::ALL`]).
pub(super) struct StageClock {
    /// `None` when the scheduler does not time its stages.
    clock: Option<Instant>,
    times: [Duration; Stage::ALL.len()],
    #[cfg(feature = "tracing")]
    span: Option<tracing::span::EnteredSpan>,
}

impl StageClock {
    pub(super) fn start(timed: bool) -> Self {
        StageClock {
            clock: timed.then(Instant::now),
            times: [Duration::ZERO; Stage::ALL.len()],
            #[cfg(feature = "tracing")]
            span: Some(stage_span(Stage::ALL[0]).entered()),
        }
    }

    /// `done` has finished: charge it the time since the last lap and open the next stage. A
    /// stage that had nothing to do (`worked` false) is not timed: reading the clock would
    /// cost more than the stage, whose few nanoseconds count toward the next timed stage.
    fn lap(&mut self, done: Stage, worked: bool) {
        if let Some(clock) = self.clock.as_mut().filter(|_| worked) {
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
