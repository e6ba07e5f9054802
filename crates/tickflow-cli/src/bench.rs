//! `tickflow bench`: the library's benchmarks with their peers, when the tool is built with
//! `--features bench`. The peers (Bevy, tokio, an Unreal-style manager...) are a build of
//! their own, so the default build (the demo) leaves them out: it builds in a fraction of the
//! time.

use crate::{BenchArgs, CliError, Part};

#[cfg(feature = "bench")]
pub(crate) fn run(args: &BenchArgs) -> Result<(), CliError> {
    let opts = tickflow_bench::Options {
        quick: args.quick,
        args: Vec::new(),
    };
    let wanted = |p: Part| args.only.is_empty() || args.only.contains(&p);
    type Run = fn(&tickflow_bench::Options);
    let parts: [(Part, &str, Run); 9] = [
        (Part::Timers, "Timers (W1–W4)", tickflow_bench::timers::run),
        (
            Part::Scheduler,
            "Scheduler (S0–S3)",
            tickflow_bench::scheduler::run,
        ),
        (
            Part::Latent,
            "Latent actions and tasks (L1–L2)",
            tickflow_bench::latent::run,
        ),
        (
            Part::Realtime,
            "Real-time service",
            tickflow_bench::realtime::run,
        ),
        (
            Part::Bevy,
            "Delays in a Bevy app (B1)",
            tickflow_bench::bevy_delays::run,
        ),
        (
            Part::Pacing,
            "Pacing a headless loop (P1)",
            tickflow_bench::pacing::run,
        ),
        (
            Part::Snapshot,
            "Snapshots (SN1–SN2)",
            tickflow_bench::snapshot::run,
        ),
        (
            Part::Store,
            "Durable timers on SQLite and PostgreSQL (ST1–ST3)",
            tickflow_bench::store::run,
        ),
        (
            Part::Handover,
            "Handovers between processes on SQLite and PostgreSQL (H1–H2)",
            tickflow_bench::handover::run,
        ),
    ];
    println!(
        "tickflow bench{}: each part measures tickflow and its peers in the same run; ratios are tickflow / peer (lower is better for times).",
        if args.quick { " --quick" } else { "" }
    );
    for (part, title, run) in parts {
        if wanted(part) {
            println!("\n=== {title} ===\n");
            run(&opts);
        }
    }
    Ok(())
}

/// Says how to get the benchmarks in a build without them.
#[cfg(not(feature = "bench"))]
pub(crate) fn run(args: &BenchArgs) -> Result<(), CliError> {
    let _ = (args.quick, &args.only, Part::Timers);
    Err(CliError::internal(
        "this build of tickflow has no benchmarks (their peers stay out of the default build): \
         run `cargo run --release --features bench -- bench`, or `cargo bench -p tickflow-bench`",
    ))
}
