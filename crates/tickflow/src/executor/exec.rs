//! The executor of async tasks: the frame itself.
//!
//! Tasks live in slots indexed by a handle allocator that the scheduler's
//! [`Commands`](crate::scheduler::Commands) share, so a task spawned from another thread gets
//! its handle at once and joins the executor at the next boundary. A task's waker (a
//! `std::task::Waker`, so every combinator works) queues `(index, tag)` for the latent stage
//! (`poll.rs`), which polls woken tasks in spawn order on the game thread. Nothing is polled
//! unless it was woken: a task waiting on a delay costs nothing until its timer fires.
//!
//! The executor is owned by its scheduler and used through shared references only (its state
//! is in `Cell`s and `RefCell`s). Task futures and [`TaskCx`](super::TaskCx) reach it through
//! the activation of `lend.rs` while the scheduler runs on this thread, so nothing that travels
//! with a task points at it: tasks are `Send`, and so is the scheduler.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::mem;
use std::num::NonZeroU32;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Waker;

use super::factory::{NewTask, TaskFactory};
use super::lend::{self, Control, Lend};
use super::slots::{
    AnyOutput, BoxFuture, Core, Current, Ended, TaskSlots, CANCELLED, FREE, HAS_ANCHOR, HAS_OWNER,
    IDLE, POLLING, POLLING_CANCELLED, TIMER_BUSY,
};
use crate::commands::Commands;
use crate::owner::{OwnerId, Owners};
use crate::time::{Clocks, Domain};
use crate::timer::{TimerHandle, Timers};
use crate::unwind::Payload;

/// The executor's state, owned by the scheduler.
pub(crate) struct Exec<C: 'static> {
    pub(crate) factory: TaskFactory,
    pub(crate) ctx: Lend<C>,
    pub(crate) timers: Lend<Timers<C>>,
    pub(super) slots: RefCell<TaskSlots>,
    /// Wakes from the delay timers of this executor's own tasks, and spawns (game thread, no
    /// lock, no touch of the task's shared part).
    pub(super) local: RefCell<Vec<(u32, u32)>>,
    /// Task-delay timers (fast path) by timer index: (timer tag, task, tag).
    by_timer: RefCell<Vec<(u32, u32, u32)>>,
    /// Woken at the start of the next latent stage.
    pub(super) next_frame: RefCell<Vec<Waker>>,
    /// Timers of delays dropped while no timer manager was lent; cleared at the next chance.
    to_clear: RefCell<Vec<TimerHandle>>,
    /// Raised with every entry of `to_clear`: shared with the scheduler's command queue, whose
    /// boundaries test this one flag after every callback.
    wake: Arc<AtomicBool>,
    /// The task being polled.
    pub(super) current: Cell<Option<Current>>,
    /// Per poll: where a delay on the game or real clock starts, when not now.
    pub(super) anchors: Cell<[Option<u64>; 2]>,
    /// The clocks of the frame being run (or the last one): the scheduler's one value, given
    /// at each frame's start.
    clock: Cell<Clocks>,
    /// A frame is open and its timer stage has not run.
    before_timers: Cell<bool>,
    /// Tasks spawned while `before_timers`: their delays count from this frame's timer stage,
    /// or, when a panic aborts the frame before it, from the clocks the abort leaves.
    spawned_early: RefCell<Vec<(u32, u32)>>,
    /// What `TaskCx::commands` hands out: the scheduler's.
    commands: RefCell<Commands<C>>,
}

