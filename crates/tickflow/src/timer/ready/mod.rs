//! The ready queue: calls that are due, in exact global order.
//!
//! The wheel hands out due timers in no particular order; this queue puts them in the order of
//! rule 4 of the [timer module](super): by due time, ties by set order (`seq`). Each clock has a
//! sorted run and a binary heap: the calls the wheel hands out in a tick are collected and
//! sorted once (a sort of a few thousand records is several times cheaper than as many heap
//! pops, which were a quarter of a busy frame at 1e6 timers; the sort is of packed integers,
//! `packed.rs`), and calls added while the tick
//! runs (a looping timer still due, a budget's leftovers next tick) go to the heap; a clock's
//! head is the earlier of the two. Heads of different clocks are compared by *where their due time falls within the span the
//! tick covered on their clock* (an exact rational comparison), so a Game timer due halfway
//! through a frame runs before a Real timer due at its end, whatever the time dilation.
//!
//! Records are removed lazily: clearing or pausing a ready timer leaves its record here, and
//! the record is skipped when popped because the slot's generation or ticket no longer matches.
//! Records left when a tick stops early (the fire budget, a panic) stay and run first next tick.
//! Records added while a tick is running calls go to `deferred` and join at the next tick, so a
//! timer set from a callback never fires in the tick that set it.

mod packed;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use self::packed::sort_by_due;
use super::slot::{SlotState, TimerEntry, TimerSlots};
use crate::time::Domain;

/// One due call.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    due: u64,
    seq: u32,
    idx: u32,
    gen: u32,
    ticket: u16,
    domain: Domain,
    /// Calls this timer already made earlier in the same burst.
    burst: u32,
    /// Low bits of the frame clock when `burst` was counted: a burst does not carry over
    /// into the next tick (after a fire budget stopped it).
    tick: u32,
}

impl Call {
    /// The timer's slot.
    #[inline]
    pub(crate) fn idx(&self) -> u32 {
        self.idx
    }

    /// The due time this call was made for.
    #[inline]
    pub(crate) fn due(&self) -> u64 {
        self.due
    }

    /// The generation of the timer the call belongs to.
    #[inline]
    pub(crate) fn gen(&self) -> u32 {
        self.gen
    }

    #[inline]
    pub(crate) fn domain(&self) -> Domain {
        self.domain
    }

    /// Calls its timer already made earlier in this burst, if the burst is this tick's
    /// (`frame`: the tick's number); a burst stopped by a fire budget starts over.
    #[inline]
    pub(crate) fn burst_in(&self, frame: u64) -> u32 {
        if self.tick == frame as u32 {
            self.burst
        } else {
            0
        }
    }

    /// Marks timer `idx` ready (a new ticket makes older records of it stale) and makes its
    /// queue record.
    pub(crate) fn make<C>(slots: &mut TimerSlots<C>, idx: u32, burst: u32, tick: u32) -> Call {
        let e = slots.at_mut(idx);
        let ticket = e.make_ready();
        Call {
            due: e.due(),
            seq: e.seq(),
            idx,
            gen: e.gen(),
            ticket,
            domain: e.flags().domain(),
            burst,
            tick,
        }
    }

    /// The order of calls of one clock: due time, then set order.
    fn key(&self) -> (u64, u32) {
        (self.due, self.seq)
    }

    /// The entry this record describes, if the record is still current: same generation,
    /// still ready, same ticket (not cleared, paused or re-queued since).
    pub(crate) fn current<C>(self, slots: &TimerSlots<C>) -> Option<&TimerEntry<C>> {
        slots
            .get(self.idx, self.gen)
            .filter(|e| e.state() == SlotState::Ready && e.ticket() == self.ticket)
    }
}

/// Heap order: earliest `(due, seq)` on top.
#[derive(Debug, PartialEq, Eq)]
struct ByDue(Call);

impl Ord for ByDue {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key().cmp(&self.0.key())
    }
}

