//! The per-call path: one list of functions run in order, serial calls on the game thread,
//! parallel ones queued into batches, each callback taken out of its slot while it runs.

use std::mem;
use std::panic::{self, AssertUnwindSafe};

use super::{Env, TickFunctions};
use crate::tick::body::{Body, ParJob};
use crate::tick::graph::{ENABLED, PARALLEL, SLOW, WHEN_PAUSED};
use crate::tick::interval::next_due;
use crate::tick::{Deferred, TickCx, TickGroup, TickHandle};
use crate::time::Span;

impl<C: 'static> TickFunctions<C> {
    pub(super) fn exec(
        &mut self,
        list: impl Iterator<Item = TickHandle>,
        group: TickGroup,
        env: &mut Env<'_, C>,
    ) -> usize {
        let mut ran = 0;
        let (frame, paused, deltas) = (self.frame, self.paused, self.deltas);
        for h in list {
            let Some(hot) = self.graph.hot.get_mut(h.index() as usize) else {
                continue;
            };
            let flags = hot.flags;
            if hot.gen != h.tag().get()
                || flags & ENABLED == 0
                || hot.last_run == frame
                || (paused && flags & WHEN_PAUSED == 0)
            {
                continue;
            }
            let clock = usize::from(flags & WHEN_PAUSED != 0);
            let dt = if flags & SLOW == 0 {
                hot.last_run = frame;
                Span::from_flicks(deltas[clock])
            } else {
                match self.slow_start(h, clock) {
                    Some(dt) => dt,
                    None => continue,
                }
            };
            ran += 1;
            if flags & PARALLEL != 0 {
                self.queue_parallel(h, dt, group, env);
            } else {
                self.flush_batch(env);
                self.call_serial(h, dt, group, env);
            }
        }
        self.flush_batch(env);
        ran
    }

    /// Interval and dilation bookkeeping for a function about to run; `None` when it is not
    /// due after all (it gained an interval during this frame).
    fn slow_start(&mut self, h: TickHandle, clock: usize) -> Option<Span> {
        let now = self.graph.clocks[clock];
        let delta = self.deltas[clock];
        let node = self.graph.at_mut(h.index()).expect("live");
        let interval = node.settings.interval.flicks();
        let first = node.last_tick.is_none();
        if interval > 0 && !first && node.due > now {
            return None;
        }
        let raw = match node.last_tick {
            // Never below `last_tick` while running; a restore checks `last_tick` against the
            // saved graph clock only, and an edited snapshot can move both past this clock.
            Some(t) if interval > 0 => now.saturating_sub(t),
            _ => delta,
        };
        node.last_tick = Some(now);
        let d = node.settings.time_dilation;
        if interval > 0 {
            node.due = next_due(node.due, now, interval, first);
            node.stamp = node.stamp.wrapping_add(1);
            let (c, due, stamp) = (node.clock(), node.due, node.stamp);
            self.graph.intervals.push(c, due, h, stamp);
        }
        self.graph.hot[h.index() as usize].last_run = self.frame;
        Some(Span::from_flicks(if d == 1.0 {
            raw
        } else {
            (raw as f64 * d).round() as u64
        }))
    }

    /// Returns a callback to its slot if its function is still registered.
    pub(super) fn put_back(&mut self, h: TickHandle, body: Body<C>) {
        if let Some(hot) = self.graph.hot.get_mut(h.index() as usize) {
            if hot.gen == h.tag().get() && hot.body.is_none() {
                hot.body = Some(body);
            }
        }
    }

    fn call_serial(&mut self, h: TickHandle, dt: Span, group: TickGroup, env: &mut Env<'_, C>) {
        let i = h.index() as usize;
        let Some(Body::Serial(mut f)) = self.graph.hot[i].body.take() else {
            return;
        };
        let mut cx = TickCx {
            dt,
            clocks: &self.clocks,
            group,
            handle: h,
            timers: &mut *env.timers,
            graph: &mut self.graph,
        };
        let result = panic::catch_unwind(AssertUnwindSafe(|| f(env.ctx, &mut cx)));
        self.put_back(h, Body::Serial(f));
        self.after_call(env);
        if let Err(p) = result {
            panic::resume_unwind(p);
        }
    }

    fn after_call(&mut self, env: &mut Env<'_, C>) {
        self.settle();
        (env.after_call)(self, env.timers);
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
        let Some(Body::Parallel(body)) = self.graph.hot[h.index() as usize].body.take() else {
            return;
        };
        self.batch.insert(h.index());
        self.jobs.push(ParJob {
            handle: h,
            seq,
            body,
            out: Deferred::new(dt, self.clocks, group, h),
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
                let mut cx = TickCx {
                    dt: out.dt,
                    clocks: &self.clocks,
                    group,
                    handle: out.handle,
                    timers: &mut *env.timers,
                    graph: &mut self.graph,
                };
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
