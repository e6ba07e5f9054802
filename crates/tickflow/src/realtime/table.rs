//! The service's timer table: entries in a slab and their due times in a heap, and the one
//! operation on it that matters, collecting the calls due at a time and rescheduling the
//! timers that repeat.

use std::time::{Duration, Instant};

use super::dispatch::Dispatch;
use super::entry::{after_base, DueCall, SharedTimer, CANCELLED};
use super::heap::{DueHeap, HeapRec};
use super::sync::{Arc, Ordering};
use crate::time::CatchUp;

/// A timer's schedule, kept by the service: one cache line, because every call of every
/// timer reads it (at 1e4 timers the table outgrows the core's cache, and each line a call
/// touches here is a miss). Times are nanoseconds since the table's base.
///
/// The grid needs no anchor: call `k + 1` is due one period after call `k` (whole
/// nanoseconds, so no drift), and a late timer's next grid point is found from the due time
/// of the call it just made.
#[repr(align(64))]
pub(crate) struct TableEntry {
    core: Arc<SharedTimer>,
    dispatch: Dispatch,
    /// Set order, given by [`Table::insert`]; a heap record of another id is stale.
    id: u64,
    /// Nanoseconds between calls when `repeats` (saturated: a period too long to represent
    /// has no next call).
    period: u64,
    /// Calls left, when `limited`.
    left: u64,
    /// Calls made in the pass numbered `pass` (for the catch-up cap).
    pass: u64,
    burst: u32,
    limited: bool,
    repeats: bool,
    catch_up: CatchUp,
}

// One line, whatever the features (without rayon, `Dispatch` is smaller; loom's `Arc`, only
// in model tests, is larger).
#[cfg(not(tickflow_loom))]
const _: () = assert!(std::mem::size_of::<TableEntry>() == 64);

impl TableEntry {
    /// A timer's schedule: `period` between calls when it repeats, at most `times` calls.
    pub(crate) fn new(
        core: Arc<SharedTimer>,
        dispatch: Dispatch,
        period: Option<Duration>,
        times: Option<u64>,
        catch_up: CatchUp,
    ) -> Self {
        TableEntry {
            core,
            dispatch,
            id: 0,
            period: period.map_or(0, |p| u64::try_from(p.as_nanos()).unwrap_or(u64::MAX)),
            left: times.unwrap_or(0),
            pass: 0,
            burst: 0,
            limited: times.is_some(),
            repeats: period.is_some(),
            catch_up,
        }
    }

    /// The first grid point after `now`, for a timer whose call due at `due` is late by
    /// more than a period (`None`: too far to represent, never), and how many grid points
    /// it skips.
    fn grid_after(&self, due: u64, now: u64) -> (Option<u64>, u64) {
        let p = self.period;
        let skipped = (now - due) / p;
        let next = (skipped + 1)
            .checked_mul(p)
            .and_then(|d| d.checked_add(due));
        (next, skipped)
    }
}

/// A call of a pass between its two halves (see [`Table::collect_due`]).
#[derive(Copy, Clone)]
struct Made {
    rec: HeapRec,
    /// The timer's last call.
    last: bool,
    /// The timer has a call after this one (it stays in the table).
    stays: bool,
}

/// Everything behind the service's lock: entries in a slab, due times in a heap of
/// [`HeapRec`]s (ties go to the timer set first; a record whose slot now holds another id is
/// stale).
pub(crate) struct Table {
    /// Due times count nanoseconds from here (the clock's time when the service started).
    base: Instant,
    heap: DueHeap,
    /// Zero-period timers called in the last pass: due again at the next pass, at that pass's
    /// time. Kept out of the heap so that the thread never wakes up for them alone (it would
    /// spin a core): they run once per pass that something else causes.
    every_pass: Vec<HeapRec>,
    entries: Vec<Option<TableEntry>>,
    free: Vec<u32>,
    next_id: u64,
    /// Heap size after the last compaction: cancelled timers leave their records until they
    /// come due, so the heap is compacted when it doubles.
    compacted_at: usize,
    /// Passes so far (`collect_due` calls), for counting each timer's calls per pass.
    pass: u64,
    /// The calls of a pass, between its two halves (see `collect_due`); empty otherwise.
    made: Vec<Made>,
    /// Most calls one timer makes in one pass.
    pub(crate) cap: u64,
    /// Missed calls dropped by the cap.
    pub(crate) dropped: u64,
    /// The batching window: how late after the earliest due time the thread may wake, to make
    /// later ones in the same wake-up (its timer slack, see `run_thread`).
    pub(crate) batch: Duration,
}

