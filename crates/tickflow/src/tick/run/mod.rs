//! Running the tick functions of a frame: the plan merged with due interval functions and
//! newly spawned ones, at most once each, serial calls on the game thread and parallel
//! batches on rayon's pool.
//!
//! Ground rules:
//! - A callback is taken out of its slot while it runs and put back only if its function is
//!   still registered under the same generation (a function that removed itself, or whose
//!   slot was reused meanwhile, is dropped instead). So no callback is ever reachable twice,
//!   and a running callback can change the graph freely through `TickCx`.
//! - Every list entry is a full handle: a slot reused during the frame is never run in the
//!   old function's place.
//! - A panic in a callback puts everything back (`recover`) before it travels on.

mod calls;
mod spawned;

use std::mem;

use rustc_hash::FxHashSet;

use super::body::{run_batch, Body, ParJob, ParallelFn, Runner, SerialFn};
use super::graph::TickGraph;
use super::interval::Clock;
use super::plan::Plan;
use super::{Deferred, TickError, TickGroup, TickHandle, TickSettings};
use crate::time::Clocks;
use crate::timer::TimerManager;

/// What the executor needs from the scheduler while it runs a list.
pub(crate) struct Env<'a, C> {
    pub(crate) ctx: &'a mut C,
    pub(crate) timers: &'a mut TimerManager<C>,
    /// Applies queued `Commands` between callbacks.
    pub(crate) after_call: &'a mut dyn FnMut(&mut TickFunctions<C>, &mut TimerManager<C>),
}

/// The tick functions of a scheduler: the graph, the callbacks and the frame's run state.
pub(crate) struct TickFunctions<C> {
    pub(crate) graph: TickGraph<C>,
    plan: Plan,
    runner: Option<Runner<C>>,
    /// `false` runs parallel batches one by one on the game thread (same results).
    pub(crate) threads: bool,
    frame: u64,
    /// The clocks of the frame being run (or the last one).
    clocks: Clocks,
    deltas: [u64; 2],
    paused: bool,
    /// The group running, or the last one run: functions spawned now go to a later group.
    current: TickGroup,
    /// Scratch lists reused every frame, so a frame allocates nothing once warmed up.
    merged: Vec<TickHandle>,
    drained: Vec<super::interval::Entry>,
    due: [Vec<(u32, TickHandle)>; TickGroup::COUNT],
    spawned_in: [Vec<TickHandle>; TickGroup::COUNT],
    extra: Vec<TickHandle>,
    jobs: Vec<ParJob<C>>,
    batch: FxHashSet<u32>,
    deferred: Vec<(u64, Deferred<C>)>,
}

