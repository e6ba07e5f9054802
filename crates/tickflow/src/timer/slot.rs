//! Timer records and their storage: a vector of fixed-size entries and a stack of free slots.
//!
//! Ground rules:
//!
//! - An entry is 48 bytes (asserted at compile time): 32 bytes of timer state and the 16-byte
//!   callback (`callback.rs`: a closure of up to 8 bytes is stored in it, a larger one boxed),
//!   kept together so that a call touches one place. The wheel keeps an 8-byte record per
//!   waiting timer beside it, so an idle timer costs 56 bytes, plus a box for a large closure. Everything a timer rarely needs (owner,
//!   name, cancel hook, repeat limit, a first delay that differs from its period) lives in a
//!   side table keyed by slot index, so the common timer pays nothing for it.
//! - A slot's generation changes every time it is freed, so a handle of a cleared timer never
//!   reaches a newer timer in the same slot. `gen` holds the full handle tag (the manager's
//!   container id and the generation, see `handle.rs`), so a handle of another manager never
//!   matches either. A slot whose generation would wrap is retired (never reused) instead:
//!   48 bytes lost per million reuses of one slot.
//! - The free list is a LIFO stack of slot indexes, plain data: the same sequence of operations
//!   hands out the same handles, which a restored snapshot relies on. A separate stack (4 bytes
//!   per free slot) rather than links threaded through the free entries: a snapshot copies it
//!   in one sequential pass, where walking links through a slab that once held ten million
//!   timers took seconds of cache misses.

use crate::handle::{next_tag, ContainerId};
use crate::time::Domain;
use crate::timer::callback::Callback;
use crate::timer::CatchUp;

/// Slot index u32::MAX is never allocated (the `Default` handle names it).
const NIL: u32 = u32::MAX;

/// A due time that no clock reaches: the timer never fires.
pub(crate) const NEVER: u64 = u64::MAX;

