//! Bevy-native targets, owners and `commands.tickflow()` in a real headless `App`:
//! observers triggered, one-shot systems and commands run, despawned owners cleaned up
//! (nothing runs for them after), timers cancelled by despawning their entity, and a
//! snapshot/restore round trip.

use bevy_ecs::prelude::*;
use bevy_ecs::system::RunSystemOnce;
use tickflow::snapshot::Registry;
use tickflow_bevy::prelude::*;

use crate::app;

use app::*;

/// The tickflow frame, from a callback that gets only the world.
fn frame(world: &World) -> u64 {
    world.resource::<TickflowCommands>().clocks().frame()
}

#[derive(Event, Clone)]
struct Ping(&'static str);

#[derive(EntityEvent, Clone)]
struct Hit {
    entity: Entity,
}

#[test]
fn targets_trigger_observers_run_systems_and_apply_commands() {
    let mut app = app();
    app.add_observer(|ping: On<Ping>, mut log: ResMut<Log>| log.0.push(format!("ping {}", ping.0)));
    let target = app
        .world_mut()
        .spawn_empty()
        .observe(|hit: On<Hit>, mut log: ResMut<Log>| {
            log.0.push(format!("hit {:?}", hit.entity));
        })
        .id();
    let system = app
        .world_mut()
        .register_system(|mut log: ResMut<Log>| log.0.push("one-shot system".into()));
    #[derive(Component)]
    struct Spawned;
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    let timers = tf.scheduler().timers();
    timers
        .after(Frames(1))
        .call(Target::trigger(Ping("a")).timer());
    timers
        .after(Frames(2))
        .call(Target::trigger(Hit { entity: target }).timer());
    timers
        .after(Frames(3))
        .call(Target::run_system(system).timer());
    timers.every(Frames(1)).times(2).call(
        Target::queue(|world: &mut World| {
            world.spawn(Spawned);
        })
        .timer(),
    );
    tf.scheduler().latent().delay(
        OwnerId::new(9),
        0,
        millis(400),
        Target::trigger(Ping("latent")).completion(),
    );
    run(&mut app, 4);
    assert_eq!(
        lines(&app),
        [
            "ping a".to_string(),
            format!("hit {target:?}"),
            "one-shot system".into(),
            "ping latent".into()
        ]
    );
    let spawned = app
        .world_mut()
        .query::<&Spawned>()
        .iter(app.world())
        .count();
    assert_eq!(spawned, 2);
}

#[test]
fn a_despawned_owner_leaves_nothing_behind() {
    let mut app = app();
    let unit = app.world_mut().spawn(TickflowOwner).id();
    let other = app.world_mut().spawn(TickflowOwner).id();
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    let sched = tf.scheduler();
    for (who, name) in [(unit, "unit"), (other, "other")] {
        sched
            .timers()
            .every(Frames(1))
            .owner(owner(who))
            .call(move |world, _| log(world, format!("{name} timer")));
        sched.ticks().add(
            TickSettings::named(name).owned_by(owner(who)),
            move |world, _| log(world, format!("{name} tick")),
        );
        sched
            .latent()
            .delay(owner(who), 1, millis(300), move |world: &mut World, _| {
                log(world, format!("{name} latent"))
            });
        sched
            .tasks()
            .spawn(Some(owner(who)), move |cx: TaskCx<World>| async move {
                loop {
                    cx.next_frame().await;
                    cx.with(|world| log(world, format!("{name} task")));
                }
            });
    }
    run(&mut app, 3);
    let mut kinds = lines(&app);
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), 8, "each kind ran for each owner: {kinds:?}");
    app.world_mut().resource_mut::<Log>().0.clear();

    app.world_mut().despawn(unit);
    run(&mut app, 3);
    assert!(
        lines(&app).iter().all(|l| l.starts_with("other")),
        "{:?}",
        lines(&app)
    );
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    let sched = tf.scheduler();
    assert_eq!(sched.ticks().len(), 1);
    assert_eq!(sched.tasks().len(), 1);
    assert_eq!(sched.timers().len(), 1);
    assert_eq!(sched.latent().count_for_owner(owner(unit)), 0);
}

/// Despawned by a callback in the middle of a frame: its timer due later in the same frame
/// does not run.
#[test]
fn an_owner_despawned_mid_frame_runs_nothing_after() {
    let mut app = app();
    let victim = app.world_mut().spawn(TickflowOwner).id();
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    let timers = tf.scheduler().timers();
    timers.after(Frames(1)).call(move |world, _| {
        log(world, "despawn");
        world.despawn(victim);
    });
    timers
        .after(Frames(1))
        .owner(owner(victim))
        .call(|world, _| log(world, "victim's timer"));
    run(&mut app, 2);
    assert_eq!(lines(&app), ["despawn"]);
}

