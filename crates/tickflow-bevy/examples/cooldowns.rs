//! Cooldowns in a headless Bevy app, step by step (10 fixed steps per second, one per update,
//! so every line is the same on every run), and checked at the end:
//!
//! - a cooldown bar drawn by a system that only reads (`TickflowTimers`, no `ResMut`);
//! - the cooldown frozen by a spell (`pause_timer`), cut by a pickup (`shorten_timer`), both
//!   through the timer's entity;
//! - a save taken while mana regenerates, then the fireball's cooldown ends and two more points
//!   of mana come, then the save is loaded: the regeneration timer and the mana are back where
//!   they were (the next point comes when it came the first time), and the cooldown, which
//!   ended after the save, stays ended: its entity went with its last call;
//! - a boss due at 1.5 s of game time (`at`), whose arrival is observed and reads the
//!   fireball's cooldown from inside the frame (`TickflowTimers` through the lent timers);
//! - a sword ordered from the forge, durable (a SQLite store in a temporary directory): the
//!   app stops 0.4 s into the order, the next run resumes it on a new entity (`Rebind`), draws
//!   its bar with the same `TickflowTimers`, and the sword is ready at 1.0 s of game time.
//!
//! One kind of timer for all of it: `commands.tickflow()`.
//!
//! ```sh
//! cargo run -p tickflow-bevy --example cooldowns
//! ```

use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bevy_ecs::system::RunSystemOnce;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use std::sync::Mutex;

use bevy_app::FixedUpdate;
use tickflow::snapshot::{Registry, SchedulerSnapshot};
use tickflow::timer::Offline;
use tickflow_bevy::prelude::*;
use tickflow_bevy::{Rebind, TickflowSystems};
use tickflow_store::{Durable, Sqlite};

#[derive(Resource, Default)]
struct Lines(Vec<String>);

#[derive(Resource, Default, Clone, Copy)]
struct Mana(u32);

/// The fireball's cooldown: the entity of its timer.
#[derive(Resource)]
struct Fireball(Entity);

fn say(world: &mut World, line: String) {
    println!("{line}");
    world.resource_mut::<Lines>().0.push(line);
}

/// Ten cells of a progress bar, `fraction` of them filled.
fn cells(fraction: f64) -> String {
    let filled = (fraction * 10.0).round() as usize;
    format!("[{}{}]", "#".repeat(filled), ".".repeat(10 - filled))
}

/// The cooldown bar: reads the timer through its entity (all of it in one read), from a
/// system that writes nothing tickflow owns (it runs in parallel with other readers).
fn draw_bar(fireball: Option<Res<Fireball>>, timers: TickflowTimers, mut lines: ResMut<Lines>) {
    let Some(fireball) = fireball else {
        return; // not cast yet
    };
    let Some(read) = timers.get(fireball.0) else {
        return; // fired: its entity is gone
    };
    let left = read.remaining.time().unwrap_or_default().as_secs_f64();
    let frozen = if read.paused { " (frozen)" } else { "" };
    let bar = format!("{} {left:.1} s left{frozen}", cells(read.fraction));
    println!("{bar}");
    lines.0.push(bar);
}

