//! The benchmark workloads of tickflow and their peers, shared by two front ends: the
//! `cargo bench -p tickflow-bench --bench <name>` targets (`crates/tickflow/benches/`) and the
//! `tickflow bench` command, so both print the same tables from the same code.
//!
//! Each module's `run` builds its workloads, runs tickflow and its peers in the same process
//! (interleaved where the module says so), and prints a table with medians and ratios.
//! Heap figures need [`alloc::Counting`] as the program's global allocator; both front ends
//! install it.

pub mod alloc;
pub mod bevy_delays;
mod churn;
pub mod dense;
pub mod handover;
pub mod latent;
pub mod migrate;
pub mod pacing;
pub mod realtime;
pub mod scheduler;
pub mod snapshot;
pub mod store;
mod timer_setup;
pub mod timers;

/// Peer implementations written for the benchmarks (not tickflow code).
mod peers {
    pub(crate) mod layout_sketch;
    pub(crate) mod unreal;
    pub(crate) mod unreal_tick;
    pub(crate) mod vec_scan;
}

/// What a front end asks of a workload module.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Short runs and the smaller sizes only (every module together in under a minute).
    pub quick: bool,
    /// Extra words a module understands (`only=tasks`, `profile-tasks` for `latent`).
    pub args: Vec<String>,
}

impl Options {
    /// Reads `quick` / `--quick` and the rest from the process arguments, as `cargo bench`
    /// passes them after `--`.
    pub fn from_args() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let quick = args.iter().any(|a| a == "quick" || a == "--quick");
        Options { quick, args }
    }
}

/// The median of `v` (the upper one for an even count); `v` must not be empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs `f` `runs` times and returns the median result.
pub fn repeat(runs: usize, mut f: impl FnMut() -> f64) -> f64 {
    median((0..runs).map(|_| f()).collect())
}
