//! Entities as owners: despawning one removes everything it owned in the scheduler.

use bevy_ecs::lifecycle::HookContext;
use bevy_ecs::prelude::*;
use bevy_ecs::world::DeferredWorld;
use tickflow::prelude::{OwnerId, Scheduler};
#[cfg(feature = "reflect")]
use {bevy_ecs::reflect::ReflectComponent, bevy_reflect::std_traits::ReflectDefault};

use crate::commands::TickflowCommands;

/// The tickflow owner id of an entity: give it to
/// [`TimerBuilder::owner`](tickflow::timer::TimerBuilder::owner),
/// [`TickSettings::owned_by`](tickflow::tick::TickSettings::owned_by), latent actions and
/// tasks, and put [`TickflowOwner`] on the entity. Different for every entity, including a
/// new entity that reuses a despawned one's index (the generation is part of it).
///
/// One rule for owners in a Bevy app: **an owner is an entity whose despawn removes what it
/// owns**. For scheduler items that takes [`TickflowOwner`] on the entity; the plugin checks,
/// as each new owner appears, that its entity has it ([`OwnerCheck`]: a warning by default,
/// or the component inserted for you). For a timer of
/// [`commands.tickflow()`](crate::TickflowCommandsExt), [`LaterTimer::owner`](crate::LaterTimer::owner)
/// makes the timer's entity a child of the owner, which Bevy despawns with it.
///
/// The id is the entity's bits with the top bit flipped, so that the small numbers other
/// owners are given (`OwnerId::new(1)` for a zone) never read as entities: an id with the top
/// bit clear is not checked. (An entity whose generation reached 2^31 gets an id with it clear:
/// still its own and removed with it, only not checked.)
///
/// ```
/// use bevy_ecs::prelude::*;
/// use tickflow_bevy::prelude::*;
///
/// let mut world = World::new();
/// let e = world.spawn_empty().id();
/// assert_ne!(owner(e), OwnerId::new(e.to_bits()));
/// assert_eq!(tickflow_bevy::owner_entity(owner(e)), Some(e));
/// assert_eq!(tickflow_bevy::owner_entity(OwnerId::new(1)), None);
/// ```
pub fn owner(entity: Entity) -> OwnerId {
    OwnerId::new(entity.to_bits() ^ ENTITY)
}

/// The top bit of [`owner`]'s ids.
const ENTITY: u64 = 1 << 63;

/// The entity an owner id stands for, when it is one [`owner`] made (`None` for other ids).
pub fn owner_entity(id: OwnerId) -> Option<Entity> {
    let bits = id.get();
    (bits & ENTITY != 0)
        .then(|| Entity::try_from_bits(bits ^ ENTITY))
        .flatten()
}

/// Marks an entity that owns tickflow timers, tick functions, tickables, latent actions or
/// tasks (set with [`owner(entity)`](owner)): when the entity is despawned, or this component
/// removed, all of them are removed (`Scheduler::remove_owner`) before any other tickflow
/// callback runs, so none of them ever runs for a despawned entity.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// #[derive(Resource, Default)]
/// struct Shots(u32);
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(60)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
///     .init_resource::<Shots>();
/// let turret = app.world_mut().spawn(TickflowOwner).id();
/// app.world_mut()
///     .resource_mut::<Tickflow>()
///     .scheduler()
///     .timers()
///     .every(Frames(1))
///     .owner(owner(turret))
///     .call(|world, _| world.resource_mut::<Shots>().0 += 1);
/// for _ in 0..3 {
///     app.update(); // the first update starts Bevy's clocks, two steps follow
/// }
/// app.world_mut().despawn(turret);
/// app.update();
/// assert_eq!(app.world().resource::<Shots>().0, 2);
/// ```
#[derive(Component, Clone, Copy, Debug, Default)]
#[component(on_remove = remove_owned)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Default, Debug)
)]
pub struct TickflowOwner;

fn remove_owned(world: DeferredWorld, ctx: HookContext) {
    // Queued, not done here: the scheduler may be running this very frame (a callback
    // despawned the entity); it applies the removal before its next callback.
    // (Not connected: the scheduler is gone with its app, and so is all it owned.)
    if let Some(commands) = world.get_resource::<TickflowCommands>() {
        if commands.is_connected() {
            commands.remove_owner(owner(ctx.entity));
        }
    }
}

/// What the plugin does when an owner id used in the scheduler names an entity without
/// [`TickflowOwner`], which would leave that entity's timers, tick functions and tasks
/// running after it is despawned. Checked for each new owner at the start of the next
/// tickflow frame (or [`flush`](crate::flush)); set with
/// [`TickflowPlugin::owner_check`](crate::TickflowPlugin::owner_check).
///
/// Only ids [`owner`] made are checked (their top bit is set): a plain number
/// (`OwnerId::new(7)` for a zone, say) is left alone. `Warn` (the default) never changes
/// anything; `Register` inserts what is missing; `Off` does no tracking at all. Owners a scheduler already had when [`install`](crate::install)ed or
/// [`restore`](crate::restore)d are not checked (their ids may be another run's entities).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Default, Debug, PartialEq)
)]
pub enum OwnerCheck {
    /// A warning through `tracing` (Bevy's `LogPlugin` shows it), once per new owner.
    #[default]
    Warn,
    /// Inserts [`TickflowOwner`] on the entity; an owner whose entity is already gone loses
    /// its items at once (with a warning), as if the component had been there.
    Register,
    /// No check, and no tracking of new owners.
    Off,
}

/// Checks the owners that appeared in `sched` since the last check (see [`OwnerCheck`]).
pub(crate) fn check_new_owners(world: &mut World, sched: &mut Scheduler<World>, check: OwnerCheck) {
    if check == OwnerCheck::Off {
        return;
    }
    let mut fresh = sched.take_new_owners();
    fresh.sort_unstable();
    fresh.dedup();
    for o in fresh {
        let Some(entity) = owner_entity(o) else {
            continue; // not an entity's id
        };
        match world.get_entity_mut(entity) {
            Ok(e) if e.contains::<TickflowOwner>() => {}
            Ok(mut e) if check == OwnerCheck::Register => {
                e.insert(TickflowOwner);
            }
            Ok(_) => tracing::warn!(
                "tickflow: {entity} owns scheduler items (owner({entity})) but has no \
                 TickflowOwner: despawning it will not remove them. Insert TickflowOwner, or \
                 let the plugin do it (TickflowPlugin::owner_check(OwnerCheck::Register)); for \
                 owner ids that are not entities, OwnerCheck::Off"
            ),
            Err(_) if check == OwnerCheck::Register => {
                tracing::warn!(
                    "tickflow: owner({entity}) was given to scheduler items after the entity \
                     was despawned: they are removed"
                );
                sched.remove_owner(o);
            }
            Err(_) => tracing::warn!(
                "tickflow: owner {o:?} names no live entity (despawned before its items were \
                 set?): they stay until removed (Scheduler::remove_owner)"
            ),
        }
    }
}
