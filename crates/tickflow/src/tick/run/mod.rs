//! Running the tick functions of a frame: the plan merged with due interval functions and
//! newly spawned ones, at most once each, serial calls on the game thread and parallel
//! batches on rayon's pool.
//!
//! Ground rules:
//! - Callbacks live here, beside the graph, at the positions of their check records (see
//!   `Cooldown::pos`): a serial callback runs in place while its `TickCx` borrows the graph,
//!   so a running callback can change the graph freely. Callbacks that arrive or leave
//!   meanwhile wait in the graph's `events`, taken in (in order) right after the call, so a
//!   function that removed itself is dropped once it returned.
//! - Positions follow the plan: when it is rebuilt, the functions that run every frame are
//!   laid out in run order, so that a frame reads check records and callbacks in memory order
//!   (`lay_out`), by position alone (`Lane`); positions never change during a frame, and a
//!   freed one is never reused before the next layout.
//! - The per-call path is lean on purpose (it is most of a frame with many functions): one
//!   16-byte check record and the function's slot, the call, and one test of one flag after
//!   it (`wake`: raised by a change to the graph and by the scheduler's command queue alike);
//!   `catch_unwind` is paid once per list, not per call.
//! - Parallel callbacks are taken out for their batch and put back only if their function is
//!   still registered under the same generation, so none is ever reachable twice.
//! - Every list entry is a full handle with its position, and a laid-out position makes its
//!   function's handle from the check record's tag and the slot beside it: a slot reused
//!   during the frame gets a new position and another tag, so it is never run in the old
//!   function's place.
//! - A panic in a callback puts everything back (`recover`) before it travels on.

mod bodies;
mod calls;
mod due;
mod fast;
mod keys;
mod moved;
mod spawned;

use std::mem;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::body::{run_batch, Body, ParJob, ParallelFn, Runner, SerialFn};
use super::graph::{BodyEvent, TickGraph};
use super::plan::{LaneRun, Placed, Plan};
use crate::tick::cx::Deferred;
use crate::tick::handle::TickHandle;
use crate::tick::settings::{TickError, TickGroup, TickSettings, MAX_SPAWN_PASSES};
use crate::time::Clocks;
use crate::timer::Timers;
use bodies::Bodies;

/// A group's run fetches the records of the due interval function this many places after
/// the next one (`exec`): 2 and 4 measured alike on S2's game shape, about 5 % off its frame.
const DUE_AHEAD: usize = 2;

/// What the executor needs from the scheduler while it runs a list.
pub(crate) struct Env<'a, C> {
    pub(crate) ctx: &'a mut C,
    /// The frame's clocks (the scheduler's one value).
    pub(crate) clocks: &'a Clocks,
    pub(crate) timers: &'a mut Timers<C>,
    /// Set while something waits for `after_call` (queued `Commands`): tested after every
    /// call, so that the hook itself is called only when it has work.
    pub(crate) wake: &'a AtomicBool,
    /// Applies queued `Commands` between callbacks.
    pub(crate) after_call: &'a mut dyn FnMut(&mut TickFunctions<C>, &mut Timers<C>),
}

// Where `TickFunctions`' verbs live: the user's (registering, removing, settings) in
// `../service.rs`, the frame's run here, its fast walk in `fast.rs`, the full path of one
// function in `calls.rs`, spawned functions in `spawned.rs`, moving an owner's functions in
// `moved.rs`. The run's files are this module's children because they share the callbacks
// (their table, `bodies.rs`, keeps its own fields) and the frame's run state, which no other
// file sees.
/// The tick functions of a scheduler: the graph, the callbacks and the frame's run state.
pub struct TickFunctions<C> {
    graph: TickGraph<C>,
    /// Callbacks by position, beside the graph's check records.
    bodies: Bodies<C>,
    plan: Plan,
    runner: Option<Runner<C>>,
    /// `false` runs parallel batches one by one on the game thread (same results).
    threads: bool,
    frame: u64,
    paused: bool,
    /// The group running, or the last one run: functions spawned now go to a later group.
    current: TickGroup,
    /// The frame's due interval functions, by group.
    due: due::DueLists,
    /// Scratch lists reused every frame, so a frame allocates nothing once warmed up.
    spawned_in: [Vec<Placed>; TickGroup::COUNT],
    extra: Vec<Placed>,
    jobs: Vec<ParJob<C>>,
    batch: FxHashSet<u32>,
    deferred: Vec<(u64, Deferred<C>)>,
}

