//! The ready queue: calls that are due, in exact global order.
//!
//! The wheel hands out due timers in no particular order; this queue puts them in the order of
//! rule 4 of the [timer module](super): by due time, ties by set order (`seq`). Each clock has its own binary heap;
//! heads of different clocks are compared by *where their due time falls within the span the
//! tick covered on their clock* (an exact rational comparison), so a Game timer due halfway
//! through a frame runs before a Real timer due at its end, whatever the time dilation.
//!
//! Records are removed lazily: clearing or pausing a ready timer leaves its record here, and
//! the record is skipped when popped because the slot's generation or ticket no longer matches.
//! Records left when a tick stops early (the fire budget, a panic) stay and run first next tick.
//! Records added while a tick is running calls go to `deferred` and join at the next tick, so a
//! timer set from a callback never fires in the tick that set it.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::slot::{Entry, Slots, State};
use crate::time::Domain;

/// One due call.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    pub(crate) due: u64,
    pub(crate) seq: u32,
    pub(crate) idx: u32,
    pub(crate) gen: u32,
    pub(crate) ticket: u16,
    pub(crate) domain: Domain,
    /// Calls this timer already made earlier in the same burst.
    pub(crate) burst: u32,
    /// Low bits of the frame clock when `burst` was counted: a burst does not carry over
    /// into the next tick (after a fire budget stopped it).
    pub(crate) tick: u32,
}

impl Call {
    /// Marks timer `idx` ready (a new ticket makes older records of it stale) and makes its
    /// queue record.
    pub(crate) fn make<C>(slots: &mut Slots<C>, idx: u32, burst: u32, tick: u32) -> Call {
        let e = slots.at_mut(idx);
        e.state = State::Ready;
        e.ticket = e.ticket.wrapping_add(1);
        Call {
            due: e.due,
            seq: e.seq,
            idx,
            gen: e.gen,
            ticket: e.ticket,
            domain: e.flags.domain(),
            burst,
            tick,
        }
    }

    /// The entry this record describes, if the record is still current: same generation,
    /// still ready, same ticket (not cleared, paused or re-queued since).
    pub(crate) fn current<C>(self, slots: &Slots<C>) -> Option<&Entry<C>> {
        slots
            .get(self.idx, self.gen)
            .filter(|e| e.state == State::Ready && e.ticket == self.ticket)
    }
}

/// Heap order: earliest `(due, seq)` on top.
#[derive(Debug, PartialEq, Eq)]
struct ByDue(Call);

impl Ord for ByDue {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.0.due, other.0.seq).cmp(&(self.0.due, self.0.seq))
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
    pub(crate) prev: [u64; 3],
    pub(crate) now: [u64; 3],
}

impl TickSpan {
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

/// Due calls of all three clocks.
#[derive(Debug, Default)]
pub(crate) struct ReadyQueue {
    heaps: [BinaryHeap<ByDue>; 3],
    deferred: Vec<Call>,
}

impl ReadyQueue {
    pub(crate) fn push(&mut self, call: Call) {
        self.heaps[call.domain.index()].push(ByDue(call));
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

    /// The earliest call of all clocks, removed.
    pub(crate) fn pop(&mut self, span: &TickSpan) -> Option<Call> {
        let mut best: Option<&Call> = None;
        for heap in &self.heaps {
            if let Some(ByDue(head)) = heap.peek() {
                if best.is_none_or(|b| span.order(head, b) == Ordering::Less) {
                    best = Some(head);
                }
            }
        }
        let domain = best?.domain;
        self.heaps[domain.index()].pop().map(|ByDue(c)| c)
    }

    /// Rewrites every record (live ones get `seq` from `new_seq`, stale ones are dropped);
    /// used when set-order numbers are compacted.
    pub(crate) fn rebuild(&mut self, mut new_seq: impl FnMut(&Call) -> Option<u32>) {
        for heap in &mut self.heaps {
            let calls = std::mem::take(heap).into_vec();
            *heap = calls
                .into_iter()
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
        for heap in &mut self.heaps {
            heap.clear();
        }
        self.deferred.clear();
    }

    /// Records held (live and stale), for memory accounting.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.heaps
            .iter()
            .map(|h| h.capacity() * std::mem::size_of::<ByDue>())
            .sum::<usize>()
            + self.deferred.capacity() * std::mem::size_of::<Call>()
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
    fn a_clock_that_did_not_move_puts_due_calls_at_the_end() {
        let span = TickSpan {
            prev: [100, 100, 4],
            now: [100, 200, 5],
        };
        let mut q = ReadyQueue::default();
        q.push(call(Domain::Game, 100, 0));
        q.push(call(Domain::Real, 150, 1));
        q.push(call(Domain::Game, 90, 2));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop(&span)).map(|c| c.seq).collect();
        assert_eq!(order, vec![2, 1, 0]);
    }
}
