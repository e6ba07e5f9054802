//! What a timer shares with its handles (its state and callback), the service's flags, and one
//! call and how it runs. Where calls run is `dispatch.rs`; the timer table is `table.rs`; the
//! service that hands due calls out is `service.rs`.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::sync::{lock, Arc, AtomicBool, AtomicU8, Condvar, Mutex, Ordering};

/// Timer states. A call starts under the callback's lock: a call that is not the timer's
/// last starts only if the state reads `ACTIVE` there, and a last call only by moving
/// `ACTIVE` to `RUNNING_LAST`. `cancel` moves `ACTIVE` to `CANCELLED`: once `cancel` has
/// returned `true`, no call can start (a call that read `ACTIVE` before had started, and may
/// finish). A timer making its last call has nothing left to cancel.
///
/// A call that is not the last leaves the state as it found it, so it costs one load, not
/// two read-modify-writes: the lock already keeps calls of one timer from overlapping.
pub(crate) const ACTIVE: u8 = 0;
pub(crate) const CANCELLED: u8 = 2;
pub(crate) const DONE: u8 = 3;
pub(crate) const RUNNING_LAST: u8 = 4;

pub(crate) type CallFn = Box<dyn FnMut() + Send>;
pub(crate) type CancelFn = Box<dyn FnOnce() + Send>;
// A plain std `Arc`: the hook is not part of what loom checks.
pub(crate) type PanicHook = std::sync::Arc<dyn Fn(&TimerPanic) + Send + Sync>;

/// A panic caught in a real-time callback, as given to the hook set with
/// [`RealtimeTimers::on_panic`](super::RealtimeTimers::on_panic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerPanic {
    /// The panic message (`"<non-string panic payload>"` when it was not a string).
    pub message: String,
}

/// What a timer shares with its handles and with its queued calls.
///
/// In declaration order (`repr(C)`), with what every call touches first: behind the `Arc`'s
/// counts, the state, the callback's lock and the flags take the 56 bytes after the start of
/// the allocation, one cache line or two adjacent ones (Rust's own field order may spread
/// them over three, a cache miss more per call).
#[repr(C)]
pub(crate) struct SharedTimer {
    pub(crate) state: AtomicU8,
    pub(crate) callback: Mutex<CallFn>,
    /// The service's flags: a stopped service has no active timers, and the destructors'
    /// panics go to its hook.
    pub(crate) flags: Arc<ServiceFlags>,
    /// `None` when the timer has no hook: `cancel` then takes no lock.
    pub(crate) on_cancel: Option<Mutex<Option<CancelFn>>>,
}

impl Drop for SharedTimer {
    /// The last reference to a timer may go on any thread: the service's (a finished timer
    /// taken out of its table), a pool worker, a `pump`, a handle's owner. A closure whose
    /// destructor panics is reported to the service's panic hook like a panicking call, and
    /// that thread goes on.
    fn drop(&mut self) {
        let cb: CallFn = std::mem::replace(&mut *lock(&self.callback), Box::new(|| {}));
        let hook = self.on_cancel.as_ref().and_then(|h| lock(h).take());
        for result in [
            panic::catch_unwind(AssertUnwindSafe(|| drop(cb))),
            panic::catch_unwind(AssertUnwindSafe(|| drop(hook))),
        ] {
            if let Err(payload) = result {
                report(&self.flags, payload);
            }
        }
    }
}

/// Service-wide flags that calls and handles need after the service is gone.
pub(crate) struct ServiceFlags {
    pub(crate) stopped: AtomicBool,
    /// Calls running now (on any thread). `stopped` is set under this lock, so a call either
    /// counts itself before shutdown waits, or sees `stopped` and does not start.
    pub(crate) in_flight: Mutex<usize>,
    pub(crate) idle: Condvar,
    pub(crate) panic_hook: Mutex<Option<PanicHook>>,
}

impl ServiceFlags {
    pub(crate) fn new() -> Self {
        ServiceFlags {
            stopped: AtomicBool::new(false),
            in_flight: Mutex::new(0),
            idle: Condvar::new(),
            panic_hook: Mutex::new(None),
        }
    }

    /// Counts a call in, unless the service stopped; the call is counted out when the
    /// returned guard drops, however the call ends (a panicking panic hook included: a count
    /// left raised would make `shutdown` wait forever).
    pub(crate) fn begin_flight(&self) -> Option<Flight<'_>> {
        let mut n = lock(&self.in_flight);
        if self.stopped.load(Ordering::Acquire) {
            return None;
        }
        *n += 1;
        Some(Flight(self))
    }
}

/// Calls in flight; counted out on drop.
pub(crate) struct Flight<'a>(&'a ServiceFlags);

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        let mut n = lock(&self.0.in_flight);
        *n -= 1;
        // Only `stop` waits on `idle`, and it sets `stopped` under this lock before waiting:
        // a count that reaches zero before then wakes no one, and skipping the notification
        // saves the timer thread a system call per wake-up.
        if *n == 0 && self.0.stopped.load(Ordering::Acquire) {
            self.0.idle.notify_all();
        }
    }
}

