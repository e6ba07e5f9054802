//! The futures a task awaits: [`Sleep`] (delays, on timers), [`NextFrame`] and [`Until`].

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::exec::Exec;
use super::lend;
use super::slots::Current;
use crate::time::Domain;
use crate::timer::{TimerHandle, WakeTarget};

const NOT_IN_A_TASK: &str = "tickflow task futures can only be polled by the Scheduler that \
                             spawned the task, in its latent stage";

/// Calls `f` with the executor of id `id`, which polls this future on this thread.
#[track_caller]
fn exec<C: 'static, R>(id: u64, f: impl FnOnce(&Exec<C>) -> R) -> R {
    lend::with_active(id, f).expect(NOT_IN_A_TASK)
}

/// The future of [`TaskCx::delay`](crate::latent::TaskCx::delay),
/// [`delay_real`](crate::latent::TaskCx::delay_real) and
/// [`frames`](crate::latent::TaskCx::delay). Dropping it clears its timer.
pub struct Sleep<C: 'static> {
    exec: u64,
    domain: Domain,
    span: u64,
    /// A time on `domain`'s clock to wait until, instead of `span` from now.
    until: Option<u64>,
    state: SleepState,
    _context: PhantomData<fn() -> C>,
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
    pub(super) fn new(exec: u64, domain: Domain, span: u64) -> Self {
        Sleep {
            exec,
            domain,
            span,
            until: None,
            state: SleepState::New,
            _context: PhantomData,
        }
    }

    pub(super) fn until(exec: u64, domain: Domain, time: u64) -> Self {
        let mut sleep = Sleep::new(exec, domain, 0);
        sleep.until = Some(time);
        sleep
    }

    /// Arms a timer due at `due` that wakes `w`'s task: its reusable timer or a one-shot
    /// through the executor when `w` is the polled task's own waker, else a one-shot that
    /// wakes `w`.
    fn arm(&self, exec: &Exec<C>, due: u64, w: &Waker) -> (TimerHandle, Wake) {
        let own = exec.current().filter(|c| c.owns(w));
        if let (Domain::Game, Some(c)) = (self.domain, own) {
            if let Some(reusable) = exec.claim_task_timer(c) {
                let h = exec
                    .timers
                    .with(|tm| match reusable {
                        Some(h) if tm.move_wake(h, Some(due)) => h,
                        _ => {
                            let h = tm.reusable_wake();
                            tm.move_wake(h, Some(due));
                            exec.set_task_timer(c, h);
                            h
                        }
                    })
                    .expect(NOT_IN_A_TASK);
                return (h, Wake::Task(c));
            }
        }
        let domain = self.domain;
        let start = due.saturating_sub(self.span).min(exec.clock(domain));
        let target = match own {
            Some(_) => WakeTarget::Record,
            None => WakeTarget::Waker(w.clone()),
        };
        let h = (exec.timers)
            .with(|tm| tm.wake_at(domain, start, due, target))
            .expect(NOT_IN_A_TASK);
        match own {
            Some(c) => {
                exec.map_timer(h, c);
                (h, Wake::Own)
            }
            None => (h, Wake::Foreign(w.clone())),
        }
    }

    /// Stops the timer of a delay that will not complete.
    fn disarm(exec: &Exec<C>, timer: TimerHandle, wake: &Wake) {
        match wake {
            Wake::Task(c) => {
                // Parked, kept for the task's next delay.
                exec.timers.with(|tm| tm.move_wake(timer, None));
                exec.release_task_timer(c.index, c.gen);
            }
            Wake::Own | Wake::Foreign(_) => exec.clear_timer(timer),
        }
    }
}

