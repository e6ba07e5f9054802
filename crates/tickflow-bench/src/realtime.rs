//! Real-time service benchmarks, peers in the same run.
//!
//! `cargo bench -p tickflow-bench --bench realtime` (add `-- quick` for 1 s runs).
//!
//! - Lateness: n repeating timers (n = 1e3, 1e4), periods random in 10..100 ms, for 5 s; each
//!   call records how late it ran after its own scheduled time; p50 / p99 / max, the CPU
//!   the process used while they ran (percent of one core), and the calls made before their
//!   due time (there must be none). Peers: a naive heap thread (a
//!   binary heap of due times and `park_timeout` until the next, default timer slack; once
//!   with the recording written into its loop, once calling a boxed closure per timer), one
//!   `tokio::time::interval` task per timer on a current-thread runtime, and
//!   `crossbeam_channel::tick` receivers served by 16 threads (each a `Select` over its share).
//!   tickflow and the two naive rows run twice more, interleaved, and tickflow's CPU ratios
//!   are the medians of the three rounds' ratios.
//! - Throughput: 2 threads each schedule a 10 s timer and cancel it, 200,000 times; against
//!   tokio, where the same is creating a `sleep`, polling it once (it registers) and dropping it,
//!   from 2 tasks on a 2-worker runtime.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tickflow::realtime::{scheduled, RealtimeTimers};

use crate::Options;

fn periods(n: usize) -> Vec<Duration> {
    let mut r = SmallRng::seed_from_u64(0x7e41);
    (0..n)
        .map(|_| Duration::from_micros(r.random_range(10_000..100_000)))
        .collect()
}

/// (p50, p99, max) in µs.
fn stats(mut v: Vec<u64>) -> (f64, f64, f64, usize) {
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize] as f64 / 1e3;
    (at(0.5), at(0.99), *v.last().unwrap() as f64 / 1e3, v.len())
}

/// Room for every sample of the longest run (1e4 timers of 10–100 ms for 5 s make about
/// 1.28 million calls): a vector that grows while the timers run reallocates inside a call,
/// and that one call's lateness (several ms to copy 8 MB) would be the row's max.
const SAMPLES: usize = 1 << 21;

/// Calls made before their due time, in the workload running now (read and reset per row).
static EARLY: AtomicU64 = AtomicU64::new(0);

/// Nanoseconds from `due` to `now`. An early call is counted in [`EARLY`] (and recorded as 0):
/// `Instant`'s own subtraction saturates, and would hide one.
fn lateness(now: Instant, due: Instant) -> u64 {
    match now.checked_duration_since(due) {
        Some(late) => late.as_nanos() as u64,
        None => {
            EARLY.fetch_add(1, Ordering::Relaxed);
            0
        }
    }
}

fn lateness_tickflow(p: &[Duration], run: Duration) -> Vec<u64> {
    lateness_tickflow_window(p, run, tickflow::realtime::DEFAULT_BATCH_WINDOW)
}

/// The precise setting: no batching window, every wait ends as close to its deadline as the
/// machine allows.
fn lateness_tickflow_precise(p: &[Duration], run: Duration) -> Vec<u64> {
    lateness_tickflow_window(p, run, Duration::ZERO)
}

fn lateness_tickflow_window(p: &[Duration], run: Duration, window: Duration) -> Vec<u64> {
    let timers = RealtimeTimers::start();
    timers.set_batch_window(window);
    let samples = Arc::new(Mutex::new(Vec::with_capacity(SAMPLES)));
    for &period in p {
        let s = samples.clone();
        timers.every(period).call(move || {
            let late = lateness(Instant::now(), scheduled().expect("in a call"));
            s.lock().unwrap().push(late);
        });
    }
    std::thread::sleep(run);
    timers.shutdown();
    Arc::try_unwrap(samples).unwrap().into_inner().unwrap()
}

/// The simplest correct timer thread: a heap of due times, `park_timeout` until the earliest.
/// Its "callback" is written into its loop, so this is a floor more than a service.
fn lateness_naive_heap(p: &[Duration], run: Duration) -> Vec<u64> {
    // Samples are recorded as tickflow's callbacks record them (through a shared, locked
    // vector), so that the comparison is of the timer threads, not of how samples are kept.
    let samples = Mutex::new(Vec::with_capacity(SAMPLES));
    naive_heap_thread(p, run, |_, due| {
        let late = lateness(Instant::now(), due);
        samples.lock().unwrap().push(late);
    });
    samples.into_inner().unwrap()
}

