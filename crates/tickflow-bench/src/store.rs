//! Store benchmarks (ST1–ST3): what durable timers cost on SQLite and PostgreSQL.
//!
//! - ST1, write throughput: 20,000 durable timers, and per 60 Hz frame `n` of them re-set (each
//!   a changed row), written with one commit per frame (`Durable::end_frame`). Durable changes
//!   per second = `n` / the commit's median time. The peer, in the same run on the same
//!   database: the same rows written one transaction each, as a job queue inserts one job per
//!   transaction.
//! - ST2, reload: 1,000,000 durable timers written, then `Durable::resume` (read, check, bind
//!   by name, set) into a new scheduler; SQLite only (100,000 with `quick`).
//! - ST3, what durability costs a frame: 10,000 looping durable timers of which about 1 %
//!   fire (and so change) each frame; the frame's time with `end_frame` against the same
//!   scheduler without a store.
//!
//! PostgreSQL parts run when `TICKFLOW_PG_URL` names a server (on loopback for the figures);
//! each uses a schema of its own, dropped afterwards. SQLite files live in the temp directory,
//! in WAL mode with `synchronous = NORMAL` (the store's default: a killed process loses no
//! commit).

use std::time::Instant;

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::{DurableChange, Offline};
use tickflow::Timers;
use tickflow_store::{Durable, Postgres, Sqlite, Store};

use crate::{median, Options};

fn noop(_: &mut u64, _: &mut TimerCx<u64>) {}

fn registry() -> Registry<u64> {
    Registry::new().other_timers(|_| Some(Box::new(noop)))
}

fn set(t: &mut Timers<u64>, i: u64, frames: u64) {
    (t.after(Frames(frames))
        .owner(OwnerId::new(1 + i % 1000))
        .name(format!("t{i}")))
    .durable(Offline::Freeze)
    .call(noop);
}

fn temp_db(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tickflow-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.db"));
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    path
}

fn pg(schema: &str) -> Option<Postgres> {
    let url = std::env::var("TICKFLOW_PG_URL").ok()?;
    let mut c = postgres::Client::connect(&url, postgres::NoTls).ok()?;
    c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .ok()?;
    Postgres::create_in(&url, schema).ok()
}

fn drop_pg(schema: &str) {
    if let Ok(url) = std::env::var("TICKFLOW_PG_URL") {
        if let Ok(mut c) = postgres::Client::connect(&url, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        }
    }
}

/// ST1: changes per second with one commit per frame, and one transaction per change.
fn throughput<S: Store>(store: S, n: u64, frames: usize) -> (f64, f64) {
    let mut d = Durable::new(store, "bench");
    let (mut sched, _) = d.resume(&mut registry()).expect("resume");
    for i in 0..20_000 {
        set(sched.timers(), i, 1_000_000);
    }
    d.end_frame(&mut sched, |_, _| Ok(())).expect("commit");
    let mut per_frame = Vec::new();
    let mut next = 0;
    for _ in 0..frames {
        for _ in 0..n {
            set(sched.timers(), next % 20_000, 1_000_000);
            next += 1;
        }
        sched.tick(Span::frames(1, 60), &mut 0);
        let t = Instant::now();
        d.end_frame(&mut sched, |_, _| Ok(())).expect("commit");
        per_frame.push(t.elapsed().as_secs_f64());
    }
    let batched = n as f64 / median(per_frame);
    // The peer: the same kind of rows, one transaction each (a commit each: its node's row
    // advanced with it, as a job queue's worker records its progress).
    let mut rows = Vec::new();
    for _ in 0..(n / 4).max(50) {
        set(sched.timers(), next % 20_000, 1_000_000);
        next += 1;
        rows.extend(sched.timers().durable_changes());
    }
    let t = Instant::now();
    for change in rows.iter().cloned() {
        let DurableChange::Set(row) = change else {
            continue;
        };
        (sched
            .timers()
            .after(Frames(row.period))
            .owner(row.owner)
            .name(row.name))
        .durable(Offline::Freeze)
        .call(noop);
        d.commit(&mut sched, |_, _| Ok(())).expect("commit");
    }
    let single = rows.len() as f64 / t.elapsed().as_secs_f64();
    (batched, single)
}

