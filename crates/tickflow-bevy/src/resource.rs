//! The app's scheduler as a Bevy resource, [`Tickflow`], and the functions that run its
//! frames, flush, save, restore and replace it.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use bevy_ecs::prelude::*;
use tickflow::scheduler::Commands as SchedulerCommands;
use tickflow::snapshot::{Resolver, RestoreError, RestoreReport, SchedulerSnapshot};
use tickflow::{FrameReport, Scheduler, Span};

use crate::bind::{detach_stale, LaterResolver};
use crate::clock::HostClock;
use crate::commands::TickflowCommands;
use crate::owner::{check_new_owners, OwnerCheck};
use crate::queue::set_queued;

/// The app's tickflow [`Scheduler`], whose context is the Bevy [`World`]: every timer, tick
/// function, tickable, latent action and task callback gets `&mut World` (resources, queries,
/// commands, observers, one-shot systems) beside its tickflow powers.
///
/// Set things up from a system with `ResMut<Tickflow>` and [`scheduler`](Self::scheduler);
/// the plugin runs the frames. While a frame runs, the scheduler is busy (it has the world):
/// callbacks use their `cx` for tickflow's services, and [`TickflowCommands`] works everywhere (a callback that gets only the world,
/// such as a [`Target`](crate::Target), reads the frame's clocks with
/// `world.resource::<TickflowCommands>().clocks()`).
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// #[derive(Resource, Default)]
/// struct Gold(u32);
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(64)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1)) // one step per update
///     .init_resource::<Gold>();
/// app.world_mut()
///     .resource_mut::<Tickflow>()
///     .scheduler()
///     .timers()
///     .every(Frames(16))
///     .call(|world, _| world.resource_mut::<Gold>().0 += 10);
/// // Bevy's clocks start at the first update (no time passes in it): 65 updates, 64 steps.
/// for _ in 0..65 {
///     app.update();
/// }
/// assert_eq!(app.world().resource::<Gold>().0, 40);
/// ```
#[derive(Resource)]
pub struct Tickflow {
    /// A scheduler is `Send` but not `Sync`, and resources must be both: the `Mutex` makes it
    /// `Sync`, and it is only ever reached with `get_mut` (no locking, no contention). Taken
    /// out for the length of a frame (the scheduler gets the world, this resource included):
    /// a pointer moved out and back, where moving the resource out of the world and back
    /// cost a fifth of an empty frame (measured).
    sched: Mutex<Option<Box<Scheduler<World>>>>,
    /// A scheduler restored from inside a frame, put in place when the frame ends.
    restored: Mutex<Option<Box<Scheduler<World>>>>,
    real: HostClock,
    game: HostClock,
    last: Option<FrameReport>,
    /// The plugin's `stage_timing`, for a scheduler put in place later ([`install`]).
    pub(crate) stage_timing: bool,
    /// The plugin's owner check, likewise.
    pub(crate) owner_check: OwnerCheck,
}

/// The game time of a frame the plugin runs.
pub(crate) enum GameTime {
    /// A fixed step.
    Step(Span),
    /// The time `Time<Virtual>` reached (its delta since the last frame is carried exactly).
    Elapsed(Duration),
}

impl std::fmt::Debug for Tickflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tickflow")
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

const RUNNING: &str = "Tickflow::scheduler: the scheduler is running a frame (callbacks reach \
                       it through their `cx`, or through the TickflowCommands resource)";

impl Tickflow {
    pub(crate) fn new() -> Self {
        Tickflow {
            sched: Mutex::new(Some(Box::new(Scheduler::new()))),
            restored: Mutex::new(None),
            real: HostClock::default(),
            game: HostClock::default(),
            last: None,
            stage_timing: false,
            owner_check: OwnerCheck::default(),
        }
    }

    fn slot(&mut self) -> &mut Option<Box<Scheduler<World>>> {
        // Frames catch their callbacks' panics (below), so the lock is never poisoned by
        // one; a poisoned lock would still hold a consistent scheduler.
        self.sched.get_mut().unwrap_or_else(|p| p.into_inner())
    }

    /// The scheduler: set timers, tick functions, tickables, latent actions and tasks, read
    /// its clocks. Its frames are the plugin's to run, and its pause follows
    /// `Time<Virtual>` (the plugin sets it every frame).
    ///
    /// # Panics
    ///
    /// While a frame runs (from inside a tickflow callback): the scheduler is busy; use the
    /// callback's `cx`, or [`TickflowCommands`].
    #[track_caller]
    pub fn scheduler(&mut self) -> &mut Scheduler<World> {
        self.slot().as_deref_mut().expect(RUNNING)
    }

