//! Where the real-time service reads the time: [`Clock`], the monotonic [`SystemClock`] and a
//! [`ManualClock`] for tests.

use std::fmt;
use std::time::{Duration, Instant};

use super::sync::{lock, Arc, Mutex};

/// A monotonic clock. Implement it to drive the service from your own time source.
pub trait Clock: Send + Sync {
    /// The current time; never goes backwards.
    fn now(&self) -> Instant;
}

/// The operating system's monotonic clock (`Instant::now`).
#[derive(Copy, Clone, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to: behaviour tests drive the service with it and never
/// sleep. Clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use tickflow::realtime::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let t0 = clock.now();
/// clock.advance(Duration::from_millis(250));
/// assert_eq!(clock.now() - t0, Duration::from_millis(250));
/// ```
#[derive(Clone)]
pub struct ManualClock {
    now: Arc<Mutex<Instant>>,
}

impl ManualClock {
    /// A clock stopped at the current instant.
    pub fn new() -> Self {
        ManualClock {
            now: Arc::new(Mutex::new(Instant::now())),
        }
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        let mut now = lock(&self.now);
        *now += d;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *lock(&self.now)
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock").finish_non_exhaustive()
    }
}
