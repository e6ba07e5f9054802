//! [`TickflowPlugin`]: where and how often the scheduler runs in a Bevy app.

use std::time::Duration;

use bevy_app::prelude::*;
use bevy_app::{RunFixedMainLoop, RunFixedMainLoopSystems};
use bevy_ecs::intern::Interned;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;
use bevy_time::{Fixed, Real, Time, Virtual};
use tickflow::Span;

use crate::commands::TickflowCommands;
use crate::owner::OwnerCheck;
use crate::queue::{register_hooks, LaterQueue};
use crate::resource::{run_frame, GameTime, Tickflow};

/// Runs the app's tickflow [`Scheduler`](tickflow::Scheduler) (the [`Tickflow`] resource)
/// in Bevy's schedules, with its clocks driven by Bevy's.
///
/// - [`fixed(hz)`](Self::fixed) (the default, at Bevy's 64 Hz): one tickflow frame per run
///   of the fixed main schedule (`FixedUpdate`), of exactly [`Span::frames(1, hz)`] of game
///   time, whatever nanoseconds Bevy's `Time<Fixed>` rounds its step to. The plugin sets
///   `Time<Fixed>` to `hz`. So tickflow's frame count is the number of fixed steps, and a
///   timer of `after(Frames(n))` fires on the `n`-th `FixedUpdate` from now, not the `n`-th
///   rendered frame (the count Bevy users see in `FixedUpdate`).
/// - [`variable()`](Self::variable): one tickflow frame per app update (in `Update`), of the
///   game time `Time<Virtual>` advanced (exactly: its nanoseconds are carried, never
///   rounded away).
///
/// In both, Bevy's virtual clock is tickflow's game clock: pausing `Time<Virtual>` pauses it
/// and its relative speed is the game clock's speed (in fixed mode through the number of
/// fixed steps, as Bevy does). [`Domain::Real`](tickflow::Domain::Real) follows `Time<Real>`
/// (each frame gets the real time since the last one), and `TimeUpdateStrategy` (manual
/// durations, `FixedTimesteps(n)`: `n` tickflow frames per update in fixed mode) makes the
/// frames exact and repeatable in tests. While `Time<Virtual>` is paused (or its speed is
/// zero), fixed mode runs one paused tickflow frame per update (game clock stopped, real time
/// passing), so real-time timers and `tick_when_paused` functions go on in pause menus;
/// [`frames_while_paused(false)`](Self::frames_while_paused) turns that off. Paused frames do
/// not move the [`Domain::Frames`](tickflow::Domain::Frames) clock (the plugin sets
/// [`set_frame_clock_pauses`](tickflow::Scheduler::set_frame_clock_pauses)), so
/// `after(Frames(n))` counts fixed steps (or, in variable mode, updates the game ran) and
/// waits through a pause as a game-time timer does.
///
/// The frame runs as an exclusive system in [`TickflowSystems::Frame`]: order your systems
/// with `.before(TickflowSystems::Frame)` / `.after(...)`. [`in_schedule`](Self::in_schedule)
/// moves it (for instance to a rollback crate's schedule). Needs Bevy's `TimePlugin`
/// (`MinimalPlugins` and `DefaultPlugins` have it).
///
/// ```
/// use bevy_app::App;
/// use bevy_time::{Time, TimePlugin, TimeUpdateStrategy, Virtual};
/// use tickflow_bevy::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(50)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(2)); // two 20 ms steps per update
/// for _ in 0..3 {
///     app.update(); // the first update starts Bevy's clocks (no steps)
/// }
/// let now = app.world_mut().resource_mut::<Tickflow>().scheduler().clocks().now(Domain::Game);
/// assert_eq!(now.since_start(), millis(80)); // 4 frames of exactly 20 ms
///
/// app.world_mut().resource_mut::<Time<Virtual>>().pause();
/// app.update();
/// let sched = app.world_mut().resource_mut::<Tickflow>();
/// let report = sched.last_report().unwrap();
/// assert!(report.paused);
/// ```
#[derive(Clone, Debug)]
pub struct TickflowPlugin {
    mode: Mode,
    schedule: Option<Interned<dyn ScheduleLabel>>,
    frames_while_paused: bool,
    stage_timing: bool,
    owner_check: OwnerCheck,
}

#[derive(Copy, Clone, Debug)]
enum Mode {
    Fixed { hz: u32 },
    Variable,
}

/// The plugin's systems, for ordering yours around them.
#[derive(SystemSet, Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TickflowSystems {
    /// A tickflow frame (fixed steps, or paused frames while `Time<Virtual>` is paused).
    Frame,
}