    /// Takes the scheduler out to use it beside the world (`None` while a frame runs it);
    /// [`put_back`](Self::put_back) returns it.
    pub(crate) fn take_idle(&mut self) -> Option<Box<Scheduler<World>>> {
        self.slot().take()
    }

    /// Returns a scheduler [`take_idle`](Self::take_idle) took.
    pub(crate) fn put_back(&mut self, sched: Box<Scheduler<World>>) {
        *self.slot() = Some(sched);
    }

    /// The slot, locked, for reading through `&self` (`Res<Tickflow>`): uncontended but for
    /// readers running in parallel, each holding it for the length of a read.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Option<Box<Scheduler<World>>>> {
        self.sched.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn commands(&mut self) -> SchedulerCommands<World> {
        self.scheduler().commands()
    }

    /// What the last tickflow frame did (`None` before the first).
    pub fn last_report(&self) -> Option<&FrameReport> {
        self.last.as_ref()
    }

    /// Puts `sched` in place: now between frames, or when the running frame ends.
    fn replace(&mut self, sched: Scheduler<World>) {
        // While a frame runs, its scheduler is out of the slot: the restored one waits.
        let slot = if self.slot().is_none() {
            self.restored.get_mut().unwrap_or_else(|p| p.into_inner())
        } else {
            self.slot()
        };
        *slot = Some(Box::new(sched));
        self.last = None;
    }
}

