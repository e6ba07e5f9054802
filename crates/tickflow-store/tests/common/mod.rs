//! The behaviour every store must have, written once and run on SQLite and on PostgreSQL.
#![allow(dead_code)]

use tickflow::prelude::*;
use tickflow::snapshot::{OwnerSnapshot, Registry};
use tickflow::timer::Offline;
use tickflow_store::{Accepted, Durable, Handovers, Holder, Parcel, Settled, Store, StoreError};

/// What the test worlds record: (frame, owner, name, call index).
pub type Log = Vec<(u64, u64, String, u64)>;

pub fn record(log: &mut Log, cx: &mut TimerCx<Log>) {
    let frame = cx.clocks().frame();
    let h = cx.handle();
    let info = cx.timers().info_of(h).expect("running");
    let owner = info.owner.map_or(0, OwnerId::get);
    log.push((frame, owner, info.name.unwrap_or_default(), cx.call_index()));
}

pub fn registry() -> Registry<Log> {
    Registry::new().other_timers(|_| Some(Box::new(record)))
}

/// Sets `n` durable timers of a few kinds on `sched`, deterministic in `seed`.
pub fn populate(sched: &mut Scheduler<Log>, n: u64, seed: u64) {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..n {
        let owner = OwnerId::new(1 + i % 17);
        let t = sched.timers();
        let r = next();
        let bytes = i.to_le_bytes();
        let _ = match r % 4 {
            0 => t
                .after(Frames(1 + r % 90))
                .owner(owner)
                .name(format!("build{i}"))
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
            1 => t
                .every(Frames(1 + r % 40))
                .owner(owner)
                .name(format!("regen{i}"))
                .times(1 + r % 5)
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
            2 => t
                .after(Span::from_millis(10 + r % 1500))
                .owner(owner)
                .name(format!("buff{i}"))
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
            _ => t
                .every(Span::from_millis(30 + r % 500))
                .owner(owner)
                .name(format!("tick{i}"))
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
        };
    }
}

const DT: Span = Span::from_millis(16);

/// Runs frames `from+1..=to`, committing after each, unless `skip_commit_after` (frames
/// after it run but are not committed: what a crash loses).
pub fn run<S: Store>(
    durable: &mut Durable<S>,
    sched: &mut Scheduler<Log>,
    log: &mut Log,
    to: u64,
    commit_until: u64,
) {
    while sched.clocks().frame() < to {
        sched.tick(DT, log);
        if sched.clocks().frame() <= commit_until {
            durable.end_frame(sched.timers(), |_| Ok(())).unwrap();
        }
    }
}

/// A world that stops at frame 40 having committed only to frame 33, resumes, and must make
/// every call of the uncrashed run from frame 34 on, on the same frame.
pub fn resumes_on_the_exact_frame<S: Store>(open: impl Fn() -> S) {
    let mut reference = Log::new();
    {
        let mut sched = Scheduler::new();
        populate(&mut sched, 300, 42);
        for _ in 0..120 {
            sched.tick(DT, &mut reference);
        }
    }
    let mut durable = Durable::new(open(), "zone");
    let (mut sched, resumed) = durable.resume(&mut registry()).unwrap();
    assert!(!resumed.resumed);
    populate(&mut sched, 300, 42);
    let mut log = Log::new();
    run(&mut durable, &mut sched, &mut log, 40, 33);
    drop((sched, durable));

    let mut durable = Durable::new(open(), "zone");
    let (mut sched, resumed) = durable.resume(&mut registry()).unwrap();
    assert_eq!(resumed.frame, 33);
    assert!(resumed.timers.loaded > 0 && resumed.timers.loaded == resumed.timers.on_time);
    let rewritten = durable.commit(sched.timers(), |_| Ok(())).unwrap();
    assert_eq!(
        rewritten, 0,
        "a resume leaves the rows as they are: no rewrite of the world"
    );
    log.retain(|c| c.0 <= 33);
    run(&mut durable, &mut sched, &mut log, 120, 120);
    assert_eq!(log.len(), reference.len());
    assert_eq!(
        log, reference,
        "every call on its frame, none lost, none twice"
    );
}

