//! Owners moving between nodes: the registry and outbox step by step, and the whole handover
//! run by `Durable`, with either side stopped at each point.

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow_store::{
    Accepted, Durable, Handover, Handovers, Holder, Inspect, Parcel, Settled, Store, StoreError,
};

use super::resume::{Flaky, AFTER_OWNERS};
use super::{populate, registry, resume, set, Log, DT};

fn holder(node: &str, epoch: u64) -> Holder {
    Holder {
        node: node.into(),
        epoch,
    }
}

fn parcel(owner: OwnerId, epoch: u64, from: &str, to: &str, bytes: &[u8]) -> Parcel {
    Parcel {
        owner,
        epoch,
        sender: from.into(),
        receiver: to.into(),
        bytes: bytes.to_vec(),
    }
}

/// The protocol's steps: an owner moves once, a parcel sent twice is one, delivered twice is
/// stale, a stale sender is refused, a refused parcel leaves its sender the owner, and a
/// failed effects hook rolls the acceptance back.
pub fn an_owner_moves_once<S: Store>(open: impl Fn() -> S) {
    let orc = OwnerId::new(5);
    let (mut a, mut b) = (open(), open());
    assert_eq!(a.register(orc, "n1").unwrap(), holder("n1", 0));
    assert_eq!(
        b.register(orc, "n2").unwrap(),
        holder("n1", 0),
        "registered once"
    );
    let p = parcel(orc, 0, "n1", "n2", b"snapshot");
    a.send(&p).unwrap();
    a.send(&p).unwrap();
    assert_eq!(a.settle(orc, "n1", 0).unwrap(), Settled::Waiting);
    let inbox = b.inbox("n2", 10).unwrap();
    assert_eq!(inbox, std::slice::from_ref(&p), "sent twice, there once");
    assert_eq!(b.accept(&inbox[0], |_| Ok(())).unwrap(), Accepted::Taken(1));
    assert_eq!(
        a.settle(orc, "n1", 0).unwrap(),
        Settled::Moved(holder("n2", 1))
    );
    assert_eq!(
        b.accept(&p, |_| Ok(())).unwrap(),
        Accepted::Stale(Some(holder("n2", 1)))
    );
    let stale = a.send(&p).unwrap_err();
    assert!(matches!(stale, StoreError::NotHeld { .. }), "{stale}");
    assert!(b.inbox("n2", 10).unwrap().is_empty());

    // n2 -> n1, refused: n2 keeps the owner.
    let back = parcel(orc, 1, "n2", "n1", b"damaged");
    b.send(&back).unwrap();
    let got = a.inbox("n1", 10).unwrap();
    assert!(a.refuse(&got[0]).unwrap());
    assert_eq!(b.settle(orc, "n2", 1).unwrap(), Settled::Kept);
    assert_eq!(a.holder(orc).unwrap(), Some(holder("n2", 1)));

    // Again, and n1's effects fail: nothing of the acceptance stays.
    b.send(&back).unwrap();
    assert!(a
        .accept(&back, |_| Err(StoreError::Setting("no".into())))
        .is_err());
    assert_eq!(a.holder(orc).unwrap(), Some(holder("n2", 1)));
    assert_eq!(b.settle(orc, "n2", 1).unwrap(), Settled::Waiting);
    assert_eq!(a.accept(&back, |_| Ok(())).unwrap(), Accepted::Taken(2));
    assert!(a.inbox("n1", 10).unwrap().is_empty(), "no parcel is left");
}

/// The batch forms: many owners move in three transactions, as each would alone; a batch with
/// one parcel its sender does not hold sends nothing.
pub fn batches_move_many_owners_once<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut b) = (open(), open());
    let owners: Vec<OwnerId> = (100..120).map(OwnerId::new).collect();
    for &o in &owners {
        a.register(o, "n1").unwrap();
    }
    let parcels: Vec<Parcel> = (owners.iter())
        .map(|&o| parcel(o, 0, "n1", "n2", &o.get().to_le_bytes()))
        .collect();
    a.send_all(&parcels).unwrap();
    a.send_all(&parcels).unwrap();
    let sent: Vec<(OwnerId, u64)> = owners.iter().map(|&o| (o, 0)).collect();
    assert!(a
        .settle_all(&sent, "n1")
        .unwrap()
        .iter()
        .all(|s| *s == Settled::Waiting));
    let mut inbox = b.inbox("n2", 100).unwrap();
    inbox.sort_by_key(|p| p.owner);
    assert_eq!(inbox, parcels, "sent twice, there once");
    let taken = b.accept_all(&inbox, |_| Ok(())).unwrap();
    assert!(taken.iter().all(|t| *t == Accepted::Taken(1)), "{taken:?}");
    let moved = a.settle_all(&sent, "n1").unwrap();
    assert!(moved.iter().all(|s| *s == Settled::Moved(holder("n2", 1))));
    let mut back: Vec<Parcel> = (parcels.iter())
        .map(|p| parcel(p.owner, 1, "n2", "n1", &p.bytes))
        .collect();
    back[7].sender = "n3".into();
    let err = b.send_all(&back).unwrap_err();
    assert!(matches!(err, StoreError::NotHeld { .. }), "{err}");
    assert!(a.inbox("n1", 100).unwrap().is_empty(), "all or none");
}

