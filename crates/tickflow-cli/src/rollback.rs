//! `tickflow demo --rollback-test`: the arena under a GGRS-style sync test.
//!
//! Every 60 frames the run saves the arena (each scheduler's snapshot and a copy of its game
//! state), runs 60 frames, rolls back to the saved state in restored schedulers, re-simulates
//! those frames and compares each frame's report and game checksum, and the state hashes at
//! the end, with the first run. This is `tickflow::snapshot::sync_test`'s protocol, run over
//! the arena's two schedulers (its shard and its director) instead of one. Async tasks cannot
//! be snapshotted, so this world runs the boss script as a tick function.

use std::time::Instant;

use tickflow::{FrameReport, Span};

use crate::arena::{BossMode, Cluster};
use crate::demo::Settings;
use crate::output::count;
use crate::CliError;

/// Frames between rollbacks.
pub(crate) const WINDOW: u64 = 60;

/// The parts of a frame report that must repeat exactly (not the stage timings).
fn counts(r: &FrameReport) -> [u64; 7] {
    [
        r.frame,
        r.ticks_run as u64,
        r.timers_fired as u64,
        r.tickables_ticked as u64,
        r.latent_completed as u64,
        r.tasks_polled as u64,
        r.tasks_ended as u64,
    ]
}

/// Every scheduler's state hash, combined.
fn state_hash(world: &Cluster) -> u64 {
    let mut h = world.director.sched.state_hash();
    for s in world.shards() {
        h = h.rotate_left(17) ^ s.sched.state_hash();
    }
    h
}

/// What the test did.
struct Checked {
    frames: u64,
    rollbacks: u64,
    resimulated: u64,
}

/// Runs `frames` frames with a rollback every [`WINDOW`]; the first run is the one that
/// continues. A difference is an error naming the frame and what differed.
fn sync(world: &mut Cluster, frames: u64, dt: Span, seed: u64) -> Result<Checked, String> {
    let mut done = Checked {
        frames: 0,
        rollbacks: 0,
        resimulated: 0,
    };
    while done.frames < frames {
        let n = WINDOW.min(frames - done.frames);
        let saved = world.save();
        let before = state_hash(world);
        let first: Vec<_> = (0..n)
            .map(|_| (counts(&world.frame(dt)), world.checksum()))
            .collect();
        let mut again = Cluster::restore(&saved, seed)?;
        if state_hash(&again) != before {
            return Err(format!(
                "the state restored at frame {} differs",
                done.frames
            ));
        }
        for (k, expected) in first.iter().enumerate() {
            let found = (counts(&again.frame(dt)), again.checksum());
            if found != *expected {
                let frame = done.frames + k as u64 + 1;
                return Err(format!(
                    "desync in frame {frame}: {found:?} after rollback, {expected:?} before"
                ));
            }
        }
        if state_hash(&again) != state_hash(world) {
            return Err(format!(
                "state hashes differ after frame {}",
                done.frames + n
            ));
        }
        done.frames += n;
        done.rollbacks += 1;
        done.resimulated += n;
    }
    Ok(done)
}

/// Runs the test and prints what it checked; a desync is an error (exit code 1).
pub(crate) fn run(s: &Settings) -> Result<(), CliError> {
    let frames = s.frames();
    let dt = Span::frames(1, s.hz);
    let mut world = Cluster::new(s.actors as usize, s.seed, 1, BossMode::Ticks, false);
    let start = Instant::now();
    let report = sync(&mut world, frames, dt, s.seed)
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
    let (ticks, timers, _) = world.counts();
    println!(
        "  at the end          {} tick functions, {} timers, {} actors alive",
        count(ticks as u64),
        count(timers as u64),
        count(world.alive() as u64)
    );
    println!("  state hash          {:016x}", state_hash(&world));
    println!("  checksum            {:016x}", world.checksum());
    Ok(())
}
