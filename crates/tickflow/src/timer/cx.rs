//! What a timer callback's [`Cx`] can tell and do: which timer, when it was due, its call in a
//! burst, its tag, owner and payload, and clearing itself. (The kind and the alias are in
//! `call.rs`, which the stored callback names without naming the manager.)

use crate::owner::OwnerId;

use crate::timer::info::TimerHandle;

use crate::cx::Cx;
use crate::time::{Clocks, Span, Time};
use crate::timer::call::TimerCall;
use crate::timer::manager::Timers;

impl<'a, C: 'static> Cx<'a, C, TimerCall> {
    /// The context of one call; `clocks` are `mgr`'s.
    pub(crate) fn timer(
        clocks: &'a Clocks,
        mgr: &'a mut Timers<C>,
        handle: TimerHandle,
        now: u64,
        scheduled: u64,
        call_index: u64,
        calls_this_tick: u64,
    ) -> Self {
        let call = TimerCall::new(handle, now, scheduled, call_index, calls_this_tick);
        Cx::new(clocks, mgr, call)
    }

    /// The running timer's handle.
    pub fn handle(&self) -> TimerHandle {
        self.kind().handle()
    }

    /// The time the tick reached on this timer's clock.
    pub fn now(&self) -> Time {
        Time::from_flicks(self.kind().now())
    }

    /// The time this call was due (for [`fire_now`](Timers::fire_now): now).
    pub fn scheduled(&self) -> Time {
        Time::from_flicks(self.kind().scheduled())
    }

    /// How late this call runs: `now - scheduled`.
    pub fn lateness(&self) -> Span {
        self.now() - self.scheduled()
    }

    /// 0 for the first call of this timer, then 1, 2, ...
    pub fn call_index(&self) -> u64 {
        self.kind().call_index()
    }

    /// The calls this timer gets in this tick, this one and earlier ones of the same burst
    /// included (1 unless a [`CatchUp::Burst`](crate::time::CatchUp::Burst) timer is late).
    pub fn calls_this_tick(&self) -> u64 {
        self.kind().calls_this_tick()
    }

    /// The tag given with [`TimerBuilder::tag`](super::TimerBuilder::tag), if any: a callback
    /// shared by many timers finds its own data with it (an entity, a slot in a table)
    /// without capturing it, which keeps the callback allocation-free.
    pub fn tag(&self) -> Option<u64> {
        let mgr = self.timers_ref();
        mgr.find(self.kind().handle())
            .and_then(|idx| mgr.tag_of(idx))
    }

    /// The owner given with [`TimerBuilder::owner`](super::TimerBuilder::owner), if any: a
    /// callback shared by the timers of many entities finds whose call this is.
    ///
    /// ```
    /// # use tickflow::prelude::*;
    /// let mut timers = TimerManager::<Vec<OwnerId>>::new();
    /// for id in [3, 5] {
    ///     timers.after(secs(1.0)).owner(OwnerId::from(id)).call(|seen, cx| {
    ///         seen.extend(cx.owner());
    ///     });
    /// }
    /// let mut seen = Vec::new();
    /// timers.tick(secs(1.0), &mut seen);
    /// assert_eq!(seen, [OwnerId::from(3), OwnerId::from(5)]);
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        let mgr = self.timers_ref();
        (mgr.find(self.kind().handle())).and_then(|idx| mgr.owner_at(idx))
    }

    /// The bytes given with [`TimerBuilder::payload`](super::TimerBuilder::payload) (empty
    /// when none): a durable timer's data, back after a restart with its row.
    pub fn payload(&self) -> &[u8] {
        let mgr = self.timers_ref();
        (mgr.find(self.kind().handle())).map_or(&[], |idx| mgr.payload_at(idx))
    }

    /// `true` when the timer makes no call after this one by its schedule: a one-shot, or
    /// the last of [`times(n)`](super::TimerBuilder::times) (also when the callback has
    /// cleared it already).
    pub fn is_last_call(&self) -> bool {
        let mgr = self.timers_ref();
        mgr.find(self.kind().handle())
            .is_none_or(|idx| mgr.on_last_call(idx))
    }

    /// Clears the running timer: no further calls, the rest of a burst included.
    pub fn clear_self(&mut self) {
        let h = self.kind().handle();
        self.timers().clear(h);
    }
}
