//! W2, churn: cancel a random timer and set a new one, a million times, at 1e4–1e6 live
//! timers; and W4, the heap bytes a live timer holds before and after that churn.
//!
//! W2 times the pair alone. A queue may leave part of a cancel for later, and the Unreal-style
//! heap leaves nearly all of it: its `clear` marks the record, which stays in the heap until
//! it reaches the top and is popped, a walk down the heap that reads a record at each level.
//! tickflow counts the stale record in its wheel slot and compacts the slot once half of it
//! is stale, inside the pair; DelayQueue unlinks the entry at once. "W2 whole" charges every
//! queue for the rest too: after the churn the clock runs at 60 Hz until every timer has
//! fired, and the same clock run over a queue that held the same live timers from the start,
//! with no churn, is subtracted. What is left, per pair, is the pair and what it left behind.

use std::time::{Duration, Instant};

use bevy_time::{Timer, TimerMode};
use rand::Rng;
use tickflow::prelude::*;
use tokio_util::time::DelayQueue;

use crate::median;
use crate::peers::unreal::{Callback, UnrealTimers};
use crate::timer_setup::{
    count, counted, paused_runtime, rng, run_out_delay_queue, run_out_tickflow, run_out_unreal,
};

/// One W4 row: a peer's name and its (ns per pair, bytes per timer before, after churn).
pub(crate) type W4Row = (&'static str, (f64, f64, f64));

const CHURN: usize = 1_000_000;

fn churn_plan(live: usize) -> (Vec<u64>, Vec<(usize, u64)>) {
    let mut r = rng();
    let initial = (0..live).map(|_| r.random_range(1..10_000)).collect();
    let ops = (0..CHURN)
        .map(|_| (r.random_range(0..live), r.random_range(1..10_000)))
        .collect();
    (initial, ops)
}

/// Returns (ns per pair, heap bytes per timer before churn, after churn).
///
/// The callback is a closure of its own, not the shared `count`: with `count`, whose set path
/// is compiled once for W2 whole and this loop together, the pair read 39 ns at 1e4 instead
/// of 34 (two runs each).
fn w2_tickflow(initial: &[u64], ops: &[(usize, u64)]) -> (f64, f64, f64) {
    let base = crate::alloc::live();
    let mut hs: Vec<TimerHandle> = Vec::with_capacity(initial.len());
    let handles_bytes = crate::alloc::live() - base;
    let mut t = TimerManager::<u64>::with_capacity(initial.len());
    for &ms in initial {
        hs.push(
            t.after(millis(ms))
                .call(|n: &mut u64, _: &mut TimerCx<'_, u64>| *n += 1),
        );
    }
    let before = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
    let start = Instant::now();
    for &(k, ms) in ops {
        t.clear(hs[k]);
        hs[k] = t
            .after(millis(ms))
            .call(|n: &mut u64, _: &mut TimerCx<'_, u64>| *n += 1);
    }
    let ns = start.elapsed().as_nanos() as f64 / ops.len() as f64;
    let after = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
    (ns, before, after)
}

fn w2_unreal(initial: &[u64], ops: &[(usize, u64)]) -> (f64, f64, f64) {
    let base = crate::alloc::live();
    let mut hs = Vec::with_capacity(initial.len());
    let handles_bytes = crate::alloc::live() - base;
    let mut t = UnrealTimers::default();
    for &ms in initial {
        hs.push(t.set(ms as f64 / 1000.0, false, counted()));
    }
    let before = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
    let start = Instant::now();
    for &(k, ms) in ops {
        t.clear(hs[k]);
        hs[k] = t.set(ms as f64 / 1000.0, false, counted());
    }
    let ns = start.elapsed().as_nanos() as f64 / ops.len() as f64;
    let after = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
    (ns, before, after)
}

fn w2_delay_queue(initial: &[u64], ops: &[(usize, u64)]) -> (f64, f64, f64) {
    let rt = paused_runtime();
    rt.block_on(async {
        let base = crate::alloc::live();
        let mut hs = Vec::with_capacity(initial.len());
        let handles_bytes = crate::alloc::live() - base;
        let mut dq: DelayQueue<Callback> = DelayQueue::with_capacity(initial.len());
        for &ms in initial {
            hs.push(dq.insert(counted(), Duration::from_millis(ms)));
        }
        let before = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
        let start = Instant::now();
        for &(k, ms) in ops {
            dq.remove(&hs[k]);
            hs[k] = dq.insert(counted(), Duration::from_millis(ms));
        }
        let ns = start.elapsed().as_nanos() as f64 / ops.len() as f64;
        let after = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
        (ns, before, after)
    })
}

fn w2_bevy(initial: &[u64], ops: &[(usize, u64)]) -> (f64, f64, f64) {
    let base = crate::alloc::live();
    let mut timers: Vec<(Timer, Callback)> = Vec::with_capacity(initial.len());
    for &ms in initial {
        timers.push((
            Timer::new(Duration::from_millis(ms), TimerMode::Once),
            counted(),
        ));
    }
    let before = (crate::alloc::live() - base) as f64 / initial.len() as f64;
    let start = Instant::now();
    for &(k, ms) in ops {
        // Despawn one entity, spawn another: the index is the entity.
        drop(timers.swap_remove(k));
        timers.push((
            Timer::new(Duration::from_millis(ms), TimerMode::Once),
            counted(),
        ));
    }
    let ns = start.elapsed().as_nanos() as f64 / ops.len() as f64;
    let after = (crate::alloc::live() - base) as f64 / initial.len() as f64;
    (ns, before, after)
}

// ---------- W2 whole: the pair and what it leaves behind ----------

/// The live set after the churn: each index's last delay.
fn last_delays(initial: &[u64], ops: &[(usize, u64)]) -> Vec<u64> {
    let mut last = initial.to_vec();
    for &(k, ms) in ops {
        last[k] = ms;
    }
    last
}

/// Nanoseconds per pair: churn and run-out, less the run-out of the same live set unchurned.
fn whole_tickflow(initial: &[u64], ops: &[(usize, u64)], last: &[u64]) -> f64 {
    let mut t = TimerManager::<u64>::with_capacity(initial.len());
    let mut hs: Vec<TimerHandle> = initial
        .iter()
        .map(|&ms| t.after(millis(ms)).call(count))
        .collect();
    let start = Instant::now();
    for &(k, ms) in ops {
        t.clear(hs[k]);
        hs[k] = t.after(millis(ms)).call(count);
    }
    let fired = run_out_tickflow(&mut t);
    let churned = start.elapsed();
    assert_eq!(fired as usize, initial.len());
    drop(t);
    let mut t = TimerManager::<u64>::with_capacity(last.len());
    for &ms in last {
        t.after(millis(ms)).call(count);
    }
    let start = Instant::now();
    let fired = run_out_tickflow(&mut t);
    let plain = start.elapsed();
    assert_eq!(fired as usize, last.len());
    per_pair(churned, plain, ops.len())
}

fn whole_unreal(initial: &[u64], ops: &[(usize, u64)], last: &[u64]) -> f64 {
    let mut t = UnrealTimers::default();
    let mut hs: Vec<_> = initial
        .iter()
        .map(|&ms| t.set(ms as f64 / 1000.0, false, counted()))
        .collect();
    let start = Instant::now();
    for &(k, ms) in ops {
        t.clear(hs[k]);
        hs[k] = t.set(ms as f64 / 1000.0, false, counted());
    }
    let fired = run_out_unreal(&mut t);
    let churned = start.elapsed();
    assert_eq!(fired as usize, initial.len());
    drop(t);
    let mut t = UnrealTimers::default();
    for &ms in last {
        t.set(ms as f64 / 1000.0, false, counted());
    }
    let start = Instant::now();
    let fired = run_out_unreal(&mut t);
    let plain = start.elapsed();
    assert_eq!(fired as usize, last.len());
    per_pair(churned, plain, ops.len())
}

fn whole_delay_queue(initial: &[u64], ops: &[(usize, u64)], last: &[u64]) -> f64 {
    let churned = paused_runtime().block_on(async {
        let mut dq = DelayQueue::with_capacity(initial.len());
        let mut hs: Vec<_> = initial
            .iter()
            .map(|&ms| dq.insert(counted(), Duration::from_millis(ms)))
            .collect();
        let start = Instant::now();
        for &(k, ms) in ops {
            dq.remove(&hs[k]);
            hs[k] = dq.insert(counted(), Duration::from_millis(ms));
        }
        let fired = run_out_delay_queue(&mut dq).await;
        let churned = start.elapsed();
        assert_eq!(fired as usize, initial.len());
        churned
    });
    let plain = paused_runtime().block_on(async {
        let mut dq = DelayQueue::with_capacity(last.len());
        for &ms in last {
            dq.insert(counted(), Duration::from_millis(ms));
        }
        let start = Instant::now();
        let fired = run_out_delay_queue(&mut dq).await;
        let plain = start.elapsed();
        assert_eq!(fired as usize, last.len());
        plain
    });
    per_pair(churned, plain, ops.len())
}

fn per_pair(churned: Duration, plain: Duration, pairs: usize) -> f64 {
    (churned.as_nanos() as f64 - plain.as_nanos() as f64) / pairs as f64
}

// ---------- the tables ----------

/// Runs W2 and W2 whole and prints their tables; returns the last size's W4 rows.
pub(crate) fn run(quick: bool) -> Vec<W4Row> {
    println!("\n## W2 churn: {CHURN} × (cancel a random timer + insert a new one) (ns per pair)\n");
    // bevy's row is one timer per entity, cancelled by despawning (a `swap_remove`): no
    // order, so it scans every timer every frame to fire them (W1, W3). The target counts
    // the queues that keep due order, as W3 does.
    println!(
        "| live | tickflow | Unreal-style | DelayQueue | bevy Timer | tickflow / fastest in-order peer |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let sizes: &[usize] = if quick {
        &[10_000]
    } else {
        &[10_000, 100_000, 1_000_000]
    };
    let mut w4 = vec![];
    for &live in sizes {
        let (init, ops) = churn_plan(live);
        let tf = w2_tickflow(&init, &ops);
        let ue = w2_unreal(&init, &ops);
        let dq = w2_delay_queue(&init, &ops);
        let bv = w2_bevy(&init, &ops);
        let best = ue.0.min(dq.0);
        println!(
            "| {live} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2}× |",
            tf.0,
            ue.0,
            dq.0,
            bv.0,
            tf.0 / best
        );
        w4 = vec![
            ("tickflow", tf),
            ("Unreal-style", ue),
            ("DelayQueue", dq),
            ("bevy Timer", bv),
        ];
    }

    let (rounds, how) = if quick {
        (1, "one run")
    } else {
        (3, "medians of 3 interleaved rounds")
    };
    println!(
        "\n## W2 whole: the same pairs, then 60 Hz until all fired, less that run-out without \
         churn (ns per pair; {how})\n"
    );
    println!("| live | tickflow | Unreal-style | DelayQueue | tickflow / fastest peer |");
    println!("|---:|---:|---:|---:|---:|");
    for &live in sizes {
        let (init, ops) = churn_plan(live);
        let last = last_delays(&init, &ops);
        let rows: Vec<[f64; 3]> = (0..rounds)
            .map(|_| {
                [
                    whole_tickflow(&init, &ops, &last),
                    whole_unreal(&init, &ops, &last),
                    whole_delay_queue(&init, &ops, &last),
                ]
            })
            .collect();
        let [tf, ue, dq] = std::array::from_fn(|k| median(rows.iter().map(|r| r[k]).collect()));
        let ratio = median(rows.iter().map(|r| r[0] / r[1].min(r[2])).collect());
        println!("| {live} | {tf:.0} | {ue:.0} | {dq:.0} | {ratio:.2}× |");
    }
    w4
}

/// Prints W4 from the rows [`run`] returned.
pub(crate) fn print_w4(quick: bool, rows: &[W4Row]) {
    let live = if quick { 10_000 } else { 1_000_000 };
    println!("\n## W4 heap bytes per live timer at {live} (closures capture nothing: no box allocation)\n");
    println!("| peer | before churn | after churn | after / before |");
    println!("|---|---:|---:|---:|");
    for (name, (_, before, after)) in rows {
        println!(
            "| {name} | {before:.1} | {after:.1} | {:.2} |",
            after / before
        );
    }
}
