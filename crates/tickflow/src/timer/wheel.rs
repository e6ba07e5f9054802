//! The hierarchical timing wheel that holds every timer that is not yet due.
//!
//! # Algorithm
//!
//! Varghese & Lauck's hierarchical timing wheel ("Hashed and Hierarchical Timing Wheels",
//! SOSP 1987), in the form tokio uses: 11 levels of 64 slots over `u64` time units (flicks, or
//! frames for the frame clock). Level `l` slots are `64^l` units wide, so the levels together
//! cover the whole `u64` range and no timer is ever "too far away".
//!
//! A timer due at `due` sits at the level of the highest 6-bit digit in which `due` differs from
//! the wheel's `elapsed` time, in the slot given by that digit of `due`. Each slot is an
//! intrusive list through the timer entries, and each level keeps a 64-bit mask of occupied
//! slots.
//!
//! Ground rules (invariants):
//!
//! - Every entry in the wheel has `elapsed < due < NEVER`.
//! - An entry's (level, slot) is a function of `(elapsed, due)`, and stays so while `elapsed`
//!   moves forward, because `elapsed` never passes the start of an occupied slot without that
//!   slot being processed. So removal recomputes the position instead of storing it.
//! - Every entry at a lower level is due before every entry at a higher level; within a level,
//!   occupied slots at or after `elapsed`'s digit are in due order.
//!
//! # Cost
//!
//! Insert and remove are O(1). Advancing to `now` visits only occupied slots whose start is
//! `<= now` (found with the occupancy masks, so empty slots cost nothing); an entry in a visited
//! slot that is already due goes straight out, and one that is not yet due drops to a lower
//! level (at most 10 times in its life, and only when its time comes near). Memory: 11 × 64 list
//! heads of 8 bytes (5.6 KiB) per wheel, nothing per timer beyond the entry's two links.

use super::slot::{List, Slots, NEVER, NIL};

const LEVELS: usize = 11;
const SLOT_BITS: u32 = 6;
const SLOT_MASK: u64 = 63;

#[derive(Debug)]
struct Level {
    occupied: u64,
    slots: [List; 64],
}

/// A timing wheel over one clock.
#[derive(Debug)]
pub(crate) struct Wheel {
    elapsed: u64,
    levels: Box<[Level]>,
}

impl Default for Wheel {
    fn default() -> Wheel {
        Wheel::new()
    }
}

