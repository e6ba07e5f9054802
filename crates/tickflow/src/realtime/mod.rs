//! A thread-safe, wall-clock timer service: work that is not tied to frames (autosave,
//! network heartbeats, session expiry on a game server).
//!
//! [`RealtimeTimers`] is the C# `TickTimer`/`AsyncTimer` done right: it runs on its own thread
//! ([`start`](RealtimeTimers::start)) or is driven by hand ([`manual`](RealtimeTimers::manual)
//! with [`tick`](RealtimeTimers::tick)), reads a monotonic [`Clock`] (injectable: tests use a
//! [`ManualClock`] and never sleep), and sends each call where you ask ([`Dispatch`]): the timer
//! thread, rayon's pool, or a [`Dispatcher`] queue that a thread of your choice drains with
//! [`pump`](Dispatcher::pump) — the game's main loop, say.
//!
//! # Guarantees
//!
//! - **No drift.** Call `k` of a repeating timer is due at `start + first_delay + k × period` on
//!   the monotonic clock, however late earlier calls ran. A thread that fell behind applies the
//!   timer's [`CatchUp`](crate::time::CatchUp): `Burst` makes every missed call, `Once` one
//!   call and then the next point on the grid, `Delay` one call and a new grid from now (only
//!   when a call was missed: an on-time timer keeps its grid under all three).
//!
//! # The same rules as the frame timers
//!
//! The builder options mean what they mean on [`TimerManager`](crate::timer::TimerManager)'s
//! builder, in any order: `after(d).times(n)` repeats every `d`, `first_delay` only moves the
//! first call, a zero period calls once per pass, `times(0)` makes no calls, both take
//! [`Span`](crate::time::Span)s. Threads make two differences, said in both places: the
//! [`on_cancel`](RealtimeBuilder::on_cancel) hook runs inside `cancel` (the frame timers' runs
//! at the next tick, with the context), and a zero period on the service's own thread is
//! called only when the thread wakes for something else.
//! - **Cancel is final.** Once [`RealtimeHandle::cancel`] has returned `true` (from any
//!   thread), no new call of that timer starts; a call already running may finish. Its
//!   `on_cancel` hook runs inside that `cancel`. A timer making its last call has nothing
//!   left to cancel: `cancel` answers `false` then, also from inside that call.
//! - **Bounded catch-up.** A thread that fell behind makes at most
//!   [`set_catch_up_cap`](RealtimeTimers::set_catch_up_cap) calls per timer in one pass.
//! - **No call lost or duplicated**: every due call is made once (or skipped because the timer
//!   was cancelled first), whatever the dispatch; calls of one timer never overlap.
//! - **Shutdown is clean.** [`shutdown`](RealtimeTimers::shutdown) (and drop) returns only when
//!   no callback is running and none will start: calls still queued in a dispatcher are
//!   skipped. (A service dropped inside one of its own callbacks cannot wait for that call: it
//!   stops at once and its thread ends when the call returns.)
//! - Callbacks may schedule and cancel timers (through a [`RealtimeRemote`]); a panicking
//!   callback is reported to the [panic hook](RealtimeTimers::on_panic) and the service goes on;
//!   a delay too large to represent makes a timer that never fires instead of a panic.
//!
//! # Checking it
//!
//! The synchronization goes through `sync.rs`; `RUSTFLAGS="--cfg tickflow_loom" cargo test -p
//! tickflow --test loom_realtime --release` runs the cancel/fire/dispatch races under loom.
//!
//! # Examples
//!
//! ```
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::sync::Arc;
//! use std::time::Duration;
//! use tickflow::realtime::{ManualClock, RealtimeTimers};
//!
//! let clock = ManualClock::new();
//! let timers = RealtimeTimers::manual(clock.clone());
//! let beats = Arc::new(AtomicU32::new(0));
//! let b = beats.clone();
//! let heartbeat = timers
//!     .every(Duration::from_millis(100))
//!     .call(move || {
//!         b.fetch_add(1, Ordering::Relaxed);
//!     });
//! clock.advance(Duration::from_millis(350)); // three calls due: 100, 200, 300 ms
//! assert_eq!(timers.tick(), 3);
//! assert!(heartbeat.cancel());
//! clock.advance(Duration::from_secs(1));
//! assert_eq!(timers.tick(), 0);
//! assert_eq!(beats.load(Ordering::Relaxed), 3);
//! ```

