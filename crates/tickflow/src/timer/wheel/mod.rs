//! The hierarchical timing wheel that holds every timer that is not yet due.
//!
//! # Algorithm
//!
//! Varghese & Lauck's hierarchical timing wheel ("Hashed and Hierarchical Timing Wheels",
//! SOSP 1987), in the form tokio uses: 11 levels of 64 slots over `u64` time units (flicks, or
//! frames for the frame clock). Level `l` slots are `64^l` units wide, so the levels together
//! cover the whole `u64` range and no timer is ever "too far away".
//!
//! A timer due at `due` belongs at the level of the highest 6-bit digit in which `due` differs
//! from the wheel's `elapsed` time, in the slot given by that digit of `due`. Each slot is a
//! vector of 8-byte records `(timer index, low 32 bits of due)`, and each level keeps a 64-bit
//! mask of non-empty slots.
//!
//! Two choices keep the wheel fast when it holds millions of timers, where every touch of a
//! timer's record is a likely cache miss:
//!
//! - **Lazy removal.** Clearing or pausing a timer leaves its record where it is, stale, and
//!   only counts it in its slot's `stale` counter (the slot header is hot; the record is not
//!   touched). A stale record is recognised wherever a record is checked against its entry: the
//!   entry is no longer `Active` in this wheel's clock at that due time. The consumer of due
//!   records checks every one anyway (it reads the entry to call it), and levels 6+ read the
//!   entry to cascade, so stale records are dropped there at no extra miss. A slot whose
//!   counter says more than half its records are stale is compacted by checking each record
//!   against its entry, which bounds the memory of a churn that never ticks: about two entry
//!   reads per removal, amortized, and independent of each other, so they overlap. Inserting
//!   appends to a slot vector. Neither touches other timers.
//! - **Blind cascading.** When the clock reaches a slot of level 0..=5, every record in it has
//!   `due` sharing all bits from 30 up with the slot's start, so the record's low 32 bits give
//!   the whole due time: records move down a level, or out as due, without reading the timer
//!   entries at all. Levels 6+ (timers more than ~97 s of flicks away) read each entry once.
//!   The consumer of due records checks each against its entry anyway.
//!
//! - **Incremental cascading** (`stage.rs`, driven from here): the records of the next
//!   non-empty slot of each level 1..=5 are moved into a staged copy of the lower levels a
//!   slice per tick while the current slot passes, and swapped in when the clock enters that
//!   slot. Without it, entering a level-5 slot (1.5 s of flicks wide) moves every timer due in
//!   it in one frame. A slot of fewer than `MIN_STAGE` records is not staged: a stage's first
//!   tick would move it whole anyway, so it is moved when entered, as a lower slot is.
//! - **Whole slots out in place.** A tick of a frame spans many slots of the low levels. Every
//!   slot of a blind level that ends by `now` holds only due records, so the wheel hands them
//!   out where they lie and empties the slot, with no record moved and no buffer changing
//!   hands; only the slot that `now` falls inside is split, its later records moving down.
//!
//! The parts: `recs.rs` (a record, and a slot's records in blocks), `level.rs` (a level's
//! slots and where a due time goes), `stage.rs` (a slot being moved down ahead of time), and
//! this file, the wheel that drives them.
//!
//! Ground rules (invariants):
//!
//! - Every `Active` timer of this clock with `elapsed < due < NEVER` has a record `(index, low
//!   bits of due)` in the slot `position(elapsed, due)` (or in the staged copy of that slot, see
//!   `stage.rs`); `position` stays the same while `elapsed` moves forward, because `elapsed`
//!   never passes the start of a non-empty slot without processing it.
//! - Any other record is stale. A stale record may look live (the timer was removed and set
//!   again at the same due time): it then sits in the same slot as the live one, and the
//!   consumer, which marks a timer `Ready` at its first record, skips the second.
//! - A slot's `stale` counter never exceeds its number of stale records (a removal counts the
//!   one record it made stale), so a slot whose counter reaches its length is all stale.
//! - Every record at a lower level is due before every record at a higher level.
//!
//! # Cost
//!
//! Insert and remove are O(1) amortized. Advancing to `now` visits only non-empty slots whose
//! start is `<= now`, found through a mask of the levels in use (an idle wheel costs a
//! compare); each record moves down at most 10 times in its timer's life (about 3 for
//! delays of seconds over 60 Hz frames), mostly without a cache miss. Memory: 8 bytes per
//! waiting timer plus vector growth slack and stale records (at most as many as live ones in
//! a slot that was compacted), 11 × 64 slot headers (45 KiB) per wheel from its first
//! insert on (none for a clock never used), and up to 15 × 64
//! more while levels 1..=5 are being staged. Each level also keeps the largest buffer an
//! emptied slot gave back, for the next slot that fills: with timers of seconds at 1e6, the
//! level-5 one holds about a third of the records (up to 6 bytes per timer), which the wheel
//! held anyway just before it entered that slot; the peak is unchanged. The whole blocks of
//! the other buffers given back stay with the level too, for slots that outgrow their first
//! block: freeing them returned each 128 KiB block to the system in the frame that entered
//! the slot.

