//! Nodes side by side on one store: what a restart gives back, keys that cannot collide, the
//! fence on owners, and one process per node.

use std::time::Duration;

use tickflow::prelude::*;
use tickflow::timer::Offline;
use tickflow_store::{Durable, Handovers, Holder, Inspect, Store, StoreError};

use super::{record, registry, resume, set, Log, DT};

fn tick_commit<S: Store>(d: &mut Durable<S>, sched: &mut Scheduler<Log>, log: &mut Log) {
    sched.tick(DT, log);
    d.end_frame(sched, |_, _| Ok(())).unwrap();
}

/// A node that took an owner from another (epoch 1) and restarts holds it at that epoch
/// again: its next commit of the owner's timers passes (the fence does not shut it out of
/// its own owner).
pub fn a_restarted_node_keeps_its_owners<S: Store>(open: impl Fn() -> S) {
    let orc = OwnerId::new(5);
    let (mut a, mut sa) = resume(&open, "a");
    let (mut b, mut sb) = resume(&open, "b");
    set(&mut sa, 5, "build", 50);
    let mut log = Log::new();
    tick_commit(&mut a, &mut sa, &mut log);
    a.send(&mut sa, orc, "b", b"orc".to_vec()).unwrap();
    tick_commit(&mut a, &mut sa, &mut log);
    let arrived = b.receive(&mut sb, &mut registry(), 10).unwrap();
    assert_eq!(
        (arrived.len(), arrived[0].state.as_slice()),
        (1, &b"orc"[..])
    );
    tick_commit(&mut b, &mut sb, &mut log);
    assert_eq!(b.epoch(orc), Some(1));
    drop((b, sb)); // a crash

    let mut b = super::node(&open, "b");
    let (mut sb, resumed) = b.resume(&mut registry()).unwrap();
    assert_eq!(
        (resumed.owners, b.epoch(orc)),
        (1, Some(1)),
        "held again at its epoch"
    );
    set(&mut sb, 5, "build", 20); // the owner's timer changes: its row is written
    set(&mut sb, 5, "tower", 30);
    tick_commit(&mut b, &mut sb, &mut log);
    let rows = open().saved("b").unwrap().timers;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        open().holder(orc).unwrap(),
        Some(Holder {
            node: "b".into(),
            epoch: 1
        })
    );
}

/// A timer with no owner belongs to its node: two zones on one store, each with a timer named
/// "world", keep one each across a restart, and one zone's removal leaves the other's.
pub fn unowned_timers_belong_to_their_node<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = resume(&open, "zone-a");
    let (mut b, mut sb) = resume(&open, "zone-b");
    let world = |s: &mut Scheduler<Log>, f| {
        (s.timers().after(Frames(f)).name("world"))
            .durable(Offline::Freeze)
            .call(record)
    };
    let ha = world(&mut sa, 100);
    world(&mut sb, 200);
    let mut log = Log::new();
    tick_commit(&mut a, &mut sa, &mut log);
    tick_commit(&mut b, &mut sb, &mut log);
    drop((a, sa, b, sb));
    let (mut a, mut sa) = resume(&open, "zone-a");
    let (_b, mut sb) = resume(&open, "zone-b");
    assert_eq!((sa.timers().len(), sb.timers().len()), (1, 1), "one each");
    assert_eq!(sb.timers().durable_timers()[0].period, 200, "zone-b's own");
    let _ = ha;
    sa.timers().clear_named("world");
    tick_commit(&mut a, &mut sa, &mut log);
    assert!(open().saved("zone-a").unwrap().timers.is_empty());
    assert_eq!(
        open().saved("zone-b").unwrap().timers.len(),
        1,
        "the other's row stays"
    );
}