impl SharedTimer {
    /// `cancel` of a handle: `true` when this call cancelled a timer that could still run.
    pub(crate) fn cancel(&self) -> bool {
        if self
            .state
            .compare_exchange(ACTIVE, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        if let Some(slot) = &self.on_cancel {
            let hook = lock(slot).take();
            if let Some(hook) = hook {
                hook();
            }
        }
        true
    }

    /// Has calls left, was not cancelled (a running last call is not one left), and its
    /// service runs.
    pub(crate) fn is_active(&self) -> bool {
        self.has_calls_left() && !self.flags.stopped.load(Ordering::Acquire)
    }

    /// Has calls left and was not cancelled, whether or not its service runs (the table's
    /// question: a stopped service makes no calls anyway).
    pub(crate) fn has_calls_left(&self) -> bool {
        self.state.load(Ordering::Acquire) == ACTIVE
    }
}

// The due time of the call running on this thread (a base and nanoseconds after it: the
// addition waits until `scheduled` asks), and the service it belongs to (the address of its
// flags).
#[cfg(not(tickflow_loom))]
std::thread_local! {
    static SCHEDULED: Cell<Option<(Instant, u64, usize)>> = const { Cell::new(None) };
}
// Loom runs its threads as coroutines on one OS thread: thread-locals must be loom's, and its
// `thread_local!` lacks the `const` form.
#[cfg(tickflow_loom)]
loom::thread_local! {
    static SCHEDULED: Cell<Option<(Instant, u64, usize)>> = Cell::new(None);
}

/// The time the running real-time call was due (its lateness is `Instant::now()` minus this);
/// `None` outside a call.
///
/// ```
/// use std::time::Duration;
/// use tickflow::realtime::{scheduled, ManualClock, RealtimeTimers};
///
/// let clock = ManualClock::new();
/// let timers = RealtimeTimers::manual(clock.clone());
/// let t0 = tickflow::realtime::Clock::now(&clock);
/// timers.after(Duration::from_millis(10)).call(move || {
///     assert_eq!(scheduled(), Some(t0 + Duration::from_millis(10)));
/// });
/// clock.advance(Duration::from_millis(15));
/// assert_eq!(timers.tick(), 1);
/// assert_eq!(scheduled(), None);
/// ```
pub fn scheduled() -> Option<Instant> {
    SCHEDULED
        .with(Cell::get)
        .map(|(base, ns, _)| after_base(base, ns))
}

/// The instant `ns` nanoseconds after a table's `base`: how the service's due times, kept as
/// nanoseconds, become `Instant`s (only where one is asked for).
pub(crate) fn after_base(base: Instant, ns: u64) -> Instant {
    base + Duration::from_nanos(ns)
}

/// One call of a timer, due `due` nanoseconds after `base` (its table's base: the
/// [`Instant`] is made only when asked for).
pub(crate) struct DueCall {
    pub(crate) base: Instant,
    pub(crate) due: u64,
    /// The timer's id (set order), for ties.
    pub(crate) id: u64,
    pub(crate) core: Arc<SharedTimer>,
    /// The timer's last call: it is done after this one.
    pub(crate) last: bool,
}

impl DueCall {
    /// When the call was due.
    pub(crate) fn due(&self) -> Instant {
        after_base(self.base, self.due)
    }

    /// Makes the call unless the timer was cancelled (or the service stopped) first. Calls of
    /// one timer never overlap: they take its callback's lock in turn. Returns `true` if it ran.
    pub(crate) fn run(self) -> bool {
        // Its own reference: the call (and the timer's closure with it, when this is the last
        // reference) is dropped inside the flight, which must outlive it.
        let flags = Arc::clone(&self.core.flags);
        let Some(_flight) = flags.begin_flight() else {
            return false;
        };
        self.run_counted()
    }

    /// [`run`](Self::run) for a call already counted in flight.
    pub(crate) fn run_counted(self) -> bool {
        let core = &*self.core;
        let flags = &core.flags;
        let mut cb = lock(&core.callback);
        let started = if self.last {
            core.state
                .compare_exchange(ACTIVE, RUNNING_LAST, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        } else {
            core.state.load(Ordering::Acquire) == ACTIVE
        };
        if !started {
            return false;
        }
        let service = Arc::as_ptr(flags) as usize;
        let prev = SCHEDULED.with(|s| s.replace(Some((self.base, self.due, service))));
        let result = panic::catch_unwind(AssertUnwindSafe(|| (*cb)()));
        SCHEDULED.with(|s| s.set(prev));
        if self.last {
            // Nothing else moves a timer out of `RUNNING_LAST`.
            core.state.store(DONE, Ordering::Release);
        }
        drop(cb);
        if let Err(payload) = result {
            report(flags, payload);
        }
        true
    }
}

/// Hands a caught panic to the service's hook (default: a line on stderr).
fn report(flags: &ServiceFlags, payload: Box<dyn std::any::Any + Send>) {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<non-string panic payload>".into());
    // The payload's own destructor may panic too.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| drop(payload)));
    let hook = lock(&flags.panic_hook).clone();
    let report = TimerPanic { message };
    let reported = panic::catch_unwind(AssertUnwindSafe(|| match hook {
        Some(h) => h(&report),
        None => eprintln!(
            "tickflow realtime: a timer callback panicked: {}",
            report.message
        ),
    }));
    if reported.is_err() {
        // A panicking hook must not take the timer thread (and every timer) with it.
        eprintln!(
            "tickflow realtime: the panic hook panicked while reporting: {}",
            report.message
        );
    }
}

/// `true` while the current thread runs one of this service's callbacks (waiting for the
/// service to go idle there would wait for itself).
pub(crate) fn in_own_callback(flags: &Arc<ServiceFlags>) -> bool {
    let me = Arc::as_ptr(flags) as usize;
    SCHEDULED
        .with(Cell::get)
        .is_some_and(|(_, _, service)| service == me)
}

impl ServiceFlags {
    /// No call starts after this returns; with `wait`, none is running either.
    pub(crate) fn stop(&self, wait: bool) {
        let mut n = lock(&self.in_flight);
        self.stopped.store(true, Ordering::Release);
        while wait && *n > 0 {
            n = match self.idle.wait(n) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }
}