/// The same thread as a service: each timer has its own boxed closure (given its due time),
/// as a user's timer would, and the closures record as tickflow's do.
fn lateness_naive_heap_boxed(p: &[Duration], run: Duration) -> Vec<u64> {
    let samples = Arc::new(Mutex::new(Vec::with_capacity(SAMPLES)));
    let mut callbacks: Vec<Box<dyn FnMut(Instant) + Send>> = p
        .iter()
        .map(|_| {
            let s = samples.clone();
            Box::new(move |due| {
                let late = lateness(Instant::now(), due);
                s.lock().unwrap().push(late);
            }) as Box<dyn FnMut(Instant) + Send>
        })
        .collect();
    naive_heap_thread(p, run, |i, due| callbacks[i](due));
    drop(callbacks);
    Arc::try_unwrap(samples).unwrap().into_inner().unwrap()
}

/// A binary heap of (due time, timer) and `park_timeout` until the earliest (default timer
/// slack), on the calling thread, for `run`; `call(i, due)` makes timer `i`'s call.
fn naive_heap_thread(p: &[Duration], run: Duration, mut call: impl FnMut(usize, Instant)) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let start = Instant::now();
    let end = start + run;
    let mut heap: BinaryHeap<Reverse<(Instant, usize)>> = p
        .iter()
        .enumerate()
        .map(|(i, &d)| Reverse((start + d, i)))
        .collect();
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        while let Some(&Reverse((due, i))) = heap.peek() {
            if due > now {
                break;
            }
            heap.pop();
            call(i, due);
            heap.push(Reverse((due + p[i], i)));
        }
        if let Some(&Reverse((due, _))) = heap.peek() {
            std::thread::park_timeout(due.saturating_duration_since(Instant::now()));
        }
    }
}

/// The CPU time the whole process has used so far.
pub fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Runs `f` and returns its result with the CPU it took, in percent of one core over `run`.
fn with_cpu<T>(run: Duration, f: impl FnOnce() -> T) -> (T, f64) {
    let before = process_cpu_time();
    let out = f();
    let cpu = process_cpu_time() - before;
    (out, 100.0 * cpu.as_secs_f64() / run.as_secs_f64())
}

fn lateness_tokio(p: &[Duration], run: Duration) -> Vec<u64> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let samples = std::rc::Rc::new(std::cell::RefCell::new(Vec::with_capacity(SAMPLES)));
    local.block_on(&rt, async {
        for &period in p {
            let s = samples.clone();
            tokio::task::spawn_local(async move {
                let start = tokio::time::Instant::now() + period;
                let mut iv = tokio::time::interval_at(start, period);
                loop {
                    let due = iv.tick().await;
                    let late = lateness(tokio::time::Instant::now().into_std(), due.into_std());
                    s.borrow_mut().push(late);
                }
            });
        }
        tokio::time::sleep(run).await;
    });
    drop(local);
    let v = samples.borrow().clone();
    v
}

fn lateness_crossbeam(p: &[Duration], run: Duration) -> Vec<u64> {
    let end = Instant::now() + run;
    let threads = 16;
    let samples = Arc::new(Mutex::new(Vec::with_capacity(SAMPLES)));
    std::thread::scope(|sc| {
        for chunk in p.chunks(p.len().div_ceil(threads)) {
            let samples = samples.clone();
            sc.spawn(move || {
                let rx: Vec<_> = chunk.iter().map(|&d| crossbeam_channel::tick(d)).collect();
                let mut local = Vec::new();
                let mut sel = crossbeam_channel::Select::new();
                for r in &rx {
                    sel.recv(r);
                }
                while Instant::now() < end {
                    let Ok(op) = sel.select_timeout(end - Instant::now()) else {
                        break;
                    };
                    let i = op.index();
                    if let Ok(due) = op.recv(&rx[i]) {
                        local.push(lateness(Instant::now(), due));
                    }
                }
                samples.lock().unwrap().extend(local);
            });
        }
    });
    Arc::try_unwrap(samples).unwrap().into_inner().unwrap()
}

fn throughput_tickflow(per_thread: usize) -> f64 {
    let timers = RealtimeTimers::start();
    let remote = timers.remote();
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            let remote = remote.clone();
            s.spawn(move || {
                for _ in 0..per_thread {
                    let h = remote.after(Duration::from_secs(10)).call(|| {});
                    h.cancel();
                }
            });
        }
    });
    let secs = t.elapsed().as_secs_f64();
    timers.shutdown();
    (2 * per_thread) as f64 / secs
}

