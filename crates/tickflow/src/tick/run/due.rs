//! A frame's due interval functions: drained from the cooldown calendars, checked against
//! their cooldown records, and filed in their groups in run order, where the group's run
//! merges them into its lane (`Lane::runs`).
//!
//! The calendar gives them in no useful order. They are sorted as plain integers, rank above
//! slot, by a radix sort (`keys.rs`): a comparison sort of the records mispredicted its
//! branches (11 ns per function; of `u64` keys, 5.5). Ranks are unique (a stale duplicate of
//! a function shares its rank and slot; the last-run check turns the second away).
//!
//! A bit per position, read from the lowest, would order them with no sort if every
//! function were laid out in plan order; but the filing then needs each position's slot, a
//! second read at a random place after the cooldown record's, and S2's game-shaped frame
//! measured 4–6 % slower that way (BENCHMARKS.md).

use std::num::NonZeroU32;

use super::keys;
use crate::tick::graph::TickGraph;
use crate::tick::handle::TickHandle;
use crate::tick::interval::{IntervalClock, QueuedCooldown};
use crate::tick::plan::{group_of, DueInterval, POSITION_MASK};
use crate::tick::settings::TickGroup;
use crate::time::Clocks;

/// How many drained queue entries ahead the check fetches their cooldown records (16
/// measured the same as 8).
const CHECK_AHEAD: usize = 8;

/// The due functions of the frame that runs, by group. The scratch lists are kept, so a
/// frame allocates nothing once warmed up.
#[derive(Default)]
pub(super) struct DueLists {
    drained: Vec<QueuedCooldown>,
    /// The due functions as sort keys, and the sort's scratch.
    keys: Vec<u64>,
    scratch: Vec<u64>,
    lists: [Vec<DueInterval>; TickGroup::COUNT],
}

impl DueLists {
    /// Collects the functions due in a frame at `clocks` (the game clock's calendar is not
    /// drained while `paused`) and files them by group, in run order.
    pub(super) fn collect<C>(&mut self, graph: &mut TickGraph<C>, clocks: &Clocks, paused: bool) {
        for clock in [IntervalClock::Game, IntervalClock::Unpaused] {
            if paused && clock == IntervalClock::Game {
                continue;
            }
            graph.drain_due(clock, clock.now(clocks), &mut self.drained);
        }
        // Only the cooldown record is read here: a stale entry (a removed function's, or one
        // whose interval was reset since: disabled, changed) has another stamp. The records
        // sit at random places, last read frames ago: each is fetched `CHECK_AHEAD` entries
        // before its check.
        let (drained, cool) = (&self.drained, graph.cooldowns());
        for (k, e) in drained.iter().enumerate() {
            if let Some(c) = drained
                .get(k + CHECK_AHEAD)
                .and_then(|a| cool.get(a.slot as usize))
            {
                crate::prefetch::prefetch(c);
            }
            let Some(c) = cool.get(e.slot as usize) else {
                continue;
            };
            if c.holds(e) && c.rank != u32::MAX {
                self.keys.push(u64::from(c.rank) << 32 | u64::from(e.slot));
            }
        }
        self.drained.clear();
        // Each group's functions go to its own list: only the position decides the order.
        keys::sort_by_rank(&mut self.keys, &mut self.scratch, POSITION_MASK);
        for key in self.keys.drain(..) {
            let (rank, slot) = ((key >> 32) as u32, key as u32);
            let c = &cool[slot as usize];
            let Some(tag) = NonZeroU32::new(c.gen) else {
                continue;
            };
            self.lists[group_of(rank)].push(DueInterval {
                cut: c.cut,
                at: (TickHandle::new(slot, tag), c.pos),
            });
        }
    }

    /// Whether group `g` has due functions.
    pub(super) fn is_empty(&self, g: TickGroup) -> bool {
        self.lists[g.index()].is_empty()
    }

    /// Takes group `g`'s due functions out for its run. Their check records and callbacks,
    /// at random places among the every-frame functions, are fetched ahead as the group runs
    /// (`exec`).
    pub(super) fn take(&mut self, g: TickGroup) -> Vec<DueInterval> {
        std::mem::take(&mut self.lists[g.index()])
    }

    /// Gives back the list `take` lent, emptied, for its capacity.
    pub(super) fn give_back(&mut self, g: TickGroup, mut list: Vec<DueInterval>) {
        list.clear();
        self.lists[g.index()] = list;
    }

    /// Forgets every due function (after a panic: `recover` queues again the ones that did
    /// not run).
    pub(super) fn clear(&mut self) {
        self.lists.iter_mut().for_each(Vec::clear);
    }
}
