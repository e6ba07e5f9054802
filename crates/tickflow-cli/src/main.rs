//! The `tickflow` tool: the arena demo (trace, plots, tick graph), `explain`, `bench` and a
//! short `tour` of each part of the library. `tickflow --help` lists everything.

mod arena;
mod bench;
mod demo;
mod fleet;
mod output;
mod plots;
mod process_store;
mod rollback;
mod sql;
mod tour;
mod trace;

use std::fmt;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

// The heap-size rows of `tickflow bench` count allocations (one relaxed atomic add each).
#[cfg(feature = "bench")]
#[global_allocator]
static ALLOC: tickflow_bench::alloc::Counting = tickflow_bench::alloc::Counting;

const EXAMPLES: &str = "\
Examples:
  tickflow                              the demo: 2,000 actors, 60 s at 60 Hz, files in tickflow-out/
  tickflow demo --actors 10000 --seconds 30 --seed 7 --out /tmp/run
  tickflow demo --realtime --seconds 10  paced at wall-clock speed
  tickflow explain                      the tick order of a small arena, with reasons
  tickflow explain --dot | dot -Tsvg > graph.svg
  tickflow explain --actors 2000 --dot-kinds | dot -Tsvg > kinds.svg
  tickflow bench --quick                every benchmark with its peers (a build with --features bench)
  tickflow fleet --zones 3 --seconds 20  free-running zones under SIGKILL and SIGSTOP, checked
  tickflow tour                         one printed scene per part of the library";

/// Time services for game loops: see them work, measure them.
#[derive(Parser, Debug)]
#[command(name = "tickflow", version, after_help = EXAMPLES, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand: the demo, with these options.
    #[command(flatten)]
    demo: demo::Settings,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the arena demo (the default): every part of tickflow as a game uses it; prints a
    /// summary and writes trace.json (open it in ui.perfetto.dev), frames.svg/png,
    /// catch-up.svg and tick-graph.dot into --out.
    Demo(demo::Settings),
    /// Print the tick order of a small arena, with the reason for each place.
    Explain(ExplainArgs),
    /// Run the library's benchmarks with their peers and print the tables (as in BENCHMARKS.md).
    /// Needs a build with `--features bench` (the peers, Bevy and tokio among them, stay out of
    /// the default build).
    Bench(BenchArgs),
    /// One short, printed scene per part of the library.
    Tour,
    /// One shard of `demo --processes` (the demo starts these itself; started by hand, on
    /// any machine that reaches the store, it serves the same role).
    Shard(ShardArgs),
    /// Zones that run free (no director, no frame barrier), actors walking between them,
    /// under a nemesis (SIGKILL, SIGSTOP past the lease, cuts, clock skew); then the checker:
    /// every actor in one zone, every durable call once, none early. Plots in --out.
    Fleet(fleet::FleetArgs),
    /// One zone of `fleet` (the fleet starts these itself; started by hand, on any machine
    /// that reaches the store, it joins the same fleet).
    Zone(fleet::zone::ZoneArgs),
}

#[derive(Args, Debug)]
struct ShardArgs {
    /// Which shard (0-based).
    #[arg(long)]
    id: usize,
    /// How many shards the arena has.
    #[arg(long)]
    shards: usize,
    /// The run's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `sqlite:PATH` or a `postgres://` URL.
    #[arg(long)]
    store: String,
    /// The PostgreSQL schema the run's tables are in.
    #[arg(long)]
    schema: Option<String>,
}

#[derive(Args, Debug)]
struct ExplainArgs {
    /// Actors in the arena (keep it small: the order lists two functions per actor).
    #[arg(long, default_value_t = 4, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    actors: u32,
    /// Seed of the arena.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the tick graph in Graphviz DOT instead, one box per function.
    #[arg(long, conflicts_with = "dot_kinds")]
    dot: bool,
    /// Print the tick graph in Graphviz DOT instead, one box per kind of function (`move`,
    /// `think`, …) with counts: readable at any number of actors.
    #[arg(long)]
    dot_kinds: bool,
}

