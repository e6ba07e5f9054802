//! Timer records and their storage: a vector of fixed-size entries with a generational free
//! list threaded through the free entries.
//!
//! Ground rules:
//!
//! - An entry is 48 bytes (asserted at compile time): 32 bytes of timer state and the 16-byte
//!   callback pointer, kept together so that a call touches one place. The wheel keeps an
//!   8-byte record per waiting timer beside it, so an idle timer costs 40 bytes plus its
//!   callback box. Everything a timer rarely needs (owner,
//!   name, cancel hook, repeat limit, a first delay that differs from its period) lives in a
//!   side table keyed by slot index, so the common timer pays nothing for it.
//! - A slot's generation changes every time it is freed, so a handle of a cleared timer never
//!   reaches a newer timer in the same slot. A slot whose generation would wrap is retired
//!   (never reused) instead: 40 bytes lost per 4 billion reuses of one slot.
//! - The free list is LIFO and plain data: the same sequence of operations hands out the same
//!   handles, which a restored snapshot relies on.

use crate::time::Domain;
use crate::timer::{CatchUp, TimerCx};

/// A timer callback: the context and the call's [`TimerCx`].
pub(crate) type Callback<C> = Box<dyn for<'a> FnMut(&mut C, &mut TimerCx<'a, C>)>;

/// "No entry": the end of the free list.
const NIL: u32 = u32::MAX;

/// A due time that no clock reaches: the timer never fires.
pub(crate) const NEVER: u64 = u64::MAX;

/// Where a timer is in its life. Decides which structure (if any) holds it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Unused slot; `due` holds the next free slot.
    Free,
    /// Set during an open frame, waiting for the timer tick; `due` holds the delay.
    Pending,
    /// In the wheel (or unlinked when `due == NEVER`); `due` is absolute.
    Active,
    /// Due, in the ready queue (or its deferred list), identified there by `ticket`.
    Ready,
    /// Its callback is running right now.
    Executing,
    /// Running, and asked to pause when the call returns.
    ExecutingPaused,
    /// Paused; `due` holds the remaining time.
    Paused,
}

/// Small per-timer settings, packed into one byte.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Flags(u8);

impl Flags {
    const LOOPING: u8 = 1 << 4;
    const EXTRAS: u8 = 1 << 5;
    /// A scheduler task's delay timer (left out of snapshots with its task).
    const TASK: u8 = 1 << 6;
    /// Has a user tag (in the manager's dense tag table).
    const TAG: u8 = 1 << 7;

    pub(crate) fn new(domain: Domain, catch_up: CatchUp, looping: bool) -> Flags {
        let mut bits = domain as u8 | (catch_up as u8) << 2;
        if looping {
            bits |= Self::LOOPING;
        }
        Flags(bits)
    }

    pub(crate) fn domain(self) -> Domain {
        Domain::ALL[(self.0 & 0b11) as usize]
    }

    pub(crate) fn catch_up(self) -> CatchUp {
        match (self.0 >> 2) & 0b11 {
            0 => CatchUp::Burst,
            1 => CatchUp::Once,
            _ => CatchUp::Delay,
        }
    }

    pub(crate) fn looping(self) -> bool {
        self.0 & Self::LOOPING != 0
    }

    pub(crate) fn has_extras(self) -> bool {
        self.0 & Self::EXTRAS != 0
    }

    pub(crate) fn task(self) -> bool {
        self.0 & Self::TASK != 0
    }

    pub(crate) fn has_tag(self) -> bool {
        self.0 & Self::TAG != 0
    }

    pub(crate) fn set_tag(&mut self) {
        self.0 |= Self::TAG;
    }

    pub(crate) fn set_task(&mut self) {
        self.0 |= Self::TASK;
    }

    pub(crate) fn set_extras(&mut self, on: bool) {
        if on {
            self.0 |= Self::EXTRAS;
        } else {
            self.0 &= !Self::EXTRAS;
        }
    }
}

/// One timer's hot record.
pub(crate) struct Entry<C> {
    /// Active/Ready/Executing: absolute due time. Pending/Paused: time left. Free: the next
    /// free slot.
    pub(crate) due: u64,
    /// Looping: the period. One-shot: its delay (reported as its rate).
    pub(crate) period: u64,
    /// Generation of the current occupant; never 0.
    pub(crate) gen: u32,
    /// Global set order, for deterministic ties (renumbered when the counter runs out).
    pub(crate) seq: u32,
    /// Calls made, low 32 bits (the rest lives in the extras when it overflows).
    pub(crate) calls: u32,
    /// Identifies the current ready-queue record; older records for this slot are stale.
    pub(crate) ticket: u16,
    pub(crate) flags: Flags,
    pub(crate) state: State,
    /// `None` while the callback runs (or in a free slot).
    pub(crate) callback: Option<Callback<C>>,
}

