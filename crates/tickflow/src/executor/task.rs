//! [`TaskCx`], [`TaskHandle`], [`TaskRef`] and the futures a task awaits.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::exec::Exec;
use super::lend;
use super::slots::{Core, CANCELLED, FINISHED, RUNNING};
use super::wait::{NextFrame, Sleep, Until};
use crate::commands::Commands;
use crate::time::{Clocks, Domain, Interval, Span, Time};
use crate::timer::Timers;

/// What a task gets to wait, to reach the game state and the timers, and to read the clocks.
/// `Copy`, `Send` and `Sync`: it is only the id of the scheduler that spawned the task. See the
/// [module docs](crate::latent) for the timing rules.
///
/// Everything it does needs that scheduler to be running the task (or spawning it) on this
/// thread: inside the task's `async` block it always is. The futures it returns work with the
/// usual combinators (`join`, `select`, ...) inside the task, but only that scheduler can poll
/// them.
pub struct TaskCx<C: 'static> {
    exec: u64,
    _context: PhantomData<fn() -> C>,
}

impl<C: 'static> Clone for TaskCx<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: 'static> Copy for TaskCx<C> {}

impl<C: 'static> fmt::Debug for TaskCx<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskCx")
            .field("scheduler", &self.exec)
            .finish()
    }
}

const NOT_RUNNING: &str = "TaskCx: its scheduler is not running this task on this thread \
                           (use it inside the task's async block)";