/// A process that lost an owner to another cannot write its rows; the newer owner's rows stay.
pub fn a_stale_epoch_is_fenced<S: Store>(open: impl Fn() -> S) {
    let owner = OwnerId::new(7);
    let set = |sched: &mut Scheduler<Log>, name: &str, secs_: f64| {
        (sched.timers().after(secs(secs_)).owner(owner).name(name))
            .durable(Offline::Freeze)
            .call(record);
    };
    let mut a = Durable::new(open(), "a");
    let (mut sa, _) = a.resume(&mut registry()).unwrap();
    assert_eq!(a.claim(owner).unwrap(), 1);
    set(&mut sa, "x", 5.0);
    a.end_frame(sa.timers(), |_| Ok(())).unwrap();

    // The owner moves to b, which claims it and writes its own rows.
    let mut b = Durable::new(open(), "b");
    let (mut sb, _) = b.resume(&mut registry()).unwrap();
    assert_eq!(b.claim(owner).unwrap(), 2);
    set(&mut sb, "x", 9.0);
    set(&mut sb, "y", 1.0);
    b.end_frame(sb.timers(), |_| Ok(())).unwrap();
    let theirs = b.store().load("b").unwrap().timers;

    // a still runs the owner (a stale process) and changes it: refused whole.
    set(&mut sa, "x", 1.0);
    set(&mut sa, "z", 1.0);
    (sa.timers()
        .after(secs(3.0))
        .owner(OwnerId::new(8))
        .name("other"))
    .durable(Offline::Freeze)
    .call(record);
    let err = a.end_frame(sa.timers(), |_| Ok(())).unwrap_err();
    assert!(
        matches!(err, StoreError::Fenced { owner: o, held: 1, current: 2 } if o == owner),
        "{err}"
    );
    assert_eq!(
        b.store().load("b").unwrap().timers,
        theirs,
        "the newer owner's rows unchanged"
    );
    let mine = a.store().load("a").unwrap().timers;
    assert!(
        mine.is_empty(),
        "a's row of x went to b, and nothing of a's refused commit landed: {mine:?}"
    );

    // a lets the owner go; its other owners commit again.
    a.forget_owner(owner);
    a.end_frame(sa.timers(), |_| Ok(())).unwrap();
    let mine = a.store().load("a").unwrap().timers;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].name, "other");
    assert_eq!(b.store().load("b").unwrap().timers, theirs);
}

/// The effects hook writes in the commit's transaction: when it fails, nothing is written.
pub fn failed_effects_roll_the_commit_back<S: Store>(open: impl Fn() -> S) {
    let mut d = Durable::new(open(), "n");
    let (mut sched, _) = d.resume(&mut registry()).unwrap();
    (sched
        .timers()
        .after(secs(1.0))
        .owner(OwnerId::new(1))
        .name("a"))
    .durable(Offline::Freeze)
    .call(record);
    let err = d
        .end_frame(sched.timers(), |_| {
            Err(StoreError::Effects("no room".into()))
        })
        .unwrap_err();
    assert!(err.to_string().contains("no room"));
    assert!(d.store().load("n").unwrap().timers.is_empty());
    assert!(d.store().load("n").unwrap().clocks.is_none());
    // The changes stayed queued: the next commit writes them.
    sched.tick(DT, &mut Log::new());
    d.end_frame(sched.timers(), |_| Ok(())).unwrap();
    assert_eq!(d.store().load("n").unwrap().timers.len(), 1);
}

/// A durable timer whose name is over the limit is refused before anything is written (a row
/// that could not be read back), and the next commit goes through once it is cleared.
pub fn oversized_rows_are_refused_before_writing<S: Store>(open: impl Fn() -> S) {
    let mut d = Durable::new(open(), "n");
    let (mut sched, _) = d.resume(&mut registry()).unwrap();
    let long = "x".repeat(tickflow_store::MAX_NAME + 1);
    let h = (sched
        .timers()
        .after(secs(1.0))
        .owner(OwnerId::new(1))
        .name(long))
    .durable(Offline::Freeze)
    .call(record);
    let err = d.end_frame(sched.timers(), |_| Ok(())).unwrap_err();
    assert!(
        matches!(&err, StoreError::BadRow { field: "name", .. }),
        "{err}"
    );
    assert!(
        d.store().load("n").unwrap().clocks.is_none(),
        "nothing written"
    );
    sched.timers().clear(h);
    d.end_frame(sched.timers(), |_| Ok(())).unwrap();
    assert!(d.store().load("n").unwrap().timers.is_empty());
}

