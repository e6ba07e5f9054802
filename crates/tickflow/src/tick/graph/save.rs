//! Tick functions in a scheduler snapshot: settings, enabled state, interval phase and
//! prerequisites as plain data; bodies are closures, bound again by the resolver.
//!
//! The plan and the interval calendars are not saved: the plan is rebuilt from the graph
//! (the same order as the patched plan it replaces, which `plan.rs` tests), and each enabled
//! interval function has exactly one live calendar entry, at its node's `due`.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

use super::{Node, TickGraph};
use crate::format::RestoreError;
use crate::handle::gen_of;
use crate::handle::{AllocSnapshot, HandleAlloc};
use crate::tick::body::{run_batch, Body, Runner};
use crate::tick::cx::{Deferred, TickCx};
use crate::tick::handle::TickHandle;
use crate::tick::interval::IntervalClock;
use crate::tick::settings::TickSettings;
use crate::time::Clocks;

/// The saved part of a scheduler's tick functions.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct TickSnapshot {
    alloc: AllocSnapshot,
    next_seq: u64,
    /// The game and unpaused clocks as of the last frame.
    clocks: [u64; 2],
    /// Registered functions in registration order.
    functions: Vec<SavedTick>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct SavedTick {
    index: u32,
    gen: u32,
    seq: u64,
    settings: TickSettings,
    parallel: bool,
    /// `(index, generation)` of each prerequisite (removed ones included: they are ignored).
    prereqs: Vec<(u32, u32)>,
    due: u64,
    last_tick: Option<u64>,
    last_run: u64,
    depended_on: bool,
}

impl Hash for TickSnapshot {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.alloc.hash(h);
        self.next_seq.hash(h);
        self.clocks.hash(h);
        h.write_usize(self.functions.len());
        for f in &self.functions {
            (f.index, f.gen, f.seq, f.parallel, &f.prereqs).hash(h);
            (f.due, f.last_tick, f.last_run, f.depended_on).hash(h);
            let s = &f.settings;
            (
                s.group,
                s.end_group,
                s.interval,
                s.enabled,
                s.tick_when_paused,
            )
                .hash(h);
            (s.high_priority, s.owner, &s.name, s.time_dilation.to_bits()).hash(h);
        }
    }
}

/// What a [`Resolver`](crate::snapshot::Resolver) is told about a tick function to bind.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TickInfo {
    /// Its handle (the same in the restored scheduler).
    pub handle: TickHandle,
    /// Its settings; `settings.name` is the usual key.
    pub settings: TickSettings,
    /// It was registered with `ticks().add_parallel`: the body must be [`TickBody::parallel`].
    pub parallel: bool,
}

/// A tick function's callback, as a resolver returns it.
pub struct TickBody<C> {
    body: Body<C>,
    runner: Option<Runner<C>>,
}

impl<C: 'static> std::fmt::Debug for TickBody<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_parallel() {
            "TickBody::Parallel"
        } else {
            "TickBody::Serial"
        })
    }
}

impl<C: 'static> TickBody<C> {
    /// A serial body, as [`TickFunctions::add`](crate::tick::TickFunctions::add) takes.
    pub fn serial(f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static) -> Self {
        TickBody {
            body: Body::Serial(crate::timer::Callback::new(f)),
            runner: None,
        }
    }

    /// A parallel body with its state, as
    /// [`TickFunctions::add_parallel`](crate::tick::TickFunctions::add_parallel) takes.
    pub fn parallel<S: Send + 'static>(
        mut state: S,
        f: impl Fn(&mut S, &C, &mut Deferred<C>) + Send + Sync + 'static,
    ) -> Self
    where
        C: Sync,
    {
        let body = Box::new(move |ctx: &C, out: &mut Deferred<C>| f(&mut state, ctx, out));
        TickBody {
            body: Body::Parallel(body),
            runner: Some(run_batch::<C>),
        }
    }

    /// `true` for a [`parallel`](Self::parallel) body.
    pub fn is_parallel(&self) -> bool {
        matches!(self.body, Body::Parallel(_))
    }

    /// A body taken out of a scheduler, with the runner a parallel one needs.
    pub(crate) fn from_parts(body: Body<C>, runner: Option<Runner<C>>) -> Self {
        TickBody { body, runner }
    }

    /// The callback and, for a parallel body, its runner.
    pub(crate) fn into_parts(self) -> (Body<C>, Option<Runner<C>>) {
        (self.body, self.runner)
    }
}

