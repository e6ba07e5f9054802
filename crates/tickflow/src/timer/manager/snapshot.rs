//! [`TimerSnapshot`]: [`Timers`] as plain data, and restoring one from it.
//!
//! Ground rules:
//!
//! - A snapshot holds everything that decides what the manager does next: the three clocks and
//!   the tick number, the open-frame flag, the set-order counter, the fire budget, every live
//!   timer's record in set order, and the handle allocator (every slot's generation and the
//!   free list in reuse order, and the container id its handles carry). Callbacks and
//!   `on_cancel` hooks are the only things it cannot hold.
//! - Taking one costs one sequential pass over the slots plus work per live timer: the free
//!   list is a stack that is copied, not walked.
//! - The wheel and the ready queue are not saved: they are indexes over the records, and the
//!   order of calls comes from `(due, seq)` alone, so rebuilding them from the records gives
//!   the same calls in the same order.
//! - Snapshots are taken between ticks. A ready record's burst count only matters inside the
//!   tick that made it, so a due timer saves as "scheduled at its due time".
//! - Restoring checks the snapshot's consistency first, then builds a new manager while it
//!   binds the callbacks; on any error that manager is dropped, so a bad snapshot or an
//!   unbound callback changes nothing.

use super::durable::{phase_of, DurablePhase};
use super::extras::Extras;
use super::Timers;
use crate::format::{RestoreError, FORMAT_VERSION};
use crate::handle::{gen_of, next_tag, saved_tag, ContainerId};
use crate::owner::OwnerId;
use crate::time::CatchUp;
use crate::time::Domain;
use crate::timer::callback::{Callback, CancelHook};
use crate::timer::info::TimerInfo;
use crate::timer::slot::{Flags, SlotState, TimerEntry, NEVER};
use crate::timer::spec::Offline;
use crate::timer::wheel::SlotCounts;

/// [`Timers`] saved as plain data: clocks, timer records and the handle allocator.
///
/// Make one with [`Timers::snapshot`], turn it back into a manager with
/// [`TimerManager::restore`](crate::timer::TimerManager::restore). With the `serde` feature it is
/// `Serialize + Deserialize` (any format; about 27 bytes per timer in postcard). Equal
/// snapshots restore to managers that make the same calls in the same order and hand out the
/// same handles.
///
/// # Examples
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::timer::TimerCallback;
///
/// fn ping(log: &mut Vec<u64>, cx: &mut TimerCx<Vec<u64>>) {
///     log.push(cx.scheduled().flicks() / Span::from_millis(100).flicks());
/// }
///
/// let mut timers = TimerManager::<Vec<u64>>::new();
/// timers.every(millis(300)).name("ping").call(ping);
/// let mut log = Vec::new();
/// timers.tick(millis(400), &mut log);
/// let saved = timers.snapshot();
///
/// // Callbacks are bound again by name.
/// let mut restored = TimerManager::restore(&saved, &mut tickflow::snapshot::Registry::new().other_timers(|info| match info.name.as_deref() {
///     Some("ping") => Some(Box::new(ping) as TimerCallback<Vec<u64>>),
///     _ => None,
/// }))
/// .unwrap();
/// for _ in 0..3 {
///     timers.tick(millis(200), &mut log);
///     restored.tick(millis(200), &mut log);
/// }
/// assert_eq!(log, [3, 6, 6, 9, 9]); // both fire at 0.6 s and 0.9 s
/// assert_eq!(restored.snapshot(), timers.snapshot());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TimerSnapshot {
    version: u32,
    /// Game, real and frame clocks.
    clocks: [u64; 3],
    /// Ticks made (the frame clock, unless a scheduler's paused frames did not move it).
    frame: u64,
    frame_open: bool,
    next_seq: u32,
    budget: Option<u64>,
    /// The catch-up cap (calls per timer per tick).
    catch_up_cap: u64,
    /// The id every handle of this manager carries (left out of state hashes).
    container: ContainerId,
    /// The generation of every slot, live or free (a free slot's is the next occupant's; a
    /// free slot not in `free` is retired).
    generations: Vec<u32>,
    /// Free slots, the next one to be reused first.
    free: Vec<u32>,
    /// Live timers in set order.
    timers: Vec<TimerRecord>,
    /// `on_cancel` hooks of cleared timers that were waiting for the next tick (not saved).
    dropped_hooks: u64,
}