impl<C: 'static> TickFunctions<C> {
    pub(crate) fn new(alloc: crate::tick::SharedAlloc) -> Self {
        TickFunctions {
            graph: TickGraph::new(alloc),
            plan: Plan::default(),
            runner: None,
            threads: true,
            frame: 0,
            clocks: Clocks::default(),
            deltas: [0; 2],
            paused: false,
            current: TickGroup::PrePhysics,
            merged: Vec::new(),
            drained: Vec::new(),
            due: Default::default(),
            spawned_in: Default::default(),
            extra: Vec::new(),
            jobs: Vec::new(),
            batch: FxHashSet::default(),
            deferred: Vec::new(),
        }
    }

    /// Registers a serial function.
    pub(crate) fn add(&mut self, s: TickSettings, f: SerialFn<C>) -> Result<TickHandle, TickError> {
        self.graph.insert(s, Body::Serial(f))
    }

    /// Registers a parallel function (the caller proves `C: Sync`).
    pub(crate) fn add_parallel(
        &mut self,
        s: TickSettings,
        f: ParallelFn<C>,
    ) -> Result<TickHandle, TickError>
    where
        C: Sync,
    {
        self.runner = Some(run_batch::<C>);
        self.graph.insert(s, Body::Parallel(f))
    }

    /// Installs the parallel runner a restored parallel body brought.
    pub(crate) fn set_runner(&mut self, runner: Option<Runner<C>>) {
        if runner.is_some() {
            self.runner = runner;
        }
    }

    /// Unregisters a function and drops its callback (unless it is running: then it is
    /// dropped when the call returns).
    pub(crate) fn remove(&mut self, h: TickHandle) -> bool {
        self.graph.remove(h)
    }

    /// Unregisters every function of an owner.
    pub(crate) fn remove_owner(&mut self, owner: crate::timer::OwnerId) -> usize {
        self.graph.remove_owner(owner)
    }

    /// Places functions spawned meanwhile in this frame.
    pub(crate) fn settle(&mut self) {
        if !self.graph.spawned.is_empty() {
            self.route_spawned();
        }
    }

    /// The resolved order (resolving it now if the graph changed).
    pub(crate) fn plan(&mut self) -> &Plan {
        let graph = &mut self.graph;
        if graph.removed > self.plan.len() / 4 + 1024 {
            graph.dirty = true; // compact the stale entries away
        }
        if !graph.dirty {
            for &h in &graph.added {
                let Some(node) = graph.get(h) else {
                    continue; // removed again before the plan saw it
                };
                let appendable = node.patchable()
                    && node.settings.enabled
                    && !node.settings.high_priority
                    && node.prereqs.is_empty();
                if !appendable || !self.plan.append(h, node) {
                    graph.dirty = true;
                    break;
                }
            }
        }
        graph.added.clear();
        if graph.dirty {
            self.plan = Plan::resolve(graph);
            graph.dirty = false;
            graph.removed = 0;
        }
        &self.plan
    }

    /// The cached plan as it is (for tests of the patching).
    #[cfg(test)]
    pub(crate) fn with_cached_plan<R>(&self, f: impl FnOnce(&Plan, &TickGraph<C>) -> R) -> R {
        f(&self.plan, &self.graph)
    }

    /// The order as it stands, without caching (for `&self` callers).
    pub(crate) fn with_plan<R>(&self, f: impl FnOnce(&Plan, &TickGraph<C>) -> R) -> R {
        let g = &self.graph;
        if g.dirty || !g.added.is_empty() || g.removed > 0 || self.plan.patched {
            f(&Plan::resolve(&self.graph), &self.graph)
        } else {
            f(&self.plan, &self.graph)
        }
    }

    /// Starts a frame: resolves the order if needed and collects due interval functions.
    pub(crate) fn begin_frame(
        &mut self,
        frame_clocks: Clocks,
        clocks: [u64; 2],
        deltas: [u64; 2],
        paused: bool,
    ) {
        let frame = frame_clocks.frame();
        self.frame = frame;
        self.clocks = frame_clocks;
        self.deltas = deltas;
        self.paused = paused;
        self.graph.clocks = clocks;
        self.plan();
        if self.graph.intervals.len() > 2 * self.graph.len() + 64 {
            let mut intervals = std::mem::take(&mut self.graph.intervals);
            let graph = &self.graph;
            intervals.retain(|e| graph.get(e.handle).is_some_and(|n| n.stamp == e.stamp));
            self.graph.intervals = intervals;
        }
        for clock in [Clock::Game, Clock::Unpaused] {
            if paused && clock == Clock::Game {
                continue;
            }
            let mut drained = mem::take(&mut self.drained);
            let now = clocks[clock as usize];
            self.graph.intervals.drain_due(clock, now, &mut drained);
            for e in drained.drain(..) {
                let Some(node) = self.graph.get(e.handle) else {
                    continue;
                };
                if node.stamp != e.stamp || !node.settings.enabled || !node.has_interval() {
                    continue;
                }
                if let Some(r) = self.plan.get(e.handle) {
                    self.due[r.actual.index()].push((r.rank, e.handle));
                }
            }
            self.drained = drained;
        }
        for list in &mut self.due {
            list.sort_unstable();
        }
        self.graph.in_frame = true;
        self.current = TickGroup::PrePhysics;
    }

    /// Marks that the frame has moved past group `g` (into the timer, tickable or latent
    /// stages), so functions spawned now land after it.
    pub(crate) fn past(&mut self, g: TickGroup) {
        self.current = g;
    }

    /// Runs one group; returns how many functions ran.
    pub(crate) fn run_group(&mut self, g: TickGroup, env: &mut Env<'_, C>) -> usize {
        self.current = g;
        let gi = g.index();
        let always = mem::take(&mut self.plan.always[gi]);
        let due = mem::take(&mut self.due[gi]);
        let mut ran = if due.is_empty() {
            let r = self.exec(always.iter().copied(), g, env);
            self.plan.always[gi] = always;
            r
        } else {
            // Merge by rank: both lists are in plan order. A removed function's stale handle
            // (left by a patched removal) has no rank: it is dropped here, not ranked last,
            // which would run every due function before the rest of the group.
            let mut merged = mem::take(&mut self.merged);
            let (mut a, mut d) = (always.iter().peekable(), due.iter().peekable());
            loop {
                let take_due = match (a.peek(), d.peek()) {
                    (None, None) => break,
                    (Some(_), None) => false,
                    (None, Some(_)) => true,
                    (Some(&&h), Some(&&(rank, _))) => match self.plan.get(h) {
                        Some(r) => rank < r.rank,
                        None => {
                            a.next();
                            continue;
                        }
                    },
                };
                if take_due {
                    merged.push(d.next().expect("peeked").1);
                } else {
                    merged.push(*a.next().expect("peeked"));
                }
            }
            self.plan.always[gi] = always;
            let r = self.exec(merged.iter().copied(), g, env);
            merged.clear();
            self.merged = merged;
            r
        };
        let spawned = mem::take(&mut self.spawned_in[gi]);
        ran += self.exec(spawned.into_iter(), g, env);
        self.finish_group(g, env);
        ran
    }

    /// Runs functions spawned after the last group, in at most `MAX_SPAWN_PASSES` passes.
    /// Returns (functions run, passes, functions held back for the next frame).
    pub(crate) fn run_extra_passes(&mut self, env: &mut Env<'_, C>) -> (usize, usize, usize) {
        let (mut ran, mut passes) = (0, 0);
        self.current = TickGroup::LastDemotable;
        while !self.extra.is_empty() {
            let list = mem::take(&mut self.extra);
            if passes == super::MAX_SPAWN_PASSES {
                let held = list
                    .iter()
                    .filter(|&&h| self.graph.hot(h).is_some_and(|x| x.last_run != self.frame))
                    .count();
                return (ran, passes, held);
            }
            ran += self.exec(list.into_iter(), TickGroup::LastDemotable, env);
            self.finish_group(TickGroup::LastDemotable, env);
            passes += 1;
        }
        (ran, passes, 0)
    }

    /// Ends the frame.
    pub(crate) fn end_frame(&mut self) {
        self.graph.in_frame = false;
        self.graph.spawned.clear();
        for list in &mut self.spawned_in {
            list.clear();
        }
        self.extra.clear();
    }

    /// Puts everything back after a panic escaped a callback: callbacks in flight return to
    /// their slots, the plan is rebuilt (its lists may have been out for the run), and every
    /// interval function that did not run stays due.
    pub(crate) fn recover(&mut self) {
        for job in mem::take(&mut self.jobs) {
            self.put_back(job.handle, Body::Parallel(job.body));
        }
        self.deferred.clear();
        self.batch.clear();
        for list in &mut self.due {
            list.clear();
        }
        let frame = self.frame;
        let waiting: Vec<_> = self
            .graph
            .iter()
            .filter(|(h, n)| {
                n.settings.enabled
                    && n.has_interval()
                    && self.graph.hot[h.index() as usize].last_run != frame
            })
            .map(|(h, n)| (n.clock(), n.due, h, n.stamp))
            .collect();
        for (clock, due, h, stamp) in waiting {
            // May duplicate a queued entry; the copy goes stale at the function's next tick.
            self.graph.intervals.push(clock, due, h, stamp);
        }
        self.graph.dirty = true;
        self.end_frame();
    }
}
