//! Reading the scheduler without `ResMut`: [`Tickflow::read`], and [`TickflowTimers`], the
//! system parameter that reads the timers of `commands.tickflow()` by their entities. Both
//! only read, so systems that use them run in parallel with each other and with anything
//! that does not write the [`Tickflow`] resource.

use std::sync::MutexGuard;

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemParam;
use tickflow::{Clocks, Domain, Scheduler, Span, TimerHandle, Timers};

use crate::amount::Amount;
use crate::resource::Tickflow;
use crate::spec::LaterOptions;
use crate::timer_entity::TickflowTimer;

const RUNNING: &str = "Tickflow::read: the scheduler is running a frame (callbacks read it \
                       through their `cx`)";

/// A read of the app's scheduler through `Res<Tickflow>` ([`Tickflow::read`]). It holds the
/// resource's lock: drop it before reading again from the same system.
pub struct TickflowRead<'a> {
    guard: MutexGuard<'a, Option<Box<Scheduler<World>>>>,
}

impl std::fmt::Debug for TickflowRead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickflowRead").finish_non_exhaustive()
    }
}

const LEND: &str = "TickflowTimers: the scheduler is running a frame, and the callback that set \
                    this system off lent it no timers (wrap what it triggers or runs in \
                    tickflow_bevy::lend_timers(cx.timers(), ..); the plugin's own targets and \
                    TimerFired do)";

impl TickflowRead<'_> {
    /// The scheduler when no frame runs it.
    fn idle(&self) -> Option<&Scheduler<World>> {
        self.guard.as_deref()
    }

    /// The scheduler, for its `&self` methods: clocks, pause, time dilation.
    ///
    /// # Panics
    ///
    /// While a tickflow frame runs (from inside a callback or an observer it triggers).
    #[track_caller]
    pub fn scheduler(&self) -> &Scheduler<World> {
        self.guard.as_deref().expect(RUNNING)
    }

    /// The timers, to query ([`Scheduler::timers_ref`]): remaining, elapsed, fraction, list.
    ///
    /// # Panics
    ///
    /// As [`scheduler`](Self::scheduler).
    #[track_caller]
    pub fn timers(&self) -> &Timers<World> {
        self.scheduler().timers_ref()
    }

    /// The clocks of the last tickflow frame.
    ///
    /// # Panics
    ///
    /// As [`scheduler`](Self::scheduler).
    #[track_caller]
    pub fn clocks(&self) -> Clocks {
        self.scheduler().clocks()
    }
}

impl Tickflow {
    /// Reads the scheduler through a shared reference: a system with `Res<Tickflow>` (which
    /// runs in parallel with other readers) instead of `ResMut<Tickflow>`. Changes queued
    /// since the last frame ([`TickflowCommands`](crate::TickflowCommands)) are not applied
    /// yet in what it shows.
    ///
    /// ```
    /// use bevy_app::App;
    /// use bevy_ecs::prelude::*;
    /// use bevy_time::{TimePlugin, TimeUpdateStrategy};
    /// use tickflow_bevy::prelude::*;
    ///
    /// #[derive(Resource)]
    /// struct Cooldown(TimerHandle);
    ///
    /// let mut app = App::new();
    /// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
    ///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
    /// let h = app.world_mut().resource_mut::<Tickflow>().scheduler().timers().after(secs(1.0)).call(|_, _| {});
    /// app.insert_resource(Cooldown(h));
    /// for _ in 0..4 {
    ///     app.update(); // the first update starts Bevy's clocks: 3 steps of 0.1 s
    /// }
    /// let fraction = app
    ///     .world_mut()
    ///     .run_system_once(|tf: Res<Tickflow>, cd: Res<Cooldown>| tf.read().timers().fraction(cd.0))
    ///     .unwrap();
    /// assert_eq!(fraction, Some(0.3));
    /// # use bevy_ecs::system::RunSystemOnce;
    /// ```
    pub fn read(&self) -> TickflowRead<'_> {
        TickflowRead { guard: self.lock() }
    }
}

/// Reads the timers of [`commands.tickflow()`](crate::TickflowCommandsExt) by their entities,
/// as `Query<&Timer>` reads Bevy's: a cooldown bar or an ability button, from a system that
/// only reads. Each method answers `None` for an entity that holds no such timer (despawned,
/// or its timer made its last call), and otherwise what [`Timers`] answers for its handle; a
/// timer still waiting for the next frame's batch (see [`TickflowTimer`]) reads as its first
/// countdown, untouched, which is what the batch will set; but one spawned and controlled
/// from inside a frame reads `None` until the next frame sets it and applies its controls.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// #[derive(Component)]
/// struct CooldownBar(Entity);
///
/// #[derive(Resource, Default)]
/// struct Drawn(Vec<f64>);
///
/// fn draw(bars: Query<&CooldownBar>, timers: TickflowTimers, mut drawn: ResMut<Drawn>) {
///     for bar in &bars {
///         drawn.0.extend(timers.fraction(bar.0));
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
///     .init_resource::<Drawn>()
///     .add_systems(bevy_app::Update, draw);
/// let cooldown = app
///     .world_mut()
///     .run_system_once(|mut commands: Commands| commands.tickflow().after(secs(0.4)).fire().id())
///     .unwrap();
/// app.world_mut().spawn(CooldownBar(cooldown));
/// for _ in 0..5 {
///     app.update();
/// }
/// // Update runs after the fixed step: 0.1 s in, then 0.2, 0.3 (and 0 before the first step).
/// assert_eq!(app.world().resource::<Drawn>().0, [0.0, 0.25, 0.5, 0.75]);
/// # use bevy_ecs::system::RunSystemOnce;
/// ```
#[derive(SystemParam)]
pub struct TickflowTimers<'w, 's> {
    tickflow: Res<'w, Tickflow>,
    timers: Query<'w, 's, (&'static TickflowTimer, Option<&'static LaterOptions>)>,
}

