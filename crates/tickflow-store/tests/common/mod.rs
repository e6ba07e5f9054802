//! The behaviour every store must have, written once and run on SQLite and on PostgreSQL.
#![allow(dead_code)]

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_store::{Durable, Store, StoreError};

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
