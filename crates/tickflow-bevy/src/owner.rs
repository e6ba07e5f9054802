//! Entities as owners: despawning one removes everything it owned in the scheduler.

use bevy_ecs::lifecycle::HookContext;
use bevy_ecs::prelude::*;
use bevy_ecs::world::DeferredWorld;
use tickflow::prelude::OwnerId;

use crate::resource::TickflowCommands;

/// The tickflow owner id of an entity: give it to
/// [`TimerBuilder::owner`](tickflow::timer::TimerBuilder::owner),
/// [`TickSettings::owned_by`](tickflow::tick::TickSettings::owned_by), latent actions and
/// tasks, and put [`TickflowOwner`] on the entity. Different for every entity, including a
/// new entity that reuses a despawned one's index (the generation is part of it).
pub fn owner(entity: Entity) -> OwnerId {
    OwnerId::new(entity.to_bits())
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
