//! Timer benchmarks W1–W4 against peers measured in the same run (W2 and W4 in `churn.rs`).
//!
//! A plain harness (`harness = false`): each workload is a whole-run macro benchmark (seconds
//! at 1e6 timers), so it runs a few times and reports the median instead of criterion's many
//! samples. Run: `cargo bench -p tickflow-bench --bench timers` (add `-- quick` for 1e5 only).
//!
//! Peers: an Unreal-style manager (peers/unreal.rs), `tokio_util::time::DelayQueue` on a
//! paused current-thread runtime, and one `bevy_time::Timer` per entity; in W1 also a plain
//! vector of due times scanned every frame (peers/vec_scan.rs). Every timer carries a boxed
//! closure that captures its id, as users write them.

use std::time::{Duration, Instant};

use bevy_time::{Timer, TimerMode};
use rand::Rng;
use tickflow::prelude::*;
use tokio_util::time::DelayQueue;

use crate::churn;
use crate::peers::unreal::{Callback, UnrealTimers};
use crate::peers::vec_scan;
use crate::timer_setup::{
    cb, drain, frame_dur, paused_runtime, rng, run_out_delay_queue, run_out_tickflow,
    run_out_unreal, tf_cb,
};
use crate::{median, Options};

// ---------- W1: fire-all ----------

fn w1_delays(n: usize) -> Vec<u64> {
    let mut r = rng();
    (0..n).map(|_| r.random_range(1..10_000)).collect()
}

fn w1_tickflow(delays: &[u64]) -> f64 {
    let start = Instant::now();
    let mut t = TimerManager::<u64>::with_capacity(delays.len());
    for (i, &ms) in delays.iter().enumerate() {
        t.after(millis(ms)).call(tf_cb(i as u32));
    }
    let n = run_out_tickflow(&mut t);
    assert_eq!(n as usize, delays.len() + delays.len() / 2);
    start.elapsed().as_nanos() as f64 / delays.len() as f64
}

fn w1_unreal(delays: &[u64]) -> f64 {
    let start = Instant::now();
    let mut t = UnrealTimers::default();
    for (i, &ms) in delays.iter().enumerate() {
        t.set(ms as f64 / 1000.0, false, cb(i as u32));
    }
    run_out_unreal(&mut t);
    start.elapsed().as_nanos() as f64 / delays.len() as f64
}

fn w1_delay_queue(delays: &[u64]) -> f64 {
    let rt = paused_runtime();
    rt.block_on(async {
        let start = Instant::now();
        let mut dq = DelayQueue::with_capacity(delays.len());
        for (i, &ms) in delays.iter().enumerate() {
            dq.insert(cb(i as u32), Duration::from_millis(ms));
        }
        run_out_delay_queue(&mut dq).await;
        start.elapsed().as_nanos() as f64 / delays.len() as f64
    })
}

/// The Vec-scan peer (`peers/vec_scan.rs`), its copy `copy`.
fn w1_vec_scan(delays: &[u64], copy: usize) -> f64 {
    let start = Instant::now();
    let timers: vec_scan::Timers = delays
        .iter()
        .enumerate()
        .map(|(i, &ms)| (millis(ms).flicks(), cb(i as u32)))
        .collect();
    let n = vec_scan::COPIES[copy](timers, Span::frames(1, 60).flicks());
    assert_eq!(n as usize, copy + delays.len() + delays.len() / 2);
    start.elapsed().as_nanos() as f64 / delays.len() as f64
}

/// One bevy `Timer` per entity, each with its boxed callback.
fn bevy_entities(ms: &[u64], mode: TimerMode) -> Vec<(Timer, Callback)> {
    ms.iter()
        .enumerate()
        .map(|(i, &ms)| (Timer::new(Duration::from_millis(ms), mode), cb(i as u32)))
        .collect()
}

fn w1_bevy(delays: &[u64]) -> f64 {
    let start = Instant::now();
    let mut timers = bevy_entities(delays, TimerMode::Once);
    let mut n = 0;
    while !timers.is_empty() {
        let mut i = 0;
        while i < timers.len() {
            timers[i].0.tick(frame_dur());
            if timers[i].0.just_finished() {
                (timers[i].1)(&mut n);
                drop(timers.swap_remove(i)); // despawn
            } else {
                i += 1;
            }
        }
    }
    start.elapsed().as_nanos() as f64 / delays.len() as f64
}

