//! Scheduler benchmarks S1–S3 against peers measured in the same run.
//!
//! A plain harness (`harness = false`), like `timers.rs`: each workload runs a few hundred
//! frames, three times, and the median is reported. Run:
//! `cargo bench -p tickflow-bench --bench scheduler` (add `-- quick` for a short run).
//!
//! - S1: 1e5 trivial tick functions in random groups, 10 % with one prerequisite: ns per
//!   function per frame, against a plain `Vec<Box<dyn FnMut>>` loop (the floor) and an
//!   Unreal-style manager that re-queues every function and prerequisite each frame
//!   (`peers/unreal_tick.rs`).
//! - S1 also at 1e3 functions, with the same number of calls; and both sizes again with
//!   stateful bodies, each function owning a `u64` it increments through `black_box` (as a
//!   real tick function moves its own actor): the same bodies for tickflow, the Unreal-style
//!   manager and the floor.
//! - S2: 1e4 functions with intervals of 0.5–5 s at 60 Hz: ns per frame and per function that
//!   ticked, against a naive loop that checks every function's cooldown each frame and a
//!   floor that calls only the due functions. Then 1e5 such functions, and 1e4 of which 10 %
//!   tick every frame (the mix of a game: movement every frame, thinking on intervals). And
//!   that mix with shorter intervals (0.1–2 s) and S1's graph (random groups, 10 % with a
//!   prerequisite), against a scan in a cached topological order; beside it a layout sketch
//!   (`peers/layout_sketch.rs`, not a scheduler) shows how near the floor that shape can come.
//! - S3: 1e3 parallel functions of ~20 µs arithmetic each: speed-up of the worker pool over
//!   running them one by one (`set_parallel(false)`).

use std::hint::black_box;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tickflow::prelude::*;

use crate::peers::layout_sketch::LayoutSketch;
use crate::peers::unreal_tick::{self, UnrealTicks};
use crate::{median, repeat, Options};

fn rng() -> SmallRng {
    SmallRng::seed_from_u64(0x5c4e_d01e)
}

/// What S1's functions do: count a call in the shared `u64` only, or also bump a `u64` each
/// owns (captured by its closure, through `black_box`, so the compiler keeps every store).
#[derive(Clone, Copy, PartialEq)]
enum Bodies {
    Trivial,
    Stateful,
}

/// A peer's boxed function with S1's body of that kind (the floor's and the Unreal-style
/// manager's).
fn peer_fn(bodies: Bodies) -> unreal_tick::TickFn {
    match bodies {
        Bodies::Trivial => Box::new(|n: &mut u64| *n += 1),
        Bodies::Stateful => {
            let mut own = 0u64;
            Box::new(move |n: &mut u64| {
                own = black_box(own) + 1;
                *n += 1;
            })
        }
    }
}

/// The S1 graph: (group, optional prerequisite on an earlier function).
fn s1_graph(n: usize) -> Vec<(usize, Option<usize>)> {
    let mut r = rng();
    (0..n)
        .map(|i| {
            let group = r.random_range(0..7);
            let pre = (i > 0 && r.random_bool(0.1)).then(|| r.random_range(0..i));
            (group, pre)
        })
        .collect()
}

fn s1_tickflow(graph: &[(usize, Option<usize>)], frames: usize, bodies: Bodies) -> f64 {
    let mut sched = Scheduler::<u64>::new();
    let handles: Vec<TickHandle> = graph
        .iter()
        .map(|&(g, _)| {
            let settings = TickSettings::default().in_group(TickGroup::ALL[g]);
            match bodies {
                Bodies::Trivial => sched.ticks().add(settings, |n, _| *n += 1),
                Bodies::Stateful => {
                    let mut own = 0u64;
                    sched.ticks().add(settings, move |n, _| {
                        own = black_box(own) + 1;
                        *n += 1;
                    })
                }
            }
        })
        .collect();
    for (i, &(_, pre)) in graph.iter().enumerate() {
        if let Some(p) = pre {
            sched
                .ticks()
                .add_prerequisite(handles[i], handles[p])
                .unwrap();
        }
    }
    let mut n = 0u64;
    sched.tick(Span::frames(1, 60), &mut n); // resolves the order once
    let start = Instant::now();
    for _ in 0..frames {
        sched.tick(Span::frames(1, 60), &mut n);
    }
    let ns = start.elapsed().as_nanos() as f64;
    assert_eq!(n, (graph.len() * (frames + 1)) as u64);
    ns / (frames * graph.len()) as f64
}

