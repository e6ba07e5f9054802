//! Cooldown queues for interval tick functions.
//!
//! A calendar queue per clock: functions waiting on an interval sit in buckets of 2^23 flicks
//! (about 12 ms, less than a 60 Hz frame) keyed by their due time. The next 512 buckets (6.1 s)
//! are a ring of vectors that keep their capacity, so a push is an index and an append, with
//! no allocation once warmed up; later ones wait in an ordered map. A frame drains the buckets
//! its clock passed and never looks at functions still cooling down, so its cost is
//! O(functions that tick + buckets passed, at most 512). (A binary heap costs a cache miss per
//! level at 1e5 functions: 4× slower here; an ordered map of every bucket allocated a vector
//! per bucket and searched the map on every push.) Entries are never removed in place: a
//! change of interval, a disable or a removal bumps the cooldown's stamp, and the
//! stale entry is dropped when it surfaces.

use std::collections::BTreeMap;

/// Bucket width: 2^23 flicks = 11.9 ms.
const SHIFT: u32 = 23;
/// Buckets in the ring (a power of two).
const RING: u64 = 512;
/// Pushes staged before they are filed (see `Intervals`): enough for the misses to overlap,
/// few enough for the list to stay in the first-level cache.
const STAGED: usize = 128;

use super::handle::TickHandle;
use crate::time::{Clocks, Domain};

/// The clock an interval counts on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum IntervalClock {
    /// The game clock: stops while paused.
    Game = 0,
    /// For `tick_when_paused` functions: [`Clocks::unpaused`].
    Unpaused = 1,
}

impl IntervalClock {
    /// This clock's time in a frame's clocks, in flicks.
    pub(crate) fn now(self, clocks: &Clocks) -> u64 {
        match self {
            IntervalClock::Game => clocks.now(Domain::Game).flicks(),
            IntervalClock::Unpaused => clocks.unpaused().flicks(),
        }
    }

    /// How far this clock moved in the frame, in flicks.
    pub(crate) fn delta(self, clocks: &Clocks) -> u64 {
        match self {
            IntervalClock::Game => clocks.delta(Domain::Game).flicks(),
            IntervalClock::Unpaused => clocks.unpaused_delta().flicks(),
        }
    }
}

/// A function's cooldown: everything an interval tick reads and writes, one 64-byte cache
/// line per slot beside the graph's nodes (aligned to it: a record that straddled two lines
/// cost two misses where one was needed, and how many straddled depended on where the
/// allocator put the vector, so the frame's speed did too). It also keeps the function's
/// tag, its place in the plan (copied from the plan whenever the plan changes) and the
/// position of its check record and callback, so that the frame's drain checks a queue entry
/// and files it in its group from this one record, and the call finds the rest from it.
#[derive(Copy, Clone, Debug)]
#[repr(align(64))]
pub(crate) struct Cooldown {
    /// When the next interval tick is due on the function's clock.
    pub(crate) due: u64,
    /// Clock time of the previous tick; `None` until the first tick after enabling.
    pub(crate) last_tick: Option<u64>,
    /// The function's interval (kept equal to its settings').
    pub(crate) interval: u64,
    /// The function's time dilation (fixed at registration).
    pub(crate) dilation: f64,
    /// Bumped whenever `due` is replaced, and when the slot is freed or taken, so stale queue
    /// entries (a restarted cooldown's, a removed function's) can be told apart.
    pub(crate) stamp: u32,
    /// The tag of the function in this slot (0 for a free slot).
    pub(crate) gen: u32,
    /// The function's rank in the plan (`u32::MAX` while it is not planned).
    pub(crate) rank: u32,
    /// Where it cuts into its group's lane (see `Resolved::cut`).
    pub(crate) cut: u32,
    /// The position of its check record and callback (`NO_POS` for a free slot).
    pub(crate) pos: u32,
}

impl Default for Cooldown {
    fn default() -> Self {
        Cooldown {
            due: 0,
            last_tick: None,
            interval: 0,
            dilation: 1.0,
            stamp: 0,
            gen: 0,
            rank: u32::MAX,
            cut: 0,
            pos: NO_POS,
        }
    }
}

impl Cooldown {
    /// `true` when `e` is this function's current queue entry (not one left by a removed
    /// function in this slot, or by a cooldown restarted since). A free slot holds none.
    pub(crate) fn holds(&self, e: &QueuedCooldown) -> bool {
        self.gen != 0 && self.stamp == e.stamp
    }

    /// Starts a new cooldown due at `due`, with a new stamp for its queue entry.
    pub(crate) fn restart(&mut self, due: u64) {
        self.due = due;
        self.stamp = self.stamp.wrapping_add(1);
    }
}

/// No position: a free slot (see `Cooldown::pos`).
pub(crate) const NO_POS: u32 = u32::MAX;

