//! The controls Bevy users reach for, in a real headless app: reading without `ResMut`,
//! controlling a `commands.tickflow()` timer through its entity, and errors through `tracing`.

use crate::app;

use app::{app, capture, lines, log, run};
use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_ecs::system::{assert_is_read_only_system, RunSystemOnce};
use tickflow_bevy::prelude::*;

fn reads(world: &mut World, e: Entity) -> (Option<Amount>, Option<bool>, Option<u64>) {
    world
        .run_system_once(move |t: TickflowTimers| (t.remaining(e), t.is_paused(e), t.calls_made(e)))
        .unwrap()
}

#[test]
fn readers_only_read() {
    fn bar(t: TickflowTimers, q: Query<Entity>) {
        for e in &q {
            let _ = t.fraction(e);
        }
    }
    fn clocks(tf: Res<Tickflow>) {
        let _ = tf.read().clocks();
    }
    assert_is_read_only_system(bar);
    assert_is_read_only_system(clocks);
}

#[test]
fn an_entity_timer_is_controlled_from_the_frame_it_is_set() {
    let mut app = app();
    let e = app
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            let mut t = commands
                .tickflow()
                .every(secs(1.0))
                .call(|w| log(w, "call"));
            t.pause_timer().shorten_timer(secs(0.3));
            t.id()
        })
        .unwrap();
    assert_eq!(
        reads(app.world_mut(), e),
        (Some(Amount::Time(secs(0.7))), Some(true), Some(0))
    );
    run(&mut app, 10);
    assert!(lines(&app).is_empty(), "paused");
    app.world_mut().commands().entity(e).unpause_timer();
    app.world_mut().flush();
    run(&mut app, 7);
    assert_eq!(lines(&app), ["call"]);
    assert_eq!(reads(app.world_mut(), e).0, Some(Amount::Time(secs(1.0))));
    // Restart after 0.5 s: the next call a full second later.
    run(&mut app, 5);
    app.world_mut()
        .commands()
        .entity(e)
        .restart_timer()
        .set_timer_rate(secs(0.5));
    app.world_mut().flush();
    assert_eq!(reads(app.world_mut(), e).0, Some(Amount::Time(secs(0.5))));
    app.world_mut()
        .commands()
        .entity(e)
        .set_timer_remaining(secs(0.2));
    app.world_mut().flush();
    run(&mut app, 2);
    assert_eq!(lines(&app), ["call", "call"]);
    assert_eq!(
        reads(app.world_mut(), e),
        (Some(Amount::Time(secs(0.5))), Some(false), Some(2))
    );
}

#[test]
fn frame_timers_take_frames_and_mismatched_units_are_ignored() {
    let mut app = app();
    let (captured, _guard) = capture();
    let e = app
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            let mut t = commands
                .tickflow()
                .after(Frames(10))
                .call(|w| log(w, "done"));
            t.shorten_timer(secs(1.0)); // seconds, for a frame timer: ignored
            t.shorten_timer(Frames(7));
            t.id()
        })
        .unwrap();
    assert_eq!(reads(app.world_mut(), e).0, Some(Amount::Frames(Frames(3))));
    run(&mut app, 3);
    assert_eq!(lines(&app), ["done"]);
    app.world_mut().commands().entity(e).pause_timer(); // gone after its last call
    let plain = app.world_mut().spawn_empty().id();
    app.world_mut().commands().entity(plain).restart_timer();
    app.world_mut().flush();
    let warnings = captured.lock().unwrap().clone();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    // Amounts as seconds or frames, never raw flicks.
    assert!(
        warnings[0].contains("shorten_timer(1s) for the timer of"),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains("is in time, the timer counts frames"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].contains("pause_timer for the timer of"),
        "{warnings:?}"
    );
    assert!(warnings[1].contains("the entity is gone"), "{warnings:?}");
    assert!(warnings[2].contains("restart_timer for"), "{warnings:?}");
    assert!(warnings[2].contains("holds no timer"), "{warnings:?}");
}

/// Spawned and controlled from a callback (the scheduler busy with its frame): the timer and
/// its controls wait for the next frame, in order.
#[test]
fn controls_given_inside_a_frame_wait_for_it() {
    let mut app = app();
    app.world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .timers()
        .after(secs(0.1))
        .call(|world, _| {
            let mut commands = world.commands();
            let mut t = commands
                .tickflow()
                .after(secs(1.0))
                .call(|w| log(w, "inner"));
            t.set_timer_remaining(secs(0.3)).pause_timer();
            let id = t.id();
            world.flush();
            world
                .resource_mut::<app::Log>()
                .0
                .push(format!("{}", id.to_bits()));
        });
    run(&mut app, 1);
    let id = Entity::from_bits(lines(&app)[0].parse().unwrap());
    assert_eq!(
        reads(app.world_mut(), id).0,
        None,
        "not set until the next frame"
    );
    run(&mut app, 1);
    assert_eq!(
        reads(app.world_mut(), id),
        (Some(Amount::Time(secs(0.3))), Some(true), Some(0))
    );
    // And controlled from an observer of another timer's call, inside a frame.
    app.world_mut()
        .run_system_once(move |mut commands: Commands| {
            commands.tickflow().after(secs(0.1)).fire().observe(
                move |_: On<TimerFired>, mut commands: Commands| {
                    commands.entity(id).unpause_timer();
                },
            );
        })
        .unwrap();
    run(&mut app, 4);
    assert_eq!(lines(&app).last().map(String::as_str), Some("inner"));
}

