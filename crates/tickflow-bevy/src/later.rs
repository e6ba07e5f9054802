//! `commands.tickflow()`: timers set from any system with Bevy's `Commands`, each one an
//! entity that is its handle (despawn it to cancel) and that holds what it does
//! (`timer_entity.rs`).

use std::fmt;
use std::marker::PhantomData;

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemId;
use tickflow::prelude::{CatchUp, Domain, Span, Time};
use tickflow::time::Interval;
use tickflow::timer::Offline;

use crate::spec::{Given, LaterOptions, Spec, When};
use crate::target::Target;
use crate::timer_entity::TickflowTimer;

/// Adds [`tickflow`](Self::tickflow) to Bevy's `Commands`: Bevy's `commands.delayed()`, with
/// what it lacks. A clock of your choice (game time that pauses and changes speed with
/// `Time<Virtual>`, real time, or frames), repeats with a catch-up policy, a handle to cancel
/// (the returned entity: despawn it), an owner (the timer goes when its owner is despawned),
/// and rollback (the timers are part of the scheduler's snapshot). Scheduling is O(1) and a
/// frame's cost does not grow with the timers waiting; Bevy's delayed commands scan every
/// pending queue each frame.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// #[derive(Resource, Default)]
/// struct Log(Vec<String>);
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1)) // one 0.1 s step per update
///     .init_resource::<Log>();
/// app.world_mut().run_system_once(|mut commands: Commands| {
///     // Three calls, 0.2 s apart, each triggering `TimerFired` on the timer's entity.
///     commands
///         .tickflow()
///         .every(secs(0.2))
///         .times(3)
///         .fire()
///         .observe(|fired: On<TimerFired>, mut log: ResMut<Log>| {
///             log.0.push(format!("call {} last {}", fired.call, fired.last));
///         });
/// }).unwrap();
/// # use bevy_ecs::system::RunSystemOnce;
/// for _ in 0..10 {
///     app.update();
/// }
/// assert_eq!(app.world().resource::<Log>().0, ["call 0 last false", "call 1 last false", "call 2 last true"]);
/// ```
pub trait TickflowCommandsExt<'w, 's> {
    /// Sets a tickflow timer (see the [trait docs](TickflowCommandsExt)).
    fn tickflow(&mut self) -> Later<'_, 'w, 's>;
}

impl<'w, 's> TickflowCommandsExt<'w, 's> for Commands<'w, 's> {
    fn tickflow(&mut self) -> Later<'_, 'w, 's> {
        Later { commands: self }
    }
}

impl fmt::Debug for Later<'_, '_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Later")
    }
}

impl fmt::Debug for LaterTimer<'_, '_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaterTimer")
            .field("spec", &self.spec)
            .field("owner", &self.owner)
            .field("given", &self.given)
            .finish_non_exhaustive()
    }
}

/// Chooses when a timer set with [`commands.tickflow()`](TickflowCommandsExt) fires.
pub struct Later<'a, 'w, 's> {
    commands: &'a mut Commands<'w, 's>,
}

impl<'a, 'w, 's> Later<'a, 'w, 's> {
    fn with<U>(self, when: When) -> LaterTimer<'a, 'w, 's, U> {
        LaterTimer {
            commands: self.commands,
            spec: Spec::new(when),
            owner: None,
            given: Given::default(),
            _unit: PhantomData,
        }
    }

    /// Once, `delay` from now: on the game clock (or the real one, with
    /// [`real`](LaterTimer::real)) for a `Span`, after `n` tickflow frames for
    /// [`Frames(n)`](tickflow::time::Frames).
    pub fn after<I: Interval>(self, delay: I) -> LaterTimer<'a, 'w, 's, I::Unit> {
        self.with(match delay.clock_amount() {
            (Domain::Frames, n) => When::AfterFrames(n),
            (_, flicks) => When::After(Span::from_flicks(flicks)),
        })
    }

    /// Once, when the game clock reads `time` (or the real clock, with
    /// [`real`](LaterTimer::real)): "the boss at 30 s of game time" is
    /// `at(Time::from_secs(30.0))`. A time already reached fires in the next frame; reads run
    /// from the time the timer is set (the next frame's start, or a `flush`).
    pub fn at(self, time: Time) -> LaterTimer<'a, 'w, 's, Span> {
        self.with(When::At(time))
    }

    /// Every `period` (a period of zero fires once per frame), or every `n` tickflow frames
    /// for [`Frames(n)`](tickflow::time::Frames).
    pub fn every<I: Interval>(self, period: I) -> LaterTimer<'a, 'w, 's, I::Unit> {
        self.with(match period.clock_amount() {
            (Domain::Frames, n) => When::EveryFrames(n),
            (_, flicks) => When::Every(Span::from_flicks(flicks)),
        })
    }
}

