//! Latent benchmarks L1–L2.
//!
//! A plain harness (`harness = false`), like the others: each workload runs 600 frames; the
//! versions run in turn, five rounds, and the medians (of times, and of per-round ratios) are
//! reported, so a slow spell of the shared machine hits every version. Run:
//! `cargo bench -p tickflow-bench --bench latent` (add `-- quick` for a short run; `-- only=tasks`
//! (or `timers`, `chains`, `latent`) runs one workload for `perf`; `-- profile-tasks` prints
//! the task version's time per stage; `L1_N=10000` changes the size).
//!
//! - L1: 1e5 async tasks, each looping `delay(p)` with its own random `p` in 0.5..5 s, for 600
//!   frames at 60 Hz, against the same schedule as 1e5 looping timers (`every(p)`), as 1e5
//!   one-shot timers re-set by their own callback, and as 1e5 latent `Delay`s re-armed by their
//!   completion. Time per frame of `Scheduler::tick` (after one untimed frame in which the
//!   tasks make their first poll); every version must make exactly the same calls.
//! - L2: heap bytes per idle task (one waiting on a delay), counted by a global allocator,
//!   minus the future's own size; the same for an idle looping timer, for scale.

use std::cell::Cell;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tickflow::prelude::*;
use tickflow::Timers;

use crate::{median, Options};

fn live() -> isize {
    crate::alloc::live() as isize
}

fn periods(n: usize) -> Vec<Span> {
    let mut r = SmallRng::seed_from_u64(0x001a_7e47);
    (0..n)
        .map(|_| Span::from_millis(r.random_range(500..5_000)))
        .collect()
}

/// Runs one untimed frame (tasks make their first poll), then `frames` timed 60 Hz frames;
/// returns µs per timed frame.
fn timed<C: 'static>(sched: &mut Scheduler<C>, ctx: &mut C, frames: usize) -> f64 {
    sched.tick(Span::frames(1, 60), ctx);
    let start = Instant::now();
    for _ in 0..frames {
        sched.tick(Span::frames(1, 60), ctx);
    }
    start.elapsed().as_secs_f64() * 1e6 / frames as f64
}

/// [`timed`] with a call counter as the context: (µs per frame, calls made).
fn frames(sched: &mut Scheduler<u64>, frames: usize) -> (f64, u64) {
    let mut calls = 0;
    (timed(sched, &mut calls, frames), calls)
}

/// A scheduler with one task per period, each looping `delay(period)` and counting.
fn task_loops(p: &[Span]) -> Scheduler<u64> {
    let mut sched = Scheduler::<u64>::new();
    for &period in p {
        sched.tasks().spawn(None, move |cx| async move {
            loop {
                cx.delay(period).await;
                cx.with(|n| *n += 1);
            }
        });
    }
    sched
}

fn l1_tasks(p: &[Span], n_frames: usize) -> (f64, u64) {
    frames(&mut task_loops(p), n_frames)
}

fn l1_timers(p: &[Span], n_frames: usize) -> (f64, u64) {
    let mut sched = Scheduler::<u64>::new();
    for &period in p {
        sched.timers().every(period).call(|n, _| *n += 1);
    }
    frames(&mut sched, n_frames)
}

/// The same schedule as one-shot timers, each re-set by its own callback (rule 5: it counts
/// from the call's scheduled time): the timer work a task's delay loop cannot avoid.
fn l1_chains(p: &[Span], n_frames: usize) -> (f64, u64) {
    fn arm(tm: &mut Timers<u64>, period: Span) {
        tm.after(period).call(move |n, cx| {
            *n += 1;
            arm(cx.timers(), period);
        });
    }
    let mut sched = Scheduler::<u64>::new();
    for &period in p {
        arm(sched.timers(), period);
    }
    frames(&mut sched, n_frames)
}

struct Looping {
    calls: u64,
}

fn l1_latent(p: &[Span], n_frames: usize) -> (f64, u64) {
    fn arm(cmds: &Commands<Looping>, i: u64, period: Span) {
        cmds.latent()
            .delay(OwnerId::from(i), 0, period, move |g: &mut Looping, cx| {
                g.calls += 1;
                arm(cx.commands(), i, period);
            });
    }
    let mut sched = Scheduler::<Looping>::new();
    let mut game = Looping { calls: 0 };
    let cmds = sched.commands();
    for (i, &period) in p.iter().enumerate() {
        arm(&cmds, i as u64, period);
    }
    (timed(&mut sched, &mut game, n_frames), game.calls)
}