impl Default for TickflowPlugin {
    /// [`fixed(64)`](Self::fixed): Bevy's own default fixed rate.
    fn default() -> Self {
        TickflowPlugin::fixed(64)
    }
}

impl TickflowPlugin {
    /// One tickflow frame of exactly `Span::frames(1, hz)` per fixed step, and Bevy's fixed
    /// step set to `hz`.
    ///
    /// # Panics
    ///
    /// When `hz` is zero, or so high that a step would round to zero flicks;
    /// [`try_fixed`](Self::try_fixed) returns the error instead.
    #[track_caller]
    pub fn fixed(hz: u32) -> Self {
        Self::try_fixed(hz).unwrap_or_else(|e| panic!("TickflowPlugin::fixed({hz}): {e}"))
    }

    /// [`fixed`](Self::fixed), or the error for a rate no step fits (a rate read from a
    /// config file, say).
    ///
    /// # Errors
    ///
    /// [`TimeError`](tickflow::time::TimeError) when `hz` is zero or above 1,411,200,000
    /// ([`Span::try_frames`]).
    pub fn try_fixed(hz: u32) -> Result<Self, tickflow::time::TimeError> {
        Span::try_frames(1, hz)?;
        Ok(TickflowPlugin {
            mode: Mode::Fixed { hz },
            schedule: None,
            frames_while_paused: true,
            stage_timing: false,
            owner_check: OwnerCheck::default(),
        })
    }

    /// One tickflow frame per app update, of the time `Time<Virtual>` advanced.
    pub fn variable() -> Self {
        TickflowPlugin {
            mode: Mode::Variable,
            schedule: None,
            frames_while_paused: false,
            stage_timing: false,
            owner_check: OwnerCheck::default(),
        }
    }

    /// Runs the frames in `schedule` instead (default: `FixedUpdate` in fixed mode, `Update`
    /// in variable mode). In fixed mode every run of that schedule is one step.
    pub fn in_schedule(mut self, schedule: impl ScheduleLabel) -> Self {
        self.schedule = Some(schedule.intern());
        self
    }

    /// Whether frames time their stages (`FrameReport::stage_times` in
    /// [`Tickflow::last_report`]); default `false`, as in tickflow, which saves a quarter of a
    /// microsecond per frame (Bevy apps profile with Bevy's tools; tickflow's `tracing`
    /// feature still gives each stage a span).
    pub fn stage_timing(mut self, on: bool) -> Self {
        self.stage_timing = on;
        self
    }

    /// What happens when an owner id used in the scheduler names an entity without
    /// [`TickflowOwner`](crate::TickflowOwner) ([`OwnerCheck`]; default: a warning).
    ///
    /// ```
    /// use bevy_app::App;
    /// use bevy_ecs::prelude::*;
    /// use bevy_time::{TimePlugin, TimeUpdateStrategy};
    /// use tickflow_bevy::prelude::*;
    /// use tickflow_bevy::OwnerCheck;
    ///
    /// #[derive(Resource, Default)]
    /// struct Shots(u32);
    ///
    /// let mut app = App::new();
    /// app.add_plugins((TimePlugin, TickflowPlugin::fixed(60).owner_check(OwnerCheck::Register)))
    ///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
    ///     .init_resource::<Shots>();
    /// let turret = app.world_mut().spawn_empty().id(); // no TickflowOwner
    /// app.world_mut()
    ///     .resource_mut::<Tickflow>()
    ///     .scheduler()
    ///     .timers()
    ///     .every(Frames(1))
    ///     .owner(owner(turret))
    ///     .call(|world, _| world.resource_mut::<Shots>().0 += 1);
    /// for _ in 0..3 {
    ///     app.update(); // the plugin gives the turret TickflowOwner; two steps
    /// }
    /// assert!(app.world().entity(turret).contains::<TickflowOwner>());
    /// app.world_mut().despawn(turret);
    /// app.update();
    /// assert_eq!(app.world().resource::<Shots>().0, 2);
    /// ```
    pub fn owner_check(mut self, check: OwnerCheck) -> Self {
        self.owner_check = check;
        self
    }

    /// Fixed mode: whether updates with `Time<Virtual>` paused run a paused tickflow frame
    /// (default `true`), for real-time timers, `tick_when_paused` functions and tasks on the
    /// real clock.
    ///
    /// A paused frame does not count on the [`Domain::Frames`](tickflow::Domain::Frames)
    /// clock: frame timers (`after(Frames(n))`, `every(Frames(n))`) count fixed steps only, and wait
    /// through a pause. The frame number ([`Clocks::frame`](tickflow::Clocks::frame), as
    /// `cx.clocks().frame()`) counts every tickflow frame, paused ones included.
    pub fn frames_while_paused(mut self, on: bool) -> Self {
        self.frames_while_paused = on;
        self
    }
}

