//! [`TaskCx`], [`TaskHandle`] and the futures a task awaits.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::exec::{Control, Current, Exec, TaskInner, CANCELLED, FINISHED, RUNNING};
use crate::time::{Domain, Span, Time};
use crate::timer::{OwnerId, TimerHandle, TimerManager};

const NOT_IN_A_TASK: &str = "tickflow task futures can only be polled by the Scheduler that \
                             spawned the task, in its latent stage";

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

/// The future of [`TaskCx::delay`], [`delay_real`](TaskCx::delay_real) and
/// [`frames`](TaskCx::frames). Dropping it clears its timer.
pub struct Sleep<C: 'static> {
    exec: Rc<Exec<C>>,
    domain: Domain,
    span: u64,
    state: SleepState,
}

enum SleepState {
    New,
    Waiting {
        timer: TimerHandle,
        due: u64,
        wake: Wake,
    },
    Done,
}

/// How a delay's timer wakes its task.
enum Wake {
    /// The task's own reusable timer (game clock), awaited by the task itself: the common case.
    Task(Current),
    /// A one-shot timer that wakes the task itself through the executor (no allocation).
    Own,
    /// A one-shot timer that wakes a combinator's waker.
    Foreign(Waker),
}

impl<C: 'static> Sleep<C> {
    fn new(exec: Rc<Exec<C>>, domain: Domain, span: u64) -> Self {
        Sleep {
            exec,
            domain,
            span,
            state: SleepState::New,
        }
    }

    /// Arms a timer due at `due` that wakes `w`'s task: its reusable timer or a one-shot
    /// through the executor when `w` is the polled task's own waker, else a one-shot that
    /// wakes `w`.
    fn arm(&self, due: u64, w: &Waker) -> (TimerHandle, Wake) {
        let exec = &*self.exec;
        let own = exec.current().filter(|c| c.owns(w));
        if let (Domain::Game, Some(c)) = (self.domain, own) {
            if let Some(reusable) = exec.claim_task_timer(c) {
                let h = exec
                    .timers
                    .with(|tm| match reusable {
                        Some(h) if tm.rearm(h, due) => h,
                        _ => {
                            let h = tm.every(Span::MAX).call(record_wake);
                            tm.rearm(h, due);
                            exec.set_task_timer(c, h);
                            h
                        }
                    })
                    .expect(NOT_IN_A_TASK);
                return (h, Wake::Task(c));
            }
        }
        let domain = self.domain;
        let now = exec.clock(domain);
        let set = |tm: &mut TimerManager<C>| {
            let builder = match domain {
                Domain::Frames => tm.after_frames(due.saturating_sub(now)),
                d => {
                    let start = due.saturating_sub(self.span).min(now);
                    tm.after(Span::from_flicks(due - start))
                        .domain(d)
                        .starting_at(start)
                }
            };
            match own {
                Some(_) => builder.call(record_wake),
                None => {
                    let w = w.clone();
                    builder.call(move |_, _| w.wake_by_ref())
                }
            }
        };
        let h = exec.timers.with(set).expect(NOT_IN_A_TASK);
        match own {
            Some(c) => {
                exec.map_timer(h, c);
                (h, Wake::Own)
            }
            None => (h, Wake::Foreign(w.clone())),
        }
    }

    /// Stops the timer of a delay that will not complete.
    fn disarm(&self, timer: TimerHandle, wake: &Wake) {
        match wake {
            Wake::Task(c) => {
                // Parked, kept for the task's next delay.
                self.exec.timers.with(|tm| tm.rearm(timer, u64::MAX));
                self.exec.release_task_timer(c.index, c.gen);
            }
            Wake::Own | Wake::Foreign(_) => self.exec.clear_timer(timer),
        }
    }
}

/// A task-delay timer's callback: captures nothing, so storing it allocates nothing; the
/// executor maps the handle back to its task.
fn record_wake<C: 'static>(_: &mut C, tcx: &mut crate::timer::TimerCx<'_, C>) {
    let h = tcx.handle();
    tcx.timers().woken.push(h);
}

impl<C: 'static> Future for Sleep<C> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        match &this.state {
            SleepState::New => {
                if this.domain == Domain::Frames && this.span == 0 {
                    this.state = SleepState::Done;
                    return Poll::Ready(());
                }
                let start = this
                    .exec
                    .anchor(this.domain)
                    .unwrap_or_else(|| this.exec.clock(this.domain));
                let due = start.saturating_add(this.span);
                let (timer, wake) = this.arm(due, cx.waker());
                this.state = SleepState::Waiting { timer, due, wake };
                Poll::Pending
            }
            SleepState::Waiting { timer, due, wake } => {
                let (timer, due) = (*timer, *due);
                // The timer stage fires every timer whose due time its clock reaches, and the
                // executor's clocks are the ones that stage reached: this is "it fired".
                if this.exec.clock(this.domain) >= due {
                    if let Wake::Task(c) = wake {
                        this.exec.release_task_timer(c.index, c.gen);
                    }
                    this.exec.set_anchor(this.domain, due);
                    this.state = SleepState::Done;
                    return Poll::Ready(());
                }
                let same = match wake {
                    Wake::Task(_) | Wake::Own => {
                        this.exec.current().is_some_and(|c| c.owns(cx.waker()))
                    }
                    Wake::Foreign(w) => w.will_wake(cx.waker()),
                };
                if !same {
                    // Moved under another waker (a combinator): the timer wakes the new one.
                    this.disarm(timer, wake);
                    let (timer, wake) = this.arm(due, cx.waker());
                    this.state = SleepState::Waiting { timer, due, wake };
                }
                Poll::Pending
            }
            SleepState::Done => Poll::Ready(()),
        }
    }
}

impl<C: 'static> Drop for Sleep<C> {
    fn drop(&mut self) {
        if let SleepState::Waiting { timer, wake, .. } = &self.state {
            self.disarm(*timer, wake);
        }
    }
}

impl<C: 'static> fmt::Debug for Sleep<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("domain", &self.domain)
            .field("span", &self.span)
            .field("waiting", &matches!(self.state, SleepState::Waiting { .. }))
            .finish()
    }
}

/// The future of [`TaskCx::next_frame`].
pub struct NextFrame<C: 'static> {
    exec: Rc<Exec<C>>,
    target: Option<u64>,
}

impl<C: 'static> Future for NextFrame<C> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let now = this.exec.clock(Domain::Frames);
        let target = *this.target.get_or_insert(now + 1);
        if now >= target {
            return Poll::Ready(());
        }
        this.exec.wake_next_frame(cx.waker());
        Poll::Pending
    }
}

impl<C: 'static> fmt::Debug for NextFrame<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NextFrame")
            .field("target", &self.target)
            .finish()
    }
}

/// The future of [`TaskCx::until`].
pub struct Until<C: 'static, F> {
    exec: Rc<Exec<C>>,
    cond: F,
}

// The condition is only ever called through `&mut`, never pinned.
impl<C: 'static, F> Unpin for Until<C, F> {}

impl<C: 'static, F: FnMut(&C) -> bool> Future for Until<C, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let cond = &mut this.cond;
        let done = this.exec.ctx.with(|c| cond(c)).unwrap_or_else(|| {
            panic!(
                "TaskCx::until: the condition needs the game state, which is reachable only \
                 while the scheduler polls a task (not from inside `with`)"
            )
        });
        if done {
            return Poll::Ready(());
        }
        this.exec.wake_next_frame(cx.waker());
        Poll::Pending
    }
}

impl<C: 'static, F> fmt::Debug for Until<C, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Until")
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
