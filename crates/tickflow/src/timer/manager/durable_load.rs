//! Loading durable rows back into a manager, and what the time that passed while nothing ran
//! does to each ([`Offline`]).
//!
//! Two ways in, with one per-row path:
//!
//! - [`Timers::load_durable`]: all rows at once, into any manager. Every row is checked and
//!   bound before one is set, so an error changes nothing.
//! - [`Timers::durable_loader`]: rows in parts, as a store reads them, into an empty manager.
//!   Each part is set as it comes, so a reader on another thread and the setting here overlap
//!   (a resume of a million timers spends about as long reading as setting). An error empties
//!   the manager again, which is what "nothing changed" means for one that was empty.
//!
//! Both take a [`Resolver`](crate::scheduler::Resolver), as a restore does; those two methods
//! are written beside it (`scheduler/resolver.rs`), and this file binds through a closure, so
//! that the timer layer needs nothing of the scheduler's.
//!
//! A row goes straight into its slot and side data (`put_row`): its name and payload move,
//! nothing is copied, and it passes through no snapshot record. What it shares with a timer
//! moved in from another manager (`moved.rs`) is the arrival: a slot and a set-order number,
//! its time on this manager's clocks and the calls it owes, then its callback and its key.
//!
//! Into an empty manager the rows keep their set-order numbers, so a timer the load did not
//! change (a resumed clock, no offline time for it) needs no new row, and rows may come in any
//! order: ties between timers due together are broken by these numbers, not by the order of
//! setting.

use super::durable::{DurablePhase, DurableTimer, LoadReport};
use super::extras::Extras;
use super::moved::burst_grid;
use super::snapshot::{unbound, Bind};
use crate::format::RestoreError;
use crate::time::{Domain, Span};
use crate::timer::callback::Callback;
use crate::timer::info::{TimerHandle, TimerInfo};
use crate::timer::manager::Timers;
use crate::timer::slot::{Flags, NEVER};
use crate::timer::spec::Offline;

impl<C: 'static> Timers<C> {
    /// [`load_durable`](Self::load_durable) with each timer's callback bound by `bind_cb`, as a
    /// restore binds (durable timers have no `on_cancel` hook; the method itself is beside the
    /// resolver, `scheduler/resolver.rs`).
    pub(crate) fn load_durable_with(
        &mut self,
        mut rows: Vec<DurableTimer>,
        saved: [u64; 3],
        offline: Span,
        bind_cb: Bind<'_, C>,
    ) -> Result<LoadReport, RestoreError> {
        if self.slots.live() == 0 {
            let mut load = self.durable_loader(saved, offline)?;
            load.add_with(rows, bind_cb)?;
            return Ok(load.finish());
        }
        self.assert_between_ticks("load_durable");
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
        for mut row in rows {
            let Some(start) = plan(&row, saved, offline.flicks()) else {
                planned.push(Err(row));
                continue;
            };
            let cb = bind(&mut row, &start, bind_cb)?;
            planned.push(Ok((row, start, cb)));
        }
        let mut report = LoadReport::default();
        self.reserve_durable(planned.len());
        for plan in planned {
            match plan {
                Ok((row, start, cb)) => {
                    self.put_row(row, &start, cb);
                    report.count(start.outcome);
                }
                Err(row) => {
                    report.dropped += 1;
                    self.journal.dropped(row.owner, row.name);
                }
            }
        }
        Ok(report)
    }

    /// Starts loading rows in parts ([`DurableLoad::add`]) into this manager, which must have
    /// no timers; `saved` and `offline` as for [`load_durable`](Self::load_durable). Between
    /// ticks.
    ///
    /// ```
    /// use tickflow::prelude::*;
    /// use tickflow::snapshot::Registry;
    /// use tickflow::timer::{Offline, TimerManager};
    ///
    /// let mut before = TimerManager::<u32>::new();
    /// (before.after(secs(2.0)).owner(OwnerId::new(7)).name("heal"))
    ///     .durable(Offline::Freeze).call(|_, _| {});
    /// let rows = before.durable_timers();
    ///
    /// let mut after = TimerManager::<u32>::new();
    /// let mut names = Registry::new().timer("heal", |n: &mut u32, _: &mut TimerCx<u32>| *n += 1);
    /// let mut load = after.durable_loader([0; 3], Span::ZERO)?;
    /// load.add(rows, &mut names)?;
    /// assert_eq!(load.finish().loaded, 1);
    /// let mut n = 0;
    /// after.tick(secs(2.0), &mut n);
    /// assert_eq!(n, 1, "2 s left before, 2 s left after");
    /// # Ok::<(), tickflow::snapshot::RestoreError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When the manager has timers (load those rows with `load_durable`).
    pub fn durable_loader(
        &mut self,
        saved: [u64; 3],
        offline: Span,
    ) -> Result<DurableLoad<'_, C>, RestoreError> {
        self.assert_between_ticks("durable_loader");
        if self.slots.live() != 0 {
            return Err(RestoreError::corrupt(
                "durable_loader: the manager has timers; load into it with load_durable",
            ));
        }
        Ok(DurableLoad {
            next_seq: self.next_seq,
            timers: self,
            saved,
            offline: offline.flicks(),
            report: LoadReport::default(),
            failed: false,
            shift_kept: false,
        })
    }

    fn assert_between_ticks(&self, what: &str) {
        assert!(
            !self.in_tick && self.firing.is_none(),
            "Timers::{what} called while a timer callback runs; call it between ticks"
        );
    }

    /// Room for `n` more durable timers: a reload is large, and tables that grow in
    /// doublings move every entry each time.
    fn reserve_durable(&mut self, n: usize) {
        self.reserve_with_extras(n);
        self.journal.reserve(&self.extras, n);
    }
}