mod level;
mod recs;
mod stage;

use self::level::{position, Level, BLIND_LEVELS, LEVELS, SLOT_BITS, SLOT_MASK};
use self::recs::Rec;
use self::stage::StagedSlot;
use super::slot::{TimerSlots, NEVER, PREFETCH_AHEAD};

/// A slot is compacted when more than this many and more than half of its records are stale.
const COMPACT_MIN: usize = 16;

/// A slot is moved down ahead of time (`stage.rs`) only when it holds at least this many
/// records: a stage's first tick moves this many anyway, so a smaller slot gains nothing from
/// a stage but its cost (staged levels set up, and swapped in at entry), and entering it moves
/// at most this many records plus those set in its last tick. Small under test, so that the
/// unit and model tests enter both kinds of slot.
const MIN_STAGE: usize = if cfg!(test) { 4 } else { stage::MIN_MOVE };

/// Records a wheel will receive, per level and slot (see [`Wheel::reserve`]).
pub(crate) struct SlotCounts([[u32; 64]; LEVELS]);

impl Default for SlotCounts {
    fn default() -> Self {
        SlotCounts([[0; 64]; LEVELS])
    }
}

impl SlotCounts {
    /// Counts a record due at `due` for `wheel` (nothing for one that would not go in it).
    pub(crate) fn add(&mut self, wheel: &Wheel, due: u64) {
        if due > wheel.elapsed && due != NEVER {
            let (level, slot) = position(wheel.elapsed, due);
            self.0[level][slot] += 1;
        }
    }
}

/// A timing wheel over one clock.
#[derive(Debug)]
pub(crate) struct Wheel {
    /// The clock (`Domain::index`) whose timers this wheel holds.
    domain: usize,
    elapsed: u64,
    /// The levels, made at the first insert or reserve (none before): a frame has a wheel per
    /// clock and most games use one or two clocks, and 11 levels are 45 KiB to zero and free
    /// with each manager.
    levels: Box<[Box<Level>]>,
    /// Levels that may hold records (bit `l`): set by every push into a level and by the
    /// staged levels swapped in, cleared by `first_used_level` for a level it finds empty. An
    /// idle wheel, as most of a frame's three are, answers from this alone instead of reading
    /// its 11 boxed levels and 5 stages (about 140 instructions a wheel, an eighth of an empty
    /// frame).
    used: u16,
    /// The slot of each level 1..=5 being moved down ahead of time (index: level).
    stages: [Option<StagedSlot>; BLIND_LEVELS + 1],
    /// Empty level sets that a finished stage gave back, reused by the next stage of the
    /// same level (index: level), so entering slots does not allocate.
    spare: [Option<Box<[Box<Level>]>>; BLIND_LEVELS + 1],
}

impl Wheel {
    /// An empty wheel for the timers of clock `domain` (a `Domain::index`).
    pub(crate) fn new(domain: usize) -> Wheel {
        Wheel {
            domain,
            elapsed: 0,
            levels: Box::new([]),
            used: 0,
            stages: Default::default(),
            spare: Default::default(),
        }
    }

