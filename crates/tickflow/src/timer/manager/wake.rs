//! Wake timers: the timer module's facility for whoever drives futures on a manager (the
//! scheduler's task executor), so that a task's delay is an ordinary timer in the wheel,
//! ordered, paused and budgeted with the others, without reaching into the manager.
//!
//! Ground rules:
//!
//! - A wake timer wakes instead of calling game code: either it records its handle, for its
//!   driver to collect with [`take_woken`](Timers::take_woken) and map to a task (its
//!   callback captures nothing, so storing it allocates nothing), or it wakes a `Waker`.
//! - A reusable wake timer stays after it fires: [`move_wake`](Timers::move_wake) gives
//!   it its next due time, or parks it, so a task that sleeps over and over keeps one timer.
//! - Wake timers belong to their driver, whose futures cannot be saved: snapshots leave them
//!   out, as if their tasks had been cancelled (their slots are saved as free), and
//!   restored managers have none.

use std::task::Waker;

use crate::time::Domain;
use crate::timer::call::TimerCx;
use crate::timer::callback::Callback;
use crate::timer::info::TimerHandle;
use crate::timer::manager::Timers;
use crate::timer::slot::{SlotState, NEVER};
use crate::timer::spec::Spec;

/// Whom a wake timer wakes when it fires.
pub(crate) enum WakeTarget {
    /// Records its handle for [`take_woken`](Timers::take_woken).
    Record,
    /// Wakes this waker.
    Waker(Waker),
}

/// A recording wake timer's callback: captures nothing, so its box allocates nothing.
fn record<C: 'static>(_: &mut C, cx: &mut TimerCx<'_, C>) {
    let h = cx.handle();
    cx.timers().woken.push(h);
}

impl<C: 'static> Timers<C> {
    /// A one-shot wake timer due at `due` on `domain`'s clock, its countdown started at
    /// `start` (at most `due`; chained delays start from the previous one's due time, so they
    /// do not drift). On [`Domain::Frames`], `due` is a frame number and `start` is unused.
    pub(crate) fn wake_at(
        &mut self,
        domain: Domain,
        start: u64,
        due: u64,
        target: WakeTarget,
    ) -> TimerHandle {
        let spec = match domain {
            Domain::Frames => {
                Spec::one_shot(domain, due.saturating_sub(self.span.now_of(Domain::Frames)))
            }
            d => {
                let start = start.min(due);
                Spec {
                    start: Some(start),
                    ..Spec::one_shot(d, due - start)
                }
            }
        };
        let h = match target {
            WakeTarget::Record => self.insert(spec, Callback::new(record::<C>)),
            WakeTarget::Waker(w) => self.insert(spec, Callback::new(move |_, _| w.wake_by_ref())),
        };
        self.slots.at_mut(h.index()).flags_mut().set_wake();
        h
    }

    /// A reusable, recording wake timer on the game clock, parked until
    /// [`move_wake`](Self::move_wake) gives it a due time.
    pub(crate) fn reusable_wake(&mut self) -> TimerHandle {
        // A period of `NEVER` sets it never due (its due time saturates there), and being
        // looping, it stays after it fires.
        let h = self.insert(
            Spec::looping(Domain::Game, NEVER),
            Callback::new(record::<C>),
        );
        self.slots.at_mut(h.index()).flags_mut().set_wake();
        h
    }

    /// Moves a wake timer to due time `due` (`None`: parked, never due). `false` when the
    /// handle is stale, is not a wake timer, or its timer is paused, pending or firing.
    pub(crate) fn move_wake(&mut self, h: TimerHandle, due: Option<u64>) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        let e = self.slots.at(idx);
        if !e.flags().wake() || !matches!(e.state(), SlotState::Active | SlotState::Ready) {
            return false;
        }
        self.unschedule(idx);
        self.place(idx, due.unwrap_or(NEVER));
        true
    }

    /// Hands the handles of the recording wake timers that fired since the last call to `f`,
    /// in the order they fired.
    pub(crate) fn take_woken(&mut self, mut f: impl FnMut(TimerHandle)) {
        for h in self.woken.drain(..) {
            f(h);
        }
    }

    /// `true` when recording wake timers fired since the last [`take_woken`](Self::take_woken).
    pub(crate) fn has_woken(&self) -> bool {
        !self.woken.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::secs;
    use crate::timer::standalone::TimerManager;

    fn woken(tm: &mut TimerManager<u32>) -> Vec<TimerHandle> {
        let mut out = Vec::new();
        tm.take_woken(|h| out.push(h));
        out
    }

    #[test]
    fn a_reusable_wake_timer_stays_parked_until_moved_and_after_it_fires() {
        let mut tm = TimerManager::<u32>::new();
        let h = tm.reusable_wake();
        tm.tick(secs(10.0), &mut 0);
        assert!(woken(&mut tm).is_empty(), "parked: never due");
        assert!(tm.move_wake(h, Some(secs(10.5).flicks())));
        tm.tick(secs(0.25), &mut 0);
        assert!(!tm.has_woken());
        tm.tick(secs(0.25), &mut 0);
        assert_eq!(woken(&mut tm), [h]);
        assert!(tm.exists(h), "it stays for the next delay");
        assert!(tm.move_wake(h, None));
        tm.tick(secs(100.0), &mut 0);
        assert!(woken(&mut tm).is_empty());
    }

    #[test]
    fn one_shot_wake_timers_record_in_firing_order_or_wake_their_waker() {
        let mut tm = TimerManager::<u32>::new();
        let late = tm.wake_at(Domain::Game, 0, secs(0.2).flicks(), WakeTarget::Record);
        let early = tm.wake_at(Domain::Game, 0, secs(0.1).flicks(), WakeTarget::Record);
        let frame = tm.wake_at(Domain::Frames, 0, 1, WakeTarget::Record);
        let woke = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let waker = Waker::from(std::sync::Arc::new(Flag(woke.clone())));
        tm.wake_at(
            Domain::Real,
            0,
            secs(0.3).flicks(),
            WakeTarget::Waker(waker),
        );
        tm.tick(secs(0.2), &mut 0);
        assert_eq!(woken(&mut tm), [early, late, frame]);
        assert!(!tm.exists(late), "one-shots end");
        tm.tick(secs(0.1), &mut 0);
        assert!(woke.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn only_wake_timers_move_and_snapshots_leave_them_out() {
        let mut tm = TimerManager::<u32>::new();
        let plain = tm.after(secs(1.0)).call(|_, _| {});
        assert!(!tm.move_wake(plain, Some(0)), "not a wake timer");
        let wake = tm.reusable_wake();
        assert!(!tm.move_wake(TimerHandle::default(), None));
        let snap = tm.snapshot();
        assert_eq!(snap.len(), 1, "the wake timer is not saved");
        let back = TimerManager::<u32>::restore(
            &snap,
            &mut crate::snapshot::Registry::new().other_timers(|_| Some(Box::new(|_, _| {}))),
        )
        .unwrap();
        assert!(back.exists(plain) && !back.exists(wake));
    }

    struct Flag(std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl std::task::Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}