impl std::fmt::Debug for TickflowTimers<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickflowTimers").finish_non_exhaustive()
    }
}

impl TickflowTimers<'_, '_> {
    /// The timer `entity` holds, in the scheduler (`None` too while it waits for the next
    /// frame's batch: the other methods answer for it then).
    pub fn handle(&self, entity: Entity) -> Option<TimerHandle> {
        self.timers.get(entity).ok()?.0.handle()
    }

    /// Everything at once ([`TimerRead`]); the single reads below are its fields.
    pub fn get(&self, entity: Entity) -> Option<TimerRead> {
        let (timer, options) = self.timers.get(entity).ok()?;
        read_one(&self.tickflow, timer, options)
    }

    /// Time (or frames, for a frame timer) left until its next call ([`Timers::remaining`]).
    pub fn remaining(&self, entity: Entity) -> Option<Amount> {
        self.get(entity).map(|r| r.remaining)
    }

    /// Time (or frames) since its current countdown began ([`Timers::elapsed`]).
    pub fn elapsed(&self, entity: Entity) -> Option<Amount> {
        self.get(entity).map(|r| r.elapsed)
    }

    /// How far its countdown has come, 0 to 1 ([`Timers::fraction`]): a progress bar.
    pub fn fraction(&self, entity: Entity) -> Option<f64> {
        self.get(entity).map(|r| r.fraction)
    }

    /// How much of its countdown is left, 1 to 0: `1 - fraction` (a cooldown overlay that
    /// shrinks).
    pub fn fraction_remaining(&self, entity: Entity) -> Option<f64> {
        self.get(entity).map(|r| r.fraction_remaining())
    }

    /// Its period or delay ([`Timers::rate`]), in its own unit.
    pub fn rate(&self, entity: Entity) -> Option<Amount> {
        self.get(entity).map(|r| r.rate)
    }

    /// `true` while it is paused
    /// ([`TickflowTimerCommands::pause_timer`](crate::TickflowTimerCommands::pause_timer)).
    pub fn is_paused(&self, entity: Entity) -> Option<bool> {
        self.get(entity).map(|r| r.paused)
    }

    /// The calls it has made.
    pub fn calls_made(&self, entity: Entity) -> Option<u64> {
        self.get(entity).map(|r| r.calls)
    }

    /// Its [payload](crate::LaterTimer::payload) (empty when none was given): the data a
    /// durable timer's row carries, for a resumed timer's entity too.
    pub fn payload(&self, entity: Entity) -> Option<Vec<u8>> {
        let (timer, options) = self.timers.get(entity).ok()?;
        match timer.handle() {
            Some(h) => self.with_timers(|t| t.payload(h).map(<[u8]>::to_vec)),
            None => {
                self.get(entity)?; // one that will never be set reads as none
                let given = options.and_then(|o| o.given.payload.as_deref());
                Some(given.unwrap_or_default().to_vec())
            }
        }
    }

    /// Any timer of the scheduler by its handle — one set through `ResMut<Tickflow>`, or
    /// resumed from a store — read the same way as an entity's ([`TimerRead`], frames as
    /// frames); `None` for a stale handle.
    pub fn of_handle(&self, h: TimerHandle) -> Option<TimerRead> {
        self.with_timers(|t| read_handle(t, h))
    }

    /// Runs `f` on all the scheduler's timers — [`Timers::list`], `info_of`, any query —
    /// between frames or inside one (through the timers the callback that set this system off
    /// lent it: [`lend_timers`](crate::lend_timers)), where
    /// [`Tickflow::read`]`().timers()` panics while a frame runs.
    ///
    /// # Panics
    ///
    /// Inside a frame, when no timers were lent.
    #[track_caller]
    pub fn with_timers<T>(&self, f: impl FnOnce(&Timers<World>) -> T) -> T {
        try_with_timers(&self.tickflow, f).expect(LEND)
    }

    /// The whole scheduler, to read ([`Tickflow::read`]).
    pub fn read(&self) -> TickflowRead<'_> {
        self.tickflow.read()
    }
}