/// A node of several parts' worth of rows resumes as it was committed (every row's time and
/// place in set order), and one row the resolver cannot bind, in whichever part it comes,
/// fails the whole resume and leaves the store as it was.
pub fn a_resume_in_many_parts_is_whole<S: Store>(open: impl Fn() -> S) {
    let n = 3 * tickflow_store::PART_ROWS as u64 + 7;
    let mut durable = Durable::new(open(), "parts");
    let (mut sched, _) = durable.resume(&mut registry()).unwrap();
    populate(&mut sched, n, 9);
    sched.tick(DT, &mut Log::new());
    durable.end_frame(sched.timers(), |_| Ok(())).unwrap();
    let committed = sched.timers().durable_timers();
    drop((sched, durable));

    let last = committed.last().unwrap().name.clone();
    let mut refusing = Registry::new().other_timers(move |info: &tickflow::timer::TimerInfo| {
        (info.name.as_deref() != Some(last.as_str())).then(|| Box::new(record) as _)
    });
    let mut durable = Durable::new(open(), "parts");
    let err = durable.resume(&mut refusing).map(drop).unwrap_err();
    assert!(matches!(err, StoreError::Restore(_)), "{err}");

    let (mut sched, resumed) = durable.resume(&mut registry()).unwrap();
    assert_eq!(resumed.timers.loaded, committed.len());
    assert!(committed.len() as u64 > 2 * tickflow_store::PART_ROWS as u64);
    assert_eq!(sched.timers().durable_timers(), committed);
    assert!(sched.timers().durable_changes().is_empty());
}

/// An owner's handover between two nodes through the registry and the outbox, with the
/// scheduler's two-phase move on either side: it moves once, a parcel sent twice is one,
/// delivered twice is refused, a stale sender is refused, damaged bytes are refused and the
/// sender keeps the owner, and a failed effects hook rolls the acceptance back.
pub fn an_owner_moves_once<S: Store + Handovers>(open: impl Fn() -> S) {
    let orc = OwnerId::new(5);
    let (mut a, mut b) = (open(), open());
    let (mut n1, mut n2) = (Scheduler::<Log>::new(), Scheduler::<Log>::new());
    let regen = |s: &mut Scheduler<Log>| {
        (s.timers().every(Frames(3)).owner(orc).name("regen")).call(record);
    };
    regen(&mut n1);
    assert_eq!(a.register(orc, "n1").unwrap(), holder("n1", 0));
    assert_eq!(
        b.register(orc, "n2").unwrap(),
        holder("n1", 0),
        "registered once"
    );

    // n1 -> n2.
    let snap = n1.freeze_owner(orc).unwrap();
    let parcel = Parcel {
        owner: orc,
        epoch: 0,
        sender: "n1".into(),
        receiver: "n2".into(),
        bytes: postcard::to_stdvec(&snap).unwrap(),
    };
    a.send(&parcel).unwrap();
    a.send(&parcel).unwrap();
    assert_eq!(a.settle(orc, "n1", 0).unwrap(), Settled::Waiting);
    let inbox = b.inbox("n2", 10).unwrap();
    assert_eq!(
        inbox,
        std::slice::from_ref(&parcel),
        "sent twice, there once"
    );
    let got: OwnerSnapshot = postcard::from_bytes(&inbox[0].bytes).unwrap();
    n2.import_owner(&got, &mut registry()).unwrap();
    assert_eq!(b.accept(&inbox[0], |_| Ok(())).unwrap(), Accepted::Taken(1));
    assert_eq!(
        a.settle(orc, "n1", 0).unwrap(),
        Settled::Moved(holder("n2", 1))
    );
    assert!(n1.commit_owner(orc));
    assert_eq!((n1.timers().len(), n2.timers().len()), (0, 1));

    // The same parcel again, and a send from the node that no longer holds the owner.
    assert_eq!(
        b.accept(&parcel, |_| Ok(())).unwrap(),
        Accepted::Stale(Some(holder("n2", 1)))
    );
    let stale = a.send(&parcel).unwrap_err();
    assert!(matches!(stale, StoreError::NotHeld { .. }), "{stale}");
    assert!(b.inbox("n2", 10).unwrap().is_empty());

    // n2 -> n1 with damaged bytes: refused, and n2 keeps the owner.
    let snap = n2.freeze_owner(orc).unwrap();
    let mut bytes = postcard::to_stdvec(&snap).unwrap();
    bytes.truncate(bytes.len() / 2);
    let damaged = Parcel {
        owner: orc,
        epoch: 1,
        sender: "n2".into(),
        receiver: "n1".into(),
        bytes,
    };
    b.send(&damaged).unwrap();
    let inbox = a.inbox("n1", 10).unwrap();
    assert!(postcard::from_bytes::<OwnerSnapshot>(&inbox[0].bytes).is_err());
    assert!(a.refuse(&inbox[0]).unwrap());
    assert_eq!(b.settle(orc, "n2", 1).unwrap(), Settled::Kept);
    assert!(n2.abort_owner(orc).is_some());
    assert_eq!(a.holder(orc).unwrap(), Some(holder("n2", 1)));

    // n2 -> n1 again, and n1's effects fail: nothing of the acceptance stays.
    let snap = n2.freeze_owner(orc).unwrap();
    let parcel = Parcel {
        bytes: postcard::to_stdvec(&snap).unwrap(),
        ..damaged
    };
    b.send(&parcel).unwrap();
    let failed = a.accept(&parcel, |_| Err(StoreError::Setting("no".into())));
    assert!(failed.is_err());
    assert_eq!(a.holder(orc).unwrap(), Some(holder("n2", 1)));
    assert_eq!(b.settle(orc, "n2", 1).unwrap(), Settled::Waiting);
    assert_eq!(a.accept(&parcel, |_| Ok(())).unwrap(), Accepted::Taken(2));
    assert!(a.inbox("n1", 10).unwrap().is_empty(), "no parcel is left");

    // Back to n2 (epoch 3): the parcel n2 sent at epoch 1, delivered late, names the right
    // sender but an old epoch.
    let back = Parcel {
        owner: orc,
        epoch: 2,
        sender: "n1".into(),
        receiver: "n2".into(),
        bytes: Vec::new(),
    };
    a.send(&back).unwrap();
    assert_eq!(b.accept(&back, |_| Ok(())).unwrap(), Accepted::Taken(3));
    assert_eq!(
        a.accept(&parcel, |_| Ok(())).unwrap(),
        Accepted::Stale(Some(holder("n2", 3)))
    );
}