/// One timer in a [`TimerSnapshot`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct TimerRecord {
    pub(super) slot: u32,
    pub(super) seq: u32,
    pub(super) phase: DurablePhase,
    /// Pending: the delay. Scheduled: the absolute due time. Paused: the time left.
    pub(super) time: u64,
    pub(super) period: u64,
    pub(super) domain: Domain,
    pub(super) catch_up: CatchUp,
    pub(super) looping: bool,
    pub(super) calls: u64,
    pub(super) tag: Option<u64>,
    pub(super) extras: Option<Box<ExtraRecord>>,
}

/// What only some timers have.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct ExtraRecord {
    pub(super) owner: Option<OwnerId>,
    pub(super) name: Option<String>,
    pub(super) times_left: Option<u64>,
    pub(super) first_delay: Option<u64>,
    /// The timer had an `on_cancel` hook (hooks are closures: bound again or dropped).
    pub(super) on_cancel: bool,
    /// The user's bytes.
    pub(super) payload: Option<Vec<u8>>,
    /// Durable, with this offline policy.
    pub(super) durable: Option<Offline>,
}

/// Binds a timer's callback and, when it had one (the `bool`), its `on_cancel` hook.
pub(crate) type Bind<'a, C> =
    &'a mut dyn FnMut(&TimerInfo, bool) -> Option<(Callback<C>, Option<CancelHook<C>>)>;

impl TimerSnapshot {
    /// The format version this snapshot was written with.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Live timers saved.
    pub fn len(&self) -> usize {
        self.timers.len()
    }

    /// No timers saved.
    pub fn is_empty(&self) -> bool {
        self.timers.is_empty()
    }

    /// The game clock when the snapshot was taken.
    pub fn now(&self) -> crate::time::Time {
        crate::time::Time::from_flicks(self.clocks[0])
    }

    /// The number of ticks the manager had made (the frame number).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// `on_cancel` hooks that were queued for the next tick when the snapshot was taken;
    /// closures cannot be saved, so a restored manager does not run them.
    pub fn dropped_hooks(&self) -> u64 {
        self.dropped_hooks
    }

    /// This snapshot with the clocks moved to `clocks` and the tick count to `frame`: for a
    /// scheduler that resumes a saved time (its timers' due times are the saved ones).
    pub(crate) fn at_clocks(mut self, clocks: [u64; 3], frame: u64) -> TimerSnapshot {
        self.clocks = clocks;
        self.frame = frame;
        self
    }