impl<C: 'static> Exec<C> {
    /// Calls `f` with the tasks' owners (tracking new ones, or reading them).
    pub(crate) fn with_owners<R>(&self, f: impl FnOnce(&mut dyn Owners) -> R) -> R {
        f(&mut self.slots.borrow_mut().owners)
    }

    pub(crate) fn new() -> Self {
        Exec {
            factory: TaskFactory {
                id: lend::fresh_id(),
                alloc: Arc::default(),
                remote: Arc::default(),
            },
            ctx: Lend::new(),
            timers: Lend::new(),
            slots: RefCell::default(),
            local: RefCell::default(),
            by_timer: RefCell::default(),
            next_frame: RefCell::default(),
            to_clear: RefCell::default(),
            wake: Arc::default(),
            current: Cell::new(None),
            anchors: Cell::new([None; 2]),
            clock: Cell::new(Clocks::default()),
            before_timers: Cell::new(false),
            spawned_early: RefCell::default(),
            commands: RefCell::new(Commands::disconnected()),
        }
    }

    /// Points the tasks' commands at the scheduler.
    pub(crate) fn set_commands(&self, commands: Commands<C>) {
        *self.commands.borrow_mut() = commands;
    }

    /// The scheduler's commands, for a task.
    pub(crate) fn commands(&self) -> Commands<C> {
        self.commands.borrow().clone()
    }

    /// Makes this executor reachable from task futures and handles on this thread while `f`
    /// runs.
    pub(crate) fn activate<R>(&self, f: impl FnOnce() -> R) -> R {
        lend::activate(self.factory.id, self, f)
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.borrow().live
    }

    pub(crate) fn clock(&self, d: Domain) -> u64 {
        self.clock.get().now(d).flicks()
    }

    pub(crate) fn clocks(&self) -> Clocks {
        self.clock.get()
    }

    pub(crate) fn current(&self) -> Option<Current> {
        self.current.get()
    }

    pub(crate) fn anchor(&self, d: Domain) -> Option<u64> {
        match d {
            Domain::Frames => None,
            d => self.anchors.get()[d.index()],
        }
    }

    pub(crate) fn set_anchor(&self, d: Domain, t: u64) {
        if d != Domain::Frames {
            let mut a = self.anchors.get();
            a[d.index()] = Some(t);
            self.anchors.set(a);
        }
    }

    /// The fast wake path: timer `h` wakes the task being polled when it fires.
    pub(crate) fn map_timer(&self, h: TimerHandle, c: Current) {
        let mut map = self.by_timer.borrow_mut();
        let i = h.index() as usize;
        if map.len() <= i {
            map.resize(i + 1, (0, 0, 0));
        }
        map[i] = (h.tag().get(), c.index, c.gen);
    }

    /// Claims the polled task's reusable delay timer: `None` when another of its delays holds
    /// it, else the timer if it was made already.
    pub(crate) fn claim_task_timer(&self, c: Current) -> Option<Option<TimerHandle>> {
        let mut s = self.slots.borrow_mut();
        let slot = s.live_mut(c.index, c.gen)?;
        if slot.flags & TIMER_BUSY != 0 {
            return None;
        }
        slot.flags |= TIMER_BUSY;
        Some(slot.timer)
    }

    /// Records the polled task's reusable delay timer.
    pub(crate) fn set_task_timer(&self, c: Current, h: TimerHandle) {
        if let Some(slot) = self.slots.borrow_mut().live_mut(c.index, c.gen) {
            slot.timer = Some(h);
        }
        self.map_timer(h, c);
    }

    /// A delay is done with its task's reusable timer.
    pub(crate) fn release_task_timer(&self, index: u32, gen: u32) {
        if let Some(slot) = self.slots.borrow_mut().live_mut(index, gen) {
            slot.flags &= !TIMER_BUSY;
        }
    }

    /// Wakes the tasks whose delay timers fired.
    pub(super) fn take_fired(&self, timers: &mut Timers<C>) {
        if !timers.has_woken() {
            return;
        }
        let map = self.by_timer.borrow();
        let mut local = self.local.borrow_mut();
        timers.take_woken(|h| {
            if let Some(&(tg, index, gen)) = map.get(h.index() as usize) {
                if tg == h.tag().get() {
                    local.push((index, gen));
                }
            }
        });
    }

    pub(crate) fn wake_next_frame(&self, waker: &Waker) {
        self.next_frame.borrow_mut().push(waker.clone());
    }

    /// Clears a delay's timer now if the manager is lent, else at the next chance.
    pub(crate) fn clear_timer(&self, h: TimerHandle) {
        if self.timers.with(|tm| tm.clear(h)).is_none() {
            self.to_clear.borrow_mut().push(h);
            self.wake.store(true, Ordering::Release);
        }
    }

    pub(crate) fn clear_dropped(&self, timers: &mut Timers<C>) {
        let list = mem::take(&mut *self.to_clear.borrow_mut());
        for h in list {
            timers.clear(h);
        }
    }

    /// The flag raised when something waits for the next boundary (shared with the command
    /// queue and the tick graph).
    pub(crate) fn wake(&self) -> &Arc<AtomicBool> {
        &self.wake
    }

    /// Timers of dropped delays wait to be cleared at the next boundary.
    pub(crate) fn has_dropped(&self) -> bool {
        !self.to_clear.borrow().is_empty()
    }

    /// Tasks cancelled from other threads wait for their futures to be dropped (checked at
    /// the start of a frame and at every direct call, not between callbacks).
    pub(crate) fn has_remote_cancels(&self) -> bool {
        self.factory.remote.has_cancels()
    }

    /// A frame starts: its clocks. Tasks are polled only after its timer stage, so no task
    /// reads them before the timers reached the same time.
    pub(crate) fn begin_frame(&self, clocks: &Clocks) {
        self.set_clocks(clocks);
        self.before_timers.set(true);
    }

    /// The clocks of a restored scheduler (between frames).
    pub(crate) fn set_clocks(&self, clocks: &Clocks) {
        self.clock.set(*clocks);
    }

    /// The timer stage ran.
    pub(crate) fn after_timers(&self) {
        self.before_timers.set(false);
        self.spawned_early.borrow_mut().clear();
    }

    /// A panic aborted the frame, whose clocks every part has reached now. Tasks spawned in the
    /// frame before its timer stage count their delays from there, as a timer set then does.
    pub(crate) fn abort_frame(&self) {
        let clock = self.clock.get();
        if self.before_timers.get() {
            let early = mem::take(&mut *self.spawned_early.borrow_mut());
            let mut s = self.slots.borrow_mut();
            for (index, gen) in early {
                if let Some(slot) = s.live_mut(index, gen) {
                    if slot.flags & HAS_ANCHOR == 0 && slot.polled == 0 {
                        slot.flags |= HAS_ANCHOR;
                        let [game, real, _] = clock.raw();
                        s.first_anchor.insert(index, [game, real]);
                    }
                }
            }
        }
        self.after_timers();
    }

    /// Takes a task made by the factory (here or through `Commands`). One cancelled before it
    /// got here is dropped instead.
    pub(crate) fn insert(&self, task: NewTask) {
        let NewTask {
            index,
            core,
            fut,
            owner,
        } = task;
        let gen = core.gen;
        if core.status() == CANCELLED {
            self.free_index(index, gen);
            if let Err(p) = self.activate(|| self.bury(Some(fut), None, core, CANCELLED, None)) {
                panic::resume_unwind(p);
            }
            return;
        }
        let mut s = self.slots.borrow_mut();
        if s.next_seq == u32::MAX {
            s.renumber();
        }
        let seq = s.next_seq;
        s.next_seq += 1;
        let mut flags = 0;
        if let Some(owner) = owner {
            s.owners.add(owner, (index, gen));
            s.owner_of.insert(index, owner);
            flags |= HAS_OWNER;
        }
        if self.before_timers.get() {
            self.spawned_early.borrow_mut().push((index, gen));
        } else {
            // Spawned after this frame's timer stage (or between frames): delays count from
            // the clocks now, as a timer set here would.
            let [game, real, _] = self.clock.get().raw();
            s.first_anchor.insert(index, [game, real]);
            flags |= HAS_ANCHOR;
        }
        let waker = Waker::from(Arc::clone(&core));
        let slot = s.at_mut(index);
        debug_assert_eq!(slot.state, FREE);
        slot.gen = gen;
        slot.seq = seq;
        slot.state = IDLE;
        slot.flags = flags;
        slot.polled = 0;
        slot.fut = Some(fut);
        slot.waker = Some(waker);
        slot.inner = Some(core);
        s.live += 1;
        drop(s);
        self.local.borrow_mut().push((index, gen));
    }

    fn free_index(&self, index: u32, gen: u32) {
        let tag = NonZeroU32::new(gen).expect("tags are never 0");
        self.factory.lock_alloc().free(index, tag);
    }

    /// Ends a task whose future is out: frees its slot and index.
    pub(super) fn end(&self, index: u32, status: u8) -> Ended {
        let e = self.slots.borrow_mut().end(index, status);
        if let Some(core) = &e.core {
            self.free_index(index, core.gen);
        }
        e
    }

    /// Drops an ended task's future (its destructors run) and finishes its end: clears its
    /// timer, keeps its output for its handle and wakes the handles awaiting it. A destructor
    /// that panics stops none of that; the panic is returned for the caller to raise once all
    /// is consistent.
    pub(super) fn bury(
        &self,
        fut: Option<BoxFuture>,
        timer: Option<TimerHandle>,
        core: Arc<Core>,
        status: u8,
        output: Option<AnyOutput>,
    ) -> Result<(), Payload> {
        let dropped = panic::catch_unwind(AssertUnwindSafe(|| drop(fut)));
        if let Some(h) = timer {
            self.clear_timer(h);
        }
        core.end(status, output);
        dropped
    }

    /// [`bury`](Self::bury) for what [`end`](Self::end) returned.
    pub(super) fn bury_ended(
        &self,
        fut: Option<BoxFuture>,
        e: Ended,
        output: Option<AnyOutput>,
    ) -> Result<(), Payload> {
        match e.core {
            Some(core) => self.bury(fut, e.timer, core, e.status, output),
            None => Ok(()),
        }
    }

    /// Tasks of `owner` that have not ended.
    pub(crate) fn count_owner(&self, owner: OwnerId) -> usize {
        self.slots.borrow().owners.get(owner).len()
    }

    /// Cancels every task of `owner`, in spawn order; returns how many.
    ///
    /// # Panics
    ///
    /// When a task's destructor panics: after every task of the owner was cancelled and
    /// cleaned up, the first such panic goes on.
    pub(crate) fn cancel_owner(&self, owner: OwnerId) -> usize {
        let list = self.slots.borrow().owners.get(owner).to_vec();
        self.activate(|| {
            crate::unwind::each_then_raise(list, |(i, g)| match self.try_cancel(i, g) {
                Ok(cancelled) => cancelled,
                Err(p) => panic::resume_unwind(p),
            })
        })
    }

    /// Cancels every task (the scheduler is going away), in spawn order. Returns the first
    /// panic of a task destructor, after every task is gone.
    pub(crate) fn cancel_all(&self) -> Result<(), Payload> {
        let mut first_panic = None;
        // Destructors may spawn: those tasks are cancelled at birth, so one pass ends them all.
        self.close();
        self.activate(|| {
            let mut live: Vec<(u32, u32, u32)> = {
                let s = self.slots.borrow();
                s.slots
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.state != FREE)
                    .map(|(i, t)| (t.seq, i as u32, t.gen))
                    .collect()
            };
            live.sort_unstable();
            for (_, i, g) in live {
                if let Err(p) = self.try_cancel(i, g) {
                    first_panic.get_or_insert(p);
                }
            }
        });
        debug_assert_eq!(self.len(), 0, "a task outlived its scheduler");
        self.next_frame.borrow_mut().clear();
        first_panic.map_or(Ok(()), Err)
    }

    /// The scheduler is being dropped: every task spawned from now on (by a destructor) is
    /// cancelled at birth, without running the closure that would make its future.
    pub(crate) fn close(&self) {
        self.factory.remote.close();
    }

    /// Drops the futures of tasks cancelled from other threads (their handles already say
    /// cancelled, and they are never polled again). Called at every boundary.
    pub(crate) fn reap_cancelled(&self) -> Result<(), Payload> {
        let cancels = self.factory.remote.take_cancels();
        if cancels.is_empty() {
            return Ok(());
        }
        let mut first_panic = None;
        self.activate(|| {
            for (i, g) in cancels {
                if let Err(p) = self.try_cancel(i, g) {
                    first_panic.get_or_insert(p);
                }
            }
        });
        first_panic.map_or(Ok(()), Err)
    }

    /// Cancels a task; `Ok(true)` when this call cancelled it. A destructor's panic is
    /// returned after the task is cleaned up (it counts as cancelled).
    fn try_cancel(&self, index: u32, gen: u32) -> Result<bool, Payload> {
        let mut s = self.slots.borrow_mut();
        let Some(slot) = s.live_mut(index, gen) else {
            return Ok(false);
        };
        match slot.state {
            POLLING => {
                slot.state = POLLING_CANCELLED;
                return Ok(true);
            }
            POLLING_CANCELLED => return Ok(false),
            _ => {}
        }
        let fut = slot.fut.take();
        drop(s);
        let e = self.end(index, CANCELLED);
        // The future's destructors run here, with no borrow held: they may use the executor.
        self.bury_ended(fut, e, None)?;
        Ok(true)
    }
}

impl<C: 'static> Control for Exec<C> {
    fn cancel(&self, index: u32, gen: u32) -> bool {
        match self.try_cancel(index, gen) {
            Ok(cancelled) => cancelled,
            Err(p) => panic::resume_unwind(p),
        }
    }
}

impl<C: 'static> fmt::Debug for Exec<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exec")
            .field("tasks", &self.len())
            .field("clock", &self.clock.get())
            .finish_non_exhaustive()
    }
}
