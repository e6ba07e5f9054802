//! The tickables of one scheduler ([`Tickables`]): registration order, handles, owners and the
//! per-frame run. Its snapshot and its moves between schedulers are its children (`save.rs`,
//! `moved.rs`), which read its private entries.

pub(super) mod moved;
pub(super) mod save;

use std::fmt;
use std::num::NonZeroU32;
use std::panic::{self, AssertUnwindSafe};

use crate::handle::SharedAlloc;
use crate::owner::{Fresh, OwnerId, Owners};
use crate::tickable::cx::{TickableCall, TickableCx};
use crate::tickable::object::{Tickable, TickableHandle, TickableMode};
use crate::time::{Clocks, Span};
use crate::timer::Timers;

struct TickableEntry<C: 'static> {
    gen: NonZeroU32,
    mode: TickableMode,
    owner: Option<OwnerId>,
    /// `None` while its `tick` runs.
    obj: Option<Box<dyn Tickable<C>>>,
}

/// A scheduler's tickables, ticked in registration order after its timers:
/// [`Scheduler::tickables`](crate::Scheduler::tickables).
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::{Tickable, TickableCx};
///
/// struct Counter;
/// impl Tickable<u32> for Counter {
///     fn tick(&mut self, n: &mut u32, _cx: &mut TickableCx<'_, u32>) { *n += 1 }
/// }
///
/// let mut sched = Scheduler::<u32>::new();
/// let h = sched.tickables().add(Counter);
/// let mut n = 0;
/// sched.tick(secs(0.1), &mut n);
/// assert!(sched.tickables().remove(h));
/// sched.tick(secs(0.1), &mut n);
/// assert_eq!((n, sched.tickables().len()), (1, 0));
/// ```
pub struct Tickables<C: 'static> {
    alloc: SharedAlloc,
    slots: Vec<Option<TickableEntry<C>>>,
    /// Registration order; removed entries stay until compaction.
    order: Vec<TickableHandle>,
    live: usize,
    /// Owners of tickables added since the last `take_fresh`, while tracking (see
    /// [`Owners`]); an owner may appear more than once.
    fresh: Fresh,
}

impl<C: 'static> Owners for Tickables<C> {
    fn track(&mut self, on: bool) {
        self.fresh.track(on);
    }

    fn take_fresh(&mut self, out: &mut Vec<OwnerId>) {
        self.fresh.take(out);
    }

    fn each(&self, f: &mut dyn FnMut(OwnerId)) {
        self.slots
            .iter()
            .flatten()
            .filter_map(|e| e.owner)
            .for_each(f);
    }
}

