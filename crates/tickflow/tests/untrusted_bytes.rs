//! Bytes from a peer shard or a save file, edited the way damage or an attacker would: an
//! epoch at the end of its range, prerequisites that name handles the scheduler never made,
//! and owners dense with prerequisites. Each is refused with a reason (nothing changes) or
//! accepted into a scheduler that runs, moves on and saves as before.
#![cfg(feature = "serde")]

use serde_json::Value;
use tickflow::prelude::*;
use tickflow::snapshot::{ImportError, OwnerSnapshot, Registry, RestoreError, SchedulerSnapshot};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::timer::TimerInfo;

const ORC: OwnerId = OwnerId::new(7);

/// Binds every saved item to a callback that counts.
fn anything() -> Registry<u64> {
    Registry::new()
        .other_timers(|_| Some(Box::new(|n: &mut u64, _: &mut TimerCx<u64>| *n += 1)))
        .other_ticks(|_| Some(TickBody::serial(|n: &mut u64, _: &mut TickCx<u64>| *n += 1)))
        .other_latent(|_| Some(Box::new(|n: &mut u64, _: &mut LatentCx<u64>| *n += 1)))
}

fn orc_world() -> Scheduler<u64> {
    let mut s = Scheduler::new();
    s.timers()
        .every(secs(1.0))
        .owner(ORC)
        .name("regen")
        .call(|n, _| *n += 1);
    let a = s
        .ticks()
        .add(TickSettings::named("move").owned_by(ORC), |n, _| *n += 1);
    let b = s
        .ticks()
        .add(TickSettings::named("think").owned_by(ORC), |n, _| *n += 1);
    s.ticks().add_prerequisite(b, a).unwrap();
    s.tick(secs(0.1), &mut 0);
    s
}

fn edit<T: serde::Serialize + serde::de::DeserializeOwned>(x: &T, f: impl FnOnce(&mut Value)) -> T {
    let mut v = serde_json::to_value(x).unwrap();
    f(&mut v);
    serde_json::from_value(v).unwrap()
}

#[test]
fn an_epoch_past_the_last_is_refused_and_none_wraps() {
    let moved = orc_world().export_owner(ORC);
    let mut dest = Scheduler::<u64>::new();
    dest.tick(secs(0.1), &mut 0);
    let before = dest.state_hash();
    for epoch in [u64::MAX, i64::MAX as u64 + 1] {
        let forged = edit(&moved, |v| v["epoch"] = epoch.into());
        let err = dest.import_owner(&forged, &mut anything()).unwrap_err();
        assert!(
            matches!(err, ImportError::Restore(RestoreError::Corrupt { .. })),
            "{err}"
        );
        assert_eq!(
            dest.state_hash(),
            before,
            "a refused import changed nothing"
        );
    }
    // The last epoch is accepted; the next export saturates (no wrap to 0, no panic) and is
    // refused everywhere, so the owner's items are never duplicated.
    let last = edit(&moved, |v| v["epoch"] = (i64::MAX as u64).into());
    dest.import_owner(&last, &mut anything()).unwrap();
    let onward = dest.export_owner(ORC);
    assert!(onward.epoch() > i64::MAX as u64);
    assert!(Scheduler::<u64>::new()
        .import_owner(&onward, &mut anything())
        .is_err());
}

/// Sets the generation of the first prerequisite of the function named `name`.
fn damage_prereq(snap: &SchedulerSnapshot, name: &str, gen: u64) -> SchedulerSnapshot {
    edit(snap, |v| {
        let functions = v["ticks"]["functions"].as_array_mut().unwrap();
        let f = (functions.iter_mut())
            .find(|f| f["settings"]["name"] == name)
            .unwrap();
        f["prereqs"][0][1] = gen.into();
    })
}

#[test]
fn a_prerequisite_handle_the_scheduler_never_made_is_refused() {
    let mut s = orc_world();
    // A removed function leaves a prerequisite on a freed slot: that one is fine.
    let gone = s.ticks().add(TickSettings::named("gone"), |n, _| *n += 1);
    let waits = s.ticks().add(TickSettings::named("waits"), |n, _| *n += 1);
    s.ticks().add_prerequisite(waits, gone).unwrap();
    s.ticks().remove(gone);
    let snap = s.snapshot();
    let (back, _) = Scheduler::restore(&snap, &mut anything()).unwrap();
    Scheduler::restore(&back.snapshot(), &mut anything()).unwrap();

    // Generation 0, one past the 20-bit range (one flipped bit), and the generation the
    // freed slot hands out next (the next function there would be aliased).
    for (name, gen) in [("think", 0), ("think", 1 << 20), ("waits", 2)] {
        let damaged = damage_prereq(&snap, name, gen);
        match Scheduler::restore(&damaged, &mut anything()) {
            Err(RestoreError::Corrupt { reason: why }) => {
                assert!(why.contains("never made"), "{why}")
            }
            Err(e) => panic!("{name} gen {gen}: {e}"),
            Ok((s, _)) => {
                // Had it been accepted, the next save would have to restore too.
                Scheduler::restore(&s.snapshot(), &mut anything()).unwrap();
                panic!("{name} gen {gen}: accepted");
            }
        }
    }
}

