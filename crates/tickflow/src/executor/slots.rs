//! Task storage: the type-erased future cell, the part of a task that handles and wakers share
//! across threads, and the slots the executor keeps tasks in.

use std::any::Any;
use std::future::Future;
use std::mem;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use rustc_hash::FxHashMap;

use crate::owner::{OwnerId, OwnerIndex};
use crate::timer::TimerHandle;

pub(crate) type BoxFuture = Pin<Box<dyn TaskFuture + Send>>;

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

impl<F: Future<Output: Send + 'static> + Send + 'static> TaskCell<F> {
    /// `fut` in a cell, boxed and type-erased.
    pub(super) fn boxed(fut: F) -> BoxFuture {
        Box::pin(TaskCell {
            head: 0,
            fut,
            tail: 0,
        })
    }
}

/// A task's output on its way to the handle (boxed: a `()` output allocates nothing).
pub(crate) type AnyOutput = Box<dyn Any + Send>;

/// A spawned future, type-erased (its output boxed for its handle).
pub(crate) trait TaskFuture {
    fn poll_task(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<AnyOutput>;

    /// Reads the cell's first and last bytes. Called for every task of a batch before any is
    /// polled: the loads are independent, so the processor fetches all the futures' memory at
    /// once instead of stalling on each one in turn when it is polled (measured on L1 at 1e5
    /// tasks: the future's cache miss was a fifth of the frame).
    fn touch(&self) -> u8;
}

impl<F: Future<Output: Send + 'static>> TaskFuture for TaskCell<F> {
    fn poll_task(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<AnyOutput> {
        self.project()
            .fut
            .poll(cx)
            .map(|v| Box::new(v) as AnyOutput)
    }

    fn touch(&self) -> u8 {
        self.head ^ self.tail
    }
}

/// Task status, as seen by handles.
pub(crate) const RUNNING: u8 = 0;
pub(crate) const FINISHED: u8 = 1;
pub(crate) const CANCELLED: u8 = 2;

/// What reaches the executor from any thread: wake-ups (a channel filled by a worker wakes a
/// task, say) and cancels of tasks whose handle was used away from the executor's thread.
/// Behind mutexes; on the game thread they are never contended, and the flags let the
/// executor skip the locks when nothing came.
#[derive(Default)]
pub(crate) struct Remote {
    wakes: Mutex<Vec<(u32, u32)>>,
    cancels: Mutex<Vec<(u32, u32)>>,
    has_wakes: AtomicBool,
    has_cancels: AtomicBool,
    /// The scheduler is being dropped: a task spawned now is cancelled at birth.
    closed: AtomicBool,
}

fn push(list: &Mutex<Vec<(u32, u32)>>, flag: &AtomicBool, key: (u32, u32)) {
    list.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(key);
    flag.store(true, Ordering::Release);
}

fn take(list: &Mutex<Vec<(u32, u32)>>, flag: &AtomicBool) -> Vec<(u32, u32)> {
    if !flag.swap(false, Ordering::AcqRel) {
        return Vec::new();
    }
    mem::take(&mut *list.lock().unwrap_or_else(PoisonError::into_inner))
}

impl Remote {
    /// From now on every spawn makes a task that is cancelled at birth.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Cancels came from other threads since the last `take_cancels`.
    pub(super) fn has_cancels(&self) -> bool {
        self.has_cancels.load(Ordering::Acquire)
    }

    pub(super) fn take_wakes(&self) -> Vec<(u32, u32)> {
        take(&self.wakes, &self.has_wakes)
    }

