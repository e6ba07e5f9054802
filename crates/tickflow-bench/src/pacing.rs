//! P1, pacing a headless loop: how late each frame starts against the grid the loop promised
//! (`start + n × period`), how far the last frame drifted, and the CPU the loop burns while it
//! mostly waits. Three loops with the same (tiny) frame, one after another in the same run:
//!
//! - tickflow's [`PacedRunner`]: absolute deadlines, the thread's timer slack reduced;
//! - Bevy's `ScheduleRunnerPlugin::run_loop(period)` (bevy_app 0.20): after each update it
//!   sleeps `period − (time the update took)`, a relative wait, so every oversleep is kept;
//! - a plain `thread::sleep` loop written the same way, the loop most servers start with.
//!
//! Lateness is measured from the grid anchored where each loop starts (for the two relative
//! loops: their first frame), so a drifting loop's lateness grows frame after frame.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy_app::{App, AppExit, ScheduleRunnerPlugin, Update};
use bevy_ecs::prelude::*;
use tickflow::driver::PacedRunner;
use tickflow::prelude::*;

use crate::realtime::process_cpu_time;
use crate::Options;

/// What one loop did: each frame's lateness (ns) against its grid, and its CPU in % of a core.
struct Paced {
    lateness: Vec<u64>,
    cpu: f64,
}

impl Paced {
    /// Lateness of frame `n` (from 0) started at `at`, on a grid of `period` from `start`.
    fn from_starts(starts: &[Instant], start: Instant, period: Duration, first: u32) -> Vec<u64> {
        starts
            .iter()
            .zip(first..)
            .map(|(&at, n)| at.saturating_duration_since(start + period * n).as_nanos() as u64)
            .collect()
    }
}

/// Runs `f` and measures the process CPU it took, in % of one core over the wall time.
fn measured(f: impl FnOnce() -> Vec<u64>) -> Paced {
    let (cpu0, t0) = (process_cpu_time(), Instant::now());
    let lateness = f();
    let cpu = (process_cpu_time() - cpu0).as_secs_f64() / t0.elapsed().as_secs_f64();
    Paced {
        lateness,
        cpu: 100.0 * cpu,
    }
}

/// The same small frame for every loop: a scheduler frame with a few timers.
fn scheduler() -> Scheduler<u64> {
    let mut sched = Scheduler::new();
    for ms in [10, 50, 100] {
        sched.timers().every(millis(ms)).call(|n, _| *n += 1);
    }
    sched
}

fn tickflow(hz: u32, frames: u64) -> Paced {
    measured(|| {
        let mut sched = scheduler();
        let mut n = 0;
        let mut starts = Vec::with_capacity(frames as usize);
        let mut runner = PacedRunner::new(hz);
        let start = Instant::now();
        runner.run_until(&mut sched, &mut n, |frame, _| {
            starts.push(frame.deadline + frame.lateness);
            frame.frames == frames
        });
        let period = Duration::from(Span::frames(1, hz));
        Paced::from_starts(&starts, start, period, 1)
    })
}

#[derive(Resource)]
struct BevyLoop {
    /// A scheduler is `Send`, not `Sync`, and Bevy resources must be both: a `Mutex` makes it
    /// `Sync`, and `get_mut` through `ResMut` reaches it without locking.
    sched: Mutex<Scheduler<u64>>,
    n: u64,
    step: Span,
    /// Shared with the benchmark: `App::run` moves the app (and its world) into the runner.
    starts: Arc<Mutex<Vec<Instant>>>,
    frames: u64,
}

fn bevy_frame(mut state: ResMut<BevyLoop>, mut exit: MessageWriter<AppExit>) {
    let state = &mut *state;
    let started = {
        let mut starts = state.starts.lock().unwrap();
        starts.push(Instant::now());
        starts.len() as u64
    };
    let sched = state.sched.get_mut().unwrap();
    sched.tick(state.step, &mut state.n);
    if started == state.frames {
        exit.write(AppExit::Success);
    }
}