/// ST2: seconds to resume `n` durable timers.
fn reload(n: u64) -> f64 {
    let path = temp_db("reload");
    {
        let mut d = Durable::new(Sqlite::create(&path).expect("open"), "bench");
        let (mut sched, _) = d.resume(&mut registry()).expect("resume");
        for i in 0..n {
            set(sched.timers(), i, 1 + i % 100_000);
        }
        d.end_frame(&mut sched, |_, _| Ok(())).expect("commit");
        d.close().expect("close");
    }
    let mut times = Vec::new();
    for _ in 0..3 {
        let mut d = Durable::new(Sqlite::open(&path).expect("open"), "bench");
        let t = Instant::now();
        let (sched, resumed) = d.resume(&mut registry()).expect("resume");
        times.push(t.elapsed().as_secs_f64());
        assert_eq!(resumed.timers.loaded as u64, n);
        drop(sched);
        d.close().expect("close");
    }
    median(times)
}

/// ST3: a frame's median time with and without a store (seconds).
fn frame_cost(store: Option<Sqlite>, frames: usize) -> f64 {
    let mut sched = Scheduler::<u64>::new();
    for i in 0..10_000u64 {
        (sched
            .timers()
            .every(Frames(100))
            .first_delay(Frames(1 + i % 100)))
        .owner(OwnerId::new(1 + i % 1000))
        .name(format!("t{i}"))
        .durable(Offline::Freeze)
        .call(noop);
    }
    let mut d = store.map(|s| {
        let mut d = Durable::new(s, "bench");
        let _ = d.resume(&mut registry()).expect("resume");
        d
    });
    let mut ctx = 0;
    let mut times = Vec::new();
    for f in 0..frames + 100 {
        let t = Instant::now();
        sched.tick(Span::frames(1, 60), &mut ctx);
        match &mut d {
            Some(d) => {
                d.end_frame(&mut sched, |_, _| Ok(())).expect("commit");
            }
            None => drop(sched.timers().durable_changes()),
        }
        if f >= 100 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    median(times)
}

/// Runs ST1–ST3 and prints their tables.
pub fn run(opts: &Options) {
    let frames = if opts.quick { 30 } else { 120 };
    println!("ST1: durable changes per second, one commit per 60 Hz frame (20,000 durable timers)");
    println!(
        "| store | changes/frame | one commit per frame | one transaction per change | ratio |"
    );
    println!("|---|---:|---:|---:|---:|");
    for n in [1_000u64, 5_000] {
        let rounds: Vec<(f64, f64)> = (0..3)
            .map(|r| {
                throughput(
                    Sqlite::create(temp_db(&format!("st1-{n}-{r}"))).expect("open"),
                    n,
                    frames,
                )
            })
            .collect();
        let b = median(rounds.iter().map(|r| r.0).collect());
        let s = median(rounds.iter().map(|r| r.1).collect());
        println!("| SQLite | {n} | {b:.0}/s | {s:.0}/s | {:.1}x |", b / s);
        if std::env::var("TICKFLOW_PG_URL").is_ok() {
            let rounds: Vec<(f64, f64)> = (0..3)
                .filter_map(|r| {
                    let schema = format!("tf_bench_{}_{r}", std::process::id());
                    let out = pg(&schema).map(|s| throughput(s, n, frames));
                    drop_pg(&schema);
                    out
                })
                .collect();
            if !rounds.is_empty() {
                let b = median(rounds.iter().map(|r| r.0).collect());
                let s = median(rounds.iter().map(|r| r.1).collect());
                println!("| PostgreSQL | {n} | {b:.0}/s | {s:.0}/s | {:.1}x |", b / s);
            }
        }
    }
    if std::env::var("TICKFLOW_PG_URL").is_err() {
        println!("(PostgreSQL: skipped, set TICKFLOW_PG_URL)");
    }

    let n = if opts.quick { 100_000 } else { 1_000_000 };
    println!("\nST2: resume {n} durable timers from SQLite (read, check, bind, set), median of 3");
    println!("{:.3} s", reload(n));

    println!("\nST3: frame time, 10,000 durable timers, ~1 % changing per frame (median of {frames} frames)");
    let bare = median((0..3).map(|_| frame_cost(None, frames)).collect());
    let with = median(
        (0..3)
            .map(|r| {
                frame_cost(
                    Some(Sqlite::create(temp_db(&format!("st3-{r}"))).expect("open")),
                    frames,
                )
            })
            .collect(),
    );
    println!("| | frame |");
    println!("|---|---:|");
    println!("| no store | {:.1} µs |", bare * 1e6);
    println!(
        "| SQLite, commit every frame | {:.1} µs (+{:.1} µs) |",
        with * 1e6,
        (with - bare) * 1e6
    );
    let dir = std::env::temp_dir().join(format!("tickflow-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(dir);
}
