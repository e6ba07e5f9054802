//! `Registry`: callbacks bound by name tables restore the test world exactly as its
//! hand-written resolver does, refuse what no table names, and bind every kind of item.

use crate::snapshot_world;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use snapshot_world::*;
use tickflow::snapshot::Registry;

/// Every callback of the test world, by name.
fn registry(leave_out: &str) -> Registry<Game> {
    let mut r = Registry::new();
    for name in ["regen", "poison", "wave", "boom", "frozen", "late"] {
        if name != leave_out {
            r = r.timer_with(name, move |_| timer_cb(name).unwrap());
        }
    }
    for name in [
        "input", "physics", "ai", "slow", "off", "spawned", "late", "spawner",
    ] {
        r = r.tick_with(name, move |_| TickBody::serial(tick_fn(name).unwrap()));
    }
    for uuid in 1..=4 {
        r = r.latent_with(uuid, |info| Box::new(completion(info.owner, info.uuid)));
    }
    r.tick_with("par", |_| TickBody::parallel((), par))
        .tickable("score", |_| Score)
        .latent_action("blink", |data| {
            let n = *data.first()?;
            Some(Box::new(Blink(n)) as Box<dyn LatentAction<Game>>)
        })
}

#[test]
fn a_registry_restores_the_world_as_its_resolver_does() {
    let (mut s, mut g) = build();
    s.ticks().add_parallel(TickSettings::named("par"), (), par);
    run(&mut s, &mut g, 1, 40);
    let snap = s.snapshot();

    let mut by_hand = World {
        missing: "",
        asked: vec![],
    };
    let (mut a, report_a) = Scheduler::restore(&snap, &mut by_hand).unwrap();
    let (mut b, report_b) = Scheduler::restore(&snap, &mut registry("")).unwrap();
    assert_eq!(report_a, report_b);
    assert_eq!(a.state_hash(), b.state_hash());
    let (mut ga, mut gb) = (g.clone(), g.clone());
    let (log_a, hashes_a) = run(&mut a, &mut ga, 41, 120);
    let (log_b, hashes_b) = run(&mut b, &mut gb, 41, 120);
    assert!(!log_a.is_empty());
    assert_eq!(log_a, log_b);
    assert_eq!(hashes_a, hashes_b);
}

#[test]
fn a_name_no_table_holds_is_refused_by_name() {
    let (mut s, mut g) = build();
    run(&mut s, &mut g, 1, 10);
    let err = Scheduler::restore(&s.snapshot(), &mut registry("poison")).unwrap_err();
    assert!(
        matches!(&err, RestoreError::Unbound { kind: "timer", name, .. } if name == "poison"),
        "{err}"
    );
}

#[test]
fn timers_that_share_a_name_each_get_a_clone_and_hooks_come_back() {
    let fired = Arc::new(AtomicU32::new(0));
    let mut s = Scheduler::<u32>::new();
    let count = |n: &mut u32, _: &mut TimerCx<u32>| *n += 1;
    for k in 1..=3 {
        s.timers().every(millis(100 * k)).name("tick").call(count);
    }
    let hooked = s
        .timers()
        .after(secs(5.0))
        .name("fuse")
        .on_cancel(|n: &mut u32| *n += 100)
        .call(|_, _| {});
    s.tick(Span::ZERO, &mut 0); // the timers start counting
    let seen = fired.clone();
    let mut names = Registry::new()
        .timer("tick", count)
        .timer("fuse", |_: &mut u32, _: &mut TimerCx<u32>| {})
        .on_cancel("fuse", |n: &mut u32| *n += 100)
        .after_restore(move |_, _| {
            seen.fetch_add(1, Ordering::Relaxed);
        });
    let (mut restored, report) = Scheduler::restore(&s.snapshot(), &mut names).unwrap();
    assert!(report.is_complete(), "{report}");
    let mut n = 0;
    for _ in 0..3 {
        restored.tick(millis(100), &mut n);
    }
    assert_eq!(n, 3 + 1 + 1, "each of the three timers kept its own period");
    assert!(restored.timers().clear(hooked));
    restored.tick(millis(1), &mut n);
    assert_eq!(n, 105, "the hook came back");

    // `after_restore` runs after each restore of a sync test.
    let mut ctx = 0;
    let report = sync_test(
        &mut restored,
        &mut ctx,
        &mut names,
        10,
        5,
        millis(16),
        |n| u64::from(*n),
    )
    .unwrap();
    assert!(report.rollbacks > 0);
    assert_eq!(fired.load(Ordering::Relaxed) as u64, report.rollbacks);
}

#[test]
fn custom_latent_actions_from_bytes_that_make_none_are_refused() {
    let (mut s, mut g) = build();
    run(&mut s, &mut g, 1, 10);
    let snap = s.snapshot();
    let mut r = registry("").latent_action("blink", |_| None);
    let err = Scheduler::restore(&snap, &mut r).unwrap_err();
    assert!(
        matches!(
            &err,
            RestoreError::Unbound {
                kind: "latent action",
                ..
            }
        ),
        "{err}"
    );
    assert!(format!("{r:?}").contains("\"blink\""));
}

/// A name in a table wins; what no table names goes to the fallback of its kind, which may
/// refuse it (then the restore fails naming it, and nothing changes).
#[test]
fn fallbacks_bind_what_no_table_names() {
    let mut s = Scheduler::<Vec<String>>::new();
    for name in ["a", "b"] {
        s.timers()
            .every(millis(100))
            .name(name)
            .tag(7)
            .call(|_, _| {});
        s.ticks()
            .add(TickSettings::named(name), |_: &mut Vec<String>, _| {});
    }
    s.latent()
        .delay(OwnerId::new(1), 9, millis(100), |_: &mut Vec<String>, _| {});
    let snap = s.snapshot();
    let log = |what: String| {
        move |l: &mut Vec<String>, _: &mut TimerCx<Vec<String>>| l.push(what.clone())
    };
    let mut r = Registry::new()
        .timer("a", log("table a".into()))
        .other_timers(move |info| {
            let what = format!("fallback {} tag {:?}", info.name.as_deref()?, info.tag);
            Some(Box::new(log(what)))
        })
        .tick("a", |l: &mut Vec<String>, _: &mut TickCx<Vec<String>>| {
            l.push("tick a".into())
        })
        .other_ticks(|info| {
            let name = info.settings.name.clone();
            Some(TickBody::serial(
                move |l: &mut Vec<String>, _: &mut TickCx<Vec<String>>| {
                    l.push(format!("tick {name} by fallback"))
                },
            ))
        })
        .other_latent(|info| {
            let uuid = info.uuid;
            Some(Box::new(
                move |l: &mut Vec<String>, _: &mut LatentCx<Vec<String>>| {
                    l.push(format!("latent {uuid} by fallback"))
                },
            ))
        });
    let (mut back, report) = Scheduler::restore(&snap, &mut r).unwrap();
    assert!(report.is_complete());
    let mut log = Vec::new();
    back.tick(millis(100), &mut log);
    assert_eq!(
        log,
        [
            "tick a",
            "tick b by fallback",
            "table a",
            "fallback b tag Some(7)",
            "latent 9 by fallback"
        ]
    );
    // A fallback that refuses leaves the item unbound.
    let mut refusing = Registry::<Vec<String>>::new()
        .other_timers(|_| None)
        .other_ticks(|_| None);
    let err = Scheduler::restore(&snap, &mut refusing).unwrap_err();
    assert!(err.to_string().contains("tick function"), "{err}");
}