/// The level and slot of an entry due at `due` while the wheel is at `elapsed`.
#[inline]
fn position(elapsed: u64, due: u64) -> (usize, usize) {
    let masked = (elapsed ^ due) | SLOT_MASK;
    let significant = 63 - masked.leading_zeros();
    let level = (significant / SLOT_BITS) as usize;
    let slot = ((due >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize;
    (level, slot)
}

impl Wheel {
    /// Heap bytes one wheel holds, whatever it contains.
    pub(crate) const HEAP_BYTES: usize = LEVELS * std::mem::size_of::<Level>();

    pub(crate) fn new() -> Wheel {
        let levels = (0..LEVELS)
            .map(|_| Level {
                occupied: 0,
                slots: [List::default(); 64],
            })
            .collect();
        Wheel { elapsed: 0, levels }
    }

    /// The time the wheel has advanced to.
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Links entry `idx` (whose `due` is set, `elapsed < due < NEVER`) into its slot.
    #[inline]
    pub(crate) fn insert(&mut self, slots: &mut Slots, idx: u32) {
        let due = slots.at(idx).due;
        debug_assert!(self.elapsed < due && due != NEVER);
        let (level, slot) = position(self.elapsed, due);
        let lvl = &mut self.levels[level];
        lvl.slots[slot].push_back(slots, idx);
        lvl.occupied |= 1 << slot;
    }

    /// Unlinks entry `idx`, which must be in the wheel.
    #[inline]
    pub(crate) fn remove(&mut self, slots: &mut Slots, idx: u32) {
        let (level, slot) = position(self.elapsed, slots.at(idx).due);
        let lvl = &mut self.levels[level];
        lvl.slots[slot].unlink(slots, idx);
        if lvl.slots[slot].is_empty() {
            lvl.occupied &= !(1 << slot);
        }
    }

    /// The earliest occupied slot: `(level, slot, start time of the slot)`.
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        for (level, lvl) in self.levels.iter().enumerate() {
            if lvl.occupied == 0 {
                continue;
            }
            let shift = level as u32 * SLOT_BITS;
            let digit = (self.elapsed >> shift) & SLOT_MASK;
            let candidates = lvl.occupied & (u64::MAX << digit);
            debug_assert!(candidates != 0, "wheel invariant: slot behind elapsed");
            let slot = candidates.trailing_zeros() as usize;
            let level_bits = shift + SLOT_BITS;
            let level_start = if level_bits >= 64 {
                0
            } else {
                self.elapsed & !((1u64 << level_bits) - 1)
            };
            return Some((level, slot, level_start + ((slot as u64) << shift)));
        }
        None
    }

    /// Advances to `now`, handing every entry due at or before `now` to `due` (in no
    /// particular order: the caller sorts). Entries not yet due stay in the wheel.
    pub(crate) fn advance(
        &mut self,
        slots: &mut Slots,
        now: u64,
        mut due: impl FnMut(&mut Slots, u32),
    ) {
        while let Some((level, slot, start)) = self.next_slot() {
            if start > now {
                break;
            }
            // `start` is the earliest anything in the wheel can be due, so moving there keeps
            // every remaining entry in front of `elapsed`.
            self.elapsed = self.elapsed.max(start);
            let lvl = &mut self.levels[level];
            let list = lvl.slots[slot].take();
            lvl.occupied &= !(1 << slot);
            let mut cur = list.head;
            while cur != NIL {
                let next = slots.at(cur).next;
                if slots.at(cur).due <= now {
                    let e = slots.at_mut(cur);
                    e.next = NIL;
                    e.prev = NIL;
                    due(slots, cur);
                } else {
                    self.insert(slots, cur);
                }
                cur = next;
            }
        }
        self.elapsed = self.elapsed.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::super::slot::State;
    use super::*;

    fn add(w: &mut Wheel, s: &mut Slots, due: u64) -> u32 {
        let idx = s.alloc();
        s.at_mut(idx).due = due;
        s.at_mut(idx).state = State::Active;
        w.insert(s, idx);
        idx
    }

    #[test]
    fn position_picks_the_highest_differing_digit() {
        assert_eq!(position(0, 5), (0, 5));
        assert_eq!(position(0, 64), (1, 1));
        assert_eq!(position(63, 64), (1, 1));
        assert_eq!(position(0, u64::MAX - 1), (10, 15));
    }

    #[test]
    fn advance_returns_exactly_the_due_entries() {
        let mut s = Slots::new();
        let mut w = Wheel::new();
        let dues = [
            1u64,
            63,
            64,
            65,
            4095,
            4096,
            1 << 20,
            (1 << 40) + 7,
            u64::MAX - 1,
        ];
        let ids: Vec<u32> = dues.iter().map(|&d| add(&mut w, &mut s, d)).collect();
        let mut got = vec![];
        for now in [0u64, 64, 5000, 1 << 30, 1 << 41, u64::MAX - 1] {
            let mut batch = vec![];
            w.advance(&mut s, now, |_, i| batch.push(i));
            for &i in &batch {
                assert!(s.at(i).due <= now);
            }
            got.extend(batch);
            // everything not returned is still due later
            for (k, &d) in dues.iter().enumerate() {
                if d <= now {
                    assert!(got.contains(&ids[k]), "due {d} missing at {now}");
                }
            }
        }
        assert_eq!(got.len(), dues.len());
    }

    #[test]
    fn removed_entries_never_come_out() {
        let mut s = Slots::new();
        let mut w = Wheel::new();
        let a = add(&mut w, &mut s, 100);
        let b = add(&mut w, &mut s, 100);
        let c = add(&mut w, &mut s, 5_000);
        w.advance(&mut s, 50, |_, _| panic!("nothing is due"));
        w.remove(&mut s, a);
        w.remove(&mut s, c);
        let mut got = vec![];
        w.advance(&mut s, 10_000, |_, i| got.push(i));
        assert_eq!(got, vec![b]);
    }
}
