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
    /// A timer made from a record with relative times (a durable row's), late by `late`.
    pub(super) fn from_record(record: TimerRecord, late: u64) -> MovedTimer {
        MovedTimer {
            handle: (0, 0),
            late,
            record,
        }
    }

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
        let name = self.record.extras.as_deref().and_then(|x| x.name.clone());
        self.info_named(name)
    }

    /// [`info`](Self::info) lent to `f` without a copy of the name, which moves into the info
    /// and back: a load of a million durable timers copies no name.
    pub(crate) fn with_info<R>(&mut self, f: impl FnOnce(&TimerInfo) -> R) -> R {
        let name = self
            .record
            .extras
            .as_deref_mut()
            .and_then(|x| x.name.take());
        let mut info = self.info_named(name);
        let out = f(&info);
        if let Some(x) = self.record.extras.as_deref_mut() {
            x.name = info.name.take();
        }
        out
    }

    fn info_named(&self, name: Option<String>) -> TimerInfo {
        let r = &self.record;
        let x = r.extras.as_deref();
        TimerInfo {
            handle: self.old_handle().unwrap_or_default(),
            name,
            tag: r.tag,
            owner: x.and_then(|x| x.owner),
            state: match r.phase {
                DurablePhase::Paused => crate::timer::info::TimerState::Paused,
                DurablePhase::Pending => crate::timer::info::TimerState::Pending,
                DurablePhase::Scheduled => crate::timer::info::TimerState::Active,
            },
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
        self.put_moved_owned(m.clone(), cb, hook)
    }

    /// [`put_moved`](Self::put_moved) of a timer the caller gives up (no copy of its record).
    pub(crate) fn put_moved_owned(
        &mut self,
        m: MovedTimer,
        cb: Callback<C>,
        hook: Option<CancelHook<C>>,
    ) -> TimerHandle {
        if self.next_seq == u32::MAX {
            self.renumber();
        }
        let idx = self.slots.alloc();
        let mut r = m.record;
        // Name and payload move into the side table instead of being copied by `put`.
        let (name, payload) =
            (r.extras.as_deref_mut()).map_or((None, None), |x| (x.name.take(), x.payload.take()));
        r.slot = idx;
        r.seq = self.next_seq;
        self.next_seq += 1;
        if r.phase == DurablePhase::Pending && !self.frame_open {
            // No frame is open here: the countdown of the delay starts now.
            r.phase = DurablePhase::Scheduled;
        }
        let mut owed = 0;
        if r.phase == DurablePhase::Scheduled && r.time != NEVER {
            let now = self.span.now_of(r.domain);
            r.time = match m.late {
                0 => now.checked_add(r.time).unwrap_or(NEVER),
                late if late <= now => now - late,
                // Late by more than the clock has run (a durable timer offline longer than
                // its clock's reading): the calls its grid had before the clock's start are
                // owed, and made first.
                late => {
                    let before = late - now;
                    match r.looping && r.period > 0 && r.catch_up == crate::time::CatchUp::Burst {
                        true => {
                            owed = before.div_ceil(r.period);
                            owed.saturating_mul(r.period).saturating_sub(before)
                        }
                        false => 0,
                    }
                }
            };
        }
        self.put(&r);
        if name.is_some() || payload.is_some() {
            let x = self.extras_mut(idx);
            x.name = name.map(String::into_boxed_str);
            if let Some(p) = payload {
                x.rare_mut().payload = Some(p.into_boxed_slice());
            }
        }
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