impl TickSnapshot {
    /// This snapshot with its game and unpaused clocks at `game` (a resumed scheduler).
    pub(crate) fn at_clock(mut self, game: u64) -> TickSnapshot {
        self.clocks = [game, game];
        self
    }

    /// `true` when the saved game and unpaused times are those of `clocks` (the scheduler's,
    /// rebuilt from the rest of the snapshot).
    pub(crate) fn agrees_with(&self, clocks: &Clocks) -> bool {
        self.clocks == [IntervalClock::Game, IntervalClock::Unpaused].map(|c| c.now(clocks))
    }

    /// What the resolver is asked with, in registration order.
    pub(crate) fn infos(&self) -> impl Iterator<Item = TickInfo> + '_ {
        self.functions.iter().map(|f| TickInfo {
            handle: TickHandle::new(f.index, self.alloc.tag(f.gen)),
            settings: f.settings.clone(),
            parallel: f.parallel,
        })
    }

    /// Checks what a restore relies on: live handles, settings, order, no cycle, nothing
    /// that ran after `frame` (the scheduler's).
    pub(crate) fn check(&self, frame: u64) -> Result<HandleAlloc, RestoreError> {
        let alloc = HandleAlloc::restore(&self.alloc).map_err(RestoreError::corrupt)?;
        if self.next_seq == u64::MAX {
            return Err(RestoreError::corrupt(
                "the tick registration counter is at its end",
            ));
        }
        let mut last = None;
        let mut at = FxHashMap::default();
        let handed_out = alloc.handed_out();
        for (k, f) in self.functions.iter().enumerate() {
            let name = &f.settings.name;
            let live = alloc.is_live(f.index, self.alloc.tag(f.gen));
            if !live {
                return Err(RestoreError::corrupt(format!(
                    "tick function `{name}` has a handle that is not live"
                )));
            }
            if f.seq >= self.next_seq || last.is_some_and(|l| l >= f.seq) {
                return Err(RestoreError::corrupt(format!(
                    "tick function `{name}` is out of registration order"
                )));
            }
            last = Some(f.seq);
            f.settings
                .validate()
                .map_err(|e| RestoreError::corrupt(e.to_string()))?;
            // A function that ran "in a later frame" would count as having run when that
            // frame comes, and skip it (its interval entry spent): it would never run again.
            if f.last_run > frame {
                return Err(RestoreError::corrupt(format!(
                    "tick function `{name}` last ran in frame {}, after the scheduler's {frame}",
                    f.last_run
                )));
            }
            // It last ran at its clock's time then; the clocks only move forward.
            if f.last_tick > Some(self.clocks[f.settings.clock() as usize]) {
                return Err(RestoreError::corrupt(format!(
                    "tick function `{name}` last ran after its clock's time"
                )));
            }
            if at.insert((f.index, f.gen), k).is_some() {
                return Err(RestoreError::corrupt(format!(
                    "tick function `{name}` is saved twice"
                )));
            }
            // A prerequisite names a function this allocator once handed out: a slot it has,
            // a generation the slot has reached. Any other value would come back from the next
            // snapshot as a handle of a live function (a false edge, or a cycle that refuses
            // every later snapshot).
            if listed_twice(&f.prereqs) {
                return Err(RestoreError::corrupt(format!(
                    "tick function `{name}` lists a prerequisite twice"
                )));
            }
            if let Some(&(i, g)) = (f.prereqs.iter()).find(|&&(i, g)| !handed_out(i, g)) {
                return Err(RestoreError::corrupt(format!(
                    "tick function `{name}` waits for a handle ({i}v{g}) this scheduler never made"
                )));
            }
        }
        // Prerequisites must not form a cycle (a restored graph is never checked again).
        let at = &at;
        let edges = self
            .functions
            .iter()
            .enumerate()
            .flat_map(|(k, f)| (f.prereqs.iter()).filter_map(move |p| Some((*at.get(p)?, k))));
        drop(handed_out);
        if !acyclic(self.functions.len(), edges) {
            return Err(RestoreError::corrupt("the tick prerequisites form a cycle"));
        }
        Ok(alloc)
    }
}

