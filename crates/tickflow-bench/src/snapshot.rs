//! Snapshot benchmark SN1: save and restore a manager of 1e6 timers. The
//! same run prints SN2, moving owners between schedulers (`migrate.rs`), and SN3, importing a
//! densely linked owner (`dense.rs`).
//!
//! Every timer is tagged (the tag is what the resolver binds it by, the costly case: each one
//! has a side-table entry) and carries a closure capturing its id. A quarter are one-shots of
//! 1–100 s, the rest loop every 0.1–10 s; one in a hundred is paused, and the manager has run
//! 30 frames so due times are spread. Measured (medians): `snapshot()`, postcard
//! serialization and its size, deserialization, `restore()` binding every callback again, and
//! as the baseline, setting the same timers from scratch. Targets: ≤ 100 ms each for snapshot
//! and restore, ≤ 48 bytes per timer in the binary form.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tickflow::prelude::*;
use tickflow::snapshot::TimerSnapshot;
use tickflow::timer::TimerCallback;

use crate::{repeat, Options};

fn callback(id: u64) -> TimerCallback<u64> {
    Box::new(move |n: &mut u64, _: &mut TimerCx<u64>| *n += (id & 1) + 1)
}

/// The manager to save, and how long setting its timers took.
fn build(n: usize) -> (TimerManager<u64>, f64) {
    let mut r = SmallRng::seed_from_u64(0x5a9e);
    let start = Instant::now();
    let mut t = TimerManager::<u64>::with_capacity(n);
    let mut paused = Vec::new();
    for i in 0..n as u64 {
        let h = if i % 4 == 0 {
            t.after(millis(r.random_range(1_000..100_000)))
        } else {
            t.every(millis(r.random_range(100..10_000)))
        }
        .tag(i)
        .call(callback(i));
        if i % 100 == 7 {
            paused.push(h);
        }
    }
    let built = start.elapsed().as_secs_f64() * 1e3;
    for h in paused {
        t.pause(h);
    }
    let mut calls = 0;
    for _ in 0..30 {
        t.tick(Span::frames(1, 60), &mut calls);
    }
    (t, built)
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Prints the SN1 table.
pub fn run(opts: &Options) {
    let sizes: &[usize] = if opts.quick {
        &[100_000]
    } else {
        &[100_000, 1_000_000]
    };
    let runs = if opts.quick { 3 } else { 5 };
    println!(
        "SN1 snapshot and restore (medians of {runs}; tagged timers, 1/4 one-shot, 1/100 paused)"
    );
    println!(
        "{:>9} {:>10} {:>10} {:>12} {:>12} {:>10} {:>9} {:>13}",
        "timers",
        "build ms",
        "snap ms",
        "encode ms",
        "decode ms",
        "restore ms",
        "B/timer",
        "restore/build"
    );
    for &n in sizes {
        let (mut t, _) = build(n);
        let built = repeat(runs, || build(n).1);
        let snap_ms = repeat(runs, || {
            let start = Instant::now();
            let s = t.snapshot();
            let took = ms(start);
            drop(s);
            took
        });
        let snap = t.snapshot();
        let bytes = postcard::to_stdvec(&snap).expect("postcard");
        let encode_ms = repeat(runs, || {
            let start = Instant::now();
            let b = postcard::to_stdvec(&snap).expect("postcard");
            let took = ms(start);
            drop(b);
            took
        });
        let decode_ms = repeat(runs, || {
            let start = Instant::now();
            let s: TimerSnapshot = postcard::from_bytes(&bytes).expect("postcard");
            let took = ms(start);
            drop(s);
            took
        });
        let restore_ms = repeat(runs, || {
            let start = Instant::now();
            let m = TimerManager::restore(
                &snap,
                &mut tickflow::snapshot::Registry::new()
                    .other_timers(|info| info.tag.map(callback)),
            )
            .expect("restore");
            let took = ms(start);
            drop(m);
            took
        });
        // The restored manager makes the same calls as the original.
        let mut restored = TimerManager::restore(
            &snap,
            &mut tickflow::snapshot::Registry::new().other_timers(|info| info.tag.map(callback)),
        )
        .unwrap();
        let (mut a, mut b) = (0, 0);
        for _ in 0..120 {
            t.tick(Span::frames(1, 60), &mut a);
            restored.tick(Span::frames(1, 60), &mut b);
        }
        assert_eq!(a, b, "restored manager diverged");
        println!(
            "{:>9} {:>10.1} {:>10.1} {:>12.1} {:>12.1} {:>10.1} {:>9.1} {:>12.2}×",
            n,
            built,
            snap_ms,
            encode_ms,
            decode_ms,
            restore_ms,
            bytes.len() as f64 / n as f64,
            restore_ms / built
        );
    }
    crate::migrate::run(opts);
    crate::dense::run(opts);
}