impl Table {
    pub(crate) fn new(base: Instant) -> Self {
        Table {
            base,
            heap: DueHeap::default(),
            every_pass: Vec::new(),
            entries: Vec::new(),
            free: Vec::new(),
            next_id: 0,
            compacted_at: 0,
            pass: 0,
            made: Vec::new(),
            cap: crate::time::DEFAULT_CATCH_UP_CAP,
            dropped: 0,
            batch: super::DEFAULT_BATCH_WINDOW,
        }
    }

    /// Nanoseconds from the base to `t` (saturating about 584 years after the base, far past
    /// anything a timer can wait for).
    fn ns(&self, t: Instant) -> u64 {
        let ns = t.saturating_duration_since(self.base).as_nanos();
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

impl Table {
    /// Stores a timer whose first call is due at `first`.
    pub(crate) fn insert(&mut self, mut entry: TableEntry, first: Instant) {
        if self.heap.len() > 2 * self.compacted_at + 1024 {
            self.compact();
        }
        let id = self.next_id;
        self.next_id += 1;
        entry.id = id;
        let slot = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = Some(entry);
                i
            }
            None => {
                self.entries.push(Some(entry));
                (self.entries.len() - 1) as u32
            }
        };
        let due = self.ns(first);
        self.heap.push(HeapRec { due, id, slot });
    }

    /// Timers stored (cancelled ones included until their records are dropped).
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|rec| after_base(self.base, rec.due))
    }

    fn remove(&mut self, slot: u32) -> Option<TableEntry> {
        self.free.push(slot);
        self.entries[slot as usize].take()
    }

    /// Pops every call due at `now`, in due order (ties: set order), and reschedules repeating
    /// timers by their catch-up policy: the same rules as the frame timers' (`timer/manager/fire.rs`).
    ///
    /// In two passes. The first walks the heap and keeps each call's schedule, reading only
    /// the table's entries, and asks for each timer's shared state ahead (`prefetch`). The
    /// second checks each timer's state and takes a reference to it for its call. The
    /// reference is an atomic increment, which on x86 waits for every load before it: in one
    /// pass, the cache miss on each timer's shared state was paid alone, call after call.
    pub(crate) fn collect_due(&mut self, now: Instant, out: &mut Vec<(DueCall, Dispatch)>) {
        self.pass += 1;
        let pass = self.pass;
        for rec in self.every_pass.drain(..) {
            self.heap.push(rec);
        }
        let now = self.ns(now);
        let mut made = std::mem::take(&mut self.made);
        while let Some(rec) = self.heap.peek() {
            if rec.due > now {
                break;
            }
            // A repeating timer's next record takes the place of this one: one walk down the
            // heap instead of a pop and a push.
            match self.schedule_call(rec, now, pass, &mut made) {
                Some(next) => self.heap.replace_top(next),
                None => self.heap.pop(),
            }
        }
        for &m in &made {
            self.make_call(m, out);
        }
        made.clear();
        self.made = made; // keep the buffer
    }

    /// Keeps the schedule of the call of record `rec` (due at or before `now`) and lists it in
    /// `made`, unless the timer is gone; returns the timer's next record when it repeats. A
    /// timer cancelled meanwhile is found out by `make_call`; its next record is then stale,
    /// and dropped when it comes due.
    fn schedule_call(
        &mut self,
        rec: HeapRec,
        now: u64,
        pass: u64,
        made: &mut Vec<Made>,
    ) -> Option<HeapRec> {
        let e = self.entries[rec.slot as usize].as_mut()?;
        if e.id != rec.id {
            return None;
        }
        crate::prefetch::prefetch(&*e.core);
        if e.pass != pass {
            (e.pass, e.burst) = (pass, 0);
        }
        e.burst += 1;
        let last = if e.limited {
            e.left -= 1;
            e.left == 0
        } else {
            !e.repeats
        };
        let (next, stays) = if last {
            (None, false)
        } else if e.period == 0 {
            // Once per pass: due again at the next one, at that pass's time.
            self.every_pass.push(HeapRec { due: now, ..rec });
            (None, true)
        } else {
            let next = self.next_rec(rec, now);
            (next, next.is_some())
        };
        made.push(Made { rec, last, stays });
        next
    }

    /// A call listed by `schedule_call`, into `out`, unless its timer was cancelled (then it
    /// leaves the table). A timer with no call after this one leaves the table and hands its
    /// reference to the call.
    fn make_call(&mut self, Made { rec, last, stays }: Made, out: &mut Vec<(DueCall, Dispatch)>) {
        let Some(e) = self.entries[rec.slot as usize].as_ref() else {
            return; // cancelled, found at an earlier call of the same pass
        };
        if e.id != rec.id {
            return;
        }
        if !e.core.has_calls_left() {
            self.remove(rec.slot);
            return;
        }
        let dispatch = e.dispatch.clone();
        let core = if stays {
            Arc::clone(&e.core)
        } else {
            self.remove(rec.slot).expect("present").core
        };
        out.push((
            DueCall {
                base: self.base,
                due: rec.due,
                id: rec.id,
                core,
                last,
            },
            dispatch,
        ));
    }

    /// The next record of a repeating timer (of a non-zero period) that just made the call of
    /// `rec`, by its catch-up policy when its next due time has already passed (`None`: never).
    fn next_rec(&mut self, rec: HeapRec, now: u64) -> Option<HeapRec> {
        let e = self.entries[rec.slot as usize].as_ref()?;
        let at = |due| Some(HeapRec { due, ..rec });
        let next = rec.due.checked_add(e.period)?;
        if next > now {
            return at(next);
        }
        if !e.core.has_calls_left() {
            return None; // cancelled: no missed calls to count, and `make_call` removes it
        }
        match e.catch_up {
            CatchUp::Burst if u64::from(e.burst) < self.cap => at(next),
            CatchUp::Burst => {
                // The cap: the periods still due in this pass are dropped onto the grid.
                let (ahead, skipped) = e.grid_after(rec.due, now);
                self.dropped = self.dropped.saturating_add(skipped);
                at(ahead?)
            }
            CatchUp::Once => at(e.grid_after(rec.due, now).0?),
            // Late: the grid restarts one period after this pass.
            CatchUp::Delay => at(now.checked_add(e.period)?),
        }
    }

    /// Drops cancelled timers and their heap records.
    fn compact(&mut self) {
        for slot in 0..self.entries.len() {
            let dead = matches!(&self.entries[slot], Some(e) if e.core.state.load(Ordering::Acquire) == CANCELLED);
            if dead {
                self.remove(slot as u32);
            }
        }
        let entries = &self.entries;
        self.heap
            .retain(|rec| matches!(&entries[rec.slot as usize], Some(e) if e.id == rec.id));
        self.compacted_at = self.heap.len();
    }
}

