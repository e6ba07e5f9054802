//! The frame pipeline: clocks, tick groups, timers and tickables in one fixed order.
//!
//! [`Scheduler<C>`] is Unreal's `UWorld::Tick` for any game loop. It owns the clocks, the
//! [`Timers`], the tick functions, the tickables, the latent actions and the async
//! tasks, and [`tick(dt, &mut ctx)`](Scheduler::tick) runs one frame:
//!
//! ```text
//! start     queued commands applied; the tick order resolved again if it changed; due
//!           interval functions collected; the clocks: real += dt,
//!           game += min(dt, max_delta) × dilation (0 while paused), frame += 1
//! ticks     PrePhysics → StartPhysics → DuringPhysics → EndPhysics → PostPhysics
//! timers    every due timer, in exact due order (timers set earlier in the frame are pending)
//! tickables in registration order
//! latent    latent actions (updates, then completions), then woken tasks in spawn order
//! ticks     PostUpdateWork → LastDemotable → extra passes for functions spawned in the last group
//! ```
//!
//! and returns a [`FrameReport`]. These are the stages of [`Stage::ALL`], the one list of
//! this order: the frame walks it, and [`FrameReport::stage_times`] follows it. The rules of
//! each part are in [`tick`](crate::tick), [`tickable`](crate::tickable),
//! [`timer`](crate::timer) and [`latent`](crate::latent).
//!
//! # One context for every callback
//!
//! Every kind of callback receives the context `&mut C` and a [`Cx`](crate::Cx) of its kind
//! (one generic type: `TimerCx`, `TickCx`, `TickableCx` and `LatentCx` are `Cx<'_, C, K>`
//! for their kind `K`), and reaches the scheduler's services through it by the same three
//! names, documented once on [`Cx`](crate::Cx):
//!
//! - `cx.clocks()`: every clock as this frame sees it ([`Clocks`]): one value per frame, the
//!   same for every stage, the time the frame reaches;
//! - `cx.timers()`: the [`Timers`], to set, clear, pause and query timers at once;
//! - `cx.commands()`: the [`Commands`], for every other change (tick functions, tickables,
//!   latent actions, tasks, owners), by the names of the services they change:
//!   `cx.commands().ticks().add(..)`, `.tickables()`, `.latent()`, `.tasks()`,
//!   `.remove_owner(..)`.
//!
//! | callback | its context | what is particular to it |
//! |---|---|---|
//! | timer | [`TimerCx`](crate::timer::TimerCx) | `scheduled()`, `lateness()`, `call_index()`, `clear_self()` |
//! | tick function | [`TickCx`](crate::tick::TickCx) | `dt()`, `group()`, `handle()` |
//! | parallel tick function | [`Deferred`](crate::tick::Deferred), then a `TickCx` in [`Deferred::later`](crate::tick::Deferred::later) at the group's end | `dt()`, `run(..)` |
//! | tickable | [`TickableCx`](crate::tickable::TickableCx) | `dt()` |
//! | latent completion | [`LatentCx`](crate::latent::LatentCx) | |
//! | task | [`TaskCx`](crate::latent::TaskCx) (`timers` takes a closure: a task holds nothing across an `await`) | `delay(..)`, `next_frame()`, `with(..)` |
//!
//! What a callback queues through `commands()` is applied right after it returns (after the
//! timer stage, for timer callbacks), so a tick function it adds runs later in the same
//! frame. A timer it sets counts from this frame's timer stage. Code that runs no callback
//! (another thread, a host's system) takes a [`commands()`](Scheduler::commands) of its own.
//!
//! # Pause, dilation, `max_delta`
//!
//! The frame's delta is first clamped to `max_delta` (default 250 ms), so one long hitch
//! cannot start a catch-up spiral; the report says how much was discarded. The game clock then
//! moves by the clamped delta times the time dilation (at most
//! [`MAX_TIME_DILATION`](crate::time::MAX_TIME_DILATION)), or not at all while paused. The
//! real clock is not clamped, so a real-clock timer after a long sleep relies on the
//! [catch-up cap](crate::timer::Timers::set_catch_up_cap): at most 1,000 calls per timer
//! in that frame, the rest counted in [`FrameReport::calls_dropped`]. The real
//! clock always moves by the true delta. While paused, only `tick_when_paused` tick functions
//! and tickables run (with the clamped real delta), game-domain timers freeze and real-domain
//! ones keep firing; frame-counted timers count paused frames too, unless
//! [`set_frame_clock_pauses`](Scheduler::set_frame_clock_pauses) stops the frame clock with
//! the game.
//!
//! # Panics
//!
//! A panic in a callback reaches the caller of `tick` after the scheduler has put itself back
//! in order: the rest of that frame is skipped (due interval functions stay due), and the next
//! `tick` starts a new frame. The frame's time still passes for the stages it skipped: timer
//! calls that came due are made first in the next frame, latent actions get the skipped
//! frame's delta with the next one, and whatever is set before the next frame counts from the
//! time reached, as between any two frames. A panicking destructor (of a removed closure, a
//! cancelled task) or deferred change never stops the cleanup of the others: the first panic
//! goes on once everything is consistent.
//!
//! Dropping a scheduler drops everything it holds with its executor reachable, so a
//! destructor may use the `TaskCx` or `Commands` it holds; a task spawned from a destructor
//! then is cancelled at birth (its closure is dropped uncalled and its handle says
//! cancelled), so chains of destructors that spawn cannot keep the drop going.
//!
//! # Examples
//!
//! ```
//! use tickflow::prelude::*;
//!
//! let mut sched = Scheduler::<Vec<String>>::new();
//! let physics = sched.ticks().add(
//!     TickSettings::named("physics").in_group(TickGroup::DuringPhysics),
//!     |log, _| log.push("physics".into()),
//! );
//! let camera = sched.ticks().add(TickSettings::named("camera"), |log, cx| {
//!     log.push(format!("camera in {:?}", cx.group()));
//! });
//! sched.ticks().add_prerequisite(camera, physics).unwrap(); // camera is demoted past physics
//! sched.timers().every(secs(0.1)).call(|log, _| log.push("timer".into()));
//!
//! let mut log = Vec::new();
//! let report = sched.tick(secs(0.1), &mut log);
//! assert_eq!(log, ["physics", "camera in DuringPhysics", "timer"]);
//! assert_eq!((report.ticks_run, report.timers_fired), (2, 1));
//! ```

