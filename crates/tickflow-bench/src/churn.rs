//! W2, churn: cancel a random timer and set a new one, a million times, at 1e4–1e6 live
//! timers; and W4, the heap bytes a live timer holds before and after that churn.
//!
//! W2 times the pair alone.

use std::time::{Duration, Instant};

use bevy_time::{Timer, TimerMode};
use rand::Rng;
use tickflow::prelude::*;
use tokio_util::time::DelayQueue;

use crate::peers::unreal::{Callback, UnrealTimers};
use crate::timer_setup::{paused_runtime, rng};

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
        hs.push(t.set(ms as f64 / 1000.0, false, Box::new(|n: &mut u64| *n += 1)));
    }
    let before = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
    let start = Instant::now();
    for &(k, ms) in ops {
        t.clear(hs[k]);
        hs[k] = t.set(ms as f64 / 1000.0, false, Box::new(|n: &mut u64| *n += 1));
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
            hs.push(dq.insert(Box::new(|n: &mut u64| *n += 1), Duration::from_millis(ms)));
        }
        let before = (crate::alloc::live() - base - handles_bytes) as f64 / initial.len() as f64;
        let start = Instant::now();
        for &(k, ms) in ops {
            dq.remove(&hs[k]);
            hs[k] = dq.insert(Box::new(|n: &mut u64| *n += 1), Duration::from_millis(ms));
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
            Box::new(|n: &mut u64| *n += 1),
        ));
    }
    let before = (crate::alloc::live() - base) as f64 / initial.len() as f64;
    let start = Instant::now();
    for &(k, ms) in ops {
        // Despawn one entity, spawn another: the index is the entity.
        drop(timers.swap_remove(k));
        timers.push((
            Timer::new(Duration::from_millis(ms), TimerMode::Once),
            Box::new(|n: &mut u64| *n += 1),
        ));
    }
    let ns = start.elapsed().as_nanos() as f64 / ops.len() as f64;
    let after = (crate::alloc::live() - base) as f64 / initial.len() as f64;
    (ns, before, after)
}

// ---------- the tables ----------

/// Runs W2 and prints its table; returns the last size's W4 rows.
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
