//! One timer workload alone, for `perf record` and quick A/B runs (the full comparison with
//! peers is `cargo bench -p tickflow-bench --bench timers`).
//!
//! ```text
//! cargo run --release -p tickflow --example prof -- w1 [timers]   # fire-all, ns per timer
//! cargo run --release -p tickflow --example prof -- w2 [live]     # churn, ns per pair
//! cargo run --release -p tickflow --example prof -- w3 [timers]   # steady, ms per frame (SLOW=1: slowest frames;
//!                                                                 # WARM=1: run w1 and w2 first, as the bench does)
//! cargo run --release -p tickflow --example prof -- w4            # heap bytes per timer, before/after churn
//! cargo run --release -p tickflow --example prof -- sn1 [timers]  # snapshot and restore, ms (10 rounds)
//! cargo run --release -p tickflow --example prof -- floor [live]  # W2's memory pattern alone, see `floor`
//! ```

use std::time::Instant;

use tickflow::prelude::*;

/// xorshift64: the same plan on every run, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn counting(id: u32) -> impl FnMut(&mut u64, &mut TimerCx<'_, u64>) + 'static {
    move |n, _| *n += u64::from(id & 1) + 1
}

fn w1(n: usize) {
    let mut rng = Rng(12345);
    let s = Instant::now();
    let mut t = TimerManager::<u64>::with_capacity(n);
    for i in 0..n {
        t.after(millis(1 + rng.below(9_999)))
            .call(counting(i as u32));
    }
    let inserted = s.elapsed();
    let mut c = 0;
    while !t.is_empty() {
        t.tick(Span::frames(1, 60), &mut c);
    }
    let per = |d: std::time::Duration| d.as_nanos() as f64 / n as f64;
    println!(
        "w1 {n}: insert {:.0} ns/timer, total {:.0} ns/timer",
        per(inserted),
        per(s.elapsed())
    );
}

/// `n` live one-shots, then `ops` × (clear a random one + set a new one).
fn churn(n: usize, ops: usize) -> (TimerManager<u64>, f64) {
    let mut rng = Rng(99);
    let mut t = TimerManager::<u64>::with_capacity(n);
    let mut hs: Vec<TimerHandle> = (0..n)
        .map(|_| t.after(millis(1 + rng.below(9_999))).call(|_, _| {}))
        .collect();
    let s = Instant::now();
    for _ in 0..ops {
        let k = rng.below(n as u64) as usize;
        t.clear(hs[k]);
        hs[k] = t.after(millis(1 + rng.below(9_999))).call(|_, _| {});
    }
    (t, s.elapsed().as_nanos() as f64 / ops.max(1) as f64)
}

fn w2(n: usize) {
    let (_, ns) = churn(n, 1_000_000);
    println!("w2 {n}: {ns:.0} ns per pair");
}