#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    /// Short runs and small sizes: the whole set in under a minute.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Run only these parts (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub(crate) only: Vec<Part>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// W1–W4: timers against an Unreal-style manager, DelayQueue and bevy's Timer.
    Timers,
    /// S0–S3: tick functions against an Unreal-style tick manager and a plain loop.
    Scheduler,
    /// L1–L2: async tasks and latent actions against looping timers.
    Latent,
    /// Real-time lateness and CPU against a naive heap thread, tokio and crossbeam; throughput.
    Realtime,
    /// B1: delays in a Bevy app, tickflow-bevy against Bevy's delayed commands.
    Bevy,
    /// P1: the paced runner's lateness, drift and idle CPU against Bevy's ScheduleRunnerPlugin
    /// and a thread::sleep loop.
    Pacing,
    /// SN1: snapshot and restore of 1e5/1e6 timers against setting them from scratch.
    Snapshot,
    /// ST1–ST3: durable timers' commit throughput, reload and frame cost (tickflow-store).
    Store,
    /// H1–H2: an owner handed over between two processes through the store's registry and
    /// outbox: one at a time (p50/p99) and in batches (per second).
    Handover,
}

/// An error the tool reports in one line.
#[derive(Debug)]
pub(crate) struct CliError {
    message: String,
    /// 2 for bad arguments (including an unwritable `--out`), 1 for anything else.
    code: u8,
}

impl CliError {
    pub(crate) fn usage(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: 2,
        }
    }

    pub(crate) fn io(what: impl fmt::Display, e: std::io::Error) -> CliError {
        CliError {
            message: format!("{what}: {e}"),
            code: 1,
        }
    }

    pub(crate) fn internal(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: 1,
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // clap's first line says what was wrong; the rest is a usage hint. The valid
            // values (of `--only`, say) go on that line too.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("error: bad arguments");
            match e.get(clap::error::ContextKind::ValidValue) {
                Some(clap::error::ContextValue::Strings(valid)) => {
                    eprintln!("{first} (valid: {})", valid.join(", "));
                }
                _ => eprintln!("{first}"),
            }
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// The demo, or with `--rollback-test` the rollback test on the demo's world.
fn demo_or_rollback(s: &demo::Settings) -> Result<(), CliError> {
    match s.rollback_test {
        true => rollback::run(s),
        false => demo::run(s),
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        None => demo_or_rollback(&cli.demo),
        Some(Command::Demo(settings)) => demo_or_rollback(&settings),
        Some(Command::Explain(args)) => {
            let (actors, seed) = (args.actors as usize, args.seed);
            let mut world = arena::Cluster::new(actors, seed, 1, arena::BossMode::Task, false);
            // One frame takes the first actors in, so the order shows the real world.
            world.frame(tickflow::Span::frames(1, 60));
            let shard = world.shards_mut().next().expect("one shard");
            if args.dot {
                print!("{}", shard.sched.ticks().graph_dot());
            } else if args.dot_kinds {
                print!("{}", shard.sched.ticks().kinds_dot());
            } else {
                println!(
                    "Tick order of an arena with {} actors (one shard), after its first frame:\n",
                    args.actors
                );
                print!("{}", shard.sched.explain_order());
                println!("\nTick order of its director (boss script and scoreboard):\n");
                print!("{}", world.director.sched.explain_order());
            }
            Ok(())
        }
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Shard(a)) => {
            if a.id >= a.shards {
                return Err(CliError::usage(format!(
                    "--id {} of {} shards",
                    a.id, a.shards
                )));
            }
            arena::serve(a.id, a.shards, a.seed, &a.store, a.schema.as_deref())
                .map_err(|e| CliError::usage(format!("shard {}: {e}", a.id)))
        }
        Some(Command::Fleet(args)) => fleet::run(&args),
        Some(Command::Zone(args)) => fleet::zone::run(&args)
            .map_err(|e| CliError::internal(format!("zone {}: {e}", args.index))),
        Some(Command::Tour) => {
            tour::run();
            Ok(())
        }
    }
}
