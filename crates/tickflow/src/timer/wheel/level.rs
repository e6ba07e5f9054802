//! A wheel level: 64 slots of records and a mask of the non-empty ones, and where a due time
//! goes ([`position`]). The module note of `wheel/mod.rs` gives the algorithm and its rules.

use super::recs::{Rec, Recs};

/// Levels of a wheel: 11 of 64 slots cover the whole `u64` range.
pub(super) const LEVELS: usize = 11;
pub(super) const SLOT_BITS: u32 = 6;
pub(super) const SLOT_MASK: u64 = 63;
/// Levels up to this one hold only due times that share bits 32 and up with the slot start.
pub(super) const BLIND_LEVELS: usize = 5;
/// An emptied slot keeps a buffer of at most this many records for its next fill. With few
/// timers per slot, every slot that filled allocated and grew a buffer, and freed it when it
/// emptied: 6,000 `malloc`s and `free`s for 10,000 one-shots, a fifth of W1's instructions
/// at 1e4. Bounded so that a wheel's kept buffers stay small (41 levels, staged ones
/// included, of 64 slots: at most 1.3 MiB, and only where slots filled that much).
const KEEP: usize = 64;

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
    /// Whole blocks (`recs.rs`) of the buffers given back beside the spare, for the slots
    /// that grow past their first block: blocks are made only when this is empty.
    pool: Vec<Vec<Rec>>,
}

impl Level {
    pub(super) fn new() -> Level {
        Level {
            occupied: 0,
            slots: std::array::from_fn(|_| WheelSlot::default()),
            spare: Recs::default(),
            pool: Vec::new(),
        }
    }

    /// Adds a record to slot `slot` of this level.
    #[inline]
    pub(super) fn push(&mut self, slot: usize, rec: Rec) {
        let s = &mut self.slots[slot];
        if s.recs.is_unallocated() {
            s.recs = std::mem::take(&mut self.spare);
        }
        s.recs.push(rec, &mut self.pool);
        self.occupied |= 1 << slot;
    }

    /// Empties slot `slot`, returning its records (hand the buffer back with `give_back`).
    pub(super) fn take(&mut self, slot: usize) -> Recs {
        self.occupied &= !(1 << slot);
        std::mem::take(&mut self.slots[slot]).recs
    }

    /// Empties slot `slot`; its buffer stays or is kept as `give_back` says.
    pub(super) fn empty(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        if s.recs.capacity() <= KEEP {
            // What `give_back` does with a small buffer, without moving the slot out and in.
            s.recs.clear();
            s.stale = 0;
            self.occupied &= !(1 << slot);
            return;
        }
        let recs = self.take(slot);
        self.give_back(slot, recs);
    }

    /// Takes back the buffer of slot `slot`, emptied: a small one stays with the slot, else
    /// it is the spare if it is the largest, else its whole blocks go to the pool.
    pub(super) fn give_back(&mut self, slot: usize, mut recs: Recs) {
        recs.clear();
        let home = &mut self.slots[slot].recs;
        if recs.capacity() <= KEEP && home.is_unallocated() {
            *home = recs;
            return;
        }
        if recs.capacity() > self.spare.capacity() {
            std::mem::swap(&mut recs, &mut self.spare);
        }
        recs.release(&mut self.pool);
    }

    /// Hands out the records of the occupied slots in `mask`, each wholly due, and empties
    /// them: `f` gets each block of records with its slot's start time (slot `k` starts at
    /// `window + (k << shift)`), slot by slot in order. Nothing moves and no buffer changes
    /// hands, where taking each slot out and giving it back cost about a hundred instructions
    /// a slot (with few timers, a slot that comes due holds one or two records).
    pub(super) fn drain(
        &mut self,
        mask: u64,
        window: u64,
        shift: u32,
        mut f: impl FnMut(&[Rec], u64),
    ) {
        let mut left = mask & self.occupied;
        while left != 0 {
            let k = left.trailing_zeros() as usize;
            left &= left - 1;
            let start = window + ((k as u64) << shift);
            self.slots[k].recs.each_block(|block| f(block, start));
            self.empty(k);
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        let recs: usize = self.slots.iter().map(|s| s.recs.heap_bytes()).sum();
        let pool: usize = self.pool.iter().map(|b| b.capacity()).sum();
        recs + self.spare.heap_bytes()
            + pool * std::mem::size_of::<Rec>()
            + self.pool.capacity() * std::mem::size_of::<Vec<Rec>>()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer::wheel::recs::BLOCK;

    fn fill(level: &mut Level, slot: usize, n: usize) {
        for i in 0..n as u32 {
            level.push(slot, Rec { idx: i, due_lo: i });
        }
    }

    /// Records the level's buffers can hold: its slots', its spare's and its pool's.
    fn room(level: &Level) -> usize {
        let slots: usize = level.slots.iter().map(|s| s.recs.capacity()).sum();
        slots + level.spare.capacity() + level.pool.iter().map(Vec::capacity).sum::<usize>()
    }

    /// A slot of few records keeps its buffer when it empties, so filling it again allocates
    /// nothing; a bigger one leaves it to the level (here as the spare).
    #[test]
    fn small_slots_keep_their_buffer() {
        let mut level = Level::new();
        fill(&mut level, 7, 10);
        let kept = level.slots[7].recs.capacity();
        level.empty(7);
        assert_eq!(level.slots[7].recs.capacity(), kept, "kept by the slot");
        assert!(level.slots[7].recs.is_empty() && level.occupied == 0);
        fill(&mut level, 7, 10);
        assert_eq!(
            level.slots[7].recs.capacity(),
            kept,
            "filled again in place"
        );
        fill(&mut level, 8, 1000);
        let big = level.slots[8].recs.capacity();
        level.empty(8);
        assert!(level.slots[8].recs.is_unallocated());
        assert_eq!(level.spare.capacity(), big);
    }

    /// Emptied slots free no block: the largest buffer stays as the spare and the other's
    /// whole blocks in the pool, and slots that fill next use them before making any.
    #[test]
    fn emptied_slots_keep_their_blocks_for_the_next() {
        let mut level = Level::new();
        fill(&mut level, 0, 3 * BLOCK + 5);
        fill(&mut level, 1, 2 * BLOCK + 5);
        let held = room(&level);
        level.empty(0);
        level.empty(1);
        assert_eq!(room(&level), held, "nothing freed");
        // The smaller buffer's first block (grown whole) and its two others.
        assert_eq!(level.pool.len(), 3);
        fill(&mut level, 2, 3 * BLOCK + 5); // takes the spare
        fill(&mut level, 3, 2 * BLOCK + 5); // a new first block, then two of the pool's
        assert_eq!(level.pool.len(), 1);
        assert_eq!(
            room(&level),
            held + BLOCK,
            "only slot 3's first block is new"
        );
    }
}
