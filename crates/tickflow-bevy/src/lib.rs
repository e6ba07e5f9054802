//! tickflow in Bevy: [`TickflowPlugin`] runs a tickflow [`Scheduler`](tickflow::Scheduler)
//! whose callbacks get the Bevy [`World`](bevy_ecs::world::World), in Bevy's fixed step,
//! with Bevy's clocks.
//!
//! - **Frames**: by default one tickflow frame per `FixedUpdate` step, of exactly
//!   `Span::frames(1, hz)` (see [`TickflowPlugin`] for which frames count, and the
//!   variable-rate mode).
//! - **Clocks**: pausing `Time<Virtual>` pauses tickflow's game clock and its relative speed
//!   is the game clock's speed; `Domain::Real` follows `Time<Real>`; `TimeUpdateStrategy`
//!   makes frames exact in tests.
//! - **Set things** from systems: `ResMut<`[`Tickflow`]`>` gives the scheduler,
//!   `Res<`[`TickflowCommands`]`>` queues changes from anywhere, and
//!   [`commands.tickflow()`](TickflowCommandsExt) sets a timer with Bevy's `Commands`, like
//!   `commands.delayed()` but with a clock choice, repeats, catch-up, cancellation (the
//!   timer is an entity: despawn it) and rollback.
//! - **Bevy-native targets** ([`Target`]): a timer or latent action triggers an observer
//!   event, runs a one-shot system, applies a command; [`LaterTimer::fire`] triggers
//!   [`TimerFired`] on the timer's own entity.
//! - **Owners**: an entity with [`TickflowOwner`] takes everything set with
//!   [`owner(entity)`](owner) with it when it is despawned; no callback runs for it after.
//! - **Rollback and save games**: [`snapshot`], [`state_hash`] and [`restore`] (below).
//!
//! # Example
//!
//! A headless app (no window, no renderer): a wave timer whose calls trigger an observer, a
//! spawner that owns a repeating timer, and a pause.
//!
//! ```
//! use bevy_app::App;
//! use bevy_ecs::prelude::*;
//! use bevy_time::{Time, TimePlugin, TimeUpdateStrategy, Virtual};
//! use tickflow_bevy::prelude::*;
//!
//! #[derive(Event, Clone)]
//! struct Wave;
//!
//! #[derive(Resource, Default)]
//! struct Counts { waves: u32, spawned: u32 }
//!
//! fn setup(mut commands: Commands) {
//!     // Every 0.5 s of game time, trigger `Wave` (an observer counts them).
//!     commands.tickflow().every(secs(0.5)).trigger(Wave);
//!     // A spawner whose timer goes with it.
//!     let spawner = commands.spawn_empty().id();
//!     commands.tickflow().every_frames(10).owner(spawner).call(|world| {
//!         world.resource_mut::<Counts>().spawned += 1;
//!     });
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((TimePlugin, TickflowPlugin::fixed(20))) // 50 ms steps
//!     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
//!     .init_resource::<Counts>()
//!     .add_systems(bevy_app::Startup, setup)
//!     .add_observer(|_: On<Wave>, mut counts: ResMut<Counts>| counts.waves += 1);
//! app.update(); // Bevy's clocks start: no time passes in the first update
//! for _ in 0..20 {
//!     app.update(); // 20 steps: 1 s of game time
//! }
//! assert_eq!(app.world().resource::<Counts>().waves, 2);
//! assert_eq!(app.world().resource::<Counts>().spawned, 2);
//!
//! // Paused: the game clock stops, so does everything on it.
//! app.world_mut().resource_mut::<Time<Virtual>>().pause();
//! for _ in 0..20 {
//!     app.update();
//! }
//! assert_eq!(app.world().resource::<Counts>().waves, 2);
//! ```
//!
//! # Rollback (bevy_ggrs)
//!
//! The scheduler's state is plain data: [`snapshot`] saves it and [`restore`] puts
//! it back with the same handles, binding callbacks by name through a
//! [`Resolver`](tickflow::snapshot::Resolver) ([`tickflow::snapshot`] says how); timers set
//! with `commands.tickflow()` are bound by this crate, and run their entity's target if the
//! entity exists. With bevy_ggrs, run the plugin in the schedule where GGRS advances a frame
//! (`TickflowPlugin::fixed(hz).in_schedule(...)`, `frames_while_paused(false)`: GGRS decides
//! the frames), keep the last snapshots in a resource that GGRS rolls back by cloning
//! (its clone snapshot strategy), restore from it when GGRS loads a frame, and give GGRS
//! [`state_hash`] for its checksum, so a desync in timers shows up as one. State
//! that callbacks keep must live in the world (components and resources GGRS rolls back) or
//! follow from the callback's name, as for any tickflow rollback.
//!
//! # Examples
//!
//! `cargo run -p tickflow-bevy --example headless`: a headless app that prints what fires.

#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![doc(test(attr(deny(warnings))))]

mod clock;
mod later;
mod owner;
mod plugin;
mod resource;
mod target;
mod timer_entity;

pub use later::{Later, LaterTimer, TickflowCommandsExt};
pub use owner::{owner, TickflowOwner};
pub use plugin::{TickflowPlugin, TickflowSystems};
pub use resource::{flush, restore, snapshot, state_hash, Tickflow, TickflowCommands};
pub use target::Target;
pub use timer_entity::{TickflowTimer, TimerFired};

/// The names most apps use, for `use tickflow_bevy::prelude::*` beside Bevy's prelude:
/// this crate's, and tickflow's own except the two whose names Bevy's preludes use too
/// (tickflow's `Commands` is [`TickflowCommands`] here, and its `Time` is
/// `tickflow::Time`).
pub mod prelude {
    pub use crate::{
        owner, Target, Tickflow, TickflowCommands, TickflowCommandsExt, TickflowOwner,
        TickflowPlugin, TickflowSystems, TimerFired,
    };
    pub use tickflow::prelude::{
        millis, secs, CatchUp, Clocks, Deferred, Domain, FrameReport, LatentActions, OwnerId,
        Scheduler, Span, TaskCx, TaskHandle, TaskRef, TickCx, TickGroup, TickHandle, TickSettings,
        Tickable, TickableHandle, TimerCx, TimerHandle, TimerManager,
    };
}
