//! Durable timers in a Bevy app (the README's store section): resume from the store at start,
//! commit after each tickflow frame, commit once more on `AppExit`; a second app on the same
//! file makes the calls on the frames the first would have. The timers are those of
//! `commands.tickflow()`, bound again by name on new entities (`Rebind`), and the scheduler's
//! own, bound by a `Registry`.

use std::path::Path;
use std::sync::Mutex;

use bevy_app::{App, AppExit, FixedUpdate, Last};
use bevy_ecs::prelude::*;
use bevy_ecs::system::RunSystemOnce;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_bevy::prelude::*;
use tickflow_bevy::{read_timer, Rebind, Tickflow, TickflowSystems};
use tickflow_store::{Durable, Sqlite};

use crate::app;

use app::*;

/// A directory of this test's own, removed when the test ends (passed or not).
struct Dir(std::path::PathBuf);

impl Dir {
    fn new(test: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("tickflow-bevy-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The store as a resource (`Durable<Sqlite>` is `Send`; the mutex makes it `Sync`).
#[derive(Resource)]
struct Store(Mutex<Durable<Sqlite>>);

fn built(world: &mut World, cx: &mut TimerCx<World>) {
    let line = format!("built at frame {}", cx.clocks().frame());
    world.resource_mut::<Log>().0.push(line);
}

/// After each tickflow frame: its durable changes, in one transaction.
fn commit(mut tf: ResMut<Tickflow>, store: Res<Store>) {
    let mut durable = store.0.lock().unwrap();
    durable
        .end_frame(tf.scheduler(), |_, _| Ok(()))
        .expect("commit");
}

/// On `AppExit`: whatever `commit_every` left unwritten.
fn save_on_exit(mut exits: MessageReader<AppExit>, mut tf: ResMut<Tickflow>, store: Res<Store>) {
    if exits.read().next().is_some() {
        let mut durable = store.0.lock().unwrap();
        durable
            .commit(tf.scheduler(), |_, _| Ok(()))
            .expect("commit");
    }
}

/// The app: the scheduler resumed from the store at `path`, a commit per frame; the entities
/// of the `commands.tickflow()` timers it resumed.
fn open(path: &Path) -> (App, u64, Vec<Entity>) {
    let mut app = app();
    let mut durable = Durable::new(Sqlite::create(path).unwrap(), "bevy");
    // The first app stops by dropping, as a crash would; the second starts at once in this
    // same process, so a short lease keeps the wait for the first's short.
    durable.set_lease(std::time::Duration::from_millis(30));
    durable.commit_every(4);
    let mut rebind = Rebind::new()
        .target("forge", forged)
        .others(Registry::new().timer("built", built));
    let (sched, resumed) = durable.resume(&mut rebind).unwrap();
    let entities = rebind.install(app.world_mut(), sched);
    app.insert_resource(Store(Mutex::new(durable)))
        .add_systems(FixedUpdate, commit.after(TickflowSystems::Frame))
        .add_systems(Last, save_on_exit);
    (app, resumed.frame, entities)
}

/// What an order of the forge does when it is done, in this run: the item is its payload.
fn forged(payload: &[u8]) -> Target {
    let item = payload.first().copied();
    Target::call(move |world| {
        let frame = world.resource::<TickflowCommands>().clocks().frame();
        log(world, format!("forged {item:?} at frame {frame}"));
    })
}

/// Orders item `item` from the forge: 30 frames, durable, one order per item.
fn order(app: &mut App, item: u8) -> Entity {
    app.world_mut()
        .run_system_once(move |mut commands: Commands| {
            (commands.tickflow().after(Frames(30)))
                .name(format!("forge/{item}"))
                .durable(Offline::Freeze)
                .payload([item])
                .target(forged(&[item]))
                .id()
        })
        .unwrap()
}

fn set_building(app: &mut App) {
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    (tf.scheduler()
        .timers()
        .after(Frames(30))
        .owner(OwnerId::new(1))
        .name("built"))
    .durable(Offline::Freeze)
    .call(built);
}

#[test]
fn durable_timers_survive_the_app() {
    // The same app without a restart, for the frame the building completes on.
    let mut reference = app();
    set_building(&mut reference);
    run(&mut reference, 40);
    let expected = lines(&reference);
    assert_eq!(expected.len(), 1, "{expected:?}");

    let dir = Dir::new("store");
    let path = dir.0.join("world.db");

    let (mut first, resumed_at, _) = open(&path);
    assert_eq!(resumed_at, 0, "a new store");
    set_building(&mut first);
    run(&mut first, 13); // 13 frames: the last commit_every(4) commit was at frame 12
    exit(&mut first); // frame 14, and the exit's commit
    assert!(lines(&first).is_empty());
    drop(first);

    let (mut second, resumed_at, _) = open(&path);
    assert_eq!(resumed_at, 14, "the exit's commit saved the last frame");
    run(&mut second, 40);
    assert_eq!(lines(&second), expected, "on the frame it would have had");
}

#[test]
fn durable_entity_timers_come_back_on_new_entities() {
    // Without a restart: the frame each order is done on.
    let mut reference = app();
    order(&mut reference, 7);
    run(&mut reference, 10);
    order(&mut reference, 9);
    run(&mut reference, 40);
    let expected = lines(&reference);
    assert_eq!(expected.len(), 2, "{expected:?}");

    let dir = Dir::new("forge");
    let path = dir.0.join("world.db");

    let (mut first, _, resumed) = open(&path);
    assert!(resumed.is_empty());
    order(&mut first, 7);
    run(&mut first, 10);
    order(&mut first, 9);
    run(&mut first, 6); // the last commit_every(4) commit: frame 16
    drop(first); // a crash: frames 17 on are lost

    let (mut second, resumed_at, orders) = open(&path);
    assert_eq!(resumed_at, 16);
    assert_eq!(
        orders.len(),
        2,
        "both orders, each on an entity of this run"
    );
    // Read through their new entities like any timer of commands.tickflow(): 30 frames less
    // the 16 and the 6 that passed before the commit (Offline::Freeze: none since).
    let world = second.world();
    let left: Vec<_> = orders
        .iter()
        .map(|&e| read_timer(world, e).unwrap().remaining)
        .collect();
    assert_eq!(
        left,
        [Amount::Frames(Frames(14)), Amount::Frames(Frames(24))]
    );
    let payload = |app: &mut App, e: Entity| {
        (app.world_mut())
            .run_system_once(move |t: TickflowTimers| t.payload(e))
            .unwrap()
    };
    assert_eq!(payload(&mut second, orders[1]), Some(vec![9]));
    run(&mut second, 40);
    assert_eq!(
        lines(&second),
        expected,
        "on the frames they would have had"
    );
    assert!(
        second.world().get_entity(orders[0]).is_err(),
        "gone with its last call"
    );
    drop(second);

    // Cancelled through its new entity: the store forgets it too.
    let (mut third, _, orders) = open(&path);
    assert!(orders.is_empty(), "both done: {orders:?}");
    order(&mut third, 5);
    run(&mut third, 4);
    exit(&mut third);
    drop(third);
    let (mut fourth, _, orders) = open(&path);
    assert_eq!(orders.len(), 1);
    fourth.world_mut().despawn(orders[0]);
    exit(&mut fourth);
    drop(fourth);
    let (_, _, orders) = open(&path);
    assert!(orders.is_empty(), "cancelled: {orders:?}");
}

/// Stops `app` as `AppExit` does: one more update, whose exit commit writes what is left.
fn exit(app: &mut App) {
    app.world_mut().write_message(AppExit::Success);
    app.update();
}

#[test]
#[should_panic(expected = "a durable timer needs a name")]
fn a_durable_timer_without_a_name_is_refused_where_it_is_set() {
    let mut app = app();
    app.world_mut()
        .run_system_once(|mut commands: Commands| {
            commands
                .tickflow()
                .after(secs(1.0))
                .durable(Offline::Freeze)
                .fire();
        })
        .unwrap();
}

#[test]
#[should_panic(expected = "a durable timer's payload must be at most")]
fn a_durable_payload_a_store_cannot_keep_is_refused_where_it_is_set() {
    let mut app = app();
    app.world_mut()
        .run_system_once(|mut commands: Commands| {
            let too_big = vec![0; tickflow::timer::MAX_DURABLE_PAYLOAD + 1];
            (commands.tickflow().after(secs(1.0)))
                .name("forge/1")
                .durable(Offline::Freeze)
                .payload(too_big)
                .fire();
        })
        .unwrap();
}