fn main() {
    let mut app = App::new();
    app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .init_resource::<Lines>()
        .init_resource::<Mana>()
        .add_systems(Update, draw_bar);
    app.update(); // starts Bevy's clocks: no step yet

    // Cast: a 2 s cooldown whose end is observed on its own entity.
    let fireball = app
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            commands
                .tickflow()
                .after(secs(2.0))
                .fire()
                .observe(|_: On<TimerFired>, mut commands: Commands| {
                    commands.queue(|world: &mut World| say(world, "fireball ready".into()));
                })
                .id()
        })
        .unwrap();
    app.insert_resource(Fireball(fireball));
    // The boss, at 1.5 s of game time whatever happens to the cooldown; its observer reads the
    // cooldown while the frame runs.
    app.world_mut()
        .run_system_once(|mut commands: Commands| {
            let arrives = |_: On<TimerFired>, timers: TickflowTimers, fb: Res<Fireball>| {
                let left = timers.remaining(fb.0).map(|a| a.to_string());
                let line = format!("the boss arrives; fireball in {}", left.unwrap_or_default());
                println!("{line}");
                line
            };
            commands
                .tickflow()
                .at(tickflow::Time::from_secs(1.5))
                .fire()
                .observe(arrives.pipe(|line: In<String>, mut lines: ResMut<Lines>| {
                    lines.0.push(line.0);
                }));
        })
        .unwrap();
    // Mana: one point every 0.5 s.
    app.world_mut()
        .run_system_once(|mut commands: Commands| {
            commands
                .tickflow()
                .every(secs(0.5))
                .call(|world: &mut World| {
                    world.resource_mut::<Mana>().0 += 1;
                    let mana = world.resource::<Mana>().0;
                    say(world, format!("mana {mana}"));
                });
        })
        .unwrap();

    let step = |app: &mut App, n: usize| (0..n).for_each(|_| app.update());
    let command = |app: &mut App, line: &str, f: fn(&mut EntityCommands)| {
        say(app.world_mut(), line.into());
        let world = app.world_mut();
        let fireball = world.resource::<Fireball>().0;
        f(&mut world.commands().entity(fireball));
        world.flush();
    };

    step(&mut app, 4);
    command(&mut app, "frost nova: the cooldown freezes", |e| {
        e.pause_timer();
    });
    step(&mut app, 3);
    command(&mut app, "thaw, and a haste pickup: 0.5 s off", |e| {
        e.unpause_timer().shorten_timer(secs(0.5));
    });

    // A save (the scheduler and the game's own state), two more points of mana, the load.
    let snap: SchedulerSnapshot = tickflow_bevy::snapshot(app.world_mut());
    let mana = *app.world().resource::<Mana>();
    say(app.world_mut(), format!("saved at mana {}", mana.0));
    step(&mut app, 12);
    tickflow_bevy::restore(app.world_mut(), &snap, &mut Registry::new()).expect("the save loads");
    app.insert_resource(mana);
    let cooldown = app
        .world_mut()
        .run_system_once(move |t: TickflowTimers| t.remaining(fireball).and_then(Amount::time))
        .unwrap();
    say(
        app.world_mut(),
        format!("loaded: mana {}, fireball cooldown {cooldown:?}", mana.0),
    );
    step(&mut app, 3);

    let lines = &app.world().resource::<Lines>().0;
    let expected = [
        "[#.........] 1.9 s left",
        "[#.........] 1.8 s left",
        "[##........] 1.7 s left",
        "[##........] 1.6 s left",
        "frost nova: the cooldown freezes",
        "mana 1",
        "[##........] 1.6 s left (frozen)",
        "[##........] 1.6 s left (frozen)",
        "[##........] 1.6 s left (frozen)",
        "thaw, and a haste pickup: 0.5 s off",
        "saved at mana 1",
        "[#####.....] 1.0 s left",
        "[######....] 0.9 s left",
        "mana 2",
        "[######....] 0.8 s left",
        "[#######...] 0.7 s left",
        "[#######...] 0.6 s left",
        "[########..] 0.5 s left",
        "[########..] 0.4 s left",
        "the boss arrives; fireball in 0.3s",
        "mana 3",
        "[#########.] 0.3 s left",
        "[#########.] 0.2 s left",
        "[##########] 0.1 s left",
        "fireball ready",
        "loaded: mana 1, fireball cooldown None",
        "mana 2",
    ];
    assert_eq!(lines, &expected, "what the example printed");

    let dir = std::env::temp_dir().join(format!("tickflow-cooldowns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let forged = forge(&dir.join("forge.db"));
    std::fs::remove_dir_all(&dir).expect("removed");
    let expected = [
        "order: sword, 1.0 s",
        "[#.........] sword 0.9 s left",
        "[##........] sword 0.8 s left",
        "[###.......] sword 0.7 s left",
        "[####......] sword 0.6 s left",
        "the app stops",
        "resumed at 0.4 s: 1 order",
        "[####......] sword 0.6 s left", // the first update: Bevy's clocks start, no step
        "[#####.....] sword 0.5 s left",
        "[######....] sword 0.4 s left",
        "[#######...] sword 0.3 s left",
        "[########..] sword 0.2 s left",
        "[#########.] sword 0.1 s left",
        "the sword is ready at 1.0 s",
    ];
    assert_eq!(forged, expected, "what the forge printed");
}

/// The store of durable timers, as a resource (`Durable<Sqlite>` is `Send`, not `Sync`).
#[derive(Resource)]
struct Store(Mutex<Durable<Sqlite>>);

/// The forge's orders: the entities of their timers.
#[derive(Resource, Default)]
struct Orders(Vec<Entity>);

/// What an order does when it is done, in this run: the item is its payload.
fn ready(item: &[u8]) -> Target {
    let item = String::from_utf8_lossy(item).into_owned();
    Target::call(move |world| {
        let now = world
            .resource::<TickflowCommands>()
            .clocks()
            .now(Domain::Game);
        say(
            world,
            format!("the {item} is ready at {:.1} s", now.as_secs_f64()),
        );
    })
}

/// The forge's bars: the same reads as the fireball's.
fn draw_orders(orders: Res<Orders>, timers: TickflowTimers, mut lines: ResMut<Lines>) {
    for &order in &orders.0 {
        let (Some(read), Some(item)) = (timers.get(order), timers.payload(order)) else {
            continue; // done
        };
        let left = read.remaining.time().unwrap_or_default().as_secs_f64();
        let item = String::from_utf8_lossy(&item);
        let bar = format!("{} {item} {left:.1} s left", cells(read.fraction));
        println!("{bar}");
        lines.0.push(bar);
    }
}

/// One run of the forge's app on the store at `path`: resumed from it, a commit after each
/// tickflow frame.
fn forge_app(path: &std::path::Path) -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .init_resource::<Lines>()
        .add_systems(Update, draw_orders)
        .add_systems(FixedUpdate, commit.after(TickflowSystems::Frame));
    let mut durable = Durable::new(Sqlite::create(path).expect("the store"), "forge");
    // The first run stops by dropping, and the next starts at once in this same process: a
    // short lease keeps the wait for the first's short.
    durable.set_lease(std::time::Duration::from_millis(30));
    let mut rebind = Rebind::new().target("forge", ready);
    let (sched, resumed) = durable.resume(&mut rebind).expect("resumed");
    let orders = rebind.install(app.world_mut(), sched);
    if resumed.frame > 0 {
        let mut tf = app.world_mut().resource_mut::<Tickflow>();
        let at = tf.scheduler().clocks().now(Domain::Game).as_secs_f64();
        say(
            app.world_mut(),
            format!("resumed at {at:.1} s: {} order", orders.len()),
        );
    }
    app.insert_resource(Orders(orders))
        .insert_resource(Store(Mutex::new(durable)));
    app.update(); // starts Bevy's clocks: no step yet
    app
}

/// After each tickflow frame: its durable changes, in one transaction.
fn commit(mut tf: ResMut<Tickflow>, store: Res<Store>) {
    let mut durable = store.0.lock().expect("the store's lock");
    durable
        .end_frame(tf.scheduler(), |_, _| Ok(()))
        .expect("committed");
}

/// Orders a sword, runs 0.4 s, stops; the next run finishes it. Returns what both printed.
fn forge(path: &std::path::Path) -> Vec<String> {
    let mut first = forge_app(path);
    say(first.world_mut(), "order: sword, 1.0 s".into());
    let order = first
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            (commands.tickflow().after(secs(1.0)))
                .name("forge/sword")
                .durable(Offline::Freeze)
                .payload("sword")
                .target(ready(b"sword"))
                .id()
        })
        .expect("ordered");
    first.world_mut().resource_mut::<Orders>().0.push(order);
    (0..4).for_each(|_| first.update());
    say(first.world_mut(), "the app stops".into());
    let mut lines = std::mem::take(&mut first.world_mut().resource_mut::<Lines>().0);
    drop(first);

    let mut second = forge_app(path);
    (0..6).for_each(|_| second.update());
    lines.append(&mut second.world_mut().resource_mut::<Lines>().0);
    lines
}
