//! Advancing the clocks and making the calls: the timer stage, and `fire_now`.

use std::panic::{self, AssertUnwindSafe};

use super::extras::Extras;
use crate::time::CatchUp;
use crate::time::{Clocks, Domain};
use crate::timer::call::TimerCx;
use crate::timer::callback::Callback;
use crate::timer::info::TimerHandle;
use crate::timer::manager::Timers;
use crate::timer::ready::Call;
use crate::timer::slot::{SlotState, NEVER, PREFETCH_AHEAD};

use crate::unwind::Payload;

impl<C: 'static> Timers<C> {
    pub(crate) fn open_frame(&mut self) {
        self.frame_open = true;
    }

    /// The timer stage: moves the clocks to `to` (the frame's) and makes the due calls, with
    /// `after_call` after each (the scheduler applies its queued commands there, so that a
    /// callback's commands, such as removing an owner, take effect before the next call).
    pub(crate) fn run_tick(
        &mut self,
        to: &Clocks,
        ctx: &mut C,
        after_call: &mut dyn FnMut(&mut Self),
    ) -> usize {
        assert!(!self.in_tick, "the timer stage ran inside a timer callback");
        self.in_tick = true;
        if let Err(p) = self.run_cancel_hooks(ctx) {
            self.in_tick = false;
            panic::resume_unwind(p);
        }
        self.advance_clocks(to);
        self.processing = true;
        let mut calls = 0;
        let result = loop {
            if self.budget.is_some_and(|b| calls >= b) {
                break Ok(());
            }
            let Some(call) = self.ready.pop(&self.span) else {
                break Ok(());
            };
            if let Some(idx) = self.ready.ahead(call.domain().index(), PREFETCH_AHEAD) {
                self.slots.prefetch(idx);
            }
            if call.current(&self.slots).is_none() {
                continue;
            }
            calls += 1;
            if let Err(p) = self.fire(call, ctx) {
                break Err(p);
            }
            if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| after_call(self))) {
                break Err(p);
            }
        };
        self.processing = false;
        self.in_tick = false;
        if let Err(p) = result {
            panic::resume_unwind(p);
        }
        calls
    }

    /// The scheduler's frame was aborted by a panic: if this frame's timer tick had not run,
    /// the clocks still move by the frame's deltas (so every part agrees on the time) and the
    /// frame is closed, so timers set from now on count from the time reached. Calls that came
    /// due are made first in the next tick; no user code runs here.
    pub(crate) fn abort_frame(&mut self, to: &Clocks) {
        if self.frame_open {
            self.advance_clocks(to);
        }
    }

    fn run_cancel_hooks(&mut self, ctx: &mut C) -> Result<(), Payload> {
        while let Some(hook) = self.cancelled.pop_front() {
            panic::catch_unwind(AssertUnwindSafe(|| hook(ctx)))?;
        }
        Ok(())
    }

    /// Moves the clocks to `to` (each stops one flick short of NEVER, so that "never" stays
    /// never) and collects everything that became due into the ready queue.
    fn advance_clocks(&mut self, to: &Clocks) {
        (self.span).advance(
            to.raw().map(|t| t.min(NEVER - 1)),
            to.frame().min(NEVER - 1),
        );
        self.frame_open = false;
        self.ready.admit_deferred();
        let tick = self.span.frame() as u32;
        for d in 0..3 {
            let (wheel, ready) = (&mut self.wheels[d], &mut self.ready);
            wheel.advance(&mut self.slots, self.span.now()[d], |slots, idx, due| {
                let e = slots.at(idx);
                // Stale records (lazy removal, `wheel/mod.rs`) fail this check; so does a second
                // record of the same timer and due, since `Call::make` marks it `Ready`.
                if e.due() == due && e.waits_in(d, due as u32) {
                    ready.collect(Call::make(slots, idx, 0, tick));
                }
            });
            self.ready.seal(d);
        }
        // Pending timers start counting at the time this tick reached.
        let mut pending = std::mem::take(&mut self.pending);
        for &idx in &pending {
            let e = self.slots.at(idx);
            if e.state() != SlotState::Pending {
                continue; // cleared, paused, or a duplicate record of a re-pended timer
            }
            let (delay, d) = (e.due(), e.flags().domain().index());
            let start = self.span.now()[d];
            self.place(idx, start.checked_add(delay).unwrap_or(NEVER));
            self.touch(idx); // its countdown started: a durable row's delay becomes a due time
        }
        pending.clear();
        self.pending = pending; // keep the buffer
    }

    /// Calls this timer gets in this tick from `due` on, this one included.
    fn calls_due_from(&self, idx: u32, due: u64, now: u64) -> u64 {
        let e = self.slots.at(idx);
        let due_now =
            if e.flags().looping() && e.flags().catch_up() == CatchUp::Burst && e.period() > 0 {
                (now - due) / e.period() + 1
            } else {
                1
            };
        match self.extras_of(idx).and_then(Extras::times_left) {
            Some(left) => due_now.min(left),
            None => due_now,
        }
    }

    /// Makes one call from the ready queue and reschedules its timer.
    fn fire(&mut self, call: Call, ctx: &mut C) -> Result<(), Payload> {
        let idx = call.idx();
        let domain = call.domain();
        let now = self.span.now_of(domain);
        self.slots.at_mut(idx).set_executing(false);
        let burst = call.burst_in(self.span.frame());
        let mut calls_this_tick = u64::from(burst) + self.calls_due_from(idx, call.due(), now);
        if self.owed > 0 {
            calls_this_tick += self.extras_of(idx).map_or(0, Extras::owed);
        }
        let calls_this_tick = calls_this_tick.min(self.catch_up_cap);
        self.run_callback(idx, ctx, domain, call.due(), calls_this_tick, |m, cb| {
            m.after_tick_call(idx, call.gen(), cb, call.due(), burst)
        })
    }

    /// Runs a timer's callback with a [`TimerCx`], then hands the callback to `after` (also
    /// when the callback panicked, so the manager stays consistent).
    fn run_callback(
        &mut self,
        idx: u32,
        ctx: &mut C,
        domain: Domain,
        scheduled: u64,
        calls_this_tick: u64,
        after: impl FnOnce(&mut Self, Callback<C>),
    ) -> Result<(), Payload> {
        let mut cb = (self.slots.at_mut(idx))
            .take_callback()
            .expect("a timer that is not running has its callback");
        let handle = self.handle_of(idx);
        let call_index = self.calls_at(idx);
        let outer = self.firing.replace((domain, scheduled));
        let now = self.span.now_of(domain);
        let result = {
            let clocks = self.clocks();
            let mut cx = TimerCx::timer(
                &clocks,
                self,
                handle,
                now,
                scheduled,
                call_index,
                calls_this_tick,
            );
            panic::catch_unwind(AssertUnwindSafe(|| cb.call(ctx, &mut cx)))
        };
        self.firing = outer;
        // `after` may drop the closure (a last call, or a timer that cleared itself): a
        // destructor that panics reaches the caller like a panicking call, never a later tick.
        let dropped = panic::catch_unwind(AssertUnwindSafe(|| after(self, cb)));
        result.and(dropped)
    }

    /// Counts a call; returns `true` if that was the timer's last one.
    fn count_call(&mut self, idx: u32) -> bool {
        let e = self.slots.at_mut(idx);
        let looping = e.flags().looping();
        let wrapped = e.count_call();
        if wrapped {
            let x = self.extras_mut(idx);
            x.calls_hi = x.calls_hi.saturating_add(1);
        }
        let mut done = !looping;
        if self.slots.at(idx).flags().has_extras() {
            // Durable timers have side-table data: plain ones pay nothing for the journal.
            self.touch(idx);
            let rare = self.extras_mut(idx).rare.as_deref_mut();
            if let Some(left) = rare.and_then(|r| r.times_left.as_mut()) {
                *left = left.saturating_sub(1);
                done |= *left == 0;
            }
        }
        done
    }

    fn after_tick_call(&mut self, idx: u32, gen: u32, cb: Callback<C>, due: u64, burst: u32) {
        if self.slots.get(idx, gen).is_none() {
            return; // cleared (or cleared and re-set) by its own callback
        }
        if self.count_call(idx) {
            self.remove(idx, false);
            return;
        }
        self.slots.at_mut(idx).put_callback(cb);
        if self.owed > 0 && self.take_owed(idx, burst) {
            // A call owed from before the clock's start: again, at the same due time.
            let call = self.make_ready(idx, burst.saturating_add(1));
            self.ready.push(call);
            return;
        }
        let e = self.slots.at(idx);
        let now = self.span.now_of(e.flags().domain());
        let period = e.period();
        let on_grid = due.checked_add(period).unwrap_or(NEVER);
        let next = if period == 0 {
            now // once every tick: due again, but not in this one
        } else if on_grid > now {
            on_grid
        } else {
            let next_ahead = || {
                due.checked_add(period.saturating_mul((now - due) / period + 1))
                    .unwrap_or(NEVER)
            };
            match e.flags().catch_up() {
                CatchUp::Burst if u64::from(burst) + 1 < self.catch_up_cap => on_grid,
                CatchUp::Burst => {
                    // The cap: the periods still due in this tick are dropped onto the grid.
                    self.dropped = self.dropped.saturating_add((now - on_grid) / period + 1);
                    next_ahead()
                }
                CatchUp::Once => next_ahead(),
                CatchUp::Delay => now.checked_add(period).unwrap_or(NEVER),
            }
        };
        if e.state() == SlotState::ExecutingPaused {
            let left = if next == NEVER {
                NEVER
            } else {
                next.saturating_sub(now)
            };
            self.slots.at_mut(idx).wait(SlotState::Paused, left);
        } else if period > 0 && next <= now {
            self.slots.at_mut(idx).set_due(next); // due again in this tick: made ready below
            let call = self.make_ready(idx, burst.saturating_add(1));
            self.ready.push(call);
        } else {
            self.place(idx, next);
        }
    }

    /// Takes one call owed by the timer in `idx` (see `Extras::owed`), unless the catch-up
    /// cap is reached, which drops the rest of them.
    #[inline(never)]
    fn take_owed(&mut self, idx: u32, burst: u32) -> bool {
        if !self.slots.at(idx).flags().has_extras()
            || self.slots.at(idx).state() == SlotState::ExecutingPaused
        {
            return false;
        }
        let cap = self.catch_up_cap;
        let Some(x) = self.extras_mut(idx).rare.as_deref_mut() else {
            return false;
        };
        let owed = x.owed;
        if owed == 0 {
            return false;
        }
        if u64::from(burst) + 1 < cap {
            x.owed -= 1;
            self.owed -= 1;
            return true;
        }
        x.owed = 0;
        self.owed -= owed;
        self.dropped = self.dropped.saturating_add(owed);
        false
    }

    /// Calls a timer now, outside its schedule. It counts as a call (a one-shot, or a timer
    /// on its last `times(n)` call, is then finished); a looping timer keeps its schedule.
    /// Returns `false` for an unknown handle or a timer whose callback is already running.
    ///
    /// # Panics
    ///
    /// A panic in the callback reaches the caller after the manager is made consistent.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<u32>::new();
    /// let h = timers.every(secs(1.0)).call(|n, _| *n += 1);
    /// let mut n = 0;
    /// assert!(timers.fire_now(h, &mut n));
    /// assert_eq!((n, timers.calls_made(h), timers.remaining(h)), (1, Some(1), Some(secs(1.0))));
    /// ```
    pub fn fire_now(&mut self, h: TimerHandle, ctx: &mut C) -> bool {
        let Some(idx) = self.find(h) else {
            return false;
        };
        if !self.slots.at(idx).has_callback() {
            return false;
        }
        let domain = self.slots.at(idx).flags().domain();
        let now = self.span.now_of(domain);
        let gen = h.tag().get();
        let result = self.run_callback(idx, ctx, domain, now, 1, |m, cb| {
            if m.slots.get(idx, gen).is_none() {
                return;
            }
            if m.count_call(idx) {
                m.remove(idx, false);
            } else {
                m.slots.at_mut(idx).put_callback(cb);
            }
        });
        if let Err(p) = result {
            panic::resume_unwind(p);
        }
        true
    }
}