mod apply;
mod commands;
mod frame;
pub(crate) mod migrate;
mod owners;
mod queued;
pub(crate) mod registry;
mod report;
pub(crate) mod resolver;
pub(crate) mod snapshot;
mod stages;
pub(crate) mod sync;
mod teardown;

use std::fmt;
use std::sync::Arc;

pub use crate::commands::Commands;
pub use queued::{LatentCommands, TaskCommands, TickCommands, TickableCommands};
// The snapshot types' one public home is `tickflow::snapshot`.
pub use report::{FrameReport, Stage};
pub(crate) use resolver::{Resolver, RestoreReport};

use crate::latent::{LatentActions, Tasks};
use crate::owner::OwnerId;
use crate::tick::{TickError, TickFunctions};
use crate::tickable::Tickables;
use crate::time::{Clocks, Span};
use crate::timer::Timers;
use apply::{Parts, Shared};

/// The default `max_delta`: a quarter second, as Bevy's virtual clock. Longer frames are a
/// hitch (a breakpoint, a laptop waking up), not game time to catch up on.
pub const DEFAULT_MAX_DELTA: Span = Span::from_flicks(crate::time::FLICKS_PER_SECOND / 4);

// Where `Scheduler`'s verbs live, beside this file's settings and services: one frame in
// `frame.rs`, its stages in `stages.rs`, snapshots in `snapshot.rs`, owners in `owners.rs`,
// moving an owner out and in in `migrate/ops.rs`, dropping it in `teardown.rs`. One type
// because a game holds one scheduler; each file is one of its jobs, and they share its parts
// only through the parts' own verbs.
/// Runs frames: tick groups, timers and tickables in a fixed order. See the
/// [module docs](self).
pub struct Scheduler<C: 'static> {
    timers: Timers<C>,
    ticks: TickFunctions<C>,
    tickables: Tickables<C>,
    latent: LatentActions<C>,
    tasks: Tasks<C>,
    shared: Arc<Shared<C>>,
    /// Every clock of the last frame (the one value every stage of a frame reads).
    clocks: Clocks,
    paused: bool,
    /// Whether paused frames leave the `Frames` clock where it is.
    frame_clock_pauses: bool,
    dilation: f64,
    max_delta: Span,
    /// Errors of commands applied between frames, reported with the next frame.
    errors: Vec<TickError>,
    /// Whether frames time their stages (`FrameReport::stage_times`).
    stage_timing: bool,
    /// Owners' move epochs and frozen owners (see `migrate.rs`).
    moves: migrate::Moves<C>,
}

impl<C: 'static> Default for Scheduler<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: 'static> fmt::Debug for Scheduler<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler")
            .field("frame", &self.clocks.frame())
            .field("paused", &self.paused)
            .field("frame_clock_pauses", &self.frame_clock_pauses)
            .field("dilation", &self.dilation)
            .field("max_delta", &self.max_delta)
            .field("tick_functions", &self.ticks.graph().len())
            .field("tickables", &self.tickables.len())
            .field("timers", &self.timers.len())
            .field("latent_actions", &self.latent.len())
            .field("tasks", &self.tasks.exec().len())
            .finish()
    }
}

