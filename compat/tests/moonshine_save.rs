//! A save written with moonshine-save in one app and loaded in another: the game's state (a
//! forge and its orders) and tickflow's (the scheduler's snapshot, as bytes in a saved
//! component) go through the same file, and the order that was running when the game was
//! saved is done on the step it would have been, on a new entity (`Rebind`).

use std::path::Path;

use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::AssetPlugin;
use bevy_ecs::prelude::*;
use bevy_ecs::system::RunSystemOnce;
use bevy_reflect::Reflect;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use moonshine_save::prelude::*;
use tickflow::snapshot::SchedulerSnapshot;
use tickflow_bevy::prelude::*;
use tickflow_bevy::{read_timer, Rebind};

/// The game's own saved state.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
#[require(Save)]
struct Forge {
    done: Vec<String>,
}

/// tickflow's state in the save: the scheduler's snapshot, written just before a save.
#[derive(Component, Reflect, Default)]
#[reflect(Component)]
#[require(Save)]
struct TickflowSave {
    snapshot: Vec<u8>,
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin::default(),
        TimePlugin,
        TickflowPlugin::fixed(10),
    ))
    .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
    .register_type::<Forge>()
    .register_type::<TickflowSave>()
    .add_observer(save_on_default_event)
    .add_observer(load_on_default_event);
    app.update(); // starts Bevy's clocks: no step yet
    app
}

/// What an order does when it is done, in this run: the item (its payload) goes to the forge's
/// list, with the game time.
fn ready(item: &[u8]) -> Target {
    let item = String::from_utf8_lossy(item).into_owned();
    Target::call(move |world| {
        let now = world
            .resource::<TickflowCommands>()
            .clocks()
            .now(Domain::Game);
        let line = format!("{item} at {:.1} s", now.as_secs_f64());
        let mut forges = world.query::<&mut Forge>();
        forges.single_mut(world).expect("one forge").done.push(line);
    })
}

fn order(app: &mut App, item: &'static str, secs_: f64) {
    app.world_mut()
        .run_system_once(move |mut commands: Commands| {
            (commands.tickflow().after(secs(secs_)))
                .name(format!("forge/{item}"))
                .payload(item)
                .target(ready(item.as_bytes()));
        })
        .unwrap();
}

fn steps(app: &mut App, n: usize) {
    (0..n).for_each(|_| app.update());
}

fn done(app: &mut App) -> Vec<String> {
    let mut forges = app.world_mut().query::<&Forge>();
    forges.single(app.world()).unwrap().done.clone()
}

/// Saves the world to `path`: the scheduler's snapshot into its component, then moonshine-save.
fn save(app: &mut App, path: &Path) {
    let world = app.world_mut();
    let snap = tickflow_bevy::snapshot(world);
    let snapshot = postcard::to_allocvec(&snap).unwrap();
    world.spawn(TickflowSave { snapshot });
    world.trigger_save(SaveWorld::default_into_file(path));
    world.flush();
}

/// Loads `path` into a new app: moonshine-save spawns the saved entities, then the scheduler
/// is restored from its component, its timers bound by name on new entities.
fn load(app: &mut App, path: &Path) -> Vec<Entity> {
    let world = app.world_mut();
    world.trigger_load(LoadWorld::default_from_file(path));
    world.flush();
    let mut saved = world.query::<(Entity, &TickflowSave)>();
    let (entity, bytes) = saved
        .single(world)
        .expect("the save holds tickflow's state");
    let snap: SchedulerSnapshot = postcard::from_bytes(&bytes.snapshot).unwrap();
    world.despawn(entity);
    let mut rebind = Rebind::new().target("forge", ready);
    tickflow_bevy::restore(world, &snap, &mut rebind).expect("the snapshot restores");
    rebind.spawn(world)
}

#[test]
fn a_moonshine_save_keeps_the_orders_exact() {
    // Without a save and a load: when each order is done.
    let mut reference = app();
    reference.world_mut().spawn(Forge::default());
    order(&mut reference, "sword", 1.0);
    order(&mut reference, "shield", 0.3);
    steps(&mut reference, 12);
    let expected = done(&mut reference);
    assert_eq!(expected, ["shield at 0.3 s", "sword at 1.0 s"]);

    let dir = std::env::temp_dir().join(format!("tickflow-moonshine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("world.ron");

    let mut first = app();
    first.world_mut().spawn(Forge::default());
    order(&mut first, "sword", 1.0);
    order(&mut first, "shield", 0.3);
    steps(&mut first, 4); // the shield is done, the sword has 0.6 s left
    save(&mut first, &path);
    drop(first);

    let mut second = app();
    let orders = load(&mut second, &path);
    assert_eq!(
        orders.len(),
        1,
        "the sword's order, on an entity of this app"
    );
    let read = read_timer(second.world(), orders[0]).unwrap();
    assert_eq!(
        read.remaining,
        Amount::Time(secs(0.6)),
        "exact to the flick"
    );
    assert_eq!(
        done(&mut second),
        ["shield at 0.3 s"],
        "the forge's own state"
    );
    steps(&mut second, 8);
    assert_eq!(
        done(&mut second),
        expected,
        "done on the step it would have been"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