#[test]
fn a_failed_queued_change_is_logged_once() {
    let mut app = app();
    let (captured, _guard) = capture();
    let (a, b) = {
        let mut tf = app.world_mut().resource_mut::<Tickflow>();
        let ticks = tf.scheduler().ticks();
        let a = ticks.add(TickSettings::named("a"), |_, _| {});
        let b = ticks.add(TickSettings::named("b"), |_, _| {});
        ticks.add_prerequisite(a, b).unwrap();
        (a, b)
    };
    app.world_mut()
        .resource::<TickflowCommands>()
        .ticks()
        .add_prerequisite(b, a);
    run(&mut app, 5);
    let errors = captured.lock().unwrap().clone();
    assert_eq!(
        errors,
        ["tickflow: a queued change failed: prerequisite would form a cycle: `b` waits for `a` waits for `b`"]
    );
}

/// A timer waiting for the next frame's batch reads exactly as it will once set.
#[test]
fn a_queued_timer_reads_as_it_will_be_set() {
    let mut app = app();
    let all = |world: &mut World, e: Entity| {
        world
            .run_system_once(move |t: TickflowTimers| {
                (
                    t.handle(e).is_some(),
                    (
                        t.remaining(e),
                        t.elapsed(e),
                        t.fraction(e),
                        t.rate(e),
                        t.is_paused(e),
                        t.calls_made(e),
                    ),
                )
            })
            .unwrap()
    };
    for frames in [false, true] {
        let e = app
            .world_mut()
            .run_system_once(move |mut commands: Commands| match frames {
                false => commands
                    .tickflow()
                    .every(secs(2.0))
                    .first_delay(secs(0.5))
                    .fire()
                    .id(),
                true => commands.tickflow().after(Frames(3)).fire().id(),
            })
            .unwrap();
        let (set, waiting) = all(app.world_mut(), e);
        assert!(!set);
        tickflow_bevy::flush(app.world_mut());
        let (set, now) = all(app.world_mut(), e);
        assert!(set);
        assert_eq!(waiting, now);
    }
}

/// A named timer is named in the scheduler, in its snapshot, and after a restore.
#[test]
fn a_named_timer_keeps_its_name_through_a_save() {
    let mut app = app();
    let e = app
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            commands
                .tickflow()
                .every(secs(1.0))
                .name("regen")
                .fire()
                .id()
        })
        .unwrap();
    let snap = tickflow_bevy::snapshot(app.world_mut());
    let names = |app: &mut App| -> Vec<Option<String>> {
        let mut tf = app.world_mut().resource_mut::<Tickflow>();
        tf.scheduler()
            .timers()
            .list()
            .into_iter()
            .map(|i| i.name)
            .collect()
    };
    assert_eq!(names(&mut app), [Some("regen".to_string())]);
    run(&mut app, 3);
    tickflow_bevy::restore(
        app.world_mut(),
        &snap,
        &mut tickflow::snapshot::Registry::new(),
    )
    .unwrap();
    assert_eq!(names(&mut app), [Some("regen".to_string())]);
    assert_eq!(
        reads(app.world_mut(), e).0,
        Some(Amount::Time(secs(1.0))),
        "bound to its entity again"
    );
}

/// A frame timer reads in frames, a time one in time, queued or set: 20 frames left is
/// `Amount::Frames(Frames(20))`, not a `Span` of 20 flicks (2.8e-8 s).
#[test]
fn frame_timers_read_in_frames() {
    let mut app = app();
    let (frames, time) = app
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            let f = commands.tickflow().after(Frames(20)).fire().id();
            let t = commands.tickflow().every(secs(2.0)).fire().id();
            (f, t)
        })
        .unwrap();
    let read = move |world: &mut World| {
        world
            .run_system_once(move |t: TickflowTimers| {
                [frames, time].map(|e| (t.remaining(e), t.elapsed(e), t.rate(e)))
            })
            .unwrap()
    };
    let queued = read(app.world_mut());
    assert_eq!(
        queued[0],
        (
            Some(Amount::Frames(Frames(20))),
            Some(Amount::Frames(Frames(0))),
            Some(Amount::Frames(Frames(20)))
        )
    );
    assert_eq!(queued[1].0, Some(Amount::Time(secs(2.0))));
    run(&mut app, 5);
    let set = read(app.world_mut());
    assert_eq!(set[0].0, Some(Amount::Frames(Frames(15))));
    assert_eq!(set[0].1, Some(Amount::Frames(Frames(5))));
    assert_eq!(set[1].0, Some(Amount::Time(secs(1.5))));
    assert_eq!(set[1].0.and_then(Amount::time), Some(secs(1.5)));
    assert_eq!(set[0].0.and_then(Amount::frames), Some(Frames(15)));
    assert_eq!(format!("{}", set[0].0.unwrap()), "15 frames");
    assert_eq!(format!("{}", set[1].0.unwrap()), "1.5s");
}

/// A timer set through the scheduler reads by its handle as an entity's reads (the same
/// `TimerRead`, frames as frames), from a system and from an observer inside a frame.
#[test]
fn scheduler_timers_read_as_entity_timers_do() {
    let mut app = app();
    let (frames, time) = {
        let mut tf = app.world_mut().resource_mut::<Tickflow>();
        let t = tf.scheduler().timers();
        let frames = t.every(Frames(20)).call(|_, _| {});
        let time = t.after(secs(3.0)).call(|_, _| {});
        (frames, time)
    };
    run(&mut app, 5);
    let (f, t) = app
        .world_mut()
        .run_system_once(move |t: TickflowTimers| (t.of_handle(frames), t.of_handle(time)))
        .unwrap();
    let f = f.unwrap();
    assert_eq!(
        (f.remaining, f.elapsed),
        (Amount::Frames(Frames(15)), Amount::Frames(Frames(5)))
    );
    assert_eq!(f.fraction_remaining(), 0.75);
    assert_eq!(t.unwrap().remaining, Amount::Time(secs(2.5)));
}