/// Runs one tickflow frame: `game` of game time, the real time since the last frame (Bevy's
/// real clock is at `real`), paused or not. Does nothing when the app has no plugin or a frame
/// is already running (a schedule run from inside a callback).
pub(crate) fn run_frame(world: &mut World, game: GameTime, real: Duration, paused: bool) {
    let Some(mut tf) = world.get_resource_mut::<Tickflow>() else {
        return;
    };
    let Some(mut sched) = tf.slot().take() else {
        return;
    };
    let real_dt = tf.real.advance(real);
    let game_dt = match game {
        GameTime::Step(step) => step,
        GameTime::Elapsed(elapsed) => tf.game.advance(elapsed),
    };
    let check = tf.owner_check;
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        set_queued(world, &mut sched);
        check_new_owners(world, &mut sched, check);
        sched.set_paused(paused);
        sched.tick_split(game_dt, real_dt, world)
    }));
    // Back before a panic goes on: the scheduler put itself in order, and the next frame
    // works (as tickflow promises), if the app catches the panic. A scheduler restored during
    // the frame takes the place of the one that ran it.
    let mut tf = world.resource_mut::<Tickflow>();
    let restored = tf
        .restored
        .get_mut()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    *tf.slot() = Some(restored.unwrap_or(sched));
    match result {
        Ok(report) => {
            // Where Bevy users look (its LogPlugin shows `tracing`), once: each error is in
            // the report of the one frame that applied the failed change.
            for e in &report.errors {
                tracing::error!(
                    frame = report.frame,
                    "tickflow: a queued change failed: {e}"
                );
            }
            tf.last = Some(report);
            let clocks = tf.scheduler().clocks();
            crate::stopwatch::advance_all(world, &clocks);
        }
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// Applies everything queued for the scheduler now instead of at the next frame: timers set
/// with [`commands.tickflow()`](crate::TickflowCommandsExt) and [`TickflowCommands`]. Their
/// times count from the scheduler's time now, as they would at the start of the next frame.
///
/// # Panics
///
/// When the app has no [`TickflowPlugin`](crate::TickflowPlugin), or from inside a
/// tickflow frame.
#[track_caller]
pub fn flush(world: &mut World) {
    assert!(
        world.contains_resource::<Tickflow>(),
        "tickflow_bevy::flush: no Tickflow resource (add TickflowPlugin to the app)"
    );
    let check = world.resource::<Tickflow>().owner_check;
    let flushed = with_idle(world, |world, sched| {
        set_queued(world, sched);
        check_new_owners(world, sched, check);
        sched.apply_commands();
    });
    assert!(
        flushed.is_some(),
        "tickflow_bevy::flush (or snapshot, state_hash) called from inside a tickflow frame: \
         what is queued is applied before the next callback anyway"
    );
}

/// The scheduler's state as plain data, for rollback and save games, with everything queued
/// applied first ([`flush`]).
///
/// # Panics
///
/// As [`flush`].
pub fn snapshot(world: &mut World) -> SchedulerSnapshot {
    flush(world);
    world.resource_mut::<Tickflow>().scheduler().snapshot()
}

/// The hash of [`snapshot`]'s contents (platform-independent): compare it between peers to
/// detect a desync.
///
/// # Panics
///
/// As [`flush`].
pub fn state_hash(world: &mut World) -> u64 {
    flush(world);
    world.resource_mut::<Tickflow>().scheduler().state_hash()
}

/// Puts back the scheduler saved in `snap` (by [`snapshot`]), binding callbacks through
/// `resolver` (see [`tickflow::snapshot`]). [`TickflowCommands`] is pointed at the restored
/// scheduler (other copies of its `Commands` you kept are not: take them from the resource
/// again).
///
/// Timers set with [`commands.tickflow()`](crate::TickflowCommandsExt) are bound again by
/// this crate while their entities hold them; your resolver binds the rest. Such a timer
/// whose entity is gone since the save (it fired its last call, or was despawned) does not
/// come back; an entity whose timer the save does not hold (spawned after it) is despawned,
/// so that its handle, which the restored scheduler may give to another timer, cancels
/// nothing. Entities still waiting for their first frame are kept and set at the next one.
///
/// From inside a tickflow frame (a timer callback or an observer that loads a checkpoint),
/// the restored scheduler takes the place of the running one when that frame ends: the rest
/// of the frame runs as it would have.
///
/// # Errors
///
/// As [`Scheduler::restore`]: nothing changes when the snapshot cannot be restored.
///
/// # Panics
///
/// When the app has no [`TickflowPlugin`](crate::TickflowPlugin).
pub fn restore(
    world: &mut World,
    snap: &SchedulerSnapshot,
    resolver: &mut dyn Resolver<World>,
) -> Result<RestoreReport, RestoreError> {
    assert!(
        world.contains_resource::<Tickflow>(),
        "tickflow_bevy::restore: no Tickflow resource (add TickflowPlugin to the app)"
    );
    let mut later = LaterResolver::new(world, resolver);
    let (mut sched, report) = Scheduler::restore(snap, &mut later)?;
    let (bound, gone) = later.finish();
    for h in gone {
        sched.timers().clear(h);
    }
    detach_stale(world, &bound);
    sched.track_new_owners(world.resource::<Tickflow>().owner_check != OwnerCheck::Off);
    let commands = sched.commands();
    world.resource_mut::<Tickflow>().replace(sched);
    world.insert_resource(TickflowCommands(commands));
    Ok(report)
}

/// Puts a scheduler you built in place of the app's: one resumed from a store of durable
/// timers (`tickflow_store::Durable::resume`), say. It keeps the settings the plugin gave the
/// one it replaces (stage timing, and frames that do not count while the app is paused), and
/// [`TickflowCommands`] reaches it. Timers of the replaced scheduler are dropped with it:
/// install at start, before setting any. The entities of the
/// [`commands.tickflow()`](crate::TickflowCommandsExt) timers it had set are despawned with
/// their timers (as a [`restore`] does, with a warning that says how many); those still
/// queued for the next frame are set in the new scheduler. From inside a frame, it takes
/// effect when that frame ends.
///
/// # Panics
///
/// When the app has no [`TickflowPlugin`](crate::TickflowPlugin).
pub fn install(world: &mut World, mut sched: Scheduler<World>) {
    assert!(
        world.contains_resource::<Tickflow>(),
        "tickflow_bevy::install: no Tickflow resource (add TickflowPlugin to the app)"
    );
    let mut tf = world.resource_mut::<Tickflow>();
    sched.set_stage_timing(tf.stage_timing);
    sched.track_new_owners(tf.owner_check != OwnerCheck::Off);
    sched.set_frame_clock_pauses(true);
    let commands = sched.commands();
    tf.replace(sched);
    world.insert_resource(TickflowCommands(commands));
    let gone = detach_stale(world, &Default::default());
    if gone > 0 {
        tracing::warn!(
            "tickflow_bevy::install: {gone} timer(s) of commands.tickflow() set in the replaced \
             scheduler went with it, and their entities were despawned (install before setting \
             any)"
        );
    }
}

/// Runs `f` with the scheduler taken out of the world, and puts it back even when `f`
/// panics (a queued closure applied on the way may): `None` while a frame runs it.
pub(crate) fn with_idle<R>(
    world: &mut World,
    f: impl FnOnce(&mut World, &mut Scheduler<World>) -> R,
) -> Option<R> {
    let mut sched = world.resource_mut::<Tickflow>().take_idle()?;
    let result = panic::catch_unwind(AssertUnwindSafe(|| f(world, &mut sched)));
    world.resource_mut::<Tickflow>().put_back(sched);
    Some(result.unwrap_or_else(|p| panic::resume_unwind(p)))
}