#[test]
fn commands_set_timers_that_are_entities() {
    let mut app = app();
    struct Ids {
        cancelled: Entity,
        parent: Entity,
        repeating: Entity,
    }
    let set = |mut commands: Commands| {
        let repeating = commands
            .tickflow()
            .every(millis(200))
            .times(3)
            .fire()
            .observe(
                |fired: On<TimerFired>, tf: Res<TickflowCommands>, mut log: ResMut<Log>| {
                    let frame = tf.clocks().frame();
                    log.0.push(format!(
                        "fired {} last {} frame {frame}",
                        fired.call, fired.last
                    ));
                },
            )
            .id();
        let cancelled = commands
            .tickflow()
            .after(Frames(3))
            .call(|world| log(world, "cancelled timer ran"))
            .id();
        let parent = commands.spawn_empty().id();
        commands
            .tickflow()
            .every(Frames(1))
            .owner(parent)
            .call(|world| log(world, format!("child {}", frame(world))));
        commands
            .tickflow()
            .after(millis(100))
            .real()
            .trigger(Ping("real"));
        Ids {
            cancelled,
            parent,
            repeating,
        }
    };
    app.add_observer(|ping: On<Ping>, mut log: ResMut<Log>| log.0.push(format!("ping {}", ping.0)));
    let ids = app.world_mut().run_system_once(set).unwrap();
    run(&mut app, 2);
    app.world_mut().despawn(ids.cancelled);
    app.world_mut().despawn(ids.parent);
    run(&mut app, 6);
    assert_eq!(
        lines(&app),
        [
            "child 1",
            "ping real",
            "fired 0 last false frame 2", // set before the child's timer: called first
            "child 2",
            "fired 1 last false frame 4", // the child was despawned after frame 2
            "fired 2 last true frame 6"
        ]
    );
    assert!(
        app.world().get_entity(ids.repeating).is_err(),
        "a finished timer's entity despawns itself"
    );
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    assert!(tf.scheduler().timers().is_empty());
}

/// The scheduler's snapshot goes back into the app: named timers through the user's
/// resolver, `commands.tickflow()` timers by their entities, and both worlds go on alike.
#[test]
fn snapshot_and_restore_round_trip() {
    let names = || {
        Registry::new().timer(
            "tick tock",
            |world: &mut World, cx: &mut TimerCx<'_, World>| {
                log(world, format!("tock {}", cx.clocks().frame()))
            },
        )
    };
    let mut app = app();
    app.add_observer(|ping: On<Ping>, world_log: ResMut<Log>| {
        let mut log = world_log;
        log.0.push(format!("ping {}", ping.0));
    });
    app.world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .timers()
        .every(millis(300))
        .name("tick tock")
        .call(|world, cx| log(world, format!("tock {}", cx.clocks().frame())));
    app.world_mut()
        .run_system_once(|mut commands: Commands| {
            commands.tickflow().every(Frames(4)).trigger(Ping("four"));
        })
        .unwrap();
    run(&mut app, 5);
    let saved = tickflow_bevy::snapshot(app.world_mut());
    let hash = tickflow_bevy::state_hash(app.world_mut());
    let log_at_save = lines(&app);
    run(&mut app, 8);
    let original: Vec<String> = lines(&app)[log_at_save.len()..].to_vec();

    // Back to the snapshot (the world's entities are still there), and the same 8 frames.
    let report = tickflow_bevy::restore(app.world_mut(), &saved, &mut names()).unwrap();
    assert!(report.is_complete(), "{report}");
    assert_eq!(tickflow_bevy::state_hash(app.world_mut()), hash);
    app.world_mut().resource_mut::<Log>().0.clear();
    run(&mut app, 8);
    assert_eq!(lines(&app), original);
    assert_eq!(
        original,
        ["tock 6", "ping four", "tock 9", "tock 12", "ping four"]
    );
    // The restored scheduler's commands work (despawn hooks reach it).
    let timers = app
        .world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .timers()
        .len();
    assert_eq!(timers, 2);
}

/// Systems that a timer's call sets off read timers: an observer of the plugin's own
/// `TimerFired` and a `run_system` target read the buff's time left (they panicked with "the
/// scheduler is running a frame", and an observer had no other way to read a timer).
#[test]
fn what_a_call_sets_off_reads_timers() {
    #[derive(Resource)]
    struct Buff(Entity);

    fn hud(buff: Res<Buff>, timers: TickflowTimers, mut log: ResMut<Log>) {
        let left = timers.remaining(buff.0).unwrap();
        let paused = timers.is_paused(buff.0).unwrap();
        log.0.push(format!("system: {left} paused {paused}"));
    }

    let mut app = app();
    let buff = (app.world_mut())
        .run_system_once(|mut commands: Commands| commands.tickflow().after(secs(2.0)).fire().id())
        .unwrap();
    app.insert_resource(Buff(buff));
    let system = app.world_mut().register_system(hud);
    app.world_mut()
        .run_system_once(move |mut commands: Commands| {
            let observer =
                move |_: On<TimerFired>, timers: TickflowTimers, mut log: ResMut<Log>| {
                    let left = timers.remaining(buff).unwrap();
                    let fraction = timers.fraction(buff).unwrap();
                    let all = timers.with_timers(|t| t.len());
                    log.0
                        .push(format!("observer: {left} {fraction:.2} of {all}"));
                };
            commands
                .tickflow()
                .after(secs(0.5))
                .fire()
                .observe(observer);
            commands.tickflow().after(secs(0.8)).run_system(system);
        })
        .unwrap();
    run(&mut app, 10);
    assert_eq!(
        lines(&app),
        ["observer: 1.5s 0.25 of 3", "system: 1.2s paused false"]
    );
}

/// A timer writes a buffered message, read in a system's own schedule with a
/// `MessageReader` (beside the observer events, which run as they happen).
#[test]
fn a_timer_writes_messages_read_in_their_own_schedule() {
    #[derive(Message, Clone)]
    struct Tick(&'static str);

    fn read(mut ticks: MessageReader<Tick>, mut log: ResMut<Log>) {
        for t in ticks.read() {
            log.0.push(t.0.to_string());
        }
    }

    let mut app = app();
    app.add_message::<Tick>()
        .add_systems(bevy_app::Update, read);
    let e = app
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            (commands.tickflow().every(secs(0.2)).times(2))
                .message(Tick("tick"))
                .id()
        })
        .unwrap();
    run(&mut app, 6);
    assert_eq!(lines(&app), ["tick", "tick"]);
    assert!(app.world().get_entity(e).is_err());
    // From &World, without a system: nothing left to read.
    assert_eq!(tickflow_bevy::read_timer(app.world(), e), None);
}
