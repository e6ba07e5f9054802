//! Durable timers: what a store (the `tickflow-store` crate) needs to keep timers across a
//! restart, with no database here.
//!
//! Ground rules:
//!
//! - A timer set with [`TimerBuilder::durable`] is *durable*. Its key is `(owner, name)`
//!   (owner 0 and `""` when it has none): one durable timer per key, so setting a second one
//!   clears the first, as a new building replaces the old one's timer.
//! - The manager keeps a journal of which durable timers changed since the store last asked
//!   ([`Timers::durable_changes`]): set, called, paused, unpaused, restarted, given a new
//!   rate, started counting (set in an open frame) or ended. The marks sit in those
//!   operations, not where a timer is placed, so a plain timer's set, fire and cancel pay
//!   nothing for them (a call pays a check only on timers with side-table data).
//! - A change is the timer's whole current state ([`DurableTimer`]), not an event: a store
//!   writes rows, and a row is right however many changes it missed in between.
//! - A timer moved to another manager ([`Scheduler::export_owner`](crate::Scheduler)) did not
//!   end: it leaves no removal behind, and its new manager journals it as set.
//! - [`Timers::load_durable`] brings rows back into a running manager, all or nothing, and
//!   decides what the time that passed while nothing ran does to each ([`Offline`]).

use rustc_hash::FxHashMap;

use super::moved::MovedTimer;
use super::slot::NEVER;
use super::snapshot::{ExtraRecord, Phase, TimerRecord};
use super::{CatchUp, OwnerId, Timers};
use crate::format::RestoreError;
use crate::scheduler::Resolver;
use crate::time::{Domain, Span};

/// What a restart does with the time that passed while no process ran a durable timer.
///
/// Offline time counts only for timers whose policy is not `Freeze`, and never for frame
/// timers (no frames ran). A timer whose countdown ended while offline has *lapsed*; the policy
/// says what the first frame after the reload does with it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum Offline {
    /// The world stood still: the timer keeps the time it had left (the game clock's default:
    /// game time does not pass while the server is down).
    Freeze = 0,
    /// Offline time counts, and the first frame makes the calls it missed, as a late frame
    /// would: capped by the manager's catch-up cap, by the timer's own [`CatchUp`] policy (the
    /// real clock's default: energy regenerates while the player is away).
    CatchUp = 1,
    /// Offline time counts; a lapsed timer makes one call in the first frame, and a looping one
    /// counts its next period from there (a daily reward collected once).
    Once = 2,
    /// Offline time counts; a lapsed one-shot is dropped and a looping timer skips to its
    /// next period on its grid, making no call for the ones missed (an event that only
    /// matters if someone saw it).
    Skip = 3,
}

impl Offline {
    /// The default for a clock: `CatchUp` for [`Domain::Real`], `Freeze` for the others.
    pub const fn default_for(domain: Domain) -> Offline {
        match domain {
            Domain::Real => Offline::CatchUp,
            _ => Offline::Freeze,
        }
    }
}

/// Where a durable timer's countdown is; what [`DurableTimer::time`] means.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum DurablePhase {
    /// Set in an open frame: `time` is its delay, counted from the next tick.
    Pending,
    /// Counting down: `time` is its due time on its clock (`u64::MAX` for never; at or
    /// before the clock's reading when it is due and waits for a tick).
    Scheduled,
    /// Paused: `time` is the time it has left.
    Paused,
}

