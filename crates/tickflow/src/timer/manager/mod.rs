//! [`Timers`], the manager: it holds the engine's parts (the slot table, one wheel per clock,
//! the ready queue) and the side tables (extras, owners, tags, the durable journal), sets
//! timers and places them in a wheel or the ready queue. Its fields are private to this
//! folder, whose files are its verbs: clearing and pausing in `control.rs`, queries in
//! `query.rs`, the tick and the calls in `fire.rs`, snapshots in `snapshot.rs`, moving owners
//! in `moved.rs`, wake timers in `wake.rs`, durable timers in `durable.rs` and
//! `durable_load.rs`. Two of its verbs live outside the folder, beside what they serve:
//! setting a timer (`after`, `every`, ...) with the builder in `../builder.rs`, and binding
//! callbacks to loaded durable rows (`load_durable`) with the binding trait in `../bind.rs`.
//! The parts keep their own invariants: a timer's slot in `slot.rs`, the wheels in `wheel/`,
//! the due calls of a tick in `ready/`; the side data by slot in `extras.rs` and the durable
//! journal in `journal.rs`, two leaves this file holds (they import nothing of the manager,
//! so this file imports none of the files that hold its verbs, and the timer face names those
//! files' types directly).

use std::collections::VecDeque;
use std::fmt;

mod control;
pub(super) mod durable;
pub(super) mod durable_load;
mod extras;
mod fire;
mod journal;
pub(super) mod moved;
mod query;
pub(crate) mod snapshot;
pub(super) mod wake;

use self::extras::{Extras, SideTable};
use self::journal::Journal;

use super::ready::{Call, ReadyQueue, TickSpan};
use super::slot::{Flags, SlotState, TimerSlots, NEVER};
use super::spec::Spec;
use super::wheel::Wheel;
use crate::commands::Commands;
use crate::handle::ContainerId;
use crate::owner::OwnerId;
use crate::owner::{OwnerIndex, Owners};
use crate::time::{Domain, Time};
use crate::timer::callback::{Callback, CancelHook};
use crate::timer::info::TimerHandle;

/// Where a new countdown starts when no frame is open.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// From the running call's scheduled time when it runs on the same clock (chains of
    /// timers do not drift), else from the clock's current time.
    Call,
    /// From the clock's current time (unpause).
    Now,
    /// From this time on the timer's clock.
    At(u64),
}

/// One-shot and looping timers on three clocks: set, clear, pause and query them. A
/// [`Scheduler`](crate::Scheduler)'s frames move their clocks
/// ([`Scheduler::timers`](crate::Scheduler::timers) hands them out); a
/// [`TimerManager`](super::TimerManager) holds them on their own and moves the clocks with
/// [`tick`](super::TimerManager::tick).
///
/// `C` is your context (game state): every callback gets `&mut C`. See the [module
/// docs](crate::timer) for the rules every method keeps.
pub struct Timers<C> {
    slots: TimerSlots<C>,
    extras: SideTable<C>,
    owners: OwnerIndex<u32>,
    wheels: [Wheel; 3],
    ready: ReadyQueue,
    /// Timers set in the open frame (stale records are skipped by state).
    pending: Vec<u32>,
    /// `prev` and `now` of every clock for the last tick; `now` is the current time.
    span: TickSpan,
    next_seq: u32,
    /// A frame has begun and its timer tick has not run yet: new timers are pending.
    frame_open: bool,
    in_tick: bool,
    /// Calls are running: anything that becomes due now waits for the next tick.
    processing: bool,
    /// Clock and scheduled time of the call that is running.
    firing: Option<(Domain, u64)>,
    budget: Option<usize>,
    /// Most calls one timer makes in one tick (see `set_catch_up_cap`).
    catch_up_cap: u64,
    /// Missed calls dropped by the catch-up cap, since the manager was made.
    dropped: u64,
    /// Calls owed by all timers (see `Extras::owed`): 0 but right after a durable load, so a
    /// call checks one integer for them.
    owed: u64,
    cancelled: VecDeque<CancelHook<C>>,
    /// Handles of fired recording wake timers, for their driver (see `wake.rs`).
    woken: Vec<TimerHandle>,
    /// User tags by slot, for timers flagged as tagged; empty until the first tag. Dense
    /// (8 bytes a slot) because tags are set on many timers at once, to rebind them after a
    /// restore: a side-table entry each would cost more than the timer.
    tags: Vec<u64>,
    /// What callbacks reach with `cx.commands()`: the scheduler's, or none when standalone.
    commands: Commands<C>,
    /// Durable timers' keys and the changes a store has not taken yet (`durable.rs`).
    journal: Journal,
}

