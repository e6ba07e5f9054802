//! The service's shared part: its clock, its table of timers and the condition variable its
//! thread waits on ([`Service`]), how a new timer goes in ([`schedule`]) and how due calls come
//! out ([`Service::fire_due`]).

use std::time::Instant;

use super::clock::Clock;
use super::dispatch::Dispatch;
use super::entry::{DueCall, ServiceFlags};
use super::sync::{lock, Arc, Condvar, Mutex, Ordering};
use super::table::{Table, TableEntry};

/// The service: its clock, its state, and how its thread is woken.
pub(crate) struct Service {
    pub(crate) clock: Box<dyn Clock>,
    pub(crate) state: Mutex<Table>,
    pub(crate) wake: Condvar,
    pub(crate) flags: Arc<ServiceFlags>,
}

impl Service {
    /// Collects what is due now and hands each call to its dispatch; runs timer-thread calls
    /// here. Returns how many calls ran here plus how many were handed on.
    pub(crate) fn fire_due(&self, buf: &mut Vec<(DueCall, Dispatch)>) -> usize {
        lock(&self.state).collect_due(self.clock.now(), buf);
        if buf.is_empty() {
            return 0;
        }
        // The calls made here are counted in flight as one batch (two lock round-trips per
        // wake-up, not per call); calls handed on count themselves where they run.
        let Some(_flight) = self.flags.begin_flight() else {
            buf.clear();
            return 0;
        };
        let mut n = 0;
        for (call, dispatch) in buf.drain(..) {
            // A call of this batch may have stopped the service (dropped it from its own
            // callback): no call starts after a stop, the rest of the batch is dropped.
            if self.flags.stopped.load(Ordering::Acquire) {
                continue;
            }
            n += usize::from(match dispatch {
                Dispatch::TimerThread => call.run_counted(),
                other => other.send(call),
            });
        }
        n
    }
}

/// Inserts a timer whose first call is due at `first`; wakes the thread when it is due before
/// everything else.
pub(crate) fn schedule(shared: &Service, entry: TableEntry, first: Instant) {
    let mut st = lock(&shared.state);
    let earlier = st.next_due().is_none_or(|head| first < head);
    st.insert(entry, first);
    drop(st);
    if earlier {
        shared.wake.notify_one();
    }
}