impl PartialOrd for ByDue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The span each clock covered in the current tick.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct TickSpan {
    prev: [u64; 3],
    now: [u64; 3],
    /// The number of the tick (the scheduler's frame number): paused frames count here even
    /// when they do not move the `Frames` clock.
    frame: u64,
}

impl TickSpan {
    /// Each clock's time at the end of the tick.
    #[inline]
    pub(crate) fn now(&self) -> [u64; 3] {
        self.now
    }

    /// One clock's time at the end of the tick.
    #[inline]
    pub(crate) fn now_of(&self, domain: Domain) -> u64 {
        self.now[domain.index()]
    }

    /// The tick's number.
    #[inline]
    pub(crate) fn frame(&self) -> u64 {
        self.frame
    }

    /// The tick's end and start, `(now, prev)`: what `Clocks` is rebuilt from.
    pub(crate) fn ends(&self) -> ([u64; 3], [u64; 3]) {
        (self.now, self.prev)
    }

    /// The next tick: from where the last ended to `now`, numbered `frame`.
    pub(crate) fn advance(&mut self, now: [u64; 3], frame: u64) {
        self.prev = self.now;
        self.now = now;
        self.frame = frame;
    }

    /// A restored manager's time: a tick of no length ending at `now`.
    pub(crate) fn stand_at(&mut self, now: [u64; 3], frame: u64) {
        (self.prev, self.now, self.frame) = (now, now, frame);
    }

    /// The fraction of the tick at which `due` falls on `domain`'s clock, as `(num, den)`.
    ///
    /// A clock that did not move counts as one flick long, so what is due now sits at its end
    /// (1) and late calls before it, in due order. The map is increasing in `due` for each
    /// clock, which keeps the order total (and the same-clock shortcut in `order` valid).
    fn fraction(&self, domain: Domain, due: u64) -> (i128, u128) {
        let d = domain.index();
        let off = i128::from(due) - i128::from(self.prev[d]);
        match self.now[d] - self.prev[d] {
            0 => (off + 1, 1),
            len => (off, u128::from(len)),
        }
    }

    /// Compares two due calls by their place in the tick.
    pub(crate) fn order(&self, a: &Call, b: &Call) -> Ordering {
        let place = if a.domain == b.domain {
            a.due.cmp(&b.due)
        } else {
            let (na, da) = self.fraction(a.domain, a.due);
            let (nb, db) = self.fraction(b.domain, b.due);
            // Compare na/da with nb/db without overflow: |n| <= 2^64 and d < 2^64.
            match (na < 0, nb < 0) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => (na.unsigned_abs() * db).cmp(&(nb.unsigned_abs() * da)),
                (true, true) => (nb.unsigned_abs() * da).cmp(&(na.unsigned_abs() * db)),
            }
        };
        place.then(a.seq.cmp(&b.seq)).then(a.domain.cmp(&b.domain))
    }
}

/// One clock's due calls: a sorted run (read from `next` on) and a heap.
#[derive(Debug, Default)]
struct DomainQueue {
    run: Vec<Call>,
    next: usize,
    heap: BinaryHeap<ByDue>,
}

impl DomainQueue {
    /// No call left (a run read to its end is cleared).
    #[inline]
    fn is_empty(&self) -> bool {
        self.run.is_empty() && self.heap.is_empty()
    }

    /// Whether the next call is the heap's (`None`: no call left).
    fn next_in_heap(&self) -> Option<bool> {
        match (self.run.get(self.next), self.heap.peek()) {
            (Some(r), Some(ByDue(h))) => Some(h.key() < r.key()),
            (Some(_), None) => Some(false),
            (None, h) => h.map(|_| true),
        }
    }

    fn head(&self) -> Option<&Call> {
        if self.next_in_heap()? {
            self.heap.peek().map(|ByDue(h)| h)
        } else {
            self.run.get(self.next)
        }
    }

    fn pop(&mut self) -> Option<Call> {
        if self.next_in_heap()? {
            return self.heap.pop().map(|ByDue(c)| c);
        }
        let call = self.run[self.next];
        self.next += 1;
        if self.next == self.run.len() {
            self.run.clear(); // keeps its buffer for the next tick
            self.next = 0;
        }
        Some(call)
    }
}

