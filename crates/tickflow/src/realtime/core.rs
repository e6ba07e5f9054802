//! The service's state and its two operations: collecting the calls that are due, and making
//! one call.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::clock::Clock;
use super::dispatch::Dispatch;
use super::sync::{lock, Arc, AtomicBool, AtomicU8, Condvar, Mutex, Ordering};
use crate::timer::CatchUp;

/// Timer states. A call starts only by moving `ACTIVE` to `RUNNING` (or `RUNNING_LAST` for
/// the timer's last call) under the callback's lock, and `cancel` moves `ACTIVE` or `RUNNING`
/// to `CANCELLED`: once `cancel` has returned `true`, no call can start. A timer making its
/// last call has nothing left to cancel.
pub(crate) const ACTIVE: u8 = 0;
pub(crate) const RUNNING: u8 = 1;
pub(crate) const CANCELLED: u8 = 2;
pub(crate) const DONE: u8 = 3;
pub(crate) const RUNNING_LAST: u8 = 4;

pub(crate) type Callback = Box<dyn FnMut() + Send>;
pub(crate) type CancelHook = Box<dyn FnOnce() + Send>;
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
pub(crate) struct Core {
    pub(crate) state: AtomicU8,
    pub(crate) callback: Mutex<Callback>,
    /// `None` when the timer has no hook: `cancel` then takes no lock.
    pub(crate) on_cancel: Option<Mutex<Option<CancelHook>>>,
}

/// Service-wide flags that calls and handles need after the service is gone.
pub(crate) struct Flags {
    pub(crate) stopped: AtomicBool,
    /// Calls running now (on any thread). `stopped` is set under this lock, so a call either
    /// counts itself before shutdown waits, or sees `stopped` and does not start.
    pub(crate) in_flight: Mutex<usize>,
    pub(crate) idle: Condvar,
    pub(crate) panic_hook: Mutex<Option<PanicHook>>,
}

impl Flags {
    pub(crate) fn new() -> Self {
        Flags {
            stopped: AtomicBool::new(false),
            in_flight: Mutex::new(0),
            idle: Condvar::new(),
            panic_hook: Mutex::new(None),
        }
    }

    /// Counts a call in, unless the service stopped; the call is counted out when the
    /// returned guard drops, however the call ends (a panicking panic hook included: a count
    /// left raised would make `shutdown` wait forever).
    fn begin_flight(&self) -> Option<Flight<'_>> {
        let mut n = lock(&self.in_flight);
        if self.stopped.load(Ordering::Acquire) {
            return None;
        }
        *n += 1;
        Some(Flight(self))
    }
}

/// A call in flight; counted out on drop.
struct Flight<'a>(&'a Flags);

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        let mut n = lock(&self.0.in_flight);
        *n -= 1;
        if *n == 0 {
            self.0.idle.notify_all();
        }
    }
}

impl Core {
    /// `cancel` of a handle: `true` when this call cancelled a timer that could still run.
    pub(crate) fn cancel(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s != ACTIVE && s != RUNNING {
                return false;
            }
            match self
                .state
                .compare_exchange(s, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if let Some(slot) = &self.on_cancel {
            let hook = lock(slot).take();
            if let Some(hook) = hook {
                hook();
            }
        }
        true
    }

    /// Has calls left and was not cancelled (a running last call is not one left).
    pub(crate) fn is_active(&self) -> bool {
        matches!(self.state.load(Ordering::Acquire), ACTIVE | RUNNING)
    }
}

super::sync::thread_local! {
    /// The due time of the call running on this thread, and the service it belongs to (the
    /// address of its flags). Not `const`-initialized: loom's `thread_local!` (under
    /// `--cfg tickflow_loom`) lacks that form.
    #[allow(clippy::missing_const_for_thread_local)]
    static SCHEDULED: Cell<Option<(Instant, usize)>> = Cell::new(None);
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
    SCHEDULED.with(Cell::get).map(|(due, _)| due)
}

/// One call of a timer, due at `due`.
pub(crate) struct Call {
    pub(crate) flags: Arc<Flags>,
    pub(crate) due: Instant,
    /// The timer's id (set order), for ties.
    pub(crate) id: u64,
    pub(crate) core: Arc<Core>,
    /// The timer's last call: it is done after this one.
    pub(crate) last: bool,
}

impl Call {
    /// Makes the call unless the timer was cancelled (or the service stopped) first. Calls of
    /// one timer never overlap: they take its callback's lock in turn. Returns `true` if it ran.
    pub(crate) fn run(self) -> bool {
        let flags = Arc::clone(&self.flags);
        let Some(_flight) = flags.begin_flight() else {
            return false;
        };
        self.run_counted()
    }