impl<C> TickFunctions<C> {
    /// The graph, to read (its verbs keep its rules).
    pub(crate) fn graph(&self) -> &TickGraph<C> {
        &self.graph
    }

    /// The graph, to change through its verbs (each keeps the graph's rules; the callbacks
    /// they queue are taken in at the next `settle` or frame).
    pub(crate) fn graph_mut(&mut self) -> &mut TickGraph<C> {
        &mut self.graph
    }

    /// Whether parallel functions run on rayon's pool (see `set_parallel`).
    pub(crate) fn threads(&self) -> bool {
        self.threads
    }

    /// Sets whether parallel functions run on rayon's pool.
    pub(crate) fn set_threads(&mut self, on: bool) {
        self.threads = on;
    }
}

impl<C: 'static> TickFunctions<C> {
    /// `wake` is the flag tested after every call: the graph raises it when a call changed
    /// it, and the scheduler shares it with its command queue, so one test covers both.
    pub(crate) fn new(alloc: crate::handle::SharedAlloc, wake: Arc<AtomicBool>) -> Self {
        TickFunctions {
            graph: TickGraph::with_wake(alloc, wake),
            bodies: Bodies::default(),
            plan: Plan::default(),
            runner: None,
            threads: true,
            frame: 0,
            paused: false,
            current: TickGroup::PrePhysics,
            due: due::DueLists::default(),
            spawned_in: Default::default(),
            extra: Vec::new(),
            jobs: Vec::new(),
            batch: FxHashSet::default(),
            deferred: Vec::new(),
        }
    }

    /// Registers a serial function.
    pub(crate) fn add_boxed(
        &mut self,
        s: TickSettings,
        f: SerialFn<C>,
    ) -> Result<TickHandle, TickError> {
        let h = self.graph.insert(s, Body::Serial(f));
        self.take_bodies();
        h
    }

    /// Registers a parallel function (the caller proves `C: Sync`).
    pub(crate) fn add_parallel_boxed(
        &mut self,
        s: TickSettings,
        f: ParallelFn<C>,
    ) -> Result<TickHandle, TickError>
    where
        C: Sync,
    {
        self.runner = Some(run_batch::<C>);
        let h = self.graph.insert(s, Body::Parallel(f));
        self.take_bodies();
        h
    }

    /// Installs the parallel runner a restored parallel body brought.
    pub(crate) fn set_runner(&mut self, runner: Option<Runner<C>>) {
        if runner.is_some() {
            self.runner = runner;
        }
    }

    /// Unregisters a function and drops its callback (unless it is running: then it is
    /// dropped when the call returns). `false` for a stale handle.
    pub fn remove(&mut self, h: TickHandle) -> bool {
        let removed = self.graph.remove(h);
        self.take_bodies();
        removed
    }

    /// Unregisters every function of an owner.
    pub(crate) fn remove_owner(&mut self, owner: crate::owner::OwnerId) -> usize {
        let n = self.graph.remove_owner(owner);
        self.take_bodies();
        n
    }

    /// Takes in the callbacks registered meanwhile, drops the removed ones, and places
    /// functions spawned meanwhile in this frame.
    pub(crate) fn settle(&mut self) {
        self.take_bodies();
        if self.graph.has_spawned() {
            self.route_spawned();
        }
    }

    /// Applies the graph's body events in order. Dropping a removed callback runs user code:
    /// that happens last, every drop is attempted, and the first panic goes on after them.
    fn take_bodies(&mut self) {
        if !self.graph.has_events() {
            return;
        }
        let mut gone = Vec::new();
        for event in self.graph.take_events() {
            let (p, body) = match event {
                BodyEvent::Insert(p, body) => (p, Some(body)),
                BodyEvent::Remove(p) => (p, None),
            };
            gone.extend(self.bodies.replace(p, body));
        }
        crate::unwind::each_then_raise(gone, |body| {
            drop(body);
            true
        });
    }

    /// The resolved order (resolving it now if the graph changed).
    pub(crate) fn plan(&mut self) -> &Plan {
        // Positions change below: every callback must be in place first.
        self.take_bodies();
        let graph = &mut self.graph;
        let mut rebuild = graph.needs_rebuild(self.plan.len());
        let added = graph.take_added();
        if !rebuild {
            for &h in &added {
                let Some(node) = graph.get(h) else {
                    continue; // removed again before the plan saw it
                };
                let appendable = node.patchable()
                    && node.settings.enabled
                    && !node.settings.high_priority
                    && node.prereqs.is_empty();
                if !appendable || !self.plan.append(h, node, graph.pos_of(h).expect("live")) {
                    rebuild = true;
                    break;
                }
                graph.publish_one(|cool| self.plan.publish_one(h, cool));
            }
        }
        graph.keep_added(added);
        if rebuild {
            self.plan = Plan::resolve(graph);
            graph.publish(|cool| self.plan.publish(cool));
            self.lay_out();
        }
        &self.plan
    }

    /// Puts the check records and callbacks of the functions that run every frame in plan
    /// order, so that a frame walks them in memory order (no callback is out: this runs at a
    /// frame's start, after the callbacks that arrived or left were taken in).
    fn lay_out(&mut self) {
        let order: Vec<u32> = (self.plan.lanes().iter())
            .flat_map(|lane| lane.handles())
            .map(|h| h.index())
            .collect();
        let from = self.graph.reorder(order.into_iter());
        self.bodies.reorder(&from);
        let graph = &self.graph;
        for lane in self.plan.lanes_mut() {
            lane.locate(|h| graph.pos_of(h));
        }
    }

    /// The cached plan as it is (for tests of the patching).
    #[cfg(test)]
    pub(crate) fn with_cached_plan<R>(&self, f: impl FnOnce(&Plan, &TickGraph<C>) -> R) -> R {
        f(&self.plan, &self.graph)
    }

    /// The order as it stands, without caching (for `&self` callers).
    pub(crate) fn with_plan<R>(&self, f: impl FnOnce(&Plan, &TickGraph<C>) -> R) -> R {
        if self.graph.plan_is_stale() || self.plan.is_patched() {
            f(&Plan::resolve(&self.graph), &self.graph)
        } else {
            f(&self.plan, &self.graph)
        }
    }

    /// Starts a frame: takes in new callbacks, resolves the order if needed and collects due
    /// interval functions.
    pub(crate) fn begin_frame(&mut self, clocks: &Clocks, paused: bool) {
        self.frame = clocks.frame();
        self.paused = paused;
        self.plan();
        self.due.collect(&mut self.graph, clocks, paused);
        self.graph.open_frame();
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
        if self.plan.lanes()[gi].len() == 0
            && self.due.is_empty(g)
            && self.spawned_in[gi].is_empty()
            && self.jobs.is_empty()
            && self.deferred.is_empty()
        {
            // Nothing to run and nothing to finish: most games leave most groups empty.
            return 0;
        }
        let always = self.plan.take_lane(g);
        let due = self.due.take(g);
        let runs = always.runs(&due);
        let mut ran = self.exec(runs, |r| r.upcoming(DUE_AHEAD), g, env);
        self.plan.put_lane(g, always);
        self.due.give_back(g, due);
        let spawned = mem::take(&mut self.spawned_in[gi]);
        ran += self.exec(
            std::iter::once((LaneRun::placed(&spawned), None)),
            |_| None,
            g,
            env,
        );
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
            if passes == MAX_SPAWN_PASSES {
                let held = list
                    .iter()
                    .filter(|&&(h, _)| self.graph.hot(h).is_some_and(|x| x.last_run != self.frame))
                    .count();
                return (ran, passes, held);
            }
            ran += self.exec(
                std::iter::once((LaneRun::placed(&list), None)),
                |_| None,
                TickGroup::LastDemotable,
                env,
            );
            self.finish_group(TickGroup::LastDemotable, env);
            passes += 1;
        }
        (ran, passes, 0)
    }

    /// Ends the frame.
    pub(crate) fn end_frame(&mut self) {
        self.graph.close_frame();
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
        self.due.clear();
        self.graph.requeue_unrun(self.frame);
        self.end_frame();
    }
}
