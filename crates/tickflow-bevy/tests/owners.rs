//! One rule for owners: an entity used as an owner without `TickflowOwner` is warned about
//! (default), given the component (`OwnerCheck::Register`), or left alone (`Off`).

use crate::app;

use app::capture;

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_ecs::system::RunSystemOnce;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use tickflow_bevy::prelude::*;
use tickflow_bevy::OwnerCheck;

#[derive(Resource, Default)]
struct Calls(u32);

fn app_with(check: OwnerCheck) -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, TickflowPlugin::fixed(10).owner_check(check)))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .init_resource::<Calls>();
    app.update();
    app
}

/// A looping timer owned by `who`, counting its calls.
fn owned_timer(app: &mut App, who: OwnerId) {
    app.world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .timers()
        .every(Frames(1))
        .owner(who)
        .call(|world, _| world.resource_mut::<Calls>().0 += 1);
}

fn calls(app: &App) -> u32 {
    app.world().resource::<Calls>().0
}

#[test]
fn by_default_a_missing_tickflow_owner_is_a_warning_once() {
    let mut app = app_with(OwnerCheck::default());
    let (seen, _guard) = capture();
    let enemy = app.world_mut().spawn_empty().id();
    owned_timer(&mut app, owner(enemy));
    owned_timer(&mut app, owner(enemy));
    app::run(&mut app, 3);
    let warnings = seen.lock().unwrap().clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("has no TickflowOwner"), "{warnings:?}");
    assert!(
        !app.world().entity(enemy).contains::<TickflowOwner>(),
        "nothing changed"
    );
    // With the component, no warning.
    let friend = app.world_mut().spawn(TickflowOwner).id();
    owned_timer(&mut app, owner(friend));
    app::run(&mut app, 1);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn register_gives_the_component_and_cleans_up_a_gone_owner() {
    let mut app = app_with(OwnerCheck::Register);
    let enemy = app.world_mut().spawn_empty().id();
    owned_timer(&mut app, owner(enemy));
    app::run(&mut app, 2);
    assert!(app.world().entity(enemy).contains::<TickflowOwner>());
    assert_eq!(calls(&app), 2);
    app.world_mut().despawn(enemy);
    app::run(&mut app, 3);
    assert_eq!(calls(&app), 2, "despawned: its timer went with it");
    // Items given to an entity already despawned are removed before they run.
    let (seen, _guard) = capture();
    owned_timer(&mut app, owner(enemy));
    app::run(&mut app, 3);
    assert_eq!(calls(&app), 2);
    assert!(seen.lock().unwrap()[0].contains("they are removed"));
    assert!(app
        .world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .owners()
        .is_empty());
}

#[test]
fn off_checks_nothing() {
    let mut app = app_with(OwnerCheck::Off);
    let (seen, _guard) = capture();
    let zone = app.world_mut().spawn_empty().id();
    owned_timer(&mut app, owner(zone));
    app::run(&mut app, 2);
    assert!(seen.lock().unwrap().is_empty());
    assert!(!app.world().entity(zone).contains::<TickflowOwner>());
    assert!(
        (app.world_mut().resource_mut::<Tickflow>().scheduler())
            .take_new_owners()
            .is_empty(),
        "not tracked"
    );
}

/// A timer of `commands.tickflow()` whose `.owner(entity)` was despawned before the timer was
/// set never runs, and its entity goes (the rule `OwnerCheck::Register` keeps for scheduler
/// items): before, Bevy dropped the invalid `ChildOf` with a log line and the timer ran for
/// ever, an orphan.
#[test]
fn an_entity_timer_of_a_despawned_owner_never_runs() {
    let mut app = app_with(OwnerCheck::default());
    let enemy = app.world_mut().spawn_empty().id();
    let live = app.world_mut().spawn_empty().id();
    app.world_mut().despawn(enemy);
    let (orphan, kept) = app
        .world_mut()
        .run_system_once(move |mut commands: Commands| {
            let mut set = |who: Entity| {
                (commands.tickflow().every(Frames(1)))
                    .owner(who)
                    .call(|world| world.resource_mut::<Calls>().0 += 1)
                    .id()
            };
            (set(enemy), set(live))
        })
        .unwrap();
    app::run(&mut app, 3);
    assert_eq!(calls(&app), 3, "only the live owner's timer runs");
    assert!(app.world().get_entity(orphan).is_err(), "the orphan went");
    assert_eq!(
        app.world().get::<ChildOf>(kept).map(ChildOf::parent),
        Some(live)
    );
    let reads = app
        .world_mut()
        .run_system_once(move |t: TickflowTimers| (t.remaining(orphan), t.remaining(kept)))
        .unwrap();
    assert!(reads.0.is_none() && reads.1.is_some(), "{reads:?}");
}

/// Owner ids that are not entities' (`OwnerId::new(1)`, a zone's number) draw no warning
/// from the default check, whatever entities the app has; `owner(entity)` still does.
#[test]
fn plain_owner_ids_are_not_taken_for_entities() {
    let mut app = app_with(OwnerCheck::default());
    let (seen, _guard) = capture();
    for _ in 0..4 {
        app.world_mut().spawn_empty(); // entities 0.. exist: a plain 1 could name one
    }
    for id in [0, 1, 2, 3, 7, u64::from(u32::MAX)] {
        owned_timer(&mut app, OwnerId::new(id));
    }
    app::run(&mut app, 2);
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
    let enemy = app.world_mut().spawn_empty().id();
    owned_timer(&mut app, owner(enemy));
    app::run(&mut app, 1);
    assert_eq!(seen.lock().unwrap().len(), 1);
}