fn s1_unreal(graph: &[(usize, Option<usize>)], frames: usize, bodies: Bodies) -> f64 {
    let mut ticks = UnrealTicks::default();
    for &(g, _) in graph {
        ticks.add(g, peer_fn(bodies));
    }
    for (i, &(_, pre)) in graph.iter().enumerate() {
        if let Some(p) = pre {
            ticks.add_prerequisite(i, p);
        }
    }
    let mut n = 0u64;
    ticks.tick(&mut n);
    let start = Instant::now();
    for _ in 0..frames {
        ticks.tick(&mut n);
    }
    let ns = start.elapsed().as_nanos() as f64;
    assert_eq!(n, (graph.len() * (frames + 1)) as u64);
    ns / (frames * graph.len()) as f64
}

/// The floor: a plain loop over boxed closures. Where the linker happens to put a loop this
/// tight moves its speed by up to a fifth from one build to the next (1.42 and 1.69 ns per
/// call for the same source), so four copies are compiled at different addresses and their
/// median counts: the floor of a typical build, not one build's luck. (The fastest of the
/// four also caught the moments the CPU ran fast: one round read 0.97 ns against 1.2-1.46.)
fn s1_floor(n_funcs: usize, frames: usize, bodies: Bodies) -> f64 {
    let copies: [fn(usize, usize, Bodies) -> f64; 4] = [
        floor_copy::<0>,
        floor_copy::<1>,
        floor_copy::<2>,
        floor_copy::<3>,
    ];
    middle_two(copies.iter().map(|f| f(n_funcs, frames, bodies)).collect())
}

/// The mean of the middle two of four timings of copies (see `s1_floor`).
fn middle_two(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    (times[1] + times[2]) / 2.0
}

/// One copy of the floor; `K` makes the copies differ, so the compiler keeps them apart.
#[inline(never)]
fn floor_copy<const K: usize>(n_funcs: usize, frames: usize, bodies: Bodies) -> f64 {
    let mut funcs: Vec<unreal_tick::TickFn> = (0..n_funcs).map(|_| peer_fn(bodies)).collect();
    let mut n = K as u64;
    let start = Instant::now();
    for _ in 0..frames {
        for f in funcs.iter_mut() {
            f(black_box(&mut n));
        }
    }
    let ns = start.elapsed().as_nanos() as f64;
    assert_eq!(n, (K + n_funcs * frames) as u64);
    ns / (frames * n_funcs) as f64
}

/// `n` intervals: `always_pct` % of them zero (the function ticks every frame), the others
/// uniform in `ms` milliseconds.
fn s2_intervals(n: usize, always_pct: u32, ms: std::ops::Range<u64>) -> Vec<Span> {
    let mut r = rng();
    (0..n)
        .map(|_| {
            if r.random_range(0..100) < always_pct {
                Span::ZERO
            } else {
                Span::from_millis(r.random_range(ms.clone()))
            }
        })
        .collect()
}

