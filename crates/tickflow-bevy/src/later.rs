//! `commands.tickflow()`: timers set from any system with Bevy's `Commands`, each one an
//! entity that is its handle (despawn it to cancel) and that holds what it does.

use std::fmt;
use std::sync::Mutex;

use bevy_ecs::lifecycle::HookContext;
use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemId;
use bevy_ecs::world::DeferredWorld;
use tickflow::latent::{Completion, LatentAction, LatentInfo};
use tickflow::prelude::{CatchUp, Domain, Span, Tickable, TimerCx};
use tickflow::snapshot::Resolver;
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::{CancelHook, TimerCallback, TimerInfo};

use crate::owner::owner;
use crate::resource::TickflowCommands;
use crate::target::Target;

/// The name of every timer set through [`commands.tickflow()`](TickflowCommandsExt) (its
/// tag is the entity's bits): [`restore`](crate::restore) binds these itself.
pub const LATER_TIMER_NAME: &str = "tickflow_bevy::later";

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
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for TickflowTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickflowTimer")
            .field("spec", &self.spec)
            .field("fire", &self.fire)
            .finish_non_exhaustive()
    }
}

/// Chooses when a timer set with [`commands.tickflow()`](TickflowCommandsExt) fires.
pub struct Later<'a, 'w, 's> {
    commands: &'a mut Commands<'w, 's>,
}

impl<'a, 'w, 's> Later<'a, 'w, 's> {
    fn with(self, when: When) -> LaterTimer<'a, 'w, 's> {
        LaterTimer {
            commands: self.commands,
            spec: Spec {
                when,
                domain: None,
                catch_up: None,
                times: None,
                first_delay: None,
            },
            owner: None,
        }
    }

    /// Once, `delay` from now on the game clock (or the one set with
    /// [`domain`](LaterTimer::domain)).
    pub fn after(self, delay: Span) -> LaterTimer<'a, 'w, 's> {
        self.with(When::After(delay))
    }

    /// Every `period` (a period of zero fires once per frame).
    pub fn every(self, period: Span) -> LaterTimer<'a, 'w, 's> {
        self.with(When::Every(period))
    }

    /// Once, after `n` tickflow frames.
    pub fn after_frames(self, n: u64) -> LaterTimer<'a, 'w, 's> {
        self.with(When::AfterFrames(n))
    }

    /// Every `n` tickflow frames.
    pub fn every_frames(self, n: u64) -> LaterTimer<'a, 'w, 's> {
        self.with(When::EveryFrames(n))
    }
}

#[derive(Copy, Clone, Debug)]
enum When {
    After(Span),
    Every(Span),
    AfterFrames(u64),
    EveryFrames(u64),
}

/// A timer's settings, kept on its entity until the scheduler has it.
#[derive(Copy, Clone, Debug)]
struct Spec {
    when: When,
    domain: Option<Domain>,
    catch_up: Option<CatchUp>,
    times: Option<u64>,
    first_delay: Option<Span>,
}

/// Options of a timer set with [`commands.tickflow()`](TickflowCommandsExt), then what it
/// does. Each of `trigger`, `run_system`, `queue`, `call`, `target` and `fire` spawns the
/// timer's entity and returns its `EntityCommands` (add components, observers, or keep its
/// id to cancel it by despawning). The entity despawns itself after the timer's last call.
pub struct LaterTimer<'a, 'w, 's> {
    commands: &'a mut Commands<'w, 's>,
    spec: Spec,
    owner: Option<Entity>,
}

impl<'a> LaterTimer<'a, '_, '_> {
    /// The clock it counts on ([`Domain::Game`] by default: pauses and changes speed with
    /// `Time<Virtual>`; [`Domain::Real`] follows `Time<Real>`).
    pub fn domain(mut self, domain: Domain) -> Self {
        self.spec.domain = Some(domain);
        self
    }

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

    /// A repeating timer's first call after `delay` instead of one period.
    pub fn first_delay(mut self, delay: Span) -> Self {
        self.spec.first_delay = Some(delay);
        self
    }

    /// Makes the timer's entity a child of `entity` (`ChildOf`): despawning `entity` despawns
    /// the timer's entity, which cancels the timer.
    pub fn owner(mut self, entity: Entity) -> Self {
        self.owner = Some(entity);
        self
    }

