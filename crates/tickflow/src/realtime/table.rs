//! The service's timer table: entries in a slab and their due times in a heap, and the one
//! operation on it that matters, collecting the calls due at a time and rescheduling the
//! timers that repeat.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use super::dispatch::Dispatch;
use super::entry::{DueCall, SharedTimer, CANCELLED};
use super::sync::{Arc, Ordering};
use crate::timer::CatchUp;

/// A timer's schedule, kept by the service.
pub(crate) struct TableEntry {
    pub(crate) core: Arc<SharedTimer>,
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

impl TableEntry {
    /// The first call index after `k` whose due time is after `now` (the grid point a late
    /// timer skips to); `None` when it is too far to represent.
    fn first_after(&self, k: u64, now: Instant) -> Option<u64> {
        let p = self.period?.as_nanos();
        let behind = now.checked_duration_since(self.due(k)?)?.as_nanos();
        let skip = u64::try_from(behind / p + 1).ok()?;
        k.checked_add(skip)
    }

    /// When call `k` is due; `None` when that is too far to represent (never).
    pub(crate) fn due(&self, k: u64) -> Option<Instant> {
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
/// [`HeapRec`]s (ties go to the timer set first; a record whose slot now holds another id is
/// stale).
pub(crate) struct Table {
    /// Due times count nanoseconds from here (the clock's time when the service started).
    base: Instant,
    pub(crate) heap: BinaryHeap<Reverse<HeapRec>>,
    /// Zero-period timers called in the last pass: due again at the next pass, at that pass's
    /// time. Kept out of the heap so that the thread never wakes up for them alone (it would
    /// spin a core): they run once per pass that something else causes.
    every_pass: Vec<HeapRec>,
    entries: Vec<Option<(u64, TableEntry)>>,
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
    /// How long after the earliest due time the thread waits, to make later ones in the same
    /// wake-up.
    pub(crate) batch: Duration,
}

/// A call due: its time (nanoseconds since the base) and its timer's id (set order), compared
/// in that order, so ties go to the timer set first. 24 bytes: a `u128` key would align the
/// record to 16 and make it 32, a third more memory for the heap's walks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct HeapRec {
    due: u64,
    id: u64,
    slot: u32,
}

impl Table {
    pub(crate) fn new(base: Instant) -> Self {
        Table {
            base,
            heap: BinaryHeap::new(),
            every_pass: Vec::new(),
            entries: Vec::new(),
            free: Vec::new(),
            next_id: 0,
            compacted_at: 0,
            pass: 0,
            cap: crate::timer::DEFAULT_CATCH_UP_CAP,
            dropped: 0,
            batch: super::DEFAULT_BATCH_WINDOW,
        }
    }

    /// The record of timer `id` in `slot`, due at `due` (saturating about 584 years after the
    /// base, far past anything representable as a due time anyway).
    fn rec(&self, due: Instant, id: u64, slot: u32) -> HeapRec {
        let ns = due.saturating_duration_since(self.base).as_nanos();
        let ns = u64::try_from(ns).unwrap_or(u64::MAX);
        HeapRec { due: ns, id, slot }
    }

    /// When a record is due.
    fn due_of(&self, rec: HeapRec) -> Instant {
        self.base + Duration::from_nanos(rec.due)
    }
}

impl Table {
    /// Stores a timer whose first call is due at `first` (`None`: never).
    pub(crate) fn insert(&mut self, entry: TableEntry, first: Option<Instant>) {
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
        let rec = self.rec(first, id, slot);
        self.heap.push(Reverse(rec));
    }

    /// Timers stored (cancelled ones included until their records are dropped).
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|&Reverse(rec)| self.due_of(rec))
    }

    fn remove(&mut self, slot: u32) {
        self.entries[slot as usize] = None;
        self.free.push(slot);
    }

    /// Pops every call due at `now`, in due order (ties: set order), and reschedules repeating
    /// timers by their catch-up policy: the same rules as the frame timers' (`timer/manager/fire.rs`).
    pub(crate) fn collect_due(&mut self, now: Instant, out: &mut Vec<(DueCall, Dispatch)>) {
        self.pass += 1;
        let pass = self.pass;
        for rec in self.every_pass.drain(..) {
            self.heap.push(Reverse(rec));
        }
        let now_rec = self.rec(now, u64::MAX, u32::MAX);
        while let Some(&Reverse(rec)) = self.heap.peek() {
            if rec > now_rec {
                break;
            }
            // A repeating timer's next record takes the place of this one: one walk down the
            // heap instead of a pop and a push.
            match self.make_call(rec, now, pass, out) {
                Some(next) => *self.heap.peek_mut().expect("peeked") = Reverse(next),
                None => drop(self.heap.pop()),
            }
        }
    }

    /// Makes the call of record `rec` (due at or before `now`) into `out`, unless its timer is
    /// gone or cancelled; returns the timer's next record when it repeats.
    fn make_call(
        &mut self,
        rec: HeapRec,
        now: Instant,
        pass: u64,
        out: &mut Vec<(DueCall, Dispatch)>,
    ) -> Option<HeapRec> {
        let (due, id, slot) = (self.due_of(rec), rec.id, rec.slot);
        let (eid, e) = self.entries[slot as usize].as_mut()?;
        if *eid != id {
            return None;
        }
        if !e.core.is_active() {
            self.remove(slot);
            return None;
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
            DueCall {
                due,
                id,
                core: Arc::clone(&e.core),
                last,
            },
            e.dispatch.clone(),
        ));
        if last {
            self.remove(slot);
            return None;
        }
        self.reschedule(slot, id, due, now)
    }

    /// The next record of a repeating timer that just made a call, by its catch-up policy
    /// when its next due time has already passed (`None`: it is not in the heap again, being
    /// due at every pass or never).
    fn reschedule(&mut self, slot: u32, id: u64, due: Instant, now: Instant) -> Option<HeapRec> {
        let (_, e) = self.entries[slot as usize].as_mut()?;
        let period = e.period.expect("a timer with calls left repeats");
        if period.is_zero() {
            // Once per pass: due again at the next one.
            let rec = self.rec(now, id, slot);
            self.every_pass.push(rec);
            return None;
        }
        let next = e.k + 1;
        // Call `next` is due one period after this one: the same instant as
        // `anchor + next × period`, since both are whole nanoseconds (no drift), without
        // the 128-bit arithmetic.
        let next_due = due.checked_add(period);
        if let Some(d) = next_due.filter(|&d| d > now) {
            e.k = next;
            return Some(self.rec(d, id, slot));
        }
        let on_time = next_due.is_none();
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
            Some(next) => Some(self.rec(next, id, slot)),
            None => {
                self.remove(slot);
                None
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
            .filter(|Reverse(rec)| {
                matches!(&entries[rec.slot as usize], Some((eid, _)) if *eid == rec.id)
            })
            .collect();
        self.compacted_at = self.heap.len();
    }
}
