//! The callbacks by position ([`Bodies`]): serial ones in a table of their own, which the fast
//! walks read in the order of the check records, parallel ones beside it.
//!
//! Why two tables: a position holds one callback of either kind, and an `Option<Body>` of the
//! two is 24 bytes (a serial callback's 16 and a tag), where an `Option` of a serial callback
//! alone is 16 (its table pointer is never null). The fast walk reads the serial table once
//! per function each frame: at 1,000 functions the check records, the callbacks and the slot
//! numbers were 44 KB, more than this machine's 32 KB L1; with 16-byte records they are 36 KB,
//! and at 100,000 a frame streams a third less. Parallel callbacks (heavier calls, taken out
//! for their batch) are read only on the full path.

use std::ops::Range;

use crate::tick::body::{Body, ParallelFn, SerialFn};

/// The callbacks of a scheduler's tick functions, by position.
pub(crate) struct Bodies<C> {
    /// Serial callbacks (`None` for a free position or a parallel function's).
    serial: Vec<Option<SerialFn<C>>>,
    /// Parallel callbacks, as long as the last position that had one (`None` for a free
    /// position, a serial function's, or a parallel callback out for its batch).
    parallel: Vec<Option<ParallelFn<C>>>,
}

impl<C> Default for Bodies<C> {
    fn default() -> Self {
        Bodies {
            serial: Vec::new(),
            parallel: Vec::new(),
        }
    }
}

impl<C> Bodies<C> {
    /// Puts `body` at position `p` (`None` empties it); returns what was there. The serial
    /// table reaches every position an event named, so that a lane's range is in it.
    pub(super) fn replace(&mut self, p: u32, body: Option<Body<C>>) -> Option<Body<C>> {
        let i = p as usize;
        let old = self.take(p);
        let serial = at(&mut self.serial, i);
        match body {
            Some(Body::Serial(f)) => *serial = Some(f),
            Some(Body::Parallel(f)) => *at(&mut self.parallel, i) = Some(f),
            None => {}
        }
        old
    }

    /// Takes the callback at `p`, of either kind.
    pub(super) fn take(&mut self, p: u32) -> Option<Body<C>> {
        let i = p as usize;
        if let Some(f) = self.serial.get_mut(i).and_then(Option::take) {
            return Some(Body::Serial(f));
        }
        self.parallel
            .get_mut(i)
            .and_then(Option::take)
            .map(Body::Parallel)
    }

    /// The serial callback at `p`, if one is there.
    #[inline]
    pub(super) fn serial_at(&mut self, p: usize) -> Option<&mut SerialFn<C>> {
        self.serial.get_mut(p).and_then(Option::as_mut)
    }

    /// The serial callbacks of positions `range` (a laid-out lane), `None` if the table does
    /// not reach so far.
    #[inline]
    pub(super) fn serial_range(
        &mut self,
        range: Range<usize>,
    ) -> Option<&mut [Option<SerialFn<C>>]> {
        self.serial.get_mut(range)
    }

    /// The record of position `p`'s serial callback, to prefetch.
    #[inline]
    pub(super) fn serial_record(&self, p: usize) -> Option<&Option<SerialFn<C>>> {
        self.serial.get(p)
    }

    /// Takes the parallel callback at `p` out for its batch.
    pub(super) fn take_parallel(&mut self, p: u32) -> Option<ParallelFn<C>> {
        self.parallel.get_mut(p as usize).and_then(Option::take)
    }

    /// Returns a parallel callback taken out for a batch to `p`, if nothing took its place
    /// there meanwhile (else it is dropped with the caller's value).
    pub(super) fn put_back_parallel(&mut self, p: u32, f: ParallelFn<C>) {
        let i = p as usize;
        let serial_there = self.serial.get(i).is_some_and(Option::is_some);
        if let (Some(slot @ None), false) = (self.parallel.get_mut(i), serial_there) {
            *slot = Some(f);
        }
    }

    /// Moves every callback to its new position: position `i` takes what position `from[i]`
    /// held. Every callback must be in place (none out for a batch).
    pub(super) fn reorder(&mut self, from: &[u32]) {
        self.serial = moved(&mut self.serial, from);
        if !self.parallel.is_empty() {
            self.parallel = moved(&mut self.parallel, from);
        }
    }
}

/// Entry `i` of `table`, grown to reach it.
fn at<T>(table: &mut Vec<Option<T>>, i: usize) -> &mut Option<T> {
    if table.len() <= i {
        table.resize_with(i + 1, || None);
    }
    &mut table[i]
}

/// `table` in a new order: entry `i` is what entry `from[i]` held.
fn moved<T>(table: &mut Vec<Option<T>>, from: &[u32]) -> Vec<Option<T>> {
    let mut old = std::mem::take(table);
    let new = (from.iter())
        .map(|&p| old.get_mut(p as usize).and_then(Option::take))
        .collect();
    debug_assert!(old.iter().all(Option::is_none), "every callback moved");
    new
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer::Callback;

    fn serial() -> Body<u32> {
        Body::Serial(Callback::new(|n: &mut u32, _| *n += 1))
    }

    fn parallel() -> Body<u32> {
        Body::Parallel(Box::new(|_, _| {}))
    }

    #[test]
    fn each_position_holds_one_callback_of_either_kind() {
        let mut b = Bodies::default();
        assert!(b.replace(3, Some(parallel())).is_none());
        assert!(b.serial_at(3).is_none());
        let old = b.replace(3, Some(serial()));
        assert!(
            matches!(old, Some(Body::Parallel(_))),
            "the parallel one left"
        );
        assert!(b.take_parallel(3).is_none());
        assert!(b.serial_at(3).is_some());
        assert!(matches!(b.take(3), Some(Body::Serial(_))));
        assert!(b.take(3).is_none());
    }

    #[test]
    fn a_parallel_callback_goes_back_only_to_its_empty_place() {
        let mut b = Bodies::default();
        b.replace(1, Some(parallel()));
        let f = b.take_parallel(1).expect("there");
        b.replace(1, Some(serial())); // its place was taken meanwhile
        b.put_back_parallel(1, f);
        assert!(b.take_parallel(1).is_none(), "dropped, not put back");
        b.replace(1, Some(parallel()));
        let f = b.take_parallel(1).expect("there");
        b.put_back_parallel(1, f);
        assert!(b.take_parallel(1).is_some(), "back in place");
    }

    #[test]
    fn reorder_moves_both_kinds() {
        let mut b = Bodies::default();
        b.replace(0, Some(serial()));
        b.replace(1, Some(parallel()));
        b.replace(2, Some(serial()));
        b.reorder(&[1, 2, 0]);
        assert!(matches!(b.take(0), Some(Body::Parallel(_))));
        assert!(matches!(b.take(1), Some(Body::Serial(_))));
        assert!(matches!(b.take(2), Some(Body::Serial(_))));
    }
}