/// One queued cooldown: 16 bytes, a slot and a stamp without the function's tag (the stamp
/// alone tells a removed function's entry from its slot's next function's, see
/// `Cooldown::stamp`). With the tag (24 bytes), filing and draining moved half as many bytes
/// again, and S2's game-shaped frame took 4 % longer. Order inside a frame comes from the
/// plan's ranks, not from here.
#[derive(Copy, Clone, Debug)]
pub(crate) struct QueuedCooldown {
    pub(crate) due: u64,
    pub(crate) slot: u32,
    pub(crate) stamp: u32,
}

/// One clock's calendar.
#[derive(Debug, Default)]
struct Calendar {
    /// Bucket `b` for `cursor <= b < cursor + RING` at `ring[b % RING]` (empty until used).
    ring: Vec<Vec<QueuedCooldown>>,
    /// The bucket the last drain reached (it may still hold entries due later in it).
    cursor: u64,
    /// Buckets past the ring's reach when pushed.
    far: BTreeMap<u64, Vec<QueuedCooldown>>,
}

impl Calendar {
    #[inline]
    fn push(&mut self, e: QueuedCooldown) {
        let b = (e.due >> SHIFT).max(self.cursor);
        if b - self.cursor < RING {
            if self.ring.is_empty() {
                self.ring.resize_with(RING as usize, Vec::new);
            }
            self.ring[(b % RING) as usize].push(e);
        } else {
            self.far.entry(b).or_default().push(e);
        }
    }

    /// Moves what is due at or before `now` into `out`; returns how many.
    fn drain_due(&mut self, now: u64, out: &mut Vec<QueuedCooldown>) -> usize {
        let before = out.len();
        let last = now >> SHIFT;
        if !self.ring.is_empty() && last >= self.cursor {
            // Buckets wholly passed (each of the ring at most once), then the one `now` is in.
            let passed = (last - self.cursor).min(RING);
            for b in self.cursor..self.cursor + passed {
                out.append(&mut self.ring[(b % RING) as usize]);
            }
            take_due(&mut self.ring[(last % RING) as usize], now, out);
        }
        self.cursor = self.cursor.max(last);
        while let Some(mut bucket) = self.far.first_entry() {
            if *bucket.key() > last {
                break;
            }
            if *bucket.key() < last {
                out.append(bucket.get_mut());
                bucket.remove();
                continue;
            }
            let entries = bucket.get_mut();
            take_due(entries, now, out);
            if entries.is_empty() {
                bucket.remove();
            }
            break;
        }
        out.len() - before
    }

    fn retain(&mut self, keep: &mut impl FnMut(&QueuedCooldown) -> bool) {
        for entries in self.ring.iter_mut().chain(self.far.values_mut()) {
            entries.retain(&mut *keep);
        }
        self.far.retain(|_, entries| !entries.is_empty());
    }

    fn len(&self) -> usize {
        self.ring
            .iter()
            .chain(self.far.values())
            .map(Vec::len)
            .sum()
    }
}

/// Moves the entries of a bucket due at or before `now` into `out`, keeping the others in
/// order: one pass (a filtered copy, then a `retain`, read the bucket twice: 1.7 % of S2's
/// game-shaped frame).
fn take_due(bucket: &mut Vec<QueuedCooldown>, now: u64, out: &mut Vec<QueuedCooldown>) {
    bucket.retain(|e| {
        let due = e.due <= now;
        if due {
            out.push(*e);
        }
        !due
    });
}

/// The two cooldown calendars, one per [`IntervalClock`].
///
/// A push is staged in a short list and filed into its bucket when the list is full or the
/// next drain (or compaction) needs it. Filing writes to a bucket at a random place in
/// memory; done right after the function's call, that write missed the cache and held up
/// the frame, once per due function. Filed together, the misses overlap. A drain and a
/// compaction file what is staged first, so staging changes nothing they see.
#[derive(Debug, Default)]
pub(crate) struct Intervals {
    calendars: [Calendar; 2],
    staged: Vec<(IntervalClock, QueuedCooldown)>,
    len: usize,
    /// The time each calendar was last drained to ([`drain_due`](Self::drain_due)): its clock
    /// as of the last frame, what a cooldown started between frames counts from. The
    /// calendar's own position, as a wheel's elapsed time is its own: not a copy of the
    /// frame's clocks kept in step from outside (a paused frame drains no game-clock
    /// calendar, and the game clock stood still).
    now: [u64; 2],
}

impl Intervals {
    /// Queues `cool`'s cooldown (its `due` and `stamp`) for the function `handle`.
    #[inline]
    pub(crate) fn push(&mut self, clock: IntervalClock, handle: TickHandle, cool: &Cooldown) {
        if self.staged.len() == STAGED {
            self.file_staged();
        }
        self.staged.push((
            clock,
            QueuedCooldown {
                due: cool.due,
                slot: handle.index(),
                stamp: cool.stamp,
            },
        ));
        self.len += 1;
    }