/// (ns per frame, ns per function that ticked); with `graph`, each function in its group and
/// after its prerequisite.
fn s2_tickflow(
    intervals: &[Span],
    graph: Option<&[(usize, Option<usize>)]>,
    frames: usize,
) -> (f64, f64) {
    let mut sched = Scheduler::<u64>::new();
    let mut handles = Vec::with_capacity(intervals.len());
    for (i, &interval) in intervals.iter().enumerate() {
        let group = graph.map_or(TickGroup::default(), |g| TickGroup::ALL[g[i].0]);
        handles.push(sched.ticks().add(
            TickSettings {
                interval,
                ..TickSettings::default().in_group(group)
            },
            |n, _| *n += 1,
        ));
    }
    for (i, &(_, pre)) in graph.unwrap_or_default().iter().enumerate() {
        if let Some(p) = pre {
            sched
                .ticks()
                .add_prerequisite(handles[i], handles[p])
                .unwrap();
        }
    }
    let mut n = 0u64;
    sched.tick(Span::frames(1, 60), &mut n); // everyone's first tick
    n = 0;
    let start = Instant::now();
    for _ in 0..frames {
        sched.tick(Span::frames(1, 60), &mut n);
    }
    let ns = start.elapsed().as_nanos() as f64;
    (ns / frames as f64, ns / n.max(1) as f64)
}

/// A naive interval loop: every function's cooldown is checked every frame, in a cached
/// topological order of `graph` when there is one (by group, each function after its
/// prerequisite: computed once, as a scheduler that caches its order would).
///
/// Its speed moves with where the linker puts its loop, as the floor's does (the same source
/// read 14.6-15.7 and 16.1-16.6 us a frame on the game shape in two builds a commit apart),
/// so four copies are compiled at different addresses and the mean of the middle two counts.
fn s2_scan(
    intervals: &[Span],
    graph: Option<&[(usize, Option<usize>)]>,
    frames: usize,
) -> (f64, f64) {
    type Copy = fn(&[Span], Option<&[(usize, Option<usize>)]>, usize) -> (f64, f64);
    let copies: [Copy; 4] = [
        s2_scan_copy::<0>,
        s2_scan_copy::<1>,
        s2_scan_copy::<2>,
        s2_scan_copy::<3>,
    ];
    let times: Vec<(f64, f64)> = copies.iter().map(|f| f(intervals, graph, frames)).collect();
    // Every copy makes the same calls, so both figures order the copies alike.
    (
        middle_two(times.iter().map(|t| t.0).collect()),
        middle_two(times.iter().map(|t| t.1).collect()),
    )
}

/// One copy of the scan; `K` makes the copies differ, so the compiler keeps them apart.
#[inline(never)]
fn s2_scan_copy<const K: usize>(
    intervals: &[Span],
    graph: Option<&[(usize, Option<usize>)]>,
    frames: usize,
) -> (f64, f64) {
    struct F {
        left: u64,
        interval: u64,
        f: unreal_tick::TickFn,
    }
    let order = cached_order(intervals.len(), graph);
    let mut funcs: Vec<F> = order
        .iter()
        .map(|&i| F {
            left: 0,
            interval: intervals[i].flicks(),
            f: Box::new(|n: &mut u64| *n += 1),
        })
        .collect();
    let dt = Span::frames(1, 60).flicks();
    let mut n = K as u64;
    let mut frame = |n: &mut u64| {
        for f in funcs.iter_mut() {
            f.left = f.left.saturating_sub(dt);
            if f.left == 0 {
                (f.f)(n);
                f.left = f.interval;
            }
        }
    };
    frame(&mut n);
    // `K` in the count keeps the copies apart (identical bodies could be merged).
    n = K as u64;
    let start = Instant::now();
    for _ in 0..frames {
        frame(black_box(&mut n));
    }
    let ns = start.elapsed().as_nanos() as f64;
    (ns / frames as f64, ns / (n - K as u64) as f64)
}

/// Index order, or with `graph` a cached topological order: by group, each function after its
/// prerequisite.
fn cached_order(n: usize, graph: Option<&[(usize, Option<usize>)]>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if let Some(g) = graph {
        // A function runs in the later of its group and its prerequisite's (prerequisites
        // have lower indexes, so index order within a group keeps them first).
        let mut at = vec![0usize; g.len()];
        for (i, &(group, pre)) in g.iter().enumerate() {
            at[i] = pre.map_or(group, |p| group.max(at[p]));
        }
        order.sort_by_key(|&i| (at[i], i));
    }
    order
}

