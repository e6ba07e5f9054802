//! Incremental cascading: moving the next slot of a wheel level down ahead of time.
//!
//! When the clock enters a slot of level `l`, every record in it must move to a lower level.
//! A level-5 slot is 1.5 s of flicks wide and can hold a third of all timers, so doing that in
//! the tick that enters it makes one frame pay for a million timers. But where a record goes is
//! fixed in advance: relative to the slot's start `S`, a record due at `due` lands at
//! `position(S, due)`, which depends only on the record's own due bits. So while the clock is
//! still in the previous slot, each tick moves a share of the next slot's records into a staged
//! copy of levels `0..l`; when the clock reaches `S` the lower levels are empty (everything in
//! them was due before `S`) and the staged levels are swapped in.
//!
//! Ground rules:
//!
//! - A stage exists for level `l` only while its source slot is non-empty; the source keeps
//!   its records in place (new ones are appended, so the cursor stays valid) and is never
//!   compacted while staged.
//! - A record is moved at most once, stale or not: moving never reads a timer's entry, so
//!   stale records travel down with the rest and are dropped where records are checked (see
//!   the wheel's lazy removal).
//! - Each tick moves `remaining × dt / (time left until S)` records (at least `MIN_MOVE`), so a
//!   steady frame rate spreads the work evenly and the last share is small.

use super::level::{position, Level};

/// Fewest records moved per tick for a stage that has any left (avoids dribbling).
pub(super) const MIN_MOVE: usize = 256;

/// A level-`l` slot being moved down ahead of time.
#[derive(Debug)]
pub(super) struct StagedSlot {
    slot: usize,
    start: u64,
    /// Records of the source slot before this one are moved.
    cursor: usize,
    /// Staged levels `0..l`, relative to `start`.
    lower: Box<[Box<Level>]>,
}

impl StagedSlot {
    /// A stage of slot `slot` of its level, which starts at `start`, into `lower` (empty
    /// levels `0..l`).
    pub(super) fn new(slot: usize, start: u64, lower: Box<[Box<Level>]>) -> StagedSlot {
        StagedSlot {
            slot,
            start,
            cursor: 0,
            lower,
        }
    }

    /// The source slot.
    pub(super) fn slot(&self) -> usize {
        self.slot
    }

    /// The source slot's start time.
    pub(super) fn start(&self) -> u64 {
        self.start
    }

    /// Records of the source slot (in `source`, the stage's level) not moved yet.
    pub(super) fn left(&self, source: &Level) -> usize {
        source.slots[self.slot].recs.len() - self.cursor
    }

    /// What a tick from `elapsed` to `now` (before the start) moves: its share of what is
    /// left, by time, and at least `MIN_MOVE`.
    pub(super) fn share(&self, source: &Level, elapsed: u64, now: u64) -> usize {
        let left = self.left(source);
        let share = u128::from(now - elapsed) * left as u128;
        let share = share.div_ceil(u128::from(self.start - elapsed)) as usize;
        share.max(MIN_MOVE).min(left)
    }

    /// Moves the next `count` records of the source slot into the staged levels.
    pub(super) fn move_down(&mut self, source: &Level, count: usize) {
        let src = &source.slots[self.slot];
        let end = self.cursor + count;
        for &rec in src.recs.range(self.cursor, end).flatten() {
            let (l, s) = position(self.start, rec.blind_due(self.start));
            self.lower[l].push(s, rec);
        }
        self.cursor = end;
    }

    /// The staged levels, to swap in.
    pub(super) fn into_lower(self) -> Box<[Box<Level>]> {
        self.lower
    }

    /// The staged levels, to count their bytes.
    pub(super) fn lower(&self) -> &[Box<Level>] {
        &self.lower
    }
}