    fn run_counted(self) -> bool {
        let core = &*self.core;
        let mut cb = lock(&core.callback);
        let running = if self.last { RUNNING_LAST } else { RUNNING };
        if core
            .state
            .compare_exchange(ACTIVE, running, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        let service = Arc::as_ptr(&self.flags) as usize;
        let prev = SCHEDULED.with(|s| s.replace(Some((self.due, service))));
        let result = panic::catch_unwind(AssertUnwindSafe(|| (*cb)()));
        SCHEDULED.with(|s| s.set(prev));
        let next = if self.last { DONE } else { ACTIVE };
        // Fails when cancelled during the call: it stays cancelled.
        let _ = core
            .state
            .compare_exchange(running, next, Ordering::AcqRel, Ordering::Acquire);
        drop(cb);
        if let Err(payload) = result {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".into());
            let hook = lock(&self.flags.panic_hook).clone();
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
        true
    }
}

/// A timer's schedule, kept by the service.
pub(crate) struct Entry {
    pub(crate) core: Arc<Core>,
    /// Calls are due at `anchor + k × period` (`k` counts from the first call).
    pub(crate) anchor: Instant,
    pub(crate) period: Option<Duration>,
    /// Index of the next call.
    pub(crate) k: u64,
    pub(crate) times_left: Option<u64>,
    pub(crate) catch_up: CatchUp,
    pub(crate) dispatch: Dispatch,
    /// Calls made in the pass numbered `pass` (for the catch-up cap).
    pub(crate) burst: u64,
    pub(crate) pass: u64,
}

impl Entry {
    /// The first call index after `k` whose due time is after `now` (the grid point a late
    /// timer skips to); `None` when it is too far to represent.
    fn first_after(&self, k: u64, now: Instant) -> Option<u64> {
        let p = self.period?.as_nanos();
        let behind = now.checked_duration_since(self.due(k)?)?.as_nanos();
        let skip = u64::try_from(behind / p + 1).ok()?;
        k.checked_add(skip)
    }

    /// When call `k` is due; `None` when that is too far to represent (never).
    fn due(&self, k: u64) -> Option<Instant> {
        let Some(p) = self.period else {
            return (k == 0).then_some(self.anchor);
        };
        let nanos = p.as_nanos().checked_mul(u128::from(k))?;
        let offset = Duration::new(
            u64::try_from(nanos / 1_000_000_000).ok()?,
            (nanos % 1_000_000_000) as u32,
        );
        self.anchor.checked_add(offset)
    }
}

/// Everything behind the service's lock: entries in a slab, due times in a heap of
/// `(due, id, slot)` (ties go to the timer set first; a record whose slot now holds another
/// id is stale).
pub(crate) struct State {
    pub(crate) heap: BinaryHeap<Reverse<(Instant, u64, u32)>>,
    /// Zero-period timers called in the last pass: due again at the next pass, at that pass's
    /// time. Kept out of the heap so that the thread never wakes up for them alone (it would
    /// spin a core): they run once per pass that something else causes.
    every_pass: Vec<(Instant, u64, u32)>,
    entries: Vec<Option<(u64, Entry)>>,
    free: Vec<u32>,
    next_id: u64,
    /// Heap size after the last compaction: cancelled timers leave their records until they
    /// come due, so the heap is compacted when it doubles.
    compacted_at: usize,
    /// Passes so far (`collect_due` calls), for counting each timer's calls per pass.
    pass: u64,
    /// Most calls one timer makes in one pass.
    pub(crate) cap: u64,
    /// Missed calls dropped by the cap.
    pub(crate) dropped: u64,
}

impl Default for State {
    fn default() -> Self {
        State {
            heap: BinaryHeap::new(),
            every_pass: Vec::new(),
            entries: Vec::new(),
            free: Vec::new(),
            next_id: 0,
            compacted_at: 0,
            pass: 0,
            cap: crate::timer::DEFAULT_CATCH_UP_CAP,
            dropped: 0,
        }
    }
}

impl State {
    /// Stores a timer whose first call is due at `first` (`None`: never).
    pub(crate) fn insert(&mut self, entry: Entry, first: Option<Instant>) {
        let Some(first) = first else {
            // Too far to represent: it never fires, and needs no storage.
            return;
        };
        if self.heap.len() > 2 * self.compacted_at + 1024 {
            self.compact();
        }
        let id = self.next_id;
        self.next_id += 1;
        let slot = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = Some((id, entry));
                i
            }
            None => {
                self.entries.push(Some((id, entry)));
                (self.entries.len() - 1) as u32
            }
        };
        self.heap.push(Reverse((first, id, slot)));
    }

