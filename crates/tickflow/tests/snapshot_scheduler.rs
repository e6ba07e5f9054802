//! Scheduler snapshots: a rich world run 100 frames, snapshot at 50, restored and re-run
//! with the same inputs gives the same calls, hashes and handles; restore errors; what is
//! reported as not saved; `sync_test`.

use crate::snapshot_world;
use tickflow::Deferred;

use snapshot_world::*;

#[test]
fn rollback_to_frame_50_replays_frames_51_to_100_exactly() {
    let (mut a, mut game) = build();
    run(&mut a, &mut game, 1, 50);
    let snap = a.snapshot();
    let saved_game = game.clone();
    assert_eq!(a.state_hash(), tickflow::snapshot::stable_hash(&snap));
    let (log_a, hashes_a) = run(&mut a, &mut game, 51, 100);

    let mut b = restore(&snap);
    assert_eq!(b.snapshot(), snap);
    let mut game_b = saved_game;
    let (log_b, hashes_b) = run(&mut b, &mut game_b, 51, 100);
    assert_eq!(log_a, log_b);
    assert_eq!(hashes_a, hashes_b);
    assert_eq!(game, game_b);
    for needle in [
        "spawned 60",
        "late 76",
        "wave 2",
        "done 1 1",
        "done 5 3",
        "boom",
        "score",
    ] {
        assert!(
            log_a.iter().any(|l| l.starts_with(needle)),
            "{needle} in {log_a:?}"
        );
    }
    // The same handles from here on.
    assert_eq!(
        a.ticks().add(TickSettings::named("x"), |_, _| {}),
        b.ticks().add(TickSettings::named("x"), |_, _| {})
    );
    assert_eq!(a.tickables().add(Score), b.tickables().add(Score));
    assert_eq!(
        a.timers().after(secs(1.0)).call(|_, _| {}),
        b.timers().after(secs(1.0)).call(|_, _| {})
    );
}

#[test]
fn the_hash_tells_states_apart_and_is_stable() {
    let (mut a, mut game) = build();
    let (b, _) = build();
    assert_eq!(a.state_hash(), b.state_hash());
    a.tick(dt(1), &mut game);
    assert_ne!(a.state_hash(), b.state_hash());
    let (mut c, _) = build();
    c.set_time_dilation(0.75);
    assert_ne!(c.state_hash(), b.state_hash());
    // The same on every platform: integers are hashed little-endian, usize as u64.
    assert_eq!(Scheduler::<()>::new().state_hash(), 0x8c75_2059_1c52_b7f2);
}

#[test]
fn restore_failures_name_the_problem() {
    let (mut a, mut game) = build();
    run(&mut a, &mut game, 1, 10);
    let snap = a.snapshot();
    let before = a.state_hash();
    for (missing, kind) in [("ai", "tick function"), ("poison", "timer")] {
        let mut world = World {
            missing,
            ..World::default()
        };
        let err = Scheduler::restore(&snap, &mut world)
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(&err, RestoreError::Unbound { kind: k, name, .. } if *k == kind && name == missing),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(&format!("{kind} `{missing}`")),
            "{err}"
        );
    }
    // The resolver was asked in the order things run: ticks, tickables, timers, latent.
    let mut world = World::default();
    Scheduler::restore(&snap, &mut world).unwrap();
    let kinds: Vec<&str> = world
        .asked
        .iter()
        .map(|a| a.split(' ').next().unwrap())
        .collect();
    let mut sorted = kinds.clone();
    sorted.dedup();
    assert_eq!(sorted, ["tick", "tickable", "timer", "latent"]);
    assert_eq!(
        a.state_hash(),
        before,
        "restoring changes nothing in the original"
    );
    run(&mut a, &mut game, 11, 12);
}

#[test]
fn restored_parallel_functions_still_run_on_the_workers() {
    // Each body notes whether it ran on a rayon worker. Called from outside the pool, a
    // parallel batch always runs there, so this does not depend on timing.
    fn on_worker(_: &mut (), _: &Vec<bool>, out: &mut Deferred<Vec<bool>>) {
        let worker = rayon::current_thread_index().is_some();
        out.run(move |seen| seen.push(worker));
    }
    let mut s = Scheduler::<Vec<bool>>::new();
    for _ in 0..2 {
        s.ticks()
            .add_parallel(TickSettings::named("worker"), (), on_worker);
    }
    let (mut restored, _) = Scheduler::restore(
        &s.snapshot(),
        &mut Registry::new().tick_with("worker", |_| TickBody::parallel((), on_worker)),
    )
    .unwrap();
    let (mut seen, mut seen_restored) = (Vec::new(), Vec::new());
    s.tick(millis(16), &mut seen);
    restored.tick(millis(16), &mut seen_restored);
    assert_eq!(seen, [true, true]);
    assert_eq!(seen_restored, seen);
}

