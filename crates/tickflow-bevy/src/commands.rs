//! [`TickflowCommands`]: a handle that queues changes for the app's scheduler from anywhere,
//! even while it runs a frame.

use std::ops::Deref;

use bevy_ecs::prelude::*;
use tickflow::scheduler::Commands as SchedulerCommands;

/// A tickflow [`Commands`](tickflow::scheduler::Commands) handle of the app's scheduler, as a resource that stays in the
/// world while frames run: queue timers, tick functions, latent actions and tasks from any
/// system (`Res<TickflowCommands>`), hook or callback. Applied in order before the next
/// tickflow callback runs.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use tickflow_bevy::prelude::*;
///
/// fn arm_autosave(tf: Res<TickflowCommands>) {
///     tf.timers(|timers| {
///         timers.every(secs(60.0)).name("autosave").call(|_world, _| { /* save */ });
///     });
/// }
/// # bevy_ecs::system::assert_is_system(arm_autosave);
/// ```
#[derive(Resource, Clone, Debug)]
pub struct TickflowCommands(pub(crate) SchedulerCommands<World>);

impl Deref for TickflowCommands {
    type Target = SchedulerCommands<World>;

    fn deref(&self) -> &SchedulerCommands<World> {
        &self.0
    }
}