    /// Makes the levels, if not yet made.
    #[inline]
    fn make_levels(&mut self) {
        if self.levels.is_empty() {
            self.new_levels();
        }
    }

    /// Out of line: inlined, its 4 KiB level on the stack made every insert probe the stack
    /// and save every register.
    #[cold]
    #[inline(never)]
    fn new_levels(&mut self) {
        self.levels = (0..LEVELS).map(|_| Box::new(Level::new())).collect();
    }

    /// The time the wheel has advanced to.
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Sets the time of a wheel that holds nothing yet (a restore, before its timers go in).
    pub(crate) fn start_at(&mut self, elapsed: u64) {
        debug_assert!(
            self.levels.iter().all(|l| l.occupied == 0),
            "an empty wheel"
        );
        self.elapsed = elapsed;
    }

    /// Heap bytes held by the slot vectors and headers.
    pub(crate) fn heap_bytes(&self) -> usize {
        let headers = self.levels.len() * std::mem::size_of::<Level>();
        let recs: usize = self.levels.iter().map(|l| l.heap_bytes()).sum();
        headers + recs + self.stages_heap_bytes()
    }

    /// Makes room for the records `counts` counted (a restore inserts a million at once:
    /// sized up front, the slot vectors never grow and copy).
    pub(crate) fn reserve(&mut self, counts: &SlotCounts) {
        for (level, slots) in counts.0.iter().enumerate() {
            for (slot, &n) in slots.iter().enumerate() {
                if n > 0 {
                    self.make_levels();
                    self.levels[level].slots[slot].recs.reserve(n as usize);
                }
            }
        }
    }

    /// Adds entry `idx`, whose `due` is set to `due` (`elapsed < due < NEVER`). Always inlined
    /// into setting a timer: left to the compiler, it is compiled as a call there, and W1 at
    /// 1e4 timers is slower for it.
    #[inline(always)]
    pub(crate) fn insert(&mut self, idx: u32, due: u64) {
        debug_assert!(self.elapsed < due && due != NEVER);
        let (level, slot) = position(self.elapsed, due);
        self.used |= 1 << level;
        self.make_levels();
        self.levels[level].push(
            slot,
            Rec {
                idx,
                due_lo: due as u32,
            },
        );
    }

    /// Forgets entry `idx`, which is in the wheel with its current `due` and is about to stop
    /// being `Active` at that time: its record goes stale where it is. Always inlined into the
    /// removal: as a call of its own, W2's churn at 1e6 timers ran about 5 % slower.
    #[inline(always)]
    pub(crate) fn remove<C>(&mut self, slots: &TimerSlots<C>, idx: u32) {
        let (level, slot) = position(self.elapsed, slots.at(idx).due());
        if self.is_staging(level, slot) {
            return; // its records are being moved by index: no compaction until it is entered
        }
        let lvl = &mut self.levels[level];
        let s = &mut lvl.slots[slot];
        s.stale += 1;
        let stale = s.stale as usize;
        if stale >= s.recs.len() {
            lvl.empty(slot);
        } else if stale > COMPACT_MIN && stale * 2 > s.recs.len() {
            self.compact(slots, level, slot, idx);
        }
    }

    /// Drops the stale records of a slot (checking each against its entry), and those of
    /// `removed`, whose entry is still `Active` because its removal is under way.
    #[cold]
    fn compact<C>(&mut self, slots: &TimerSlots<C>, level: usize, slot: usize, removed: u32) {
        let (elapsed, domain) = (self.elapsed, self.domain);
        let (blind, start) = (level <= BLIND_LEVELS, self.slot_start(level, slot));
        let lvl = &mut self.levels[level];
        let s = &mut lvl.slots[slot];
        // `&` rather than `&&`: no branch per record (see `Recs::retain`).
        let keep = |r: Rec| {
            let e = slots.at(r.idx);
            let here = if blind {
                e.due() == r.blind_due(start) // the whole due time, from the record alone
            } else {
                position(elapsed, e.due()) == (level, slot)
            };
            (r.idx != removed) & e.waits_in(domain, r.due_lo) & here
        };
        // Each record's entry is a likely cache miss: asked for ahead, they overlap.
        s.recs.retain(keep, |r| slots.prefetch(r.idx));
        s.stale = 0;
        if s.recs.is_empty() {
            lvl.empty(slot);
        }
    }

