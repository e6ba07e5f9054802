//! Cooldown queues for interval tick functions.
//!
//! A function with an interval sits in a min-heap keyed by its due time on its clock, so a
//! frame pops exactly the functions that tick and never looks at the ones still cooling down
//! (Unreal walks a sorted cooldown list each frame). Entries are never removed in place: a
//! change of interval, a disable or a removal bumps the node's stamp or generation, and the
//! stale entry is dropped when it surfaces.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::TickHandle;

/// The clock an interval counts on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Clock {
    /// The game clock: stops while paused.
    Game = 0,
    /// For `tick_when_paused` functions: the game delta while running, the real delta (clamped)
    /// while paused.
    Unpaused = 1,
}

/// One queued cooldown: ordered by due time, then registration order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Entry {
    pub(crate) due: u64,
    pub(crate) seq: u64,
    pub(crate) handle: TickHandle,
    pub(crate) stamp: u32,
}

/// The two cooldown heaps, one per [`Clock`].
#[derive(Debug, Default)]
pub(crate) struct Intervals {
    heaps: [BinaryHeap<Reverse<Entry>>; 2],
}

impl Intervals {
    pub(crate) fn push(
        &mut self,
        clock: Clock,
        due: u64,
        seq: u64,
        handle: TickHandle,
        stamp: u32,
    ) {
        self.heaps[clock as usize].push(Reverse(Entry {
            due,
            seq,
            handle,
            stamp,
        }));
    }

    /// Pops the next entry due at or before `now` (inclusive), stale or not.
    pub(crate) fn pop_due(&mut self, clock: Clock, now: u64) -> Option<Entry> {
        let heap = &mut self.heaps[clock as usize];
        match heap.peek() {
            Some(Reverse(e)) if e.due <= now => heap.pop().map(|Reverse(e)| e),
            _ => None,
        }
    }

    /// Queued entries, stale ones included.
    pub(crate) fn len(&self) -> usize {
        self.heaps.iter().map(BinaryHeap::len).sum()
    }

    /// Drops the entries `keep` refuses (stale ones), so frequent interval changes cannot
    /// grow the heaps without bound.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        for heap in &mut self.heaps {
            heap.retain(|Reverse(e)| keep(e));
        }
    }
}

/// The due time after a tick at `now` that was due at `due`: one interval later, so overrun
/// shorter than an interval is credited (the average period is the interval). A function late
/// by a whole interval or more (a hitch) starts a fresh interval at `now` instead: one tick
/// with the accumulated delta, never a burst. `first` ticks anchor the grid at `now`.
pub(crate) fn next_due(due: u64, now: u64, interval: u64, first: bool) -> u64 {
    let base = if first { now } else { due };
    match base.saturating_add(interval) {
        next if next > now => next,
        _ => now.saturating_add(interval),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interval 0.25 at 0.1 s frames, in tenths of a hundredth: ticks at 0.1, 0.4, 0.6, 0.9,
    /// 1.1, 1.4 (the average period is the interval).
    #[test]
    fn overrun_is_credited() {
        let mut ticks = Vec::new();
        let (mut due, mut first) = (0, true);
        for frame in 1..=15u64 {
            let now = frame * 10;
            if now >= due {
                ticks.push(now);
                due = next_due(due, now, 25, first);
                first = false;
            }
        }
        assert_eq!(ticks, [10, 40, 60, 90, 110, 140]);
    }

    #[test]
    fn a_hitch_is_one_tick() {
        assert_eq!(next_due(20, 60, 10, false), 70);
        assert_eq!(
            next_due(20, 25, 10, false),
            30,
            "less than an interval late: credited"
        );
        assert_eq!(next_due(u64::MAX - 1, u64::MAX - 1, 10, false), u64::MAX);
    }
}