impl<C: 'static> Tickables<C> {
    pub(crate) fn new(alloc: SharedAlloc) -> Self {
        Tickables {
            alloc,
            slots: Vec::new(),
            order: Vec::new(),
            live: 0,
            fresh: Fresh::default(),
        }
    }

    /// Registers a tickable.
    pub fn add(&mut self, t: impl Tickable<C> + 'static) -> TickableHandle {
        self.add_boxed(Box::new(t))
    }

    pub(crate) fn add_boxed(&mut self, t: Box<dyn Tickable<C>>) -> TickableHandle {
        let (index, gen) = crate::handle::lock_alloc(&self.alloc).alloc();
        let h = TickableHandle::new(index, gen);
        self.add_reserved(h, t);
        h
    }

    /// Adds under a handle reserved by `Commands`.
    pub(crate) fn add_reserved(&mut self, h: TickableHandle, t: Box<dyn Tickable<C>>) {
        let i = h.index() as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        let owner = t.owner();
        if let Some(o) = owner {
            self.fresh.note(o);
        }
        self.slots[i] = Some(TickableEntry {
            gen: h.tag(),
            mode: t.mode(),
            owner,
            obj: Some(t),
        });
        self.order.push(h);
        self.live += 1;
    }

    fn entry(&self, h: TickableHandle) -> Option<&TickableEntry<C>> {
        self.slots
            .get(h.index() as usize)?
            .as_ref()
            .filter(|e| e.gen == h.tag())
    }

    /// `true` while `h` is registered.
    pub fn contains(&self, h: TickableHandle) -> bool {
        self.entry(h).is_some()
    }

    /// Unregisters a tickable; `false` for a stale handle. Removed while tickables tick, it
    /// is skipped at once.
    pub fn remove(&mut self, h: TickableHandle) -> bool {
        if self.entry(h).is_none() {
            return false;
        }
        // Bookkeeping first, the user's destructor last: a panicking `Drop` leaves the
        // tickables consistent.
        drop(self.take(h));
        true
    }

    /// Takes a live tickable's entry out and frees its handle.
    fn take(&mut self, h: TickableHandle) -> TickableEntry<C> {
        let entry = self.slots[h.index() as usize]
            .take()
            .expect("a live handle");
        crate::handle::lock_alloc(&self.alloc).free(h.index(), h.tag());
        self.live -= 1;
        entry
    }

    /// Registered tickables.
    pub fn len(&self) -> usize {
        self.live
    }

    /// `true` when no tickable is registered.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Removes every tickable of `owner`; returns how many.
    pub(crate) fn remove_owner(&mut self, owner: OwnerId) -> usize {
        let doomed: Vec<TickableHandle> = self
            .order
            .iter()
            .copied()
            .filter(|&h| self.entry(h).is_some_and(|e| e.owner == Some(owner)))
            .collect();
        crate::unwind::each_then_raise(doomed, |h| self.remove(h))
    }

    /// Names in registration order (unnamed ones by handle).
    pub(crate) fn names(&self) -> Vec<String> {
        self.order
            .iter()
            .filter_map(|&h| {
                let e = self.entry(h)?;
                Some(match e.obj.as_deref().map(|o| o.name()) {
                    Some(n) if !n.is_empty() => n.to_string(),
                    _ => format!("tickable {h:?}"),
                })
            })
            .collect()
    }

    /// Ticks every tickable that was registered when the stage began, in registration order;
    /// `after_each` runs after every call (the scheduler applies queued commands there).
    /// Returns how many ticked.
    pub(crate) fn run(
        &mut self,
        dt: Span,
        paused: bool,
        (ctx, clocks, timers): (&mut C, &Clocks, &mut Timers<C>),
        after_each: &mut dyn FnMut(&mut Self, &mut Timers<C>),
    ) -> usize {
        let mut ticked = 0;
        let n = self.order.len();
        for k in 0..n {
            let h = self.order[k];
            let Some(entry) = self.slots[h.index() as usize].as_mut() else {
                continue;
            };
            if entry.gen != h.tag() {
                continue;
            }
            let mode = entry.mode;
            let Some(mut obj) = entry.obj.take() else {
                continue;
            };
            let wants = (mode == TickableMode::Always || obj.is_tickable())
                && (!paused || obj.tick_when_paused());
            let result = if wants {
                ticked += 1;
                let mut cx = TickableCx::new(clocks, timers, TickableCall { dt });
                panic::catch_unwind(AssertUnwindSafe(|| obj.tick(ctx, &mut cx)))
            } else {
                Ok(())
            };
            if let Some(e) = self.slots[h.index() as usize]
                .as_mut()
                .filter(|e| e.gen == h.tag())
            {
                e.obj = Some(obj);
            }
            if wants {
                after_each(self, timers);
            }
            if let Err(p) = result {
                panic::resume_unwind(p);
            }
        }
        if self.order.len() > 2 * self.live + 16 {
            let slots = &self.slots;
            self.order.retain(|h| {
                slots[h.index() as usize]
                    .as_ref()
                    .is_some_and(|e| e.gen == h.tag())
            });
        }
        ticked
    }
}

impl<C: 'static> fmt::Debug for Tickables<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tickables")
            .field("len", &self.live)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Log(&'static str, bool);
    impl Tickable<Vec<&'static str>> for Log {
        fn tick(
            &mut self,
            log: &mut Vec<&'static str>,
            _cx: &mut TickableCx<'_, Vec<&'static str>>,
        ) {
            log.push(self.0);
        }
        fn is_tickable(&self) -> bool {
            self.1
        }
    }

    #[test]
    fn conditional_ones_are_asked_and_order_is_kept() {
        let mut t = Tickables::new(Default::default());
        let a = t.add(Log("a", true));
        t.add(Log("off", false));
        t.add(Log("b", true));
        let mut log = Vec::new();
        let mut timers = Timers::new();
        let clocks = Clocks::default();
        let env = (&mut log, &clocks, &mut timers);
        assert_eq!(t.run(Span::ZERO, false, env, &mut |_, _| {}), 2);
        assert_eq!(log, ["a", "b"]);
        assert!(t.remove(a));
        // The freed slot is reused, but the newcomer ticks last.
        let c = t.add(Log("c", true));
        assert_eq!(c.index(), a.index());
        log.clear();
        t.run(
            Span::ZERO,
            false,
            (&mut log, &clocks, &mut timers),
            &mut |_, _| {},
        );
        assert_eq!(log, ["b", "c"]);
        assert!(!t.contains(a));
        assert_eq!(t.len(), 3);
    }
}