    /// The start time of slot `slot` of `level` in the window `elapsed` is in.
    fn slot_start(&self, level: usize, slot: usize) -> u64 {
        let shift = level as u32 * SLOT_BITS;
        let level_bits = shift + SLOT_BITS;
        let level_start = if level_bits >= 64 {
            0
        } else {
            self.elapsed & !((1u64 << level_bits) - 1)
        };
        level_start + ((slot as u64) << shift)
    }

    /// The lowest level with records. Looks at used levels only, and forgets those it finds
    /// empty.
    fn first_used_level(&mut self) -> Option<usize> {
        while self.used != 0 {
            let level = self.used.trailing_zeros() as usize;
            if self.levels[level].occupied != 0 {
                return Some(level);
            }
            self.used &= self.used - 1;
        }
        None
    }

    /// The earliest non-empty slot: `(level, slot, start time of the slot)`.
    fn next_slot(&mut self) -> Option<(usize, usize, u64)> {
        let level = self.first_used_level()?;
        let shift = level as u32 * SLOT_BITS;
        let digit = (self.elapsed >> shift) & SLOT_MASK;
        let candidates = self.levels[level].occupied & (u64::MAX << digit);
        debug_assert!(candidates != 0, "wheel invariant: slot behind elapsed");
        let slot = candidates.trailing_zeros() as usize;
        Some((level, slot, self.slot_start(level, slot)))
    }

    /// Advances to `now`, handing `(index, due)` of every record due at or before `now` to
    /// `due` (in no particular order; the consumer sorts, and must check each against its
    /// entry: `Active` in this clock with `entry.due == due`, which drops stale records, and
    /// mark it so that a second record of the same timer and due fails the check).
    pub(crate) fn advance<C>(
        &mut self,
        slots: &mut TimerSlots<C>,
        now: u64,
        mut due: impl FnMut(&mut TimerSlots<C>, u32, u64),
    ) {
        if self.is_idle() {
            // Nothing to stage, nothing to enter: what the walk below would do in ~250
            // instructions over the levels (a frame has three wheels, most of them empty).
            self.elapsed = self.elapsed.max(now);
            return;
        }
        self.stage_ahead(now);
        while let Some((level, slot, start)) = self.next_slot() {
            if start > now {
                break;
            }
            if self.is_staging(level, slot) {
                // Its records are (mostly) in place already: swap them in.
                self.enter_staged(level, start);
                continue;
            }
            // `start` is the earliest anything in the wheel can be due, so moving there keeps
            // every remaining record in front of `elapsed`.
            self.elapsed = self.elapsed.max(start);
            if level <= BLIND_LEVELS && self.drain_due(slots, level, slot, start, now, &mut due) {
                continue;
            }
            let recs = self.levels[level].take(slot);
            for block in recs.blocks() {
                self.flush_block(slots, block, level, start, now, &mut due);
            }
            self.levels[level].give_back(slot, recs);
        }
        self.elapsed = self.elapsed.max(now);
    }

    /// Hands out the records of `block` (of slot starting at `start` of `level`) that are due
    /// at `now` and moves the others down. The consumer reads each due record's timer entry,
    /// a likely cache miss: the entry of the record `PREFETCH_AHEAD` places on is asked for ahead.
    #[inline]
    fn flush_block<C>(
        &mut self,
        slots: &mut TimerSlots<C>,
        block: &[Rec],
        level: usize,
        start: u64,
        now: u64,
        due: &mut impl FnMut(&mut TimerSlots<C>, u32, u64),
    ) {
        for (i, &rec) in block.iter().enumerate() {
            ask_ahead(slots, block, i);
            let at = if level <= BLIND_LEVELS {
                rec.blind_due(start)
            } else {
                // The entry is read anyway: a stale record ends here.
                let e = slots.at(rec.idx);
                if !e.waits_in(self.domain, rec.due_lo) {
                    continue;
                }
                e.due()
            };
            if at <= now {
                due(slots, rec.idx, at);
            } else {
                let (l, s) = position(self.elapsed, at);
                self.used |= 1 << l;
                self.levels[l].push(s, rec);
            }
        }
    }