/// Two nodes in lockstep and the same world run alone: `owner`'s timers make the same calls
/// on the same frames whether it stays or walks.
struct Pair<S: Store> {
    a: Durable<S>,
    sa: Scheduler<Log>,
    b: Durable<S>,
    sb: Scheduler<Log>,
    log: Log,
}

impl<S: Store> Pair<S> {
    fn new(open: &impl Fn() -> S) -> Pair<S> {
        let (a, mut sa) = resume(open, "a");
        let (b, sb) = resume(open, "b");
        populate(&mut sa, 40, 7);
        Pair {
            a,
            sa,
            b,
            sb,
            log: Log::new(),
        }
    }

    /// One frame on both nodes, each committing.
    fn frame(&mut self) {
        self.tick();
        self.commit();
    }

    fn tick(&mut self) {
        self.sa.tick(DT, &mut self.log);
        self.sb.tick(DT, &mut self.log);
    }

    fn commit(&mut self) {
        self.a.end_frame(&mut self.sa, |_, _| Ok(())).unwrap();
        self.b.end_frame(&mut self.sb, |_, _| Ok(())).unwrap();
    }
}

/// The world alone, for the calls a walk must make.
fn alone(frames: u64) -> Log {
    let mut sched = Scheduler::new();
    populate(&mut sched, 40, 7);
    let mut log = Log::new();
    for _ in 0..frames {
        sched.tick(DT, &mut log);
    }
    log
}

fn sorted(mut log: Log) -> Log {
    log.sort();
    log
}

/// `Durable::send` and `receive`: an owner walks a → b → a with its rows, its state and its
/// epochs, and makes the calls it would have made at home.
pub fn an_owner_walks_between_durable_nodes<S: Store>(open: impl Fn() -> S) {
    let orc = OwnerId::new(3);
    let mut p = Pair::new(&open);
    for _ in 0..5 {
        p.frame();
    }
    p.a.send(&mut p.sa, orc, "b", b"hp 40".to_vec()).unwrap();
    assert_eq!(p.a.in_flight(), [orc]);
    p.frame(); // a's commit puts the parcel in the outbox
    let arrived = p.b.receive(&mut p.sb, &mut registry(), 10).unwrap();
    assert_eq!(
        (arrived[0].owner, arrived[0].state.as_slice()),
        (orc, &b"hp 40"[..])
    );
    assert!(
        p.b.receive(&mut p.sb, &mut registry(), 10)
            .unwrap()
            .is_empty(),
        "taken once"
    );
    p.frame(); // b takes it (after a's commit of this frame)
    assert!(p.a.handovers().is_empty());
    let on_b = open().saved("b").unwrap().timers;
    assert!(!on_b.is_empty() && on_b.iter().all(|t| t.owner == orc));
    p.frame(); // a settles
    assert_eq!(
        p.a.handovers(),
        [Handover::Moved {
            owner: orc,
            to: "b".into()
        }]
    );
    assert_eq!((p.a.epoch(orc), p.b.epoch(orc)), (None, Some(1)));
    p.frame(); // a's rows of the owner go
    assert!(open()
        .saved("a")
        .unwrap()
        .timers
        .iter()
        .all(|t| t.owner != orc));

    p.b.send(&mut p.sb, orc, "a", Vec::new()).unwrap();
    p.frame();
    assert_eq!(
        p.a.receive(&mut p.sa, &mut registry(), 10).unwrap().len(),
        1
    );
    for _ in 0..80 {
        p.frame();
    }
    assert_eq!(p.a.epoch(orc), Some(2));
    once_each(p.log, orc, alone(90));
}

/// Every owner but `walker` made the calls of `home`; `walker`, whose time stood still while
/// it was on its way, made each of its calls once, none skipped.
fn once_each(log: Log, walker: OwnerId, home: Log) {
    let (mine, others): (Log, Log) = log.into_iter().partition(|c| c.1 == walker.get());
    let (_, want_others): (Log, Log) = home.into_iter().partition(|c| c.1 == walker.get());
    assert_eq!(sorted(others), sorted(want_others));
    assert!(!mine.is_empty());
    let mut names: Vec<&str> = mine.iter().map(|c| c.2.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let calls: Vec<u64> = mine.iter().filter(|c| c.2 == name).map(|c| c.3).collect();
        assert_eq!(
            calls,
            (0..calls.len() as u64).collect::<Vec<_>>(),
            "{name}: once each"
        );
    }
}