impl<C: 'static> Future for Sleep<C> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if let (SleepState::New, Domain::Frames, 0) = (&this.state, this.domain, this.span) {
            this.state = SleepState::Done;
            return Poll::Ready(());
        }
        if let SleepState::Done = this.state {
            return Poll::Ready(());
        }
        exec(this.exec, |exec: &Exec<C>| match &this.state {
            SleepState::New => {
                let due = match this.until {
                    Some(time) => {
                        let now = exec.clock(this.domain);
                        if now >= time {
                            // Reached already: no wait, and no anchor for a next delay.
                            this.state = SleepState::Done;
                            return Poll::Ready(());
                        }
                        this.span = time - now;
                        time
                    }
                    None => {
                        let start = exec
                            .anchor(this.domain)
                            .unwrap_or_else(|| exec.clock(this.domain));
                        start.saturating_add(this.span)
                    }
                };
                let (timer, wake) = this.arm(exec, due, cx.waker());
                this.state = SleepState::Waiting { timer, due, wake };
                Poll::Pending
            }
            SleepState::Waiting { timer, due, wake } => {
                let (timer, due) = (*timer, *due);
                // The timer stage fires every timer whose due time its clock reaches, and the
                // executor's clocks are the ones that stage reached: this is "it fired".
                if exec.clock(this.domain) >= due {
                    if let Wake::Task(c) = wake {
                        exec.release_task_timer(c.index, c.gen);
                    }
                    exec.set_anchor(this.domain, due);
                    this.state = SleepState::Done;
                    return Poll::Ready(());
                }
                let same = match wake {
                    Wake::Task(_) | Wake::Own => exec.current().is_some_and(|c| c.owns(cx.waker())),
                    Wake::Foreign(w) => w.will_wake(cx.waker()),
                };
                if !same {
                    // Moved under another waker (a combinator): the timer wakes the new one.
                    Self::disarm(exec, timer, wake);
                    let (timer, wake) = this.arm(exec, due, cx.waker());
                    this.state = SleepState::Waiting { timer, due, wake };
                }
                Poll::Pending
            }
            SleepState::Done => Poll::Ready(()),
        })
    }
}

impl<C: 'static> Drop for Sleep<C> {
    fn drop(&mut self) {
        if let SleepState::Waiting { timer, wake, .. } = &self.state {
            // Outside its scheduler's activation (a future dropped far from it) the timer is
            // left to fire into nothing: its task is gone by then.
            lend::with_active(self.exec, |exec: &Exec<C>| Self::disarm(exec, *timer, wake));
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

/// The future of [`TaskCx::next_frame`](crate::latent::TaskCx::next_frame).
pub struct NextFrame<C: 'static> {
    exec: u64,
    target: Option<u64>,
    _context: PhantomData<fn() -> C>,
}

impl<C: 'static> NextFrame<C> {
    pub(super) fn new(exec: u64) -> Self {
        NextFrame {
            exec,
            target: None,
            _context: PhantomData,
        }
    }
}

impl<C: 'static> Future for NextFrame<C> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        exec(this.exec, |exec: &Exec<C>| {
            let now = exec.clock(Domain::Frames);
            let target = *this.target.get_or_insert(now + 1);
            if now >= target {
                return Poll::Ready(());
            }
            exec.wake_next_frame(cx.waker());
            Poll::Pending
        })
    }
}

impl<C: 'static> fmt::Debug for NextFrame<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NextFrame")
            .field("target", &self.target)
            .finish()
    }
}

/// The future of [`TaskCx::until`](crate::latent::TaskCx::until).
pub struct Until<C: 'static, F> {
    exec: u64,
    cond: F,
    _context: PhantomData<fn() -> C>,
}

impl<C: 'static, F> Until<C, F> {
    pub(super) fn new(exec: u64, cond: F) -> Self {
        Until {
            exec,
            cond,
            _context: PhantomData,
        }
    }
}

// The condition is only ever called through `&mut`, never pinned.
impl<C: 'static, F> Unpin for Until<C, F> {}

impl<C: 'static, F: FnMut(&C) -> bool> Future for Until<C, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let cond = &mut this.cond;
        exec(this.exec, |exec: &Exec<C>| {
            let done = exec.ctx.with(|c| cond(c)).unwrap_or_else(|| {
                panic!(
                    "TaskCx::until: the condition needs the game state, which is reachable \
                     only while the scheduler polls a task (not from inside `with`)"
                )
            });
            if done {
                return Poll::Ready(());
            }
            exec.wake_next_frame(cx.waker());
            Poll::Pending
        })
    }
}

impl<C: 'static, F> fmt::Debug for Until<C, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Until")
    }
}