    fn spawn(self, target: Option<Target>, fire: bool) -> EntityCommands<'a> {
        let timer = TickflowTimer {
            spec: self.spec,
            target: Mutex::new(target),
            fire,
        };
        match self.owner {
            Some(parent) => self.commands.spawn((timer, ChildOf(parent))),
            None => self.commands.spawn(timer),
        }
    }

    /// At each call, triggers `event` for its observers.
    pub fn trigger<E>(self, event: E) -> EntityCommands<'a>
    where
        E: Event + Clone,
        for<'e> E::Trigger<'e>: Default,
    {
        self.target(Target::trigger(event))
    }

    /// At each call, runs a registered one-shot system.
    pub fn run_system(self, id: SystemId) -> EntityCommands<'a> {
        self.target(Target::run_system(id))
    }

    /// At each call, applies a copy of `command`.
    pub fn queue<M: Command + Clone>(self, command: M) -> EntityCommands<'a> {
        self.target(Target::queue(command))
    }

    /// At each call, runs `f` with the world.
    pub fn call(self, f: impl FnMut(&mut World) + Send + 'static) -> EntityCommands<'a> {
        self.target(Target::call(f))
    }

    /// At each call, runs `target`.
    pub fn target(self, target: Target) -> EntityCommands<'a> {
        self.spawn(Some(target), false)
    }

    /// At each call, triggers [`TimerFired`] on the timer's entity: observe it there.
    pub fn fire(self) -> EntityCommands<'a> {
        self.spawn(None, true)
    }
}

/// Triggered on a timer's entity at each call of a timer set with
/// [`LaterTimer::fire`].
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerFired {
    /// The timer's entity.
    pub entity: Entity,
    /// The call's index, from 0.
    pub call: u64,
    /// `true` for the timer's last call (its entity despawns after it).
    pub last: bool,
}

/// A timer set with [`commands.tickflow()`](TickflowCommandsExt), on the entity that is its
/// handle. Adding it sets the timer in the scheduler; removing it (or despawning the entity)
/// cancels the timer.
#[derive(Component)]
#[component(on_add = schedule, on_remove = cancel)]
pub struct TickflowTimer {
    spec: Spec,
    /// Taken out while it runs (it gets the world, this component included).
    target: Mutex<Option<Target>>,
    fire: bool,
}

fn schedule(world: DeferredWorld, ctx: HookContext) {
    let entity = ctx.entity;
    let (Some(timer), Some(commands)) = (
        world.get::<TickflowTimer>(entity),
        world.get_resource::<TickflowCommands>(),
    ) else {
        return;
    };
    let spec = timer.spec;
    commands.timers(move |timers| {
        let builder = match spec.when {
            When::After(d) => timers.after(d),
            When::Every(p) => timers.every(p),
            When::AfterFrames(n) => timers.after_frames(n),
            When::EveryFrames(n) => timers.every_frames(n),
        };
        let mut builder = builder
            .owner(owner(entity))
            .name(LATER_TIMER_NAME)
            .tag(entity.to_bits());
        if let Some(d) = spec.domain {
            builder = builder.domain(d);
        }
        if let Some(c) = spec.catch_up {
            builder = builder.catch_up(c);
        }
        if let Some(n) = spec.times {
            builder = builder.times(n);
        }
        if let Some(d) = spec.first_delay {
            builder = builder.first_delay(d);
        }
        let looping = matches!(spec.when, When::Every(_) | When::EveryFrames(_));
        builder.call(fire(entity, looping, spec.times));
    });
}

fn cancel(world: DeferredWorld, ctx: HookContext) {
    if let Some(commands) = world.get_resource::<TickflowCommands>() {
        if commands.is_connected() {
            commands.remove_owner(owner(ctx.entity));
        }
    }
}

/// The callback of a timer set through `commands.tickflow()`: everything it needs is on its
/// entity, so a restored scheduler binds it again from the entity alone.
fn fire(
    entity: Entity,
    looping: bool,
    mut calls_left: Option<u64>,
) -> impl FnMut(&mut World, &mut TimerCx<'_, World>) + Send + 'static {
    move |world, cx| {
        let last = !looping || calls_left.is_some_and(|n| n <= 1);
        if let Some(n) = calls_left.as_mut() {
            *n = n.saturating_sub(1);
        }
        run_entity(world, entity, cx.call_index(), last);
    }
}

fn run_entity(world: &mut World, entity: Entity, call: u64, last: bool) {
    let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) else {
        return;
    };
    let fire = timer.fire;
    let slot = timer.target.get_mut().unwrap_or_else(|p| p.into_inner());
    if let Some(mut target) = slot.take() {
        target.run(world);
        if !last {
            if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
                *timer.target.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(target);
            }
        }
    }
    if fire {
        world.trigger(TimerFired { entity, call, last });
    }
    if last {
        if let Ok(e) = world.get_entity_mut(entity) {
            e.despawn();
        }
    }
}

/// Binds the timers of `commands.tickflow()` on restore, and asks the user's resolver for
/// everything else.
pub(crate) struct LaterResolver<'r>(pub(crate) &'r mut dyn Resolver<World>);

impl Resolver<World> for LaterResolver<'_> {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<World>> {
        if info.name.as_deref() == Some(LATER_TIMER_NAME) {
            let entity = Entity::try_from_bits(info.tag?)?;
            return Some(Box::new(fire(entity, info.looping, info.calls_left)));
        }
        self.0.timer(info)
    }

    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<World>> {
        self.0.timer_on_cancel(info)
    }

    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<World>> {
        self.0.tick(info)
    }

    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<World>>> {
        self.0.tickable(info)
    }

    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<World>> {
        self.0.latent(info)
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<World>>> {
        self.0.latent_action(kind, data)
    }
}
