//! `tickflow demo`: runs the arena, shows progress, writes the trace, the plots and the tick
//! graph, and prints a summary.

use std::fs;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use tickflow::realtime::{scheduled, Dispatch, Dispatcher, RealtimeTimers};
use tickflow::{Span, Stage};
use tracing_subscriber::prelude::*;

use crate::arena::{self, Stats};
use crate::output::Staging;
use crate::trace::Recorder;
use crate::{plots, CliError};

/// The files a run writes into `--out`.
pub(crate) const FILES: [&str; 5] = [
    "trace.json",
    "frames.svg",
    "frames.png",
    "catch-up.svg",
    "tick-graph.dot",
];

/// What to run.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) actors: usize,
    pub(crate) seconds: f64,
    pub(crate) hz: u32,
    pub(crate) seed: u64,
    pub(crate) realtime: bool,
    pub(crate) out: PathBuf,
}

/// What a run measured.
struct Run {
    frames: u64,
    wall: Duration,
    stage_times: Vec<[Duration; 11]>,
    timers_fired: u64,
    ticks_run: u64,
    tickables: u64,
    latent_completed: u64,
    tasks_polled: u64,
    tasks_ended: u64,
    stats: Stats,
    alive: usize,
    checksum: u64,
    autosaves: Vec<f64>,
    tick_functions: usize,
    timers_live: usize,
    latent_live: usize,
    dot: String,
}

/// Runs the demo and writes its files; prints the summary.
pub(crate) fn run(s: &Settings) -> Result<(), CliError> {
    let staging = Staging::new(&s.out)?;
    let recorder = Recorder::new();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let run = tracing::subscriber::with_default(subscriber, || simulate(s));
    fs::File::create(staging.path("trace.json"))
        .and_then(|f| recorder.write(io::BufWriter::new(f)))
        .map_err(|e| CliError::io("writing trace.json", e))?;

    plots::frames(
        &staging.path("frames.svg"),
        &staging.path("frames.png"),
        &run.stage_times,
        s.hz,
    )?;
    plots::catch_up(&staging.path("catch-up.svg"))?;
    staging.write("tick-graph.dot", &run.dot)?;
    let paths = staging.commit(&FILES)?;
    print_summary(s, &run, &paths);
    Ok(())
}

fn simulate(s: &Settings) -> Run {
    let frames = ((s.seconds * f64::from(s.hz)).round() as u64).max(1);
    let dt = Span::frames(1, s.hz);
    let mut world = arena::build(s.actors, s.seed);

    // The autosave runs on the real-time service's thread every 2 s of wall time and is
    // delivered to this loop through a Dispatcher, as a game would hand it to its main thread.
    let service = RealtimeTimers::start();
    let main_thread = Dispatcher::new();
    let due: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let d = due.clone();
    let autosave = service
        .every(Duration::from_secs(2))
        .dispatch(Dispatch::Queue(main_thread.clone()))
        .call(move || d.lock().unwrap().push(scheduled().expect("inside a call")));

    let bar = if std::io::stdout().is_terminal() {
        ProgressBar::new(frames).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} frames  {elapsed} {msg}")
                .expect("a valid template"),
        )
    } else {
        ProgressBar::hidden()
    };

    let mut run = Run {
        frames,
        wall: Duration::ZERO,
        stage_times: Vec::with_capacity(frames as usize),
        timers_fired: 0,
        ticks_run: 0,
        tickables: 0,
        latent_completed: 0,
        tasks_polled: 0,
        tasks_ended: 0,
        stats: Stats::default(),
        alive: 0,
        checksum: 0,
        autosaves: Vec::new(),
        tick_functions: 0,
        timers_live: 0,
        latent_live: 0,
        dot: String::new(),
    };
    let start = Instant::now();
    let mut next = start;
    let frame_wall = Duration::from_secs_f64(dt.as_secs_f64());
    for f in 0..frames {
        let r = world.frame(dt);
        run.stage_times.push(r.stage_times);
        run.timers_fired += r.timers_fired as u64;
        run.ticks_run += r.ticks_run as u64;
        run.tickables += r.tickables_ticked as u64;
        run.latent_completed += r.latent_completed as u64;
        run.tasks_polled += r.tasks_polled as u64;
        run.tasks_ended += r.tasks_ended as u64;

        main_thread.pump();
        for due in due.lock().unwrap().drain(..) {
            let _span = tracing::info_span!("autosave", frame = f + 1).entered();
            // A save reads the state on the main thread, between frames.
            let _ = world.arena.checksum();
            run.autosaves.push(due.elapsed().as_secs_f64() * 1e3);
        }
        if f % 16 == 0 {
            bar.set_position(f);
            bar.set_message(format!("{} alive", world.arena.alive()));
        }
        if s.realtime {
            next += frame_wall;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    run.wall = start.elapsed();
    bar.finish_and_clear();
    autosave.cancel();
    service.shutdown();

    run.stats = world.stats().clone();
    run.alive = world.arena.alive();
    run.checksum = world.arena.checksum();
    run.tick_functions = world.sched.tick_count();
    run.timers_live = world.sched.timers().len();
    run.latent_live = world.sched.latent().len();
    run.dot = world.sched.tick_graph_dot();
    run
}

/// `1234567` → `1,234,567`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percentiles(mut v: Vec<Duration>) -> [f64; 3] {
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    [at(0.5), at(0.99), at(1.0)]
}

