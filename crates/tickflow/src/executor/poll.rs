//! The task part of the latent stage: woken tasks polled in spawn order, each at most once
//! per frame, with the context and the timer manager lent for the poll.

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Waker};

use super::exec::Exec;
use super::slots::{
    BoxFuture, Current, Ended, CANCELLED, FINISHED, HAS_ANCHOR, IDLE, POLLING, POLLING_CANCELLED,
};
use crate::timer::Timers;

/// Polling passes of one latent stage: tasks woken by other tasks (or spawned) during the
/// stage run in the next pass; past this many passes they wait for the next frame (each task
/// is polled at most once per frame anyway, so this only bounds chains of spawns).
pub const MAX_TASK_PASSES: usize = 100;

impl<C: 'static> Exec<C> {
    /// Runs the task part of the latent stage. `after_poll` runs after every poll (queued
    /// commands). Returns `(polls, tasks ended)`. The executor must be active (the scheduler
    /// activates it for the frame).
    pub(crate) fn run(
        &self,
        ctx: &mut C,
        timers: &mut Timers<C>,
        after_poll: &mut dyn FnMut(&mut C, &mut Timers<C>),
    ) -> (usize, usize) {
        self.clear_dropped(timers);
        self.take_fired(timers);
        let waiting = mem::take(&mut *self.next_frame.borrow_mut());
        for w in waiting {
            w.wake();
        }
        let frame = self.clocks().frame() as u32;
        // Woken again after their poll this frame: they run next frame.
        let mut later: Vec<(u32, u32)> = Vec::new();
        let (mut polls, mut ended) = (0, 0);
        for _ in 0..MAX_TASK_PASSES {
            let order = self.drain(frame, &mut later);
            if order.is_empty() {
                break;
            }
            for (n, &(index, gen)) in order.iter().enumerate() {
                if self.has_remote_cancels() {
                    // Cancelled from another thread since: never polled again.
                    if let Err(payload) = self.reap_cancelled() {
                        self.requeue(&order[n..], &mut later);
                        panic::resume_unwind(payload);
                    }
                }
                let failed = match self.begin_poll(index, gen, frame) {
                    Polled::Skip => continue,
                    Polled::Go(fut, waker, anchors) => {
                        polls += 1;
                        let task = (index, gen);
                        let (failed, done) = self.poll_one(ctx, timers, task, fut, waker, anchors);
                        ended += usize::from(done);
                        failed
                    }
                };
                if let Some(payload) = failed {
                    self.requeue(&order[n + 1..], &mut later);
                    panic::resume_unwind(payload);
                }
                after_poll(ctx, timers);
            }
        }
        self.local.borrow_mut().append(&mut later);
        (polls, ended)
    }

    /// Polls one task and deals with how the poll ended. Returns a panic to raise and whether
    /// the task ended.
    fn poll_one(
        &self,
        ctx: &mut C,
        timers: &mut Timers<C>,
        (index, gen): (u32, u32),
        mut fut: BoxFuture,
        waker: Waker,
        anchors: [Option<u64>; 2],
    ) -> (Option<crate::unwind::Payload>, bool) {
        self.anchors.set(anchors);
        self.current.set(Some(Current {
            waker_data: waker.data() as usize,
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
        let (failed, output, e) = match polled {
            Ok(Poll::Pending) => match self.end_poll(index, fut, waker) {
                Some((fut, e)) => (None, None, Some((fut, e))),
                None => return (None, false),
            },
            Ok(Poll::Ready(output)) => (None, Some(output), Some((fut, self.end(index, FINISHED)))),
            // A future that panicked may panic again while dropped; the first panic is the one
            // to report.
            Err(payload) => (Some(payload), None, Some((fut, self.end(index, CANCELLED)))),
        };
        let (fut, e) = e.expect("the task ended");
        let buried = self.lent(ctx, timers, || self.bury_ended(Some(fut), e, output));
        (failed.or(buried.err()), true)
    }

    /// A panic ends the stage: the rest of its tasks run next frame, in order.
    fn requeue(&self, rest: &[(u32, u32)], later: &mut Vec<(u32, u32)>) {
        let mut local = self.local.borrow_mut();
        local.extend_from_slice(rest);
        local.append(later);
    }

    fn lent<R>(&self, ctx: &mut C, timers: &mut Timers<C>, f: impl FnOnce() -> R) -> R {
        self.ctx.lend(ctx, || self.timers.lend(timers, f))
    }

    /// Takes every wake-up, keeps the live idle tasks not yet polled this frame (the others
    /// go to `later`), in spawn order, once each.
    fn drain(&self, frame: u32, later: &mut Vec<(u32, u32)>) -> Vec<(u32, u32)> {
        let mut batch = mem::take(&mut *self.local.borrow_mut());
        let remote = self.factory.remote_wakes();
        let s = self.slots.borrow();
        for &(i, g) in &remote {
            if let Some(core) = s.slots.get(i as usize).and_then(|t| t.core()) {
                if core.gen == g {
                    core.queued.store(false, Ordering::Release);
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

    fn begin_poll(&self, index: u32, gen: u32, frame: u32) -> Polled {
        let mut s = self.slots.borrow_mut();
        let Some(slot) = s.live_mut(index, gen) else {
            return Polled::Skip;
        };
        if slot.state != IDLE {
            return Polled::Skip;
        }
        let fut = slot.fut.take().expect("an idle task has its future");
        slot.state = POLLING;
        slot.polled = frame;
        let waker = slot.waker.take().expect("an idle task has its waker");
        let anchors = if slot.flags & HAS_ANCHOR != 0 {
            slot.flags &= !HAS_ANCHOR;
            s.first_anchor
                .remove(&index)
                .map_or([None; 2], |[g, r]| [Some(g), Some(r)])
        } else {
            [None; 2]
        };
        Polled::Go(fut, waker, anchors)
    }

    /// Puts a pending future back; hands it out again when it was cancelled during its poll.
    fn end_poll(&self, index: u32, fut: BoxFuture, waker: Waker) -> Option<(BoxFuture, Ended)> {
        let mut s = self.slots.borrow_mut();
        let slot = &mut s.slots[index as usize];
        // Cancelled during its poll: by itself or another task (the slot says so), or from
        // another thread (its status says so; only read when such cancels came).
        let cancelled = slot.state == POLLING_CANCELLED
            || (self.has_remote_cancels() && slot.core().is_some_and(|c| c.status() == CANCELLED));
        if cancelled {
            drop(s);
            return Some((fut, self.end(index, CANCELLED)));
        }
        debug_assert_eq!(slot.state, POLLING);
        slot.state = IDLE;
        slot.fut = Some(fut);
        slot.waker = Some(waker);
        None
    }
}

/// What `begin_poll` found.
enum Polled {
    /// Not live, or not idle: nothing to do.
    Skip,
    /// Ready to poll: its future, waker and first anchors.
    Go(BoxFuture, Waker, [Option<u64>; 2]),
}