impl<C: 'static> TaskCx<C> {
    pub(crate) fn new(exec: u64) -> Self {
        TaskCx {
            exec,
            _context: PhantomData,
        }
    }

    /// Calls `f` with the executor, which must be active on this thread.
    #[track_caller]
    fn exec<R>(&self, f: impl FnOnce(&Exec<C>) -> R) -> R {
        lend::with_active(self.exec, f).expect(NOT_RUNNING)
    }

    /// Waits `d` of game time (dilated, stopped while paused), or `n` frames for
    /// [`Frames(n)`](crate::time::Frames) (`Frames(0)` does not wait; `Frames(1)` is
    /// [`next_frame`](Self::next_frame)). The wait is a one-shot timer in the scheduler's
    /// [`Timers`](crate::timer::Timers); it resumes the task in the latent stage of the first
    /// frame whose timer stage reaches the due time, never in the frame the wait started.
    /// Started right after another delay on the same clock ended, it counts from that delay's
    /// due time, so loops keep their rhythm.
    pub fn delay(&self, d: impl Interval) -> Sleep<C> {
        let (clock, amount) = d.clock_amount();
        Sleep::new(self.exec, clock, amount)
    }

    /// Waits `d` of real time (unscaled, runs while paused).
    pub fn delay_real(&self, d: Span) -> Sleep<C> {
        Sleep::new(self.exec, Domain::Real, d.flicks())
    }

    /// Waits until the game clock reads `time` ("at match time 60 s"): resumes in the latent
    /// stage of the first frame whose timer stage reaches it. A time reached already does not
    /// wait.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<Vec<u64>>::new();
    /// sched.tasks().spawn(None, |cx| async move {
    ///     cx.delay_until(Time::ZERO + secs(0.25)).await;
    ///     cx.with(|log| log.push(1));
    ///     cx.delay_until(Time::ZERO + secs(0.1)).await; // passed: no wait
    ///     cx.with(|log| log.push(2));
    /// });
    /// let mut log = Vec::new();
    /// for frame in 1..=3 {
    ///     sched.tick(secs(0.1), &mut log);
    ///     if frame == 2 {
    ///         assert!(log.is_empty(), "0.2 s is before 0.25 s");
    ///     }
    /// }
    /// assert_eq!(log, [1, 2]);
    /// ```
    pub fn delay_until(&self, time: Time) -> Sleep<C> {
        Sleep::until(self.exec, Domain::Game, time.flicks())
    }

    /// Waits until the real clock reads `time` (see [`delay_until`](Self::delay_until)).
    pub fn delay_until_real(&self, time: Time) -> Sleep<C> {
        Sleep::until(self.exec, Domain::Real, time.flicks())
    }

    /// Resumes in the next frame's latent stage.
    pub fn next_frame(&self) -> NextFrame<C> {
        NextFrame::new(self.exec)
    }

    /// Resumes once `cond(&ctx)` holds: checked when first awaited, then once per frame in the
    /// latent stage.
    pub fn until<F: FnMut(&C) -> bool + Send + 'static>(&self, cond: F) -> Until<C, F> {
        Until::new(self.exec, cond)
    }

    /// Calls `f` with the game state. Only between awaits, inside the task.
    ///
    /// # Panics
    ///
    /// When called outside the scheduler's poll of this task, or from inside another `with`
    /// or an `until` condition (the state is already borrowed there).
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(&mut C) -> R) -> R {
        self.exec(|e| e.ctx.with(f)).unwrap_or_else(|| {
            panic!(
                "TaskCx::with: the game state is reachable only while the scheduler polls a \
                 task, and not from inside another `with` or `until` condition"
            )
        })
    }

    /// Calls `f` with the scheduler's timer manager: set, clear, pause or query timers from a
    /// task, as a timer callback or tick function does. Only between awaits, inside the task.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<Vec<&str>>::new();
    /// sched.tasks().spawn(None, |cx| async move {
    ///     cx.timers(|t| t.after(secs(0.2)).call(|log, _| log.push("timer")));
    ///     cx.delay(secs(0.1)).await;
    ///     cx.with(|log| log.push("task"));
    /// });
    /// let mut log = Vec::new();
    /// for _ in 0..3 {
    ///     sched.tick(secs(0.1), &mut log);
    /// }
    /// assert_eq!(log, ["task", "timer"]);
    /// ```
    ///
    /// # Panics
    ///
    /// As [`with`](Self::with); and when called from inside `with` or a timer callback.
    #[track_caller]
    pub fn timers<R>(&self, f: impl FnOnce(&mut Timers<C>) -> R) -> R {
        self.exec(|e| e.timers.with(f)).unwrap_or_else(|| {
            panic!(
                "TaskCx::timers: the timer manager is reachable only while the scheduler polls \
                 a task, and not from inside another `timers`"
            )
        })
    }

    /// Every clock, and how far each moved in this frame (see [`Clocks`]).
    #[track_caller]
    pub fn clocks(&self) -> Clocks {
        self.exec(Exec::clocks)
    }

    /// The scheduler's [`Commands`]: tick functions, tickables, latent actions, other tasks
    /// (spawned from a task, one joins at once and is first polled later in this latent
    /// stage) and owners.
    #[track_caller]
    pub fn commands(&self) -> Commands<C> {
        self.exec(Exec::commands)
    }
}

/// A running task, from [`Tasks::spawn`](crate::latent::Tasks::spawn): cancel it,
/// ask whether it ended (the methods of [`TaskRef`], through `Deref`), or await its output
/// (tokio's `JoinHandle`). Dropping it does not
/// cancel the task. [`task_ref`](Self::task_ref) gives a cloneable handle to cancel or await
/// the end from many places.
///
/// As a future it resolves to the task's output, or to `Err(Cancelled)` when the task was
/// cancelled (or panicked) instead of finishing. `Send` and `Sync`: await it from another
/// task, or from another runtime on another thread.
///
/// ```
/// use tickflow::prelude::*;
///
/// let mut sched = Scheduler::<Vec<String>>::new();
/// let answer = sched.tasks().spawn(None, |cx| async move {
///     cx.delay(secs(0.2)).await;
///     42
/// });
/// sched.tasks().spawn(None, |cx| async move {
///     let n = answer.await.unwrap();
///     cx.with(|log| log.push(format!("got {n}")));
/// });
/// let mut log = Vec::new();
/// for _ in 0..3 {
///     sched.tick(secs(0.1), &mut log);
/// }
/// assert_eq!(log, ["got 42"]);
/// ```
pub struct TaskHandle<T = ()> {
    task: TaskRef,
    _output: PhantomData<fn() -> T>,
}

