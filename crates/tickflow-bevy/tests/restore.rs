//! Saves, rollbacks and odd uses of `commands.tickflow()` timers in a real headless `App`:
//! a timer whose entity went since the save, entities spawned after it, a restore from inside
//! a frame, a `times(0)` timer, and the messages of misuse.

use std::panic::{catch_unwind, AssertUnwindSafe};

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_ecs::system::RunSystemOnce;
use tickflow::snapshot::{Registry, SchedulerSnapshot};
use tickflow_bevy::prelude::*;
use tickflow_bevy::TickflowTimer;

use crate::app;

use app::*;

/// A timer entity that logs `name` at each call.
fn spawn_timer(app: &mut App, name: &'static str, every: f64, times: Option<u64>) -> Entity {
    app.world_mut()
        .run_system_once(move |mut commands: Commands| {
            let mut t = commands.tickflow().every(secs(every));
            if let Some(n) = times {
                t = t.times(n);
            }
            t.call(move |world: &mut World| world.resource_mut::<Log>().0.push(name.into()))
                .id()
        })
        .unwrap()
}

fn save(app: &mut App) -> SchedulerSnapshot {
    tickflow_bevy::snapshot(app.world_mut())
}

fn load(app: &mut App, snap: &SchedulerSnapshot) {
    let report = tickflow_bevy::restore(app.world_mut(), snap, &mut Registry::new())
        .unwrap_or_else(|e| panic!("restore: {e}"));
    drop(report);
}

#[test]
fn a_save_loads_after_its_timer_entities_are_gone() {
    for how in ["one-shot fired", "times(2) finished", "despawned"] {
        let mut app = app();
        let e = match how {
            "one-shot fired" => app
                .world_mut()
                .run_system_once(|mut commands: Commands| {
                    commands
                        .tickflow()
                        .after(secs(0.2))
                        .call(|w: &mut World| w.resource_mut::<Log>().0.push("once".into()))
                        .id()
                })
                .unwrap(),
            "times(2) finished" => spawn_timer(&mut app, "twice", 0.1, Some(2)),
            _ => spawn_timer(&mut app, "gone", 0.1, None),
        };
        run(&mut app, 1);
        let snap = save(&mut app);
        match how {
            "despawned" => drop(app.world_mut().despawn(e)),
            _ => run(&mut app, 3),
        }
        assert!(
            app.world().get_entity(e).is_err(),
            "{how}: the entity is gone"
        );
        // The save loads, and the timer whose entity is gone does nothing.
        load(&mut app, &snap);
        let before = lines(&app).len();
        run(&mut app, 5);
        assert_eq!(
            lines(&app).len(),
            before,
            "{how}: nothing runs for a gone entity"
        );
        // Saving and loading again works too (a rollback every frame).
        let again = save(&mut app);
        load(&mut app, &again);
    }
}

#[test]
fn entities_spawned_after_the_save_do_not_reach_the_restored_timers() {
    let mut app = app();
    let kept = spawn_timer(&mut app, "kept", 0.1, None);
    run(&mut app, 1);
    let snap = save(&mut app);
    let late = spawn_timer(&mut app, "late", 0.1, None);
    run(&mut app, 1);
    let late_handle = held(&app, late);
    assert!(late_handle.is_some());
    load(&mut app, &snap);
    // The restored scheduler hands the late timer's old handle to the next timer.
    let next = spawn_timer(&mut app, "next", 0.1, None);
    run(&mut app, 1);
    // The late entity's timer is not in the save: it is gone, and taking it away cancels
    // no other entity's timer.
    if let Ok(e) = app.world_mut().get_entity_mut(late) {
        e.despawn();
    }
    app.world_mut().resource_mut::<Log>().0.clear();
    run(&mut app, 2);
    let log = lines(&app);
    assert_eq!(log.iter().filter(|l| *l == "next").count(), 2, "{log:?}");
    assert_eq!(log.iter().filter(|l| *l == "kept").count(), 2, "{log:?}");
    assert!(!log.contains(&"late".to_string()), "{log:?}");
    assert!(held(&app, next).is_some() && held(&app, kept).is_some());
}

/// The timer the entity `e` holds (`None` before its first frame).
fn held(app: &App, e: Entity) -> Option<TimerHandle> {
    app.world().get::<TickflowTimer>(e).unwrap().handle()
}

#[test]
fn a_restore_from_inside_a_frame_takes_effect_at_its_end() {
    let mut app = app();
    let owner = app.world_mut().spawn(TickflowOwner).id();
    app.world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .timers()
        .every(secs(0.1))
        .owner(tickflow_bevy::owner(owner))
        .call(|w: &mut World, _| w.resource_mut::<Log>().0.push("owned".into()));
    run(&mut app, 1);
    let snap = save(&mut app);
    app.insert_resource(Checkpoint(snap));
    // "Load checkpoint" from a timer callback.
    app.world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .timers()
        .after(secs(0.2))
        .call(|w: &mut World, _| {
            let snap = w.resource::<Checkpoint>().0.clone();
            tickflow_bevy::restore(w, &snap, &mut owned()).expect("restores");
            w.resource_mut::<Log>().0.push("loaded".into());
        });
    run(&mut app, 3);
    assert!(lines(&app).contains(&"loaded".to_string()));
    // The restored scheduler runs, and TickflowCommands reach it: despawning the owner
    // removes what it owned.
    app.world_mut().resource_mut::<Log>().0.clear();
    run(&mut app, 2);
    assert_eq!(lines(&app), ["owned", "owned"]);
    app.world_mut().despawn(owner);
    run(&mut app, 3);
    assert_eq!(
        lines(&app),
        ["owned", "owned"],
        "the owner's timer went with it"
    );
    let sched = app.world_mut();
    assert_eq!(
        sched.resource_mut::<Tickflow>().scheduler().timers().len(),
        0
    );
}