fn w3(n: usize) {
    if std::env::var_os("WARM").is_some() {
        // The allocator's state after other workloads changes how big buffers grow.
        w1(n);
        w2(n);
    }
    let mut rng = Rng(7);
    let mut t = TimerManager::<u64>::with_capacity(n);
    for i in 0..n {
        t.every(millis(500 + rng.below(4_500)))
            .call(counting(i as u32));
    }
    let (mut c, mut calls) = (0, vec![]);
    let times: Vec<f64> = (0..600)
        .map(|_| {
            let s = Instant::now();
            calls.push(t.tick(Span::frames(1, 60), &mut c));
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by(|&a, &b| times[b].total_cmp(&times[a]));
    if std::env::var_os("SLOW").is_some() {
        for &i in &order[..8] {
            println!("frame {i}: {:.3} ms, {} calls", times[i], calls[i]);
        }
    }
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let (p99, max) = (times[order[5]], times[order[0]]);
    println!("w3 {n}: mean {mean:.3} ms, p99 {p99:.3}, max {max:.3}");
}

fn w4() {
    let n = 1_000_000;
    let (fresh, _) = churn(n, 0);
    let (churned, _) = churn(n, n);
    let (before, after) = (
        fresh.heap_bytes() as f64 / n as f64,
        churned.heap_bytes() as f64 / n as f64,
    );
    println!(
        "w4 {n}: {before:.1} B/timer, after churn {after:.1} ({:.2}x)",
        after / before
    );
}

/// Snapshot and restore of `n` tagged timers, ten rounds each (SN1 alone).
fn sn1(n: usize) {
    let mut rng = Rng(777);
    let mut t = TimerManager::<u64>::with_capacity(n);
    for i in 0..n {
        t.every(millis(100 + rng.below(9_900)))
            .tag(i as u64)
            .call(counting(i as u32));
    }
    let mut c = 0;
    t.tick(millis(500), &mut c);
    let (mut snap_ms, mut restore_ms) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let s = Instant::now();
        let snap = t.snapshot();
        snap_ms.push(s.elapsed().as_secs_f64() * 1e3);
        let s = Instant::now();
        let m = TimerManager::restore(
            &snap,
            &mut tickflow::snapshot::Registry::new().other_timers(|info| {
                let id = info.tag? as u32;
                Some(Box::new(counting(id)) as tickflow::timer::TimerCallback<u64>)
            }),
        )
        .expect("restore");
        restore_ms.push(s.elapsed().as_secs_f64() * 1e3);
        drop(m);
    }
    snap_ms.sort_by(f64::total_cmp);
    restore_ms.sort_by(f64::total_cmp);
    println!(
        "sn1 {n}: snapshot {:.1} ms, restore {:.1} ms (medians of 10)",
        snap_ms[5], restore_ms[5]
    );
}

/// A 48-byte record, as a timer entry.
#[derive(Clone, Copy, Default)]
struct Rec48 {
    due: u64,
    gen: u32,
    live: u32,
    _pad: [u64; 4], // the rest of an entry
}

/// W2's pattern without a timer manager: read a random handle, check and free its 48-byte
/// record, reuse it for a new one, append to one of 64 lists, store the new handle. `extra`
/// adds independent work (8 additions per step, no long dependency chain) to each pair, to
/// show how the time of a pair at a million records depends on its instruction count: the
/// CPU overlaps the cache misses of consecutive pairs only while a pair is short.
fn floor(n: usize) {
    for extra in [0, 6, 12, 25, 50] {
        let mut rng = Rng(99);
        let mut recs = vec![Rec48::default(); n];
        let mut hs: Vec<u64> = (0..n as u64).map(|i| i << 32).collect();
        let mut lists: Vec<Vec<u64>> = vec![Vec::new(); 64];
        let (mut free, mut acc) = (Vec::new(), [0u64; 8]);
        let ops: Vec<(usize, u64)> = (0..1_000_000)
            .map(|_| (rng.below(n as u64) as usize, rng.below(1 << 36)))
            .collect();
        let s = Instant::now();
        for &(k, due) in &ops {
            let h = hs[k];
            let i = (h >> 32) as usize;
            let r = &mut recs[i];
            if u64::from(r.gen) == h & 0xffff_ffff && r.live == 0 {
                r.gen += 1;
                free.push(i);
            }
            for step in 0..extra {
                for a in &mut acc {
                    *a = a.wrapping_add(std::hint::black_box(step as u64));
                }
            }
            let i = free.pop().expect("one was freed");
            let r = &mut recs[i];
            r.due = due;
            lists[(due >> 30) as usize & 63].push((i as u64) << 32 | (due & 0xffff_ffff));
            hs[k] = (i as u64) << 32 | u64::from(r.gen);
        }
        let ns = s.elapsed().as_nanos() as f64 / ops.len() as f64;
        std::hint::black_box(acc);
        println!("floor {n}: {extra} × 8 extra additions per pair: {ns:.0} ns per pair");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = args
        .get(1)
        .map_or(1_000_000, |s| s.parse().expect("a number of timers"));
    match args.first().map(String::as_str) {
        Some("w1") => w1(n),
        Some("w2") => w2(n),
        Some("w3") => w3(n),
        Some("w4") => w4(),
        Some("sn1") => sn1(n),
        Some("floor") => floor(n),
        _ => eprintln!("usage: prof w1|w2|w3|w4|sn1|floor [timers]"),
    }
}
