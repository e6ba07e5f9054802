//! Handover benchmarks (H1–H2): moving an owner between two processes through the store's
//! registry and outbox (`tickflow-store`'s `Handovers`), on SQLite and PostgreSQL.
//!
//! The receiver is a second process: this program started again with
//! `TICKFLOW_HANDOVER_PEER` set, which makes [`run`] serve as the receiver instead. It reads
//! its inbox, imports each parcel into its scheduler and accepts what it read in one
//! transaction. Each side polls every 20 µs (see [`wait`] for `LISTEN`, measured and slower).
//!
//! - H1, one handover at a time: the sender freezes an owner (3 timers), encodes it, sends
//!   it, polls until the registry names the receiver and commits. p50 / p99 of that time.
//! - H2, in batches of 500: the sender freezes 500 owners and sends them in one transaction
//!   (`send_all`), the receiver accepts what it read in one (`accept_all`), and the sender
//!   polls `settle_all` until every one is settled and commits them; handovers per second.

use std::time::{Duration, Instant};

use tickflow::prelude::*;
use tickflow::snapshot::{OwnerSnapshot, Registry};
use tickflow_store::{Accepted, Handovers, Parcel, Postgres, Settled, Sqlite};

use crate::Options;

const PEER: &str = "TICKFLOW_HANDOVER_PEER";
const POLL: Duration = Duration::from_micros(20);
/// The owner whose arrival tells the receiver to stop.
const STOP: u64 = u64::MAX >> 2;

fn noop(_: &mut (), _: &mut TimerCx<()>) {}

enum Db {
    Sqlite(Sqlite),
    Postgres(Postgres),
}

/// The calls the bench makes, on whichever database.
macro_rules! on {
    ($db:expr, |$s:ident| $body:expr) => {
        match $db {
            Db::Sqlite($s) => $body,
            Db::Postgres($s) => $body,
        }
    };
}

fn open(spec: &str) -> Db {
    match spec.strip_prefix("sqlite:") {
        Some(path) => Db::Sqlite(Sqlite::create(path).expect("open")),
        None => {
            let (url, schema) = spec.split_once('#').expect("url#schema");
            Db::Postgres(Postgres::create_in(url, schema).expect("connect"))
        }
    }
}

/// Waits before looking again: a poll interval on both databases. A variant in which each send
/// and each acceptance notified a channel and both sides waited in `LISTEN` (the sync client's
/// `notifications().timeout_iter`) was measured too, and so were 60 and 150 µs polls: all were
/// slower on the 2-core VM (`LISTEN`: p50 1.4 ms and p99 2.4–2.6 ms against 1.2 / 1.8 ms
/// polling every 20 µs, in the same runs), so the bench polls every 20 µs.
fn wait() {
    std::thread::sleep(POLL);
}

/// Waits before the sender looks again, unless the receiver has ended (it would wait forever).
fn wait_for(peer: &mut std::process::Child) {
    if let Some(status) = peer.try_wait().expect("the receiver's status") {
        panic!("the receiver process ended ({status}) before taking every parcel");
    }
    wait();
}

/// The receiver: imports and accepts what arrives until the stop parcel.
fn serve(spec: &str) {
    let mut db = open(spec);
    let mut sched = Scheduler::<()>::new();
    let mut names = Registry::new().other_timers(|_| Some(Box::new(noop)));
    loop {
        let inbox = on!(&mut db, |s| s.inbox("b", 10_000)).expect("inbox");
        if inbox.is_empty() {
            wait();
            continue;
        }
        let stop = inbox.iter().any(|p| p.owner.get() == STOP);
        for p in &inbox {
            if let Ok(snap) = postcard::from_bytes::<OwnerSnapshot>(&p.bytes) {
                let _ = sched.import_owner(&snap, &mut names);
            }
        }
        let taken = on!(&mut db, |s| s.accept_all(&inbox, |_| Ok(()))).expect("accept");
        assert!(taken.iter().all(|a| matches!(a, Accepted::Taken(_))));
        if stop {
            return;
        }
    }
}

fn parcel(owner: OwnerId, bytes: Vec<u8>) -> Parcel {
    Parcel {
        owner,
        epoch: 0,
        sender: "a".into(),
        receiver: "b".into(),
        bytes,
    }
}

/// Waits until the registry names the receiver for `owner`.
fn settled(db: &mut Db, owner: OwnerId, peer: &mut std::process::Child) {
    loop {
        match on!(db, |s| s.settle(owner, "a", 0)).expect("settle") {
            Settled::Moved(_) => return,
            Settled::Waiting => wait_for(peer),
            Settled::Kept => panic!("{owner:?} was refused"),
        }
    }
}

