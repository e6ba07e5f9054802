//! Moving one owner's timers to another manager (see `Scheduler::export_owner`).
//!
//! Ground rules:
//!
//! - A moved timer is its snapshot record ([`TimerRecord`]) with its times made relative to
//!   the source's clocks: the time to its due time (or how late it is, when it is due and
//!   waiting for a tick), its delay while pending, its time left while paused. The
//!   destination adds its own clocks back, so a timer with 0.3 s left fires 0.3 s after the
//!   import, whatever the two clocks read.
//! - Records are in set order and get fresh set-order numbers in that order, so ties between
//!   the owner's timers keep their order. Ties with the destination's timers go to the
//!   destination's (they were set first).
//! - Taking timers out never runs user code: callbacks and `on_cancel` hooks are handed to
//!   the caller (kept for an aborted handover, dropped after a plain export) and no hook is
//!   queued: the timers moved, they were not cancelled.

use super::durable::DurablePhase;
use super::snapshot::TimerRecord;
use crate::format::RestoreError;
use crate::owner::OwnerId;
use crate::timer::callback::{Callback, CancelHook};
use crate::timer::info::{TimerHandle, TimerInfo};
use crate::timer::manager::Timers;
use crate::timer::slot::{SlotState, NEVER};

/// One timer of a moved owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct MovedTimer {
    /// Its handle in the source, as `(index, tag)`: the key of the handle map.
    pub(super) handle: (u32, u32),
    /// Scheduled and already due: how long ago it was due (a bursting timer catches up from
    /// there). The record's `time` is then 0.
    late: u64,
    /// `slot` and `seq` unused; `time` relative (see the module docs).
    record: TimerRecord,
}

/// A timer taken out with its closures.
pub(crate) type TakenTimer<C> = (MovedTimer, Callback<C>, Option<CancelHook<C>>);

impl MovedTimer {
    /// The source handle (`None` when the record was damaged).
    pub(crate) fn old_handle(&self) -> Option<TimerHandle> {
        TimerHandle::from_raw(self.handle)
    }

    /// Whether the timer had an `on_cancel` hook.
    pub(crate) fn hooked(&self) -> bool {
        self.record.extras.as_ref().is_some_and(|x| x.on_cancel)
    }

    /// What the resolver is told: the timer as it will be in the destination (`handle` is
    /// the source's until the import allocates one).
    pub(crate) fn info(&self) -> TimerInfo {
        let r = &self.record;
        let x = r.extras.as_deref();
        TimerInfo {
            handle: self.old_handle().unwrap_or_default(),
            name: x.and_then(|x| x.name.clone()),
            tag: r.tag,
            owner: x.and_then(|x| x.owner),
            state: r.phase.timer_state(),
            domain: r.domain,
            looping: r.looping,
            catch_up: r.catch_up,
            remaining: crate::time::Span::from_flicks(r.time),
            rate: crate::time::Span::from_flicks(r.period),
            calls_made: r.calls,
            calls_left: x.and_then(|x| x.times_left),
        }
    }

    /// Checks what an import relies on: it belongs to `owner` and can still make a call.
    pub(crate) fn check(&self, owner: OwnerId) -> Result<(), RestoreError> {
        let x = self.record.extras.as_deref();
        if self.old_handle().is_none() {
            return Err(RestoreError::corrupt("a moved timer has a zero handle tag"));
        }
        if x.and_then(|x| x.owner) != Some(owner) {
            return Err(RestoreError::corrupt(format!(
                "a moved timer does not belong to {owner:?}"
            )));
        }
        if x.and_then(|x| x.times_left) == Some(0) {
            return Err(RestoreError::corrupt("a moved timer has no calls left"));
        }
        if self.late > 0 && (self.record.phase != DurablePhase::Scheduled || self.record.time != 0)
        {
            return Err(RestoreError::corrupt("a moved timer is late but not due"));
        }
        Ok(())
    }
}

