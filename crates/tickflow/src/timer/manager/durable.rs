//! Durable timers: what a store (the `tickflow-store` crate) needs to keep timers across a
//! restart, with no database here.
//!
//! Ground rules:
//!
//! - A timer set with [`TimerBuilder::durable`](crate::timer::TimerBuilder::durable) is
//!   *durable*. Its key is `(owner, name)` (owner 0 and `""` when it has none): one durable
//!   timer per key, so setting a second one clears the first, as a new building replaces the
//!   old one's timer.
//! - The manager keeps a journal of which durable timers changed since the store last asked
//!   ([`Timers::durable_changes`]): set, called, paused, unpaused, restarted, given a new
//!   rate, started counting (set in an open frame) or ended. The marks sit in those
//!   operations, not where a timer is placed, so a plain timer's set, fire and cancel pay
//!   nothing for them (a call pays a check only on timers with side-table data).
//! - A change is the timer's whole current state ([`DurableTimer`]), not an event: a store
//!   writes rows, and a row is right however many changes it missed in between.
//! - A timer moved to another manager ([`Scheduler::export_owner`](crate::Scheduler)) did not
//!   end: it leaves no removal behind, and its new manager journals it as set.
//! - Loading rows back, and what the time that passed while nothing ran does to each
//!   ([`Offline`]), is `durable_load.rs`.
//! - A durable timer has three shapes on its round trip: what the builder holds, its entry
//!   (slot and side data), and its row. A row is read straight from the entry
//!   (`durable_at`) and loaded straight into one (`put_row`), with no snapshot record in
//!   between. A snapshot keeps a record of its own (`TimerRecord`, in `snapshot.rs`), on
//!   purpose: every timer is in it, most with no owner, name or payload, and its record is 64
//!   bytes with those boxed apart, where a row is 144 (a rollback snapshot of a million plain
//!   timers would more than double). Both spell the phase with [`DurablePhase`].

use super::journal::key_of;

use crate::owner::OwnerId;
use crate::time::CatchUp;
use crate::time::Domain;
use crate::timer::info::TimerState;
use crate::timer::manager::Timers;
use crate::timer::slot::SlotState;
use crate::timer::spec::Offline;

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

impl DurablePhase {
    /// What [`TimerInfo::state`](crate::timer::TimerInfo) says of a timer in this phase
    /// between ticks.
    pub(crate) fn timer_state(self) -> TimerState {
        match self {
            DurablePhase::Paused => TimerState::Paused,
            DurablePhase::Pending => TimerState::Pending,
            DurablePhase::Scheduled => TimerState::Active,
        }
    }
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
    /// The user's bytes ([`TimerBuilder::payload`](crate::timer::TimerBuilder::payload)).
    pub payload: Vec<u8>,
    /// Its place in set order among the manager's timers (breaks ties between timers due
    /// together; only the order of these numbers matters).
    pub seq: u64,
}

impl DurableTimer {
    /// Whether the time a node spent offline moves this timer's due time on its clock when the
    /// node restarts: it counts down ([`DurablePhase::Scheduled`], not never), its [`Offline`]
    /// policy counts the time ([`Offline::Freeze`] does not), and its clock is the game clock,
    /// which goes on from where it stood (the real clock itself moves by the time offline, so
    /// a real-clock due time stays where it is; frames do not pass offline). A store that
    /// keeps a node's offline time once, in place of moving every such row (see
    /// [`DurableLoad::keep_shift`](crate::timer::DurableLoad::keep_shift)), adds it to exactly
    /// these rows' `time` as it writes them and takes it off as it reads them.
    ///
    /// ```
    /// use tickflow::prelude::*;
    /// use tickflow::timer::Offline;
    ///
    /// let mut sched: Scheduler<()> = Scheduler::new();
    /// (sched.timers().every(secs(60.0)).name("regen"))
    ///     .durable(Offline::CatchUp)
    ///     .call(|_, _| {});
    /// (sched.timers().every(secs(60.0)).real().name("auction"))
    ///     .durable(Offline::CatchUp)
    ///     .call(|_, _| {});
    /// (sched.timers().every(secs(60.0)).name("crops"))
    ///     .durable(Offline::Freeze)
    ///     .call(|_, _| {});
    /// let rows = sched.timers().durable_timers();
    /// let moves = |name: &str| rows.iter().find(|t| t.name == name).unwrap().shifts_offline();
    /// assert!(moves("regen")); // the game clock stood still: the timer comes nearer
    /// assert!(!moves("auction")); // the real clock moved by itself
    /// assert!(!moves("crops")); // frozen: offline time does not count
    /// ```
    pub fn shifts_offline(&self) -> bool {
        self.phase == DurablePhase::Scheduled
            && self.time != u64::MAX
            && self.offline != Offline::Freeze
            && self.domain == Domain::Game
    }
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

impl<C: 'static> Timers<C> {
    /// Makes `idx` the durable timer of its key, clearing the one that had it.
    pub(super) fn claim_key(&mut self, idx: u32) {
        if let Some(old) = self.journal.hold(&self.extras, idx) {
            // The key stays this timer's: the old one's removal sees it taken.
            if old != idx && self.slots.at(old).state() != crate::timer::slot::SlotState::Free {
                self.clear(self.handle_of(old));
            }
        }
        self.touch(idx);
    }