/// A sender stopped with its parcel in the outbox resumes the owner frozen: it does not run
/// it while the parcel waits, and once the receiver took it, settles and drops it by itself.
pub fn a_sender_restarted_mid_handover_runs_the_owner_once<S: Store>(open: impl Fn() -> S) {
    let orc = OwnerId::new(3);
    let mut p = Pair::new(&open);
    for _ in 0..5 {
        p.frame();
    }
    p.a.send(&mut p.sa, orc, "b", Vec::new()).unwrap();
    p.frame();
    // a crashes with the parcel on its way; it comes back at once.
    drop(std::mem::replace(&mut p.a, super::node(&open, "a")));
    let (sa, resumed) = p.a.resume(&mut registry()).unwrap();
    p.sa = sa;
    assert_eq!(resumed.in_flight, [orc]);
    assert!(p.sa.is_frozen(orc), "frozen: the owner does not run here");
    for _ in 0..3 {
        p.frame(); // b has not looked at its inbox: the parcel waits
    }
    assert!(p.a.handovers().is_empty());
    p.b.receive(&mut p.sb, &mut registry(), 10).unwrap();
    for _ in 0..80 {
        p.frame();
    }
    assert_eq!(
        p.a.handovers(),
        [Handover::Moved {
            owner: orc,
            to: "b".into()
        }]
    );
    assert!(!p.sa.is_frozen(orc));
    // The frames the parcel waited, the owner ran nowhere: its calls come late on b, never
    // twice and none skipped.
    once_each(p.log, orc, alone(89));
}

/// A resume reads one snapshot. A sender restarted with its owner in flight reads the
/// registry (the owner is its own), the receiver's commit takes the owner, and only then does
/// the sender read its outbox: it must still find its parcel there, resume the owner frozen and
/// settle it as moved. Read a statement at a time (PostgreSQL's read committed), the parcel was
/// gone and the owner ran on both nodes, until the sender's next send of it was refused.
pub fn a_resume_reads_one_snapshot<S: Store + 'static>(open: impl Fn() -> S) {
    let orc = OwnerId::new(3);
    let (mut a, mut sa) = resume(&open, "a");
    populate(&mut sa, 40, 7);
    let mut log = Log::new();
    sa.tick(DT, &mut log);
    a.end_frame(&mut sa, |_, _| Ok(())).unwrap();
    a.send(&mut sa, orc, "b", Vec::new()).unwrap();
    sa.tick(DT, &mut log);
    a.end_frame(&mut sa, |_, _| Ok(())).unwrap();
    drop((a, sa)); // a crashes with the parcel on its way
    let mut receiver = open();
    let p = receiver.inbox("b", 10).unwrap().remove(0);
    *AFTER_OWNERS.lock().unwrap() = Some(Box::new(move || {
        assert_eq!(receiver.accept(&p, |_| Ok(())).unwrap(), Accepted::Taken(1));
    }));
    let mut a = Durable::new(Flaky(open()), "a");
    a.set_lease(std::time::Duration::from_millis(30));
    let (mut sa, resumed) = a.resume(&mut registry()).unwrap();
    assert!(AFTER_OWNERS.lock().unwrap().is_none(), "taken mid-read");
    assert_eq!(
        resumed.in_flight,
        [orc],
        "the parcel read with the registry"
    );
    assert!(sa.is_frozen(orc));
    for _ in 0..3 {
        sa.tick(DT, &mut log);
        a.end_frame(&mut sa, |_, _| Ok(())).unwrap();
    }
    let moved = Handover::Moved {
        owner: orc,
        to: "b".into(),
    };
    assert_eq!(a.handovers(), [moved]);
    assert_eq!(a.epoch(orc), None);
    assert!(sa.timers().list().iter().all(|t| t.owner != Some(orc)));
}

