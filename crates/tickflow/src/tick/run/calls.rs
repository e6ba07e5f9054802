//! The per-call path: lists of functions run in order, serial callbacks called in place on
//! the game thread, parallel ones taken out into batches for the worker pool. The fast walk
//! of plain serial functions is `fast.rs`; every other call comes here (`run_one`).

use std::mem;
use std::panic::{self, AssertUnwindSafe};

use super::fast::must_settle;
use super::{Env, TickFunctions};
use crate::tick::body::{Body, ParJob};
use crate::tick::cx::{Deferred, TickCall, TickCx};
use crate::tick::graph::{ENABLED, PARALLEL, SLOW, WHEN_PAUSED};
use crate::tick::handle::TickHandle;
use crate::tick::interval::IntervalClock;
use crate::tick::plan::{LaneRun, Placed};
use crate::tick::settings::TickGroup;
use crate::time::Span;

impl<C: 'static> TickFunctions<C> {
    /// Runs lists of functions in order, each list followed by one more function (a due
    /// interval function merged in); returns how many ran. `upcoming` gives the position of
    /// a due function still to come, whose check record and callback are fetched ahead: they
    /// sit at unrelated places, and each was a stall of its own when its call came. (Its
    /// cooldown record is not: the frame's check read it when the frame began, and fetching
    /// it again measured 1.5-2.5 % slower on S2's game shape.) A panic in a serial callback
    /// applies what it queued, then goes on (the frame's `recover` puts the rest in order).
    pub(super) fn exec<'l, I>(
        &mut self,
        mut lists: I,
        upcoming: impl Fn(&I) -> Option<u32>,
        group: TickGroup,
        env: &mut Env<'_, C>,
    ) -> usize
    where
        I: Iterator<Item = (LaneRun<'l>, Option<Placed>)>,
    {
        let mut ran = 0;
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            while let Some((run, then)) = lists.next() {
                if let Some(p) = upcoming(&lists) {
                    self.prefetch_at(p);
                }
                if !run.laid.is_empty() {
                    self.run_laid(run.laid, group, env, &mut ran);
                }
                if !run.placed.is_empty() {
                    self.run_list(run.placed, group, env, &mut ran);
                }
                // A due function removed since the drain fails `run_one`'s tag check.
                if let Some(e) = then {
                    self.run_one(e, group, env, &mut ran);
                }
            }
            self.flush_batch(env);
        }));
        if let Err(p) = result {
            let _ = panic::catch_unwind(AssertUnwindSafe(|| self.after_call(env)));
            panic::resume_unwind(p);
        }
        ran
    }

    /// Starts fetching the check record and callback of the function at position `p`.
    #[inline]
    fn prefetch_at(&self, p: u32) {
        if let Some(hot) = self.graph.hot_at(p) {
            crate::prefetch::prefetch(hot);
        }
        if let Some(body) = self.bodies.serial_record(p as usize) {
            crate::prefetch::prefetch(body);
        }
    }

    /// One function on the full path: every check, interval and dilation bookkeeping, a
    /// parallel function queued into the batch.
    pub(super) fn run_one(
        &mut self,
        (h, p): Placed,
        group: TickGroup,
        env: &mut Env<'_, C>,
        ran: &mut usize,
    ) {
        let (frame, paused) = (self.frame, self.paused);
        let i = p as usize;
        let Some(hot) = self.graph.hot_at_mut(p) else {
            return;
        };
        let flags = hot.flags;
        if hot.gen != h.tag().get()
            || flags & ENABLED == 0
            || hot.last_run == frame
            || (paused && flags & WHEN_PAUSED == 0)
        {
            return;
        }
        let clock = if flags & WHEN_PAUSED != 0 {
            IntervalClock::Unpaused
        } else {
            IntervalClock::Game
        };
        let dt = if flags & SLOW == 0 {
            hot.last_run = frame;
            Span::from_flicks(clock.delta(env.clocks))
        } else {
            match (self.graph).start_run(h, p, clock, env.clocks, frame) {
                Some(dt) => dt,
                None => return,
            }
        };
        *ran += 1;
        if flags & PARALLEL != 0 {
            self.queue_parallel(h, dt, group, env);
            return;
        }
        self.flush_batch(env);
        let Some(f) = self.bodies.serial_at(i) else {
            return;
        };
        let call = TickCall {
            dt,
            group,
            handle: h,
        };
        let mut cx = TickCx::new(env.clocks, &mut *env.timers, call);
        f.call(env.ctx, &mut cx);
        if must_settle(env.wake) {
            self.after_call(env);
        }
    }

    /// Returns a parallel callback to its slot if its function is still registered (else it
    /// is dropped here).
    pub(super) fn put_back(&mut self, h: TickHandle, body: Body<C>) {
        if let (Some(p), Body::Parallel(f)) = (self.graph.pos_of(h), body) {
            self.bodies.put_back_parallel(p, f);
        }
    }

    /// Between two calls: takes in what the call changed, and applies queued commands.
    #[inline(never)]
    pub(super) fn after_call(&mut self, env: &mut Env<'_, C>) {
        self.settle();
        (env.after_call)(self, env.timers);
        self.settle();
    }

    fn queue_parallel(&mut self, h: TickHandle, dt: Span, group: TickGroup, env: &mut Env<'_, C>) {
        // A prerequisite inside the current batch must finish first: start a new batch.
        let node = self.graph.get(h).expect("live");
        let seq = node.seq;
        if !self.jobs.is_empty()
            && node
                .prereqs
                .iter()
                .any(|p| self.batch.contains(&p.index()) && self.graph.get(*p).is_some())
        {
            self.flush_batch(env);
        }
        let Some(body) = (self.graph.pos_of(h)).and_then(|p| self.bodies.take_parallel(p)) else {
            return;
        };
        self.batch.insert(h.index());
        self.jobs.push(ParJob {
            handle: h,
            seq,
            body,
            out: Deferred::new(dt, *env.clocks, group, h),
            panic: None,
        });
    }

    /// Runs the queued parallel batch, if any. Called before every serial function: the
    /// check stays inline, the batch itself is a call of its own.
    #[inline]
    fn flush_batch(&mut self, env: &mut Env<'_, C>) {
        if !self.jobs.is_empty() {
            self.run_queued_batch(env);
        }
    }

    #[inline(never)]
    fn run_queued_batch(&mut self, env: &mut Env<'_, C>) {
        let mut jobs = mem::take(&mut self.jobs);
        let ctx: &C = env.ctx;
        // Every job catches its own panic, so the batch runs to the end either way, on the
        // pool or one by one: the same functions run and the same outputs are applied.
        match self.runner {
            Some(run) if self.threads && jobs.len() > 1 => run(ctx, &mut jobs),
            _ => jobs.iter_mut().for_each(|j| j.run(ctx)),
        }
        self.batch.clear();
        let mut first_panic = None;
        for job in jobs.drain(..) {
            self.put_back(job.handle, Body::Parallel(job.body));
            if let Some(p) = job.panic {
                first_panic.get_or_insert(p);
            }
            if !job.out.is_empty() {
                self.deferred.push((job.seq, job.out));
            }
        }
        self.jobs = jobs;
        if let Some(p) = first_panic {
            // The frame stops here, but what the functions that ran asked for (and what the
            // panicking one asked for before it panicked, as a serial function's changes
            // would stand) is applied first: their state already moved on.
            let group = self.current;
            let _ = panic::catch_unwind(AssertUnwindSafe(|| self.apply_deferred(group, env)));
            panic::resume_unwind(p);
        }
    }

    /// Ends a group: runs the last batch and applies the deferred changes.
    pub(super) fn finish_group(&mut self, group: TickGroup, env: &mut Env<'_, C>) {
        self.flush_batch(env);
        self.apply_deferred(group, env);
    }

    /// Applies the group's deferred changes in registration order. A change that panics
    /// stops none of the others; the first panic goes on after all were applied.
    fn apply_deferred(&mut self, group: TickGroup, env: &mut Env<'_, C>) {
        if self.deferred.is_empty() {
            return;
        }
        let mut deferred = mem::take(&mut self.deferred);
        deferred.sort_by_key(|(seq, _)| *seq);
        let mut first_panic = None;
        for (_, out) in deferred {
            for f in out.later {
                let call = TickCall {
                    dt: out.dt,
                    group,
                    handle: out.handle,
                };
                let mut cx = TickCx::new(env.clocks, &mut *env.timers, call);
                let result = panic::catch_unwind(AssertUnwindSafe(|| f(env.ctx, &mut cx)));
                let settled = panic::catch_unwind(AssertUnwindSafe(|| self.after_call(env)));
                if let Err(p) = result.and(settled) {
                    first_panic.get_or_insert(p);
                }
            }
        }
        if let Some(p) = first_panic {
            panic::resume_unwind(p);
        }
    }
}
