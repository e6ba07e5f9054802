//! The timers of `commands.tickflow()` as entities: the component that holds a timer's
//! settings and target, how it gets into the scheduler (queued by a hook, set in a batch at
//! the next frame), how it runs and ends, and how a restored scheduler finds it again.

use std::fmt;

use bevy_ecs::entity::EntityHashSet;
use bevy_ecs::lifecycle::HookContext;
use bevy_ecs::prelude::*;
use bevy_ecs::world::DeferredWorld;
use tickflow::latent::{Completion, LatentAction, LatentInfo};
use tickflow::prelude::{Frames, Scheduler, Span, Tickable, TimerCx, TimerHandle};
use tickflow::snapshot::Resolver;
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::TimerBuilder;
use tickflow::timer::{CancelHook, TimerCallback, TimerInfo};

use crate::later::{Spec, When};
use crate::resource::TickflowCommands;
use crate::target::Target;

/// Triggered on a timer's entity at each call of a timer set with
/// [`LaterTimer::fire`](crate::LaterTimer::fire).
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerFired {
    /// The timer's entity.
    pub entity: Entity,
    /// The call's index, from 0.
    pub call: u64,
    /// `true` for the timer's last call (its entity despawns after it).
    pub last: bool,
}

/// A timer set with [`commands.tickflow()`](crate::TickflowCommandsExt), on the entity that is
/// its handle. The timer is set in the scheduler at the start of the next tickflow frame
/// (counting from there, as every change queued between frames), or by [`flush`](crate::flush);
/// removing the component or despawning the entity cancels it.
#[derive(Component)]
#[component(on_add = queue, on_remove = cancel)]
pub struct TickflowTimer {
    spec: Spec,
    /// Taken out while it runs (it gets the world, this component included).
    target: Option<Target>,
    fire: bool,
    /// Its timer, once set.
    handle: Option<TimerHandle>,
}

impl fmt::Debug for TickflowTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickflowTimer")
            .field("spec", &self.spec)
            .field("fire", &self.fire)
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

impl TickflowTimer {
    pub(crate) fn new(spec: Spec, target: Option<Target>, fire: bool) -> Self {
        TickflowTimer {
            spec,
            target,
            fire,
            handle: None,
        }
    }

    /// The timer in the scheduler (`None` until the next frame sets it).
    pub fn handle(&self) -> Option<TimerHandle> {
        self.handle
    }
}

/// Timer entities added since the last frame, to set in one batch: cheaper than a
/// tickflow command each (measured: the commands, with their boxed closures, were most of
/// the cost of scheduling one).
#[derive(Resource, Default, Debug)]
pub(crate) struct LaterQueue(Vec<Entity>);

fn queue(mut world: DeferredWorld, ctx: HookContext) {
    if let Some(mut q) = world.get_resource_mut::<LaterQueue>() {
        q.0.push(ctx.entity);
    }
}

fn cancel(world: DeferredWorld, ctx: HookContext) {
    let handle = world
        .get::<TickflowTimer>(ctx.entity)
        .and_then(|t| t.handle);
    // Not set yet: the batch skips an entity that lost its component.
    if let (Some(h), Some(commands)) = (handle, world.get_resource::<TickflowCommands>()) {
        commands.timers(move |t| {
            t.clear(h);
        });
    }
}

/// Sets the timers of the entities queued since the last call.
pub(crate) fn set_queued(world: &mut World, sched: &mut Scheduler<World>) {
    let Some(mut q) = world.get_resource_mut::<LaterQueue>() else {
        return;
    };
    if q.0.is_empty() {
        return;
    }
    let mut queued = std::mem::take(&mut q.0);
    for &entity in &queued {
        let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) else {
            continue; // despawned before its frame
        };
        if timer.spec.times == Some(0) {
            // No call will ever come, so no last call would despawn it.
            world.despawn(entity);
        } else if timer.handle.is_none() {
            timer.handle = Some(set(sched, timer.spec, entity));
        }
    }
    queued.clear();
    // Keep the buffer (hooks may have queued more meanwhile: none run here, but be exact).
    let mut q = world.resource_mut::<LaterQueue>();
    if q.0.is_empty() {
        q.0 = queued;
    }
}

fn set(sched: &mut Scheduler<World>, spec: Spec, entity: Entity) -> TimerHandle {
    let timers = sched.timers();
    match spec.when {
        When::After(d) => time(timers.after(d), spec, entity),
        When::Every(p) => time(timers.every(p), spec, entity),
        When::AfterFrames(n) => frames(timers.after(Frames(n)), spec, entity),
        When::EveryFrames(n) => frames(timers.every(Frames(n)), spec, entity),
    }
}

/// The options of a timer that counts time.
fn time(mut b: TimerBuilder<'_, World>, spec: Spec, entity: Entity) -> TimerHandle {
    if spec.real {
        b = b.real();
    }
    if let Some(f) = spec.first_delay {
        b = b.first_delay(Span::from_flicks(f));
    }
    finish(b, spec, entity)
}

