//! [`sync_test`]: GGRS's SyncTest for a scheduler and its context.

use std::fmt;

use super::{FrameReport, Resolver, RestoreReport, Scheduler};
use crate::format::{stable_hash, RestoreError};
use crate::time::Span;

/// What [`sync_test`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncReport {
    /// Frames the scheduler advanced.
    pub frames: u64,
    /// Rollbacks made (one per `check_every` frames).
    pub rollbacks: u64,
    /// Frames simulated a second time after a rollback.
    pub resimulated: u64,
    /// The state hash after the last frame.
    pub final_hash: u64,
}

/// Why [`sync_test`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyncError {
    /// The re-simulation differed from the first run.
    Desync {
        /// The frame number where they first differed.
        frame: u64,
        /// `"restored state"` (right after the restore), `"frame report"`, `"context
        /// checksum"` or `"state hash"` (at the end of the window).
        what: &'static str,
        /// The first run's value.
        expected: u64,
        /// The re-simulation's value.
        found: u64,
    },
    /// A snapshot could not be restored.
    Restore(RestoreError),
    /// A snapshot left something out (async tasks, unsaved latent actions, ...), so a
    /// rollback cannot be exact.
    Incomplete {
        /// The frame the snapshot was taken at.
        frame: u64,
        /// What was left out.
        report: RestoreReport,
    },
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyncError::Desync {
                frame,
                what,
                expected,
                found,
            } => write!(
                f,
                "desync in frame {frame}: {what} {found:#018x} after rollback, {expected:#018x} before"
            ),
            SyncError::Restore(e) => write!(f, "rollback failed: {e}"),
            SyncError::Incomplete { frame, report } => {
                write!(f, "the snapshot of frame {frame} cannot be rolled back to exactly: {report}")
            }
        }
    }
}

impl std::error::Error for SyncError {}

impl From<RestoreError> for SyncError {
    fn from(e: RestoreError) -> Self {
        SyncError::Restore(e)
    }
}

/// The parts of a frame report that must repeat exactly (not the stage timings).
fn report_hash(r: &FrameReport) -> u64 {
    stable_hash(&(
        (r.frame, r.game_dt, r.real_dt, r.discarded, r.paused),
        (r.ticks_run, r.ticks_per_group, r.spawn_passes, r.held_back),
        (r.timers_fired, r.tickables_ticked, r.latent_completed),
        (r.tasks_polled, r.tasks_ended, r.errors.len()),
    ))
}

/// Runs `frames` frames of `dt` on `sched` and `ctx`, and every `check_every` frames rolls
/// back (GGRS's SyncTest): it restores the snapshot taken `check_every` frames earlier
/// through `resolver` (with a clone of the context from then), re-simulates those frames,
/// and compares them with the first run: the [state hash](Scheduler::state_hash) right after
/// the restore, every frame's report (counts, not timings) and `checksum(ctx)`, and the state
/// hash at the window's end. (State hashes cost a snapshot each, so they are compared per
/// window; the context checksum and the reports find the first frame that differs.)
///
/// The first run is the one that continues: `sched` and `ctx` end as plain `tick`s would
/// leave them, and handles and [`Commands`](crate::scheduler::Commands) stay valid. The
/// re-simulation runs in a scheduler of its own, so callbacks must keep their state in the
/// context (or rebuild it from their key), as rollback requires anyway.
///
/// # Errors
///
/// [`SyncError::Desync`] at the first difference, [`SyncError::Restore`] when the resolver
/// cannot bind something, [`SyncError::Incomplete`] when a snapshot leaves something out
/// (such as a running async task).
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::snapshot::{sync_test, Registry};
///
/// fn spawn(log: &mut Vec<u64>, cx: &mut TimerCx<Vec<u64>>) {
///     log.push(cx.call_index());
/// }
/// let mut sched = Scheduler::<Vec<u64>>::new();
/// sched.timers().every(secs(0.25)).name("spawn").call(spawn);
/// let mut log = Vec::new();
/// let checksum = |log: &Vec<u64>| tickflow::snapshot::stable_hash(log);
/// let mut names = Registry::new().timer("spawn", spawn);
/// let report = sync_test(&mut sched, &mut log, &mut names, 120, 30, Span::frames(1, 60), checksum)
///     .unwrap();
/// assert_eq!((report.frames, report.rollbacks, report.resimulated), (120, 4, 120));
/// assert_eq!(log.len(), 8); // two seconds at 0.25 s
/// ```
pub fn sync_test<C: Clone + 'static>(
    sched: &mut Scheduler<C>,
    ctx: &mut C,
    resolver: &mut dyn Resolver<C>,
    frames: u64,
    check_every: u64,
    dt: Span,
    mut checksum: impl FnMut(&C) -> u64,
) -> Result<SyncReport, SyncError> {
    let check_every = check_every.max(1);
    let mut out = SyncReport {
        frames: 0,
        rollbacks: 0,
        resimulated: 0,
        final_hash: sched.state_hash(),
    };
    let mut trace = Vec::new();
    while out.frames < frames {
        let n = check_every.min(frames - out.frames);
        sched.apply_commands();
        let saved = sched.snapshot();
        let saved_ctx = ctx.clone();
        let saved_hash = stable_hash(&saved);
        trace.clear();
        for _ in 0..n {
            let report = sched.tick(dt, ctx);
            trace.push((report.frame, report_hash(&report), checksum(ctx)));
        }
        let end_hash = sched.state_hash();
        out.frames += n;

        let (mut replay, report) = Scheduler::restore(&saved, resolver)?;
        if !report.is_complete() {
            return Err(SyncError::Incomplete {
                frame: saved.frame(),
                report,
            });
        }
        let desync = |frame, what, expected, found| {
            (expected != found).then_some(SyncError::Desync {
                frame,
                what,
                expected,
                found,
            })
        };
        if let Some(e) = desync(
            saved.frame(),
            "restored state",
            saved_hash,
            replay.state_hash(),
        ) {
            return Err(e);
        }
        let mut replay_ctx = saved_ctx;
        resolver.after_restore(&replay, &mut replay_ctx);
        for &(frame, report, sum) in &trace {
            let r = replay.tick(dt, &mut replay_ctx);
            let found = [
                ("frame report", report, report_hash(&r)),
                ("context checksum", sum, checksum(&replay_ctx)),
            ];
            for (what, expected, found) in found {
                if let Some(e) = desync(frame, what, expected, found) {
                    return Err(e);
                }
            }
        }
        if let Some(e) = desync(
            replay.clocks().frame(),
            "state hash",
            end_hash,
            replay.state_hash(),
        ) {
            return Err(e);
        }
        out.rollbacks += 1;
        out.resimulated += n;
    }
    out.final_hash = sched.state_hash();
    Ok(out)
}
