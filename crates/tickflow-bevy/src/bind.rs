//! What a timer of `commands.tickflow()` runs at each call ([`fire`], the one callback they all
//! share, and the entity it finds by the timer's tag), and how a restored scheduler binds its
//! timers to their entities again.

use bevy_ecs::entity::EntityHashSet;
use bevy_ecs::prelude::*;
use tickflow::latent::{Completion, LatentAction, LatentInfo};
use tickflow::snapshot::{BindLatent, BindTickables, BindTicks, BindTimers, Resolver};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::{CancelHook, TimerCallback, TimerInfo};
use tickflow::{Tickable, TimerCx, TimerHandle};

use crate::timer_entity::{TickflowTimer, TimerFired};

/// The callback of every timer set through `commands.tickflow()`: everything it needs is on
/// its entity, named by its tag, so it captures nothing (boxing it allocates nothing) and a
/// restored scheduler binds it again as it is.
pub(crate) fn fire(world: &mut World, cx: &mut TimerCx<'_, World>) {
    let Some(entity) = cx.tag().and_then(Entity::try_from_bits) else {
        return;
    };
    let (handle, call, last) = (cx.handle(), cx.call_index(), cx.is_last_call());
    // What the target and `TimerFired` set off reads timers through the ones lent here.
    let ran = crate::lend::lend_timers(cx.timers(), || {
        run_entity(world, entity, handle, call, last)
    });
    if !ran {
        // Its entity is gone, or holds another timer: nothing to run, now or later.
        cx.clear_self();
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
    if timer.handle() != Some(handle) {
        return false;
    }
    let fire = timer.fires_event();
    if let Some(mut target) = timer.take_target() {
        target.run(world);
        if !last {
            if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
                timer.put_target(target);
            }
        }
    }
    if fire {
        world.trigger(TimerFired { entity, call, last });
    }
    if last {
        // Its timer is making its last call: nothing to cancel.
        if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
            timer.detach();
        }
        if let Ok(e) = world.get_entity_mut(entity) {
            e.despawn();
        }
    }
    true
}

/// After a restore (or an install): an entity holding a timer the new scheduler did not bind
/// to it (its timer is not in the save) loses its handle, which may name another timer now,
/// and is despawned. Entities not set yet (no handle) stay queued. Returns how many went.
pub(crate) fn detach_stale(world: &mut World, bound: &EntityHashSet) -> usize {
    let mut q = world.query::<(Entity, &TickflowTimer)>();
    let stale: Vec<Entity> = (q.iter(world))
        .filter(|(e, t)| t.handle().is_some() && !bound.contains(e))
        .map(|(e, _)| e)
        .collect();
    let gone = stale.len();
    for entity in stale {
        if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
            timer.detach();
        }
        world.despawn(entity);
    }
    gone
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

impl BindTimers<World> for LaterResolver<'_> {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<World>> {
        let Some(entity) = info.tag.and_then(Entity::try_from_bits) else {
            return self.user.timer(info);
        };
        let timer = self.world.get::<TickflowTimer>(entity);
        if timer.is_some_and(|t| t.handle() == Some(info.handle)) {
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
}

impl BindTicks<World> for LaterResolver<'_> {
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<World>> {
        self.user.tick(info)
    }
}

impl BindTickables<World> for LaterResolver<'_> {
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<World>>> {
        self.user.tickable(info)
    }
}

impl BindLatent<World> for LaterResolver<'_> {
    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<World>> {
        self.user.latent(info)
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<World>>> {
        self.user.latent_action(kind, data)
    }
}

impl Resolver<World> for LaterResolver<'_> {}
