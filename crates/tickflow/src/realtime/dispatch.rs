//! Where a call runs: [`Dispatch`] and the [`Dispatcher`] queue.

use std::fmt;

use super::entry::DueCall;
use super::sync::{lock, Arc, Mutex};

/// Where a real-time timer's calls run.
#[derive(Clone, Default)]
pub enum Dispatch {
    /// On the timer thread (or the thread calling `tick` in manual mode). Keep such callbacks
    /// short: the next timers wait for them.
    #[default]
    TimerThread,
    /// On rayon's worker pool (with the `rayon` feature, on by default).
    #[cfg(feature = "rayon")]
    Pool,
    /// Queued to a [`Dispatcher`]; they run when some thread calls [`Dispatcher::pump`] (for
    /// example the game's main thread, once per frame).
    Queue(Dispatcher),
}

impl Dispatch {
    /// Runs or hands on one call; `true` when it ran here or was handed on.
    pub(crate) fn send(&self, call: DueCall) -> bool {
        match self {
            Dispatch::TimerThread => call.run(),
            #[cfg(feature = "rayon")]
            Dispatch::Pool => {
                rayon::spawn(move || {
                    call.run();
                });
                true
            }
            Dispatch::Queue(d) => {
                lock(&d.queue).push(call);
                true
            }
        }
    }
}

impl fmt::Debug for Dispatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dispatch::TimerThread => f.write_str("TimerThread"),
            #[cfg(feature = "rayon")]
            Dispatch::Pool => f.write_str("Pool"),
            Dispatch::Queue(_) => f.write_str("Queue(..)"),
        }
    }
}

/// A queue of due calls that the thread of your choice runs with [`pump`](Self::pump): the
/// C# `TickTimer`'s `HandleTask`. Clones share the queue; it is `Send + Sync`.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tickflow::realtime::{Dispatch, Dispatcher, ManualClock, RealtimeTimers};
///
/// let clock = ManualClock::new();
/// let timers = RealtimeTimers::manual(clock.clone());
/// let main_thread = Dispatcher::new();
/// let saves = Arc::new(AtomicU32::new(0));
/// let s = saves.clone();
/// timers
///     .every(Duration::from_secs(2))
///     .dispatch(Dispatch::Queue(main_thread.clone()))
///     .call(move || {
///         s.fetch_add(1, Ordering::Relaxed);
///     });
/// clock.advance(Duration::from_secs(5));
/// assert_eq!(timers.tick(), 2); // queued, not run
/// assert_eq!(saves.load(Ordering::Relaxed), 0);
/// assert_eq!(main_thread.pump(), 2); // the main loop runs them, in due order
/// assert_eq!(saves.load(Ordering::Relaxed), 2);
/// ```
#[derive(Clone, Default)]
pub struct Dispatcher {
    /// Calls waiting (each knows the service it came from).
    queue: Arc<Mutex<Vec<DueCall>>>,
}

impl Dispatcher {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs every queued call, in due order (ties: the order they became due), on the calling
    /// thread; returns how many ran (cancelled timers' calls are skipped).
    pub fn pump(&self) -> usize {
        let mut calls = std::mem::take(&mut *lock(&self.queue));
        calls.sort_by_key(|c| (c.due(), c.id));
        calls
            .into_iter()
            .map(DueCall::run)
            .filter(|&ran| ran)
            .count()
    }

    /// Calls waiting for [`pump`](Self::pump).
    pub fn len(&self) -> usize {
        lock(&self.queue).len()
    }

    /// `true` when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("queued", &self.len())
            .finish()
    }
}