// ---------- W3: steady looping ----------

const W3_FRAMES: usize = 600;

fn w3_periods(n: usize) -> Vec<u64> {
    let mut r = rng();
    (0..n).map(|_| r.random_range(500..5_000)).collect()
}

/// Frame times in ms -> (mean, p99, max).
fn stats(mut ms: Vec<f64>) -> (f64, f64, f64) {
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    ms.sort_by(|a, b| a.total_cmp(b));
    let p99 = ms[(ms.len() * 99) / 100 - 1];
    (mean, p99, *ms.last().unwrap())
}

fn w3_tickflow(periods: &[u64]) -> (f64, f64, f64) {
    let mut t = TimerManager::<u64>::with_capacity(periods.len());
    for (i, &ms) in periods.iter().enumerate() {
        t.every(millis(ms)).call(tf_cb(i as u32));
    }
    let mut n = 0;
    let frame = Span::frames(1, 60);
    let times = (0..W3_FRAMES)
        .map(|_| {
            let s = Instant::now();
            t.tick(frame, &mut n);
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    stats(times)
}

fn w3_unreal(periods: &[u64]) -> (f64, f64, f64) {
    let mut t = UnrealTimers::default();
    for (i, &ms) in periods.iter().enumerate() {
        t.set(ms as f64 / 1000.0, true, cb(i as u32));
    }
    let mut n = 0;
    let times = (0..W3_FRAMES)
        .map(|_| {
            let s = Instant::now();
            t.tick(1.0 / 60.0, &mut n);
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    stats(times)
}

fn w3_delay_queue(periods: &[u64]) -> (f64, f64, f64) {
    let rt = paused_runtime();
    rt.block_on(async {
        let mut dq = DelayQueue::with_capacity(periods.len());
        let origin = tokio::time::Instant::now();
        for (i, &ms) in periods.iter().enumerate() {
            let p = Duration::from_millis(ms);
            dq.insert_at((cb(i as u32), origin + p, p), origin + p);
        }
        let mut n = 0;
        let mut times = Vec::with_capacity(W3_FRAMES);
        for _ in 0..W3_FRAMES {
            tokio::time::advance(frame_dur()).await;
            let s = Instant::now();
            drain(&mut dq, |(mut f, due, p), dq| {
                f(&mut n);
                dq.insert_at((f, due + p, p), due + p); // drift-free re-arm
            })
            .await;
            times.push(s.elapsed().as_secs_f64() * 1e3);
        }
        stats(times)
    })
}

/// A looping timer in the hashed wheel: its callback and its period in the wheel's 1 ms ticks.
struct WheelEntry {
    f: Callback,
    period: u64,
}

impl std::fmt::Debug for WheelEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WheelEntry")
            .field("period", &self.period)
            .finish()
    }
}

/// Kompact's four-level hierarchical hash wheel (`hierarchical_hash_wheel_timer`), ticked once
/// per millisecond as it is meant to be: a frame of 16.67 ms is 16 or 17 ticks, and each fired
/// timer goes back in with its period (its grid is whole milliseconds, so it keeps it).
fn w3_hash_wheel(periods: &[u64]) -> (f64, f64, f64) {
    use hierarchical_hash_wheel_timer::wheels::quad_wheel::{no_prune, QuadWheelWithOverflow};
    let mut wheel = QuadWheelWithOverflow::new(no_prune::<WheelEntry>);
    for (i, &ms) in periods.iter().enumerate() {
        let e = WheelEntry {
            f: cb(i as u32),
            period: ms,
        };
        wheel
            .insert_with_delay(e, Duration::from_millis(ms))
            .expect("a period of seconds fits the wheel");
    }
    let mut n = 0;
    let mut ms_done = 0u64;
    let times = (1..=W3_FRAMES as u64)
        .map(|frame| {
            let s = Instant::now();
            let until = frame * 1000 / 60;
            while ms_done < until {
                for mut e in wheel.tick() {
                    (e.f)(&mut n);
                    let p = Duration::from_millis(e.period);
                    wheel.insert_with_delay(e, p).expect("fits the wheel");
                }
                ms_done += 1;
            }
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    stats(times)
}

fn w3_bevy(periods: &[u64]) -> (f64, f64, f64) {
    let mut timers = bevy_entities(periods, TimerMode::Repeating);
    let mut n = 0;
    let times = (0..W3_FRAMES)
        .map(|_| {
            let s = Instant::now();
            for (timer, f) in &mut timers {
                timer.tick(frame_dur());
                for _ in 0..timer.times_finished_this_tick() {
                    f(&mut n);
                }
            }
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    stats(times)
}

/// Runs W1–W4 and prints their tables (markdown).
pub fn run(opts: &Options) {
    let quick = opts.quick;
    let sizes: &[usize] = if quick {
        &[100_000]
    } else {
        &[10_000, 100_000, 1_000_000]
    };
    println!("# tickflow timer benchmarks (W1 and W2 whole: medians of interleaved rounds; W2, W3 and W4: one run)\n");

    // A W1 run at 1e4 timers lasts about a millisecond, and this machine's speed drifts over
    // tens of milliseconds: smaller sizes take more runs (up to 15), and the peers run in
    // turn within each round, so that a slow stretch falls on all of them. The ratio is the
    // median of the rounds' ratios.
    let w1_runs = |n: usize| {
        if quick {
            1
        } else {
            (3_000_000 / n).clamp(3, 15)
        }
    };
    println!(
        "## W1 fire-all: one-shots, delays 1..10,000 ms, 60 Hz until all fired (ns per timer; \
         medians of {} interleaved rounds at 1e4 and 1e5)\n",
        w1_runs(10_000)
    );
    println!(
        "| timers | tickflow | Unreal-style | DelayQueue | bevy Timer | Vec scan | tickflow / fastest peer |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for &n in sizes {
        let d = w1_delays(n);
        let rounds: Vec<[f64; 5]> = (0..w1_runs(n))
            .map(|r| {
                let copy = r % vec_scan::COPIES.len();
                [
                    w1_tickflow(&d),
                    w1_unreal(&d),
                    w1_delay_queue(&d),
                    w1_bevy(&d),
                    w1_vec_scan(&d, copy),
                ]
            })
            .collect();
        let [tf, ue, dq, bv, vs] =
            std::array::from_fn(|k| median(rounds.iter().map(|r| r[k]).collect()));
        let ratio = median(
            rounds
                .iter()
                .map(|r| r[0] / r[1..].iter().copied().fold(f64::INFINITY, f64::min))
                .collect(),
        );
        println!("| {n} | {tf:.0} | {ue:.0} | {dq:.0} | {bv:.0} | {vs:.0} | {ratio:.2}× |");
    }

    let w4 = churn::run(quick);

    println!("\n## W3 steady: looping timers, periods 500..5,000 ms, {W3_FRAMES} frames at 60 Hz (ms per frame)\n");
    println!("| timers | peer | mean | p99 | max |");
    println!("|---:|---|---:|---:|---:|");
    for &n in sizes {
        let p = w3_periods(n);
        let rows = [
            ("tickflow", w3_tickflow(&p)),
            ("Unreal-style", w3_unreal(&p)),
            ("DelayQueue", w3_delay_queue(&p)),
            ("hashed wheel", w3_hash_wheel(&p)),
            ("bevy Timer", w3_bevy(&p)),
        ];
        for (name, (mean, p99, max)) in rows {
            println!("| {n} | {name} | {mean:.3} | {p99:.3} | {max:.3} |");
        }
        // The peers that call in due order: the heap, tokio's wheel and the hashed wheel (at
        // its 1 ms resolution). bevy's per-timer scan is not one.
        let ordered_best = rows[1].1 .0.min(rows[2].1 .0).min(rows[3].1 .0);
        println!(
            "| {n} | tickflow / fastest in-order peer (mean) | {:.2}× | | |",
            rows[0].1 .0 / ordered_best
        );
    }

    churn::print_w4(quick, &w4);
}
