//! A wheel level: 64 slots of records and a mask of the non-empty ones, and where a due time
//! goes ([`position`]). The module note of `wheel/mod.rs` gives the algorithm and its rules.

use super::recs::{Rec, Recs};

/// Levels of a wheel: 11 of 64 slots cover the whole `u64` range.
pub(super) const LEVELS: usize = 11;
pub(super) const SLOT_BITS: u32 = 6;
pub(super) const SLOT_MASK: u64 = 63;
/// Levels up to this one hold only due times that share bits 32 and up with the slot start.
pub(super) const BLIND_LEVELS: usize = 5;

#[derive(Debug, Default)]
pub(super) struct WheelSlot {
    pub(super) recs: Recs,
    /// Records here made stale by a removal since the slot was filled or compacted.
    pub(super) stale: u32,
}

#[derive(Debug)]
pub(super) struct Level {
    pub(super) occupied: u64,
    pub(super) slots: [WheelSlot; 64],
    /// The largest record buffer an emptied slot of this level gave back, for the next slot
    /// that fills: a level-5 slot holds up to a third of all timers, and freeing its buffer
    /// when the clock enters it took half a millisecond of that frame (returning megabytes
    /// to the system), then growing the next one from nothing faulted the pages in again.
    spare: Recs,
}

impl Level {
    pub(super) fn new() -> Level {
        Level {
            occupied: 0,
            slots: std::array::from_fn(|_| WheelSlot::default()),
            spare: Recs::default(),
        }
    }

    /// Adds a record to slot `slot` of this level.
    #[inline]
    pub(super) fn push(&mut self, slot: usize, rec: Rec) {
        let s = &mut self.slots[slot];
        if s.recs.is_unallocated() {
            s.recs = std::mem::take(&mut self.spare);
        }
        s.recs.push(rec);
        self.occupied |= 1 << slot;
    }

    /// Empties slot `slot`, returning its records (hand the buffer back with `give_back`).
    pub(super) fn take(&mut self, slot: usize) -> Recs {
        self.occupied &= !(1 << slot);
        std::mem::take(&mut self.slots[slot]).recs
    }

    /// Empties slot `slot`, keeping its buffer if it is the largest.
    pub(super) fn empty(&mut self, slot: usize) {
        let recs = self.take(slot);
        self.give_back(recs);
    }

    /// Keeps an emptied slot's buffer for the next slot that fills, if it is the largest.
    pub(super) fn give_back(&mut self, mut recs: Recs) {
        if recs.capacity() > self.spare.capacity() {
            recs.clear();
            self.spare = recs;
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        let recs: usize = self.slots.iter().map(|s| s.recs.heap_bytes()).sum();
        recs + self.spare.heap_bytes()
    }
}

/// The level and slot of a record due at `due` while the wheel is at `elapsed`.
#[inline]
pub(super) fn position(elapsed: u64, due: u64) -> (usize, usize) {
    let masked = (elapsed ^ due) | SLOT_MASK;
    let significant = 63 - masked.leading_zeros();
    let level = (significant / SLOT_BITS) as usize;
    let slot = ((due >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize;
    (level, slot)
}