impl<C: 'static> Timers<C> {
    /// Takes every timer of `owner` out, in set order, with times relative to this manager's
    /// clocks and with its closures. Between ticks only.
    pub(crate) fn take_owner(&mut self, owner: OwnerId) -> Vec<TakenTimer<C>> {
        assert!(
            !self.in_tick && self.firing.is_none(),
            "an owner's timers are moved between ticks"
        );
        let mut idxs = self.owners.get(owner).to_vec();
        idxs.sort_unstable_by_key(|&i| self.slots.at(i).seq());
        let mut out = Vec::with_capacity(idxs.len());
        for idx in idxs {
            let mut record = self.record(idx);
            let now = self.span.now_of(record.domain);
            let mut late = 0;
            if record.phase == DurablePhase::Scheduled && record.time != NEVER {
                late = now.saturating_sub(record.time);
                record.time = record.time.saturating_sub(now);
            }
            (record.slot, record.seq) = (0, 0);
            let h = self.handle_of(idx);
            let moved = MovedTimer {
                handle: h.to_raw(),
                late,
                record,
            };
            let cb = self.slots.at_mut(idx).take_callback();
            let hook = self.extras_mut(idx).take_on_cancel();
            self.unjournal(idx); // moved, not ended: its row is the destination's now
            self.remove(idx, false);
            out.push((moved, cb.expect("no callback runs between ticks"), hook));
        }
        out
    }

    /// Sets a moved timer again, relative to this manager's clocks; returns its new handle.
    /// The record was checked.
    pub(crate) fn put_moved(
        &mut self,
        m: &MovedTimer,
        cb: Callback<C>,
        hook: Option<CancelHook<C>>,
    ) -> TimerHandle {
        let r = &m.record;
        let (idx, seq) = self.take_slot();
        let grid = burst_grid(r.looping, r.period, r.catch_up);
        let (phase, time, owed) = self.arrival(r.phase, r.time, m.late, r.domain, grid);
        self.put_at(r, idx, seq, phase, time);
        self.settle(idx, cb, hook, owed)
    }

    /// A free slot and the next set-order number, for a timer that arrives (moved in or
    /// loaded from a row).
    pub(super) fn take_slot(&mut self) -> (u32, u32) {
        if self.next_seq == u32::MAX {
            self.renumber();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        (self.slots.alloc(), seq)
    }

    /// Where an arriving timer's countdown stands on this manager's clocks, from its phase and
    /// its time relative to the clock it left (see the module docs) and how late it was:
    /// its phase, its time here and the calls it owes from before the clock's start. `grid`
    /// is the period of a looping timer that bursts ([`burst_grid`]).
    pub(super) fn arrival(
        &self,
        phase: DurablePhase,
        time: u64,
        late: u64,
        domain: crate::time::Domain,
        grid: Option<u64>,
    ) -> (DurablePhase, u64, u64) {
        // No frame is open here: the countdown of a pending delay starts now.
        let phase = match phase {
            DurablePhase::Pending if !self.frame_open => DurablePhase::Scheduled,
            phase => phase,
        };
        if phase != DurablePhase::Scheduled || time == NEVER {
            return (phase, time, 0);
        }
        let now = self.span.now_of(domain);
        let (time, owed) = match late {
            0 => (now.checked_add(time).unwrap_or(NEVER), 0),
            late if late <= now => (now - late, 0),
            // Late by more than the clock has run (a durable timer offline longer than its
            // clock's reading): the calls its grid had before the clock's start are owed,
            // and made first.
            late => match grid {
                Some(period) => {
                    let before = late - now;
                    let owed = before.div_ceil(period);
                    (owed.saturating_mul(period).saturating_sub(before), owed)
                }
                None => (0, 0),
            },
        };
        (phase, time, owed)
    }

    /// The last step of an arrival, once the timer's fields are in `idx`: its callback and
    /// hook, the calls it owes, and its durable key claimed. Returns its handle.
    pub(super) fn settle(
        &mut self,
        idx: u32,
        cb: Callback<C>,
        hook: Option<CancelHook<C>>,
        owed: u64,
    ) -> TimerHandle {
        self.slots.at_mut(idx).put_callback(cb);
        if let Some(hook) = hook {
            self.extras_mut(idx).rare_mut().on_cancel = Some(hook);
        }
        if owed > 0 && self.slots.at(idx).flags().has_extras() {
            self.extras_mut(idx).rare_mut().owed = owed;
            self.owed += owed;
        }
        if self.extras_of(idx).is_some_and(|x| x.durable.is_some()) {
            self.claim_key(idx);
        }
        debug_assert_ne!(self.slots.at(idx).state(), SlotState::Free);
        self.handle_of(idx)
    }
}

/// The period on which a timer owes the calls it missed before its clock's start: a looping
/// timer with a period that bursts; `None` for any other (it owes none).
pub(super) fn burst_grid(
    looping: bool,
    period: u64,
    catch_up: crate::time::CatchUp,
) -> Option<u64> {
    (looping && period > 0 && catch_up == crate::time::CatchUp::Burst).then_some(period)
}