    /// Hands out every record of the slots of blind `level` that end by `now`, from `slot`
    /// (the earliest non-empty slot of the wheel, starting at `start`) up to the stage's
    /// source: all of them are due, and the lower levels are empty, so nothing moves down and
    /// the consumer, which sorts, may take them in any order. Returns `false`, having done
    /// nothing, when `slot` itself does not end by `now`.
    fn drain_due<C>(
        &mut self,
        slots: &mut TimerSlots<C>,
        level: usize,
        slot: usize,
        start: u64,
        now: u64,
        due: &mut impl FnMut(&mut TimerSlots<C>, u32, u64),
    ) -> bool {
        let shift = level as u32 * SLOT_BITS;
        let window = start - ((slot as u64) << shift);
        // Slots `k < through` of this window end at or before `now`.
        let through = (now - window).saturating_add(1) >> shift;
        if through <= slot as u64 {
            return false;
        }
        let mut mask = if through >= 64 {
            u64::MAX
        } else {
            (1 << through) - 1
        };
        if let Some(stage) = &self.stages[level] {
            mask &= (1 << stage.slot()) - 1; // entered on its own, after the slots before it
        }
        mask &= u64::MAX << slot;
        let last = 63 - u64::from(mask.leading_zeros());
        self.levels[level].drain(mask, window, shift, |block, start| {
            for (i, &rec) in block.iter().enumerate() {
                ask_ahead(slots, block, i);
                due(slots, rec.idx, rec.blind_due(start));
            }
        });
        self.elapsed = self.elapsed.max(window + (last << shift));
        true
    }

    /// No record in any level and no stage under way (a stage's source is a slot of a level
    /// with records).
    fn is_idle(&mut self) -> bool {
        if self.first_used_level().is_some() {
            return false;
        }
        debug_assert!(
            self.stages.iter().all(Option::is_none),
            "a stage of an empty level"
        );
        true
    }

    /// Whether slot `slot` of `level` is a stage's source.
    #[inline]
    fn is_staging(&self, level: usize, slot: usize) -> bool {
        level <= BLIND_LEVELS
            && self.stages[level]
                .as_ref()
                .is_some_and(|s| s.slot() == slot)
    }

    /// Starts stages for the next slot of each blind level, and moves each stage's share for a
    /// tick that advances the wheel to `now` (see `stage.rs`).
    fn stage_ahead(&mut self, now: u64) {
        for level in 1..=BLIND_LEVELS {
            if self.stages[level].is_none() {
                if self.used & (1 << level) == 0 {
                    continue; // no record: its level need not be read
                }
                let lvl = &self.levels[level];
                if lvl.occupied == 0 {
                    continue;
                }
                let digit = (self.elapsed >> (level as u32 * SLOT_BITS)) & SLOT_MASK;
                let slot = (lvl.occupied & (u64::MAX << digit)).trailing_zeros() as usize;
                if lvl.slots[slot].recs.len() < MIN_STAGE {
                    continue; // moved when entered, as a lower level's slot is
                }
                let start = self.slot_start(level, slot);
                let lower = self.spare[level]
                    .take()
                    .unwrap_or_else(|| (0..level).map(|_| Box::new(Level::new())).collect());
                self.stages[level] = Some(StagedSlot::new(slot, start, lower));
            }
            let stage = self.stages[level].as_mut().expect("set above");
            if now >= stage.start() {
                continue; // entered in this tick: `enter_staged` moves the rest
            }
            let share = stage.share(&self.levels[level], self.elapsed, now);
            if share > 0 {
                stage.move_down(&self.levels[level], share);
            }
        }
    }