    pub(super) fn take_cancels(&self) -> Vec<(u32, u32)> {
        take(&self.cancels, &self.has_cancels)
    }
}

/// The part of a task that wakers and handles share, on any thread.
pub(crate) struct Core {
    pub(crate) index: u32,
    pub(crate) gen: u32,
    /// Set from a waker's wake until the executor drains it: one queue entry per wake-up.
    pub(super) queued: AtomicBool,
    pub(super) status: AtomicU8,
    pub(super) remote: Arc<Remote>,
    /// Who waits for the end, and the output: made when first needed, so an idle task that
    /// nobody awaits carries only the pointer.
    ends: Mutex<Option<Box<Ends>>>,
}

/// A task's end as its handles see it.
#[derive(Default)]
struct Ends {
    /// Wakers of the handles awaiting the task's end.
    joiners: Vec<Waker>,
    output: Option<AnyOutput>,
}

impl Core {
    pub(crate) fn status(&self) -> u8 {
        self.status.load(Ordering::Acquire)
    }

    /// Cancels from away from the executor: the task is never polled again, and its future is
    /// dropped the next time the scheduler runs. `true` when this call cancelled it.
    pub(crate) fn cancel_remotely(&self) -> bool {
        let cancelled = self
            .status
            .compare_exchange(RUNNING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if cancelled {
            let r = &self.remote;
            push(&r.cancels, &r.has_cancels, (self.index, self.gen));
        }
        cancelled
    }

    /// The task ended with `status` (`FINISHED` loses to a cancel that came first), its
    /// output kept for its handle; wakes the handles awaiting it.
    pub(super) fn end(&self, status: u8, output: Option<AnyOutput>) {
        let mut ends = self.lock_ends();
        let _ = self
            .status
            .compare_exchange(RUNNING, status, Ordering::AcqRel, Ordering::Acquire);
        let joiners = match (ends.as_mut(), output) {
            (Some(e), output) => {
                e.output = output;
                mem::take(&mut e.joiners)
            }
            (None, Some(output)) => {
                *ends = Some(Box::new(Ends {
                    joiners: Vec::new(),
                    output: Some(output),
                }));
                Vec::new()
            }
            (None, None) => Vec::new(),
        };
        drop(ends);
        joiners.into_iter().for_each(Waker::wake);
    }

    /// Registers a waker to wake when the task ends; `false` when it has ended already.
    pub(crate) fn join(&self, waker: &Waker) -> bool {
        let mut ends = self.lock_ends();
        if self.status() != RUNNING {
            return false;
        }
        let joiners = &mut ends.get_or_insert_with(Box::default).joiners;
        if !joiners.iter().any(|w| w.will_wake(waker)) {
            joiners.push(waker.clone());
        }
        true
    }

    /// Takes the output of a finished task (once).
    pub(crate) fn take_output(&self) -> Option<AnyOutput> {
        self.lock_ends().as_mut()?.output.take()
    }

    fn lock_ends(&self) -> std::sync::MutexGuard<'_, Option<Box<Ends>>> {
        self.ends.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Core {
    pub(super) fn new(index: u32, gen: NonZeroU32, remote: Arc<Remote>) -> Self {
        Core {
            index,
            gen: gen.get(),
            queued: AtomicBool::new(false),
            status: AtomicU8::new(RUNNING),
            remote,
            ends: Mutex::new(None),
        }
    }
}

impl Wake for Core {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.status() == RUNNING && !self.queued.swap(true, Ordering::AcqRel) {
            let r = &self.remote;
            push(&r.wakes, &r.has_wakes, (self.index, self.gen));
        }
    }
}

/// Task slot states.
pub(super) const FREE: u8 = 0;
pub(super) const IDLE: u8 = 1;
pub(super) const POLLING: u8 = 2;
/// Polling, and cancelled meanwhile: dropped when the poll returns.
pub(super) const POLLING_CANCELLED: u8 = 3;

/// Task slot flags: side-table entries exist for this task.
pub(super) const HAS_ANCHOR: u8 = 1;
pub(super) const HAS_OWNER: u8 = 4;
/// The task's reusable delay timer is armed by one of its delays.
pub(super) const TIMER_BUSY: u8 = 8;

/// One task, one cache line: touched once per poll. Rarely used parts (owner, first anchor)
/// live in side tables flagged here.
#[repr(align(64))]
pub(super) struct TaskSlot {
    pub(super) fut: Option<BoxFuture>,
    pub(super) waker: Option<Waker>,
    pub(super) inner: Option<Arc<Core>>,
    /// The task's game-clock delay timer, made at its first delay and re-armed for every later
    /// one (no timer made or freed per delay).
    pub(super) timer: Option<TimerHandle>,
    /// Spawn order (renumbered, order kept, when the counter runs out).
    pub(super) seq: u32,
    /// The tag of the task's handle (from the shared allocator).
    pub(super) gen: u32,
    /// The last frame this task was polled in (low 32 bits): at most one poll per frame.
    pub(super) polled: u32,
    pub(super) state: u8,
    pub(super) flags: u8,
}

const _: () = assert!(std::mem::size_of::<TaskSlot>() == 64);

impl TaskSlot {
    const EMPTY: TaskSlot = TaskSlot {
        fut: None,
        waker: None,
        inner: None,
        timer: None,
        seq: 0,
        gen: 0,
        polled: 0,
        state: FREE,
        flags: 0,
    };

