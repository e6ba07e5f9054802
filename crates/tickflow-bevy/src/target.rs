//! [`Target`]: what a timer or a latent action does in the Bevy world when it fires.

use std::fmt;

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemId;
use tickflow::prelude::{LatentCx, TimerCx};

/// A Bevy-native thing to do when a timer fires or a latent action completes: trigger an
/// observer event, run a registered one-shot system, apply a command, or any closure over the
/// world. Turn it into a timer callback with [`timer`](Self::timer) or a latent completion
/// with [`completion`](Self::completion); [`commands.tickflow()`](crate::TickflowCommandsExt)
/// takes targets too.
///
/// Targets run again for every call of a repeating timer, so events and commands are cloned
/// for each. They are `Send + Sync` (they live in components), so are their closures.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// #[derive(Event, Clone)]
/// struct WaveStarts(u32);
///
/// #[derive(Resource, Default)]
/// struct Waves(Vec<u32>);
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(60)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
///     .init_resource::<Waves>()
///     .add_observer(|wave: On<WaveStarts>, mut waves: ResMut<Waves>| waves.0.push(wave.0));
/// let mut tf = app.world_mut().resource_mut::<Tickflow>();
/// tf.scheduler()
///     .timers()
///     .after(Frames(2))
///     .call(Target::trigger(WaveStarts(1)).timer());
/// for _ in 0..3 {
///     app.update();
/// }
/// assert_eq!(app.world().resource::<Waves>().0, [1]);
/// ```
pub struct Target(Box<dyn FnMut(&mut World) + Send + Sync>);

impl Target {
    /// Triggers `event` for its observers (global observers for an [`Event`], the target
    /// entity's and global ones for an [`EntityEvent`]).
    pub fn trigger<E>(event: E) -> Target
    where
        E: Event + Clone,
        for<'a> E::Trigger<'a>: Default,
    {
        Target(Box::new(move |world| world.trigger(event.clone())))
    }

    /// Writes a copy of `message` (a Bevy [`Message`], registered with
    /// `App::add_message`), for systems that read it with a `MessageReader` in their own
    /// schedule rather than observe an event as it happens. A message of a type that was not
    /// registered is dropped with Bevy's error log.
    pub fn message<M: Message + Clone>(message: M) -> Target {
        Target(Box::new(move |world| {
            world.write_message(message.clone());
        }))
    }

    /// Runs a one-shot system registered with `World::register_system` or
    /// `Commands::register_system`. A system that was unregistered is skipped (its id is
    /// stale, as a stale tickflow handle answers nothing).
    pub fn run_system(id: SystemId) -> Target {
        Target(Box::new(move |world| {
            let _ = world.run_system(id);
        }))
    }

    /// Applies a copy of `command` (and any commands it queues) at once.
    pub fn queue<M: Command + Clone + Sync>(command: M) -> Target {
        Target(Box::new(move |world| {
            world.commands().queue(command.clone());
            world.flush();
        }))
    }

    /// Runs `f` with the world.
    pub fn call(f: impl FnMut(&mut World) + Send + Sync + 'static) -> Target {
        Target(Box::new(f))
    }

    /// Does it now.
    pub fn run(&mut self, world: &mut World) {
        (self.0)(world);
    }

    /// A timer callback that runs this target at every call, lending the timers to what it
    /// sets off ([`lend_timers`](crate::lend_timers)).
    pub fn timer(mut self) -> impl FnMut(&mut World, &mut TimerCx<'_, World>) + Send + 'static {
        move |world, cx| crate::lend_timers(cx.timers(), || self.run(world))
    }

    /// A latent action's completion that runs this target, lending the timers likewise.
    pub fn completion(
        mut self,
    ) -> impl FnMut(&mut World, &mut LatentCx<'_, World>) + Send + 'static {
        move |world, cx| crate::lend_timers(cx.timers(), || self.run(world))
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Target(..)")
    }
}
