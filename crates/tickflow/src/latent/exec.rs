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
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use rustc_hash::FxHashMap;

use super::lend::Lend;
use super::task::{TaskCx, TaskHandle};
use crate::time::Domain;
use crate::timer::{OwnerId, TimerHandle, TimerManager};

/// Polling passes of one latent stage: tasks woken by other tasks (or spawned) during the
/// stage run in the next pass; past this many passes they wait for the next frame.
pub const MAX_TASK_PASSES: usize = 100;

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

pub(crate) const RUNNING: u8 = 0;
pub(crate) const FINISHED: u8 = 1;
pub(crate) const CANCELLED: u8 = 2;

/// Woken tasks, as `(index, generation)`. Behind a mutex because wakers may be used from any
/// thread (a channel filled by a worker, say); on the game thread it is never contended.
#[derive(Default)]
pub(crate) struct WakeQueue(Mutex<Vec<(u32, u32)>>);

impl WakeQueue {
    fn push(&self, key: (u32, u32)) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(key);
    }

    fn take(&self) -> Vec<(u32, u32)> {
        mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The part of a task that wakers and handles share, on any thread.
pub(crate) struct TaskInner {
    pub(crate) index: u32,
    pub(crate) gen: u32,
    /// Set from the wake until the poll starts: one queue entry per wake-up.
    queued: AtomicBool,
    status: AtomicU8,
    queue: Arc<WakeQueue>,
}

impl TaskInner {
    pub(crate) fn status(&self) -> u8 {
        self.status.load(Ordering::Acquire)
    }
}

impl Wake for TaskInner {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.status() == RUNNING && !self.queued.swap(true, Ordering::AcqRel) {
            self.queue.push((self.index, self.gen));
        }
    }
}

enum Run {
    Free,
    Idle(BoxFuture),
    /// Taken out to be polled; `cancel` asks the executor to drop it when the poll returns.
    Polling {
        cancel: bool,
    },
}

struct Slot {
    gen: u32,
    seq: u64,
    run: Run,
    inner: Option<Arc<TaskInner>>,
    owner: Option<OwnerId>,
    joiners: Vec<Waker>,
}

#[derive(Default)]
struct Slots {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
    next_seq: u64,
    owners: FxHashMap<OwnerId, Vec<(u32, u32)>>,
    /// Game and real times a task spawned outside a frame's early stages counts from.
    first_anchor: FxHashMap<u32, [u64; 2]>,
}

impl Slots {
    fn live_mut(&mut self, index: u32, gen: u32) -> Option<&mut Slot> {
        self.slots
            .get_mut(index as usize)
            .filter(|s| s.gen == gen && !matches!(s.run, Run::Free))
    }

    /// Frees a task's slot; returns its joiners to wake.
    fn end(&mut self, index: u32, status: u8) -> Vec<Waker> {
        let slot = &mut self.slots[index as usize];
        let gen = slot.gen;
        slot.run = Run::Free;
        if let Some(inner) = slot.inner.take() {
            inner.status.store(status, Ordering::Release);
        }
        slot.gen = slot.gen.checked_add(1).unwrap_or(1);
        let joiners = mem::take(&mut slot.joiners);
        if let Some(owner) = slot.owner.take() {
            if let Some(list) = self.owners.get_mut(&owner) {
                list.retain(|&k| k != (index, gen));
                if list.is_empty() {
                    self.owners.remove(&owner);
                }
            }
        }
        self.first_anchor.remove(&index);
        self.free.push(index);
        self.live -= 1;
        joiners
    }
}

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
    queue: Arc<WakeQueue>,
    /// Woken at the start of the next latent stage.
    next_frame: RefCell<Vec<Waker>>,
    /// Timers of delays dropped while no timer manager was lent; cleared at the next chance.
    to_clear: RefCell<Vec<TimerHandle>>,
    /// Per poll: where a delay on the game or real clock starts, when not now.
    anchors: Cell<[Option<u64>; 2]>,
    /// Game, real and frame clocks as of the last timer stage.
    clock: Cell<[u64; 3]>,
    /// A frame is open and its timer stage has not run.
    before_timers: Cell<bool>,
}

