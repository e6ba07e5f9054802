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
use crate::time::CatchUp;
use crate::time::Domain;
use crate::timer::callback::Callback;

/// Slot index u32::MAX is never allocated (the `Default` handle names it).
const NIL: u32 = u32::MAX;

/// How many records ahead of the one it is handling a tick prefetches the timer entry of
/// (`prefetch`), in the wheel's slots and in the ready queue's run alike: far enough for the
/// entry's cache miss to be over when its record is reached. W3 at 1e6 timers measured 16 and
/// 32 alike, 8 a little slower.
pub(crate) const PREFETCH_AHEAD: usize = 16;

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
        // A match rather than `Domain::ALL[..]`: no bounds check on a hot path (`new` never
        // stores 3).
        match self.0 & 0b11 {
            0 => Domain::Game,
            1 => Domain::Real,
            _ => Domain::Frames,
        }
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
///
/// Laid out in a fixed order (`repr(C)`) so that what a handle check, a compaction and a due
/// check read lies in the first 16 bytes: at 48 bytes an entry starts 0, 16, 32 or 48 bytes
/// into a cache line, and its first 16 bytes never straddle two lines (in the compiler's order
/// `due` and `state` were 31 bytes apart, two lines for one entry in four).
#[repr(C)]
pub(crate) struct TimerEntry<C> {
    /// Active/Ready/Executing: absolute due time. Pending/Paused: time left.
    due: u64,
    /// Tag (container id and generation) of the current occupant; never 0.
    gen: u32,
    /// Identifies the current ready-queue record; older records for this slot are stale.
    ticket: u16,
    flags: Flags,
    state: SlotState,
    /// `None` while the callback runs (or in a free slot).
    callback: Option<Callback<C>>,
    /// Looping: the period. One-shot: its delay (reported as its rate).
    period: u64,
    /// Global set order, for deterministic ties (renumbered when the counter runs out).
    seq: u32,
    /// Calls made, low 32 bits (the rest lives in the extras when it overflows).
    calls: u32,
}

const _: () = assert!(std::mem::size_of::<TimerEntry<()>>() == 48);

/// Reads of a timer's record; its writes are the state changes below, each keeping the
/// record's rules (what `due` means in each state, the ticket of a ready record).
impl<C> TimerEntry<C> {
    /// Active/Ready/Executing: absolute due time. Pending/Paused: time left.
    #[inline]
    pub(crate) fn due(&self) -> u64 {
        self.due
    }

    /// Looping: the period. One-shot: its delay.
    #[inline]
    pub(crate) fn period(&self) -> u64 {
        self.period
    }

    /// Tag of the current occupant.
    #[inline]
    pub(crate) fn gen(&self) -> u32 {
        self.gen
    }

    /// Global set order (ties go to the lower).
    #[inline]
    pub(crate) fn seq(&self) -> u32 {
        self.seq
    }

    /// Calls made, low 32 bits.
    #[inline]
    pub(crate) fn calls(&self) -> u32 {
        self.calls
    }

    /// The current ready-queue record's ticket.
    #[inline]
    pub(crate) fn ticket(&self) -> u16 {
        self.ticket
    }

    #[inline]
    pub(crate) fn flags(&self) -> Flags {
        self.flags
    }

    #[inline]
    pub(crate) fn state(&self) -> SlotState {
        self.state
    }

    /// Whether the callback is in place (not running, not a free slot).
    #[inline]
    pub(crate) fn has_callback(&self) -> bool {
        self.callback.is_some()
    }
}

/// A timer's state changes: each sets what its new state means (`due` is an absolute time
/// while Active, Ready or Executing and the time left while Pending or Paused).
impl<C> TimerEntry<C> {
    /// Fills a freshly allocated slot for a new timer (Active, not yet in any structure).
    pub(crate) fn occupy(&mut self, period: u64, seq: u32, flags: Flags, cb: Callback<C>) {
        (self.period, self.seq, self.calls, self.flags) = (period, seq, 0, flags);
        self.state = SlotState::Active;
        // A free slot holds no callback (`TimerSlots::free` takes it), so there is nothing to
        // drop here; not calling a destructor also lets the caller keep what it read of the
        // table in registers.
        let old = self.callback.replace(cb);
        debug_assert!(old.is_none(), "a free slot holds no callback");
        std::mem::forget(old);
    }