/// Where a timer is in its life. Decides which structure (if any) holds it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SlotState {
    /// Unused slot (free, or retired when its generation is used up).
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
    /// A wake timer (`manager/wake.rs`): left out of snapshots with the futures it wakes.
    const WAKE: u8 = 1 << 6;
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

    pub(crate) fn wake(self) -> bool {
        self.0 & Self::WAKE != 0
    }

    pub(crate) fn has_tag(self) -> bool {
        self.0 & Self::TAG != 0
    }

    pub(crate) fn set_tag(&mut self) {
        self.0 |= Self::TAG;
    }

    pub(crate) fn set_wake(&mut self) {
        self.0 |= Self::WAKE;
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
pub(crate) struct TimerEntry<C> {
    /// Active/Ready/Executing: absolute due time. Pending/Paused: time left.
    pub(super) due: u64,
    /// Looping: the period. One-shot: its delay (reported as its rate).
    pub(super) period: u64,
    /// Tag (container id and generation) of the current occupant; never 0.
    pub(super) gen: u32,
    /// Global set order, for deterministic ties (renumbered when the counter runs out).
    pub(super) seq: u32,
    /// Calls made, low 32 bits (the rest lives in the extras when it overflows).
    pub(super) calls: u32,
    /// Identifies the current ready-queue record; older records for this slot are stale.
    pub(super) ticket: u16,
    pub(super) flags: Flags,
    pub(super) state: SlotState,
    /// `None` while the callback runs (or in a free slot).
    pub(super) callback: Option<Callback<C>>,
}

const _: () = assert!(std::mem::size_of::<TimerEntry<()>>() == 48);

impl<C> TimerEntry<C> {
    /// Whether this timer waits in the wheel of clock `domain` (a `Domain::index`) at a due
    /// time whose low 32 bits are `due_lo`: what a wheel record `(index, due_lo)` must match
    /// to be live (`wheel/mod.rs`, lazy removal).
    #[inline]
    pub(super) fn waits_in(&self, domain: usize, due_lo: u32) -> bool {
        // `&`: all three read this entry, and callers want no branch per record.
        (self.state == SlotState::Active)
            & (self.flags.domain().index() == domain)
            & (self.due as u32 == due_lo)
    }

    /// An unused slot whose next occupant gets generation `gen`.
    fn free(gen: u32) -> TimerEntry<C> {
        TimerEntry {
            due: 0,
            period: 0,
            gen,
            seq: 0,
            calls: 0,
            ticket: 0,
            flags: Flags::default(),
            state: SlotState::Free,
            callback: None,
        }
    }
}

impl<C> std::fmt::Debug for TimerEntry<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimerEntry")
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
pub(crate) struct TimerSlots<C> {
    pub(super) entries: Vec<TimerEntry<C>>,
    /// Free slots; the last is reused first.
    free: Vec<u32>,
    live: usize,
    id: ContainerId,
}

impl<C> TimerSlots<C> {
    pub(crate) fn new(id: ContainerId) -> Self {
        TimerSlots {
            entries: Vec::new(),
            free: Vec::new(),
            live: 0,
            id,
        }
    }

    /// The container id in every handle these slots hand out.
    pub(crate) fn id(&self) -> ContainerId {
        self.id
    }

    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Takes a free slot (or grows), returning its index. The caller fills every field but
    /// `gen`, which is already the new occupant's generation.
    pub(crate) fn alloc(&mut self) -> u32 {
        self.live += 1;
        if let Some(idx) = self.free.pop() {
            return idx;
        }
        let idx = u32::try_from(self.entries.len())
            .ok()
            .filter(|&i| i != NIL)
            .expect("Timers: more than 4,294,967,294 timer slots");
        self.entries.push(TimerEntry::free(self.id.first_tag()));
        idx
    }

    /// Room for `additional` more live slots before the vector grows: free slots count.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entries
            .reserve(additional.saturating_sub(self.free.len()));
    }

    /// Returns a slot to the free list with a new generation (or retires it).
    pub(crate) fn free(&mut self, idx: u32) {
        self.live -= 1;
        let e = &mut self.entries[idx as usize];
        e.state = SlotState::Free;
        let callback = e.callback.take();
        // Retired when no generation is left that old handles cannot match.
        if let Some(tag) = next_tag(e.gen) {
            e.gen = tag;
            self.free.push(idx);
        }
        // The user's destructor last: if it panics, the slot is already free.
        drop(callback);
    }

    /// The free slots, the next one to be reused first.
    pub(crate) fn free_list(&self) -> impl Iterator<Item = u32> + '_ {
        self.free.iter().rev().copied()
    }

    /// Replaces everything with free slots of these tags, `free` as the free list (its first
    /// slot reused first; free slots not listed are retired) and `live` slots counted as taken
    /// (the caller fills them in).
    pub(crate) fn rebuild(&mut self, id: ContainerId, tags: &[u32], free: &[u32], live: usize) {
        self.id = id;
        self.entries.clear();
        self.entries
            .extend(tags.iter().map(|&tag| TimerEntry::free(tag)));
        self.free.clear();
        self.free.extend(free.iter().rev());
        self.live = live;
    }

    /// Bytes of the free-slot stack, for memory accounting.
    pub(crate) fn free_bytes(&self) -> usize {
        self.free.capacity() * std::mem::size_of::<u32>()
    }

    /// The live entry at `idx` with tag `gen`, if any.
    pub(crate) fn get(&self, idx: u32, gen: u32) -> Option<&TimerEntry<C>> {
        self.entries
            .get(idx as usize)
            .filter(|e| e.gen == gen && e.state != SlotState::Free)
    }

    #[inline]
    pub(crate) fn at(&self, idx: u32) -> &TimerEntry<C> {
        &self.entries[idx as usize]
    }

    #[inline]
    pub(crate) fn at_mut(&mut self, idx: u32) -> &mut TimerEntry<C> {
        &mut self.entries[idx as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_slots_get_a_new_generation_and_are_reused_lifo() {
        let id = ContainerId::fresh();
        let mut s = TimerSlots::<()>::new(id);
        let a = s.alloc();
        let b = s.alloc();
        s.at_mut(a).state = SlotState::Active;
        s.at_mut(b).state = SlotState::Active;
        assert_eq!(s.at(a).gen, id.tag(1));
        s.free(a);
        s.free(b);
        assert_eq!(s.alloc(), b);
        assert_eq!(s.alloc(), a);
        assert_eq!(s.at(a).gen, id.tag(2));
        assert_eq!(s.live(), 2);
    }

    #[test]
    fn a_slot_whose_generation_would_wrap_is_retired() {
        let id = ContainerId::fresh();
        let mut s = TimerSlots::<()>::new(id);
        let a = s.alloc();
        s.at_mut(a).gen = id.tag(crate::handle::GEN_MAX);
        s.free(a);
        assert_ne!(s.alloc(), a);
    }
}