    /// Checks everything a restore relies on, so that a corrupted or edited snapshot is
    /// refused with a reason instead of building a broken manager.
    fn check(&self) -> Result<(), RestoreError> {
        if self.version != FORMAT_VERSION {
            return Err(RestoreError::Version {
                found: self.version,
                supported: FORMAT_VERSION,
            });
        }
        // A running manager's clocks stop one flick short of "never".
        if let Some(d) = self.clocks.iter().position(|&c| c == NEVER) {
            return Err(RestoreError::corrupt(format!(
                "the {:?} clock is at the end of time",
                Domain::ALL[d]
            )));
        }
        // The frame clock counts some of the ticks, never more.
        if self.frame == NEVER || self.frame < self.clocks[2] {
            return Err(RestoreError::corrupt(format!(
                "tick {} with the frame clock at {}",
                self.frame, self.clocks[2]
            )));
        }
        if !self.container.is_valid() {
            return Err(RestoreError::corrupt("the container id is out of range"));
        }
        let n = self.generations.len();
        if n >= u32::MAX as usize {
            return Err(RestoreError::corrupt(format!(
                "{n} timer slots is more than a manager can have"
            )));
        }
        if let Some(slot) = self
            .generations
            .iter()
            .position(|&g| saved_tag(self.container, g).is_none())
        {
            return Err(RestoreError::corrupt(format!(
                "timer slot {slot} has generation {}, outside 1..={}",
                self.generations[slot],
                crate::handle::GEN_MAX
            )));
        }
        if !crate::time::valid_catch_up_cap(self.catch_up_cap) {
            return Err(RestoreError::corrupt(format!(
                "the catch-up cap ({}) is outside 1..={}",
                self.catch_up_cap,
                crate::time::MAX_CATCH_UP_CAP
            )));
        }
        let mut used = vec![false; n];
        let mut last_seq = None;
        for r in &self.timers {
            let slot = r.slot as usize;
            if slot >= n {
                return Err(RestoreError::corrupt(format!(
                    "timer slot {slot} is outside the {n} slots"
                )));
            }
            if std::mem::replace(&mut used[slot], true) {
                return Err(RestoreError::corrupt(format!(
                    "timer slot {slot} holds two timers"
                )));
            }
            if r.seq >= self.next_seq || last_seq.is_some_and(|s| s >= r.seq) {
                return Err(RestoreError::corrupt(format!(
                    "timer slot {slot} is out of set order"
                )));
            }
            last_seq = Some(r.seq);
        }
        for &slot in &self.free {
            let i = slot as usize;
            if i >= n || std::mem::replace(&mut used[i], true) {
                return Err(RestoreError::corrupt(format!(
                    "free timer slot {slot} is unknown or in use"
                )));
            }
        }
        Ok(())
    }
}

