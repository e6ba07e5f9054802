//! [`Rebind`]: the timers of `commands.tickflow()` back on new entities in a new run of the
//! app — durable ones resumed from a store, or any loaded from a save written by another run.
//!
//! A timer of `commands.tickflow()` finds its entity by its tag (the entity's bits), and its
//! target lives on that entity. Neither means anything in another run: entities are numbered
//! anew, and closures and observers are not data. So a resumed timer is bound by its name,
//! which the store keeps: the resolver hands every such timer the crate's one callback and
//! notes its handle, and [`Rebind::spawn`] then gives each an entity of this run, retags the
//! timer with it, and builds its target from its payload.

use std::collections::HashMap;
use std::fmt;

use bevy_ecs::prelude::*;
use tickflow::latent::{Completion, LatentAction, LatentInfo};
use tickflow::snapshot::{BindLatent, BindTickables, BindTicks, BindTimers, Resolver};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::{CancelHook, TimerCallback, TimerInfo};
use tickflow::{Domain, Scheduler, Tickable};

use crate::target::Target;
use crate::timer_entity::TickflowTimer;

/// Builds a resumed timer's target from its payload.
type MakeTarget = Box<dyn FnMut(&[u8]) -> Target + Send>;

/// What a timer of one name does in this run: its target, made from its payload, and
/// whether it fires [`TimerFired`](crate::TimerFired).
struct Bind {
    target: Option<MakeTarget>,
    fire: bool,
}

/// Binds timers of [`commands.tickflow()`](crate::TickflowCommandsExt) in a new run of the
/// app, by name: a [`Resolver`] for `tickflow_store::Durable::resume` (durable timers, see
/// [`LaterTimer::durable`](crate::LaterTimer::durable)) or for
/// [`restore`](crate::restore) (a save another run wrote). Each timer it binds comes back on
/// an entity of this run, with its countdown, calls and payload as they were, readable by
/// [`TickflowTimers`](crate::TickflowTimers) and controlled through the entity like any
/// other. What the first run attached to the old entity (its owner, observers, other
/// components) did not travel: [`target`](Self::target) and [`fire`](Self::fire) say what
/// the timer does now, and the entities [`install`](Self::install) returns are yours to
/// parent or decorate.
///
/// Everything else in the scheduler (its own timers, tick functions, latent actions) is
/// bound by the resolver given to [`others`](Self::others); a timer nobody binds makes the
/// resume fail, naming it, with nothing changed.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow::timer::Offline;
/// use tickflow_bevy::prelude::*;
/// use tickflow_bevy::Rebind;
///
/// #[derive(Resource, Default)]
/// struct Forged(Vec<u8>);
///
/// fn app() -> App {
///     let mut app = App::new();
///     app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///         .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
///         .init_resource::<Forged>();
///     app.update(); // starts Bevy's clocks
///     app
/// }
///
/// // The first run orders a sword (item 7) from the forge: 1 s, durable.
/// let mut first = app();
/// first.world_mut().run_system_once(|mut commands: Commands| {
///     commands.tickflow().after(secs(1.0)).name("forge").durable(Offline::Freeze).payload([7]).fire();
/// }).unwrap();
/// first.update();
/// first.update(); // 0.2 s in
/// // What a store would keep and give back (tickflow_store::Durable; a snapshot here).
/// let saved = tickflow_bevy::snapshot(first.world_mut());
/// drop(first);
///
/// // The next run binds "forge" to what it does now.
/// let mut second = app();
/// let mut rebind = Rebind::new().target("forge", |payload| {
///     let item = payload.to_vec();
///     Target::call(move |world| world.resource_mut::<Forged>().0.extend(&item))
/// });
/// let sched = Scheduler::restore(&saved, &mut rebind).unwrap().0;
/// let entities = rebind.install(second.world_mut(), sched);
/// let timers = second.world_mut().run_system_once(move |t: TickflowTimers| t.remaining(entities[0])).unwrap();
/// assert_eq!(timers.and_then(Amount::time), Some(secs(0.8)));
/// for _ in 0..8 {
///     second.update();
/// }
/// assert_eq!(second.world().resource::<Forged>().0, [7]);
/// # use bevy_ecs::system::RunSystemOnce;
/// ```
#[derive(Default)]
pub struct Rebind {
    names: HashMap<Box<str>, Bind>,
    others: Option<Box<dyn Resolver<World>>>,
    /// How many timers were bound here.
    found: usize,
}

impl fmt::Debug for Rebind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.names.keys().map(|n| &**n).collect();
        names.sort_unstable();
        f.debug_struct("Rebind")
            .field("names", &names)
            .field("found", &self.found)
            .finish_non_exhaustive()
    }
}