/// Due calls of all three clocks.
#[derive(Debug, Default)]
pub(crate) struct ReadyQueue {
    clocks: [DomainQueue; 3],
    /// Calls the wheels handed out in this tick, per clock, until `seal`.
    batch: [Vec<Call>; 3],
    deferred: Vec<Call>,
    /// The sort's scratch (`packed.rs`), kept between ticks.
    packed: Vec<u64>,
}

impl ReadyQueue {
    pub(crate) fn push(&mut self, call: Call) {
        self.clocks[call.domain.index()].heap.push(ByDue(call));
    }

    /// Adds a call the wheel handed out; it joins the queue at [`seal`](Self::seal).
    #[inline]
    pub(crate) fn collect(&mut self, call: Call) {
        self.batch[call.domain.index()].push(call);
    }

    /// Sorts the calls collected for clock `d` into its run (or its heap when a run from an
    /// earlier tick is still being read, which only a fire budget or a panic leaves).
    pub(crate) fn seal(&mut self, d: usize) {
        let (batch, clock) = (&mut self.batch[d], &mut self.clocks[d]);
        if batch.is_empty() {
            return;
        }
        if clock.run.is_empty() {
            sort_by_due(batch, &mut clock.run, &mut self.packed, Call::key);
            batch.clear();
            clock.next = 0;
        } else {
            clock.heap.extend(batch.drain(..).map(ByDue));
        }
    }

    pub(crate) fn defer(&mut self, call: Call) {
        self.deferred.push(call);
    }

    /// Moves the deferred calls into the heaps (at the start of a tick).
    pub(crate) fn admit_deferred(&mut self) {
        for call in std::mem::take(&mut self.deferred) {
            self.push(call);
        }
    }

    /// The slot of the call `k` places after the next one of clock `d`'s sorted run, if
    /// there is one: its entry can be read ahead, so that its cache miss is over by the time
    /// the call is made.
    #[inline]
    pub(crate) fn ahead(&self, d: usize, k: usize) -> Option<u32> {
        let clock = &self.clocks[d];
        clock.run.get(clock.next + k).map(|c| c.idx)
    }

    /// The earliest call of all clocks, removed.
    #[inline]
    pub(crate) fn pop(&mut self, span: &TickSpan) -> Option<Call> {
        // Most ticks have calls on one clock only: then its next call is the earliest,
        // without comparing places in the tick (a third of a call's cost at 1e4 timers).
        let [a, b, c] = &mut self.clocks;
        match (a.is_empty(), b.is_empty(), c.is_empty()) {
            (true, true, true) => return None,
            (false, true, true) => return a.pop(),
            (true, false, true) => return b.pop(),
            (true, true, false) => return c.pop(),
            _ => {}
        }
        let mut best: Option<&Call> = None;
        for clock in &self.clocks {
            if let Some(head) = clock.head() {
                if best.is_none_or(|b| span.order(head, b) == Ordering::Less) {
                    best = Some(head);
                }
            }
        }
        let domain = best?.domain;
        self.clocks[domain.index()].pop()
    }

    /// Rewrites every record (live ones get `seq` from `new_seq`, stale ones are dropped);
    /// used when set-order numbers are compacted.
    pub(crate) fn rebuild(&mut self, mut new_seq: impl FnMut(&Call) -> Option<u32>) {
        for clock in &mut self.clocks {
            // The run joins the heap: new numbers keep the order, but not necessarily the
            // run's sortedness against calls dropped from it.
            let run = std::mem::take(&mut clock.run);
            let calls = (std::mem::take(&mut clock.heap).into_iter())
                .chain(run.into_iter().skip(clock.next).map(ByDue));
            clock.next = 0;
            clock.heap = calls
                .filter_map(|ByDue(mut c)| {
                    c.seq = new_seq(&c)?;
                    Some(ByDue(c))
                })
                .collect();
        }
        self.deferred.retain_mut(|c| match new_seq(c) {
            Some(s) => {
                c.seq = s;
                true
            }
            None => false,
        });
    }