impl<C: 'static> Timers<C> {
    /// Saves the manager as plain data: clocks, every timer's record and the handle
    /// allocator (see [`TimerSnapshot`]). 35–85 ms per million timers on the 2-core benchmark
    /// machine (BENCHMARKS.md, SN1): cheap enough to take every few frames for rollback at the
    /// sizes games run.
    ///
    /// `on_cancel` hooks already queued for the next tick are closures and are not saved
    /// ([`TimerSnapshot::dropped_hooks`] counts them).
    ///
    /// # Panics
    ///
    /// When called from inside a timer callback: a snapshot is taken between ticks.
    pub fn snapshot(&self) -> TimerSnapshot {
        assert!(
            !self.in_tick && self.firing.is_none(),
            "Timers::snapshot called while a timer callback runs; take it between ticks"
        );
        let entries = self.slots.entries();
        let mut generations = Vec::with_capacity(entries.len());
        let mut live = Vec::with_capacity(self.slots.live());
        // Wake timers belong to the futures they wake, which are not saved (see `wake.rs`):
        // the snapshot frees their slots (reused first, highest slot first), as if the tasks
        // had just been cancelled.
        let mut free = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let mut tag = e.gen();
            if e.state() != SlotState::Free {
                if !e.flags().wake() {
                    live.push(i as u32);
                } else if let Some(next) = next_tag(e.gen()) {
                    tag = next;
                    free.push(i as u32);
                } // else: its generation is used up, so the slot is retired
            }
            generations.push(gen_of(tag));
        }
        free.reverse();
        free.extend(self.slots.free_list());
        if !live.is_sorted_by_key(|&i| entries[i as usize].seq()) {
            live.sort_unstable_by_key(|&i| entries[i as usize].seq());
        }
        let timers = live.iter().map(|&i| self.record(i)).collect();
        TimerSnapshot {
            version: FORMAT_VERSION,
            clocks: self.span.now(),
            frame: self.span.frame(),
            frame_open: self.frame_open,
            next_seq: self.next_seq,
            budget: self.budget.map(|b| b as u64),
            catch_up_cap: self.catch_up_cap,
            container: self.slots.id(),
            generations,
            free,
            timers,
            dropped_hooks: self.cancelled.len() as u64,
        }
    }

    pub(super) fn record(&self, idx: u32) -> TimerRecord {
        let e: &TimerEntry<C> = self.slots.at(idx);
        let (phase, time) = (phase_of(e.state()), e.due());
        let extras = self.extras_of(idx).map(|x| {
            Box::new(ExtraRecord {
                owner: x.owner,
                name: x.name.as_deref().map(str::to_owned),
                times_left: x.times_left(),
                first_delay: x.first_delay(),
                on_cancel: x.has_on_cancel(),
                payload: x.payload().map(<[u8]>::to_vec),
                durable: x.durable,
            })
        });
        TimerRecord {
            slot: idx,
            seq: e.seq(),
            phase,
            time,
            period: e.period(),
            domain: e.flags().domain(),
            catch_up: e.flags().catch_up(),
            looping: e.flags().looping(),
            calls: self.calls_at(idx),
            tag: self.tag_of(idx),
            extras,
        }
    }

    /// Builds timers from a snapshot, binding each timer's callback and, when it had one,
    /// its `on_cancel` hook: `bind` gets each timer's info and whether it had a hook.
    pub(crate) fn restore_with(
        snap: &TimerSnapshot,
        bind: Bind<'_, C>,
    ) -> Result<Timers<C>, RestoreError> {
        snap.check()?;
        // Built as the callbacks are bound: on an error the half-built manager is dropped,
        // and nothing outside it was touched.
        let mut m = Timers::new();
        m.reserve_exact(snap.generations.len());
        let id = snap.container;
        let tags: Vec<u32> = (snap.generations.iter())
            .map(|&g| saved_tag(id, g).expect("checked").get())
            .collect();
        m.slots.rebuild(id, &tags, &snap.free, snap.timers.len());
        m.span.stand_at(snap.clocks, snap.frame);
        for (d, wheel) in m.wheels.iter_mut().enumerate() {
            wheel.start_at(snap.clocks[d]);
        }
        let mut counts = [(); 3].map(|_| SlotCounts::default());
        for r in snap
            .timers
            .iter()
            .filter(|r| r.phase == DurablePhase::Scheduled)
        {
            let d = r.domain.index();
            counts[d].add(&m.wheels[d], r.time);
        }
        for (wheel, counts) in m.wheels.iter_mut().zip(&counts) {
            wheel.reserve(counts);
        }
        m.next_seq = snap.next_seq;
        m.budget = snap
            .budget
            .map(|b| usize::try_from(b).unwrap_or(usize::MAX));
        m.catch_up_cap = snap.catch_up_cap;
        for r in &snap.timers {
            m.put(r);
            // The resolver sees what `list()` would say about the restored timer.
            let info = m.info(r.slot);
            let hooked = r.extras.as_ref().is_some_and(|x| x.on_cancel);
            let Some((cb, hook)) = bind(&info, hooked) else {
                return Err(unbound(&info));
            };
            m.slots.at_mut(r.slot).put_callback(cb);
            if let Some(hook) = hook {
                m.extras_mut(r.slot).rare_mut().on_cancel = Some(hook);
            }
        }
        m.frame_open = snap.frame_open;
        m.rekey_durable();
        Ok(m)
    }

    /// Stores one saved timer in its slot (without its callback, which the caller binds)
    /// and places it where its phase says.
    pub(super) fn put(&mut self, r: &TimerRecord) {
        self.put_at(r, r.slot, r.seq, r.phase, r.time);
    }

    /// [`put`](Self::put) in slot `idx` with set-order number `seq`, in `phase` at `time`,
    /// whatever the record says of those (a moved timer's are its source's).
    pub(super) fn put_at(
        &mut self,
        r: &TimerRecord,
        idx: u32,
        seq: u32,
        phase: DurablePhase,
        time: u64,
    ) {
        let calls_hi = (r.calls >> 32) as u32;
        let x = r.extras.as_deref();
        let extras = (x.is_some() || calls_hi != 0).then(|| {
            let mut e = Extras {
                owner: x.and_then(|x| x.owner),
                name: x.and_then(|x| x.name.as_deref().map(Box::from)),
                calls_hi,
                durable: x.and_then(|x| x.durable),
                ..Extras::default()
            };
            e.set_rare(
                None,
                x.and_then(|x| x.times_left),
                x.and_then(|x| x.first_delay),
                x.and_then(|x| x.payload.as_deref().map(Box::from)),
            );
            e
        });
        let flags = Flags::new(r.domain, r.catch_up, r.looping);
        let flags = self.put_side(idx, r.tag, extras, flags);
        (self.slots.at_mut(idx)).restore(seq, r.period, r.calls as u32, flags);
        self.put_phase(idx, phase, time);
    }

    /// Stores a timer's tag and side data for slot `idx` (the owner indexed); returns `flags`
    /// saying which it has. The first of the three steps that put a timer's fields in a slot
    /// (then the entry's `restore`, then [`put_phase`](Self::put_phase)), shared by a
    /// snapshot's records and a durable row, which the load puts without a record between.
    pub(super) fn put_side(
        &mut self,
        idx: u32,
        tag: Option<u64>,
        extras: Option<Extras<C>>,
        mut flags: Flags,
    ) -> Flags {
        if let Some(tag) = tag {
            self.store_tag(idx, tag);
            flags.set_tag();
        }
        if let Some(x) = extras {
            flags.set_extras(true);
            if let Some(owner) = x.owner {
                self.owners.add(owner, idx);
            }
            self.extras.insert(idx, x);
        }
        flags
    }

    /// Places the timer stored in `idx` where `phase` says: `time` is its delay (pending),
    /// time left (paused) or due time (scheduled).
    pub(super) fn put_phase(&mut self, idx: u32, phase: DurablePhase, time: u64) {
        let e = self.slots.at_mut(idx);
        match phase {
            DurablePhase::Pending => {
                e.wait(SlotState::Pending, time);
                self.pending.push(idx);
            }
            DurablePhase::Paused => e.wait(SlotState::Paused, time),
            DurablePhase::Scheduled => self.place(idx, time),
        }
    }
}