fn throughput_tokio(per_thread: usize) -> f64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let t = Instant::now();
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                tokio::spawn(async move {
                    for _ in 0..per_thread {
                        // Polled once: registers in the timer wheel; dropped: removed.
                        let _ = tokio::time::sleep(Duration::from_secs(10)).now_or_never();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        (2 * per_thread) as f64 / t.elapsed().as_secs_f64()
    })
}

/// A lateness workload: timers with these periods for this long; returns each call's lateness in ns.
type Workload = fn(&[Duration], Duration) -> Vec<u64>;

/// Runs the lateness and throughput workloads and prints their results.
pub fn run(opts: &Options) {
    let quick = opts.quick;
    let run = Duration::from_secs(if quick { 1 } else { 5 });
    for n in [1_000, 10_000] {
        let p = periods(n);
        println!(
            "lateness, {n} repeating timers (10..100 ms), {} s: p50 / p99 / max in us, CPU % of a core (calls, early)",
            run.as_secs()
        );
        let workloads: [(&str, Workload); 6] = [
            ("tickflow", lateness_tickflow),
            ("tickflow precise", lateness_tickflow_precise),
            ("naive heap", lateness_naive_heap),
            ("naive + closures", lateness_naive_heap_boxed),
            ("tokio interval", lateness_tokio),
            ("crossbeam tick", lateness_crossbeam),
        ];
        // (CPU %, p99) of each row; the first three rows' are measured again in `rounds - 1`
        // more interleaved rounds, and their ratios are the medians of the rounds' ratios: a
        // single 5 s run of a row moved by ±5 % from one run to the next on a shared machine.
        let measure = |f: Workload| {
            EARLY.store(0, Ordering::Relaxed);
            let (v, cpu) = with_cpu(run, || f(&p, run));
            let (p50, p99, max, calls) = stats(v);
            ((p50, p99, max, calls, EARLY.load(Ordering::Relaxed)), cpu)
        };
        let mut first = Vec::new();
        for (name, f) in workloads {
            let ((p50, p99, max, calls, early), cpu) = measure(f);
            println!("    {name:16} {p50:8.1} {p99:8.1} {max:9.1} {cpu:6.1}%   ({calls}, {early})");
            first.push((cpu, p99));
        }
        // tickflow, the naive heap and naive + closures: the rows the ratios compare.
        const PAIRED: [usize; 3] = [0, 2, 3];
        let rounds = if quick { 1 } else { 3 };
        let mut rows = vec![PAIRED.map(|i| first[i])];
        for round in 2..=rounds {
            let row = PAIRED.map(|i| {
                let ((_, p99, _, _, early), cpu) = measure(workloads[i].1);
                assert_eq!(early, 0, "{} called a timer early", workloads[i].0);
                (cpu, p99)
            });
            println!(
                "    round {round}: tickflow {:.1}% p99 {:.1}, naive heap {:.1}% p99 {:.1}, \
                 naive + closures {:.1}% p99 {:.1}",
                row[0].0, row[0].1, row[1].0, row[1].1, row[2].0, row[2].1
            );
            rows.push(row);
        }
        let ratios =
            |k: usize| -> Vec<f64> { rows.iter().map(|x| x[0].0 / x[k].0.max(1e-9)).collect() };
        let each = ratios(1);
        let (naive, closures) = (crate::median(each.clone()), crate::median(ratios(2)));
        let p99_under = rows.iter().filter(|x| x[0].1 <= x[1].1).count();
        println!(
            "    tickflow / naive heap: CPU {naive:.2}x (median of {rounds} rounds: {}; default \
             window, {} us), p99 at or under the naive heap's in {p99_under} of {rounds}; \
             precise: CPU {:.2}x; tickflow / naive + closures: CPU {closures:.2}x",
            each.iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            tickflow::realtime::DEFAULT_BATCH_WINDOW.as_micros(),
            first[1].0 / first[2].0.max(1e-9),
        );
    }
    let per = if quick { 50_000 } else { 200_000 };
    let tf = throughput_tickflow(per);
    let tk = throughput_tokio(per);
    println!(
        "schedule+cancel from 2 threads: tickflow {:.2} M/s, tokio {:.2} M/s, ratio {:.2}x",
        tf / 1e6,
        tk / 1e6,
        tf / tk
    );
}
