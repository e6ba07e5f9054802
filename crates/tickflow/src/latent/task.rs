//! [`TaskCx`], [`TaskHandle`] and the futures a task awaits.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::task::{Context, Poll};

use super::exec::{Control, Exec};
use super::slots::{TaskInner, CANCELLED, FINISHED, RUNNING};
use super::wait::{NextFrame, Sleep, Until};
use crate::time::{Domain, Span, Time};
use crate::timer::OwnerId;

/// What a task gets to wait and to reach the game state. Cheap to clone; see the
/// [module docs](super) for the timing rules.
///
/// The futures it returns work with the usual combinators (`join`, `select`, ...) inside the
/// task, but only the scheduler that spawned the task can poll them.
pub struct TaskCx<C: 'static> {
    exec: Rc<Exec<C>>,
}

impl<C: 'static> Clone for TaskCx<C> {
    fn clone(&self) -> Self {
        TaskCx {
            exec: Rc::clone(&self.exec),
        }
    }
}

impl<C: 'static> fmt::Debug for TaskCx<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskCx")
            .field("frame", &self.frame())
            .field("now", &self.now())
            .finish()
    }
}

impl<C: 'static> TaskCx<C> {
    pub(crate) fn new(exec: Rc<Exec<C>>) -> Self {
        TaskCx { exec }
    }

    /// Waits `d` of game time (dilated, stopped while paused). The wait is a one-shot timer
    /// in the scheduler's [`TimerManager`](crate::timer::TimerManager); it resumes the task in
    /// the latent stage of the first frame whose timer stage reaches the due time, never in
    /// the frame the wait started. Started right after another delay on the same clock ended,
    /// it counts from that delay's due time, so loops keep their rhythm.
    pub fn delay(&self, d: Span) -> Sleep<C> {
        Sleep::new(Rc::clone(&self.exec), Domain::Game, d.flicks())
    }

    /// Waits `d` of real time (unscaled, runs while paused).
    pub fn delay_real(&self, d: Span) -> Sleep<C> {
        Sleep::new(Rc::clone(&self.exec), Domain::Real, d.flicks())
    }

    /// Resumes in the next frame's latent stage.
    pub fn next_frame(&self) -> NextFrame<C> {
        NextFrame {
            exec: Rc::clone(&self.exec),
            target: None,
        }
    }

    /// Resumes in the latent stage `n` frames later (`frames(0)` does not wait; `frames(1)`
    /// is [`next_frame`](Self::next_frame)).
    pub fn frames(&self, n: u64) -> Sleep<C> {
        Sleep::new(Rc::clone(&self.exec), Domain::Frames, n)
    }

    /// Resumes once `cond(&ctx)` holds: checked when first awaited, then once per frame in the
    /// latent stage.
    pub fn until<F: FnMut(&C) -> bool + 'static>(&self, cond: F) -> Until<C, F> {
        Until {
            exec: Rc::clone(&self.exec),
            cond,
        }
    }

    /// Calls `f` with the game state. Only between awaits, inside the task.
    ///
    /// # Panics
    ///
    /// When called outside the scheduler's poll of this task, or from inside another `with`
    /// or an `until` condition (the state is already borrowed there).
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(&mut C) -> R) -> R {
        self.exec.ctx.with(f).unwrap_or_else(|| {
            panic!(
                "TaskCx::with: the game state is reachable only while the scheduler polls a \
                 task, and not from inside another `with` or `until` condition"
            )
        })
    }

    /// The game clock as of this frame's timer stage.
    pub fn now(&self) -> Time {
        Time::from_flicks(self.exec.clock(Domain::Game))
    }

    /// The real clock as of this frame's timer stage.
    pub fn real_now(&self) -> Time {
        Time::from_flicks(self.exec.clock(Domain::Real))
    }

    /// The number of the frame being run.
    pub fn frame(&self) -> u64 {
        self.exec.clock(Domain::Frames)
    }

    /// Spawns another task on the same scheduler; it is first polled later in this latent
    /// stage.
    pub fn spawn<F: Future<Output = ()> + 'static>(
        &self,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> TaskHandle {
        self.exec.spawn(owner, f)
    }
}

/// A running task, from [`Scheduler::spawn`](crate::scheduler::Scheduler::spawn). Clone it
/// freely; dropping it does not cancel the task.
///
/// It is also a future: awaiting it (from another task) resumes when the task has ended,
/// with `Err(Cancelled)` when it was cancelled (or panicked) instead of finishing.
#[derive(Clone)]
pub struct TaskHandle {
    inner: Arc<TaskInner>,
    exec: Weak<dyn Control>,
}

impl TaskHandle {
    pub(crate) fn new(inner: Arc<TaskInner>, exec: Weak<dyn Control>) -> Self {
        TaskHandle { inner, exec }
    }

    /// Cancels the task: its future is dropped (its destructors run) at once, or right after
    /// its poll when a task cancels itself. `true` when this call cancelled it; `false` when
    /// it had already ended or been cancelled.
    pub fn cancel(&self) -> bool {
        self.inner.status() == RUNNING
            && self
                .exec
                .upgrade()
                .is_some_and(|e| e.cancel(self.inner.index, self.inner.gen))
    }

    /// `true` once the task has ended: finished, cancelled or panicked.
    pub fn is_finished(&self) -> bool {
        self.inner.status() != RUNNING
    }

    /// `true` when the task ended without finishing (cancelled, its owner removed, its
    /// scheduler dropped, or it panicked).
    pub fn is_cancelled(&self) -> bool {
        self.inner.status() == CANCELLED
    }
}

impl fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.inner.status() {
            RUNNING => "running",
            FINISHED => "finished",
            _ => "cancelled",
        };
        write!(f, "task {}v{} ({state})", self.inner.index, self.inner.gen)
    }
}

impl PartialEq for TaskHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for TaskHandle {}

impl Future for TaskHandle {
    type Output = Result<(), Cancelled>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.inner.status() {
            FINISHED => return Poll::Ready(Ok(())),
            CANCELLED => return Poll::Ready(Err(Cancelled)),
            _ => {}
        }
        match self.exec.upgrade() {
            Some(e) => {
                e.join(self.inner.index, self.inner.gen, cx.waker());
                Poll::Pending
            }
            None => Poll::Ready(Err(Cancelled)),
        }
    }
}

/// The task awaited through its [`TaskHandle`] was cancelled (or panicked) instead of
/// finishing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Cancelled;

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the task was cancelled before it finished")
    }
}

impl Error for Cancelled {}
