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
                lender: Lender {
                    ticks: Some(ticks),
                    tickables: Some(tickables),
                    latent: Some(latent),
                    exec,
                    shared,
                },
                paused: *paused,
                clocks,
                report,
                last_group: TickGroup::PrePhysics,
            };
            for stage in Stage::ALL {
                let worked = frame.run(stage);
                stages.lap(stage, worked, &mut frame.report.stage_times);
            }
            frame.report.ticks_run = frame.report.ticks_per_group.iter().sum();
        });
    }
}

/// The parts of a scheduler, borrowed apart once for the stages of one frame.
struct Stages<'f, C: 'static> {
    ctx: &'f mut C,
    /// Lent to every stage: every callback can set timers.
    timers: &'f mut Timers<C>,
    lender: Lender<'f, C>,
    paused: bool,
    /// The frame's clocks (the scheduler's one value), passed to each stage.
    clocks: &'f Clocks,
    report: &'f mut FrameReport,
    /// The group that ran last: functions spawned by the stages after it land later.
    last_group: TickGroup,
}

/// The parts that queued commands reach. The tick functions, tickables and latent actions
/// are each lent out to their own stage while it runs (taken out of their `Option`), and that
/// stage's hook hands its part back to [`settle`](Lender::settle) between two calls.
struct Lender<'f, C: 'static> {
    ticks: Option<&'f mut TickFunctions<C>>,
    tickables: Option<&'f mut Tickables<C>>,
    latent: Option<&'f mut LatentActions<C>>,
    exec: &'f Exec<C>,
    shared: &'f Shared<C>,
}

/// The part the running stage holds, handed back by its hook.
enum Lent<'a, C: 'static> {
    Ticks(&'a mut TickFunctions<C>),
    Tickables(&'a mut Tickables<C>),
    Latent(&'a mut LatentActions<C>),
    Nothing,
}

impl<C: 'static> Lender<'_, C> {
    /// Applies the commands queued so far to every part (with `always`, even when none are:
    /// the timer stage's end applies what its own bookkeeping queued), or, without, only when
    /// a callback queued some.
    fn settle(
        &mut self,
        lent: Lent<'_, C>,
        timers: &mut Timers<C>,
        errors: &mut Vec<TickError>,
        always: bool,
    ) {
        if !(always || self.shared.has_pending() || self.exec.has_dropped()) {
            return;
        }
        let (mut ticks, mut tickables, mut latent) = (None, None, None);
        match lent {
            Lent::Ticks(t) => ticks = Some(t),
            Lent::Tickables(t) => tickables = Some(t),
            Lent::Latent(l) => latent = Some(l),
            Lent::Nothing => {}
        }
        let mut parts = Parts {
            ticks: ticks.or(self.ticks.as_deref_mut()).expect("held or lent"),
            tickables: tickables
                .or(self.tickables.as_deref_mut())
                .expect("held or lent"),
            timers,
            latent: latent.or(self.latent.as_deref_mut()).expect("held or lent"),
            exec: self.exec,
        };
        apply(self.shared, &mut parts, errors);
    }
}

impl<C: 'static> Stages<'_, C> {
    /// Runs one stage; `false` when it had nothing to do (then it is not timed).
    fn run(&mut self, stage: Stage) -> bool {
        if matches!(stage, Stage::Timers | Stage::Tickables | Stage::Latent) {
            // Functions spawned by these stages land after the group that ran last.
            if let Some(ticks) = self.lender.ticks.as_deref_mut() {
                ticks.past(self.last_group);
            }
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
                let latent = self.lender.latent.as_deref().map_or(0, LatentActions::len);
                r.latent_completed + r.tasks_polled > 0 || latent + self.lender.exec.len() > 0
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
        let ticks = self.lender.ticks.take().expect("held");
        let (lender, errors) = (&mut self.lender, &mut self.report.errors);
        let out = f(
            ticks,
            &mut Env {
                ctx: &mut *self.ctx,
                clocks: self.clocks,
                timers: &mut *self.timers,
                wake: lender.shared.wake(),
                after_call: &mut |t: &mut TickFunctions<C>, tm: &mut Timers<C>| {
                    lender.settle(Lent::Ticks(t), tm, errors, false);
                },
            },
        );
        self.lender.ticks = Some(ticks);
        out
    }

    fn timers(&mut self) {
        let (lender, errors) = (&mut self.lender, &mut self.report.errors);
        let dropped = self.timers.calls_dropped();
        let fired = self.timers.run_tick(self.clocks, self.ctx, &mut |tm| {
            lender.settle(Lent::Nothing, tm, errors, false);
        });
        lender.exec.after_timers();
        lender.settle(Lent::Nothing, self.timers, errors, true);
        self.report.timers_fired = fired;
        self.report.calls_dropped = self.timers.calls_dropped() - dropped;
    }

    fn tickables(&mut self) {
        let tickables = self.lender.tickables.take().expect("held");
        let (lender, errors) = (&mut self.lender, &mut self.report.errors);
        let env = (&mut *self.ctx, self.clocks, &mut *self.timers);
        let (dt, paused) = (self.clocks.unpaused_delta(), self.paused);
        let ticked = tickables.run(dt, paused, env, &mut |tk, tm| {
            lender.settle(Lent::Tickables(tk), tm, errors, false);
        });
        self.lender.tickables = Some(tickables);
        self.report.tickables_ticked = ticked;
    }

    /// Latent actions, then the async tasks their timers or wakers woke.
    fn latent(&mut self) {
        let latent = self.lender.latent.take().expect("held");
        let (lender, errors) = (&mut self.lender, &mut self.report.errors);
        let env = (&mut *self.ctx, self.clocks, &mut *self.timers);
        let completed = latent.run(self.clocks.raw_deltas(), env, &mut |la, tm| {
            lender.settle(Lent::Latent(la), tm, errors, false);
        });
        lender.latent = Some(latent);
        let exec = lender.exec;
        let (polls, ended) = exec.run(self.ctx, self.timers, &mut |_, tm| {
            lender.settle(Lent::Nothing, tm, errors, false);
        });
        self.report.latent_completed = completed;
        self.report.tasks_polled = polls;
        self.report.tasks_ended = ended;
    }
}

/// Times the stages of one frame and, with the `tracing` feature, keeps a span open for the
/// stage that is running (stages run in the order of [`Stage::ALL`]).
pub(super) struct StageClock {
    /// `None` when the scheduler does not time its stages.
    clock: Option<Instant>,
    #[cfg(feature = "tracing")]
    span: Option<tracing::span::EnteredSpan>,
}

impl StageClock {
    pub(super) fn start(timed: bool) -> Self {
        StageClock {
            clock: timed.then(Instant::now),
            #[cfg(feature = "tracing")]
            span: Some(stage_span(Stage::ALL[0]).entered()),
        }
    }

    /// `done` has finished: charge it the time since the last lap (in `times`, the frame
    /// report's, which stay zero when stages are not timed) and open the next stage. A stage
    /// that had nothing to do (`worked` false) is not timed: reading the clock would cost more
    /// than the stage, whose few nanoseconds count toward the next timed stage.
    #[inline]
    fn lap(&mut self, done: Stage, worked: bool, times: &mut [Duration; Stage::COUNT]) {
        if let Some(clock) = self.clock.as_mut().filter(|_| worked) {
            let now = Instant::now();
            times[done.index()] += now - *clock;
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