/// Options of a timer set with [`commands.tickflow()`](TickflowCommandsExt), then what it
/// does. Each of `trigger`, `run_system`, `queue`, `call`, `target` and `fire` spawns the
/// timer's entity and returns its `EntityCommands` (add components, observers, or keep its
/// id to cancel it by despawning). The entity despawns itself after the timer's last call.
pub struct LaterTimer<'a, 'w, 's, U = Span> {
    commands: &'a mut Commands<'w, 's>,
    spec: Spec,
    owner: Option<Entity>,
    given: Given,
    /// What its delays are given in: `Span` or [`Frames`](tickflow::time::Frames).
    _unit: PhantomData<U>,
}

impl LaterTimer<'_, '_, '_, Span> {
    /// Counts on the real clock (`Time<Real>`) instead of the game clock (the default, which
    /// pauses and changes speed with `Time<Virtual>`).
    pub fn real(mut self) -> Self {
        self.spec.real = true;
        self
    }
}

impl<'a, U> LaterTimer<'a, '_, '_, U> {
    /// What a repeating timer does after a stall ([`CatchUp`]).
    pub fn catch_up(mut self, policy: CatchUp) -> Self {
        self.spec.catch_up = Some(policy);
        self
    }

    /// At most `n` calls.
    pub fn times(mut self, n: u64) -> Self {
        self.spec.times = Some(n);
        self
    }

    /// A repeating timer's first call after `delay` instead of one period, in the unit the
    /// timer counts in.
    pub fn first_delay(mut self, delay: impl Interval<Unit = U>) -> Self {
        self.spec.first_delay = Some(delay.clock_amount().1);
        self
    }

    /// Names the timer in the scheduler, so it is not anonymous in
    /// [`Timers::list`](tickflow::timer::Timers::list), `info_of`, snapshots and
    /// [`clear_named`](tickflow::timer::Timers::clear_named) (which clears the timer but
    /// leaves its entity: despawning the entity does both). Its tag is taken: it is the
    /// entity's bits, by which a restore finds the entity again; data of your own goes on the
    /// entity, as components.
    ///
    /// ```
    /// use bevy_app::App;
    /// use bevy_ecs::prelude::*;
    /// use bevy_ecs::system::RunSystemOnce;
    /// use bevy_time::TimePlugin;
    /// use tickflow_bevy::prelude::*;
    ///
    /// let mut app = App::new();
    /// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)));
    /// app.world_mut()
    ///     .run_system_once(|mut commands: Commands| {
    ///         commands.tickflow().every(secs(30.0)).name("autosave").fire();
    ///     })
    ///     .unwrap();
    /// tickflow_bevy::flush(app.world_mut());
    /// let mut tf = app.world_mut().resource_mut::<Tickflow>();
    /// let list = tf.scheduler().timers().list();
    /// assert_eq!(list[0].name.as_deref(), Some("autosave"));
    /// ```
    pub fn name(mut self, name: impl Into<Box<str>>) -> Self {
        self.given.name = Some(name.into());
        self
    }

    /// Makes the timer durable: a store (`tickflow_store::Durable`) keeps it, so it survives
    /// the app, and a restart treats the time that passed as `offline` says. Its key in the
    /// store is its [name](Self::name), which it must have: a resumed app binds its target
    /// by that name ([`Rebind`](crate::Rebind)), on a new entity, and one durable timer per
    /// name is kept (setting another of the same name clears this one, as a new order
    /// replaces the old). Give each its own (`"forge/17"`), with the data its target needs
    /// in its [payload](Self::payload).
    ///
    /// The owner (ECS) and the target (closures, observers on the entity) belong to this run
    /// of the app and do not go to the store: entities are not the same in the next run.
    ///
    /// # Panics
    ///
    /// In the method that spawns the timer (`fire`, `trigger`, ...), when it has no name, or
    /// its name or payload is longer than a store keeps
    /// ([`MAX_DURABLE_NAME`](tickflow::timer::MAX_DURABLE_NAME),
    /// [`MAX_DURABLE_PAYLOAD`](tickflow::timer::MAX_DURABLE_PAYLOAD)): a timer the game
    /// believes durable would not be.
    pub fn durable(mut self, offline: Offline) -> Self {
        self.given.durable = Some(offline);
        self
    }