/// What the frame systems need to know (a resource: systems are plain functions).
#[derive(Resource, Copy, Clone, Debug)]
struct FixedRate {
    step: Span,
    /// The timestep Bevy stores for `hz`; another one means the app changed `Time<Fixed>`
    /// since, and its step is followed (rounded to the flick).
    bevy_step: Duration,
}

impl Plugin for TickflowPlugin {
    fn build(&self, app: &mut App) {
        let mut tickflow = Tickflow::new();
        tickflow.stage_timing = self.stage_timing;
        tickflow.scheduler().set_stage_timing(self.stage_timing);
        tickflow.owner_check = self.owner_check;
        (tickflow.scheduler()).track_new_owners(self.owner_check != OwnerCheck::Off);
        // Frames are the game's steps: a paused app makes none (see the type's docs).
        tickflow.scheduler().set_frame_clock_pauses(true);
        let commands = TickflowCommands(tickflow.commands());
        app.insert_resource(tickflow)
            .insert_resource(commands)
            .init_resource::<LaterQueue>()
            .init_resource::<crate::stopwatch::Stopwatches>();
        register_hooks(app.world_mut());
        #[cfg(feature = "reflect")]
        register_types(app);
        match self.mode {
            Mode::Fixed { hz } => {
                let fixed = Time::<Fixed>::from_hz(f64::from(hz));
                app.insert_resource(FixedRate {
                    step: Span::frames(1, hz),
                    bevy_step: fixed.timestep(),
                })
                .insert_resource(fixed);
                let schedule = self.schedule.unwrap_or_else(|| FixedUpdate.intern());
                app.add_systems(schedule, fixed_frame.in_set(TickflowSystems::Frame));
                if self.frames_while_paused {
                    app.add_systems(
                        RunFixedMainLoop,
                        paused_frame
                            .in_set(RunFixedMainLoopSystems::AfterFixedMainLoop)
                            .in_set(TickflowSystems::Frame),
                    );
                }
            }
            Mode::Variable => {
                let schedule = self.schedule.unwrap_or_else(|| Update.intern());
                app.add_systems(schedule, variable_frame.in_set(TickflowSystems::Frame));
            }
        }
    }

    fn finish(&self, app: &mut App) {
        assert!(
            app.world().contains_resource::<Time<Real>>(),
            "{NO_TIME_PLUGIN}"
        );
    }
}

const NO_TIME_PLUGIN: &str =
    "TickflowPlugin needs Bevy's TimePlugin (in MinimalPlugins and DefaultPlugins): add it to the app";

/// One of Bevy's clocks, or a panic that names the plugin they come from (an app updated
/// without `finish`, which would check it first).
#[track_caller]
fn clock<T: Default + Send + Sync + 'static>(world: &World) -> &Time<T> {
    world.get_resource::<Time<T>>().expect(NO_TIME_PLUGIN)
}

fn fixed_frame(world: &mut World) {
    let rate = world.resource::<FixedRate>();
    let timestep = clock::<Fixed>(world).timestep();
    let step = if timestep == rate.bevy_step {
        rate.step
    } else {
        Span::from(timestep)
    };
    let real = clock::<Real>(world).elapsed();
    run_frame(world, GameTime::Step(step), real, false);
}

fn paused_frame(world: &mut World) {
    if clock::<Virtual>(world).effective_speed_f64() != 0.0 {
        return;
    }
    let real = clock::<Real>(world).elapsed();
    run_frame(world, GameTime::Step(Span::ZERO), real, true);
}

fn variable_frame(world: &mut World) {
    let virt = clock::<Virtual>(world);
    let (game, paused) = (virt.elapsed(), virt.effective_speed_f64() == 0.0);
    let real = clock::<Real>(world).elapsed();
    run_frame(world, GameTime::Elapsed(game), real, paused);
}

/// Registers the types the `reflect` feature reflects, for inspectors and scenes.
#[cfg(feature = "reflect")]
fn register_types(app: &mut App) {
    use tickflow::prelude::{CatchUp, Domain, Frames, Span};
    app.register_type::<crate::TickflowStopwatch>()
        .register_type::<crate::TickflowStopwatchResource>()
        .register_type::<crate::TickflowOwner>()
        .register_type::<crate::OwnerCheck>()
        .register_type::<crate::TimerRead>()
        .register_type::<crate::Amount>()
        .register_type::<Span>()
        .register_type::<tickflow::Time>()
        .register_type::<Frames>()
        .register_type::<Domain>()
        .register_type::<CatchUp>();
}