/// L2: (bytes per idle task, the future's own size, bytes per idle looping timer).
fn l2(n: usize) -> (f64, usize, f64) {
    let future_size = Cell::new(0);
    let mut sched = Scheduler::<u64>::new();
    sched.tick(Span::frames(1, 60), &mut 0);
    let before = live();
    for _ in 0..n {
        sched.tasks().spawn(None, |cx| {
            let fut = async move {
                loop {
                    cx.delay(secs(1000.0)).await;
                    cx.with(|n| *n += 1);
                }
            };
            future_size.set(std::mem::size_of_val(&fut));
            fut
        });
    }
    sched.tick(Span::frames(1, 60), &mut 0); // first poll: every task now waits on a timer
    let per_task = (live() - before) as f64 / n as f64;
    drop(sched);

    let mut sched = Scheduler::<u64>::new();
    sched.tick(Span::frames(1, 60), &mut 0);
    let before = live();
    for _ in 0..n {
        sched.timers().every(secs(1000.0)).call(|n, _| *n += 1);
    }
    sched.tick(Span::frames(1, 60), &mut 0);
    let per_timer = (live() - before) as f64 / n as f64;
    (per_task, future_size.get(), per_timer)
}

/// Runs L1 and L2 and prints their results; `opts.args` may hold `only=…` or `profile-tasks`.
pub fn run(opts: &Options) {
    let quick = opts.quick;
    let runs = if quick { 1 } else { 5 };
    let n_frames = if quick { 120 } else { 600 };
    let n = std::env::var("L1_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let p = periods(n);

    if let Some(which) = opts
        .args
        .iter()
        .find_map(|a| a.strip_prefix("only=").map(String::from))
    {
        // One workload alone, for `perf stat` / `perf record`.
        let f = match which.as_str() {
            "timers" => l1_timers,
            "chains" => l1_chains,
            "tasks" => l1_tasks,
            _ => l1_latent,
        };
        println!("{:?}", f(&p, n_frames));
        return;
    }
    if opts.args.iter().any(|a| a == "profile-tasks") {
        // For `perf record`: the task workload alone, with the stage split.
        let mut sched = task_loops(&p);
        sched.set_stage_timing(true);
        let mut n = 0;
        sched.tick(Span::frames(1, 60), &mut n);
        let mut split = [0.0; 3];
        for _ in 0..n_frames {
            let r = sched.tick(Span::frames(1, 60), &mut n);
            split[0] += r.stage_time(tickflow::Stage::Timers).as_secs_f64();
            split[1] += r.stage_time(tickflow::Stage::Latent).as_secs_f64();
            split[2] += r.total_time().as_secs_f64();
        }
        let us = |x: f64| x * 1e6 / n_frames as f64;
        println!(
            "timers {:.1} us, latent {:.1} us, frame {:.1} us per frame",
            us(split[0]),
            us(split[1]),
            us(split[2])
        );
        return;
    }
    // Interleaved runs, so that a slow spell of this shared machine hits every version; the
    // ratios are medians of per-round ratios.
    let mut t = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut calls = [0u64; 4];
    for _ in 0..runs {
        let results = [
            l1_timers(&p, n_frames),
            l1_chains(&p, n_frames),
            l1_tasks(&p, n_frames),
            l1_latent(&p, n_frames),
        ];
        for (k, (us, c)) in results.into_iter().enumerate() {
            t[k].push(us);
            calls[k] = c;
        }
    }
    assert!(
        calls.iter().all(|&c| c == calls[0]),
        "every version must make the same calls: {calls:?}"
    );
    let ratio = |k: usize| median(t[k].iter().zip(&t[0]).map(|(a, b)| a / b).collect());
    let med = |k: usize| median(t[k].clone());
    println!(
        "L1  {n} loops of delay(0.5..5 s), {n_frames} frames at 60 Hz, {} calls (us per frame, median of {runs})",
        calls[0]
    );
    println!("    looping timers        {:8.1}", med(0));
    println!(
        "    one-shot timer chains {:8.1}   chains/timers = {:.2}x",
        med(1),
        ratio(1)
    );
    println!(
        "    async tasks           {:8.1}   tasks/timers  = {:.2}x",
        med(2),
        ratio(2)
    );
    println!(
        "    latent Delay loops    {:8.1}   latent/timers = {:.2}x",
        med(3),
        ratio(3)
    );

    let (per_task, fut, per_timer) = l2(n);
    println!(
        "L2  idle task: {per_task:.0} bytes ({fut} the future itself, {:.0} the task); idle looping timer: {per_timer:.0} bytes",
        per_task - fut as f64
    );
}