const _: () = assert!(std::mem::size_of::<Entry<()>>() == 48);

impl<C> Entry<C> {
    /// An unused slot whose next occupant gets generation `gen`.
    fn free(gen: u32) -> Entry<C> {
        Entry {
            due: 0,
            period: 0,
            gen,
            seq: 0,
            calls: 0,
            ticket: 0,
            flags: Flags::default(),
            state: State::Free,
            callback: None,
        }
    }
}

impl<C> std::fmt::Debug for Entry<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("due", &self.due)
            .field("period", &self.period)
            .field("gen", &self.gen)
            .field("seq", &self.seq)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// The slot vector with its free list.
#[derive(Debug)]
pub(crate) struct Slots<C> {
    pub(crate) entries: Vec<Entry<C>>,
    free_head: u32,
    live: usize,
}

impl<C> Slots<C> {
    pub(crate) fn new() -> Self {
        Slots {
            entries: Vec::new(),
            free_head: NIL,
            live: 0,
        }
    }

    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Takes a free slot (or grows), returning its index. The caller fills every field but
    /// `gen`, which is already the new occupant's generation.
    pub(crate) fn alloc(&mut self) -> u32 {
        self.live += 1;
        if self.free_head != NIL {
            let idx = self.free_head;
            self.free_head = self.entries[idx as usize].due as u32;
            return idx;
        }
        let idx = u32::try_from(self.entries.len())
            .ok()
            .filter(|&i| i != NIL)
            .expect("TimerManager: more than 4,294,967,294 timer slots");
        self.entries.push(Entry::free(1));
        idx
    }

    /// Returns a slot to the free list with a new generation (or retires it).
    pub(crate) fn free(&mut self, idx: u32) {
        self.live -= 1;
        let e = &mut self.entries[idx as usize];
        e.state = State::Free;
        e.callback = None;
        if e.gen == u32::MAX {
            return; // retired: no generation left that old handles cannot match
        }
        e.gen += 1;
        e.due = u64::from(self.free_head);
        self.free_head = idx;
    }

    /// The free slots, the next one to be reused first.
    pub(crate) fn free_list(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut at = self.free_head;
        while at != NIL {
            out.push(at);
            at = self.entries[at as usize].due as u32;
        }
        out
    }

    /// Replaces everything with free slots of these generations, `free` linked as the free
    /// list (its first slot reused first) and `live` slots counted as taken (the caller fills
    /// them in).
    pub(crate) fn rebuild(&mut self, generations: &[u32], free: &[u32], live: usize) {
        self.entries.clear();
        self.entries
            .extend(generations.iter().map(|&gen| Entry::free(gen)));
        self.free_head = free.first().copied().unwrap_or(NIL);
        for pair in free.windows(2) {
            self.entries[pair[0] as usize].due = u64::from(pair[1]);
        }
        if let Some(&last) = free.last() {
            self.entries[last as usize].due = u64::from(NIL);
        }
        self.live = live;
    }

    /// The live entry at `idx` with generation `gen`, if any.
    pub(crate) fn get(&self, idx: u32, gen: u32) -> Option<&Entry<C>> {
        self.entries
            .get(idx as usize)
            .filter(|e| e.gen == gen && e.state != State::Free)
    }

    #[inline]
    pub(crate) fn at(&self, idx: u32) -> &Entry<C> {
        &self.entries[idx as usize]
    }

    #[inline]
    pub(crate) fn at_mut(&mut self, idx: u32) -> &mut Entry<C> {
        &mut self.entries[idx as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_slots_get_a_new_generation_and_are_reused_lifo() {
        let mut s = Slots::<()>::new();
        let a = s.alloc();
        let b = s.alloc();
        s.at_mut(a).state = State::Active;
        s.at_mut(b).state = State::Active;
        assert_eq!(s.at(a).gen, 1);
        s.free(a);
        s.free(b);
        assert_eq!(s.alloc(), b);
        assert_eq!(s.alloc(), a);
        assert_eq!(s.at(a).gen, 2);
        assert_eq!(s.live(), 2);
    }

    #[test]
    fn a_slot_whose_generation_would_wrap_is_retired() {
        let mut s = Slots::<()>::new();
        let a = s.alloc();
        s.at_mut(a).gen = u32::MAX;
        s.free(a);
        assert_ne!(s.alloc(), a);
    }
}
