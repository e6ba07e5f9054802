//! Damaged snapshots: a save file edited by hand, or bytes flipped on the way. Restoring one
//! either fails with a [`RestoreError`] or builds a scheduler that runs; it never panics, and
//! values a running scheduler cannot reach (a clock or counter at its end, a tick function that
//! last ran in the future) are refused as corrupt.
#![cfg(feature = "serde")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use proptest::prelude::*;
use serde_json::{json, Value};
use tickflow::prelude::*;
use tickflow::snapshot::TimerSnapshot;
use tickflow::snapshot::{Registry, RestoreError, SchedulerSnapshot};
use tickflow::tick::TickBody;
use tickflow::{Deferred, Tickable, TickableCx};

struct Score;
impl Tickable<u64> for Score {
    fn tick(&mut self, n: &mut u64, _cx: &mut TickableCx<'_, u64>) {
        *n += 1;
    }
    fn name(&self) -> &str {
        "score"
    }
}

fn count(n: &mut u64, _: &mut TimerCx<u64>) {
    *n += 1;
}

/// Binds whatever it is asked for, so that only the data decides whether a restore works.
fn anything() -> Registry<u64> {
    Registry::new()
        .other_timers(|_| Some(Box::new(count)))
        .other_ticks(|info| {
            Some(if info.parallel {
                TickBody::parallel((), |_, _: &u64, out: &mut Deferred<u64>| {
                    out.run(|n| *n += 1)
                })
            } else {
                TickBody::serial(|n: &mut u64, _: &mut TickCx<u64>| *n += 1)
            })
        })
        .other_tickables(|_| Some(Box::new(Score)))
        .other_latent(|_| Some(Box::new(|n: &mut u64, _: &mut LatentCx<'_, u64>| *n += 1)))
}

/// A scheduler with some of everything, including removed items (free lists) and a pending
/// abort hook.
fn world() -> Scheduler<u64> {
    let mut s = Scheduler::<u64>::new();
    let a = s.ticks().add(TickSettings::named("a"), |n, _| *n += 1);
    let every = TickSettings {
        interval: millis(200),
        ..TickSettings::named("b")
    };
    let b = s.ticks().add(every, |n, _| *n += 1);
    s.ticks().add_prerequisite(b, a).unwrap();
    let gone = s.ticks().add(TickSettings::named("gone"), |n, _| *n += 1);
    for name in ["p", "q"] {
        let settings = TickSettings::named(name).in_group(TickGroup::PostPhysics);
        s.ticks()
            .add_parallel(settings, (), |_, _, out| out.run(|n| *n += 1));
    }
    let paused = TickSettings {
        tick_when_paused: true,
        interval: millis(50),
        ..TickSettings::named("menu")
    };
    s.ticks().add(paused, |n, _| *n += 1);
    s.tickables().add(Score);
    let removed = s.tickables().add(Score);
    s.timers().every(millis(100)).name("regen").call(count);
    s.timers()
        .after(millis(500))
        .owner(OwnerId::new(2))
        .call(count);
    s.timers().every(Frames(3)).times(4).call(count);
    let (door, trap) = (OwnerId::new(1), OwnerId::new(3));
    s.latent().delay(door, 1, secs(1.0), |n, _| *n += 1);
    s.latent()
        .retriggerable_delay(door, 2, secs(0.5), |n, _| *n += 1);
    s.latent().delay(trap, 3, secs(2.0), |n, _| *n += 1);
    let mut n = 0;
    for _ in 0..5 {
        s.tick(millis(16), &mut n);
    }
    s.ticks().remove(gone);
    s.tickables().remove(removed);
    s.remove_owner(trap);
    s
}

/// Runs `f`: `Ok` with what it returned, `Err` with the message when it panicked.
fn no_panic(f: impl FnOnce() -> bool) -> Result<bool, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Restores and runs a damaged snapshot: `Ok(true)` when it restored and ran, `Ok(false)`
/// when restore refused it, `Err` when something panicked.
fn exercise(snap: &SchedulerSnapshot) -> Result<bool, String> {
    no_panic(|| {
        let Ok((mut s, _)) = Scheduler::restore(snap, &mut anything()) else {
            return false;
        };
        // A damaged period may ask for billions of catch-up calls: that is not a fault.
        s.timers().set_fire_budget(Some(1_000));
        let mut n = 0;
        for _ in 0..20 {
            s.tick(millis(100), &mut n);
        }
        s.tick(secs(1e6), &mut n);
        s.state_hash();
        s.ticks().add(TickSettings::named("new"), |n, _| *n += 1);
        s.tickables().add(Score);
        s.timers().after(secs(1.0)).call(count);
        s.tick(millis(16), &mut n);
        true
    })
}

/// [`exercise`] for a timer manager on its own.
fn exercise_timers(snap: &TimerSnapshot) -> Result<bool, String> {
    no_panic(|| {
        let Ok(mut t) = TimerManager::restore(
            snap,
            &mut tickflow::snapshot::Registry::new().other_timers(|_| Some(Box::new(count))),
        ) else {
            return false;
        };
        t.set_fire_budget(Some(1_000));
        let mut n = 0;
        for _ in 0..20 {
            t.tick(millis(100), &mut n);
        }
        t.tick(secs(1e6), &mut n);
        t.list();
        t.snapshot();
        t.after(secs(1.0)).call(count);
        true
    })
}

/// Sets the bytes at the (wrapped) indexes.
fn flip(bytes: &mut [u8], flips: &[(prop::sample::Index, u8)]) {
    for (at, byte) in flips {
        bytes[at.index(bytes.len())] = *byte;
    }
}

/// The path of every leaf (number, bool, null) of a JSON value.
fn leaves(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                at.push(i.to_string());
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::Object(fields) => {
            for (k, x) in fields {
                at.push(k.clone());
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::String(_) => {}
        _ => out.push(at.clone()),
    }
}

fn leaf<'a>(mut v: &'a mut Value, path: &[String]) -> &'a mut Value {
    for k in path {
        v = match v {
            Value::Array(items) => &mut items[k.parse::<usize>().unwrap()],
            other => &mut other[k.as_str()],
        };
    }
    v
}

#[test]
fn every_field_at_every_extreme_is_refused_or_runs() {
    let json = serde_json::to_value(world().snapshot()).unwrap();
    let mut paths = Vec::new();
    leaves(&json, &mut Vec::new(), &mut paths);
    let extremes = [
        json!(0),
        json!(1),
        json!(u32::MAX),
        json!(u64::from(u32::MAX) + 1),
        json!(u64::MAX),
        json!(-1.0),
        json!(1e300),
        json!(true),
        json!(null),
    ];
    let (mut restored, mut refused, mut panics) = (0, 0, Vec::new());
    for path in &paths {
        for extreme in &extremes {
            let mut edited = json.clone();
            *leaf(&mut edited, path) = extreme.clone();
            let Ok(snap) = serde_json::from_value::<SchedulerSnapshot>(edited) else {
                continue; // not even the right type: serde said so
            };
            match exercise(&snap) {
                Ok(true) => restored += 1,
                Ok(false) => refused += 1,
                Err(msg) => panics.push(format!("{} = {extreme}: {msg}", path.join("."))),
            }
        }
    }
    assert!(panics.is_empty(), "{}", panics.join("\n"));
    // Most edits are values a scheduler could hold; some contradict the rest.
    assert!(
        paths.len() > 100 && restored > 300 && refused > 50,
        "{} fields, {restored} restored, {refused} refused",
        paths.len()
    );
}

#[test]
fn values_no_running_scheduler_reaches_are_corrupt() {
    let json = serde_json::to_value(world().snapshot()).unwrap();
    let b = json["ticks"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .position(|f| f["settings"]["name"] == "b")
        .unwrap()
        .to_string();
    let edits: [(&[&str], Value); 6] = [
        (&["frame"], json!(u64::MAX)),
        (&["timers", "clocks", "0"], json!(u64::MAX)),
        (&["timers", "clocks", "2"], json!(u64::MAX)),
        (&["ticks", "next_seq"], json!(u64::MAX)),
        (&["ticks", "functions", &b, "last_tick"], json!(u64::MAX)),
        (&["latent", "frame"], json!(u64::MAX)),
    ];
    for (path, value) in edits {
        let mut edited = json.clone();
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        *leaf(&mut edited, &path) = value;
        let snap: SchedulerSnapshot = serde_json::from_value(edited).unwrap();
        let err = Scheduler::restore(&snap, &mut anything())
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(err, RestoreError::Corrupt { .. }),
            "{}: {err}",
            path.join(".")
        );
    }
}

proptest! {
    #![proptest_config(crate::cases(3000))]

    #[test]
    fn flipped_bytes_are_refused_or_run(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = postcard::to_stdvec(&world().snapshot()).unwrap();
        flip(&mut bytes, &flips);
        if let Ok(snap) = postcard::from_bytes::<SchedulerSnapshot>(&bytes) {
            let ran = exercise(&snap);
            prop_assert!(ran.is_ok(), "{:?}", ran);
        }
    }

    #[test]
    fn flipped_timer_bytes_are_refused_or_run(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = postcard::to_stdvec(&world().timers().snapshot()).unwrap();
        flip(&mut bytes, &flips);
        if let Ok(snap) = postcard::from_bytes::<TimerSnapshot>(&bytes) {
            let ran = exercise_timers(&snap);
            prop_assert!(ran.is_ok(), "{:?}", ran);
        }
    }
}
