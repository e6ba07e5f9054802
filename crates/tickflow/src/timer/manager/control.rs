//! [`Timers`] control: clearing and pausing timers, one at a time, by owner, by name or
//! all. Removal never calls user code (beyond dropping the closure): `on_cancel` hooks are
//! queued for the start of the next tick.

use super::extras::Extras;
use super::Base;
use crate::owner::OwnerId;
use crate::time::Span;
use crate::timer::info::TimerHandle;
use crate::timer::manager::Timers;
use crate::timer::slot::{SlotState, NEVER};

impl<C: 'static> Timers<C> {
    /// Whether the timer's callback is running (in a tick or through `fire_now`).
    fn is_running(&self, idx: u32) -> bool {
        !self.slots.at(idx).has_callback()
    }

    /// Whether a timer still has calls to make, so that removing it cancels it.
    #[inline]
    fn has_more_calls(&self, idx: u32) -> bool {
        !self.is_running(idx) || !self.on_last_call(idx)
    }

    /// Whether the call a timer is making (or would make next) is its last by its schedule:
    /// a one-shot, or the last of `times(n)`.
    pub(crate) fn on_last_call(&self, idx: u32) -> bool {
        let looping = self.slots.at(idx).flags().looping();
        !looping || self.extras_of(idx).and_then(Extras::times_left) == Some(1)
    }

    /// Clears a timer. Returns `false` for an unknown or stale handle.
    ///
    /// A timer cleared before it finished has its `on_cancel` hook queued for the start of the
    /// next tick. A timer clearing itself from its callback drops the rest of its burst.
    #[inline]
    pub fn clear(&mut self, h: TimerHandle) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        // One timer: a panicking destructor reaches the caller with the slot already freed.
        self.clear_slot(idx);
        true
    }

    /// Removes a timer; one that still had calls to make is cancelled.
    fn clear_slot(&mut self, idx: u32) {
        let cancelled = self.has_more_calls(idx);
        self.remove(idx, cancelled);
    }

    /// Removes these timers in this order.
    fn clear_slots(&mut self, idxs: &[u32]) -> usize {
        // One closure's panicking destructor does not keep the others.
        crate::unwind::each_then_raise(idxs, |&idx| {
            self.clear_slot(idx);
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
        let mut idxs = self.owners.get(owner).to_vec();
        self.sort_by_seq(&mut idxs);
        idxs
    }

    fn sort_by_seq(&self, idxs: &mut [u32]) {
        idxs.sort_unstable_by_key(|&i| self.slots.at(i).seq());
    }

    /// Every live timer's slot, in set order.
    pub(crate) fn live_in_set_order(&self) -> Vec<u32> {
        let mut idxs: Vec<u32> = (0..self.slots.len() as u32)
            .filter(|&i| self.slots.at(i).state() != SlotState::Free)
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
        let now = self.span.now_of(e.flags().domain());
        let remaining = match e.state() {
            SlotState::Active if e.due() == NEVER => NEVER,
            SlotState::Active => e.due() - now,
            SlotState::Ready => 0,
            SlotState::Pending => e.due(),
            SlotState::Executing => {
                self.slots.at_mut(idx).set_executing(true);
                return true;
            }
            SlotState::Paused | SlotState::ExecutingPaused | SlotState::Free => return false,
        };
        self.unschedule(idx);
        self.slots.at_mut(idx).wait(SlotState::Paused, remaining);
        self.touch(idx);
        true
    }

    /// Resumes a paused timer from its remaining time (following the pending rule in an open
    /// frame). Returns `true` if this call resumed it.
    pub fn unpause(&mut self, h: TimerHandle) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        match self.slots.at(idx).state() {
            SlotState::Paused => {
                let remaining = self.slots.at(idx).due();
                self.schedule(idx, remaining, Base::Now);
                self.touch(idx);
                true
            }
            SlotState::ExecutingPaused => {
                self.slots.at_mut(idx).set_executing(false);
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

    /// Starts the countdown in progress over, from now: the next call comes one rate from now
    /// (a timer not called yet: its first delay from now), as if set now (so, in an open frame,
    /// from this frame's timer tick). Its callback, calls made and settings stay; a paused
    /// timer stays paused with the whole countdown left. Bevy's `Timer::reset`.
    ///
    /// Returns `false` for an unknown handle, or a timer whose callback is running (its call
    /// decides when it is due next as it returns).
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<u32>::new();
    /// let shield = timers.after(secs(1.0)).call(|n, _| *n += 1);
    /// let mut n = 0;
    /// timers.tick(secs(0.75), &mut n);
    /// assert!(timers.restart(shield)); // hit again: the shield lasts a full second more
    /// timers.tick(secs(0.75), &mut n);
    /// assert_eq!((n, timers.remaining(shield)), (0, Some(secs(0.25))));
    /// ```
    pub fn restart(&mut self, h: TimerHandle) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        let len = self.countdown_len(idx);
        self.touch(idx);
        match self.slots.at(idx).state() {
            SlotState::Pending | SlotState::Paused => self.slots.at_mut(idx).set_left(len),
            SlotState::Active | SlotState::Ready => {
                self.unschedule(idx);
                self.schedule(idx, len, Base::Now);
            }
            SlotState::Executing | SlotState::ExecutingPaused | SlotState::Free => return false,
        }
        true
    }

    /// Sets the time left of the countdown in progress: the next call comes `left` from now
    /// (on the timer's clock; frames for a frame timer), and the countdown's length stays (a
    /// looping timer's next period is its rate again). "Cut the cooldown by half a second" is
    /// `set_remaining(h, remaining - 0.5 s)`. More time left than the countdown's length reads
    /// as nothing elapsed yet. Returns `false` for an unknown handle, or a timer whose callback
    /// is running.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<u32>::new();
    /// let cooldown = timers.every(secs(2.0)).call(|n, _| *n += 1);
    /// timers.tick(secs(0.5), &mut 0);
    /// let left = timers.remaining(cooldown).unwrap();
    /// assert!(timers.set_remaining(cooldown, left - secs(0.5)));
    /// assert_eq!(timers.remaining(cooldown), Some(secs(1.0)));
    /// assert_eq!(timers.elapsed(cooldown), Some(secs(1.0)));
    /// let mut n = 0;
    /// timers.tick(secs(1.0), &mut n);
    /// assert_eq!((n, timers.remaining(cooldown)), (1, Some(secs(2.0))));
    /// ```
    pub fn set_remaining(&mut self, h: TimerHandle, left: Span) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        let left = left.flicks().min(NEVER - 1);
        match self.slots.at(idx).state() {
            SlotState::Pending | SlotState::Paused => self.slots.at_mut(idx).set_left(left),
            SlotState::Active | SlotState::Ready => {
                self.unschedule(idx);
                self.schedule(idx, left, Base::Now);
            }
            SlotState::Executing | SlotState::ExecutingPaused | SlotState::Free => return false,
        }
        self.touch(idx);
        true
    }

    /// Sets how much of the countdown in progress has elapsed (Bevy's `Timer::set_elapsed`):
    /// [`set_remaining`](Self::set_remaining) with its length less `elapsed` (zero left when
    /// `elapsed` is the length or more). Returns `false` as `set_remaining` does.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<()>::new();
    /// let charge = timers.after(secs(4.0)).call(|_, _| {});
    /// assert!(timers.set_elapsed(charge, secs(3.0)));
    /// assert_eq!(timers.fraction(charge), Some(0.75));
    /// ```
    pub fn set_elapsed(&mut self, h: TimerHandle, elapsed: Span) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        let len = self.countdown_len(idx);
        self.set_remaining(h, Span::from_flicks(len.saturating_sub(elapsed.flicks())))
    }

    /// Gives the timer a new [tag](crate::timer::TimerBuilder::tag) (what a restore binds it
    /// by): a timer whose key changed since it was set, such as one bound again after a
    /// restart to an entity spawned anew. A durable timer's row takes the new tag at the next
    /// commit. `false` for an unknown or stale handle.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<()>::new();
    /// let t = timers.after(secs(1.0)).tag(7).call(|_, _| {});
    /// assert!(timers.set_tag(t, 9));
    /// assert_eq!(timers.info_of(t).unwrap().tag, Some(9));
    /// ```
    pub fn set_tag(&mut self, h: TimerHandle, tag: u64) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        self.touch(idx);
        self.tag_new(idx, tag);
        true
    }

    /// Changes a timer's rate: its period, or a one-shot's delay. The countdown in progress
    /// keeps the time it has run and ends at the new length (a cooldown cut by a fifth ends a
    /// fifth sooner; one that has already run longer is due in the next tick); a first delay in
    /// progress is left as it is, and the new rate takes over after it. From the timer's own
    /// callback, the next period is the new one. Returns `false` for an unknown handle.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<()>::new();
    /// let cooldown = timers.every(secs(10.0)).call(|_, _| {});
    /// timers.tick(secs(4.0), &mut ());
    /// assert!(timers.set_rate(cooldown, secs(8.0))); // a 20 % cooldown reduction
    /// assert_eq!(timers.remaining(cooldown), Some(secs(4.0)));
    /// assert_eq!(timers.rate(cooldown), Some(secs(8.0)));
    /// ```
    pub fn set_rate(&mut self, h: TimerHandle, rate: Span) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        let rate = rate.flicks();
        self.touch(idx);
        let in_first_delay = self.calls_at(idx) == 0
            && self
                .extras_of(idx)
                .is_some_and(|x| x.first_delay().is_some());
        let elapsed = self.elapsed_at(idx);
        self.slots.at_mut(idx).set_period(rate);
        if in_first_delay {
            return true;
        }
        let left = rate.saturating_sub(elapsed);
        match self.slots.at(idx).state() {
            SlotState::Pending | SlotState::Paused => self.slots.at_mut(idx).set_left(left),
            SlotState::Active | SlotState::Ready => {
                let e = self.slots.at(idx);
                if e.due() != NEVER {
                    let now = self.span.now_of(e.flags().domain());
                    self.unschedule(idx);
                    self.place(idx, now.saturating_add(left).min(NEVER - 1));
                }
            }
            // The running call schedules the next one from the new period.
            SlotState::Executing | SlotState::ExecutingPaused | SlotState::Free => {}
        }
        true
    }
}