mod builder;
mod clock;
mod dispatch;
mod entry;
mod heap;
mod service;
mod sync;
mod table;

use std::fmt;
use std::time::Duration;

pub use builder::{RealtimeBuilder, RealtimeHandle};
pub use clock::{Clock, ManualClock, SystemClock};
pub use dispatch::{Dispatch, Dispatcher};
pub use entry::{scheduled, TimerPanic};

use self::table::Table;
use entry::ServiceFlags;
use service::Service;
use sync::{lock, Arc, Condvar, Mutex};

/// The real-time timer service. See the [module docs](self).
pub struct RealtimeTimers {
    remote: RealtimeRemote,
    #[cfg(not(tickflow_loom))]
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A cloneable, `Send + Sync` way to schedule timers on a [`RealtimeTimers`], for callbacks and
/// other threads. It does not keep the service's thread alive.
#[derive(Clone)]
pub struct RealtimeRemote {
    shared: Arc<Service>,
}

impl RealtimeRemote {
    /// A one-shot timer due `delay` from now (see [`RealtimeBuilder`]).
    pub fn after(&self, delay: impl Into<Duration>) -> RealtimeBuilder<'_> {
        RealtimeBuilder::new(&self.shared, delay.into(), false)
    }

    /// A repeating timer, first due one `period` from now (see
    /// [`RealtimeTimers::every`] for a zero period).
    pub fn every(&self, period: impl Into<Duration>) -> RealtimeBuilder<'_> {
        RealtimeBuilder::new(&self.shared, period.into(), true)
    }
}

impl fmt::Debug for RealtimeRemote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealtimeRemote").finish_non_exhaustive()
    }
}

impl RealtimeTimers {
    fn with_clock(clock: Box<dyn Clock>) -> Self {
        let base = clock.now();
        RealtimeTimers {
            remote: RealtimeRemote {
                shared: Arc::new(Service {
                    clock,
                    state: Mutex::new(Table::new(base)),
                    wake: Condvar::new(),
                    flags: Arc::new(ServiceFlags::new()),
                }),
            },
            #[cfg(not(tickflow_loom))]
            thread: None,
        }
    }

    /// Starts the service on its own thread, on the system's monotonic clock.
    #[cfg(not(tickflow_loom))]
    pub fn start() -> Self {
        let mut t = Self::with_clock(Box::new(SystemClock));
        let shared = Arc::clone(&t.remote.shared);
        t.thread = Some(
            std::thread::Builder::new()
                .name("tickflow-realtime".into())
                .spawn(move || run_thread(&shared))
                .expect("could not start the real-time timer thread"),
        );
        t
    }

    /// A service without a thread: [`tick`](Self::tick) makes the calls that are due on
    /// `clock` (the seed's "interval 0" mode; tests use a [`ManualClock`]).
    pub fn manual(clock: impl Clock + 'static) -> Self {
        Self::with_clock(Box::new(clock))
    }