/// One durable timer as plain data: a store's row. Times are raw clock units (flicks; frames
/// for [`Domain::Frames`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DurableTimer {
    /// Its owner (owner 0 when it has none): with `name`, the row's key.
    pub owner: OwnerId,
    /// Its name (`""` when it has none); restores bind its callback by it.
    pub name: String,
    /// The clock it counts on.
    pub domain: Domain,
    /// What `time` means.
    pub phase: DurablePhase,
    /// Delay, due time or time left (see [`DurablePhase`]).
    pub time: u64,
    /// Its period (looping) or delay (one-shot).
    pub period: u64,
    /// Whether it repeats.
    pub looping: bool,
    /// What it does when it is several periods late.
    pub catch_up: CatchUp,
    /// What a restart does with the time that passed.
    pub offline: Offline,
    /// Calls made so far.
    pub calls: u64,
    /// Calls left, for a timer limited with `times(n)` (never 0).
    pub times_left: Option<u64>,
    /// A first delay different from its period, while it matters for `elapsed`.
    pub first_delay: Option<u64>,
    /// Its tag.
    pub tag: Option<u64>,
    /// The user's bytes ([`TimerBuilder::payload`](super::TimerBuilder::payload)).
    pub payload: Vec<u8>,
    /// Its place in set order among the manager's timers (breaks ties between timers due
    /// together; only the order of these numbers matters).
    pub seq: u64,
}

/// A change a store writes: a durable timer's row, or the key of one that ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DurableChange {
    /// Insert or replace the row with this key.
    Set(DurableTimer),
    /// Delete the row with this key: the timer finished or was cleared.
    Removed {
        /// The row's owner.
        owner: OwnerId,
        /// The row's name.
        name: String,
    },
}

/// What [`Timers::load_durable`] did with the rows, by what the offline time did to them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadReport {
    /// Timers set again (all rows but the skipped one-shots).
    pub loaded: usize,
    /// Loaded with their countdown still running: each fires on its exact frame.
    pub on_time: usize,
    /// Paused timers (offline time does not touch them).
    pub paused: usize,
    /// Lapsed timers (or ones due when saved) that make their missed calls in the first frame.
    pub caught_up: usize,
    /// Lapsed timers that make one call in the first frame.
    pub fired_once: usize,
    /// Lapsed looping timers moved to their next period without a call.
    pub skipped: usize,
    /// Lapsed one-shots dropped by [`Offline::Skip`] (their rows go at the next commit).
    pub dropped: usize,
}

/// Durable keys and the changes since the last drain.
#[derive(Default)]
pub(crate) struct Journal {
    /// The live durable timer of each key.
    keys: FxHashMap<(OwnerId, Box<str>), u32>,
    /// Slots marked changed (each once while its `dirty` flag is up; may be stale).
    changed: Vec<u32>,
    /// Keys whose timer ended.
    ended: Vec<(OwnerId, Box<str>)>,
}

fn key(owner: Option<OwnerId>, name: Option<&str>) -> (OwnerId, Box<str>) {
    (owner.unwrap_or(OwnerId::new(0)), name.unwrap_or("").into())
}

impl Journal {
    /// A durable timer ended: its key is free and its row goes.
    pub(super) fn ended(&mut self, idx: u32, owner: Option<OwnerId>, name: Option<&str>) {
        let k = key(owner, name);
        if self.keys.get(&k) == Some(&idx) {
            self.keys.remove(&k);
        }
        self.ended.push(k);
    }
}