fn holder(node: &str, epoch: u64) -> Holder {
    Holder {
        node: node.into(),
        epoch,
    }
}

/// A durable owner moves with its rows: the receiver imports it and commits its rows, the
/// registry and the outbox in one transaction (`accept_in` in `end_frame`'s hook). A receiver
/// that stops before that commit loses nothing: the parcel waits for its next run.
pub fn an_owner_moves_with_its_rows<S: Store + Handovers>(open: impl Fn() -> S) {
    let orc = OwnerId::new(7);
    let mut d1 = Durable::new(open(), "n1");
    let (mut s1, _) = d1.resume(&mut registry()).unwrap();
    d1.store().register(orc, "n1").unwrap();
    (s1.timers().after(Frames(10)).owner(orc).name("build"))
        .durable(Offline::Freeze)
        .call(record);
    d1.end_frame(s1.timers(), |_| Ok(())).unwrap();
    let snap = s1.freeze_owner(orc).unwrap();
    let parcel = Parcel {
        owner: orc,
        epoch: d1.epoch(orc),
        sender: "n1".into(),
        receiver: "n2".into(),
        bytes: postcard::to_stdvec(&snap).unwrap(),
    };
    d1.store().send(&parcel).unwrap();

    let arrive = |d2: &mut Durable<S>, s2: &mut Scheduler<Log>| {
        let inbox = d2.store().inbox("n2", 10).unwrap();
        assert_eq!(inbox.len(), 1);
        let snap: OwnerSnapshot = postcard::from_bytes(&inbox[0].bytes).unwrap();
        s2.import_owner(&snap, &mut registry()).unwrap();
        d2.hold(orc, inbox[0].epoch + 1);
        inbox
    };
    // The first receiver imports and stops before its commit.
    let mut d2 = Durable::new(open(), "n2");
    let (mut s2, _) = d2.resume(&mut registry()).unwrap();
    arrive(&mut d2, &mut s2);
    drop((s2, d2));
    assert_eq!(d1.store().settle(orc, "n1", 0).unwrap(), Settled::Waiting);

    // The next run takes it, rows and all, in one commit.
    let mut d2 = Durable::new(open(), "n2");
    let (mut s2, _) = d2.resume(&mut registry()).unwrap();
    let inbox = arrive(&mut d2, &mut s2);
    d2.end_frame(s2.timers(), |tx| match S::accept_in(tx, &inbox[0])? {
        Accepted::Taken(_) => Ok(()),
        Accepted::Stale(h) => Err(StoreError::Setting(format!("stale: {h:?}"))),
    })
    .unwrap();
    let mut store = open();
    assert_eq!(store.holder(orc).unwrap(), Some(holder("n2", 1)));
    assert!(store.inbox("n2", 10).unwrap().is_empty());
    let rows = |store: &mut S, node| store.load(node).unwrap().timers;
    assert_eq!(rows(&mut store, "n2").len(), 1, "the row is the receiver's");
    assert!(rows(&mut store, "n1").is_empty());

    // The sender lets go; a write of the owner from it now is fenced.
    assert_eq!(
        d1.store().settle(orc, "n1", 0).unwrap(),
        Settled::Moved(holder("n2", 1))
    );
    assert!(s1.commit_owner(orc));
    (s1.timers().after(Frames(5)).owner(orc).name("late"))
        .durable(Offline::Freeze)
        .call(record);
    let fenced = d1.end_frame(s1.timers(), |_| Ok(())).unwrap_err();
    assert!(matches!(fenced, StoreError::Fenced { .. }), "{fenced}");
}