    /// Timers stored (cancelled ones included until their records are dropped).
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((due, _, _))| *due)
    }

    fn remove(&mut self, slot: u32) {
        self.entries[slot as usize] = None;
        self.free.push(slot);
    }

    /// Pops every call due at `now`, in due order (ties: set order), and reschedules repeating
    /// timers by their catch-up policy: the same rules as the frame timers' (`timer/fire.rs`).
    pub(crate) fn collect_due(
        &mut self,
        now: Instant,
        flags: &Arc<Flags>,
        out: &mut Vec<(Call, Dispatch)>,
    ) {
        self.pass += 1;
        let pass = self.pass;
        for rec in self.every_pass.drain(..) {
            self.heap.push(Reverse(rec));
        }
        while let Some(&Reverse((due, id, slot))) = self.heap.peek() {
            if due > now {
                break;
            }
            self.heap.pop();
            let Some((eid, e)) = self.entries[slot as usize].as_mut() else {
                continue;
            };
            if *eid != id {
                continue;
            }
            if !e.core.is_active() {
                self.remove(slot);
                continue;
            }
            if e.pass != pass {
                (e.pass, e.burst) = (pass, 0);
            }
            e.burst += 1;
            let last = match e.times_left.as_mut() {
                Some(left) => {
                    *left -= 1;
                    *left == 0
                }
                None => e.period.is_none(),
            };
            out.push((
                Call {
                    flags: Arc::clone(flags),
                    due,
                    id,
                    core: Arc::clone(&e.core),
                    last,
                },
                e.dispatch.clone(),
            ));
            if last {
                self.remove(slot);
                continue;
            }
            let period = e.period.expect("a timer with calls left repeats");
            if period.is_zero() {
                // Once per pass: due again at the next one.
                self.every_pass.push((now, id, slot));
                continue;
            }
            let next = e.k + 1;
            let on_time = e.due(next).is_none_or(|d| d > now);
            e.k = match e.catch_up {
                _ if on_time => next,
                CatchUp::Burst if e.burst < self.cap => next,
                CatchUp::Burst => {
                    // The cap: the periods still due in this pass are dropped onto the grid.
                    let ahead = e.first_after(e.k, now).unwrap_or(u64::MAX);
                    self.dropped = self.dropped.saturating_add(ahead - next);
                    ahead
                }
                CatchUp::Once => e.first_after(e.k, now).unwrap_or(u64::MAX),
                CatchUp::Delay => {
                    // Late: the grid restarts one period after this pass.
                    e.anchor = now;
                    1
                }
            };
            match e.due(e.k) {
                Some(next) => self.heap.push(Reverse((next, id, slot))),
                None => self.remove(slot),
            }
        }
    }

    /// Drops cancelled timers and their heap records.
    fn compact(&mut self) {
        for slot in 0..self.entries.len() {
            let dead = matches!(&self.entries[slot], Some((_, e)) if e.core.state.load(Ordering::Acquire) == CANCELLED);
            if dead {
                self.remove(slot as u32);
            }
        }
        let entries = &self.entries;
        let heap = std::mem::take(&mut self.heap);
        self.heap = heap
            .into_iter()
            .filter(|Reverse((_, id, slot))| {
                matches!(&entries[*slot as usize], Some((eid, _)) if eid == id)
            })
            .collect();
        self.compacted_at = self.heap.len();
    }
}

/// The service: its clock, its state, and how its thread is woken.
pub(crate) struct Shared {
    pub(crate) clock: Box<dyn Clock>,
    pub(crate) state: Mutex<State>,
    pub(crate) wake: Condvar,
    pub(crate) flags: Arc<Flags>,
}

impl Shared {
    /// Collects what is due now and hands each call to its dispatch; runs timer-thread calls
    /// here. Returns how many calls ran here plus how many were handed on.
    pub(crate) fn fire_due(&self, buf: &mut Vec<(Call, Dispatch)>) -> usize {
        lock(&self.state).collect_due(self.clock.now(), &self.flags, buf);
        let mut n = 0;
        for (call, dispatch) in buf.drain(..) {
            n += usize::from(dispatch.send(call));
        }
        n
    }
}

/// Builds an entry and inserts it; wakes the thread when it is due before everything else.
pub(crate) fn schedule(shared: &Shared, entry: Entry) {
    let first = entry.due(0);
    let mut st = lock(&shared.state);
    let earlier = match (first, st.next_due()) {
        (Some(f), Some(head)) => f < head,
        (Some(_), None) => true,
        (None, _) => false,
    };
    st.insert(entry, first);
    drop(st);
    if earlier {
        shared.wake.notify_one();
    }
}

/// `true` while the current thread runs one of this service's callbacks (waiting for the
/// service to go idle there would wait for itself).
pub(crate) fn in_own_callback(flags: &Arc<Flags>) -> bool {
    let me = Arc::as_ptr(flags) as usize;
    SCHEDULED
        .with(Cell::get)
        .is_some_and(|(_, service)| service == me)
}

impl Flags {
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
