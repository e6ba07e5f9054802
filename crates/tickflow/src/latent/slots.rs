//! Task storage: the type-erased future cell, the part of a task wakers share across threads,
//! and the generational slots the executor keeps tasks in.

use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use rustc_hash::FxHashMap;

use crate::timer::{OwnerId, TimerHandle};

pub(crate) type BoxFuture = Pin<Box<dyn TaskFuture>>;

pin_project_lite::pin_project! {
    /// A task's future with two marker bytes at its ends. 32-byte alignment keeps a cell of up
    /// to 96 bytes within two cache lines, the ones its first and last bytes are in.
    #[repr(C, align(32))]
    pub(super) struct TaskCell<F> {
        pub(super) head: u8,
        #[pin]
        pub(super) fut: F,
        pub(super) tail: u8,
    }
}

/// A spawned future, type-erased.
pub(crate) trait TaskFuture {
    fn poll_task(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()>;

    /// Reads the cell's first and last bytes. Called for every task of a batch before any is
    /// polled: the loads are independent, so the processor fetches all the futures' memory at
    /// once instead of stalling on each one in turn when it is polled (measured on L1 at 1e5
    /// tasks: the future's cache miss was a fifth of the frame).
    fn touch(&self) -> u8;
}

impl<F: Future<Output = ()>> TaskFuture for TaskCell<F> {
    fn poll_task(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().fut.poll(cx)
    }

    fn touch(&self) -> u8 {
        self.head ^ self.tail
    }
}

/// Task status, as seen by handles.
pub(crate) const RUNNING: u8 = 0;
pub(crate) const FINISHED: u8 = 1;
pub(crate) const CANCELLED: u8 = 2;

/// Woken tasks, as `(index, generation)`. Behind a mutex because wakers may be used from any
/// thread (a channel filled by a worker, say); on the game thread it is never contended.
#[derive(Default)]
pub(crate) struct WakeQueue(Mutex<Vec<(u32, u32)>>);

impl WakeQueue {
    pub(super) fn push(&self, key: (u32, u32)) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(key);
    }

    pub(super) fn take(&self) -> Vec<(u32, u32)> {
        mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The part of a task that wakers and handles share, on any thread.
pub(crate) struct TaskInner {
    pub(crate) index: u32,
    pub(crate) gen: u32,
    /// Set from a waker's wake until the executor drains it: one queue entry per wake-up.
    pub(super) queued: AtomicBool,
    pub(super) status: AtomicU8,
    pub(super) queue: Arc<WakeQueue>,
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

/// Slot states.
pub(super) const FREE: u8 = 0;
pub(super) const IDLE: u8 = 1;
pub(super) const POLLING: u8 = 2;
/// Polling, and cancelled meanwhile: dropped when the poll returns.
pub(super) const POLLING_CANCELLED: u8 = 3;

/// Slot flags: side-table entries exist for this task.
pub(super) const HAS_ANCHOR: u8 = 1;
pub(super) const HAS_JOINERS: u8 = 2;
pub(super) const HAS_OWNER: u8 = 4;
/// The task's reusable delay timer is armed by one of its delays.
pub(super) const TIMER_BUSY: u8 = 8;

/// One task, one cache line: touched once per poll. Rarely used parts (owner, first anchor,
/// joiners) live in side tables flagged here.
#[repr(align(64))]
pub(super) struct Slot {
    pub(super) fut: Option<BoxFuture>,
    pub(super) waker: Option<Waker>,
    pub(super) inner: Option<Arc<TaskInner>>,
    /// The task's game-clock delay timer, made at its first delay and re-armed for every later
    /// one (no timer made or freed per delay).
    pub(super) timer: Option<TimerHandle>,
    /// Spawn order (renumbered, order kept, when the counter runs out).
    pub(super) seq: u32,
    pub(super) gen: u32,
    /// The last frame this task was polled in (low 32 bits): at most one poll per frame.
    pub(super) polled: u32,
    pub(super) state: u8,
    pub(super) flags: u8,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 64);

#[derive(Default)]
pub(super) struct Slots {
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<u32>,
    pub(super) live: usize,
    pub(super) next_seq: u32,
    pub(super) owners: FxHashMap<OwnerId, Vec<(u32, u32)>>,
    pub(super) owner_of: FxHashMap<u32, OwnerId>,
    /// Game and real times a task spawned outside a frame's early stages counts from.
    pub(super) first_anchor: FxHashMap<u32, [u64; 2]>,
    pub(super) joiners: FxHashMap<u32, Vec<Waker>>,
}

/// What a task leaves behind when it ends.
pub(crate) struct Ended {
    pub(super) joiners: Vec<Waker>,
    pub(super) timer: Option<TimerHandle>,
}

impl Slots {
    pub(super) fn live_mut(&mut self, index: u32, gen: u32) -> Option<&mut Slot> {
        self.slots
            .get_mut(index as usize)
            .filter(|s| s.gen == gen && s.state != FREE)
    }

    /// Frees a task's slot (its future must be out); returns its joiners to wake and its timer
    /// to clear.
    pub(super) fn end(&mut self, index: u32, status: u8) -> Ended {
        let slot = &mut self.slots[index as usize];
        let gen = slot.gen;
        let flags = slot.flags;
        slot.state = FREE;
        slot.flags = 0;
        slot.fut = None;
        slot.waker = None;
        if let Some(inner) = slot.inner.take() {
            inner.status.store(status, Ordering::Release);
        }
        slot.gen = slot.gen.checked_add(1).unwrap_or(1);
        if flags & HAS_OWNER != 0 {
            let owner = self.owner_of.remove(&index).expect("flagged owner");
            if let Some(list) = self.owners.get_mut(&owner) {
                list.retain(|&k| k != (index, gen));
                if list.is_empty() {
                    self.owners.remove(&owner);
                }
            }
        }
        if flags & HAS_ANCHOR != 0 {
            self.first_anchor.remove(&index);
        }
        self.free.push(index);
        self.live -= 1;
        let joiners = if flags & HAS_JOINERS != 0 {
            self.joiners.remove(&index).unwrap_or_default()
        } else {
            Vec::new()
        };
        let timer = self.slots[index as usize].timer.take();
        Ended { joiners, timer }
    }

    /// Spawn numbers ran out: renumbers the live tasks from 0, keeping their order.
    pub(super) fn renumber(&mut self) {
        let mut live: Vec<(u32, usize)> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, t)| t.state != FREE)
            .map(|(i, t)| (t.seq, i))
            .collect();
        live.sort_unstable();
        for (n, &(_, i)) in live.iter().enumerate() {
            self.slots[i].seq = n as u32;
        }
        self.next_seq = live.len() as u32;
    }
}

/// The task being polled, for the fast wake path of delays.
#[derive(Copy, Clone)]
pub(crate) struct Current {
    pub(super) waker_data: *const (),
    pub(crate) index: u32,
    pub(crate) gen: u32,
}

impl Current {
    /// `true` when `w` is this task's own waker (not a combinator's). A waker's data pointer
    /// is the address of what it wakes; only wakers made from this task's `Arc<TaskInner>`
    /// point there. (Vtable addresses are not compared: they may differ between codegen
    /// units for the same type.)
    pub(crate) fn owns(&self, w: &Waker) -> bool {
        std::ptr::eq(w.data(), self.waker_data)
    }
}