/// H1 and H2 on one store: (p50, p99) of one handover, and handovers per second in batches.
fn measure(spec: &str, single: usize, batches: usize) -> (Duration, Duration, f64) {
    const BATCH: usize = 500;
    let mut db = open(spec);
    let mut sched = Scheduler::<()>::new();
    let total = single + batches * BATCH;
    for i in 0..=total as u64 {
        let owner = OwnerId::new(1 + i);
        for t in 0..3 {
            (sched
                .timers()
                .every(Frames(10 + t))
                .owner(owner)
                .name(format!("t{t}")))
            .call(noop);
        }
        on!(&mut db, |s| s.register(owner, "a")).expect("register");
    }
    on!(&mut db, |s| s.register(OwnerId::new(STOP), "a")).expect("register");
    let mut peer = std::process::Command::new(std::env::current_exe().expect("this program"))
        .args(std::env::args().skip(1))
        .env(PEER, spec)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the receiver process");
    let mut next = 1u64;
    let mut take = |n: usize, sched: &mut Scheduler<()>| -> Vec<(OwnerId, Parcel)> {
        (0..n)
            .map(|_| {
                let owner = OwnerId::new(next);
                next += 1;
                let snap = sched.freeze_owner(owner).expect("not frozen");
                let bytes = postcard::to_stdvec(&snap).expect("encodes");
                (owner, parcel(owner, bytes))
            })
            .collect()
    };
    let mut times = Vec::with_capacity(single);
    for _ in 0..single {
        let start = Instant::now();
        let (owner, p) = take(1, &mut sched).pop().expect("one");
        on!(&mut db, |s| s.send(&p)).expect("send");
        settled(&mut db, owner, &mut peer);
        sched.commit_owner(owner);
        times.push(start.elapsed());
    }
    let start = Instant::now();
    for _ in 0..batches {
        let batch = take(BATCH, &mut sched);
        let parcels: Vec<Parcel> = batch.iter().map(|(_, p)| p.clone()).collect();
        on!(&mut db, |s| s.send_all(&parcels)).expect("send");
        let sent: Vec<(OwnerId, u64)> = batch.iter().map(|(o, _)| (*o, 0)).collect();
        loop {
            let settled = on!(&mut db, |s| s.settle_all(&sent, "a")).expect("settle");
            if settled.iter().all(|s| matches!(s, Settled::Moved(_))) {
                break;
            }
            assert!(!settled.contains(&Settled::Kept), "a parcel was refused");
            wait_for(&mut peer);
        }
        for (owner, _) in &batch {
            sched.commit_owner(*owner);
        }
    }
    let rate = (batches * BATCH) as f64 / start.elapsed().as_secs_f64();
    on!(&mut db, |s| s.send(&parcel(OwnerId::new(STOP), Vec::new()))).expect("stop");
    assert!(peer.wait().expect("the receiver ends").success());
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), rate)
}

/// Runs H1–H2 on SQLite, and on PostgreSQL when `TICKFLOW_PG_URL` names a server; or serves
/// as the receiver when started as one.
pub fn run(opts: &Options) {
    if let Ok(spec) = std::env::var(PEER) {
        serve(&spec);
        std::process::exit(0);
    }
    let (single, batches) = if opts.quick { (200, 2) } else { (1_000, 10) };
    println!("H1–H2: handovers between two processes through the registry and outbox");
    println!("| store | one at a time: p50 | p99 | in batches of 500 |");
    println!("|---|---:|---:|---:|");
    let dir = std::env::temp_dir().join(format!("tickflow-handover-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let spec = format!("sqlite:{}", dir.join("h.db").display());
    let (p50, p99, rate) = measure(&spec, single, batches);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "| SQLite | {:.0} µs | {:.0} µs | {rate:.0}/s |",
        us(p50),
        us(p99)
    );
    let _ = std::fs::remove_dir_all(&dir);
    match std::env::var("TICKFLOW_PG_URL") {
        Ok(url) => {
            let schema = format!("tf_handover_{}", std::process::id());
            let drop = || {
                if let Ok(mut c) = postgres::Client::connect(&url, postgres::NoTls) {
                    let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
                }
            };
            drop();
            let (p50, p99, rate) = measure(&format!("{url}#{schema}"), single, batches);
            println!(
                "| PostgreSQL | {:.0} µs | {:.0} µs | {rate:.0}/s |",
                us(p50),
                us(p99)
            );
            drop();
        }
        Err(_) => println!("(PostgreSQL: skipped, set TICKFLOW_PG_URL)"),
    }
}
