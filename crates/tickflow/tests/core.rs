//! tickflow's integration tests, one module per file, in one test binary: forty binaries
//! each linked against the library cost more to build than their tests take to run. The
//! real-time service's tests, which run real threads against the wall clock, are their own
//! binary (`realtime.rs`), and the loom model its own (`loom_realtime.rs`).
//!
//! Run one file's tests by its module name: `cargo test -p tickflow --test core timer_basics::`.

mod proptest_settings;
use proptest_settings::cases;

// Helpers that several files share.
mod migrate_world;
mod snapshot_world;

mod deadlines;
mod destructors;
mod driver;
mod durable_journal;
mod frame_clock;
mod latent_actions;
mod latent_model;
mod migrate_edges;
mod migrate_owner;
mod migrate_split_world;
mod odd_settings;
mod powers;
mod registry;
mod scheduler_clock;
mod scheduler_owner;
mod scheduler_panics;
mod send;
mod snapshot_damage;
mod snapshot_kept;
mod snapshot_scheduler;
mod snapshot_scheduler_random;
mod snapshot_timers;
mod task_basics;
mod task_cancel;
mod task_timing;
mod tick_interval;
mod tick_interval_model;
mod tick_model;
mod tick_order;
mod tick_parallel;
mod tick_spawn;
mod timer_basics;
mod timer_callbacks;
mod timer_catch_up;
mod timer_control;
mod timer_limits;
mod timer_model;
mod timer_panic;
mod timer_pending;
mod untrusted_bytes;