/// Owners are the world's: the registry gives each to one node, and a node's commit that
/// writes another node's owner is refused whole, whether that owner ever moved (epoch 0) or
/// not; the other node's rows stay as they were. Nodes whose owner ids overlap keep every row
/// or are told, never silently share.
pub fn a_node_writes_only_owners_it_holds<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = resume(&open, "zone-a");
    let (mut b, mut sb) = resume(&open, "zone-b");
    let mut log = Log::new();
    for i in 0..100u64 {
        set(&mut sa, 1 + i % 50, &format!("t{i}"), 500);
    }
    tick_commit(&mut a, &mut sa, &mut log);
    assert_eq!(open().saved("zone-a").unwrap().timers.len(), 100);
    assert_eq!(
        open().holder(OwnerId::new(7)).unwrap().unwrap().node,
        "zone-a"
    );
    let theirs = open().saved("zone-a").unwrap();

    // zone-b writes owner 7, which zone-a holds at epoch 0: refused, nothing of it lands.
    set(&mut sb, 7, "t7", 9);
    set(&mut sb, 900, "mine", 9);
    sb.tick(DT, &mut log);
    let err = b.end_frame(&mut sb, |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(&err, StoreError::NotHeld { owner, holder: Some(h), .. }
            if *owner == OwnerId::new(7) && h.node == "zone-a"),
        "{err}"
    );
    assert!(err.is_fenced());
    assert_eq!(
        open().saved("zone-a").unwrap(),
        theirs,
        "zone-a's rows as they were"
    );
    assert_eq!(
        open().saved("zone-b").unwrap().committed,
        0,
        "none of zone-b's commit"
    );

    // zone-b lets owner 7 go: its other owner commits.
    b.forget_owner(OwnerId::new(7));
    sb.remove_owner(OwnerId::new(7));
    b.end_frame(&mut sb, |_, _| Ok(())).unwrap();
    let mine = open().saved("zone-b").unwrap().timers;
    assert_eq!((mine.len(), mine[0].name.as_str()), (1, "mine"));
    assert_eq!(open().saved("zone-a").unwrap().timers.len(), 100);
}

/// A node is run by one live process: a second one is refused while the first renews its
/// lease (by committing), takes the node once the first has stopped, and the first, should it
/// come back, stops with `NodeLost` and writes nothing.
pub fn one_process_runs_a_node<S: Store>(open: impl Fn() -> S) {
    let lease = Duration::from_millis(150);
    let mut first = Durable::new(open(), "solo");
    first.set_lease(lease);
    let (mut s1, _) = first.resume(&mut registry()).unwrap();
    set(&mut s1, 1, "a", 500);
    let mut log = Log::new();
    tick_commit(&mut first, &mut s1, &mut log);

    let (done, stop) = std::sync::mpsc::channel::<()>();
    let (f, s) = (&mut first, &mut s1);
    let live = std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            // The first process keeps committing every 10 ms while the second tries.
            let mut log = Log::new();
            while stop.try_recv().is_err() {
                tick_commit(f, s, &mut log);
                std::thread::sleep(Duration::from_millis(10));
            }
            true
        });
        let mut second = Durable::new(open(), "solo");
        second.set_lease(lease);
        let r = second.resume(&mut registry()).map(drop);
        done.send(()).unwrap();
        worker.join().unwrap().then_some(r).expect("committed")
    });
    let err = live.unwrap_err();
    assert!(
        matches!(&err, StoreError::NodeHeld { node, .. } if node == "solo"),
        "{err}"
    );

    // The first stops committing (paused, say): the second takes the node after the lease.
    let mut second = Durable::new(open(), "solo");
    second.set_lease(lease);
    let (mut s2, resumed) = second.resume(&mut registry()).unwrap();
    assert!(resumed.resumed);
    tick_commit(&mut second, &mut s2, &mut log);
    let before = open().saved("solo").unwrap();
    set(&mut s1, 1, "b", 5);
    s1.tick(DT, &mut log);
    let err = first.end_frame(&mut s1, |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(&err, StoreError::NodeLost { node } if node == "solo"),
        "{err}"
    );
    assert_eq!(
        open().saved("solo").unwrap(),
        before,
        "nothing of the old process landed"
    );
}
