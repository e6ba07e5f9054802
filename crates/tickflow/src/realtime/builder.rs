//! [`RealtimeBuilder`] and [`RealtimeHandle`].

use std::fmt;
use std::time::Duration;

use super::core::{schedule, Core, Entry, Shared, ACTIVE, DONE};
use super::dispatch::Dispatch;
use super::sync::{Arc, AtomicU8, Mutex};
use crate::timer::CatchUp;

/// Options of a new real-time timer, from [`RealtimeTimers::after`](super::RealtimeTimers::after)
/// or [`every`](super::RealtimeTimers::every). Nothing is stored until [`call`](Self::call).
#[must_use = "a timer is stored only by .call(f)"]
pub struct RealtimeBuilder<'a> {
    shared: &'a Shared,
    first: Duration,
    period: Option<Duration>,
    times: Option<u64>,
    catch_up: CatchUp,
    on_cancel: Option<Box<dyn FnOnce() + Send>>,
    dispatch: Dispatch,
}

impl<'a> RealtimeBuilder<'a> {
    pub(crate) fn new(shared: &'a Shared, first: Duration, period: Option<Duration>) -> Self {
        RealtimeBuilder {
            shared,
            first,
            period,
            times: None,
            catch_up: CatchUp::Burst,
            on_cancel: None,
            dispatch: Dispatch::TimerThread,
        }
    }

    /// Time to the first call, instead of the period (repeating) or delay (one-shot).
    pub fn first_delay(mut self, d: Duration) -> Self {
        self.first = d;
        self
    }

    /// At most `n` calls (a one-shot with `n > 1` repeats with its delay as the period;
    /// `times(0)` makes a timer that never calls).
    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        if self.period.is_none() && n > 1 && !self.first.is_zero() {
            self.period = Some(self.first);
        }
        self
    }

    /// What a repeating timer does when the service fell behind by several periods.
    pub fn catch_up(mut self, policy: CatchUp) -> Self {
        self.catch_up = policy;
        self
    }

    /// Runs once, inside the [`cancel`](RealtimeHandle::cancel) that cancels the timer.
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
    pub fn call(self, f: impl FnMut() + Send + 'static) -> RealtimeHandle {
        let never = self.times == Some(0);
        let core = Arc::new(Core {
            state: AtomicU8::new(if never { DONE } else { ACTIVE }),
            callback: Mutex::new(Box::new(f)),
            on_cancel: self.on_cancel.map(|h| Mutex::new(Some(h))),
        });
        if !never {
            let now = self.shared.clock.now();
            // A first delay too large to represent: the timer never fires.
            let anchor = now.checked_add(self.first);
            let entry = Entry {
                core: Arc::clone(&core),
                anchor: anchor.unwrap_or(now),
                period: self.period,
                k: 0,
                times_left: self.times,
                catch_up: self.catch_up,
                dispatch: self.dispatch,
            };
            if anchor.is_some() {
                schedule(self.shared, entry);
            }
        }
        RealtimeHandle { core }
    }
}

impl fmt::Debug for RealtimeBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealtimeBuilder")
            .field("first", &self.first)
            .field("period", &self.period)
            .field("times", &self.times)
            .field("catch_up", &self.catch_up)
            .field("dispatch", &self.dispatch)
            .finish_non_exhaustive()
    }
}

/// A real-time timer: cancel it from any thread. `Send + Sync + Clone`.
#[derive(Clone)]
pub struct RealtimeHandle {
    core: Arc<Core>,
}

impl RealtimeHandle {
    /// Cancels the timer: `true` when this call cancelled it (it had calls left). After that no
    /// new call starts; one already running may finish. Runs the `on_cancel` hook.
    pub fn cancel(&self) -> bool {
        self.core.cancel()
    }

    /// `true` while the timer has calls left and was not cancelled.
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
