//! Durable timers in a Bevy app (the README's store section): resume from the store at start,
//! commit after each tickflow frame, commit once more on `AppExit`; a second app on the same
//! file makes the calls on the frames the first would have.

use std::path::Path;
use std::sync::Mutex;

use bevy_app::{App, AppExit, FixedUpdate, Last};
use bevy_ecs::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_bevy::prelude::*;
use tickflow_bevy::{Tickflow, TickflowSystems};
use tickflow_store::{Durable, Sqlite};

mod app;

use app::*;

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

/// The app: the scheduler resumed from the store at `path`, a commit per frame.
fn open(path: &Path) -> (App, u64) {
    let mut app = app();
    let mut durable = Durable::new(Sqlite::create(path).unwrap(), "bevy");
    // The first app stops by dropping, as a crash would; the second starts at once in this
    // same process, so a short lease keeps the wait for the first's short.
    durable.set_lease(std::time::Duration::from_millis(30));
    durable.commit_every(4);
    let (sched, resumed) = durable
        .resume(&mut Registry::new().timer("built", built))
        .unwrap();
    tickflow_bevy::install(app.world_mut(), sched);
    app.insert_resource(Store(Mutex::new(durable)))
        .add_systems(FixedUpdate, commit.after(TickflowSystems::Frame))
        .add_systems(Last, save_on_exit);
    (app, resumed.frame)
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

    let dir = std::env::temp_dir().join(format!("tickflow-bevy-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("world.db");

    let (mut first, resumed_at) = open(&path);
    assert_eq!(resumed_at, 0, "a new store");
    set_building(&mut first);
    run(&mut first, 13); // 13 frames: the last commit_every(4) commit was at frame 12
    first.world_mut().write_message(AppExit::Success);
    first.update(); // frame 14, and the exit's commit
    assert!(lines(&first).is_empty());
    drop(first);

    let (mut second, resumed_at) = open(&path);
    assert_eq!(resumed_at, 14, "the exit's commit saved the last frame");
    run(&mut second, 40);
    assert_eq!(lines(&second), expected, "on the frame it would have had");
    std::fs::remove_dir_all(&dir).unwrap();
}