    /// Journals a change of the timer in `idx` if it is durable.
    #[inline]
    pub(super) fn touch(&mut self, idx: u32) {
        if self.journal.held() == 0 || !self.slots.at(idx).flags().has_extras() {
            return;
        }
        self.touch_slow(idx);
    }

    #[inline(never)]
    fn touch_slow(&mut self, idx: u32) {
        if let Some(x) = self.extras.get_mut(&idx) {
            if x.durable.is_some() && !x.dirty {
                x.dirty = true;
                self.journal.mark(idx);
            }
        }
    }

    /// Whether the timer in `idx` is as its row says (phase and time), so the row stands.
    pub(super) fn unchanged(&self, idx: u32, phase: DurablePhase, time: u64) -> bool {
        let e = self.slots.at(idx);
        phase_of(e.state()) == phase && e.due() == time
    }

    /// Rebuilds the key table of a manager built from a snapshot (which journals nothing).
    pub(super) fn rekey_durable(&mut self) {
        let Timers {
            extras, journal, ..
        } = self;
        let held: Vec<u32> = (extras.iter())
            .filter(|(_, x)| x.durable.is_some())
            .map(|(&idx, _)| idx)
            .collect();
        journal.reserve(extras, held.len());
        for idx in held {
            journal.hold(extras, idx);
        }
    }

    /// Stops journaling a timer that moves to another manager: no removal is recorded.
    pub(super) fn unjournal(&mut self, idx: u32) {
        if let Some(x) = self.extras.get_mut(&idx) {
            if x.durable.take().is_some() {
                x.dirty = false;
                self.journal.let_go(idx, key_of(x));
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
        let (ended, changed) = self.journal.drain();
        let mut out = Vec::with_capacity(ended.len() + changed.len());
        let mut gone: Vec<_> = ended
            .into_iter()
            .filter(|(o, n)| self.journal.holder(&self.extras, (*o, n)).is_none())
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
        let mut idxs: Vec<u32> = self.journal.slots().collect();
        idxs.sort_unstable_by_key(|&i| self.slots.at(i).seq());
        idxs.iter().map(|&i| self.durable_at(i)).collect()
    }

    /// The row of the durable timer in `idx`, read straight from its entry and side data (no
    /// snapshot record in between: a journal of a million rows copies each name and payload
    /// once). Between ticks.
    fn durable_at(&self, idx: u32) -> DurableTimer {
        let e = self.slots.at(idx);
        let x = self.extras_of(idx).expect("durable timers have extras");
        let flags = e.flags();
        DurableTimer {
            owner: x.owner.unwrap_or(OwnerId::new(0)),
            name: x.name.as_deref().unwrap_or_default().to_owned(),
            domain: flags.domain(),
            phase: phase_of(e.state()),
            time: e.due(),
            period: e.period(),
            looping: flags.looping(),
            catch_up: flags.catch_up(),
            offline: x.durable.expect("durable"),
            calls: self.calls_at(idx),
            times_left: x.times_left(),
            first_delay: x.first_delay(),
            tag: self.tag_of(idx),
            payload: x.payload().unwrap_or_default().to_vec(),
            seq: u64::from(e.seq()),
        }
    }
}

/// What a timer's time means in state `s` (its entry's `due` is the delay, the due time or
/// the time left accordingly). Between ticks: no callback is running.
pub(super) fn phase_of(s: SlotState) -> DurablePhase {
    match s {
        SlotState::Pending => DurablePhase::Pending,
        SlotState::Paused => DurablePhase::Paused,
        SlotState::Active | SlotState::Ready => DurablePhase::Scheduled,
        SlotState::Executing | SlotState::ExecutingPaused | SlotState::Free => {
            unreachable!("no callback runs between ticks")
        }
    }
}
