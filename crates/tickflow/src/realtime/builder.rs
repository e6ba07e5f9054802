//! [`RealtimeBuilder`] and [`RealtimeHandle`].

use std::fmt;
use std::time::Duration;

use super::dispatch::Dispatch;
use super::entry::{SharedTimer, ACTIVE, DONE};
use super::service::{schedule, Service};
use super::sync::{Arc, AtomicU8, Mutex, Ordering};
use super::table::TableEntry;
use crate::time::CatchUp;

/// Options of a new real-time timer, from [`RealtimeTimers::after`](super::RealtimeTimers::after)
/// or [`every`](super::RealtimeTimers::every). Nothing is stored until [`call`](Self::call).
///
/// The options mean what the same options of a [`TimerBuilder`](crate::timer::TimerBuilder)
/// mean, in any order: `after(d).times(n)` repeats every `d` from its first delay, a zero
/// period calls once per [`tick`](super::RealtimeTimers::tick), `times(0)` makes no calls.
/// Where threads make a difference, [`on_cancel`](Self::on_cancel) and
/// [`every`](super::RealtimeTimers::every) say so.
#[must_use = "a timer is stored only by .call(f)"]
pub struct RealtimeBuilder<'a> {
    shared: &'a Service,
    /// The delay of `after`, the period of `every`: the period of any repeat.
    rate: Duration,
    first: Option<Duration>,
    repeating: bool,
    times: Option<u64>,
    catch_up: CatchUp,
    on_cancel: Option<Box<dyn FnOnce() + Send>>,
    dispatch: Dispatch,
}

impl<'a> RealtimeBuilder<'a> {
    pub(crate) fn new(shared: &'a Service, rate: Duration, repeating: bool) -> Self {
        RealtimeBuilder {
            shared,
            rate,
            first: None,
            repeating,
            times: None,
            catch_up: CatchUp::Burst,
            on_cancel: None,
            dispatch: Dispatch::TimerThread,
        }
    }

    /// Time to the first call, instead of the period (repeating) or delay (one-shot). Zero
    /// means the next tick. Takes a [`Duration`] or a [`Span`](crate::time::Span).
    pub fn first_delay(mut self, d: impl Into<Duration>) -> Self {
        self.first = Some(d.into());
        self
    }

    /// At most `n` calls. On a one-shot, `n > 1` makes it repeat with its delay as the period,
    /// whatever the order of the builder calls; `times(0)` makes no calls (the handle is
    /// inactive from the start).
    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        self
    }

    /// What a repeating timer does when the service fell behind by several periods (the same
    /// timeline as [`CatchUp`]'s). An on-time timer behaves the same under all three: `Delay`
    /// restarts its grid only after a call was missed. `Burst` makes at most the
    /// [catch-up cap](super::RealtimeTimers::set_catch_up_cap) of calls per tick.
    pub fn catch_up(mut self, policy: CatchUp) -> Self {
        self.catch_up = policy;
        self
    }

    /// Runs once, inside the [`cancel`](RealtimeHandle::cancel) that cancels the timer while
    /// it still has calls to make, on the cancelling thread: by the time `cancel` returns
    /// `true`, the hook has run. Never when the timer completes.
    ///
    /// (The frame timers' [`on_cancel`](crate::timer::TimerBuilder::on_cancel) runs at the
    /// start of the next tick instead: it needs the game context, which `clear` does not
    /// have. This hook needs nothing, so the thread that knows first runs it.)
    pub fn on_cancel(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.on_cancel = Some(Box::new(f));
        self
    }

    /// Where the calls run (default: the timer thread).
    pub fn dispatch(mut self, d: Dispatch) -> Self {
        self.dispatch = d;
        self
    }

    /// Stores the timer; its countdown starts now.
    ///
    /// Set after the service [shut down](super::RealtimeTimers::shutdown) (through a
    /// [`RealtimeRemote`](super::RealtimeRemote) that outlived it), the timer is not stored:
    /// its handle is not [active](RealtimeHandle::is_active) and it never runs.
    pub fn call(self, f: impl FnMut() + Send + 'static) -> RealtimeHandle {
        let flags = Arc::clone(&self.shared.flags);
        let never = self.times == Some(0) || flags.stopped.load(Ordering::Acquire);
        let core = Arc::new(SharedTimer {
            state: AtomicU8::new(if never { DONE } else { ACTIVE }),
            callback: Mutex::new(Box::new(f)),
            on_cancel: self.on_cancel.map(|h| Mutex::new(Some(h))),
            flags,
        });
        if !never {
            let repeating = self.repeating || self.times.is_some_and(|n| n > 1);
            let first = self.first.unwrap_or(self.rate);
            let now = self.shared.clock.now();
            // A first delay too large to represent: the timer never fires, and is not stored.
            if let Some(due) = now.checked_add(first) {
                let entry = TableEntry::new(
                    Arc::clone(&core),
                    self.dispatch,
                    repeating.then_some(self.rate),
                    self.times,
                    self.catch_up,
                );
                schedule(self.shared, entry, due);
            }
        }
        RealtimeHandle { core }
    }
}

impl fmt::Debug for RealtimeBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealtimeBuilder")
            .field("rate", &self.rate)
            .field("first", &self.first)
            .field("repeating", &self.repeating)
            .field("times", &self.times)
            .field("catch_up", &self.catch_up)
            .field("dispatch", &self.dispatch)
            .finish_non_exhaustive()
    }
}

/// A real-time timer: cancel it from any thread. `Send + Sync + Clone`.
#[derive(Clone)]
pub struct RealtimeHandle {
    core: Arc<SharedTimer>,
}

impl RealtimeHandle {
    /// Cancels the timer: `true` when this call cancelled it (it had calls left, counting a
    /// queued call that has not started). After that no new call starts; one already running
    /// may finish. Runs the `on_cancel` hook. `false` when the timer had ended, was cancelled
    /// before, or is making its last call (from inside that call, too: as a frame timer's
    /// [`clear`](crate::timer::Timers::clear), nothing is cancelled then).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use tickflow::realtime::{ManualClock, RealtimeHandle, RealtimeTimers};
    ///
    /// let clock = ManualClock::new();
    /// let timers = RealtimeTimers::manual(clock.clone());
    /// let me: Arc<Mutex<Option<RealtimeHandle>>> = Arc::default();
    /// let answers = Arc::new(Mutex::new(Vec::new()));
    /// let (m, a) = (me.clone(), answers.clone());
    /// // A one-shot that cancels itself from its only call: nothing is left to cancel.
    /// let h = timers.after(Duration::from_millis(10)).on_cancel(|| unreachable!()).call(move || {
    ///     let me = m.lock().unwrap().clone().unwrap();
    ///     a.lock().unwrap().push(me.cancel());
    /// });
    /// *me.lock().unwrap() = Some(h.clone());
    /// clock.advance(Duration::from_millis(10));
    /// assert_eq!(timers.tick(), 1);
    /// assert_eq!(*answers.lock().unwrap(), [false]);
    /// assert!(!h.is_active());
    /// ```
    pub fn cancel(&self) -> bool {
        self.core.cancel()
    }

    /// `true` while the timer has calls left (a running last call is not one), was not
    /// cancelled, and its service has not shut down.
    pub fn is_active(&self) -> bool {
        self.core.is_active()
    }
}

impl fmt::Debug for RealtimeHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealtimeHandle")
            .field("active", &self.is_active())
            .finish()
    }
}