/// The layout sketch (`peers/layout_sketch.rs`) in the cached order: ns per frame.
fn s2_sketch(intervals: &[Span], graph: Option<&[(usize, Option<usize>)]>, frames: usize) -> f64 {
    let order = cached_order(intervals.len(), graph);
    let mut sketch = LayoutSketch::new(order.iter().map(|&i| intervals[i].flicks()));
    let dt = Span::frames(1, 60).flicks();
    let mut n = 0u64;
    sketch.tick(dt, &mut n);
    let start = Instant::now();
    for _ in 0..frames {
        sketch.tick(dt, black_box(&mut n));
    }
    start.elapsed().as_nanos() as f64 / frames as f64
}

/// About 20 µs of arithmetic on this machine.
fn work(seed: u64, rounds: u64) -> u64 {
    let mut x = seed;
    for k in 0..rounds {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(k | 1);
        x ^= x >> 29;
    }
    x
}

fn calibrate() -> u64 {
    let rounds = 100_000;
    let start = Instant::now();
    black_box(work(1, rounds));
    let ns = start.elapsed().as_nanos().max(1) as f64;
    ((20_000.0 / ns) * rounds as f64) as u64
}

/// ms per frame.
fn s3(parallel: bool, rounds: u64, frames: usize) -> f64 {
    struct World {
        seed: u64,
    }
    let mut sched = Scheduler::<World>::new();
    sched.ticks().set_parallel(parallel);
    for i in 0..1_000u64 {
        sched.ticks().add_parallel(
            TickSettings::default(),
            i,
            move |acc: &mut u64, w: &World, _| {
                *acc = work(*acc ^ w.seed, rounds);
            },
        );
    }
    let mut world = World { seed: 7 };
    sched.tick(Span::frames(1, 60), &mut world);
    let start = Instant::now();
    for _ in 0..frames {
        sched.tick(Span::frames(1, 60), &mut world);
    }
    start.elapsed().as_secs_f64() * 1e3 / frames as f64
}

/// S2 with `always_pct` % of the functions ticking every frame and the others every `ms`
/// milliseconds, with S1's graph (random groups, 10 % with a prerequisite) when `graph`; the
/// floor is a `Vec<Box<dyn FnMut>>` loop over as many functions as tick per frame (the due
/// calls only).
fn s2(
    n: usize,
    always_pct: u32,
    ms: std::ops::Range<u64>,
    graph: bool,
    runs: usize,
    s2_frames: usize,
) {
    let intervals = s2_intervals(n, always_pct, ms.clone());
    let g = graph.then(|| s1_graph(n));
    let g = g.as_deref();
    let (tf_frame, tf_each) = {
        let r: Vec<(f64, f64)> = (0..runs)
            .map(|_| s2_tickflow(&intervals, g, s2_frames))
            .collect();
        (
            median(r.iter().map(|x| x.0).collect()),
            median(r.iter().map(|x| x.1).collect()),
        )
    };
    let (scan_frame, scan_each) = {
        let r: Vec<(f64, f64)> = (0..runs)
            .map(|_| s2_scan(&intervals, g, s2_frames))
            .collect();
        (
            median(r.iter().map(|x| x.0).collect()),
            median(r.iter().map(|x| x.1).collect()),
        )
    };
    // Every run makes the same calls, so this is the timed frames' count of ticks.
    let ticked = tf_frame / tf_each;
    let due = (ticked.round() as usize).max(1);
    let floor = repeat(runs, || s1_floor(due, s2_frames, Bodies::Trivial));
    let sketch = graph.then(|| repeat(runs, || s2_sketch(&intervals, g, s2_frames)));
    let secs = format!("{}-{} s", ms.start as f64 / 1e3, ms.end as f64 / 1e3);
    let mut what = if always_pct == 0 {
        format!("all with intervals {secs}")
    } else {
        format!("{always_pct}% every frame, the others every {secs}")
    };
    if graph {
        what += ", random groups, 10 % with a prerequisite";
    }
    println!("S2  {n} functions, {what}, at 60 Hz ({ticked:.0} tick per frame)");
    println!(
        "    tickflow      {tf_frame:9.0} ns/frame  {tf_each:7.1} ns per function that ticked"
    );
    let scan = if graph {
        "cached topo   "
    } else {
        "scan-all      "
    };
    println!("    {scan}{scan_frame:9.0} ns/frame  {scan_each:7.1} ns per function that ticked   tickflow/scan = {:.2}x", tf_frame / scan_frame);
    println!(
        "    due calls only              {floor:7.1} ns per function that ticked   tickflow/floor = {:.2}x",
        tf_each / floor
    );
    if let Some(sketch) = sketch {
        // Not a scheduler: how near the floor a frame of this shape can come at all.
        println!(
            "    layout sketch {sketch:9.0} ns/frame  {:7.1} ns per function that ticked   sketch/floor = {:.2}x (no scheduler's work: peers/layout_sketch.rs)",
            sketch / ticked,
            sketch / ticked / floor
        );
    }
}