    /// A one-shot timer due `delay` from now. Takes a [`Duration`] or a
    /// [`Span`](crate::time::Span).
    pub fn after(&self, delay: impl Into<Duration>) -> RealtimeBuilder<'_> {
        self.remote.after(delay)
    }

    /// A repeating timer, first due one `period` from now.
    ///
    /// A zero period means once per pass, as on the frame timers (once per tick): in manual
    /// mode, once per [`tick`](Self::tick). The service's own thread never wakes up for such a
    /// timer alone (it would spin a core), so there it is called once each time the thread
    /// wakes for another timer or a new one.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use tickflow::realtime::{ManualClock, RealtimeTimers};
    ///
    /// let timers = RealtimeTimers::manual(ManualClock::new());
    /// let n = Arc::new(AtomicU32::new(0));
    /// let m = n.clone();
    /// timers.every(Duration::ZERO).times(3).call(move || {
    ///     m.fetch_add(1, Ordering::Relaxed);
    /// });
    /// for _ in 0..5 {
    ///     timers.tick();
    /// }
    /// assert_eq!(n.load(Ordering::Relaxed), 3);
    /// ```
    pub fn every(&self, period: impl Into<Duration>) -> RealtimeBuilder<'_> {
        self.remote.every(period)
    }

    /// Limits how many calls one timer makes in one pass (default
    /// [`DEFAULT_CATCH_UP_CAP`](crate::time::DEFAULT_CATCH_UP_CAP), as the frame timers'
    /// [`set_catch_up_cap`](crate::timer::Timers::set_catch_up_cap)): a
    /// [`CatchUp::Burst`](crate::time::CatchUp::Burst) timer more periods behind than this
    /// makes that many calls and skips the rest of the missed periods on its grid, so a thread
    /// that was stalled (a laptop asleep, a debugger) never queues millions of calls.
    ///
    /// # Panics
    ///
    /// When `calls_per_timer` is zero or above
    /// [`MAX_CATCH_UP_CAP`](crate::time::MAX_CATCH_UP_CAP).
    #[track_caller]
    pub fn set_catch_up_cap(&self, calls_per_timer: u64) {
        crate::time::assert_catch_up_cap(calls_per_timer);
        lock(&self.remote.shared.state).cap = calls_per_timer;
    }

    /// Lets the service's thread wake up to `window` after the earliest due time, so that the
    /// timers due in between are called in the same wake-up (default
    /// [`DEFAULT_BATCH_WINDOW`]): a wider window means fewer wake-ups (less CPU when timers
    /// are many) and later calls, by up to the window. Calls are never early.
    ///
    /// The thread sleeps until the exact earliest due time with the window as its timer slack
    /// (Linux's `PR_SET_TIMERSLACK`, the kernel's own way of merging wake-ups; other systems
    /// add the window to the sleep). `Duration::ZERO` is the precise setting: every wait ends
    /// as close to its deadline as the machine allows (p99 lateness under 10 µs on the project
    /// machine), at the cost of a wake-up for almost every call. No effect in manual mode. A
    /// window above [`MAX_BATCH_WINDOW`] (1 s) is taken as that: a wider one would only hold
    /// every call back further.
    pub fn set_batch_window(&self, window: Duration) {
        lock(&self.remote.shared.state).batch = window.min(MAX_BATCH_WINDOW);
    }

    /// Missed calls dropped by the catch-up cap since the service started.
    pub fn calls_dropped(&self) -> u64 {
        lock(&self.remote.shared.state).dropped
    }

    /// A handle for scheduling from callbacks and other threads.
    pub fn remote(&self) -> RealtimeRemote {
        self.remote.clone()
    }

    /// Makes the calls that are due now (timer-thread calls run here; others are handed to
    /// their pool or queue); returns how many were made or handed on. For manual mode; with a
    /// thread it races it harmlessly.
    ///
    /// # Panics
    ///
    /// When called from inside one of this service's own callbacks (as the frame timers'
    /// [`tick`](crate::timer::TimerManager::tick)): the callback's own timer may be due again,
    /// and its call would wait for the running one. The panic is the callback's, so the
    /// service reports it to the [panic hook](Self::on_panic) and goes on.
    #[track_caller]
    pub fn tick(&self) -> usize {
        assert!(
            !entry::in_own_callback(&self.remote.shared.flags),
            "RealtimeTimers::tick called from inside one of its own callbacks"
        );
        let mut buf = Vec::new();
        self.remote.shared.fire_due(&mut buf)
    }

    /// Where panics of callbacks go (default: a line on stderr). The service goes on.
    pub fn on_panic(&self, hook: impl Fn(&TimerPanic) + Send + Sync + 'static) {
        *lock(&self.remote.shared.flags.panic_hook) = Some(std::sync::Arc::new(hook));
    }

    /// Stops the service: returns when no callback is running and none will start (calls still
    /// queued in dispatchers are skipped). Dropping the service does the same.
    ///
    /// # Panics
    ///
    /// When called from inside one of its own callbacks (it would wait for itself).
    #[track_caller]
    pub fn shutdown(mut self) {
        assert!(
            !entry::in_own_callback(&self.remote.shared.flags),
            "RealtimeTimers::shutdown called from one of its own callbacks (it would wait for itself)"
        );
        self.stop();
    }

    fn stop(&mut self) {
        let shared = &self.remote.shared;
        // Dropped inside one of its own callbacks: stop without waiting for that call, and let
        // the thread end on its own once it returns.
        let own = entry::in_own_callback(&shared.flags);
        shared.flags.stop(!own);
        {
            let _st = lock(&shared.state);
            shared.wake.notify_all();
        }
        #[cfg(not(tickflow_loom))]
        if let Some(t) = self.thread.take() {
            if !own {
                let _ = t.join();
            }
        }
    }
}