/// The batch forms: many owners move in three transactions, as each would alone; a batch
/// with one parcel its sender does not hold sends nothing.
pub fn batches_move_many_owners_once<S: Store + Handovers>(open: impl Fn() -> S) {
    let (mut a, mut b) = (open(), open());
    let owners: Vec<OwnerId> = (100..120).map(OwnerId::new).collect();
    for &o in &owners {
        a.register(o, "n1").unwrap();
    }
    let parcels: Vec<Parcel> = (owners.iter())
        .map(|&owner| Parcel {
            owner,
            epoch: 0,
            sender: "n1".into(),
            receiver: "n2".into(),
            bytes: owner.get().to_le_bytes().to_vec(),
        })
        .collect();
    a.send_all(&parcels).unwrap();
    a.send_all(&parcels).unwrap();
    let sent: Vec<(OwnerId, u64)> = owners.iter().map(|&o| (o, 0)).collect();
    let waiting = a.settle_all(&sent, "n1").unwrap();
    assert!(
        waiting.iter().all(|s| *s == Settled::Waiting),
        "{waiting:?}"
    );
    let mut inbox = b.inbox("n2", 100).unwrap();
    inbox.sort_by_key(|p| p.owner);
    assert_eq!(inbox, parcels, "sent twice, there once");
    let taken = b.accept_all(&inbox, |_| Ok(())).unwrap();
    assert!(taken.iter().all(|t| *t == Accepted::Taken(1)), "{taken:?}");
    let moved = a.settle_all(&sent, "n1").unwrap();
    assert!(
        moved.iter().all(|s| *s == Settled::Moved(holder("n2", 1))),
        "{moved:?}"
    );
    let again = b.accept_all(&inbox, |_| Ok(())).unwrap();
    assert!(
        again
            .iter()
            .all(|t| *t == Accepted::Stale(Some(holder("n2", 1)))),
        "{again:?}"
    );

    // Back, with one parcel from a node that does not hold its owner: nothing is sent.
    let mut back: Vec<Parcel> = (parcels.iter())
        .map(|p| Parcel {
            epoch: 1,
            sender: "n2".into(),
            receiver: "n1".into(),
            ..p.clone()
        })
        .collect();
    back[7].sender = "n3".into();
    let err = b.send_all(&back).unwrap_err();
    assert!(matches!(err, StoreError::NotHeld { .. }), "{err}");
    assert!(a.inbox("n1", 100).unwrap().is_empty(), "all or none");
}
