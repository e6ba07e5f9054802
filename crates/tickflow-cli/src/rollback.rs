//! `tickflow demo --rollback-test`: the arena under a GGRS-style sync test.
//!
//! Every 60 frames the run rolls back to the snapshot taken 60 frames earlier (with a copy of
//! the arena from then), re-simulates those frames in a restored scheduler and compares each
//! frame's state hash, frame report and game checksum with the first run. Async tasks cannot
//! be snapshotted, so this world runs the boss script as a tick function.

use std::time::Instant;

use tickflow::snapshot::sync_test;
use tickflow::Span;

use crate::arena::{self, BossMode, Rebind};
use crate::demo::{count, Settings};
use crate::CliError;

/// Frames between rollbacks.
pub(crate) const WINDOW: u64 = 60;

/// Runs the test and prints what it checked; a desync is an error (exit code 1).
pub(crate) fn run(s: &Settings) -> Result<(), CliError> {
    let frames = s.frames();
    let dt = Span::frames(1, s.hz);
    let mut world = arena::build(s.actors as usize, s.seed, BossMode::Ticks);
    let start = Instant::now();
    let report = sync_test(
        &mut world.sched,
        &mut world.arena,
        &mut Rebind,
        frames,
        WINDOW,
        dt,
        |a| a.checksum(),
    )
    .map_err(|e| CliError::internal(format!("rollback test failed: {e}")))?;
    let wall = start.elapsed().as_secs_f64();
    println!(
        "tickflow rollback test: {} actors, seed {}",
        count(s.actors as u64),
        s.seed
    );
    println!(
        "  frames              {} ({:.1} s of game time at {} Hz, in {wall:.2} s of real time)",
        count(report.frames),
        frames as f64 / f64::from(s.hz),
        s.hz
    );
    println!(
        "  rollbacks           {} (every {WINDOW} frames), {} frames re-simulated",
        count(report.rollbacks),
        count(report.resimulated)
    );
    println!(
        "  compared            frame report and game checksum of every frame, state hash at every rollback: all equal"
    );
    println!(
        "  at the end          {} tick functions, {} timers, {} actors alive",
        count(world.sched.tick_count() as u64),
        count(world.sched.timers().len() as u64),
        count(world.arena.alive() as u64)
    );
    println!("  state hash          {:016x}", report.final_hash);
    println!("  checksum            {:016x}", world.arena.checksum());
    Ok(())
}