    fn file_staged(&mut self) {
        for (clock, e) in self.staged.drain(..) {
            self.calendars[clock as usize].push(e);
        }
    }

    /// Moves every entry due at or before `now` (inclusive), stale or not, into `out`.
    pub(crate) fn drain_due(
        &mut self,
        clock: IntervalClock,
        now: u64,
        out: &mut Vec<QueuedCooldown>,
    ) {
        self.file_staged();
        self.len -= self.calendars[clock as usize].drain_due(now, out);
        self.now[clock as usize] = now;
    }

    /// The time `clock`'s calendar stands at (see `now`).
    pub(crate) fn now(&self, clock: IntervalClock) -> u64 {
        self.now[clock as usize]
    }

    /// Both calendars' times, game clock first (as saved in snapshots).
    pub(crate) fn nows(&self) -> [u64; 2] {
        self.now
    }

    /// Puts the calendars at a restored scheduler's times (nothing is drained: a restored
    /// graph's cooldowns are queued afresh).
    pub(crate) fn stand_at(&mut self, clocks: &Clocks) {
        self.now = [IntervalClock::Game, IntervalClock::Unpaused].map(|c| c.now(clocks));
    }

    /// Queued entries, stale ones included.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Drops the entries `keep` refuses (stale ones), so frequent interval changes cannot
    /// grow the calendars without bound.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&QueuedCooldown) -> bool) {
        self.file_staged();
        for calendar in &mut self.calendars {
            calendar.retain(&mut keep);
        }
        self.len = self.calendars.iter().map(Calendar::len).sum();
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

    fn cooldown(due: u64, stamp: u32) -> Cooldown {
        Cooldown {
            due,
            stamp,
            ..Cooldown::default()
        }
    }

    #[test]
    fn calendar_drains_exactly_what_is_due() {
        let mut q = Intervals::default();
        let h = TickHandle::default();
        let step = 1u64 << SHIFT;
        for (k, due) in [5 * step + 3, 1, step, 5 * step, 9 * step]
            .into_iter()
            .enumerate()
        {
            q.push(IntervalClock::Game, h, &cooldown(due, k as u32));
        }
        let mut out = Vec::new();
        q.drain_due(IntervalClock::Game, 5 * step + 2, &mut out);
        let mut dues: Vec<u64> = out.iter().map(|e| e.due).collect();
        dues.sort();
        assert_eq!(dues, [1, step, 5 * step]);
        assert_eq!(q.len(), 2);
        out.clear();
        q.drain_due(IntervalClock::Unpaused, u64::MAX, &mut out);
        assert!(out.is_empty());
        q.retain(|e| e.due != 9 * step);
        q.drain_due(IntervalClock::Game, u64::MAX, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(q.len(), 0);
    }

    /// The ring and the far map against a plain list: random pushes (near, far, already past)
    /// and drains (small steps, jumps past the ring) take out exactly what is due.
    #[test]
    fn calendar_matches_a_plain_list() {
        let mut rng = crate::test_rng::Rng(0x2545_f491_4f6c_dd1d);
        let mut rand = move |n: u64| rng.below(n);
        let step = 1u64 << SHIFT;
        let (mut q, mut model) = (Intervals::default(), Vec::new());
        let mut now = 0u64;
        for k in 0..20_000u32 {
            if rand(3) == 0 {
                now += match rand(20) {
                    0 => rand(2 * RING * step),
                    // Around a whole turn of the ring.
                    1 => (RING - 2 + rand(4)) * step + rand(step),
                    _ => rand(3 * step),
                };
                let mut out = Vec::new();
                q.drain_due(IntervalClock::Game, now, &mut out);
                let mut got: Vec<u32> = out.iter().map(|e| e.stamp).collect();
                let mut want: Vec<u32> = model
                    .iter()
                    .filter(|&&(d, _)| d <= now)
                    .map(|&(_, s)| s)
                    .collect();
                model.retain(|&(d, _)| d > now);
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "at {now}");
                assert_eq!(q.len(), model.len());
            } else {
                let due = match rand(10) {
                    0 => now.saturating_sub(rand(5 * step)),
                    1 => now + rand(4 * RING * step),
                    // The ring's last bucket and the first past it.
                    2 => ((now >> SHIFT) + RING - 1 + rand(2)) * step + rand(step),
                    _ => now + rand(RING * step / 8),
                };
                q.push(
                    IntervalClock::Game,
                    TickHandle::default(),
                    &cooldown(due, k),
                );
                model.push((due, k));
            }
        }
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