#[test]
fn a_prerequisite_listed_twice_is_refused() {
    let snap = orc_world().snapshot();
    let twice = edit(&snap, |v| {
        let functions = v["ticks"]["functions"].as_array_mut().unwrap();
        let f = (functions.iter_mut())
            .find(|f| f["settings"]["name"] == "think")
            .unwrap();
        let p = f["prereqs"][0].clone();
        f["prereqs"].as_array_mut().unwrap().push(p);
    });
    assert!(matches!(
        Scheduler::restore(&twice, &mut anything()),
        Err(RestoreError::Corrupt { .. })
    ));
    let moved = orc_world().export_owner(ORC);
    let twice = edit(&moved, |v| {
        let f = &mut v["ticks"][1]["prereqs"];
        let p = f[0].clone();
        f.as_array_mut().unwrap().push(p);
    });
    assert!(Scheduler::<u64>::new()
        .import_owner(&twice, &mut anything())
        .is_err());
}

/// An owner of `n` functions where each waits for every earlier one (n(n-1)/2 edges, the
/// densest acyclic graph), and for a function of another owner by name.
fn dense_owner(n: usize) -> OwnerSnapshot {
    let mut s = Scheduler::<u64>::new();
    let outside = s.ticks().add(TickSettings::named("world"), |n, _| *n += 1);
    let mut made = Vec::new();
    for k in 0..n {
        let h = s.ticks().add(
            TickSettings::named(format!("f{k}")).owned_by(ORC),
            |n, _| *n += 1,
        );
        for &before in &made {
            s.ticks().add_prerequisite(h, before).unwrap();
        }
        s.ticks().add_prerequisite(h, outside).unwrap();
        made.push(h);
    }
    s.export_owner(ORC)
}

#[test]
fn a_dense_owner_imports_whole_and_runs_in_order() {
    let moved = dense_owner(120);
    let bytes = postcard::to_stdvec(&moved).unwrap();
    let moved: OwnerSnapshot = postcard::from_bytes(&bytes).unwrap();
    let mut dest = Scheduler::<Vec<usize>>::new();
    dest.ticks()
        .add(TickSettings::named("world"), |log, _| log.push(usize::MAX));
    // Each function logs the number in its name.
    let log_registry = || {
        Registry::new().other_ticks(|info: &TickInfo| {
            let k: usize = info.settings.name[1..].parse().unwrap_or(usize::MAX);
            Some(TickBody::serial(
                move |log: &mut Vec<usize>, _: &mut TickCx<_>| log.push(k),
            ))
        })
    };
    let map = dest.import_owner(&moved, &mut log_registry()).unwrap();
    assert!(
        map.unlinked_prerequisites().is_empty(),
        "`world` is linked by name"
    );
    let mut log = Vec::new();
    dest.tick(secs(0.1), &mut log);
    let mut expected = vec![usize::MAX];
    expected.extend(0..120);
    assert_eq!(log, expected);
    // The imported graph is the scheduler's own: it saves and restores.
    let saved = dest.snapshot();
    let (back, _) =
        Scheduler::restore(&saved, &mut log_registry()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.state_hash(), dest.state_hash());
}

/// A save file's catch-up cap bounds how many calls one timer makes in a tick: a forged one
/// (16 million, found by the fuzzer) would make one tick run for seconds.
#[test]
fn a_catch_up_cap_past_the_max_is_refused() {
    use tickflow::snapshot::TimerSnapshot;
    use tickflow::time::MAX_CATCH_UP_CAP;
    use tickflow::timer::TimerManager;
    let mut timers = TimerManager::<u64>::new();
    timers.every(millis(40)).call(|n, _| *n += 1);
    let snap = timers.snapshot();
    let bind = |_: &TimerInfo| Some(Box::new(|n: &mut u64, _: &mut TimerCx<u64>| *n += 1) as _);
    for cap in [0, MAX_CATCH_UP_CAP + 1, 16_495_720] {
        let forged: TimerSnapshot = edit(&snap, |v| v["catch_up_cap"] = cap.into());
        assert!(matches!(
            TimerManager::<u64>::restore(
                &forged,
                &mut tickflow::snapshot::Registry::new().other_timers(bind)
            ),
            Err(RestoreError::Corrupt { .. })
        ));
    }
    let at_max: TimerSnapshot = edit(&snap, |v| v["catch_up_cap"] = MAX_CATCH_UP_CAP.into());
    let restored = TimerManager::<u64>::restore(
        &at_max,
        &mut tickflow::snapshot::Registry::new().other_timers(bind),
    )
    .unwrap();
    assert_eq!(restored.catch_up_cap(), MAX_CATCH_UP_CAP);
    let refused = std::panic::catch_unwind(|| {
        TimerManager::<u64>::new().set_catch_up_cap(MAX_CATCH_UP_CAP + 1)
    });
    assert!(refused.is_err());
}

/// A function that "ran" in a frame after the save's would count as having run when that
/// frame came, spending its interval entry without running: it never ran again, and the
/// restored scheduler ran differently from one restored from its own next save (found by the
/// restore fuzz target).
#[test]
fn a_function_that_ran_after_the_saved_frame_is_refused() {
    let mut s = Scheduler::<u64>::new();
    let every = TickSettings::named("think").every(millis(150));
    s.ticks().add(every, |n, _| *n += 1);
    for _ in 0..5 {
        s.tick(millis(50), &mut 0);
    }
    let snap = s.snapshot();
    let future = edit(&snap, |v| v["ticks"]["functions"][0]["last_run"] = 8.into());
    match Scheduler::restore(&future, &mut anything()) {
        Err(RestoreError::Corrupt { reason }) => assert!(reason.contains("last ran in frame 8")),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let now = edit(&snap, |v| v["ticks"]["functions"][0]["last_run"] = 5.into());
    assert!(Scheduler::restore(&now, &mut anything()).is_ok());
}