impl<C> fmt::Debug for Timers<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timers")
            .field("len", &self.slots.live())
            .field("game", &Time::from_flicks(self.span.now()[0]))
            .field("real", &Time::from_flicks(self.span.now()[1]))
            .field("frame", &self.span.frame())
            .finish_non_exhaustive()
    }
}

impl<C: 'static> Timers<C> {
    /// An empty set of timers with all clocks at zero.
    pub(crate) fn new() -> Self {
        Timers {
            slots: TimerSlots::new(ContainerId::fresh()),
            extras: SideTable::default(),
            owners: OwnerIndex::default(),
            wheels: [Wheel::new(0), Wheel::new(1), Wheel::new(2)],
            ready: ReadyQueue::default(),
            pending: Vec::new(),
            span: TickSpan::default(),
            next_seq: 0,
            frame_open: false,
            in_tick: false,
            processing: false,
            firing: None,
            budget: None,
            catch_up_cap: crate::time::DEFAULT_CATCH_UP_CAP,
            dropped: 0,
            owed: 0,
            cancelled: VecDeque::new(),
            woken: Vec::new(),
            tags: Vec::new(),
            commands: Commands::disconnected(),
            journal: Journal::default(),
        }
    }

    /// The commands callbacks reach through their context.
    pub(crate) fn commands(&self) -> &Commands<C> {
        &self.commands
    }

    /// Its owners, for tracking new ones.
    pub(crate) fn owners_mut(&mut self) -> &mut dyn Owners {
        &mut self.owners
    }

    /// Its owners, to read.
    pub(crate) fn owners_ref(&self) -> &dyn Owners {
        &self.owners
    }

    /// Points the callbacks' commands at a scheduler.
    pub(crate) fn set_commands(&mut self, commands: Commands<C>) {
        self.commands = commands;
    }

    /// Room for `capacity` timers before the tables grow.
    pub(crate) fn reserve_exact(&mut self, capacity: usize) {
        self.slots.reserve_exact(capacity);
    }

    /// Room for `additional` more timers before the slot table grows, like `Vec::reserve`
    /// (free slots count; it grows by at least a doubling). For a batch of known size: a
    /// table that grows as the timers arrive copies itself at each doubling, and in a new
    /// process each page of the copy is a page fault. A tag table, once made, follows the
    /// slot table's capacity.
    ///
    /// ```
    /// use tickflow::{time::secs, Scheduler};
    ///
    /// let mut sched = Scheduler::<()>::new();
    /// let timers = sched.timers();
    /// timers.reserve(1000);
    /// for i in 0..1000 {
    ///     timers.after(secs(1.0)).tag(i).call(|_, _| {});
    /// }
    /// assert_eq!(timers.len(), 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// Room for `n` more timers with side-table data, growing in doublings (for loads that
    /// come in parts).
    pub(crate) fn reserve_with_extras(&mut self, n: usize) {
        self.slots.reserve(n);
        self.extras.reserve(n);
    }

    /// Stores a new timer and starts its countdown. The record and side-table entry are built
    /// before any list is touched.
    #[inline(always)]
    pub(crate) fn insert(&mut self, spec: Spec<C>, cb: Callback<C>) -> TimerHandle {
        if spec.is_plain() {
            // Most timers. Inlined into the caller, where `after(..).call(..)` makes this
            // branch known, a plain timer passes five words in registers instead of its spec
            // in memory, and costs no side-table code.
            let flags = Flags::new(spec.domain, spec.catch_up, spec.looping);
            let (period, tag) = (spec.period, spec.tag);
            // Nothing in a plain spec owns memory (`is_plain`): forgetting it skips a drop
            // that tests each option again.
            std::mem::forget(spec);
            let handle = self.insert_plain(flags, period, cb);
            if let Some(tag) = tag {
                self.tag_new(handle.index(), tag);
            }
            handle
        } else if spec.absolute {
            self.insert_absolute(spec, cb)
        } else {
            self.insert_with_extras(spec, cb)
        }
    }

    /// [`insert`](Self::insert) for a timer with no options but its clock, catch-up policy
    /// and tag: its first delay is its period.
    ///
    /// `new_entry`, `schedule` and `place_on` are always inlined into it, so that setting a
    /// plain timer is one function where the compiler inlines this one: left to the
    /// compiler, they became two or three calls that each saved and restored six registers
    /// on every set (BENCHMARKS.md, W2's set + clear pair).
    #[inline]
    fn insert_plain(&mut self, flags: Flags, period: u64, cb: Callback<C>) -> TimerHandle {
        let (idx, handle) = self.new_entry(flags, period, cb);
        self.schedule(idx, period, Base::Call);
        handle
    }

    /// [`insert`](Self::insert) for a timer with an owner, name, hook, call limit, first
    /// delay or start time.
    #[inline(never)]
    fn insert_with_extras(&mut self, spec: Spec<C>, cb: Callback<C>) -> TimerHandle {
        let mut extras = Extras {
            owner: spec.owner,
            name: spec.name,
            durable: spec.durable,
            ..Extras::default()
        };
        extras.set_rare(
            spec.on_cancel,
            spec.times,
            (spec.delay != spec.period).then_some(spec.delay),
            spec.payload,
        );
        let mut flags = Flags::new(spec.domain, spec.catch_up, spec.looping);
        flags.set_extras(!extras.is_empty());
        let (idx, handle) = self.new_entry(flags, spec.period, cb);
        if let Some(tag) = spec.tag {
            self.tag_new(idx, tag);
        }
        if let Some(owner) = extras.owner {
            self.owners.add(owner, idx);
        }
        let durable = extras.durable.is_some();
        if flags.has_extras() {
            self.extras.insert(idx, extras);
        }
        if durable {
            self.claim_key(idx);
        }
        self.schedule(idx, spec.delay, spec.start.map_or(Base::Call, Base::At));
        handle
    }

    /// [`insert`](Self::insert) for a timer due at an absolute time ([`at`](Self::at)): its
    /// delay is what is left of it now, on the clock the builder ended on (`real()` may have
    /// changed it), and it is placed at once even inside a frame, where a relative timer waits
    /// in the pending list and counts from the time the frame reaches. (Its own path: a
    /// branch for it in `insert_with_extras` measured 12-15 ns more per tickflow-bevy timer.)
    #[inline(never)]
    fn insert_absolute(&mut self, mut spec: Spec<C>, cb: Callback<C>) -> TimerHandle {
        let now = self.span.now_of(spec.domain);
        let left = spec.start.unwrap_or(now).saturating_sub(now);
        (spec.delay, spec.period, spec.start) = (left, left, Some(now));
        let open = std::mem::replace(&mut self.frame_open, false);
        let handle = self.insert_with_extras(spec, cb);
        self.frame_open = open;
        handle
    }

    /// Takes a slot for a new timer and fills it in (not yet scheduled).
    #[inline(always)]
    fn new_entry(&mut self, flags: Flags, period: u64, cb: Callback<C>) -> (u32, TimerHandle) {
        if self.next_seq == u32::MAX {
            self.renumber();
        }
        let idx = self.slots.alloc();
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = self.slots.at_mut(idx);
        e.occupy(period, seq, flags, cb);
        let tag = std::num::NonZeroU32::new(e.gen()).expect("tags are never 0");
        (idx, TimerHandle::new(idx, tag))
    }

    /// Starts a countdown of `delay` for a timer that is in no structure.
    #[inline(always)]
    pub(crate) fn schedule(&mut self, idx: u32, delay: u64, base: Base) {
        let domain = self.slots.at(idx).flags().domain();
        if self.frame_open {
            self.slots.at_mut(idx).wait(SlotState::Pending, delay);
            self.pending.push(idx);
            return;
        }
        let start = match (base, self.firing) {
            (Base::At(start), _) => start,
            (Base::Call, Some((d, scheduled))) if d == domain => scheduled,
            _ => self.span.now_of(domain),
        };
        self.place_on(idx, domain, start.checked_add(delay).unwrap_or(NEVER));
    }

    /// Puts a timer due at `due` where it belongs: nowhere (never), the wheel, or the ready
    /// queue (deferred to the next tick while calls are running).
    #[inline]
    pub(crate) fn place(&mut self, idx: u32, due: u64) {
        let domain = self.slots.at(idx).flags().domain();
        self.place_on(idx, domain, due);
    }

    /// [`place`](Self::place) for a timer of clock `domain`.
    #[inline(always)]
    fn place_on(&mut self, idx: u32, domain: Domain, due: u64) {
        let d = domain.index();
        self.slots.at_mut(idx).set_due(due);
        if due == NEVER {
            // Never due: in no structure.
        } else if due > self.wheels[d].elapsed() {
            self.wheels[d].insert(idx, due);
        } else {
            let call = self.make_ready(idx, 0);
            if self.processing {
                self.ready.defer(call);
            } else {
                self.ready.push(call);
            }
        }
    }

    /// Marks a timer ready and makes its queue record.
    pub(crate) fn make_ready(&mut self, idx: u32, burst: u32) -> Call {
        Call::make(&mut self.slots, idx, burst, self.span.frame() as u32)
    }

    /// Takes a timer out of the wheel (pending and ready records go stale by themselves when
    /// the caller changes the timer's state).
    pub(crate) fn unschedule(&mut self, idx: u32) {
        let e = self.slots.at(idx);
        if e.state() == SlotState::Active && e.due() != NEVER {
            let d = e.flags().domain().index();
            self.wheels[d].remove(&self.slots, idx);
        }
    }

    /// Removes a timer for good; queues its `on_cancel` hook when `cancelled`.
    #[inline]
    pub(crate) fn remove(&mut self, idx: u32, cancelled: bool) {
        self.unschedule(idx);
        if self.slots.at(idx).flags().has_extras() {
            self.remove_extras(idx, cancelled);
        }
        self.slots.free(idx);
    }

    /// Drops the side-table entry of a timer being removed, and what it registered: out of
    /// line, so that removing a plain timer (most of them) saves and restores few registers.
    #[inline(never)]
    fn remove_extras(&mut self, idx: u32, cancelled: bool) {
        if let Some(ex) = self.extras.remove(&idx) {
            self.owed -= ex.owed();
            if let Some(owner) = ex.owner {
                self.forget_owner(owner, idx);
            }
            let hook = ex.rare.and_then(|r| r.on_cancel);
            if ex.durable.is_some() {
                self.journal.ended(idx, ex.owner, ex.name);
            }
            if let (true, Some(hook)) = (cancelled, hook) {
                self.cancelled.push_back(hook);
            }
        }
    }

    fn forget_owner(&mut self, owner: OwnerId, idx: u32) {
        self.owners.forget(owner, idx);
    }

    /// Gives the timer just set in slot `idx` its tag: stored, and its entry flagged.
    fn tag_new(&mut self, idx: u32, tag: u64) {
        self.store_tag(idx, tag);
        self.slots.at_mut(idx).flags_mut().set_tag();
    }

    /// Stores a tag in the dense table (the caller sets the entry's flag: a restore sets it on
    /// the flags it builds, before the entry exists).
    #[inline]
    pub(crate) fn store_tag(&mut self, idx: u32, tag: u64) {
        let i = idx as usize;
        if i < self.tags.len() {
            self.tags[i] = tag;
        } else if i == self.tags.len() && i < self.tags.capacity() {
            // The newest slot, as when timers are set one after another.
            self.tags.push(tag);
        } else {
            self.grow_tags(i);
            self.tags[i] = tag;
        }
    }

    /// Makes the tag table long enough for slot `i`, with room for as many tags as the slot
    /// table has slots: one allocation when the slots were reserved, and no copies as they
    /// fill.
    #[cold]
    fn grow_tags(&mut self, i: usize) {
        let want = self.slots.capacity().max(i + 1);
        self.tags.reserve_exact(want - self.tags.len());
        self.tags.resize(self.slots.len().max(i + 1), 0);
    }

    /// The tag of the timer in slot `idx`.
    pub(crate) fn tag_of(&self, idx: u32) -> Option<u64> {
        self.slots
            .at(idx)
            .flags()
            .has_tag()
            .then(|| self.tags[idx as usize])
    }

    /// The slot of a live timer.
    pub(crate) fn find(&self, h: TimerHandle) -> Option<u32> {
        self.slots.get(h.index(), h.tag().get()).map(|_| h.index())
    }

    /// The owner of the timer in slot `idx`, if it has one.
    pub(crate) fn owner_at(&self, idx: u32) -> Option<OwnerId> {
        self.extras_of(idx).and_then(|x| x.owner)
    }

    /// The bytes given with `payload` to the timer in slot `idx` (empty when none).
    pub(crate) fn payload_at(&self, idx: u32) -> &[u8] {
        (self.extras_of(idx))
            .and_then(Extras::payload)
            .unwrap_or_default()
    }

    fn extras_of(&self, idx: u32) -> Option<&Extras<C>> {
        if self.slots.at(idx).flags().has_extras() {
            self.extras.get(&idx)
        } else {
            None
        }
    }

    pub(crate) fn extras_mut(&mut self, idx: u32) -> &mut Extras<C> {
        self.slots.at_mut(idx).flags_mut().set_extras(true);
        self.extras.entry(idx).or_default()
    }

    pub(crate) fn handle_of(&self, idx: u32) -> TimerHandle {
        let tag = self.slots.at(idx).gen();
        TimerHandle::new(
            idx,
            std::num::NonZeroU32::new(tag).expect("tags are never 0"),
        )
    }

    /// Limits every tick to `calls_per_tick` calls (`None`: no limit, the default). Calls past
    /// the budget run first in the next tick, in the same order.
    pub fn set_fire_budget(&mut self, calls_per_tick: Option<usize>) {
        self.budget = calls_per_tick;
    }

    /// Limits how many calls one timer makes in one tick (default
    /// [`DEFAULT_CATCH_UP_CAP`](crate::time::DEFAULT_CATCH_UP_CAP)): a
    /// [`CatchUp::Burst`](crate::time::CatchUp::Burst) timer that is more periods late than
    /// this makes `calls_per_timer` calls, and its other missed periods are dropped onto its
    /// grid, as [`CatchUp::Once`](crate::time::CatchUp::Once) does, and counted by
    /// [`calls_dropped`](Self::calls_dropped). So no delta, clock or time dilation can make
    /// one tick do unbounded work.
    ///
    /// # Panics
    ///
    /// When `calls_per_timer` is zero (a timer that is due must be called at least once) or
    /// above [`MAX_CATCH_UP_CAP`](crate::time::MAX_CATCH_UP_CAP).
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<u64>::new();
    /// timers.set_catch_up_cap(3);
    /// timers.every(secs(0.1)).call(|n, _| *n += 1);
    /// let mut n = 0;
    /// timers.tick(secs(1.05), &mut n); // ten periods due
    /// assert_eq!((n, timers.calls_dropped()), (3, 7));
    /// timers.tick(secs(0.05), &mut n); // back on the grid: due at 1.1
    /// assert_eq!(n, 4);
    /// ```
    #[track_caller]
    pub fn set_catch_up_cap(&mut self, calls_per_timer: u64) {
        crate::time::assert_catch_up_cap(calls_per_timer);
        self.catch_up_cap = calls_per_timer;
    }

    /// The most calls one timer makes in one tick (see [`set_catch_up_cap`](Self::set_catch_up_cap)).
    pub fn catch_up_cap(&self) -> u64 {
        self.catch_up_cap
    }

    /// Missed calls dropped by the catch-up cap since the manager was made.
    pub fn calls_dropped(&self) -> u64 {
        self.dropped
    }

    /// Compacts set-order numbers when the counter runs out (once per 4 billion sets), keeping
    /// the relative order of every live timer and ready record.
    #[cold]
    #[inline(never)]
    pub(crate) fn renumber(&mut self) {
        let idxs = self.live_in_set_order();
        for (seq, &idx) in idxs.iter().enumerate() {
            self.slots.at_mut(idx).set_seq(seq as u32);
        }
        let slots = &self.slots;
        self.ready.rebuild(|c| c.current(slots).map(|e| e.seq()));
        self.next_seq = idxs.len() as u32;
        // Stored rows carry set order: every durable timer's changed.
        for idx in idxs {
            self.touch(idx);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::hash::{BuildHasher, BuildHasherDefault};

    use super::extras::SlotHash;
    use crate::time::Span;
    use crate::timer::standalone::TimerManager;

    #[test]
    fn a_slot_hashes_to_its_own_bucket_with_a_mixed_tag() {
        let h = |i: u32| BuildHasherDefault::<SlotHash>::default().hash_one(i);
        // The low bits pick the bucket: consecutive slots, consecutive buckets.
        assert!((0..1000u32).all(|i| h(i) & 0xffff_ffff == u64::from(i)));
        // The top 7 bits are the tag a probe compares first: not all alike.
        let tags: std::collections::HashSet<u64> = (0..1000u32).map(|i| h(i) >> 57).collect();
        assert!(tags.len() > 100, "{} tags", tags.len());
    }

    #[test]
    fn set_order_survives_renumbering_when_the_counter_runs_out() {
        let mut timers = TimerManager::<Vec<u32>>::new();
        timers.next_seq = u32::MAX - 3;
        for i in 0..8u32 {
            // all due together: only set order separates them
            timers
                .after(Span::from_millis(10))
                .call(move |l, _| l.push(i));
        }
        assert!(timers.next_seq < 100, "renumbered");
        let mut log = vec![];
        timers.tick(Span::from_millis(10), &mut log);
        assert_eq!(log, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn ready_records_are_renumbered_too() {
        let mut timers = TimerManager::<Vec<u32>>::new();
        timers.set_fire_budget(Some(1));
        for i in 0..3u32 {
            timers.after(Span::ZERO).call(move |l, _| l.push(i));
        }
        let mut log = vec![];
        timers.tick(Span::ZERO, &mut log); // two calls left in the ready queue
        timers.next_seq = u32::MAX;
        timers.after(Span::ZERO).call(|l, _| l.push(3)); // forces a renumbering
        timers.set_fire_budget(None);
        timers.tick(Span::ZERO, &mut log);
        assert_eq!(log, vec![0, 1, 2, 3]);
    }
}
