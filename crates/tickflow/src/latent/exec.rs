//! The executor of async tasks: the frame itself.
//!
//! Tasks live in generational slots. A task's waker (a `std::task::Waker`, so every
//! combinator works) pushes `(index, generation)` onto a queue; the latent stage drains it,
//! orders the woken tasks by spawn order and polls them on the game thread with the context and
//! the timer manager lent (see `lend.rs`). Nothing is polled unless it was woken: a task
//! waiting on a delay costs nothing until its timer fires.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::lend::Lend;
use super::slots::{
    BoxFuture, Current, Ended, Slot, Slots, TaskCell, TaskInner, WakeQueue, CANCELLED, FINISHED,
    FREE, HAS_ANCHOR, HAS_JOINERS, HAS_OWNER, IDLE, POLLING, POLLING_CANCELLED, RUNNING,
    TIMER_BUSY,
};
use super::task::{TaskCx, TaskHandle};
use crate::time::Domain;
use crate::timer::{OwnerId, TimerHandle, TimerManager};
use crate::unwind::Payload;

/// Polling passes of one latent stage: tasks woken by other tasks (or spawned) during the
/// stage run in the next pass; past this many passes they wait for the next frame (each task
/// is polled at most once per frame anyway, so this only bounds chains of spawns).
pub const MAX_TASK_PASSES: usize = 100;

/// Cancels and joins tasks without knowing the context type (for [`TaskHandle`]).
pub(crate) trait Control {
    fn cancel(&self, index: u32, gen: u32) -> bool;
    fn join(&self, index: u32, gen: u32, waker: &Waker);
}

/// The executor's state, shared by the scheduler, every [`TaskCx`] and (weakly) every
/// [`TaskHandle`].
pub(crate) struct Exec<C: 'static> {
    pub(crate) ctx: Lend<C>,
    pub(crate) timers: Lend<TimerManager<C>>,
    slots: RefCell<Slots>,
    /// Wakes through `std::task::Waker`s (any thread).
    queue: Arc<WakeQueue>,
    /// Wakes from the delay timers of this executor's own tasks (game thread, no lock, no
    /// touch of the task's shared part).
    local: RefCell<Vec<(u32, u32)>>,
    /// Task-delay timers (fast path) by timer index: (timer generation, task, generation).
    by_timer: RefCell<Vec<(u32, u32, u32)>>,
    /// Woken at the start of the next latent stage.
    next_frame: RefCell<Vec<Waker>>,
    /// Timers of delays dropped while no timer manager was lent; cleared at the next chance.
    to_clear: RefCell<Vec<TimerHandle>>,
    /// The task being polled.
    current: Cell<Option<Current>>,
    /// Per poll: where a delay on the game or real clock starts, when not now.
    anchors: Cell<[Option<u64>; 2]>,
    /// Game, real and frame clocks as of the last timer stage.
    clock: Cell<[u64; 3]>,
    /// A frame is open and its timer stage has not run.
    before_timers: Cell<bool>,
    /// Tasks spawned while `before_timers`: their delays count from this frame's timer stage,
    /// or, when a panic aborts the frame before it, from the clocks the abort leaves.
    spawned_early: RefCell<Vec<(u32, u32)>>,
}