    /// Enters a staged slot at `start`: moves what is left, then swaps the staged levels in.
    fn enter_staged(&mut self, level: usize, start: u64) {
        let mut stage = self.stages[level].take().expect("a stage");
        stage.move_down(&self.levels[level], stage.left(&self.levels[level]));
        self.levels[level].empty(stage.slot());
        self.elapsed = self.elapsed.max(start);
        let mut lower = stage.into_lower();
        for (l, staged) in lower.iter_mut().enumerate() {
            debug_assert_eq!(
                self.levels[l].occupied, 0,
                "lower levels are empty at entry"
            );
            std::mem::swap(&mut self.levels[l], staged);
        }
        self.used |= (1 << level) - 1;
        // The real levels swapped out are empty (every path that empties a slot resets it),
        // so they serve the next stage of this level without allocating.
        debug_assert!(lower
            .iter()
            .flat_map(|l| l.slots.iter())
            .all(|s| s.recs.is_empty() && s.stale == 0));
        self.spare[level] = Some(lower);
    }

    /// Heap bytes of the staged levels and the spare ones.
    fn stages_heap_bytes(&self) -> usize {
        let staged = self.stages.iter().flatten().map(StagedSlot::lower);
        staged
            .chain(self.spare.iter().flatten().map(|l| &l[..]))
            .flat_map(|lower| lower.iter())
            .map(|l| std::mem::size_of::<Level>() + l.heap_bytes())
            .sum()
    }
}

/// Asks for the entry of the record `PREFETCH_AHEAD` places after record `i` of `block`:
/// whoever takes the records reads each one's entry, a likely cache miss.
#[inline]
fn ask_ahead<C>(slots: &TimerSlots<C>, block: &[Rec], i: usize) {
    if let Some(ahead) = block.get(i + PREFETCH_AHEAD) {
        slots.prefetch(ahead.idx);
    }
}

#[cfg(test)]
mod tests {
    use super::level::WheelSlot;
    use super::*;
    use crate::timer::slot::SlotState;

    fn add(w: &mut Wheel, s: &mut TimerSlots<()>, due: u64) -> u32 {
        let idx = s.alloc();
        s.at_mut(idx).set_due(due);
        w.insert(idx, due);
        idx
    }

    fn take_due(w: &mut Wheel, s: &mut TimerSlots<()>, now: u64) -> Vec<u32> {
        let mut out = vec![];
        w.advance(s, now, |s, i, due| {
            let e = s.at_mut(i);
            if e.state() == SlotState::Active && e.due() == due {
                e.make_ready();
                out.push(i);
            }
        });
        out
    }

    #[test]
    fn fixed_tables_are_as_documented() {
        // The module note and `timer/mod.rs` quote these sizes.
        assert_eq!(std::mem::size_of::<WheelSlot>(), 64);
        assert!(LEVELS * std::mem::size_of::<Level>() <= 46 * 1024);
    }

    #[test]
    fn position_picks_the_highest_differing_digit() {
        assert_eq!(position(0, 5), (0, 5));
        assert_eq!(position(0, 64), (1, 1));
        assert_eq!(position(63, 64), (1, 1));
        assert_eq!(position(0, u64::MAX - 1), (10, 15));
    }

    /// Timers that are the wheel's only ones move down level by level as the clock nears
    /// them, staged (five in one slot) or not (one): each comes out exactly when due, so no
    /// level that received records was taken for idle.
    #[test]
    fn lone_timers_come_out_when_due() {
        for (count, due, step) in [
            (1, 5_000u64, 700u64),
            (5, 300_000, 9_000),
            (1, 1 << 31, 1 << 22),
        ] {
            let mut s = TimerSlots::<()>::new(crate::handle::ContainerId::fresh());
            let mut w = Wheel::new(0);
            for _ in 0..count {
                add(&mut w, &mut s, due);
            }
            let mut now = 0;
            while now < due {
                assert!(take_due(&mut w, &mut s, now).is_empty(), "at {now}");
                now += step;
            }
            assert_eq!(take_due(&mut w, &mut s, now).len(), count, "due {due}");
        }
    }