#[test]
fn tasks_and_unsaveable_actions_are_reported() {
    let (mut a, mut game) = build();
    a.tasks()
        .spawn(None, |cx| async move { cx.delay(secs(10.0)).await });
    a.latent()
        .wait_until(DOOR, 9, |g: &Game| g.hp > 1000, |_, _| {});
    a.tick(dt(1), &mut game);
    let timers_with_task = a.timers().len();
    let snap = a.snapshot();
    assert_eq!(
        snap.timers().len(),
        timers_with_task - 1,
        "the task's delay timer is left out"
    );
    let (mut b, report) = Scheduler::restore(&snap, &mut World::default()).unwrap();
    assert_eq!(report.tasks_not_saved, 1);
    assert_eq!(report.latent_not_saved.len(), 1);
    assert_eq!(report.latent_not_saved[0].uuid, 9);
    assert_eq!(
        report.to_string(),
        "1 async task(s) not saved, 1 latent action(s) not saved"
    );
    assert_eq!(b.tasks().len(), 0);

    let err = sync_test(
        &mut a,
        &mut game,
        &mut World::default(),
        10,
        5,
        dt(0),
        |_| 0,
    )
    .unwrap_err();
    assert!(matches!(err, SyncError::Incomplete { .. }), "{err}");
}

#[test]
fn sync_test_passes_a_deterministic_world_and_catches_hidden_state() {
    let (mut a, mut game) = build();
    let checksum = |g: &Game| tickflow::snapshot::stable_hash(g);
    let report = sync_test(
        &mut a,
        &mut game,
        &mut World::default(),
        150,
        60,
        dt(0),
        checksum,
    )
    .unwrap();
    assert_eq!(
        (report.frames, report.rollbacks, report.resimulated),
        (150, 3, 150)
    );
    assert_eq!(a.clocks().frame(), 150);
    assert_eq!(report.final_hash, a.state_hash());

    // A callback that keeps state of its own (not in the context) cannot be rolled back:
    // its restored copy starts again from zero.
    let (mut b, mut game) = build();
    let mut count = 0;
    b.timers()
        .every(millis(100))
        .name("hidden")
        .call(move |g, _| {
            count += 1;
            g.hp += count;
        });
    let err = sync_test(
        &mut b,
        &mut game,
        &mut World::default(),
        120,
        30,
        dt(0),
        checksum,
    )
    .unwrap_err();
    match err {
        SyncError::Desync { frame, what, .. } => {
            assert_eq!(what, "context checksum");
            assert!(frame > 30 && frame <= 60, "first rollback window: {frame}");
        }
        e => panic!("{e}"),
    }
}

#[cfg(feature = "serde")]
#[test]
fn json_and_postcard_round_trips_behave_the_same() {
    let (mut a, mut game) = build();
    run(&mut a, &mut game, 1, 50);
    let snap = a.snapshot();
    let json = serde_json::to_string_pretty(&snap).unwrap();
    let bytes = postcard::to_stdvec(&snap).unwrap();
    let from_json: SchedulerSnapshot = serde_json::from_str(&json).unwrap();
    let from_bytes: SchedulerSnapshot = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(from_json, snap);
    assert_eq!(from_bytes, snap);
    let (expected, hashes) = run(&mut a, &mut game.clone(), 51, 100);
    for s in [from_json, from_bytes] {
        let mut b = restore(&s);
        assert_eq!(
            run(&mut b, &mut game.clone(), 51, 100),
            (expected.clone(), hashes.clone())
        );
    }

    // A version from the future, and a prerequisite cycle edited into the save file.
    let newer: SchedulerSnapshot = serde_json::from_str(&json.replacen(
        &format!("\"version\": {FORMAT_VERSION}"),
        "\"version\": 7",
        1,
    ))
    .unwrap();
    let err = Scheduler::restore(&newer, &mut World::default())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err,
        RestoreError::Version {
            found: 7,
            supported: FORMAT_VERSION
        }
    );
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let functions = value["ticks"]["functions"].as_array_mut().unwrap();
    let find = |fs: &[serde_json::Value], n: &str| {
        fs.iter().position(|f| f["settings"]["name"] == n).unwrap()
    };
    let (ai, physics) = (find(functions, "ai"), find(functions, "physics"));
    let ai_handle = serde_json::json!([functions[ai]["index"], functions[ai]["gen"]]);
    functions[physics]["prereqs"] = serde_json::json!([ai_handle]);
    let cyclic: SchedulerSnapshot = serde_json::from_value(value).unwrap();
    let err = Scheduler::restore(&cyclic, &mut World::default())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "corrupted snapshot: the tick prerequisites form a cycle"
    );
}
