//! A headless Bevy app (no window, no renderer) with the tickflow plugin, running in real
//! time for about three seconds and printing what fires:
//!
//! - waves every 0.5 s of game time, as an observer event set with `commands.tickflow()`;
//! - a turret that fires every 10 fixed steps on a timer it owns, until it is despawned;
//! - a pause of the game clock (`Time<Virtual>`) from 1.5 s to 2 s of real time, during which
//!   the waves stop and a real-time heartbeat goes on;
//! - a timer whose `TimerFired` event is observed on its own entity;
//! - the exit, from a real-time timer.
//!
//! ```sh
//! cargo run -p tickflow-bevy --example headless
//! ```

use std::time::Duration;

use bevy_app::{App, AppExit, ScheduleRunnerPlugin, Startup};
use bevy_ecs::prelude::*;
use bevy_time::{Real, Time, TimePlugin, Virtual};
use tickflow_bevy::prelude::*;

#[derive(Event, Clone)]
struct Wave;

#[derive(Component)]
struct Turret;

#[derive(Resource, Default)]
struct Stats {
    waves: u32,
    shots: u32,
    beats: u32,
}

/// Seconds of real time, for the printout.
fn real(world: &World) -> f64 {
    world.resource::<Time<Real>>().elapsed_secs_f64()
}

fn setup(mut commands: Commands) {
    commands.tickflow().every(secs(0.5)).trigger(Wave);

    let turret = commands.spawn(Turret).id();
    commands
        .tickflow()
        .every(Frames(10))
        .owner(turret)
        .call(|world: &mut World| {
            world.resource_mut::<Stats>().shots += 1;
            println!("{:5.2} s  turret fires", real(world));
        });

    // Real-time timers go on while the game is paused.
    let real_clock = |commands: &mut Commands, at: f64, f: fn(&mut World)| {
        commands.tickflow().after(secs(at)).real().call(f);
    };
    real_clock(&mut commands, 1.2, |world| {
        let turret = world
            .query_filtered::<Entity, With<Turret>>()
            .single(world)
            .expect("one turret");
        world.despawn(turret);
        println!(
            "{:5.2} s  turret despawned: its timer goes with it",
            real(world)
        );
    });
    real_clock(&mut commands, 1.5, |world| {
        world.resource_mut::<Time<Virtual>>().pause();
        println!("{:5.2} s  game paused", real(world));
    });
    real_clock(&mut commands, 2.0, |world| {
        world.resource_mut::<Time<Virtual>>().unpause();
        println!("{:5.2} s  game resumed", real(world));
    });
    real_clock(&mut commands, 2.9, |world| {
        let stats = world.resource::<Stats>();
        println!(
            "{:5.2} s  done: {} waves, {} shots, {} heartbeats",
            real(world),
            stats.waves,
            stats.shots,
            stats.beats
        );
        world.write_message(AppExit::Success);
    });
    commands
        .tickflow()
        .every(secs(0.25))
        .real()
        .call(|world: &mut World| world.resource_mut::<Stats>().beats += 1);

    // A countdown whose calls are observed on its own entity.
    commands
        .tickflow()
        .every(secs(0.4))
        .times(3)
        .fire()
        .observe(|fired: On<TimerFired>, time: Res<Time<Real>>| {
            let what = if fired.last { "liftoff" } else { "countdown" };
            let at = time.elapsed_secs_f64();
            println!(
                "{at:5.2} s  {what} (call {} of its entity's timer)",
                fired.call
            );
        });
}

fn main() {
    let mut app = App::new();
    app.add_plugins((
        ScheduleRunnerPlugin::run_loop(Duration::from_secs_f64(1.0 / 60.0)),
        TimePlugin,
        TickflowPlugin::fixed(30),
    ))
    .init_resource::<Stats>()
    .add_systems(Startup, setup)
    .add_observer(
        |_: On<Wave>, mut stats: ResMut<Stats>, time: Res<Time<Real>>| {
            stats.waves += 1;
            println!("{:5.2} s  wave {}", time.elapsed_secs_f64(), stats.waves);
        },
    );
    app.run();
}
