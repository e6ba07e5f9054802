//! [`TimerManager`] control: clearing and pausing timers, one at a time, by owner, by name or
//! all. Removal never calls user code (beyond dropping the closure): `on_cancel` hooks are
//! queued for the start of the next tick.

use super::manager::Base;
use super::slot::{State, NEVER};
use super::{OwnerId, TimerHandle, TimerManager};

impl<C: 'static> TimerManager<C> {
    /// Whether the timer's callback is running (in a tick or through `fire_now`).
    fn is_running(&self, idx: u32) -> bool {
        self.slots.at(idx).callback.is_none()
    }

    /// Whether a timer still has calls to make, so that removing it cancels it.
    fn has_more_calls(&self, idx: u32) -> bool {
        if !self.is_running(idx) {
            return true;
        }
        let looping = self.slots.at(idx).flags.looping();
        looping && self.extras_of(idx).and_then(|x| x.times_left) != Some(1)
    }

    /// Clears a timer. Returns `false` for an unknown or stale handle.
    ///
    /// A timer cleared before it finished has its `on_cancel` hook queued for the start of the
    /// next tick. A timer clearing itself from its callback drops the rest of its burst.
    pub fn clear(&mut self, h: TimerHandle) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        self.clear_slots(&[idx]);
        true
    }

    /// Removes these timers in this order; a timer that still had calls to make is cancelled.
    fn clear_slots(&mut self, idxs: &[u32]) -> usize {
        // One closure's panicking destructor does not keep the others.
        crate::unwind::each_then_raise(idxs, |&idx| {
            let cancelled = self.has_more_calls(idx);
            self.remove(idx, cancelled);
            true
        })
    }

    /// Clears every timer of `owner`, in set order; returns how many.
    pub fn clear_owner(&mut self, owner: OwnerId) -> usize {
        let idxs = self.owned(owner);
        self.clear_slots(&idxs)
    }

    /// Clears every timer named `name`, in set order; returns how many.
    pub fn clear_named(&mut self, name: &str) -> usize {
        let mut idxs: Vec<u32> = self
            .extras
            .iter()
            .filter(|(_, x)| x.name.as_deref() == Some(name))
            .map(|(&i, _)| i)
            .collect();
        self.sort_by_seq(&mut idxs);
        self.clear_slots(&idxs)
    }

    /// Clears every timer (their `on_cancel` hooks run at the next tick, in set order).
    pub fn clear_all(&mut self) {
        let idxs = self.live_in_set_order();
        self.clear_slots(&idxs);
        self.ready.clear();
    }

    fn owned(&self, owner: OwnerId) -> Vec<u32> {
        let mut idxs = self.owners.get(&owner).cloned().unwrap_or_default();
        self.sort_by_seq(&mut idxs);
        idxs
    }

    fn sort_by_seq(&self, idxs: &mut [u32]) {
        idxs.sort_unstable_by_key(|&i| self.slots.at(i).seq);
    }

    /// Every live timer's slot, in set order.
    pub(crate) fn live_in_set_order(&self) -> Vec<u32> {
        let mut idxs: Vec<u32> = (0..self.slots.entries.len() as u32)
            .filter(|&i| self.slots.at(i).state != State::Free)
            .collect();
        self.sort_by_seq(&mut idxs);
        idxs
    }

    /// Pauses a timer, keeping its remaining time exactly. Returns `true` if this call paused
    /// it (`false`: unknown handle, or already paused). A timer pausing itself from its
    /// callback pauses when the call returns, keeping the time to its next period.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<()>::new();
    /// let h = timers.after(secs(1.0)).call(|_, _| {});
    /// timers.tick(secs(0.25), &mut ());
    /// assert!(timers.pause(h));
    /// timers.tick(secs(5.0), &mut ());
    /// assert_eq!(timers.remaining(h), Some(secs(0.75)));
    /// assert!(timers.unpause(h));
    /// timers.tick(secs(0.75), &mut ());
    /// assert!(!timers.exists(h)); // fired
    /// ```
    pub fn pause(&mut self, h: TimerHandle) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        let e = self.slots.at(idx);
        let now = self.span.now[e.flags.domain().index()];
        let remaining = match e.state {
            State::Active if e.due == NEVER => NEVER,
            State::Active => e.due - now,
            State::Ready => 0,
            State::Pending => e.due,
            State::Executing => {
                self.slots.at_mut(idx).state = State::ExecutingPaused;
                return true;
            }
            State::Paused | State::ExecutingPaused | State::Free => return false,
        };
        self.unschedule(idx);
        let e = self.slots.at_mut(idx);
        e.state = State::Paused;
        e.due = remaining;
        true
    }

    /// Resumes a paused timer from its remaining time (following the pending rule in an open
    /// frame). Returns `true` if this call resumed it.
    pub fn unpause(&mut self, h: TimerHandle) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        match self.slots.at(idx).state {
            State::Paused => {
                let remaining = self.slots.at(idx).due;
                self.schedule(idx, remaining, Base::Now);
                true
            }
            State::ExecutingPaused => {
                self.slots.at_mut(idx).state = State::Executing;
                true
            }
            _ => false,
        }
    }

    /// Pauses every timer of `owner`; returns how many this call paused.
    pub fn pause_owner(&mut self, owner: OwnerId) -> usize {
        let idxs = self.owned(owner);
        idxs.into_iter()
            .filter(|&i| self.pause(self.handle_of(i)))
            .count()
    }

    /// Resumes every paused timer of `owner`; returns how many this call resumed.
    pub fn unpause_owner(&mut self, owner: OwnerId) -> usize {
        let idxs = self.owned(owner);
        idxs.into_iter()
            .filter(|&i| self.unpause(self.handle_of(i)))
            .count()
    }
}