/// The error for a timer the resolver could not bind: its name, handle, tag and owner.
pub(crate) fn unbound(info: &TimerInfo) -> RestoreError {
    let mut detail = format!("{:?}", info.handle);
    if let Some(tag) = info.tag {
        detail += &format!(", tag {tag}");
    }
    if let Some(owner) = info.owner {
        detail += &format!(", {owner:?}");
    }
    RestoreError::Unbound {
        kind: "timer",
        name: info.name.clone().unwrap_or_else(|| "(unnamed)".into()),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::secs;
    use crate::timer::callback::TimerCallback;
    use crate::timer::standalone::TimerManager;

    fn noop() -> Option<TimerCallback<()>> {
        Some(Box::new(|_, _| {}))
    }

    #[test]
    fn the_free_list_and_generations_survive() {
        let mut timers = TimerManager::<()>::new();
        let hs: Vec<_> = (0..5)
            .map(|_| timers.after(secs(1.0)).call(|_, _| {}))
            .collect();
        timers.clear(hs[3]);
        timers.clear(hs[1]);
        let snap = timers.snapshot();
        let mut restored = TimerManager::restore(
            &snap,
            &mut crate::snapshot::Registry::new().other_timers(|_| noop()),
        )
        .unwrap();
        for _ in 0..3 {
            let a = timers.after(secs(1.0)).call(|_, _| {});
            let b = restored.after(secs(1.0)).call(|_, _| {});
            assert_eq!(a, b);
        }
        assert!(!restored.exists(hs[1]) && restored.exists(hs[0]));
    }

    #[test]
    fn a_corrupted_free_list_is_refused() {
        let mut timers = TimerManager::<()>::new();
        let h = timers.after(secs(1.0)).call(|_, _| {});
        let mut snap = timers.snapshot();
        snap.free.push(h.index());
        let err = TimerManager::restore(
            &snap,
            &mut crate::snapshot::Registry::new().other_timers(|_| noop()),
        )
        .unwrap_err();
        assert!(matches!(err, RestoreError::Corrupt { .. }), "{err}");
    }
}