fn print_summary(s: &Settings, r: &Run, paths: &[PathBuf]) {
    let game = r.frames as f64 / f64::from(s.hz);
    let wall = r.wall.as_secs_f64();
    let st = &r.stats;
    println!(
        "tickflow demo: {} actors, {} s at {} Hz, seed {}{}",
        count(s.actors as u64),
        s.seconds,
        s.hz,
        s.seed,
        if s.realtime {
            ", paced in real time"
        } else {
            ""
        }
    );
    println!(
        "  frames              {} ({game:.1} s of game time in {wall:.2} s of real time: {:.1}x real time)",
        count(r.frames),
        game / wall
    );
    println!("  stage time per frame      p50 µs     p99 µs     max µs");
    let mut total = vec![Duration::ZERO; r.stage_times.len()];
    for (i, stage) in Stage::ALL.iter().enumerate() {
        let v: Vec<Duration> = r.stage_times.iter().map(|f| f[i]).collect();
        for (t, d) in total.iter_mut().zip(&v) {
            *t += *d;
        }
        let [p50, p99, max] = percentiles(v);
        println!(
            "    {:<20} {p50:>9.1}  {p99:>9.1}  {max:>9.1}",
            stage.name()
        );
    }
    let [p50, p99, max] = percentiles(total);
    println!(
        "    {:<20} {p50:>9.1}  {p99:>9.1}  {max:>9.1}",
        "whole frame"
    );
    println!(
        "  tick functions run  {} ({} registered at the end)",
        count(r.ticks_run),
        count(r.tick_functions as u64)
    );
    println!(
        "  timers fired        {} ({} live at the end)",
        count(r.timers_fired),
        count(r.timers_live as u64)
    );
    println!("  tickable ticks      {}", count(r.tickables));
    println!(
        "  latent completions  {} ({} projectiles in flight at the end)",
        count(r.latent_completed),
        count(r.latent_live as u64)
    );
    println!(
        "  tasks               {} polls, {} ended (the boss script runs to the end)",
        count(r.tasks_polled),
        count(r.tasks_ended)
    );
    println!(
        "  actors              {} spawned, {} deaths, {} alive; {} reinforcement waves",
        count(st.spawned),
        count(st.deaths),
        count(r.alive as u64),
        st.waves
    );
    println!(
        "  combat              {} shots, {} hits, {} misses, {} poison ticks, {} recharges, {} lead changes",
        count(st.shots),
        count(st.hits),
        count(st.misses),
        count(st.poison_ticks),
        count(st.recharges),
        count(st.lead_changes)
    );
    if r.autosaves.is_empty() {
        println!(
            "  autosaves           0 (the first is due after 2 s of wall time; --realtime runs long enough)"
        );
    } else {
        let late = r.autosaves.iter().copied().fold(0.0, f64::max);
        println!(
            "  autosaves           {} (every 2 s of wall time on the real-time thread, delivered to the main loop at most {late:.1} ms after due; not in the checksum)",
            r.autosaves.len()
        );
    }
    println!("  checksum            {:016x}", r.checksum);
    println!("  wrote");
    for p in paths {
        println!("    {}", p.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn same_seed_same_checksum() {
        let run = |seed| {
            let mut w = arena::build(50, seed);
            for _ in 0..600 {
                w.frame(Span::frames(1, 60));
            }
            (w.arena.checksum(), w.stats().clone())
        };
        let (a, stats) = run(1);
        assert_eq!(a, run(1).0);
        assert_ne!(a, run(2).0);
        assert!(
            stats.shots > 0 && stats.hits > 0 && stats.deaths > 0,
            "{stats:?}"
        );
    }
}