#[cfg(all(test, not(tickflow_loom)))]
mod tests {
    use super::super::entry::{ServiceFlags, ACTIVE};
    use super::super::sync::{AtomicU8, Mutex};
    use super::*;

    fn timer(period: Option<Duration>, times: Option<u64>) -> TableEntry {
        let core = Arc::new(SharedTimer {
            state: AtomicU8::new(ACTIVE),
            callback: Mutex::new(Box::new(|| {})),
            flags: Arc::new(ServiceFlags::new()),
            on_cancel: None,
        });
        TableEntry::new(core, Dispatch::TimerThread, period, times, CatchUp::Burst)
    }

    /// Whatever ends a timer's calls (its count, a one-shot, a next call too far to
    /// represent, a cancel), it leaves the table with the pass that finds it out, and only
    /// its last call is marked last.
    #[test]
    fn a_timer_with_no_next_call_leaves_the_table() {
        let base = Instant::now();
        let ms = Duration::from_millis;
        let mut table = Table::new(base);
        table.insert(timer(Some(ms(10)), Some(2)), base + ms(10));
        table.insert(timer(None, None), base + ms(10));
        table.insert(timer(Some(Duration::MAX), None), base + ms(10));
        let cancelled = timer(Some(ms(10)), None);
        let core = Arc::clone(&cancelled.core);
        table.insert(cancelled, base + ms(10));
        table.insert(timer(Some(ms(10)), None), base + ms(10));
        assert!(core.cancel());
        let mut out = Vec::new();
        table.collect_due(base + ms(25), &mut out);
        let calls: Vec<_> = out.iter().map(|(c, _)| (c.id, c.due, c.last)).collect();
        let ns = |m: u64| m * 1_000_000;
        let expect = [
            (0, ns(10), false),
            (1, ns(10), true),
            (2, ns(10), false),
            (4, ns(10), false),
            (0, ns(20), true),
            (4, ns(20), false),
        ];
        assert_eq!(calls, expect);
        assert_eq!(table.len(), 1, "only the plain repeating timer stays");
        out.clear();
        table.collect_due(base + ms(30), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(table.len(), 1);
    }
}
