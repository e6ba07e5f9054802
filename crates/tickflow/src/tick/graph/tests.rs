//! Unit tests of `graph.rs`.

use super::*;
use crate::tick::interval::QueuedCooldown;
use crate::time::secs;

fn graph() -> TickGraph<()> {
    TickGraph::new(Default::default())
}

pub(crate) fn body() -> Body<()> {
    Body::Serial(crate::timer::Callback::new(|_, _| {}))
}

fn add(g: &mut TickGraph<()>, name: &str) -> TickHandle {
    g.insert(TickSettings::named(name), body()).unwrap()
}

#[test]
fn cycles_are_refused_with_every_name() {
    let mut g = graph();
    let [a, b, c] = ["a", "b", "c"].map(|n| add(&mut g, n));
    g.add_prereq(a, b).unwrap();
    g.add_prereq(b, c).unwrap();
    let err = g.add_prereq(c, a).unwrap_err();
    assert_eq!(
        err,
        TickError::Cycle {
            path: vec!["c".into(), "a".into(), "b".into()]
        }
    );
    assert_eq!(
        g.add_prereq(a, a).unwrap_err(),
        TickError::Cycle {
            path: vec!["a".into()]
        }
    );
    // Nothing changed: c still has no prerequisite.
    assert!(g.get(c).unwrap().prereqs.is_empty());
}

#[test]
fn stale_handles_are_unknown() {
    let mut g = graph();
    let a = add(&mut g, "a");
    let b = add(&mut g, "b");
    assert!(g.remove(b));
    assert!(!g.remove(b));
    assert_eq!(
        g.add_prereq(a, b),
        Err(TickError::UnknownTick { handle: b })
    );
    let b2 = add(&mut g, "b2");
    assert_eq!(b2.index(), b.index(), "slot reused");
    assert!(g.get(b).is_none());
    assert!(!g.set_enabled(b, false));
    assert!(!g.set_interval(b, secs(1.0)));
}

/// A queue entry names a slot and a stamp, not a tag: the stamp moves on when the slot is
/// freed and again when it is taken, so no entry queued before the removal holds for the
/// function that takes the slot.
#[test]
fn a_reused_slot_holds_no_entry_queued_before() {
    let mut g = graph();
    let s = TickSettings {
        interval: secs(0.5),
        ..TickSettings::named("a")
    };
    let a = g.insert(s.clone(), body()).unwrap();
    let entry = |g: &TickGraph<()>, h: TickHandle| QueuedCooldown {
        due: 0,
        slot: h.index(),
        stamp: g.cool[h.index() as usize].stamp,
    };
    let old = entry(&g, a);
    assert!(g.cool[a.index() as usize].holds(&old));
    assert!(g.remove(a));
    assert!(!g.cool[a.index() as usize].holds(&old), "a free slot");
    let b = g.insert(s, body()).unwrap();
    assert_eq!(b.index(), a.index(), "slot reused");
    assert!(!g.cool[b.index() as usize].holds(&old));
    assert!(g.cool[b.index() as usize].holds(&entry(&g, b)));
}

#[test]
fn owners_are_removed_together() {
    let mut g = graph();
    let owner = OwnerId::from(7);
    let s = TickSettings {
        owner: Some(owner),
        ..TickSettings::default()
    };
    let a = g.insert(s.clone(), body()).unwrap();
    let b = g.insert(s, body()).unwrap();
    let c = add(&mut g, "c");
    assert!(g.remove(a));
    assert_eq!(g.remove_owner(owner), 1);
    assert!(g.get(b).is_none());
    assert!(g.get(c).is_some());
    assert_eq!(g.remove_owner(owner), 0);
}

/// The frame reads these per function: they stay small (see the module docs' cost).
#[test]
#[cfg(target_pointer_width = "64")]
fn per_function_records_stay_small() {
    use crate::tick::interval::Cooldown;
    assert_eq!(std::mem::size_of::<Hot>(), 16);
    assert_eq!(std::mem::size_of::<Cooldown>(), 64);
    assert_eq!(std::mem::align_of::<Cooldown>(), 64, "one cache line each");
    // A serial callback's record in the runner's table (`run/bodies.rs`).
    assert_eq!(
        std::mem::size_of::<Option<crate::tick::body::SerialFn<()>>>(),
        16
    );
    assert!(std::mem::size_of::<Option<Node>>() <= 128);
}

#[test]
fn acyclic_finds_cycles_of_any_length() {
    use super::save::acyclic;
    assert!(acyclic(3, [(0, 1), (1, 2), (0, 2)].into_iter()));
    assert!(!acyclic(3, [(0, 1), (1, 2), (2, 0)].into_iter()));
    assert!(
        !acyclic(1, [(0, 0)].into_iter()),
        "a function waiting for itself"
    );
    assert!(acyclic(0, std::iter::empty()));
}