impl Drop for RealtimeTimers {
    fn drop(&mut self) {
        self.stop();
    }
}

impl fmt::Debug for RealtimeTimers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.remote.shared.state);
        f.debug_struct("RealtimeTimers")
            .field("timers", &st.len())
            .finish_non_exhaustive()
    }
}

/// The default of [`RealtimeTimers::set_batch_window`]: 50 µs, Linux's default timer slack,
/// so the service batches as much as a plain thread that sleeps until its next deadline.
///
/// Measured with `tickflow bench --only realtime` on the 2-core project machine (BENCHMARKS.md),
/// 1e3 and 1e4 repeating timers of 10–100 ms, against a naive heap thread (`park_timeout`
/// until the earliest, default timer slack): p99 lateness 58 / 54 µs against its 58 / 54 µs,
/// at 1.05× its CPU. A smaller window buys lateness with wake-ups one for one (the thread's CPU
/// is mostly the kernel switching to it); the precise setting, `Duration::ZERO`, gives p99
/// 4–8 µs at about six times the CPU at 1e4 timers.
pub const DEFAULT_BATCH_WINDOW: Duration = Duration::from_micros(50);

/// The widest [`RealtimeTimers::set_batch_window`]: 1 s, the lateness a job queue accepts
/// (and far past any game's); a wider window would only hold every call back further.
pub const MAX_BATCH_WINDOW: Duration = Duration::from_secs(1);

/// The timer thread: make what is due, then sleep until the next due time or a wake-up.
///
/// The batching window is the thread's timer slack (`sleep.rs`): the wait asks for the exact
/// deadline and lets the kernel end it up to the window later, so timers due within the window
/// after the earliest are made in the same wake-up, and the kernel can merge the wake-up with
/// other threads' too. A window of zero asks for 1 ns of slack: waits end as close to their
/// deadline as the machine allows, with no spinning. Where the slack cannot be set (not
/// Linux), the window is added to the wait instead.
#[cfg(not(tickflow_loom))]
fn run_thread(shared: &Service) {
    use sync::Ordering;
    let mut slack = crate::sleep::PreciseThread::new();
    let mut buf = Vec::new();
    loop {
        shared.fire_due(&mut buf);
        let st = lock(&shared.state);
        if shared.flags.stopped.load(Ordering::Acquire) {
            return;
        }
        let now = shared.clock.now();
        // The guard comes back and is dropped at once: the loop takes the lock again.
        match st.next_due() {
            Some(due) if due <= now => continue,
            Some(due) => {
                let wait = if crate::sleep::SLACK_IS_SETTABLE {
                    slack.set(st.batch);
                    due - now
                } else {
                    (due - now).saturating_add(st.batch)
                };
                drop(shared.wake.wait_timeout(st, wait));
            }
            None => drop(shared.wake.wait(st)),
        }
    }
}