/// Runs S0–S3 and prints their results.
pub fn run(opts: &Options) {
    let quick = opts.quick;
    let runs = if quick { 1 } else { 3 };
    let frames = if quick { 30 } else { 200 };

    for (bodies, n) in [
        (Bodies::Trivial, 1_000),
        (Bodies::Trivial, 100_000),
        (Bodies::Stateful, 1_000),
        (Bodies::Stateful, 100_000),
    ] {
        // The same number of calls at both sizes.
        let frames = frames * (100_000 / n);
        let graph = s1_graph(n);
        // Interleaved rounds, each with its own ratios: the machine's speed drifts (shared,
        // clocks boosting and not), and a ratio of two numbers measured apart would carry
        // that drift.
        let rounds: Vec<[f64; 3]> = (0..runs)
            .map(|_| {
                [
                    s1_tickflow(&graph, frames, bodies),
                    s1_unreal(&graph, frames, bodies),
                    s1_floor(n, frames, bodies),
                ]
            })
            .collect();
        let med = |f: &dyn Fn(&[f64; 3]) -> f64| median(rounds.iter().map(f).collect());
        let (tf, ue, floor) = (med(&|r| r[0]), med(&|r| r[1]), med(&|r| r[2]));
        let kind = match bodies {
            Bodies::Trivial => "",
            Bodies::Stateful => ", stateful bodies",
        };
        println!("S1  {n} tick functions{kind}, random groups, 10 % with a prerequisite (ns per function per frame, median of {runs} interleaved rounds; ratios are medians of the rounds' ratios)");
        println!("    tickflow      {tf:7.2}");
        println!(
            "    unreal-style  {ue:7.2}   tickflow/unreal = {:.2}x",
            med(&|r| r[0] / r[1])
        );
        println!(
            "    Vec<Box<dyn>> {floor:7.2}   tickflow/floor  = {:.2}x",
            med(&|r| r[0] / r[2])
        );
    }

    let s2_frames = if quick { 120 } else { 1_200 };
    let empty = repeat(runs, || s2_tickflow(&[], None, s2_frames).0);
    println!("S0  an empty scheduler frame (clock, 7 groups, timers, tickables): {empty:.0} ns");
    for n in [10_000, 100_000] {
        s2(n, 0, 500..5_000, false, runs, s2_frames);
    }
    s2(10_000, 10, 500..5_000, false, runs, s2_frames);
    // A game's shape (issue 34): short intervals, groups and prerequisites.
    s2(10_000, 10, 100..2_000, true, runs, s2_frames);

    let rounds = calibrate();
    let s3_frames = if quick { 5 } else { 30 };
    let serial = repeat(runs, || s3(false, rounds, s3_frames));
    let parallel = repeat(runs, || s3(true, rounds, s3_frames));
    println!(
        "S3  1000 parallel functions of ~20 us ({} threads): serial {serial:.2} ms/frame, parallel {parallel:.2} ms/frame, speed-up {:.2}x",
        rayon::current_num_threads(),
        serial / parallel
    );
}