impl<C: 'static> Exec<C> {
    pub(crate) fn new() -> Self {
        Exec {
            ctx: Lend::new(),
            timers: Lend::new(),
            slots: RefCell::default(),
            queue: Arc::default(),
            local: RefCell::default(),
            by_timer: RefCell::default(),
            next_frame: RefCell::default(),
            to_clear: RefCell::default(),
            current: Cell::new(None),
            anchors: Cell::new([None; 2]),
            clock: Cell::new([0; 3]),
            before_timers: Cell::new(false),
            spawned_early: RefCell::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.borrow().live
    }

    pub(crate) fn clock(&self, d: Domain) -> u64 {
        self.clock.get()[d.index()]
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

    /// Finishes a task's end outside any borrow: clears its timer, wakes its joiners.
    fn ended(&self, e: Ended) {
        if let Some(h) = e.timer {
            self.clear_timer(h);
        }
        e.joiners.into_iter().for_each(Waker::wake);
    }

    /// Drops an ended task's future (its destructors run) and finishes its end. A destructor
    /// that panics does not stop the rest: the timer is cleared and the joiners are woken
    /// either way, and the panic is returned for the caller to raise once all is consistent.
    fn bury(&self, fut: Option<BoxFuture>, e: Ended) -> Result<(), Payload> {
        let dropped = panic::catch_unwind(AssertUnwindSafe(|| drop(fut)));
        self.ended(e);
        dropped
    }

    /// Wakes the tasks whose delay timers fired.
    fn take_fired(&self, timers: &mut TimerManager<C>) {
        if timers.woken.is_empty() {
            return;
        }
        let map = self.by_timer.borrow();
        let mut local = self.local.borrow_mut();
        for h in timers.woken.drain(..) {
            if let Some(&(tg, index, gen)) = map.get(h.index() as usize) {
                if tg == h.tag().get() {
                    local.push((index, gen));
                }
            }
        }
    }

    fn wake_local(&self, index: u32, gen: u32) {
        self.local.borrow_mut().push((index, gen));
    }

    pub(crate) fn wake_next_frame(&self, waker: &Waker) {
        self.next_frame.borrow_mut().push(waker.clone());
    }

    /// Clears a delay's timer now if the manager is lent, else at the next chance.
    pub(crate) fn clear_timer(&self, h: TimerHandle) {
        if self.timers.with(|tm| tm.clear(h)).is_none() {
            self.to_clear.borrow_mut().push(h);
        }
    }

    pub(crate) fn clear_dropped(&self, timers: &mut TimerManager<C>) {
        let list = mem::take(&mut *self.to_clear.borrow_mut());
        for h in list {
            timers.clear(h);
        }
    }

    pub(crate) fn has_dropped(&self) -> bool {
        !self.to_clear.borrow().is_empty()
    }

    pub(crate) fn begin_frame(&self) {
        self.before_timers.set(true);
    }

    /// The timer stage ran: clocks as the tasks will see them.
    pub(crate) fn after_timers(&self, clock: [u64; 3]) {
        self.before_timers.set(false);
        self.clock.set(clock);
        self.spawned_early.borrow_mut().clear();
    }

    /// A panic aborted the frame: `clock` is where the timer manager's clocks stand now. Tasks
    /// spawned in the frame before its timer stage count their delays from there, as a timer
    /// set then does.
    pub(crate) fn abort_frame(&self, clock: [u64; 3]) {
        if self.before_timers.get() {
            let early = mem::take(&mut *self.spawned_early.borrow_mut());
            let mut s = self.slots.borrow_mut();
            for (index, gen) in early {
                if let Some(slot) = s.live_mut(index, gen) {
                    if slot.flags & HAS_ANCHOR == 0 && slot.polled == 0 {
                        slot.flags |= HAS_ANCHOR;
                        s.first_anchor.insert(index, [clock[0], clock[1]]);
                    }
                }
            }
        }
        self.after_timers(clock);
    }

    pub(crate) fn spawn<F>(
        self: &Rc<Self>,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> TaskHandle
    where
        F: Future<Output = ()> + 'static,
    {
        let fut: BoxFuture = Box::pin(TaskCell {
            head: 0,
            fut: f(TaskCx::new(Rc::clone(self))),
            tail: 0,
        });
        let mut s = self.slots.borrow_mut();
        let index = match s.free.pop() {
            Some(i) => i,
            None => {
                let i = u32::try_from(s.slots.len()).expect("more than 2^32 tasks at once");
                s.slots.push(Slot {
                    gen: 1,
                    state: FREE,
                    flags: 0,
                    seq: 0,
                    polled: 0,
                    fut: None,
                    waker: None,
                    inner: None,
                    timer: None,
                });
                i
            }
        };
        if s.next_seq == u32::MAX {
            s.renumber();
        }
        let seq = s.next_seq;
        s.next_seq += 1;
        let gen = s.slots[index as usize].gen;
        let inner = Arc::new(TaskInner {
            index,
            gen,
            queued: AtomicBool::new(false),
            status: AtomicU8::new(RUNNING),
            queue: Arc::clone(&self.queue),
        });
        let mut flags = 0;
        if let Some(owner) = owner {
            s.owners.entry(owner).or_default().push((index, gen));
            s.owner_of.insert(index, owner);
            flags |= HAS_OWNER;
        }
        if self.before_timers.get() {
            self.spawned_early.borrow_mut().push((index, gen));
        } else {
            // Spawned after this frame's timer stage (or between frames): delays count from
            // the clocks now, as a timer set here would.
            let c = self.clock.get();
            s.first_anchor.insert(index, [c[0], c[1]]);
            flags |= HAS_ANCHOR;
        }
        let slot = &mut s.slots[index as usize];
        slot.seq = seq;
        slot.state = IDLE;
        slot.flags = flags;
        slot.polled = 0;
        slot.fut = Some(fut);
        slot.waker = Some(Waker::from(Arc::clone(&inner)));
        slot.inner = Some(Arc::clone(&inner));
        s.live += 1;
        drop(s);
        self.wake_local(index, gen);
        let control: Weak<dyn Control> = Rc::downgrade(self) as Weak<dyn Control>;
        TaskHandle::new(inner, control)
    }

    /// Cancels every task of `owner`, in spawn order; returns how many.
    ///
    /// # Panics
    ///
    /// When a task's destructor panics: after every task of the owner was cancelled and
    /// cleaned up, the first such panic goes on.
    pub(crate) fn cancel_owner(&self, owner: OwnerId) -> usize {
        let list = self
            .slots
            .borrow()
            .owners
            .get(&owner)
            .cloned()
            .unwrap_or_default();
        let mut first_panic = None;
        let mut n = 0;
        for (i, g) in list {
            match self.try_cancel(i, g) {
                Ok(cancelled) => n += usize::from(cancelled),
                Err(p) => {
                    n += 1;
                    first_panic.get_or_insert(p);
                }
            }
        }
        if let Some(p) = first_panic {
            panic::resume_unwind(p);
        }
        n
    }

    /// Cancels every task (the scheduler is going away), in spawn order. Returns the first
    /// panic of a task destructor, after every task is gone.
    pub(crate) fn cancel_all(&self) -> Result<(), Payload> {
        let mut first_panic = None;
        // Destructors may spawn; a few rounds catch those too.
        for _ in 0..4 {
            let mut live: Vec<(u32, u32, u32)> = {
                let s = self.slots.borrow();
                s.slots
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.state != FREE)
                    .map(|(i, t)| (t.seq, i as u32, t.gen))
                    .collect()
            };
            if live.is_empty() {
                break;
            }
            live.sort_unstable();
            for (_, i, g) in live {
                if let Err(p) = self.try_cancel(i, g) {
                    first_panic.get_or_insert(p);
                }
            }
        }
        self.next_frame.borrow_mut().clear();
        first_panic.map_or(Ok(()), Err)
    }

    /// Runs the task part of the latent stage. `after_poll` runs after every poll (queued
    /// commands). Returns `(polls, tasks ended)`.
    pub(crate) fn run(
        &self,
        ctx: &mut C,
        timers: &mut TimerManager<C>,
        after_poll: &mut dyn FnMut(&mut C, &mut TimerManager<C>),
    ) -> (usize, usize) {
        self.clear_dropped(timers);
        self.take_fired(timers);
        let waiting = mem::take(&mut *self.next_frame.borrow_mut());
        for w in waiting {
            w.wake();
        }
        let frame = self.clock(Domain::Frames) as u32;
        // Woken again after their poll this frame: they run next frame.
        let mut later: Vec<(u32, u32)> = Vec::new();
        let (mut polls, mut ended) = (0, 0);
        for _ in 0..MAX_TASK_PASSES {
            let order = self.drain(frame, &mut later);
            if order.is_empty() {
                break;
            }
            for (n, &(index, gen)) in order.iter().enumerate() {
                let Some((mut fut, waker, anchors)) = self.begin_poll(index, gen, frame) else {
                    continue;
                };
                self.anchors.set(anchors);
                self.current.set(Some(Current {
                    waker_data: waker.data(),
                    index,
                    gen,
                }));
                let polled = panic::catch_unwind(AssertUnwindSafe(|| {
                    self.lent(ctx, timers, || {
                        fut.as_mut().poll_task(&mut Context::from_waker(&waker))
                    })
                }));
                self.current.set(None);
                self.anchors.set([None; 2]);
                polls += 1;
                let failed = match polled {
                    Ok(Poll::Pending) => match self.end_poll(index, fut, waker) {
                        Some((fut, e)) => {
                            ended += 1;
                            self.lent(ctx, timers, || self.bury(Some(fut), e)).err()
                        }
                        None => None,
                    },
                    Ok(Poll::Ready(())) => {
                        let e = self.slots.borrow_mut().end(index, FINISHED);
                        ended += 1;
                        self.lent(ctx, timers, || self.bury(Some(fut), e)).err()
                    }
                    Err(payload) => {
                        let e = self.slots.borrow_mut().end(index, CANCELLED);
                        // A future that panicked may panic again while dropped; the first
                        // panic is the one to report.
                        let _ = self.lent(ctx, timers, || self.bury(Some(fut), e));
                        Some(payload)
                    }
                };
                if let Some(payload) = failed {
                    // The rest of this stage's tasks run next frame, in order.
                    let mut local = self.local.borrow_mut();
                    local.extend_from_slice(&order[n + 1..]);
                    local.append(&mut later);
                    drop(local);
                    panic::resume_unwind(payload);
                }
                after_poll(ctx, timers);
            }
        }
        self.local.borrow_mut().append(&mut later);
        (polls, ended)
    }

    fn lent<R>(&self, ctx: &mut C, timers: &mut TimerManager<C>, f: impl FnOnce() -> R) -> R {
        self.ctx.lend(ctx, || self.timers.lend(timers, f))
    }

    /// Takes every wake-up, keeps the live idle tasks not yet polled this frame (the others
    /// go to `later`), in spawn order, once each.
    fn drain(&self, frame: u32, later: &mut Vec<(u32, u32)>) -> Vec<(u32, u32)> {
        let mut batch = mem::take(&mut *self.local.borrow_mut());
        let remote = self.queue.take();
        let s = self.slots.borrow();
        for &(i, g) in &remote {
            if let Some(inner) = s.slots.get(i as usize).and_then(|t| t.inner.as_ref()) {
                if inner.gen == g {
                    inner.queued.store(false, Ordering::Release);
                }
            }
        }
        batch.extend(remote);
        let mut keyed: Vec<(u32, u32, u32)> = Vec::with_capacity(batch.len());
        let mut touched = 0u8;
        for (i, g) in batch {
            let Some(slot) = s.slots.get(i as usize) else {
                continue;
            };
            if slot.gen != g || slot.state != IDLE {
                continue;
            }
            if slot.polled == frame {
                later.push((i, g));
            } else {
                keyed.push((slot.seq, i, g));
            }
        }
        // A second pass, over slots now in cache: only the futures' loads are left, and they
        // do not depend on each other.
        for &(_, i, _) in &keyed {
            let slot = &s.slots[i as usize];
            touched ^= slot.fut.as_ref().map_or(0, |f| f.touch());
        }
        std::hint::black_box(touched);
        keyed.sort_unstable();
        keyed.dedup();
        keyed.into_iter().map(|(_, i, g)| (i, g)).collect()
    }

    fn begin_poll(
        &self,
        index: u32,
        gen: u32,
        frame: u32,
    ) -> Option<(BoxFuture, Waker, [Option<u64>; 2])> {
        let mut s = self.slots.borrow_mut();
        let slot = s.live_mut(index, gen)?;
        if slot.state != IDLE {
            return None;
        }
        slot.state = POLLING;
        slot.polled = frame;
        let fut = slot.fut.take().expect("an idle task has its future");
        let waker = slot.waker.take().expect("an idle task has its waker");
        let anchors = if slot.flags & HAS_ANCHOR != 0 {
            slot.flags &= !HAS_ANCHOR;
            s.first_anchor
                .remove(&index)
                .map_or([None; 2], |[g, r]| [Some(g), Some(r)])
        } else {
            [None; 2]
        };
        Some((fut, waker, anchors))
    }

    /// Puts a pending future back; hands it out again when it was cancelled during its poll.
    fn end_poll(&self, index: u32, fut: BoxFuture, waker: Waker) -> Option<(BoxFuture, Ended)> {
        let mut s = self.slots.borrow_mut();
        let slot = &mut s.slots[index as usize];
        if slot.state == POLLING_CANCELLED {
            let e = s.end(index, CANCELLED);
            return Some((fut, e));
        }
        slot.state = IDLE;
        slot.fut = Some(fut);
        slot.waker = Some(waker);
        None
    }
}

impl<C: 'static> Exec<C> {
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
        let e = s.end(index, CANCELLED);
        drop(s);
        // The future's destructors run here, with no borrow held: they may use the executor.
        self.bury(fut, e)?;
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

    fn join(&self, index: u32, gen: u32, waker: &Waker) {
        let mut s = self.slots.borrow_mut();
        if let Some(slot) = s.live_mut(index, gen) {
            slot.flags |= HAS_JOINERS;
            let list = s.joiners.entry(index).or_default();
            if !list.iter().any(|w| w.will_wake(waker)) {
                list.push(waker.clone());
            }
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

/// The scheduler's owning handle on its executor: dropping it cancels every task, which also
/// breaks the `Rc` cycle between the executor and the `TaskCx` inside each future.
pub(crate) struct Tasks<C: 'static> {
    pub(crate) exec: Rc<Exec<C>>,
}

impl<C: 'static> Tasks<C> {
    pub(crate) fn new() -> Self {
        Tasks {
            exec: Rc::new(Exec::new()),
        }
    }
}

impl<C: 'static> Drop for Tasks<C> {
    fn drop(&mut self) {
        if let Err(p) = self.exec.cancel_all() {
            // Every task is gone; a destructor's panic goes on unless one is already unwinding
            // (a second panic would abort the process).
            if !std::thread::panicking() {
                panic::resume_unwind(p);
            }
        }
    }
}
