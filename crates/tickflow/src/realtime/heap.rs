//! The table's due times: a min-heap of [`HeapRec`]s, four children per node, whose one hot
//! operation, a repeating timer's next call taking the place of the call just made, walks
//! the hole to the bottom and the record back up.
//!
//! `std`'s `BinaryHeap` replaces its top by sifting the new record down, two comparisons per
//! level; a timer's next call lands near the bottom (it is due a whole period later, after
//! most of the heap), so walking the hole down along the earliest child and the record a step
//! or two up does fewer comparisons, and they are the branches a processor cannot predict.
//! Each step down waits for the comparison before it: four children halve the steps.
//! Measured on the real-time benchmark's 1e4 timers: BENCHMARKS.md, "a call's bookkeeping"
//! and "a heap of four".

/// A call due: its time (nanoseconds since the table's base) and its timer's id (set order),
/// compared in that order, so ties go to the timer set first; `slot` is where the timer's
/// entry is. 24 bytes: a `u128` key would align the record to 16 and make it 32, a third more
/// memory for the heap's walks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeapRec {
    pub(super) due: u64,
    pub(super) id: u64,
    pub(super) slot: u32,
}

impl HeapRec {
    /// The order key: due time, then set order. Ids are unique, so the slot never decides.
    fn key(self) -> u128 {
        (u128::from(self.due) << 64) | u128::from(self.id)
    }

    fn before(self, other: HeapRec) -> bool {
        self.key() < other.key()
    }
}

/// Children per node: four halve the levels a record walks (7 instead of 13 at 1e4 timers),
/// and each level's two pairs are compared side by side, so the walk's chain of dependent
/// loads is half as long; a node's children are 96 bytes, two cache lines fetched together.
const ARITY: usize = 4;
// `replace_top` compares its children as two pairs: it is written for four.
const _: () = assert!(ARITY == 4);

/// A min-heap of due records (the earliest first), four children per node.
#[derive(Default)]
pub(crate) struct DueHeap {
    recs: Vec<HeapRec>,
}

impl DueHeap {
    pub(crate) fn len(&self) -> usize {
        self.recs.len()
    }

    /// The earliest record.
    pub(crate) fn peek(&self) -> Option<HeapRec> {
        self.recs.first().copied()
    }

    pub(crate) fn push(&mut self, rec: HeapRec) {
        self.recs.push(rec);
        self.sift_up(self.recs.len() - 1, rec);
    }

    /// Removes the earliest record.
    pub(crate) fn pop(&mut self) {
        if let Some(last) = self.recs.pop() {
            if !self.recs.is_empty() {
                self.replace_top(last);
            }
        }
    }

    /// Puts `rec` in the place of the earliest record (which must exist): the hole goes down
    /// to the bottom along the earliest child, and `rec` comes up from there.
    pub(crate) fn replace_top(&mut self, rec: HeapRec) {
        let recs = &mut self.recs;
        let n = recs.len();
        let mut hole = 0;
        // All four children present: the earliest is picked by arithmetic, not a branch (which
        // way the hole goes is a coin toss, and a mispredicted branch costs more than the
        // comparisons); the two pairs' comparisons do not wait for each other.
        while ARITY * hole + ARITY < n {
            let first = ARITY * hole + 1;
            let ab = first + usize::from(recs[first + 1].before(recs[first]));
            let cd = first + 2 + usize::from(recs[first + 3].before(recs[first + 2]));
            let child = if recs[cd].before(recs[ab]) { cd } else { ab };
            recs[hole] = recs[child];
            hole = child;
        }
        let first = ARITY * hole + 1;
        if first < n {
            let child = (first..n.min(first + ARITY))
                .reduce(|best, c| if recs[c].before(recs[best]) { c } else { best })
                .expect("one child at least");
            recs[hole] = recs[child];
            hole = child;
        }
        self.sift_up(hole, rec);
    }

    /// Puts `rec` in the hole at `i` or above it.
    fn sift_up(&mut self, mut i: usize, rec: HeapRec) {
        let recs = &mut self.recs;
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !rec.before(recs[parent]) {
                break;
            }
            recs[i] = recs[parent];
            i = parent;
        }
        recs[i] = rec;
    }

    /// Keeps the records for which `keep` is true, in a valid heap order.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&HeapRec) -> bool) {
        self.recs.retain(keep);
        self.recs.sort_unstable_by_key(|r| r.key());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a sorted vector: pushes, pops and top replacements in any order leave the
        /// same earliest record.
        #[test]
        fn matches_a_sorted_vector(ops in prop::collection::vec((0u8..3, 0u64..50), 1..200)) {
            let mut heap = DueHeap::default();
            let mut model: Vec<HeapRec> = Vec::new();
            for (id, (op, due)) in ops.into_iter().enumerate() {
                let rec = HeapRec { due, id: id as u64, slot: id as u32 };
                match op {
                    0 => { heap.push(rec); model.push(rec); }
                    1 if !model.is_empty() => { heap.pop(); model.remove(0); }
                    2 if !model.is_empty() => { heap.replace_top(rec); model[0] = rec; }
                    _ => {}
                }
                model.sort_unstable_by_key(|r| r.key());
                prop_assert_eq!(heap.peek(), model.first().copied());
                prop_assert_eq!(heap.len(), model.len());
            }
        }
    }
}