impl Rebind {
    /// Binds nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The name that binds a timer named `name`: its own, else the longest prefix of it that
    /// ends before a `/` (`"forge"` binds `"forge/17"`).
    fn key<'n>(&self, name: &'n str) -> Option<&'n str> {
        let mut key = name;
        while !self.names.contains_key(key) {
            key = &key[..key.rfind('/')?];
        }
        Some(key)
    }

    fn bind(&mut self, name: Box<str>) -> &mut Bind {
        self.names.entry(name).or_insert(Bind {
            target: None,
            fire: false,
        })
    }

    /// Timers named `name`, or `name/` and more (`"forge"` binds `"forge/17"`: durable
    /// timers are one per name), run the target `make` builds from each one's payload (the
    /// bytes of [`LaterTimer::payload`](crate::LaterTimer::payload); empty when none).
    pub fn target(
        mut self,
        name: impl Into<Box<str>>,
        make: impl FnMut(&[u8]) -> Target + Send + 'static,
    ) -> Self {
        self.bind(name.into()).target = Some(Box::new(make));
        self
    }

    /// Timers named `name` (or `name/` and more) trigger [`TimerFired`](crate::TimerFired) on
    /// their new entities, for global observers (an observer on the old entity did not
    /// travel).
    pub fn fire(mut self, name: impl Into<Box<str>>) -> Self {
        self.bind(name.into()).fire = true;
        self
    }

    /// Binds everything the names above do not: the scheduler's own timers, tick functions,
    /// tickables, latent actions (a [`Registry`](tickflow::snapshot::Registry), say).
    pub fn others(mut self, resolver: impl Resolver<World> + 'static) -> Self {
        self.others = Some(Box::new(resolver));
        self
    }

    /// Puts `sched` (resumed or restored through this resolver) in place of the app's
    /// ([`install`](crate::install)), then [`spawn`](Self::spawn)s the entities of the timers
    /// bound here, and returns them.
    ///
    /// # Panics
    ///
    /// From inside a tickflow frame, or when the app has no
    /// [`TickflowPlugin`](crate::TickflowPlugin).
    pub fn install(self, world: &mut World, sched: Scheduler<World>) -> Vec<Entity> {
        crate::install(world, sched);
        self.spawn(world)
    }

    /// Gives each timer bound here an entity in `world`, which is its handle from now on,
    /// with its target: after [`restore`](crate::restore) through this resolver, whose
    /// scheduler is already the app's. Returns the entities, in the order the timers were set.
    ///
    /// # Panics
    ///
    /// From inside a tickflow frame (the scheduler is busy), or when the app has no
    /// [`TickflowPlugin`](crate::TickflowPlugin).
    pub fn spawn(mut self, world: &mut World) -> Vec<Entity> {
        if self.found == 0 {
            return Vec::new();
        }
        crate::resource::with_idle(world, |world, sched| {
            let timers = sched.timers();
            let mut entities = Vec::with_capacity(self.found);
            // Those bound here are the ones whose names match and that no entity holds (a
            // restore binds a timer whose entity still holds it to that entity).
            for info in timers.list() {
                let key = info.name.as_deref().and_then(|n| self.key(n));
                let Some(bind) = key.and_then(|k| self.names.get_mut(k)) else {
                    continue;
                };
                let h = info.handle;
                let held = (info.tag.and_then(Entity::try_from_bits))
                    .and_then(|e| world.get::<TickflowTimer>(e))
                    .is_some_and(|t| t.handle() == Some(h));
                if held {
                    continue;
                }
                let payload = timers.payload(h).unwrap_or_default();
                let (target, fire) = (bind.target.as_mut().map(|make| make(payload)), bind.fire);
                let frames = info.domain == Domain::Frames;
                let entity = world.spawn(TickflowTimer::bound(h, frames, target, fire));
                timers.set_tag(h, entity.id().to_bits());
                entities.push(entity.id());
            }
            entities
        })
        .expect("Rebind::spawn: the scheduler is running a frame (call it between frames)")
    }
}

impl BindTimers<World> for Rebind {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<World>> {
        if info.name.as_deref().and_then(|n| self.key(n)).is_some() {
            // A durable load binds before it places the timer: no handle yet to note.
            self.found += 1;
            return Some(Box::new(crate::bind::fire));
        }
        self.others.as_mut()?.timer(info)
    }

    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<World>> {
        self.others.as_mut()?.timer_on_cancel(info)
    }
}

impl BindTicks<World> for Rebind {
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<World>> {
        self.others.as_mut()?.tick(info)
    }
}

impl BindTickables<World> for Rebind {
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<World>>> {
        self.others.as_mut()?.tickable(info)
    }
}

impl BindLatent<World> for Rebind {
    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<World>> {
        self.others.as_mut()?.latent(info)
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<World>>> {
        self.others.as_mut()?.latent_action(kind, data)
    }
}

impl Resolver<World> for Rebind {}