    /// Bytes of yours that travel with the timer: in snapshots and in a durable timer's
    /// store row, for the target of the resumed timer ([`Rebind::target`](crate::Rebind::target)
    /// gets them) and for reads ([`TickflowTimers::payload`](crate::TickflowTimers::payload)).
    pub fn payload(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.given.payload = Some(bytes.into().into_boxed_slice());
        self
    }

    /// Makes the timer's entity a child of `entity` (`ChildOf`): despawning `entity` despawns
    /// the timer's entity, which cancels the timer. An owner already despawned when the
    /// command is applied (killed earlier in the same frame, say) leaves the timer an orphan
    /// that never runs: its entity goes at the next tickflow frame, and reads as no timer
    /// meanwhile — the rule [`OwnerCheck::Register`](crate::OwnerCheck::Register) keeps for
    /// scheduler items.
    pub fn owner(mut self, entity: Entity) -> Self {
        self.owner = Some(entity);
        self
    }

    #[track_caller]
    fn spawn(self, target: Option<Target>, fire: bool) -> EntityCommands<'a> {
        if self.given.durable.is_some() {
            check_durable(&self.given);
        }
        let timer = TickflowTimer::new(&self.spec, target, fire);
        let options = LaterOptions {
            given: self.given,
            times: self.spec.times,
            first_delay: self.spec.first_delay,
        };
        // The options only on the timers that take them.
        let mut e = match options.is_empty() {
            true => self.commands.spawn(timer),
            false => self.commands.spawn((timer, options)),
        };
        if let Some(parent) = self.owner {
            // Checked as it is applied: `ChildOf` of a despawned entity would be dropped with
            // a log line, and the timer run for ever.
            e.queue(move |mut timer: EntityWorldMut| {
                if timer.world().get_entity(parent).is_ok() {
                    timer.insert(ChildOf(parent));
                } else if let Some(mut t) = timer.get_mut::<TickflowTimer>() {
                    t.mark_orphan();
                }
            });
        }
        e
    }

    /// At each call, triggers `event` for its observers.
    #[track_caller]
    pub fn trigger<E>(self, event: E) -> EntityCommands<'a>
    where
        E: Event + Clone,
        for<'e> E::Trigger<'e>: Default,
    {
        self.target(Target::trigger(event))
    }

    /// At each call, writes a copy of `message` (a Bevy `Message`, registered with
    /// `App::add_message`): read it with a `MessageReader` in any schedule.
    #[track_caller]
    pub fn message<M: Message + Clone>(self, message: M) -> EntityCommands<'a> {
        self.target(Target::message(message))
    }

    /// At each call, runs a registered one-shot system.
    #[track_caller]
    pub fn run_system(self, id: SystemId) -> EntityCommands<'a> {
        self.target(Target::run_system(id))
    }

    /// At each call, applies a copy of `command`.
    #[track_caller]
    pub fn queue<M: Command + Clone + Sync>(self, command: M) -> EntityCommands<'a> {
        self.target(Target::queue(command))
    }

    /// At each call, runs `f` with the world.
    #[track_caller]
    pub fn call(self, f: impl FnMut(&mut World) + Send + Sync + 'static) -> EntityCommands<'a> {
        self.target(Target::call(f))
    }

    /// At each call, runs `target`.
    #[track_caller]
    pub fn target(self, target: Target) -> EntityCommands<'a> {
        self.spawn(Some(target), false)
    }

    /// At each call, triggers [`TimerFired`](crate::TimerFired) on the timer's entity: observe
    /// it there.
    #[track_caller]
    pub fn fire(self) -> EntityCommands<'a> {
        self.spawn(None, true)
    }
}

/// A durable timer needs a name (its key, and what a resumed app binds it by), and a name
/// and payload a store keeps (tickflow's own check).
#[track_caller]
fn check_durable(given: &Given) {
    let name = given.name.as_deref().unwrap_or_default();
    assert!(
        !name.is_empty(),
        "commands.tickflow(): a durable timer needs a name (its key in the store, and what \
         Rebind binds its target by after a restart)"
    );
    tickflow::timer::check_durable(name, given.payload.as_deref().unwrap_or_default());
}