/// The options of a timer that counts frames.
fn frames(mut b: TimerBuilder<'_, World, Frames>, spec: Spec, entity: Entity) -> TimerHandle {
    if let Some(f) = spec.first_delay {
        b = b.first_delay(Frames(f));
    }
    finish(b, spec, entity)
}

/// The options every timer has, and its callback.
fn finish<U>(builder: TimerBuilder<'_, World, U>, spec: Spec, entity: Entity) -> TimerHandle {
    // The tag finds the entity again after a restore; no owner or name, which would cost a
    // side-table entry or an allocation per timer.
    let mut builder = builder.tag(entity.to_bits());
    if let Some(c) = spec.catch_up {
        builder = builder.catch_up(c);
    }
    if let Some(n) = spec.times {
        builder = builder.times(n);
    }
    builder.call(fire)
}

/// The callback of every timer set through `commands.tickflow()`: everything it needs is on
/// its entity, named by its tag, so it captures nothing (boxing it allocates nothing) and a
/// restored scheduler binds it again as it is.
fn fire(world: &mut World, cx: &mut TimerCx<'_, World>) {
    let Some(entity) = cx.tag().and_then(Entity::try_from_bits) else {
        return;
    };
    if !run_entity(
        world,
        entity,
        cx.handle(),
        cx.call_index(),
        cx.is_last_call(),
    ) {
        // Its entity is gone, or holds another timer: nothing to run, now or later.
        cx.clear_self();
    }
}

/// After a restore: an entity holding a timer the restore did not bind to it (its timer is
/// not in the save) loses its handle, which may name another timer now, and is despawned.
/// Entities not set yet (no handle) stay queued.
pub(crate) fn detach_stale(world: &mut World, bound: &EntityHashSet) {
    let mut q = world.query::<(Entity, &TickflowTimer)>();
    let stale: Vec<Entity> = (q.iter(world))
        .filter(|(e, t)| t.handle.is_some() && !bound.contains(e))
        .map(|(e, _)| e)
        .collect();
    for entity in stale {
        if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
            timer.handle = None;
        }
        world.despawn(entity);
    }
}

/// Runs what `entity` holds for its timer `handle`; `false` when it does not hold that timer.
fn run_entity(
    world: &mut World,
    entity: Entity,
    handle: TimerHandle,
    call: u64,
    last: bool,
) -> bool {
    let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) else {
        return false;
    };
    if timer.handle != Some(handle) {
        return false;
    }
    let fire = timer.fire;
    if let Some(mut target) = timer.target.take() {
        target.run(world);
        if !last {
            if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
                timer.target = Some(target);
            }
        }
    }
    if fire {
        world.trigger(TimerFired { entity, call, last });
    }
    if last {
        // Its timer is making its last call: nothing to cancel.
        if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
            timer.handle = None;
        }
        if let Ok(e) = world.get_entity_mut(entity) {
            e.despawn();
        }
    }
    true
}

/// Binds the timers of `commands.tickflow()` on restore (a timer whose tag names an entity
/// whose component holds that very handle), and asks the user's resolver for the rest. A
/// tagged timer the user's resolver does not know and whose tag names no entity holding it
/// is one of ours whose entity is gone: bound, and listed to be cleared after the restore.
pub(crate) struct LaterResolver<'r> {
    world: &'r World,
    user: &'r mut dyn Resolver<World>,
    bound: EntityHashSet,
    gone: Vec<TimerHandle>,
}

impl<'r> LaterResolver<'r> {
    pub(crate) fn new(world: &'r World, user: &'r mut dyn Resolver<World>) -> Self {
        LaterResolver {
            world,
            user,
            bound: EntityHashSet::default(),
            gone: Vec::new(),
        }
    }

    /// The entities whose timers it bound, and the timers whose entities are gone.
    pub(crate) fn finish(self) -> (EntityHashSet, Vec<TimerHandle>) {
        (self.bound, self.gone)
    }
}

impl Resolver<World> for LaterResolver<'_> {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<World>> {
        let Some(entity) = info.tag.and_then(Entity::try_from_bits) else {
            return self.user.timer(info);
        };
        let timer = self.world.get::<TickflowTimer>(entity);
        if timer.is_some_and(|t| t.handle == Some(info.handle)) {
            self.bound.insert(entity);
            return Some(Box::new(fire));
        }
        if let Some(cb) = self.user.timer(info) {
            return Some(cb);
        }
        self.gone.push(info.handle);
        Some(Box::new(fire))
    }

    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<World>> {
        self.user.timer_on_cancel(info)
    }

    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<World>> {
        self.user.tick(info)
    }

    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<World>>> {
        self.user.tickable(info)
    }

    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<World>> {
        self.user.latent(info)
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<World>>> {
        self.user.latent_action(kind, data)
    }
}
