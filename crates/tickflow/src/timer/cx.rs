//! [`Cx`], the one context every callback receives, and [`TimerCx`], its timer kind.

use std::fmt;

use super::{OwnerId, TimerHandle, Timers};
use crate::commands::Commands;
use crate::time::{Clocks, Span, Time};

/// The context every callback receives beside the user's `&mut C`: one type for every kind of
/// callback, as `bevy_time` has one `Time<T>` for every clock. `K` is the kind — [`TimerCx`],
/// [`TickCx`](crate::tick::TickCx), [`TickableCx`](crate::tickable::TickableCx),
/// [`LatentCx`](crate::latent::LatentCx) — and brings what is particular to it (a timer's
/// `scheduled()`, a tick function's `dt()`). Every kind reaches the same three services by
/// the same names:
///
/// - [`clocks`](Self::clocks): every clock as this frame sees it;
/// - [`timers`](Self::timers): set, clear, pause and query timers at once;
/// - [`commands`](Self::commands): every other change (tick functions, tickables, latent
///   actions, tasks, owners), applied as soon as the callback returns.
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::Cx;
///
/// // One helper serves every kind of callback.
/// fn arm<K>(log: &mut Vec<String>, cx: &mut Cx<'_, Vec<String>, K>) {
///     let frame = cx.clocks().frame();
///     log.push(format!("armed in frame {frame}"));
///     cx.timers().after(Frames(1)).call(|log, cx| {
///         log.push(format!("fired in frame {}", cx.clocks().frame()))
///     });
/// }
/// let mut sched = Scheduler::<Vec<String>>::new();
/// sched.ticks().add(TickSettings::named("arm"), |log, cx| {
///     if cx.clocks().frame() == 1 {
///         arm(log, cx);
///     }
/// });
/// sched.latent().delay(OwnerId::new(1), 0, secs(0.25), arm);
/// let mut log = vec![];
/// for _ in 0..4 {
///     sched.tick(secs(0.1), &mut log);
/// }
/// assert_eq!(log, ["armed in frame 1", "fired in frame 2", "armed in frame 3", "fired in frame 4"]);
/// ```
pub struct Cx<'a, C, K> {
    /// The frame's one value (a timer call's: its manager's, read when the call starts).
    clocks: &'a Clocks,
    timers: &'a mut Timers<C>,
    kind: K,
}

impl<'a, C: 'static, K> Cx<'a, C, K> {
    pub(crate) fn new(clocks: &'a Clocks, timers: &'a mut Timers<C>, kind: K) -> Self {
        Cx {
            clocks,
            timers,
            kind,
        }
    }

    /// What is particular to this kind of callback.
    pub(crate) fn kind(&self) -> &K {
        &self.kind
    }

    pub(crate) fn kind_mut(&mut self) -> &mut K {
        &mut self.kind
    }

    /// Every clock as this frame sees it (the time the frame reaches), and how far each moved
    /// in it (see [`Clocks`]): one value per frame, the same for every stage.
    pub fn clocks(&self) -> Clocks {
        *self.clocks
    }

    /// The timers: set, clear, pause or query any timer now. In a scheduler, a timer set
    /// before the frame's timer stage counts from the time that stage reaches; one set from a
    /// timer callback counts from that call's scheduled time and never fires in the same tick.
    pub fn timers(&mut self) -> &mut Timers<C> {
        self.timers
    }

    /// The scheduler's [`Commands`]: tick functions, tickables, latent actions, tasks and
    /// owners, changed as soon as this callback returns (for timer callbacks, when the timer
    /// stage ends). A standalone [`TimerManager`](super::TimerManager) or
    /// [`LatentActionManager`](crate::latent::LatentActionManager) has no scheduler: its
    /// commands do nothing.
    pub fn commands(&self) -> &Commands<C> {
        self.timers.commands()
    }
}

impl<C, K: fmt::Debug> fmt::Debug for Cx<'_, C, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cx")
            .field("frame", &self.clocks.frame())
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The context of one timer call: which timer, when it was due, how late it is, how many calls
/// its timer gets in this tick, and, as every [`Cx`], the clocks, the timers and the commands.
///
/// Times are on the timer's own clock (frame numbers for a frame timer).
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
pub type TimerCx<'a, C> = Cx<'a, C, TimerCall>;

/// What a [`TimerCx`] knows of its call.
#[derive(Clone, Debug)]
pub struct TimerCall {
    handle: TimerHandle,
    now: u64,
    scheduled: u64,
    call_index: u64,
    calls_this_tick: u64,
}

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
        let call = TimerCall {
            handle,
            now,
            scheduled,
            call_index,
            calls_this_tick,
        };
        Cx::new(clocks, mgr, call)
    }

    /// The running timer's handle.
    pub fn handle(&self) -> TimerHandle {
        self.kind().handle
    }

    /// The time the tick reached on this timer's clock.
    pub fn now(&self) -> Time {
        Time::from_flicks(self.kind().now)
    }

    /// The time this call was due (for [`fire_now`](Timers::fire_now): now).
    pub fn scheduled(&self) -> Time {
        Time::from_flicks(self.kind().scheduled)
    }

    /// How late this call runs: `now - scheduled`.
    pub fn lateness(&self) -> Span {
        self.now() - self.scheduled()
    }

    /// 0 for the first call of this timer, then 1, 2, ...
    pub fn call_index(&self) -> u64 {
        self.kind().call_index
    }

    /// The calls this timer gets in this tick, this one and earlier ones of the same burst
    /// included (1 unless a [`CatchUp::Burst`](super::CatchUp::Burst) timer is late).
    pub fn calls_this_tick(&self) -> u64 {
        self.kind().calls_this_tick
    }

    /// The tag given with [`TimerBuilder::tag`](super::TimerBuilder::tag), if any: a callback
    /// shared by many timers finds its own data with it (an entity, a slot in a table)
    /// without capturing it, which keeps the callback allocation-free.
    pub fn tag(&self) -> Option<u64> {
        let mgr = &*self.timers;
        mgr.find(self.kind().handle).and_then(|idx| mgr.tag_of(idx))
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
        let mgr = &*self.timers;
        (mgr.find(self.kind().handle)).and_then(|idx| mgr.owner_at(idx))
    }

    /// The bytes given with [`TimerBuilder::payload`](super::TimerBuilder::payload) (empty
    /// when none): a durable timer's data, back after a restart with its row.
    pub fn payload(&self) -> &[u8] {
        let mgr = &*self.timers;
        (mgr.find(self.kind().handle)).map_or(&[], |idx| mgr.payload_at(idx))
    }

    /// `true` when the timer makes no call after this one by its schedule: a one-shot, or
    /// the last of [`times(n)`](super::TimerBuilder::times) (also when the callback has
    /// cleared it already).
    pub fn is_last_call(&self) -> bool {
        let mgr = &*self.timers;
        mgr.find(self.kind().handle)
            .is_none_or(|idx| mgr.on_last_call(idx))
    }

    /// Clears the running timer: no further calls, the rest of a burst included.
    pub fn clear_self(&mut self) {
        let h = self.kind().handle;
        self.timers.clear(h);
    }
}
