//! A node's image ([`Durable::commit_image`]): the whole scheduler and the caller's state come
//! back exactly as committed, and only while the image is the node's last commit.

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::tick::{TickBody, TickInfo};
use tickflow_store::{Durable, Inspect, Store};

use super::{populate, record, Log, DT};

/// Records every seventh frame: a tick function, which only an image keeps.
fn every7(log: &mut Log, cx: &mut TickCx<Log>) {
    let frame = cx.clocks().frame();
    if frame % 7 == 0 {
        log.push((frame, 0, "tick".into(), 0));
    }
}

fn registry() -> Registry<Log> {
    Registry::new()
        .other_timers(|_| Some(Box::new(record)))
        .other_ticks(|i: &TickInfo| (i.settings.name == "every7").then(|| TickBody::serial(every7)))
}

/// A scheduler with a tick function, plain (not durable) timers and durable ones.
fn world(sched: &mut Scheduler<Log>) {
    sched.ticks().add(TickSettings::named("every7"), every7);
    for i in 0..5u64 {
        (sched.timers().every(Frames(3 + i)))
            .owner(OwnerId::new(100 + i))
            .name(format!("plain{i}"))
            .call(record);
    }
    populate(sched, 40, 9);
}

/// The log's frames after `from`, in a canonical order.
fn after(log: &Log, from: u64) -> Log {
    let mut v: Log = log.iter().filter(|e| e.0 > from).cloned().collect();
    v.sort();
    v
}

/// A node that commits an image every frame and crashes (five frames after its last commit)
/// resumes with the scheduler it committed — the same state hash, its tick function and
/// plain timers too — and the state it gave; run on, it makes the calls an uninterrupted run
/// makes.
pub fn an_image_resumes_the_whole_scheduler<S: Store>(open: impl Fn() -> S) {
    let mut reference = Scheduler::<Log>::new();
    world(&mut reference);
    let mut expected = Log::new();
    for _ in 0..80 {
        reference.tick(DT, &mut expected);
    }

    let mut d = super::node(&open, "img");
    let (mut sched, resumed) = d.resume(&mut registry()).unwrap();
    assert_eq!(resumed.state, None);
    world(&mut sched);
    let mut log = Log::new();
    let mut hash = 0;
    while sched.clocks().frame() < 30 {
        sched.tick(DT, &mut log);
        if sched.clocks().frame() <= 25 {
            let state = (log.len() as u64).to_le_bytes();
            d.commit_image(&mut sched, &state, |_, _| Ok(())).unwrap();
            hash = sched.state_hash();
        }
    }
    drop((sched, d));

    let mut d = super::node(&open, "img");
    let (mut sched, resumed) = d.resume(&mut registry()).unwrap();
    assert_eq!(resumed.frame, 25);
    assert_eq!(sched.state_hash(), hash, "the scheduler as committed");
    let kept: Log = log.iter().filter(|e| e.0 <= 25).cloned().collect();
    let state = resumed.state.expect("an image");
    assert_eq!(state, (kept.len() as u64).to_le_bytes());
    let mut log = Log::new();
    while sched.clocks().frame() < 80 {
        sched.tick(DT, &mut log);
        d.commit_image(&mut sched, &[], |_, _| Ok(())).unwrap();
    }
    assert_eq!(after(&log, 25), after(&expected, 25));
    assert!(log.iter().any(|e| e.2 == "tick") && log.iter().any(|e| e.2.starts_with("plain")));
    // The durable rows are kept alongside: what a store's reader sees is the scheduler's.
    let mut saved = d.store().saved("img").unwrap().timers;
    let mut live = sched.timers().durable_timers();
    saved.sort_by_key(|t| t.seq);
    live.sort_by_key(|t| t.seq);
    assert_eq!(saved, live);
}

/// An image that a later plain commit outdated is not resumed: the node comes back from its
/// durable rows, as at that later commit, and no state is given.
pub fn a_later_plain_commit_outdates_the_image<S: Store>(open: impl Fn() -> S) {
    let mut d = super::node(&open, "stale");
    let (mut sched, _) = d.resume(&mut registry()).unwrap();
    world(&mut sched);
    let mut log = Log::new();
    sched.tick(DT, &mut log);
    d.commit_image(&mut sched, b"old", |_, _| Ok(())).unwrap();
    sched.tick(DT, &mut log);
    d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    let durable = sched.timers().durable_timers().len();
    drop((sched, d));

    let mut d: Durable<S> = super::node(&open, "stale");
    let (mut sched, resumed) = d.resume(&mut registry()).unwrap();
    assert_eq!((resumed.frame, resumed.state), (2, None));
    assert_eq!(sched.timers().len(), durable, "only the durable timers");
    assert_eq!(
        sched.ticks().len(),
        0,
        "no tick function: the image was not used"
    );
}
