//! [`TimerCx`]: what a running timer callback can see and do.

use std::fmt;

use super::{TimerHandle, Timers};
use crate::commands::Commands;
use crate::time::{Clocks, Span, Time};

/// The context of one timer call: which timer, when it was due, how late it is, how many calls
/// its timer gets in this tick, and full access to the manager.
///
/// Times are on the timer's own clock (frame numbers for a [`Domain::Frames`](crate::time::Domain)
/// timer).
///
/// # Examples
///
/// A looping timer that stops itself after its third call, and sees a burst:
///
/// ```
/// use tickflow::time::secs;
/// use tickflow::timer::TimerManager;
///
/// let mut timers = TimerManager::<Vec<(u64, u64)>>::new();
/// timers.every(secs(0.1)).call(|log, cx| {
///     log.push((cx.call_index(), cx.calls_this_tick()));
///     if cx.call_index() == 2 {
///         cx.clear_self(); // the rest of this burst is dropped
///     }
/// });
/// let mut log = vec![];
/// timers.tick(secs(0.45), &mut log); // four periods due
/// assert_eq!(log, [(0, 4), (1, 4), (2, 4)]);
/// assert!(timers.is_empty());
/// ```
pub struct TimerCx<'a, C> {
    mgr: &'a mut Timers<C>,
    handle: TimerHandle,
    now: u64,
    scheduled: u64,
    call_index: u64,
    calls_this_tick: u64,
}

impl<'a, C: 'static> TimerCx<'a, C> {
    pub(crate) fn new(
        mgr: &'a mut Timers<C>,
        handle: TimerHandle,
        now: u64,
        scheduled: u64,
        call_index: u64,
        calls_this_tick: u64,
    ) -> Self {
        TimerCx {
            mgr,
            handle,
            now,
            scheduled,
            call_index,
            calls_this_tick,
        }
    }

    /// The scheduler's [`Commands`]: tick functions, tickables, latent actions, tasks and
    /// owners, changed when this timer stage ends. A standalone
    /// [`TimerManager`](super::TimerManager) has no scheduler: its commands do nothing.
    pub fn commands(&self) -> &Commands<C> {
        self.mgr.commands()
    }

    /// The running timer's handle.
    pub fn handle(&self) -> TimerHandle {
        self.handle
    }

    /// The time the tick reached on this timer's clock.
    pub fn now(&self) -> Time {
        Time::from_flicks(self.now)
    }

    /// The time this call was due (for [`fire_now`](Timers::fire_now): now).
    pub fn scheduled(&self) -> Time {
        Time::from_flicks(self.scheduled)
    }

    /// Every clock of the manager, and how far each moved in this tick (see [`Clocks`]).
    pub fn clocks(&self) -> Clocks {
        self.mgr.clocks()
    }

    /// How late this call runs: `now - scheduled`.
    pub fn lateness(&self) -> Span {
        self.now() - self.scheduled()
    }

    /// 0 for the first call of this timer, then 1, 2, ...
    pub fn call_index(&self) -> u64 {
        self.call_index
    }

    /// The calls this timer gets in this tick, this one and earlier ones of the same burst
    /// included (1 unless a [`CatchUp::Burst`](super::CatchUp::Burst) timer is late).
    pub fn calls_this_tick(&self) -> u64 {
        self.calls_this_tick
    }

    /// The tag given with [`TimerBuilder::tag`](super::TimerBuilder::tag), if any: a callback
    /// shared by many timers finds its own data with it (an entity, a slot in a table)
    /// without capturing it, which keeps the callback allocation-free.
    pub fn tag(&self) -> Option<u64> {
        self.mgr
            .find(self.handle)
            .and_then(|idx| self.mgr.tag_of(idx))
    }

    /// `true` when the timer makes no call after this one by its schedule: a one-shot, or
    /// the last of [`times(n)`](super::TimerBuilder::times) (also when the callback has
    /// cleared it already).
    pub fn is_last_call(&self) -> bool {
        let Some(idx) = self.mgr.find(self.handle) else {
            return true;
        };
        let looping = self.mgr.slots.at(idx).flags.looping();
        let times_left = self.mgr.extras_of(idx).and_then(|x| x.times_left);
        !looping || times_left == Some(1)
    }

    /// The manager: set, clear, pause or query any timer. Timers set here count from this
    /// call's scheduled time (on the same clock) and never fire in the current tick.
    pub fn timers(&mut self) -> &mut Timers<C> {
        self.mgr
    }

    /// Clears the running timer: no further calls, the rest of a burst included.
    pub fn clear_self(&mut self) {
        self.mgr.clear(self.handle);
    }
}

impl<C> fmt::Debug for TimerCx<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerCx")
            .field("handle", &self.handle)
            .field("now", &Time::from_flicks(self.now))
            .field("scheduled", &Time::from_flicks(self.scheduled))
            .field("call_index", &self.call_index)
            .field("calls_this_tick", &self.calls_this_tick)
            .finish()
    }
}