impl<C: 'static> Timers<C> {
    /// Makes `idx` the durable timer of its key, clearing the one that had it.
    pub(super) fn claim_key(&mut self, idx: u32) {
        let x = self.extras_of(idx).expect("durable timers have extras");
        let k = key(x.owner, x.name.as_deref());
        if let Some(old) = self.journal.keys.insert(k, idx) {
            // The key stays this timer's: the old one's removal sees it taken.
            if old != idx && self.slots.at(old).state != super::slot::State::Free {
                self.clear(self.handle_of(old));
            }
        }
        self.touch(idx);
    }

    /// Journals a change of the timer in `idx` if it is durable.
    #[inline]
    pub(super) fn touch(&mut self, idx: u32) {
        if self.journal.keys.is_empty() || !self.slots.at(idx).flags.has_extras() {
            return;
        }
        self.touch_slow(idx);
    }

    #[inline(never)]
    fn touch_slow(&mut self, idx: u32) {
        if let Some(x) = self.extras.get_mut(&idx) {
            if x.durable.is_some() && !x.dirty {
                x.dirty = true;
                self.journal.changed.push(idx);
            }
        }
    }

    /// Whether the timer in `idx` is as its row says (phase and time), so the row stands.
    fn unchanged(&self, idx: u32, phase: DurablePhase, time: u64) -> bool {
        use super::slot::State;
        let e = self.slots.at(idx);
        let now = match e.state {
            State::Pending => DurablePhase::Pending,
            State::Paused => DurablePhase::Paused,
            _ => DurablePhase::Scheduled,
        };
        now == phase && e.due == time
    }

    /// Rebuilds the key table of a manager built from a snapshot (which journals nothing).
    pub(super) fn rekey_durable(&mut self) {
        let Timers {
            extras, journal, ..
        } = self;
        for (&idx, x) in extras.iter() {
            if x.durable.is_some() {
                journal.keys.insert(key(x.owner, x.name.as_deref()), idx);
            }
        }
    }

    /// Stops journaling a timer that moves to another manager: no removal is recorded.
    pub(super) fn unjournal(&mut self, idx: u32) {
        if let Some(x) = self.extras.get_mut(&idx) {
            if x.durable.take().is_some() {
                x.dirty = false;
                let k = key(x.owner, x.name.as_deref());
                if self.journal.keys.get(&k) == Some(&idx) {
                    self.journal.keys.remove(&k);
                }
            }
        }
    }

    /// The changes to durable timers since the last call, for a store to write: removals of
    /// keys that no live durable timer holds, then the current state of every changed one.
    /// Applying them in order to the rows written so far gives one row per live durable
    /// timer. Between ticks (a store commits at a frame's end).
    ///
    /// ```
    /// use tickflow::prelude::*;
    /// use tickflow::timer::{DurableChange, Offline};
    ///
    /// let mut timers = TimerManager::<()>::new();
    /// let h = timers.after(secs(8.0)).owner(OwnerId::new(42)).durable(Offline::Freeze)
    ///     .name("built").call(|_, _| {});
    /// let changes = timers.durable_changes();
    /// assert!(matches!(&changes[..], [DurableChange::Set(t)] if t.name == "built"));
    /// assert!(timers.durable_changes().is_empty(), "drained");
    /// timers.clear(h);
    /// assert!(matches!(&timers.durable_changes()[..], [DurableChange::Removed { .. }]));
    /// ```
    ///
    /// # Panics
    ///
    /// When called from inside a timer callback.
    pub fn durable_changes(&mut self) -> Vec<DurableChange> {
        assert!(
            !self.in_tick && self.firing.is_none(),
            "Timers::durable_changes called while a timer callback runs; call it between ticks"
        );
        let ended = std::mem::take(&mut self.journal.ended);
        let changed = std::mem::take(&mut self.journal.changed);
        let mut out = Vec::with_capacity(ended.len() + changed.len());
        let mut gone: Vec<_> = ended
            .into_iter()
            .filter(|k| !self.journal.keys.contains_key(k))
            .collect();
        gone.sort_unstable();
        gone.dedup();
        out.extend(
            gone.into_iter()
                .map(|(owner, name)| DurableChange::Removed {
                    owner,
                    name: name.into(),
                }),
        );
        for idx in changed {
            let dirty = self
                .extras
                .get_mut(&idx)
                .filter(|x| x.durable.is_some() && x.dirty);
            if let Some(x) = dirty {
                x.dirty = false;
                out.push(DurableChange::Set(self.durable_at(idx)));
            }
        }
        out
    }

    /// Every live durable timer, in set order: for a full save (after a snapshot restore, say,
    /// which journals nothing). The journal is left as it is. Between ticks.
    pub fn durable_timers(&self) -> Vec<DurableTimer> {
        let mut idxs: Vec<u32> = self.journal.keys.values().copied().collect();
        idxs.sort_unstable_by_key(|&i| self.slots.at(i).seq);
        idxs.iter().map(|&i| self.durable_at(i)).collect()
    }

    fn durable_at(&self, idx: u32) -> DurableTimer {
        let r = self.record(idx);
        let x = r.extras.as_deref().expect("durable timers have extras");
        let extras = self.extras_of(idx).expect("durable timers have extras");
        DurableTimer {
            owner: x.owner.unwrap_or(OwnerId::new(0)),
            name: x.name.clone().unwrap_or_default(),
            domain: r.domain,
            phase: match r.phase {
                Phase::Pending => DurablePhase::Pending,
                Phase::Scheduled => DurablePhase::Scheduled,
                Phase::Paused => DurablePhase::Paused,
            },
            time: r.time,
            period: r.period,
            looping: r.looping,
            catch_up: r.catch_up,
            offline: extras.durable.expect("durable"),
            calls: r.calls,
            times_left: x.times_left,
            first_delay: x.first_delay,
            tag: r.tag,
            payload: extras.payload.as_deref().unwrap_or_default().to_vec(),
            seq: u64::from(r.seq),
        }
    }

    /// Sets durable timers again from rows a store kept, binding each callback with
    /// `resolver` (as a restore does, by name: a [`Registry`](crate::snapshot::Registry)).
    ///
    /// `saved` is the reading of each clock (in [`Domain`] order, raw units) when the rows were
    /// last written; `offline` is how long nothing ran since (wall-clock time; a store measures
    /// it). Each timer's countdown is moved from `saved` to this manager's clocks, so one with
    /// 2 s left has 2 s left here; then its [`Offline`] policy decides what `offline` does.
    /// Rows are set in `seq` order, after every timer this manager has (which win ties). A row
    /// whose key a live durable timer holds replaces it.
    ///
    /// All or nothing: every row is checked and every callback bound before any timer is set;
    /// an error names the row (its owner and name) and what is wrong with it. Between ticks.
    pub fn load_durable(
        &mut self,
        mut rows: Vec<DurableTimer>,
        saved: [u64; 3],
        offline: Span,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<LoadReport, RestoreError> {
        assert!(
            !self.in_tick && self.firing.is_none(),
            "Timers::load_durable called while a timer callback runs; call it between ticks"
        );
        rows.sort_unstable_by_key(|r| r.seq);
        let mut keys = rustc_hash::FxHashSet::default();
        keys.reserve(rows.len());
        for row in &rows {
            check(row)?;
            if !keys.insert((row.owner, row.name.as_str())) {
                return Err(bad(row, "key", "appears twice"));
            }
        }
        drop(keys);
        // Bound before anything is set, so that an unbound name changes nothing.
        let mut planned = Vec::with_capacity(rows.len());
        for row in rows {
            let Some((phase, time, late, outcome)) = plan(&row, saved, offline.flicks()) else {
                planned.push(Err(key(Some(row.owner), Some(&row.name))));
                continue;
            };
            let was = (row.seq as u32, row.phase, row.time);
            let moved = moved(row, phase, time, late);
            let info = moved.info();
            let Some(cb) = resolver.timer(&info) else {
                return Err(super::unbound(&info));
            };
            planned.push(Ok((moved, outcome, cb, was)));
        }
        let mut report = LoadReport::default();
        // Into an empty manager the rows keep their set-order numbers, so a timer the load did
        // not change (a resumed clock, no offline time for it) needs no new row.
        let keep_seq = self.slots.live() == 0;
        let next_seq = self.next_seq;
        // The tables grow once, not in doublings that move every entry (a reload is large).
        let n = planned.len();
        self.reserve_exact(self.slots.entries.len() + n);
        self.extras.reserve(n);
        self.journal.keys.reserve(n);
        self.journal.changed.reserve(n);
        for plan in planned {
            let (moved, outcome, cb, was) = match plan {
                Ok(p) => p,
                Err(key) => {
                    report.dropped += 1;
                    self.journal.ended.push(key);
                    continue;
                }
            };
            if keep_seq {
                self.next_seq = was.0;
            }
            let h = self.put_moved_owned(moved, super::Callback::from_box(cb), None);
            if keep_seq && self.unchanged(h.index(), was.1, was.2) {
                self.extras_mut(h.index()).dirty = false;
                let last = self.journal.changed.pop();
                debug_assert_eq!(last, Some(h.index()));
            }
            report.loaded += 1;
            match outcome {
                Outcome::OnTime => report.on_time += 1,
                Outcome::Paused => report.paused += 1,
                Outcome::CaughtUp => report.caught_up += 1,
                Outcome::Once => report.fired_once += 1,
                Outcome::Skipped => report.skipped += 1,
            }
        }
        self.next_seq = self.next_seq.max(next_seq);
        Ok(report)
    }
}