/// A timer of [`commands.tickflow()`](crate::TickflowCommandsExt) read whole, as
/// [`TickflowTimers::get`] and [`read_timer`] give it: the same answers as the single reads.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq)
)]
pub struct TimerRead {
    /// Time (or frames) left until its next call.
    pub remaining: Amount,
    /// Time (or frames) since its countdown began.
    pub elapsed: Amount,
    /// Its period or delay.
    pub rate: Amount,
    /// How far its countdown has come, 0 to 1.
    pub fraction: f64,
    /// `true` while it is paused.
    pub paused: bool,
    /// The calls it has made.
    pub calls: u64,
}

impl TimerRead {
    /// How much of its countdown is left, 1 to 0.
    pub fn fraction_remaining(&self) -> f64 {
        1.0 - self.fraction
    }
}

/// Reads the timer of `entity` from a `&World`, outside any system: tests, input drivers,
/// load code. The same answers as [`TickflowTimers::get`] (from inside a frame too, through
/// lent timers); `None` for an entity that holds no such timer.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
/// let boss = app
///     .world_mut()
///     .run_system_once(|mut commands: Commands| commands.tickflow().after(secs(30.0)).fire().id())
///     .unwrap();
/// for _ in 0..4 {
///     app.update(); // three steps of 0.1 s
/// }
/// let read = tickflow_bevy::read_timer(app.world(), boss).unwrap();
/// assert_eq!((read.remaining, read.calls), (Amount::Time(secs(29.7)), 0));
/// # use bevy_ecs::system::RunSystemOnce;
/// ```
pub fn read_timer(world: &World, entity: Entity) -> Option<TimerRead> {
    let e = world.get_entity(entity).ok()?;
    let timer = e.get::<TickflowTimer>()?;
    read_one(
        world.get_resource::<Tickflow>()?,
        timer,
        e.get::<LaterOptions>(),
    )
}

/// Runs `f` on the timers: the scheduler's between frames, the ones the running callback lent
/// inside one (`None` when it lent none).
fn try_with_timers<T>(tickflow: &Tickflow, f: impl FnOnce(&Timers<World>) -> T) -> Option<T> {
    let guard = tickflow.read();
    match guard.idle() {
        Some(sched) => Some(f(sched.timers_ref())),
        None => crate::lend::lent(f),
    }
}

/// The read-out of one timer, its component and options given: a queued one as it will be
/// set, a set one from the scheduler.
#[track_caller]
fn read_one(
    tickflow: &Tickflow,
    timer: &TickflowTimer,
    options: Option<&LaterOptions>,
) -> Option<TimerRead> {
    if let Some(h) = timer.handle() {
        return try_with_timers(tickflow, |t| read_handle(t, h)).expect(LEND);
    }
    let (len, rate) = timer.waiting(options, || try_with_timers(tickflow, Timers::clocks))?;
    let amount = |n| Amount::of(timer.counts_frames(), n);
    Some(TimerRead {
        remaining: amount(len),
        elapsed: amount(0),
        rate: amount(rate),
        fraction: if len == 0 { 1.0 } else { 0.0 },
        paused: false,
        calls: 0,
    })
}

/// The read-out of the timer `h` in `t`, whichever kind it is.
fn read_handle(t: &Timers<World>, h: TimerHandle) -> Option<TimerRead> {
    let frames = t.domain(h)? == Domain::Frames;
    let amount = |s: Span| Amount::of(frames, s.flicks());
    Some(TimerRead {
        remaining: amount(t.remaining(h)?),
        elapsed: amount(t.elapsed(h)?),
        rate: amount(t.rate(h)?),
        fraction: t.fraction(h)?,
        paused: t.is_paused(h),
        calls: t.calls_made(h)?,
    })
}

/// A run condition: `true` once `entity` holds no running timer of
/// [`commands.tickflow()`](crate::TickflowCommandsExt) — its last call was made (and its
/// entity went), or it was cancelled or never set. `run_if(timer_finished(cooldown))` runs a
/// system once the cooldown is over.
///
/// ```
/// use bevy_app::{App, Update};
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// #[derive(Resource, Default)]
/// struct Casts(u32);
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
///     .init_resource::<Casts>();
/// let cooldown = app
///     .world_mut()
///     .run_system_once(|mut commands: Commands| commands.tickflow().after(secs(0.3)).fire().id())
///     .unwrap();
/// app.add_systems(
///     Update,
///     (|mut casts: ResMut<Casts>| casts.0 += 1).run_if(timer_finished(cooldown)),
/// );
/// for _ in 0..6 {
///     app.update(); // steps at 0.1 .. 0.5 s: over from the third
/// }
/// assert_eq!(app.world().resource::<Casts>().0, 3);
/// # use bevy_ecs::system::RunSystemOnce;
/// ```
pub fn timer_finished(entity: Entity) -> impl FnMut(TickflowTimers) -> bool + Clone {
    move |timers: TickflowTimers| timers.get(entity).is_none()
}
