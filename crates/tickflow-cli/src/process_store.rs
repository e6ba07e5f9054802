//! `demo --processes` around the arena: where the shard processes meet (a fresh SQLite file or
//! a fresh PostgreSQL schema) and what the summary says about them.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::arena::Processes;
use crate::output::{count, percentiles};

/// The store of `--processes` (`store`, or `arena.db` in `out`, made afresh), and the
/// PostgreSQL schema the run's tables go in (fresh for the run, dropped at its end).
pub(crate) fn process_store(
    store: Option<&str>,
    out: &Path,
) -> Result<(String, Option<String>), String> {
    match store {
        Some(url) if !url.starts_with("sqlite:") => {
            let schema = format!("tickflow_arena_{}", std::process::id());
            Ok((url.to_string(), Some(schema)))
        }
        Some(url) => Ok((url.to_string(), None)),
        None => {
            fs::create_dir_all(out).map_err(|e| e.to_string())?;
            let path = out.join("arena.db");
            for ext in ["", "-wal", "-shm"] {
                let _ = fs::remove_file(format!("{}{ext}", path.display()));
            }
            Ok((format!("sqlite:{}", path.display()), None))
        }
    }
}

/// Drops the run's PostgreSQL schema.
pub(crate) fn drop_schema(url: &str, schema: &str) {
    if let Ok(mut c) = postgres::Client::connect(url, postgres::NoTls) {
        let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
    }
}

/// What a run with shard processes adds to the summary.
pub(crate) struct ProcessSummary {
    store: String,
    restarts: u64,
    recoveries: u64,
    injected: (u64, u64, u64),
    refused: (u64, u64, u64),
    /// Live actors in the registry, each in exactly one shard; parcels left in the outbox.
    registry: (usize, usize),
    barrier: [f64; 3],
}

impl ProcessSummary {
    pub(crate) fn of(remote: &Processes, url: &str) -> ProcessSummary {
        let barrier: Vec<Duration> = remote.barrier.clone();
        ProcessSummary {
            store: if url.starts_with("sqlite:") {
                url.to_string()
            } else {
                "PostgreSQL".into()
            },
            restarts: remote.restarts,
            recoveries: remote.ends.iter().map(|e| e.recoveries).sum(),
            injected: remote.injected,
            refused: remote.refused,
            registry: remote.registry,
            barrier: percentiles(barrier),
        }
    }

    pub(crate) fn print(&self, handovers: u64) {
        println!(
            "  shard processes     store {}; {} restarted after a kill ({} resumed from their image)",
            self.store, self.restarts, self.recoveries
        );
        let (r, i) = (self.refused, self.injected);
        println!(
            "  handovers           {} through the registry and outbox; refused {} damaged, {} stale, {} delivered twice (injected {}, {}, {})",
            count(handovers),
            r.0,
            r.1,
            r.2,
            i.0,
            i.1,
            i.2
        );
        println!(
            "  registry            {} live actors, each in exactly one shard; {} parcels left in the outbox",
            count(self.registry.0 as u64),
            self.registry.1
        );
        let [p50, p99, max] = self.barrier;
        println!(
            "  frame barrier       p50 {p50:.0} µs, p99 {p99:.0} µs, max {max:.0} µs per frame (the frame's wall time beyond the slowest shard's own)"
        );
    }
}