#[derive(Resource)]
struct Checkpoint(SchedulerSnapshot);

/// Binds every timer to one that logs "owned".
fn owned() -> Registry<World> {
    Registry::new().other_timers(|_| {
        Some(Box::new(|w: &mut World, _: &mut TimerCx<World>| {
            w.resource_mut::<Log>().0.push("owned".into())
        }))
    })
}

#[test]
fn a_restore_between_frames_points_tickflow_commands_at_the_restored_scheduler() {
    let mut app = app();
    let snap = save(&mut app);
    let before = app.world().resource::<TickflowCommands>().clone();
    load(&mut app, &snap);
    let now = app.world().resource::<TickflowCommands>().clone();
    assert!(!before.is_connected(), "the old scheduler is gone");
    assert!(now.is_connected());
    now.timers(|t| {
        t.after(secs(0.1))
            .call(|w: &mut World, _| w.resource_mut::<Log>().0.push("via commands".into()));
    });
    run(&mut app, 2);
    assert_eq!(lines(&app), ["via commands"]);
}

#[test]
fn a_times_zero_timer_entity_despawns() {
    let mut app = app();
    let e = spawn_timer(&mut app, "never", 0.1, Some(0));
    run(&mut app, 3);
    assert!(app.world().get_entity(e).is_err(), "no call will ever come");
    assert!(lines(&app).is_empty());
}

fn message(p: Box<dyn std::any::Any + Send>) -> String {
    (p.downcast_ref::<String>().cloned())
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn misuse_panics_name_what_is_missing() {
    let err = catch_unwind(|| {
        let mut app = App::new();
        app.add_plugins(TickflowPlugin::fixed(10));
        app.update();
    })
    .unwrap_err();
    assert!(message(err).contains("TimePlugin"));

    let mut app = app();
    app.world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .timers()
        .after(secs(0.1))
        .call(|w: &mut World, _| tickflow_bevy::flush(w));
    let err = catch_unwind(AssertUnwindSafe(|| run(&mut app, 2))).unwrap_err();
    assert!(message(err).contains("flush"));
}

/// `install` puts a new scheduler in place: the `commands.tickflow()` timers set in the one
/// it replaces go with it, and so do their entities (as a restore's do), where they used to
/// stay for ever, holding a handle that named nothing; timers still queued are set in the new
/// one. A warning says how many went.
#[test]
fn install_drops_the_entities_of_the_timers_it_replaces() {
    let mut app = app();
    let set = spawn_timer(&mut app, "set", 0.3, None);
    run(&mut app, 1);
    assert!(held(&app, set).is_some());
    let queued = spawn_timer(&mut app, "queued", 0.2, Some(1));
    let (seen, _guard) = capture();
    tickflow_bevy::install(app.world_mut(), Scheduler::new());
    assert!(app.world().get_entity(set).is_err(), "gone with its timer");
    assert!(
        seen.lock().unwrap().iter().any(|w| w.contains("1 timer")),
        "{:?}",
        seen.lock().unwrap()
    );
    run(&mut app, 3);
    assert_eq!(lines(&app), ["queued"]);
    assert!(
        app.world().get_entity(queued).is_err(),
        "its last call despawned it"
    );
}

#[test]
fn a_save_loaded_in_another_app_binds_its_timers_to_new_entities_by_name() {
    // The first app: a regeneration timer (named, bound again in the next run) and a plain
    // one (its entity and target are the first run's: it does not come back, as a timer
    // whose entity went since the save).
    let mut first = app();
    first
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            commands
                .tickflow()
                .every(secs(0.5))
                .name("regen/hero")
                .payload([3])
                .fire();
        })
        .unwrap();
    run(&mut first, 2);
    spawn_timer(&mut first, "plain", 0.1, None);
    let saved = save(&mut first);
    drop(first);

    // A new app of another run: entities of its own already, one of them with the first
    // app's timer entity's bits, holding no timer.
    let mut second = app();
    second.world_mut().spawn_batch((0..4).map(|_| ()));
    let mut rebind = tickflow_bevy::Rebind::new().target("regen", |payload: &[u8]| {
        let amount = payload[0];
        Target::call(move |world: &mut World| log(world, format!("regen {amount}")))
    });
    tickflow_bevy::restore(second.world_mut(), &saved, &mut rebind).unwrap();
    let entities = rebind.spawn(second.world_mut());
    assert_eq!(entities.len(), 1);
    let read = tickflow_bevy::read_timer(second.world(), entities[0]).unwrap();
    assert_eq!((read.remaining, read.calls), (Amount::Time(secs(0.3)), 0));
    run(&mut second, 8); // 0.8 s: calls at 0.3 and 0.8
    assert_eq!(lines(&second), ["regen 3", "regen 3"]);
    // Controlled through its new entity like any other.
    second.world_mut().despawn(entities[0]);
    run(&mut second, 10);
    assert_eq!(lines(&second).len(), 2);
}