impl<C: 'static> Scheduler<C> {
    /// An empty scheduler at frame 0, time zero, running, dilation 1, `max_delta` 250 ms.
    pub fn new() -> Self {
        let tasks = Tasks::new();
        let shared = Arc::new(Shared::new(
            tasks.exec().factory.clone(),
            tasks.exec().wake().clone(),
        ));
        let commands = Commands::connected(&shared);
        let mut timers = Timers::new();
        timers.set_commands(commands.clone());
        tasks.exec().set_commands(commands);
        let latent = LatentActions::new();
        Scheduler {
            timers,
            ticks: TickFunctions::new(Arc::clone(&shared.ticks), tasks.exec().wake().clone()),
            tickables: Tickables::new(Arc::clone(&shared.tickables)),
            latent,
            tasks,
            shared,
            clocks: Clocks::default(),
            paused: false,
            frame_clock_pauses: false,
            dilation: 1.0,
            max_delta: DEFAULT_MAX_DELTA,
            errors: Vec::new(),
            stage_timing: false,
            moves: migrate::Moves::default(),
        }
    }

    /// Applies the commands queued through [`Commands`] now, instead of at the next direct
    /// call or frame (which apply them first anyway, so this changes no outcome). Take a
    /// [`snapshot`](Self::snapshot) after it: queued commands hold closures and are not saved.
    pub fn apply_commands(&mut self) {
        self.flush();
    }

    /// Applies commands queued between frames, so direct calls see their effects.
    fn flush(&mut self) {
        let exec = self.tasks.exec();
        if self.shared.has_pending() || exec.has_dropped() || exec.has_remote_cancels() {
            let (shared, mut parts, errors) = self.split();
            let exec = parts.exec;
            exec.activate(|| apply::apply(shared, &mut parts, errors));
        }
    }

    fn split(&mut self) -> (&Shared<C>, Parts<'_, C>, &mut Vec<TickError>) {
        let parts = Parts {
            ticks: &mut self.ticks,
            tickables: &mut self.tickables,
            timers: &mut self.timers,
            latent: &mut self.latent,
            exec: self.tasks.exec(),
        };
        (&self.shared, parts, &mut self.errors)
    }

    /// The tick functions (the frame's tick groups): add, remove, enable them, set their
    /// intervals and prerequisites. Commands queued meanwhile are applied first.
    pub fn ticks(&mut self) -> &mut TickFunctions<C> {
        self.flush();
        &mut self.ticks
    }

    /// The tickables (the frame's tickable stage, after the timers). Commands queued
    /// meanwhile are applied first.
    pub fn tickables(&mut self) -> &mut Tickables<C> {
        self.flush();
        &mut self.tickables
    }

    /// The timers (the frame's timer stage): set, clear, pause and query them. Their clocks
    /// move with the scheduler's frames ([`tick`](Self::tick)), so [`Timers`] has no `tick`
    /// of its own (a [`TimerManager`](crate::timer::TimerManager) does).
    pub fn timers(&mut self) -> &mut Timers<C> {
        self.flush();
        &mut self.timers
    }

    /// The timers, to read: [`remaining`](Timers::remaining), [`fraction`](Timers::fraction),
    /// [`list`](Timers::list) and the other queries, from a shared reference (a cooldown bar
    /// drawn while other readers read). Unlike [`timers`](Self::timers), it does not apply
    /// the commands queued since the last frame: what it shows is the state they will change.
    ///
    /// ```
    /// # use tickflow::prelude::*;
    /// let mut sched = Scheduler::<()>::new();
    /// let cooldown = sched.timers().after(secs(2.0)).call(|_, _| {});
    /// sched.tick(secs(0.25), &mut ());
    /// let view: &Scheduler<()> = &sched;
    /// assert_eq!(view.timers_ref().fraction(cooldown), Some(0.125));
    /// ```
    pub fn timers_ref(&self) -> &Timers<C> {
        &self.timers
    }

    /// The latent actions (the frame's latent stage, before the tasks). They run in the
    /// scheduler's frames ([`tick`](Self::tick)), so [`LatentActions`] has no `tick` of its
    /// own (a [`LatentActionManager`](crate::latent::LatentActionManager) does).
    pub fn latent(&mut self) -> &mut LatentActions<C> {
        self.flush();
        &mut self.latent
    }

    /// The async tasks (the end of the frame's latent stage). Commands queued meanwhile are
    /// applied first.
    pub fn tasks(&mut self) -> &mut Tasks<C> {
        self.flush();
        &mut self.tasks
    }

    /// Removes all of an owner's timers, tick functions, tickables and latent actions, and
    /// cancels its tasks (their destructors run now).
    pub fn remove_owner(&mut self, owner: OwnerId) {
        self.flush();
        let (_, mut parts, _) = self.split();
        let exec = parts.exec;
        exec.activate(|| apply::remove_owner(&mut parts, owner));
        self.flush();
    }

    /// Pauses or resumes the game clock (see the [module docs](self)).
    pub fn set_paused(&mut self, on: bool) {
        self.paused = on;
    }

    /// `true` while paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Scales the game clock: 0.5 runs the game at half speed, 0 freezes it.
    ///
    /// # Panics
    ///
    /// When `factor` is negative, NaN, infinite or above [`MAX_TIME_DILATION`](crate::time::MAX_TIME_DILATION).
    #[track_caller]
    pub fn set_time_dilation(&mut self, factor: f64) {
        assert!(
            crate::time::valid_dilation(factor),
            "time dilation must be finite, not negative and at most {}, got {factor:?}",
            crate::time::MAX_TIME_DILATION
        );
        self.dilation = factor;
    }

    /// The current time dilation.
    pub fn time_dilation(&self) -> f64 {
        self.dilation
    }

    /// The longest delta the game clock takes from one frame (default 250 ms).
    ///
    /// # Panics
    ///
    /// When `d` is zero: the game clock would never move again (stop it with
    /// [`set_paused`](Self::set_paused) or [`set_time_dilation`](Self::set_time_dilation)
    /// instead, which can be undone).
    #[track_caller]
    pub fn set_max_delta(&mut self, d: Span) {
        assert!(
            d > Span::ZERO,
            "set_max_delta: the longest frame delta must be above zero (pause with set_paused)"
        );
        self.max_delta = d;
    }

    /// The longest delta the game clock takes from one frame.
    ///
    /// ```
    /// # use tickflow::prelude::*;
    /// let mut sched = Scheduler::<()>::new();
    /// assert_eq!(sched.max_delta(), secs(0.25));
    /// sched.set_max_delta(secs(0.1));
    /// let report = sched.tick(secs(1.0), &mut ()); // a one-second hitch
    /// assert_eq!((report.game_dt, report.discarded), (sched.max_delta(), secs(0.9)));
    /// ```
    pub fn max_delta(&self) -> Span {
        self.max_delta
    }

    /// Every clock, and how far each moved in the last frame (see [`Clocks`]): the value
    /// every callback of that frame saw.
    pub fn clocks(&self) -> Clocks {
        self.clocks
    }

    /// `true` times each stage of a frame into [`FrameReport::stage_times`] (a profiler's
    /// view of where a frame's time goes). Default `false`: the stage times read zero, and a
    /// frame saves its clock reads (up to eleven, about 0.25 µs on the project machine: half
    /// of an empty frame, and a sixth of what 1,000 tick functions cost beyond a plain loop
    /// over them). Not saved in snapshots (a setting of the machine).
    ///
    /// ```
    /// # use tickflow::prelude::*;
    /// use std::time::Duration;
    /// use tickflow::Stage;
    ///
    /// let mut sched = Scheduler::<()>::new();
    /// sched.ticks().add(TickSettings::named("work"), |_, _| {
    ///     std::hint::black_box((0..1000u64).sum::<u64>());
    /// });
    /// assert_eq!(sched.tick(secs(0.1), &mut ()).total_time(), Duration::ZERO);
    /// sched.set_stage_timing(true);
    /// let report = sched.tick(secs(0.1), &mut ());
    /// assert!(report.stage_time(Stage::Group(TickGroup::PrePhysics)) > Duration::ZERO);
    /// ```
    pub fn set_stage_timing(&mut self, on: bool) {
        self.stage_timing = on;
    }

    /// The order the next frame will run, group by group, with why each function is where it
    /// is (its own group, or demoted by which prerequisite) and its flags.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<()>::new();
    /// let physics = sched.ticks().add(
    ///     TickSettings::named("physics").in_group(TickGroup::DuringPhysics), |_, _| {});
    /// let camera = sched.ticks().add(TickSettings::named("camera"), |_, _| {});
    /// sched.ticks().add_prerequisite(camera, physics).unwrap();
    /// let text = sched.explain_order();
    /// assert!(text.contains("camera"));
    /// assert!(text.contains("demoted from PrePhysics: waits for `physics` in DuringPhysics"));
    /// ```
    pub fn explain_order(&self) -> String {
        let mut text = self.ticks.with_plan(|plan, graph| plan.explain(graph));
        let names = self.tickables.names();
        if !names.is_empty() {
            text.push_str(&format!(
                "tickables (after the timers): {}\n",
                names.join(", ")
            ));
        }
        text
    }

    /// A cloneable handle for queuing changes from timer callbacks, tickables or anywhere else.
    pub fn commands(&self) -> Commands<C> {
        self.timers.commands().clone()
    }
}