/// Rows being loaded into an empty manager, part by part
/// ([`Timers::durable_loader`]). Each part is checked, bound and set when it is added.
pub struct DurableLoad<'a, C: 'static> {
    timers: &'a mut Timers<C>,
    saved: [u64; 3],
    offline: u64,
    report: LoadReport,
    /// The manager's next set-order number before the load, and then past every row's.
    next_seq: u32,
    failed: bool,
    /// The store keeps the offline time once per node ([`keep_shift`](Self::keep_shift)).
    shift_kept: bool,
}

impl<C: 'static> std::fmt::Debug for DurableLoad<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableLoad")
            .field("report", &self.report)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl<C: 'static> DurableLoad<'_, C> {
    /// [`add`](Self::add) with each timer's callback bound by `bind_cb` (see
    /// `Timers::load_durable_with`).
    pub(crate) fn add_with(
        &mut self,
        rows: Vec<DurableTimer>,
        bind_cb: Bind<'_, C>,
    ) -> Result<(), RestoreError> {
        if self.failed {
            return Err(RestoreError::corrupt(
                "durable load: an earlier part failed and the manager was emptied",
            ));
        }
        self.timers.reserve_durable(rows.len());
        for row in rows {
            if let Err(e) = self.set(row, bind_cb) {
                self.fail();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Room for `rows` more rows, so that the tables they go into grow once instead of in
    /// doublings that move every entry (a store knows how many rows it holds). Capped at
    /// 2^24 rows: the number may come from untrusted data.
    pub fn reserve(&mut self, rows: usize) {
        self.timers.reserve_durable(rows.min(1 << 24));
    }

    /// Says that the store keeps the offline time once for all the node's rows, rather than in
    /// each: it adds the node's whole offline time to the `time` of every row that
    /// [moves by it](DurableTimer::shifts_offline) as it writes one, and takes it off as it
    /// reads one back. A timer that the offline time only moved (it is still on time) is then
    /// not journaled as changed: its row is right as it stands, and a node of 100,000 such
    /// timers does not rewrite them all in its first commit after a restart. Without this,
    /// every such timer is journaled.
    pub fn keep_shift(&mut self) {
        self.shift_kept = true;
    }

    /// Ends the load: what it did.
    pub fn finish(self) -> LoadReport {
        self.report
    }

    fn set(&mut self, mut row: DurableTimer, bind_cb: Bind<'_, C>) -> Result<(), RestoreError> {
        check(&row)?;
        let Some(start) = plan(&row, self.saved, self.offline) else {
            self.report.dropped += 1;
            self.timers.journal.dropped(row.owner, row.name);
            return Ok(());
        };
        let (seq, phase) = (row.seq as u32, row.phase);
        // The row as it will stand: moved by the offline time, where the store keeps that.
        let shifted =
            self.shift_kept && row.shifts_offline() && matches!(start.outcome, Outcome::OnTime);
        let time = match shifted {
            true => row.time.saturating_sub(self.offline),
            false => row.time,
        };
        let cb = bind(&mut row, &start, bind_cb)?;
        let t = &mut *self.timers;
        let held = t.journal.held();
        t.next_seq = seq;
        let idx = t.put_row(row, &start, cb);
        self.next_seq = self.next_seq.max(seq + 1);
        t.next_seq = self.next_seq;
        if t.journal.held() == held {
            let x = t.extras_of(idx).expect("durable timers have extras");
            return Err(RestoreError::corrupt(format!(
                "durable timer ({:?}, {:?}): key appears twice",
                x.owner.unwrap_or(crate::owner::OwnerId::new(0)),
                x.name.as_deref().unwrap_or("")
            )));
        }
        if t.unchanged(idx, phase, time) {
            t.extras_mut(idx).dirty = false;
            t.journal.unmark_last(idx);
        }
        self.report.count(start.outcome);
        Ok(())
    }

    /// Empties the manager again: it was empty when the load began.
    fn fail(&mut self) {
        self.failed = true;
        self.report = LoadReport::default();
        let t = &mut *self.timers;
        t.clear_all();
        t.journal = Default::default();
        t.next_seq = self.next_seq;
    }
}

impl LoadReport {
    fn count(&mut self, outcome: Outcome) {
        self.loaded += 1;
        match outcome {
            Outcome::OnTime => self.on_time += 1,
            Outcome::Paused => self.paused += 1,
            Outcome::CaughtUp => self.caught_up += 1,
            Outcome::Once => self.fired_once += 1,
            Outcome::Skipped => self.skipped += 1,
        }
    }
}

/// What the offline time did to one row.
#[derive(Copy, Clone)]
enum Outcome {
    OnTime,
    Paused,
    CaughtUp,
    Once,
    Skipped,
}

/// Where a row's timer starts after the reload: its phase, time (relative to the reload) and
/// lateness, and what offline time did to it.
struct Start {
    phase: DurablePhase,
    time: u64,
    late: u64,
    outcome: Outcome,
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
    // A manager renumbers before it would hand out u32::MAX, so no row has it.
    if row.seq >= u64::from(u32::MAX) {
        return Err(bad(row, "seq", "is out of range"));
    }
    Ok(())
}

/// Where a row's timer starts; `None` for a lapsed one-shot that `Skip` drops.
fn plan(row: &DurableTimer, saved: [u64; 3], offline: u64) -> Option<Start> {
    let start = |phase, time, late, outcome| {
        Some(Start {
            phase,
            time,
            late,
            outcome,
        })
    };
    let d = row.domain.index();
    let counts = row.offline != Offline::Freeze && row.domain != Domain::Frames;
    let rel = match row.phase {
        DurablePhase::Paused => return start(DurablePhase::Paused, row.time, 0, Outcome::Paused),
        _ if row.time == NEVER => return start(DurablePhase::Scheduled, NEVER, 0, Outcome::OnTime),
        DurablePhase::Pending => i128::from(row.time),
        DurablePhase::Scheduled => i128::from(row.time) - i128::from(saved[d]),
    };
    let rel = rel - if counts { i128::from(offline) } else { 0 };
    if rel > 0 {
        let time = u64::try_from(rel).unwrap_or(NEVER - 1).min(NEVER - 1);
        return start(DurablePhase::Scheduled, time, 0, Outcome::OnTime);
    }
    // Due when saved (then it catches up, as a late frame would), or lapsed while offline.
    let late = u64::try_from(-rel).unwrap_or(u64::MAX);
    let policy = if counts {
        row.offline
    } else {
        Offline::CatchUp
    };
    match policy {
        Offline::Freeze | Offline::CatchUp => {
            start(DurablePhase::Scheduled, 0, late, Outcome::CaughtUp)
        }
        Offline::Once => start(DurablePhase::Scheduled, 0, 0, Outcome::Once),
        Offline::Skip if !row.looping => None,
        Offline::Skip => {
            let next = match row.period {
                0 => 0,
                p => p - late % p,
            };
            start(DurablePhase::Scheduled, next, 0, Outcome::Skipped)
        }
    }
}

/// The callback `bind_cb` gives the row's timer, told what `list()` will say about it once
/// set (its handle still zero). The name moves into the info and back: a load of a million
/// durable timers copies no name.
fn bind<C: 'static>(
    row: &mut DurableTimer,
    start: &Start,
    bind_cb: Bind<'_, C>,
) -> Result<Callback<C>, RestoreError> {
    let mut info = TimerInfo {
        handle: TimerHandle::default(),
        name: Some(std::mem::take(&mut row.name)),
        tag: row.tag,
        owner: Some(row.owner),
        state: start.phase.timer_state(),
        domain: row.domain,
        looping: row.looping,
        catch_up: row.catch_up,
        remaining: Span::from_flicks(start.time),
        rate: Span::from_flicks(row.period),
        calls_made: row.calls,
        calls_left: row.times_left,
    };
    let bound = bind_cb(&info, false).map(|(cb, _)| cb);
    let bound = bound.ok_or_else(|| unbound(&info));
    row.name = info.name.take().unwrap_or_default();
    bound
}

impl<C: 'static> Timers<C> {
    /// Sets a checked row's timer where `start` says, with its callback: from the row straight
    /// into the slot and its side data (the name and payload moved, not copied), with the next
    /// set-order number. Returns its slot.
    fn put_row(&mut self, row: DurableTimer, start: &Start, cb: Callback<C>) -> u32 {
        let (idx, seq) = self.take_slot();
        let grid = burst_grid(row.looping, row.period, row.catch_up);
        let (phase, time, owed) =
            self.arrival(start.phase, start.time, start.late, row.domain, grid);
        let mut x = Extras {
            owner: Some(row.owner),
            name: Some(row.name.into_boxed_str()),
            calls_hi: (row.calls >> 32) as u32,
            durable: Some(row.offline),
            ..Extras::default()
        };
        let payload = (!row.payload.is_empty()).then(|| row.payload.into_boxed_slice());
        x.set_rare(None, row.times_left, row.first_delay, payload);
        let flags = Flags::new(row.domain, row.catch_up, row.looping);
        let flags = self.put_side(idx, row.tag, Some(x), flags);
        (self.slots.at_mut(idx)).restore(seq, row.period, row.calls as u32, flags);
        self.put_phase(idx, phase, time);
        self.settle(idx, cb, None, owed);
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::snapshot::Registry;
    use crate::timer::standalone::TimerManager;

    fn rows(n: u64) -> Vec<DurableTimer> {
        let mut t = TimerManager::<u32>::new();
        for i in 0..n {
            (t.after(Frames(1 + i)).owner(OwnerId::new(1 + i % 3)))
                .name(format!("t{i}"))
                .durable(Offline::Freeze)
                .call(|_, _| {});
        }
        t.durable_timers()
    }

    fn names() -> Registry<u32> {
        Registry::new()
            .other_timers(|_| Some(Box::new(|n: &mut u32, _: &mut TimerCx<u32>| *n += 1)))
    }

    #[test]
    fn parts_in_any_order_fire_in_set_order() {
        let mut all = rows(6);
        let want: Vec<String> = all.iter().map(|r| r.name.clone()).collect();
        all.reverse();
        let mut t = TimerManager::<u32>::new();
        let mut load = t.durable_loader([0; 3], Span::ZERO).unwrap();
        let second = all.split_off(3);
        load.add(all, &mut names()).unwrap();
        load.add(second, &mut names()).unwrap();
        assert_eq!(load.finish().loaded, 6);
        let got: Vec<String> = t.durable_timers().into_iter().map(|r| r.name).collect();
        assert_eq!(got, want);
        assert!(
            t.durable_changes().is_empty(),
            "unchanged rows stand as they are"
        );
    }

    #[test]
    fn a_bad_part_leaves_the_manager_empty() {
        let mut t = TimerManager::<u32>::new();
        let mut load = t.durable_loader([0; 3], Span::ZERO).unwrap();
        load.add(rows(3), &mut names()).unwrap();
        let mut dup = rows(2);
        dup[1].times_left = Some(0);
        assert!(load.add(dup, &mut names()).is_err());
        assert!(
            load.add(rows(1), &mut names()).is_err(),
            "a failed load stays failed"
        );
        assert_eq!(load.finish(), LoadReport::default());
        assert_eq!(t.len(), 0);
        assert!(t.durable_changes().is_empty());
        // A key that an earlier part had is refused the same way.
        let mut load = t.durable_loader([0; 3], Span::ZERO).unwrap();
        load.add(rows(2), &mut names()).unwrap();
        let e = load.add(rows(1), &mut names()).unwrap_err().to_string();
        assert!(e.contains("appears twice"), "{e}");
        load.finish();
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn calls_missed_before_the_clock_started_are_owed_and_made_first() {
        // Saved at 10 s with its next call at 11 s, then 5 s offline: the grid had calls at
        // 11, 12, 13, 14 and 15 s. A fresh manager's clock reads 0 (the 15 s of the grid), so
        // four of them fall before its start: owed, and made with the one due now.
        let mut before = TimerManager::<u32>::new();
        (before.every(secs(1.0)).name("regen"))
            .durable(Offline::CatchUp)
            .call(|_, _| {});
        let mut row = before.durable_timers().remove(0);
        row.time = secs(11.0).flicks();
        let saved = [secs(10.0).flicks(), 0, 0];
        let mut t = TimerManager::<u32>::new();
        let report = (t.load_durable(vec![row], saved, secs(5.0), &mut names())).unwrap();
        assert_eq!(report.caught_up, 1);
        let mut n = 0;
        t.tick(Span::ZERO, &mut n);
        assert_eq!(n, 5, "four owed calls and the one due at the restart");
        t.tick(secs(0.999), &mut n);
        assert_eq!(n, 5, "the next falls on the grid, 1 s on");
        t.tick(secs(0.001), &mut n);
        assert_eq!(n, 6);
    }

    #[test]
    fn a_manager_with_timers_is_refused() {
        let mut t = TimerManager::<u32>::new();
        t.after(Frames(1)).call(|_, _| {});
        assert!(t.durable_loader([0; 3], Span::ZERO).is_err());
    }
}