    /// Fills a slot from a saved timer (its state comes with `wait` or `set_due`).
    pub(crate) fn restore(&mut self, seq: u32, period: u64, calls: u32, flags: Flags) {
        (self.seq, self.period, self.calls, self.flags) = (seq, period, calls, flags);
    }

    /// Due at the absolute time `due` (in a wheel, or nowhere when never).
    pub(crate) fn set_due(&mut self, due: u64) {
        self.state = SlotState::Active;
        self.due = due;
    }

    /// Waits outside every structure, `left` to go: `Pending` (its countdown starts at the
    /// next tick) or `Paused`.
    pub(crate) fn wait(&mut self, state: SlotState, left: u64) {
        debug_assert!(matches!(state, SlotState::Pending | SlotState::Paused));
        self.state = state;
        self.due = left;
    }

    /// A new time left for a timer that is `Pending` or `Paused`.
    pub(crate) fn set_left(&mut self, left: u64) {
        debug_assert!(matches!(self.state, SlotState::Pending | SlotState::Paused));
        self.due = left;
    }

    /// Makes this slot's current ready record: `Ready`, with a new ticket (older records of
    /// the slot go stale). Returns the ticket.
    pub(crate) fn make_ready(&mut self) -> u16 {
        // The ticket first: the compiler reads it as 4 bytes that take in `state`, and after
        // a 1-byte store to `state` that read waited for the store to reach the cache (perf
        // put a third of `Level::drain`'s samples there in W1 at 1e4).
        self.ticket = self.ticket.wrapping_add(1);
        self.state = SlotState::Ready;
        self.ticket
    }

    /// The callback starts running (`paused`: the timer was paused from its own callback,
    /// or is resumed while running).
    pub(crate) fn set_executing(&mut self, paused: bool) {
        self.state = if paused {
            SlotState::ExecutingPaused
        } else {
            SlotState::Executing
        };
    }

    /// Counts a call; `true` when the low 32 bits wrapped (the caller carries into the
    /// extras).
    pub(crate) fn count_call(&mut self) -> bool {
        self.calls = self.calls.wrapping_add(1);
        self.calls == 0
    }

    pub(crate) fn set_period(&mut self, period: u64) {
        self.period = period;
    }

    pub(crate) fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    /// The settings byte, to mark a tag, extras or a wake timer (`Flags`' setters keep its
    /// encoding; the domain, catch-up and looping bits are set once, by `occupy`).
    pub(crate) fn flags_mut(&mut self) -> &mut Flags {
        &mut self.flags
    }

    /// Takes the callback out to run it (`None` while it runs).
    pub(crate) fn take_callback(&mut self) -> Option<Callback<C>> {
        self.callback.take()
    }

    /// Puts the callback back after a call, or binds a restored timer's.
    pub(crate) fn put_callback(&mut self, cb: Callback<C>) {
        self.callback = Some(cb);
    }
}

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
    entries: Vec<TimerEntry<C>>,
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
    /// Slots ever allocated (free ones included): every index below is valid.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Slots the table has room for before it grows.
    pub(crate) fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Every slot, in index order.
    pub(crate) fn entries(&self) -> &[TimerEntry<C>] {
        &self.entries
    }

    /// Room for exactly `capacity` slots in all (a manager made with a capacity).
    pub(crate) fn reserve_exact(&mut self, capacity: usize) {
        self.entries.reserve_exact(capacity);
    }

    /// Heap bytes of the slot table.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<TimerEntry<C>>()
    }

    #[inline]
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

    /// Starts bringing the entry at `idx` (if any) into the cache, for a call made soon: a
    /// tick asks for the entry of the record [`PREFETCH_AHEAD`] places after the one it is at.
    #[inline]
    pub(crate) fn prefetch(&self, idx: u32) {
        if let Some(e) = self.entries.get(idx as usize) {
            crate::prefetch::prefetch(e);
        }
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
