//! [`TimerCx`], the timer kind of [`Cx`], and what it knows of its call: plain data, so that
//! the stored callback (`callback.rs`) names the context without naming the manager (whose
//! timers hold those callbacks). Its verbs are in `cx.rs`.

use crate::cx::Cx;
use crate::timer::info::TimerHandle;

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

impl TimerCall {
    pub(crate) fn new(
        handle: TimerHandle,
        now: u64,
        scheduled: u64,
        call_index: u64,
        calls_this_tick: u64,
    ) -> TimerCall {
        TimerCall {
            handle,
            now,
            scheduled,
            call_index,
            calls_this_tick,
        }
    }

    /// The timer called.
    pub(crate) fn handle(&self) -> TimerHandle {
        self.handle
    }

    /// The time the tick reached on the timer's clock.
    pub(crate) fn now(&self) -> u64 {
        self.now
    }

    /// The due time of this call.
    pub(crate) fn scheduled(&self) -> u64 {
        self.scheduled
    }

    /// The timer's calls before this one.
    pub(crate) fn call_index(&self) -> u64 {
        self.call_index
    }

    /// The calls the timer gets in this tick.
    pub(crate) fn calls_this_tick(&self) -> u64 {
        self.calls_this_tick
    }
}