impl<T> TaskHandle<T> {
    pub(crate) fn new(task: TaskRef) -> Self {
        TaskHandle {
            task,
            _output: PhantomData,
        }
    }

    /// A cloneable handle on the same task (to cancel it, or await its end, from many places).
    pub fn task_ref(&self) -> TaskRef {
        self.task.clone()
    }
}

/// A task handle is a [`TaskRef`] that also knows the task's output type: `cancel`,
/// `is_finished` and `is_cancelled` are [`TaskRef`]'s.
impl<T> std::ops::Deref for TaskHandle<T> {
    type Target = TaskRef;

    fn deref(&self) -> &TaskRef {
        &self.task
    }
}

impl<T> fmt::Debug for TaskHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.task.fmt(f)
    }
}

impl<T: 'static> Future for TaskHandle<T> {
    type Output = Result<T, Cancelled>;

    /// # Panics
    ///
    /// When polled again after it returned the output.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match Pin::new(&mut this.task).poll(cx) {
            Poll::Ready(Ok(())) => {
                let output = this
                    .task
                    .core
                    .take_output()
                    .expect("TaskHandle polled after it returned the task's output");
                let value = output
                    .downcast::<T>()
                    .expect("a task's output has its type");
                Poll::Ready(Ok(*value))
            }
            Poll::Ready(Err(c)) => Poll::Ready(Err(c)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// A cloneable handle on a task: cancel it, ask whether it ended, or await its end (without
/// its output). `Send + Sync + Clone`; equal for the same task.
#[derive(Clone)]
pub struct TaskRef {
    core: Arc<Core>,
    exec: u64,
}

impl TaskRef {
    pub(crate) fn new(core: Arc<Core>, exec: u64) -> Self {
        TaskRef { core, exec }
    }

    /// Cancels the task: it is never polled again, and its future is dropped (its
    /// destructors run, its delay timers are cleared). `true` when this call cancelled it;
    /// `false` when it had already ended or been cancelled.
    ///
    /// When called from code its scheduler runs (a task, a timer callback, a tick function,
    /// a latent completion, a tickable), the future is dropped at once, or right after its
    /// poll when a task cancels itself. Called from anywhere else (between frames, another
    /// thread), the task is cancelled at once, and its future is dropped the next time the
    /// scheduler runs: at its next frame or direct call.
    ///
    /// # Panics
    ///
    /// When a destructor of the task's future panics (dropped at once): the task is cleaned
    /// up first.
    pub fn cancel(&self) -> bool {
        if self.core.status() != RUNNING {
            return false;
        }
        let (index, gen) = (self.core.index, self.core.gen);
        match lend::with_active_control(self.exec, |c| c.cancel(index, gen)) {
            Some(cancelled) => cancelled,
            None => self.core.cancel_remotely(),
        }
    }

    /// `true` once the task has ended: finished, cancelled or panicked.
    pub fn is_finished(&self) -> bool {
        self.core.status() != RUNNING
    }

    /// `true` when the task ended without finishing.
    pub fn is_cancelled(&self) -> bool {
        self.core.status() == CANCELLED
    }
}

impl fmt::Debug for TaskRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.core.status() {
            RUNNING => "running",
            FINISHED => "finished",
            _ => "cancelled",
        };
        let gen = crate::handle::gen_of(self.core.gen);
        write!(f, "task {}v{gen} ({state})", self.core.index)
    }
}

impl PartialEq for TaskRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.core, &other.core)
    }
}

impl Eq for TaskRef {}

impl Future for TaskRef {
    type Output = Result<(), Cancelled>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.core.status() {
                FINISHED => return Poll::Ready(Ok(())),
                CANCELLED => return Poll::Ready(Err(Cancelled)),
                _ if self.core.join(cx.waker()) => return Poll::Pending,
                _ => {} // ended meanwhile: read the status again
            }
        }
    }
}

/// The task awaited through its handle was cancelled (or panicked) instead of finishing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Cancelled;

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the task was cancelled before it finished")
    }
}

impl Error for Cancelled {}
