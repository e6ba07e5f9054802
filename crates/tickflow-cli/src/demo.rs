//! `tickflow demo`: runs the arena, shows progress, writes the trace, the plots and the tick
//! graph, and prints a summary.

use std::fs;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tickflow::realtime::{scheduled, Dispatch, Dispatcher, RealtimeTimers};
use tickflow::{FrameReport, Span, Stage};
use tracing_subscriber::prelude::*;

use crate::arena::{BossMode, Cluster, Moved, Stats};
use crate::output::{count, percentiles, Staging};
use crate::process_store::{drop_schema, process_store, ProcessSummary};
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

/// What to run: the options of `tickflow demo` (and of a bare `tickflow`).
#[derive(Args, Clone, Debug)]
pub(crate) struct Settings {
    /// Actors at the start (half per team).
    #[arg(long, default_value_t = 2_000, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(crate) actors: u32,
    /// Game time to run, in seconds.
    #[arg(long, default_value_t = 60.0, value_name = "S", allow_negative_numbers = true,
          value_parser = parse_seconds)]
    pub(crate) seconds: f64,
    /// Frames per second of game time.
    #[arg(long, default_value_t = 60, value_name = "HZ", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub(crate) hz: u32,
    /// Seed of the arena's random choices: the same seed gives the same run and checksum.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Pace the frames at wall-clock speed instead of running as fast as possible.
    #[arg(long)]
    pub(crate) realtime: bool,
    /// Directory for the output files (created if needed).
    #[arg(long, default_value = "tickflow-out", value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Split the arena by position into this many shards, each a scheduler on a thread of
    /// its own; actors that cross a border are exported, sent as bytes and imported. The
    /// checksum is the one-shard run's.
    #[arg(long, default_value_t = 1, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) shards: u32,
    /// Run each shard as a process of its own (`tickflow shard`), meeting in --store: frames
    /// in lockstep through the store, actors handed over through its owner registry and
    /// outbox, a killed shard started again and resumed from its image in the store.
    #[arg(long, requires = "shards")]
    pub(crate) processes: bool,
    /// The store of --processes: `sqlite:PATH` (default: arena.db in --out, a fresh file) or a
    /// `postgres://` URL (tables in a fresh schema of their own, dropped at the end).
    #[arg(long, value_name = "URL", requires = "processes")]
    pub(crate) store: Option<String>,
    /// With --processes: a fault run. One shard process, drawn from SEED, is killed with
    /// SIGKILL at a frame drawn from SEED and started again; the same frame gets a damaged
    /// parcel, one delivered twice and one from a stale epoch, which must be refused. The
    /// checksum is still the one-shard run's.
    #[arg(
        long,
        value_name = "SEED",
        requires = "processes",
        conflicts_with = "external_shards"
    )]
    pub(crate) fault: Option<u64>,
    /// With --processes: start no shard process, and wait for `tickflow shard` processes
    /// started by hand (on any machine that reaches --store; the command to run is printed).
    #[arg(long, requires = "processes")]
    pub(crate) external_shards: bool,
    /// Instead of the demo: roll back every 60 frames, re-simulate and check that every
    /// frame's state hash, report and game checksum repeat exactly (writes no files; the boss
    /// script runs as a tick function, as async tasks cannot be snapshotted).
    #[arg(long, conflicts_with_all = ["realtime", "shards"])]
    pub(crate) rollback_test: bool,
}

impl Settings {
    /// Frames to run.
    pub(crate) fn frames(&self) -> u64 {
        ((self.seconds * f64::from(self.hz)).round() as u64).max(1)
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(v)
    } else {
        Err(format!("must be more than 0 and at most 86400 (got {s})"))
    }
}

/// What a run measured.
struct Run {
    frames: u64,
    wall: Duration,
    stage_times: Vec<[Duration; Stage::COUNT]>,
    totals: Totals,
    stats: Stats,
    alive: usize,
    checksum: u64,
    /// Per autosave: (frame, checksum saved, ms after its due time).
    autosaves: Vec<(u64, u64, f64)>,
    tick_functions: usize,
    timers_live: usize,
    latent_live: usize,
    dot: String,
    /// Actors moved between shards.
    moved: Moved,
    /// Shard processes: what the director saw of them.
    processes: Option<ProcessSummary>,
}