    pub(crate) fn clear(&mut self) {
        for clock in &mut self.clocks {
            clock.heap.clear();
            clock.run.clear();
            clock.next = 0;
        }
        for batch in &mut self.batch {
            batch.clear();
        }
        self.deferred.clear();
    }

    /// Records held (live and stale), for memory accounting.
    pub(crate) fn capacity_bytes(&self) -> usize {
        let calls: usize = (self.clocks.iter())
            .map(|c| c.heap.capacity() + c.run.capacity())
            .chain(self.batch.iter().map(Vec::capacity))
            .sum();
        (calls + self.deferred.capacity()) * std::mem::size_of::<Call>()
            + self.packed.capacity() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(domain: Domain, due: u64, seq: u32) -> Call {
        Call {
            due,
            seq,
            idx: seq,
            gen: 1,
            ticket: 0,
            domain,
            burst: 0,
            tick: 0,
        }
    }

    #[test]
    fn clocks_are_merged_by_their_place_in_the_tick() {
        // Game went 100 -> 200, Real 100 -> 300 (dilation 0.5), Frames 4 -> 5.
        let span = TickSpan {
            prev: [100, 100, 4],
            now: [200, 300, 5],
            frame: 5,
        };
        let mut q = ReadyQueue::default();
        q.push(call(Domain::Frames, 5, 0)); // at the end
        q.push(call(Domain::Real, 200, 1)); // halfway
        q.push(call(Domain::Game, 125, 2)); // a quarter in
        q.push(call(Domain::Game, 150, 3)); // halfway, set after the Real one
        q.push(call(Domain::Real, 50, 4)); // late from an earlier tick
        let order: Vec<u32> = std::iter::from_fn(|| q.pop(&span)).map(|c| c.seq).collect();
        assert_eq!(order, vec![4, 2, 1, 3, 0]);
    }

    #[test]
    fn sorted_runs_and_heaps_give_one_order() {
        let span = TickSpan {
            prev: [0, 0, 0],
            now: [1_000, 1_000, 1],
            frame: 1,
        };
        let mut rng = crate::test_rng::Rng(0x2545_f491_4f6c_dd1d);
        let mut rnd = move |n: u64| rng.below(n);
        let mut q = ReadyQueue::default();
        let mut want = vec![];
        let mut seq = 0;
        for round in 0..50 {
            // A tick's batch from the wheel, in no order, sealed into the run (or into the
            // heap while a run is left from an earlier round)...
            for _ in 0..rnd(40) {
                let c = call(Domain::Game, rnd(100), seq);
                seq += 1;
                q.collect(c);
                want.push(c);
            }
            q.seal(Domain::Game.index());
            // ...and calls pushed while it runs.
            for _ in 0..rnd(10) {
                let c = call(Domain::Game, rnd(100), seq);
                seq += 1;
                q.push(c);
                want.push(c);
            }
            want.sort_by_key(Call::key);
            // Pop part of it (a fire budget), or all of it.
            let n = if round % 3 == 0 {
                want.len()
            } else {
                rnd(20) as usize
            };
            for _ in 0..n.min(want.len()) {
                let got = q.pop(&span).expect("a call is left");
                assert_eq!(got, want.remove(0), "round {round}");
            }
        }
        for c in want {
            assert_eq!(q.pop(&span), Some(c));
        }
        assert_eq!(q.pop(&span), None);
    }

    #[test]
    fn a_clock_that_did_not_move_puts_due_calls_at_the_end() {
        let span = TickSpan {
            prev: [100, 100, 4],
            now: [100, 200, 5],
            frame: 5,
        };
        let mut q = ReadyQueue::default();
        q.push(call(Domain::Game, 100, 0));
        q.push(call(Domain::Real, 150, 1));
        q.push(call(Domain::Game, 90, 2));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop(&span)).map(|c| c.seq).collect();
        assert_eq!(order, vec![2, 1, 0]);
    }
}