/// A parcel the receiver cannot import is refused: the sender keeps the owner and runs it
/// again, also when the sender was restarted while it waited.
pub fn a_refused_parcel_leaves_the_owner_with_its_sender<S: Store>(open: impl Fn() -> S) {
    let orc = OwnerId::new(3);
    let mut p = Pair::new(&open);
    p.frame();
    p.a.send(&mut p.sa, orc, "b", Vec::new()).unwrap();
    p.frame();
    drop(std::mem::replace(&mut p.a, super::node(&open, "a")));
    p.sa = p.a.resume(&mut registry()).unwrap().0;
    let mut nothing: Registry<Log> = Registry::new();
    assert!(p.b.receive(&mut p.sb, &mut nothing, 10).unwrap().is_empty());
    p.frame(); // b refuses the parcel
    p.frame(); // a settles
    assert_eq!(p.a.handovers(), [Handover::Kept { owner: orc }]);
    assert!(!p.sa.is_frozen(orc) && p.a.epoch(orc) == Some(0));
    assert_eq!(open().holder(orc).unwrap(), Some(holder("a", 0)));
    let before = p.sa.timers().len();
    assert!(before > 0);
    set(&mut p.sa, 3, "after", 1);
    p.frame();
    assert!(
        p.log.iter().any(|c| c.1 == 3 && c.2 == "after"),
        "it runs on a again"
    );
}

/// A receiver that imported a parcel and stopped before its commit finds the parcel in its
/// inbox again after the restart, and takes it then.
pub fn a_receiver_restarted_before_its_commit_takes_the_parcel_again<S: Store>(
    open: impl Fn() -> S,
) {
    let orc = OwnerId::new(3);
    let mut p = Pair::new(&open);
    p.frame();
    p.a.send(&mut p.sa, orc, "b", b"x".to_vec()).unwrap();
    p.frame();
    assert_eq!(
        p.b.receive(&mut p.sb, &mut registry(), 10).unwrap().len(),
        1
    );
    drop(std::mem::replace(&mut p.b, super::node(&open, "b")));
    p.sb = p.b.resume(&mut registry()).unwrap().0;
    assert_eq!(p.sb.timers().len(), 0, "the import was never committed");
    let again = p.b.receive(&mut p.sb, &mut registry(), 10).unwrap();
    assert_eq!((again.len(), again[0].state.as_slice()), (1, &b"x"[..]));
    p.frame();
    p.frame();
    assert_eq!(open().holder(orc).unwrap(), Some(holder("b", 1)));
    assert_eq!(
        p.a.handovers(),
        [Handover::Moved {
            owner: orc,
            to: "b".into()
        }]
    );
}

/// An owner whose timer fired in the very frame it was sent, whose sender restarted and whose
/// parcel was then refused: it runs on from the freeze (its rows were written with the
/// parcel), no call made twice. And the same owner, after walking away and back, walks again
/// from a sender that restarted: the receiver, which imported it before, takes it.
pub fn an_owner_sent_as_it_fired_resumes_from_its_freeze<S: Store>(open: impl Fn() -> S) {
    let orc = OwnerId::new(3);
    let mut p = Pair::new(&open);
    for _ in 0..3 {
        p.frame();
    }
    p.tick(); // owner 3's "tick19" fires in frame 4, and it is sent before that frame's commit
    assert!(
        p.log.iter().any(|c| c.0 == 4 && c.1 == 3),
        "it fired in the frame it is sent"
    );
    p.a.send(&mut p.sa, orc, "b", Vec::new()).unwrap();
    p.commit();
    drop(std::mem::replace(&mut p.a, super::node(&open, "a")));
    p.sa = p.a.resume(&mut registry()).unwrap().0;
    let mut nothing: Registry<Log> = Registry::new();
    p.b.receive(&mut p.sb, &mut nothing, 10).unwrap();
    p.frame();
    p.frame();
    assert_eq!(p.a.handovers(), [Handover::Kept { owner: orc }]);
    for _ in 0..20 {
        p.frame();
    }
    // Away to b and back to a, then a restarts and sends it to b once more.
    p.a.send(&mut p.sa, orc, "b", Vec::new()).unwrap();
    p.frame();
    assert_eq!(
        p.b.receive(&mut p.sb, &mut registry(), 10).unwrap().len(),
        1
    );
    p.frame();
    p.frame();
    p.b.send(&mut p.sb, orc, "a", Vec::new()).unwrap();
    p.frame();
    assert_eq!(
        p.a.receive(&mut p.sa, &mut registry(), 10).unwrap().len(),
        1
    );
    p.frame();
    p.frame();
    drop(std::mem::replace(&mut p.a, super::node(&open, "a")));
    p.sa = p.a.resume(&mut registry()).unwrap().0;
    p.a.handovers();
    p.a.send(&mut p.sa, orc, "b", Vec::new()).unwrap();
    p.frame();
    assert_eq!(
        p.b.receive(&mut p.sb, &mut registry(), 10).unwrap().len(),
        1,
        "taken"
    );
    p.frame();
    p.frame();
    assert_eq!(
        p.a.handovers(),
        [Handover::Moved {
            owner: orc,
            to: "b".into()
        }]
    );
    once_each(p.log, orc, alone(35));
}