    /// The task's shared core (a live slot has one).
    pub(super) fn core(&self) -> Option<&Core> {
        self.inner.as_deref()
    }
}

/// The executor's tasks by slot index; indexes and tags come from the shared allocator.
#[derive(Default)]
pub(super) struct TaskSlots {
    pub(super) slots: Vec<TaskSlot>,
    pub(super) live: usize,
    pub(super) next_seq: u32,
    pub(super) owners: OwnerIndex<(u32, u32)>,
    pub(super) owner_of: FxHashMap<u32, OwnerId>,
    /// Game and real times a task spawned outside a frame's early stages counts from.
    pub(super) first_anchor: FxHashMap<u32, [u64; 2]>,
}

/// What a task leaves behind when it ends: its core (whose joiners wake once the future is
/// dropped) and its timer to clear.
pub(crate) struct Ended {
    pub(super) core: Option<Arc<Core>>,
    pub(super) status: u8,
    pub(super) timer: Option<TimerHandle>,
}

impl TaskSlots {
    pub(super) fn live_mut(&mut self, index: u32, gen: u32) -> Option<&mut TaskSlot> {
        self.slots
            .get_mut(index as usize)
            .filter(|s| s.gen == gen && s.state != FREE)
    }

    /// The slot for `index`, made if the table is shorter.
    pub(super) fn at_mut(&mut self, index: u32) -> &mut TaskSlot {
        let i = index as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || TaskSlot::EMPTY);
        }
        &mut self.slots[i]
    }

    /// Frees a task's slot (its future must be out); returns what its end leaves behind. The
    /// caller gives the index back to the allocator.
    pub(super) fn end(&mut self, index: u32, status: u8) -> Ended {
        let slot = &mut self.slots[index as usize];
        let gen = slot.gen;
        let flags = slot.flags;
        slot.state = FREE;
        slot.flags = 0;
        slot.fut = None;
        slot.waker = None;
        let core = slot.inner.take();
        let timer = slot.timer.take();
        if flags & HAS_OWNER != 0 {
            let owner = self.owner_of.remove(&index).expect("flagged owner");
            self.owners.forget(owner, (index, gen));
        }
        if flags & HAS_ANCHOR != 0 {
            self.first_anchor.remove(&index);
        }
        self.live -= 1;
        Ended {
            core,
            status,
            timer,
        }
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
    /// The address its own waker's data points at (an address, not a pointer: `Send`).
    pub(super) waker_data: usize,
    pub(crate) index: u32,
    pub(crate) gen: u32,
}

impl Current {
    /// `true` when `w` is this task's own waker (not a combinator's). A waker's data pointer
    /// is the address of what it wakes; only wakers made from this task's `Arc<Core>`
    /// point there. (Vtable addresses are not compared: they may differ between codegen
    /// units for the same type.)
    pub(crate) fn owns(&self, w: &Waker) -> bool {
        w.data() as usize == self.waker_data
    }
}
