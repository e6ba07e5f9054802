//! What a fleet run is given, and what its nemesis did: plain data the other parts share.

use std::path::PathBuf;

/// A zone's node name.
pub(crate) fn zone_name(index: usize) -> String {
    format!("zone-{index}")
}

/// `tickflow fleet`'s settings.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct FleetArgs {
    /// Zone processes.
    #[arg(long, default_value_t = 3)]
    pub(crate) zones: usize,
    /// What each zone runs (passed on to every zone as it is).
    #[command(flatten)]
    pub(crate) world: Workload,
    /// How long the fleet runs, seconds.
    #[arg(long, default_value_t = 20.0)]
    pub(crate) seconds: f64,
    /// `sqlite:PATH` or a `postgres://` URL (default: `sqlite:OUT/fleet.db`, made anew).
    #[arg(long)]
    pub(crate) store: Option<String>,
    /// The PostgreSQL schema for the run's tables (a new one per run keeps runs apart).
    #[arg(long)]
    pub(crate) schema: Option<String>,
    /// Where the plots and the zones' logs go.
    #[arg(long, default_value = "tickflow-out/fleet")]
    pub(crate) out: PathBuf,
    /// Kill a zone with SIGKILL every this many seconds (0: never); it starts again after
    /// --down seconds.
    #[arg(long, default_value_t = 6.0)]
    pub(crate) kill_every: f64,
    #[arg(long, default_value_t = 2.0)]
    pub(crate) down: f64,
    /// Pause a zone (SIGSTOP) for three leases every this many seconds, then SIGCONT (0:
    /// never).
    #[arg(long, default_value_t = 9.0)]
    pub(crate) stop_every: f64,
    /// Cut a zone off from PostgreSQL for three leases every this many seconds (0: never;
    /// PostgreSQL with one host only: a proxy per zone on loopback).
    #[arg(long, default_value_t = 0.0)]
    pub(crate) cut_every: f64,
    /// Shift the clocks of every other zone by +MS and -MS (needs `faketime`, from the
    /// distribution's package of that name).
    #[arg(long, default_value_t = 0)]
    pub(crate) skew_ms: u64,
    /// Fail the PostgreSQL primary over this many seconds into the run (0: never), by running
    /// --failover-cmd (which kills the primary and promotes its standby; the zones find the
    /// new primary through a multi-host --store URL).
    #[arg(long, default_value_t = 0.0)]
    pub(crate) failover_at: f64,
    #[arg(long, default_value = "")]
    pub(crate) failover_cmd: String,
}

/// What every zone of a fleet runs: the same for all, so `tickflow fleet` hands its own on
/// ([`Workload::args`]) and a zone started by hand takes the same flags.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct Workload {
    /// Actors each zone creates at its first start.
    #[arg(long, default_value_t = 1000)]
    pub(crate) actors: u64,
    /// Frames per second.
    #[arg(long, default_value_t = 30)]
    pub(crate) hz: u32,
    /// Each actor's pulse period, ms: drawn from MIN..=MAX.
    #[arg(long, default_value_t = 500)]
    pub(crate) pulse_min: u64,
    #[arg(long, default_value_t = 2000)]
    pub(crate) pulse_max: u64,
    /// Mean time between two walks of an actor, ms.
    #[arg(long, default_value_t = 5000)]
    pub(crate) walk_ms: u64,
    /// The zones' lease, ms.
    #[arg(long, default_value_t = 500)]
    pub(crate) lease_ms: u64,
    /// Actors a zone adopts from lost zones per frame at most: a lost zone of many actors is
    /// taken over in several frames, each of them short (a zone adopts what its measured cost
    /// fits in 60 % of a frame, up to this: see `fleet/pace.rs`).
    #[arg(long, default_value_t = 2000)]
    pub(crate) adopt_limit: usize,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
}

impl Workload {
    /// These settings as the flags that give them.
    pub(crate) fn args(&self) -> Vec<String> {
        let flags = [
            ("--actors", self.actors.to_string()),
            ("--hz", self.hz.to_string()),
            ("--pulse-min", self.pulse_min.to_string()),
            ("--pulse-max", self.pulse_max.to_string()),
            ("--walk-ms", self.walk_ms.to_string()),
            ("--lease-ms", self.lease_ms.to_string()),
            ("--adopt-limit", self.adopt_limit.to_string()),
            ("--seed", self.seed.to_string()),
        ];
        flags
            .into_iter()
            .flat_map(|(f, v)| [f.to_string(), v])
            .collect()
    }
}

/// What the nemesis did, when (µs since the Unix epoch, this machine's clock).
pub(crate) struct Fault {
    pub(crate) at_us: i64,
    pub(crate) kind: &'static str,
    pub(crate) zone: usize,
}