    #[test]
    fn advance_returns_exactly_the_due_entries() {
        let mut s = TimerSlots::<()>::new(crate::handle::ContainerId::fresh());
        let mut w = Wheel::new(0);
        let dues = [
            1u64,
            63,
            64,
            65,
            4095,
            4096,
            1 << 20,
            (1 << 31) + 3,
            (1 << 33) + 5,
            (1 << 40) + 7,
            u64::MAX - 1,
        ];
        let ids: Vec<u32> = dues.iter().map(|&d| add(&mut w, &mut s, d)).collect();
        let mut got = vec![];
        for now in [
            0u64,
            64,
            5000,
            1 << 30,
            1 << 32,
            1 << 34,
            1 << 41,
            u64::MAX - 1,
        ] {
            let batch = take_due(&mut w, &mut s, now);
            for &i in &batch {
                assert!(s.at(i).due() <= now);
            }
            got.extend(batch);
            for (k, &d) in dues.iter().enumerate() {
                assert_eq!(got.contains(&ids[k]), d <= now, "due {d} at {now}");
            }
        }
        assert_eq!(got.len(), dues.len());
    }

    #[test]
    fn removed_entries_never_come_out() {
        let mut s = TimerSlots::<()>::new(crate::handle::ContainerId::fresh());
        let mut w = Wheel::new(0);
        let a = add(&mut w, &mut s, 100);
        let b = add(&mut w, &mut s, 100);
        let c = add(&mut w, &mut s, 5_000);
        assert!(take_due(&mut w, &mut s, 50).is_empty());
        for idx in [a, c] {
            w.remove(&s, idx);
            let left = s.at(idx).due();
            s.at_mut(idx).wait(SlotState::Paused, left); // what the manager does next
        }
        assert_eq!(take_due(&mut w, &mut s, 10_000), vec![b]);
    }

    #[test]
    fn churn_keeps_slots_compact() {
        let mut s = TimerSlots::<()>::new(crate::handle::ContainerId::fresh());
        let mut w = Wheel::new(0);
        let keep = add(&mut w, &mut s, (1 << 20) + 1);
        let idx = add(&mut w, &mut s, 1 << 20);
        let (l, slot) = position(0, 1 << 20);
        for i in 0..10_000u64 {
            // remove and re-add at the same due (revives the record), or at another due
            w.remove(&s, idx);
            let due = (1 << 20) + 2 + i % 3;
            s.at_mut(idx).set_due(due);
            w.insert(idx, due);
            assert!(w.levels[l].slots[slot].recs.len() <= 2 * COMPACT_MIN + 4);
        }
        let mut got = take_due(&mut w, &mut s, 1 << 21);
        got.sort();
        assert_eq!(got, vec![keep, idx]);
    }

    /// Random dues, removals and re-inserts over many small ticks: the staged wheel hands out
    /// exactly what a sorted list says is due, tick by tick.
    #[test]
    fn staged_cascades_match_a_sorted_list() {
        let mut s = TimerSlots::<()>::new(crate::handle::ContainerId::fresh());
        let mut w = Wheel::new(0);
        let mut rng = crate::test_rng::Rng(0x2545_f491_4f6c_dd1d);
        let mut rnd = move || rng.next();
        let mut live: Vec<(u32, u64)> = vec![];
        let frame = 11_760_000u64; // 60 Hz in flicks
        let mut now = 0u64;
        for _ in 0..2_000 {
            let idx = s.alloc();
            let due = now + 1 + rnd() % (1 << 33);
            s.at_mut(idx).set_due(due);
            w.insert(idx, due);
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
                s.at_mut(idx).set_due(new_due);
                w.insert(idx, new_due);
                live.push((idx, new_due));
            }
            now += frame * (1 + tick % 3);
            let mut got = vec![];
            w.advance(&mut s, now, |s, i, due| {
                let e = s.at_mut(i);
                if e.state() == SlotState::Active && e.due() == due {
                    e.make_ready();
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
