//! Precise waits, shared by the paced runner and the real-time service's thread (which sets
//! its slack to its batching window instead, see `realtime/mod.rs`).
//!
//! A thread asleep on Linux wakes up to its *timer slack* late (50 µs by default: the kernel
//! groups wake-ups to save power), plus the scheduler's own latency. Measured on the 2-core
//! project machine, a 0.2–1 ms sleep woke p50 75 µs / p99 102 µs late with the default slack,
//! and p50 24 µs / p99 49 µs with a slack of 1 ns. So a thread that keeps deadlines first asks
//! for a small slack ([`PreciseThread`]); every wait it makes from then on (sleeps, condition
//! variable timeouts) is as precise as the machine allows, with no spinning: waking up on time
//! costs no more CPU than waking up late.
//!
//! Deadlines are absolute (`Instant`s): a wait that wakes early (a signal, a spurious wake-up)
//! sleeps again for what is left, and a late one makes no later deadline later. Elsewhere than
//! Linux the slack is the platform's own (no call exists to change it).

use std::time::Instant;

/// Keeps the calling thread's timer slack small while it lives (or at what [`set`] asks), and
/// puts the old one back when dropped.
///
/// [`set`]: PreciseThread::set
#[derive(Debug)]
pub(crate) struct PreciseThread {
    #[cfg(target_os = "linux")]
    previous: Option<u64>,
    #[cfg(target_os = "linux")]
    current: u64,
}

/// The slack asked for: 1 ns (0 would mean "the default" to the kernel).
#[cfg(target_os = "linux")]
const SLACK_NS: u64 = 1;

/// Whether [`PreciseThread::set`] changes how late the thread's waits end: only Linux lets a
/// thread choose its timer slack. Elsewhere a caller that wants batching adds it to its waits.
pub(crate) const SLACK_IS_SETTABLE: bool = cfg!(target_os = "linux");

impl PreciseThread {
    pub(crate) fn new() -> Self {
        #[cfg(target_os = "linux")]
        {
            use std::num::NonZeroU64;
            let previous = rustix::thread::current_timer_slack().ok();
            let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(SLACK_NS));
            PreciseThread {
                previous,
                current: SLACK_NS,
            }
        }
        #[cfg(not(target_os = "linux"))]
        PreciseThread {}
    }

    /// Lets the kernel end this thread's timed waits up to `slack` after their deadline (at
    /// least 1 ns), so that wake-ups near each other become one. One system call when the
    /// value changes, none otherwise. No effect elsewhere than Linux.
    pub(crate) fn set(&mut self, slack: std::time::Duration) {
        #[cfg(target_os = "linux")]
        {
            let ns = u64::try_from(slack.as_nanos())
                .unwrap_or(u64::MAX)
                .max(SLACK_NS);
            if ns != self.current {
                let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(ns));
                self.current = ns;
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = slack;
    }
}

impl Drop for PreciseThread {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(previous) = self.previous {
            let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(previous));
        }
    }
}

/// Sleeps until `deadline` (at once if it passed), however often the sleep is interrupted.
pub(crate) fn sleep_until(deadline: Instant) {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::sleep(deadline - now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn never_wakes_early() {
        let _precise = PreciseThread::new();
        for us in [0u64, 50, 300] {
            let deadline = Instant::now() + Duration::from_micros(us);
            sleep_until(deadline);
            assert!(Instant::now() >= deadline);
        }
    }
}