/// `true` when a prerequisite list names one function twice (a list a graph never writes:
/// `add_prereq` keeps one edge). O(k log k) for k items.
pub(super) fn listed_twice<T: Ord + Clone>(list: &[T]) -> bool {
    let mut sorted = list.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

/// `true` when the edges `(before, after)` between `n` functions (by place) form no cycle:
/// Kahn's algorithm, which takes every function out exactly when there is none.
pub(super) fn acyclic(n: usize, edges: impl Iterator<Item = (usize, usize)>) -> bool {
    let mut indegree = vec![0usize; n];
    let mut waiting: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (before, after) in edges {
        indegree[after] += 1;
        waiting[before].push(after);
    }
    let mut ready: Vec<usize> = (0..n).filter(|&k| indegree[k] == 0).collect();
    let mut done = 0;
    while let Some(k) = ready.pop() {
        done += 1;
        for &w in &waiting[k] {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(w);
            }
        }
    }
    done == n
}

impl<C: 'static> TickGraph<C> {
    /// Saves every registered function. Taken between frames.
    pub(crate) fn save(&self) -> TickSnapshot {
        let mut functions: Vec<SavedTick> = self
            .iter()
            .map(|(h, n): (TickHandle, &Node)| SavedTick {
                index: h.index(),
                gen: gen_of(h.tag().get()),
                seq: n.seq,
                settings: n.settings.clone(),
                parallel: n.parallel,
                prereqs: n
                    .prereqs
                    .iter()
                    .map(|p| (p.index(), gen_of(p.tag().get())))
                    .collect(),
                due: self.cool[h.index() as usize].due,
                last_tick: self.cool[h.index() as usize].last_tick,
                last_run: self.hot(h).expect("live").last_run,
                depended_on: n.depended_on,
            })
            .collect();
        functions.sort_unstable_by_key(|f| f.seq);
        TickSnapshot {
            alloc: crate::handle::lock_alloc(&self.alloc).save(),
            next_seq: self.next_seq,
            clocks: self.intervals.nows(),
            functions,
        }
    }

    /// Fills an empty graph from a checked snapshot; `bodies` are in the snapshot's order.
    /// Returns the parallel runner any parallel body brought.
    pub(crate) fn restore(
        &mut self,
        snap: &TickSnapshot,
        alloc: HandleAlloc,
        bodies: Vec<TickBody<C>>,
        clocks: &Clocks,
    ) -> Option<Runner<C>> {
        *crate::handle::lock_alloc(&self.alloc) = alloc;
        let mut runner = None;
        for (f, b) in snap.functions.iter().zip(bodies) {
            runner = runner.or(b.runner);
            let h = TickHandle::new(f.index, snap.alloc.tag(f.gen));
            self.insert_reserved(h, f.settings.clone(), b.body);
            let node = self.at_mut(f.index).expect("just inserted");
            node.seq = f.seq;
            node.prereqs = (f.prereqs.iter())
                .map(|&(i, g)| TickHandle::new(i, snap.alloc.tag(g)))
                .collect();
            node.depended_on = f.depended_on;
            let cool = &mut self.cool[f.index as usize];
            cool.due = f.due;
            cool.last_tick = f.last_tick;
            self.hot_mut(h).expect("just inserted").last_run = f.last_run;
        }
        self.next_seq = snap.next_seq;
        self.intervals = Default::default();
        self.intervals.stand_at(clocks);
        let waiting: Vec<_> = self
            .iter()
            .filter(|(_, n)| n.settings.enabled && n.has_interval())
            .map(|(h, n)| (n.clock(), h))
            .collect();
        for (clock, h) in waiting {
            let cool = &self.cool[h.index() as usize];
            self.intervals.push(clock, h, cool);
        }
        self.added.clear();
        self.removed = 0;
        self.dirty = true;
        runner
    }
}