fn bevy(hz: u32, frames: u64) -> Paced {
    measured(|| {
        let period = Duration::from(Span::frames(1, hz));
        let starts = Arc::new(Mutex::new(Vec::with_capacity(frames as usize)));
        let mut app = App::new();
        app.add_plugins(ScheduleRunnerPlugin::run_loop(period))
            .insert_resource(BevyLoop {
                sched: Mutex::new(scheduler()),
                n: 0,
                step: Span::frames(1, hz),
                starts: starts.clone(),
                frames,
            })
            .add_systems(Update, bevy_frame);
        app.run();
        let starts = starts.lock().unwrap();
        Paced::from_starts(&starts, starts[0], period, 0)
    })
}

fn sleep_loop(hz: u32, frames: u64) -> Paced {
    measured(|| {
        let period = Duration::from(Span::frames(1, hz));
        let step = Span::frames(1, hz);
        let mut sched = scheduler();
        let mut n = 0;
        let mut starts = Vec::with_capacity(frames as usize);
        for _ in 0..frames {
            let t = Instant::now();
            starts.push(t);
            sched.tick(step, &mut n);
            if let Some(rest) = period.checked_sub(t.elapsed()) {
                std::thread::sleep(rest);
            }
        }
        Paced::from_starts(&starts, starts[0], period, 0)
    })
}

/// (p50, p99, last frame's) lateness in µs, and the drift in ms per hour: the growth of the
/// lateness from the first tenth of the frames to the last tenth, extrapolated.
fn summary(v: &[u64], seconds: u64) -> (f64, f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_unstable();
    let at = |q: f64| s[((s.len() - 1) as f64 * q) as usize] as f64 / 1e3;
    let tenth = (v.len() / 10).max(1);
    let mean = |w: &[u64]| w.iter().sum::<u64>() as f64 / w.len() as f64;
    let growth_us = (mean(&v[v.len() - tenth..]) - mean(&v[..tenth])) / 1e3;
    // The two tenths' centres are 0.9 of the run apart.
    let per_hour_ms = growth_us / 1e3 * 3600.0 / (0.9 * seconds as f64);
    let last = *v.last().unwrap_or(&0) as f64 / 1e3;
    (at(0.5), at(0.99), last, per_hour_ms)
}

/// A paced loop: `frames` frames at `hz`.
type Loop = fn(u32, u64) -> Paced;

/// Runs P1 and prints its table.
pub fn run(opts: &Options) {
    let seconds = if opts.quick { 2 } else { 10 };
    println!(
        "P1 pacing: frame lateness against the loop's own grid (p50 / p99 / last frame, us), its\n\
         growth per hour (drift), CPU % of a core while waiting; {seconds} s per loop"
    );
    for hz in [60u32, 250] {
        let frames = u64::from(hz) * seconds;
        println!("  {hz} Hz, {frames} frames");
        let loops: [(&str, Loop); 3] = [
            ("tickflow PacedRunner", tickflow),
            ("Bevy ScheduleRunner", bevy),
            ("thread::sleep loop", sleep_loop),
        ];
        let mut results = Vec::new();
        for (name, f) in loops {
            let r = f(hz, frames);
            let (p50, p99, last, per_hour_ms) = summary(&r.lateness, seconds);
            println!(
                "    {name:22} {p50:8.1} {p99:8.1} {last:10.1}   drift/h {per_hour_ms:9.1} ms   CPU {:5.2}%",
                r.cpu
            );
            results.push((p99, r.cpu));
        }
        println!(
            "    tickflow p99 / Bevy {:.2}x, / sleep loop {:.2}x; CPU / Bevy {:.2}x, / sleep loop {:.2}x",
            results[0].0 / results[1].0.max(1e-9),
            results[0].0 / results[2].0.max(1e-9),
            results[0].1 / results[1].1.max(1e-9),
            results[0].1 / results[2].1.max(1e-9),
        );
    }
}