/// What the offline time did to one row.
enum Outcome {
    OnTime,
    Paused,
    CaughtUp,
    Once,
    Skipped,
}

fn bad(row: &DurableTimer, field: &str, what: &str) -> RestoreError {
    RestoreError::corrupt(format!(
        "durable timer ({:?}, {:?}): {field} {what}",
        row.owner, row.name
    ))
}

/// The row's own consistency, as a restore checks a snapshot's records.
fn check(row: &DurableTimer) -> Result<(), RestoreError> {
    if row.times_left == Some(0) {
        return Err(bad(row, "times_left", "is 0 (no calls left)"));
    }
    if row.time == NEVER && row.phase != DurablePhase::Scheduled {
        return Err(bad(row, "time", "is never while not scheduled"));
    }
    if row.first_delay == Some(NEVER) {
        return Err(bad(row, "first_delay", "is never"));
    }
    if row.seq > u64::from(u32::MAX) {
        return Err(bad(row, "seq", "is out of range"));
    }
    Ok(())
}

/// Where a row's timer starts after the reload — its phase, time (relative to the reload) and
/// lateness — and what offline time did to it; `None` for a lapsed one-shot that `Skip` drops.
fn plan(row: &DurableTimer, saved: [u64; 3], offline: u64) -> Option<(Phase, u64, u64, Outcome)> {
    let d = row.domain.index();
    let counts = row.offline != Offline::Freeze && row.domain != Domain::Frames;
    let rel = match row.phase {
        DurablePhase::Paused => return Some((Phase::Paused, row.time, 0, Outcome::Paused)),
        _ if row.time == NEVER => return Some((Phase::Scheduled, NEVER, 0, Outcome::OnTime)),
        DurablePhase::Pending => i128::from(row.time),
        DurablePhase::Scheduled => i128::from(row.time) - i128::from(saved[d]),
    };
    let rel = rel - if counts { i128::from(offline) } else { 0 };
    if rel > 0 {
        let time = u64::try_from(rel).unwrap_or(NEVER - 1).min(NEVER - 1);
        return Some((Phase::Scheduled, time, 0, Outcome::OnTime));
    }
    // Due when saved (then it catches up, as a late frame would), or lapsed while offline.
    let late = u64::try_from(-rel).unwrap_or(u64::MAX);
    let policy = if counts {
        row.offline
    } else {
        Offline::CatchUp
    };
    Some(match policy {
        Offline::Freeze | Offline::CatchUp => (Phase::Scheduled, 0, late, Outcome::CaughtUp),
        Offline::Once => (Phase::Scheduled, 0, 0, Outcome::Once),
        Offline::Skip if !row.looping => return None,
        Offline::Skip => {
            let next = match row.period {
                0 => 0,
                p => p - late % p,
            };
            (Phase::Scheduled, next, 0, Outcome::Skipped)
        }
    })
}

/// The row as a moved timer (its name and payload moved, not copied).
fn moved(row: DurableTimer, phase: Phase, time: u64, late: u64) -> MovedTimer {
    let extras = ExtraRecord {
        owner: Some(row.owner),
        name: Some(row.name),
        times_left: row.times_left,
        first_delay: row.first_delay,
        on_cancel: false,
        payload: (!row.payload.is_empty()).then_some(row.payload),
        durable: Some(row.offline),
    };
    let record = TimerRecord {
        slot: 0,
        seq: 0,
        phase,
        time,
        period: row.period,
        domain: row.domain,
        catch_up: row.catch_up,
        looping: row.looping,
        calls: row.calls,
        tag: row.tag,
        extras: Some(Box::new(extras)),
    };
    MovedTimer::from_record(record, late)
}