impl<C: 'static> Exec<C> {
    pub(crate) fn new() -> Self {
        Exec {
            ctx: Lend::new(),
            timers: Lend::new(),
            slots: RefCell::default(),
            queue: Arc::default(),
            next_frame: RefCell::default(),
            to_clear: RefCell::default(),
            anchors: Cell::new([None; 2]),
            clock: Cell::new([0; 3]),
            before_timers: Cell::new(false),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.borrow().live
    }

    pub(crate) fn clock(&self, d: Domain) -> u64 {
        self.clock.get()[d.index()]
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
    }

    pub(crate) fn spawn<F>(
        self: &Rc<Self>,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> TaskHandle
    where
        F: Future<Output = ()> + 'static,
    {
        let fut: BoxFuture = Box::pin(f(TaskCx::new(Rc::clone(self))));
        let mut s = self.slots.borrow_mut();
        let index = match s.free.pop() {
            Some(i) => i,
            None => {
                let i = u32::try_from(s.slots.len()).expect("more than 2^32 tasks at once");
                s.slots.push(Slot {
                    gen: 1,
                    seq: 0,
                    run: Run::Free,
                    inner: None,
                    owner: None,
                    joiners: Vec::new(),
                });
                i
            }
        };
        let seq = s.next_seq;
        s.next_seq += 1;
        let gen = s.slots[index as usize].gen;
        let inner = Arc::new(TaskInner {
            index,
            gen,
            queued: AtomicBool::new(true),
            status: AtomicU8::new(RUNNING),
            queue: Arc::clone(&self.queue),
        });
        let slot = &mut s.slots[index as usize];
        slot.seq = seq;
        slot.run = Run::Idle(fut);
        slot.inner = Some(Arc::clone(&inner));
        slot.owner = owner;
        if let Some(owner) = owner {
            s.owners.entry(owner).or_default().push((index, gen));
        }
        if !self.before_timers.get() {
            // Spawned after this frame's timer stage (or between frames): delays count from
            // the clocks now, as a timer set here would.
            let c = self.clock.get();
            s.first_anchor.insert(index, [c[0], c[1]]);
        }
        s.live += 1;
        drop(s);
        self.queue.push((index, gen));
        let control: Weak<dyn Control> = Rc::downgrade(self) as Weak<dyn Control>;
        TaskHandle::new(inner, control)
    }

    /// Cancels every task of `owner`, in spawn order; returns how many.
    pub(crate) fn cancel_owner(&self, owner: OwnerId) -> usize {
        let list = self
            .slots
            .borrow()
            .owners
            .get(&owner)
            .cloned()
            .unwrap_or_default();
        list.into_iter().filter(|&(i, g)| self.cancel(i, g)).count()
    }

    /// Cancels every task (the scheduler is going away), in spawn order.
    pub(crate) fn cancel_all(&self) {
        // Destructors may spawn; a few rounds catch those too.
        for _ in 0..4 {
            let mut live: Vec<(u64, u32, u32)> = {
                let s = self.slots.borrow();
                s.slots
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| !matches!(t.run, Run::Free))
                    .map(|(i, t)| (t.seq, i as u32, t.gen))
                    .collect()
            };
            if live.is_empty() {
                break;
            }
            live.sort_unstable();
            for (_, i, g) in live {
                self.cancel(i, g);
            }
        }
        self.next_frame.borrow_mut().clear();
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
        let waiting = mem::take(&mut *self.next_frame.borrow_mut());
        for w in waiting {
            w.wake();
        }
        let mut deferred: Vec<(u32, u32)> = Vec::new();
        let (mut polls, mut ended) = (0, 0);
        for _ in 0..MAX_TASK_PASSES {
            let mut batch = self.queue.take();
            if !deferred.is_empty() {
                batch.retain(|k| !deferred.contains(k));
            }
            let order = self.in_spawn_order(batch);
            if order.is_empty() {
                break;
            }
            for (n, &(index, gen)) in order.iter().enumerate() {
                let Some((mut fut, inner, anchors)) = self.begin_poll(index, gen) else {
                    continue;
                };
                self.anchors.set(anchors);
                let waker = Waker::from(Arc::clone(&inner));
                let polled = panic::catch_unwind(AssertUnwindSafe(|| {
                    self.lent(ctx, timers, || {
                        fut.as_mut().poll(&mut Context::from_waker(&waker))
                    })
                }));
                self.anchors.set([None; 2]);
                polls += 1;
                match polled {
                    Ok(Poll::Pending) => {
                        if let Some(fut) = self.end_poll(index, fut) {
                            self.lent(ctx, timers, || drop(fut));
                            ended += 1;
                        } else if inner.queued.load(Ordering::Acquire) {
                            // Woke itself: that is a yield, it runs again next frame.
                            deferred.push((index, gen));
                        }
                    }
                    Ok(Poll::Ready(())) => {
                        let joiners = self.slots.borrow_mut().end(index, FINISHED);
                        self.lent(ctx, timers, || drop(fut));
                        joiners.into_iter().for_each(Waker::wake);
                        ended += 1;
                    }
                    Err(payload) => {
                        let joiners = self.slots.borrow_mut().end(index, CANCELLED);
                        // A future that panicked may panic again while dropped; the first
                        // panic is the one to report.
                        let _ = panic::catch_unwind(AssertUnwindSafe(|| {
                            self.lent(ctx, timers, || drop(fut));
                        }));
                        joiners.into_iter().for_each(Waker::wake);
                        for &k in order[n + 1..].iter().chain(&deferred) {
                            self.queue.push(k);
                        }
                        panic::resume_unwind(payload);
                    }
                }
                after_poll(ctx, timers);
            }
        }
        for k in deferred {
            self.queue.push(k);
        }
        (polls, ended)
    }

    fn lent<R>(&self, ctx: &mut C, timers: &mut TimerManager<C>, f: impl FnOnce() -> R) -> R {
        self.ctx.lend(ctx, || self.timers.lend(timers, f))
    }

    fn in_spawn_order(&self, batch: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
        let s = self.slots.borrow();
        let mut keyed: Vec<(u64, u32, u32)> = batch
            .into_iter()
            .filter_map(|(i, g)| {
                let slot = s.slots.get(i as usize)?;
                (slot.gen == g && matches!(slot.run, Run::Idle(_))).then_some((slot.seq, i, g))
            })
            .collect();
        keyed.sort_unstable();
        keyed.dedup();
        keyed.into_iter().map(|(_, i, g)| (i, g)).collect()
    }

    fn begin_poll(
        &self,
        index: u32,
        gen: u32,
    ) -> Option<(BoxFuture, Arc<TaskInner>, [Option<u64>; 2])> {
        let mut s = self.slots.borrow_mut();
        let slot = s.live_mut(index, gen)?;
        let Run::Idle(_) = slot.run else {
            return None;
        };
        let Run::Idle(fut) = mem::replace(&mut slot.run, Run::Polling { cancel: false }) else {
            unreachable!("checked above");
        };
        let inner = Arc::clone(slot.inner.as_ref().expect("a live task has its waker"));
        inner.queued.store(false, Ordering::Release);
        let anchors = s
            .first_anchor
            .remove(&index)
            .map_or([None; 2], |[g, r]| [Some(g), Some(r)]);
        Some((fut, inner, anchors))
    }

    /// Puts a pending future back; hands it out again when it was cancelled during its poll.
    fn end_poll(&self, index: u32, fut: BoxFuture) -> Option<BoxFuture> {
        let mut s = self.slots.borrow_mut();
        let slot = &mut s.slots[index as usize];
        if let Run::Polling { cancel: true } = slot.run {
            let joiners = s.end(index, CANCELLED);
            drop(s);
            joiners.into_iter().for_each(Waker::wake);
            return Some(fut);
        }
        slot.run = Run::Idle(fut);
        None
    }
}

impl<C: 'static> Control for Exec<C> {
    fn cancel(&self, index: u32, gen: u32) -> bool {
        let mut s = self.slots.borrow_mut();
        let Some(slot) = s.live_mut(index, gen) else {
            return false;
        };
        if let Run::Polling { cancel } = &mut slot.run {
            return !mem::replace(cancel, true);
        }
        let Run::Idle(fut) = mem::replace(&mut slot.run, Run::Free) else {
            return false;
        };
        let joiners = s.end(index, CANCELLED);
        drop(s);
        // The future's destructors run here, with no borrow held: they may use the executor.
        drop(fut);
        joiners.into_iter().for_each(Waker::wake);
        true
    }

    fn join(&self, index: u32, gen: u32, waker: &Waker) {
        let mut s = self.slots.borrow_mut();
        if let Some(slot) = s.live_mut(index, gen) {
            if !slot.joiners.iter().any(|w| w.will_wake(waker)) {
                slot.joiners.push(waker.clone());
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
        self.exec.cancel_all();
    }
}