/// Counts summed over the frames' reports.
#[derive(Default)]
struct Totals {
    timers_fired: u64,
    ticks_run: u64,
    tickables: u64,
    latent_completed: u64,
    tasks_polled: u64,
    tasks_ended: u64,
}

impl Totals {
    fn add(&mut self, r: &FrameReport) {
        self.timers_fired += r.timers_fired as u64;
        self.ticks_run += r.ticks_run as u64;
        self.tickables += r.tickables_ticked as u64;
        self.latent_completed += r.latent_completed as u64;
        self.tasks_polled += r.tasks_polled as u64;
        self.tasks_ended += r.tasks_ended as u64;
    }
}

/// Runs the demo and writes its files; prints the summary.
pub(crate) fn run(s: &Settings) -> Result<(), CliError> {
    let staging = Staging::new(&s.out)?;
    let recorder = Recorder::new();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let run = tracing::subscriber::with_default(subscriber, || simulate(s))
        .map_err(|e| CliError::usage(format!("shard processes: {e}")))?;
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

fn simulate(s: &Settings) -> Result<Run, String> {
    let frames = s.frames();
    let actors = s.actors as usize;
    let dt = Span::frames(1, s.hz);
    let shards = s.shards as usize;
    let store = (s.processes)
        .then(|| process_store(s.store.as_deref(), &s.out))
        .transpose()?;
    let mut world = match &store {
        Some((url, schema)) => {
            let fault = (s.fault).map(|seed| crate::arena::Fault::from_seed(seed, shards, frames));
            let spawn = !s.external_shards;
            let w = Cluster::with_processes(
                actors,
                s.seed,
                shards,
                url,
                schema.as_deref(),
                fault,
                spawn,
            );
            w.inspect_err(|_| {
                if let (Some(schema), false) = (schema, url.starts_with("sqlite:")) {
                    drop_schema(url, schema);
                }
            })?
        }
        None => Cluster::new(actors, s.seed, shards, BossMode::Task, true),
    };
    let result = drive(s, &mut world, frames, dt);
    if let Some((url, Some(schema))) = &store {
        drop_schema(url, schema);
    }
    let mut run = result?;
    if let (Some(remote), Some((url, _))) = (&world.remote, &store) {
        run.processes = Some(ProcessSummary::of(remote, url));
    }
    Ok(run)
}

fn drive(s: &Settings, world: &mut Cluster, frames: u64, dt: Span) -> Result<Run, String> {
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

    let mut stage_times = Vec::with_capacity(frames as usize);
    let mut totals = Totals::default();
    let mut autosaves = Vec::new();
    let start = Instant::now();
    let mut next = start;
    let frame_wall = Duration::from_secs_f64(dt.as_secs_f64());
    for f in 0..frames {
        let r = world.try_frame(dt)?;
        stage_times.push(r.stage_times);
        totals.add(&r);

        main_thread.pump();
        for due in due.lock().unwrap().drain(..) {
            let _span = tracing::info_span!("autosave", frame = f + 1).entered();
            // A save reads the state on the main thread, between frames (the checksum of
            // the director's view of every actor stands for the saved state here).
            let saved = world.view_hash();
            autosaves.push((f + 1, saved, due.elapsed().as_secs_f64() * 1e3));
        }
        if f % 16 == 0 {
            bar.set_position(f);
            bar.set_message(format!("{} alive", world.director.board.alive()));
        }
        if s.realtime {
            next += frame_wall;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    let wall = start.elapsed();
    bar.finish_and_clear();
    autosave.cancel();
    service.shutdown();

    world.finish()?;
    let (tick_functions, timers_live, latent_live) = world.counts();
    let dot = match world.shards_mut().next() {
        Some(shard) => shard.sched.ticks().kinds_dot(),
        // The shards were processes: the kinds of one, as it starts.
        None => crate::arena::Cluster::new(1, s.seed, 1, BossMode::Task, false)
            .shards_mut()
            .next()
            .expect("a shard")
            .sched
            .ticks()
            .kinds_dot(),
    };
    Ok(Run {
        frames,
        wall,
        stage_times,
        totals,
        stats: world.stats(),
        alive: world.alive(),
        checksum: world.checksum(),
        autosaves,
        tick_functions,
        timers_live,
        latent_live,
        dot,
        moved: world.moved,
        processes: None,
    })
}

fn print_summary(s: &Settings, r: &Run, paths: &[PathBuf]) {
    let game = r.frames as f64 / f64::from(s.hz);
    let wall = r.wall.as_secs_f64();
    let st = &r.stats;
    println!(
        "tickflow demo: {} actors, {} s at {} Hz, seed {}{}{}",
        count(u64::from(s.actors)),
        s.seconds,
        s.hz,
        s.seed,
        if s.processes {
            format!(", {} shards as processes", s.shards)
        } else if s.shards > 1 {
            format!(", {} shards on {} threads", s.shards, s.shards)
        } else {
            String::new()
        },
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
    if s.shards > 1 {
        println!("    (each stage: the slowest shard's, plus the director's)");
    }
    println!(
        "  tick functions run  {} ({} registered at the end)",
        count(r.totals.ticks_run),
        count(r.tick_functions as u64)
    );
    println!(
        "  timers fired        {} ({} live at the end)",
        count(r.totals.timers_fired),
        count(r.timers_live as u64)
    );
    println!("  tickable ticks      {}", count(r.totals.tickables));
    println!(
        "  latent completions  {} ({} projectiles in flight at the end)",
        count(r.totals.latent_completed),
        count(r.latent_live as u64)
    );
    println!(
        "  tasks               {} polls, {} ended (the boss script runs to the end)",
        count(r.totals.tasks_polled),
        count(r.totals.tasks_ended)
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
    if s.shards > 1 {
        let Moved {
            actors,
            time,
            bytes,
        } = r.moved;
        let per = |x: f64| if actors == 0 { 0.0 } else { x / actors as f64 };
        println!(
            "  migrations          {} actors crossed a border ({:.1} µs and {:.0} bytes per actor: export, postcard, import)",
            count(actors),
            per(time.as_secs_f64() * 1e6),
            per(bytes as f64)
        );
    }
    if r.autosaves.is_empty() {
        println!(
            "  autosaves           0 (the first is due after 2 s of wall time; --realtime runs long enough)"
        );
    } else {
        let late = r.autosaves.iter().map(|a| a.2).fold(0.0, f64::max);
        let (frame, saved, _) = r.autosaves[r.autosaves.len() - 1];
        println!(
            "  autosaves           {} (every 2 s of wall time on the real-time thread, delivered to the main loop at most {late:.1} ms after due; the last saved frame {frame}, state {saved:016x}; not in the checksum)",
            r.autosaves.len()
        );
    }
    if let Some(p) = &r.processes {
        p.print(r.moved.actors);
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

    fn run(seed: u64, shards: usize, threads: bool) -> (u64, Stats) {
        let mut w = Cluster::new(40, seed, shards, BossMode::Task, threads);
        for _ in 0..2400 {
            w.frame(Span::frames(1, 60));
        }
        w.finish().unwrap();
        (w.checksum(), w.stats())
    }

    #[test]
    fn same_seed_same_checksum() {
        let (a, stats) = run(1, 1, false);
        assert_eq!(a, run(1, 1, false).0);
        assert_ne!(a, run(2, 1, false).0);
        assert!(
            stats.shots > 0 && stats.hits > 0 && stats.deaths > 0 && stats.waves > 0,
            "{stats:?}"
        );
    }

    #[test]
    fn any_number_of_shards_gives_the_one_shard_checksum_every_frame() {
        let dt = Span::frames(1, 60);
        let mut one = Cluster::new(40, 3, 1, BossMode::Task, false);
        let mut split: Vec<_> = (2..=5)
            .map(|n| Cluster::new(40, 3, n, BossMode::Task, false))
            .collect();
        for frame in 1..=2400 {
            one.frame(dt);
            for (k, w) in split.iter_mut().enumerate() {
                w.frame(dt);
                assert_eq!(
                    w.checksum(),
                    one.checksum(),
                    "{} shards, frame {frame}",
                    k + 2
                );
            }
        }
        let stats = one.stats();
        assert!(stats.waves > 0 && stats.deaths > 10, "{stats:?}");
        for w in &split {
            assert!(w.stats().migrations > 0, "actors crossed borders");
        }
        // On threads, as the demo runs them.
        assert_eq!(run(3, 4, true).0, one.checksum());
    }
}
