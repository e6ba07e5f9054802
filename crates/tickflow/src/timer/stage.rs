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

use super::wheel::{position, Level, Wheel, BLIND_LEVELS, SLOT_BITS, SLOT_MASK};

/// Fewest records moved per tick for a stage that has any left (avoids dribbling).
const MIN_MOVE: usize = 256;

/// A level-`l` slot being moved down ahead of time.
#[derive(Debug)]
pub(crate) struct Stage {
    slot: usize,
    start: u64,
    cursor: usize,
    /// Staged levels `0..l`, relative to `start`.
    lower: Box<[Box<Level>]>,
}

impl Wheel {
    /// Whether slot `slot` of `level` is a stage's source.
    #[inline]
    pub(super) fn is_staging(&self, level: usize, slot: usize) -> bool {
        level <= BLIND_LEVELS && self.stages[level].as_ref().is_some_and(|s| s.slot == slot)
    }

    /// Starts stages for the next slot of each blind level, and moves each stage's share for a
    /// tick that advances the wheel to `now`.
    pub(super) fn stage_ahead(&mut self, now: u64) {
        for level in 1..=BLIND_LEVELS {
            if self.stages[level].is_none() {
                let lvl = &self.levels[level];
                if lvl.occupied == 0 {
                    continue;
                }
                let digit = (self.elapsed >> (level as u32 * SLOT_BITS)) & SLOT_MASK;
                let slot = (lvl.occupied & (u64::MAX << digit)).trailing_zeros() as usize;
                let start = self.slot_start(level, slot);
                let lower = self.spare[level]
                    .take()
                    .unwrap_or_else(|| (0..level).map(|_| Box::new(Level::new())).collect());
                self.stages[level] = Some(Stage {
                    slot,
                    start,
                    cursor: 0,
                    lower,
                });
            }
            let stage = self.stages[level].as_ref().expect("set above");
            if now >= stage.start {
                continue; // entered in this tick: `enter_staged` moves the rest
            }
            let left = self.levels[level].slots[stage.slot].recs.len() - stage.cursor;
            let share = u128::from(now - self.elapsed) * left as u128;
            let share = share.div_ceil(u128::from(stage.start - self.elapsed)) as usize;
            self.move_down(level, share.max(MIN_MOVE).min(left));
        }
    }

    /// Moves the next `count` records of level `level`'s stage source into the stage.
    fn move_down(&mut self, level: usize, count: usize) {
        let stage = self.stages[level].as_mut().expect("a stage");
        let src = &mut self.levels[level].slots[stage.slot];
        let end = stage.cursor + count;
        for &rec in src.recs.range(stage.cursor, end).flatten() {
            let (l, s) = position(stage.start, rec.blind_due(stage.start));
            stage.lower[l].push(s, rec);
        }
        stage.cursor = end;
    }

    /// Enters a staged slot at `start`: moves what is left, then swaps the staged levels in.
    pub(super) fn enter_staged(&mut self, level: usize, start: u64) {
        let left = {
            let stage = self.stages[level].as_ref().expect("a stage");
            self.levels[level].slots[stage.slot].recs.len() - stage.cursor
        };
        self.move_down(level, left);
        let mut stage = self.stages[level].take().expect("a stage");
        self.levels[level].empty(stage.slot);
        self.elapsed = self.elapsed.max(start);
        for (l, staged) in stage.lower.iter_mut().enumerate() {
            debug_assert_eq!(
                self.levels[l].occupied, 0,
                "lower levels are empty at entry"
            );
            std::mem::swap(&mut self.levels[l], staged);
        }
        // The real levels swapped out are empty (every path that empties a slot resets it),
        // so they serve the next stage of this level without allocating.
        debug_assert!(stage
            .lower
            .iter()
            .flat_map(|l| l.slots.iter())
            .all(|s| s.recs.is_empty() && s.stale == 0));
        self.spare[level] = Some(stage.lower);
    }

    pub(super) fn stages_heap_bytes(&self) -> usize {
        let staged = self.stages.iter().flatten().map(|s| &s.lower);
        staged
            .chain(self.spare.iter().flatten())
            .flat_map(|lower| lower.iter())
            .map(|l| std::mem::size_of::<Level>() + l.heap_bytes())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::super::slot::{Slots, State};
    use super::*;

    /// Random dues, removals and re-inserts over many small ticks: the staged wheel hands out
    /// exactly what a sorted list says is due, tick by tick.
    #[test]
    fn staged_cascades_match_a_sorted_list() {
        let mut s = Slots::<()>::new(crate::handle::ContainerId::fresh());
        let mut w = Wheel::new(0);
        let mut rng = crate::test_rng::Rng(0x2545_f491_4f6c_dd1d);
        let mut rnd = move || rng.next();
        let mut live: Vec<(u32, u64)> = vec![];
        let frame = 11_760_000u64; // 60 Hz in flicks
        let mut now = 0u64;
        for _ in 0..2_000 {
            let idx = s.alloc();
            let due = now + 1 + rnd() % (1 << 33);
            s.at_mut(idx).due = due;
            s.at_mut(idx).state = State::Active;
            w.insert(&s, idx);
            live.push((idx, due));
        }
        for tick in 0..1_500 {
            // churn: remove some, re-add some at new or the same due
            for _ in 0..3 {
                if live.is_empty() {
                    break;
                }
                let k = (rnd() % live.len() as u64) as usize;
                let (idx, due) = live.swap_remove(k);
                w.remove(&s, idx);
                let new_due = if rnd() % 2 == 0 {
                    due
                } else {
                    now + 1 + rnd() % (1 << 32)
                };
                s.at_mut(idx).due = new_due;
                w.insert(&s, idx);
                live.push((idx, new_due));
            }
            now += frame * (1 + tick % 3);
            let mut got = vec![];
            w.advance(&mut s, now, |s, i, due| {
                let e = s.at_mut(i);
                if e.state == State::Active && e.due == due {
                    e.state = State::Ready;
                    got.push(i);
                }
            });
            got.sort_unstable();
            let mut want: Vec<u32> = live.iter().filter(|l| l.1 <= now).map(|l| l.0).collect();
            want.sort_unstable();
            assert_eq!(got, want, "tick {tick}");
            live.retain(|l| l.1 > now);
        }
    }
}
