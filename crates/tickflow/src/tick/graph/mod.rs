//! The tick graph: every registered function's settings, prerequisites and interval state.
//!
//! Ground rules:
//! - `nodes[i]` is `Some` exactly while the allocator holds `(i, node.gen)` live; handles are
//!   checked against it, so stale handles answer `false`/`UnknownTick`.
//! - The graph is always acyclic: `add_prereq` refuses the edge that would close a cycle.
//! - `dirty` is set by every change that can move a function between groups or in or out of
//!   the per-frame plan; the plan is rebuilt from scratch only then. Two changes games make
//!   all the time are patched in instead (see `plan.rs`): a new serial function that nothing
//!   waits for (listed in `added`), and the removal of a serial function that nothing ever
//!   waited for (counted in `removed`; the plan skips its stale handle).
//! - While a frame runs (`in_frame`), functions that become runnable (added or enabled) are
//!   pushed to `spawned` so the frame can run them in a later group.

mod frame;
mod layout;
pub(super) mod moved;
pub(super) mod save;

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::body::Body;
use super::interval::{Cooldown, IntervalClock, Intervals};
use crate::handle::SharedAlloc;
use crate::owner::{OwnerId, OwnerIndex, Owners};
use crate::tick::handle::TickHandle;
use crate::tick::settings::{TickError, TickSettings};

/// One registered tick function (its callback lives beside the graph, in `TickFunctions`).
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) gen: NonZeroU32,
    pub(crate) settings: TickSettings,
    /// Registration order, for deterministic ties.
    pub(crate) seq: u64,
    pub(crate) parallel: bool,
    /// Functions this one runs after. May hold removed handles; they are ignored.
    pub(crate) prereqs: Vec<TickHandle>,
    /// Has been named as another function's prerequisite (never cleared: removing it may
    /// move others, so its removal rebuilds the plan).
    depended_on: bool,
}

impl Node {
    pub(crate) fn clock(&self) -> IntervalClock {
        self.settings.clock()
    }

    /// Its removal, and its arrival while it has no prerequisites and normal priority, leave
    /// every other function's place unchanged, so the plan is patched instead of rebuilt.
    pub(crate) fn patchable(&self) -> bool {
        !self.parallel && !self.depended_on
    }

    pub(crate) fn has_interval(&self) -> bool {
        self.settings.interval.flicks() > 0
    }

    fn flags(&self) -> u8 {
        let s = &self.settings;
        (if s.enabled { ENABLED } else { 0 })
            | (if s.tick_when_paused { WHEN_PAUSED } else { 0 })
            | (if self.parallel { PARALLEL } else { 0 })
            | (if self.has_interval() || s.time_dilation != 1.0 {
                SLOW
            } else {
                0
            })
    }
}

pub(crate) const ENABLED: u8 = 1;
pub(crate) const WHEN_PAUSED: u8 = 2;
pub(crate) const PARALLEL: u8 = 4;
/// Has an interval or a time dilation: the frame reads the full node.
pub(crate) const SLOW: u8 = 8;

/// What a frame reads for every function that runs, packed in 16 bytes per position so that
/// four share a cache line (a `Node` is about 100 bytes).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Hot {
    /// The live generation; 0 for a free slot.
    pub(crate) gen: u32,
    pub(crate) flags: u8,
    /// Frame number of the last run (frames start at 1, so 0 is "never").
    pub(crate) last_run: u64,
}

impl Hot {
    const FREE: Hot = Hot {
        gen: 0,
        flags: 0,
        last_run: 0,
    };
}

/// A callback arriving or leaving, at a position (see `Cooldown::pos`). Callbacks live beside
/// the graph (in `TickFunctions`, so that one runs in place while its `TickCx` borrows the
/// graph); the graph queues these for the runner, which applies them in order between two
/// calls.
pub(crate) enum BodyEvent<C> {
    Insert(u32, Body<C>),
    Remove(u32),
}

/// Settings, prerequisites, interval state and callbacks of all tick functions.
pub(crate) struct TickGraph<C> {
    nodes: Vec<Option<Node>>,
    /// Check records by position: the functions that run every frame in plan order, then the
    /// others; new functions are appended, and `reorder` puts them in order again when the
    /// plan is rebuilt. The callbacks sit at the same positions in `TickFunctions`; a slot's
    /// position is in its cooldown record.
    hot: Vec<Hot>,
    /// The slot (handle index) of the function at each position, beside `hot`: a frame walking
    /// a laid-out lane by position makes each function's handle from these two. A freed
    /// position keeps its old slot (its check record says it is free).
    slot_at: Vec<u32>,
    /// Cooldowns by slot (see `Cooldown`).
    cool: Vec<Cooldown>,
    alloc: SharedAlloc,
    next_seq: u64,
    owners: OwnerIndex<TickHandle>,
    dirty: bool,
    /// Enabled serial functions registered since the plan was made (patched in if eligible).
    added: Vec<TickHandle>,
    /// Planned functions removed since the plan was made without making it dirty.
    removed: usize,
    intervals: Intervals,
    in_frame: bool,
    spawned: Vec<TickHandle>,
    /// Callbacks for the runner to take in or drop.
    events: Vec<BodyEvent<C>>,
    /// Raised when `events` or `spawned` gain an entry, so the runner looks after the call.
    /// The scheduler shares this flag with its command queue (see `TickFunctions::new`), so
    /// one test after each call covers both.
    wake: Arc<AtomicBool>,
    live: usize,
}

impl<C> std::fmt::Debug for TickGraph<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickGraph")
            .field("len", &self.live)
            .finish_non_exhaustive()
    }
}

impl<C> TickGraph<C> {
    /// Its owners, for tracking new ones.
    pub(crate) fn owners_mut(&mut self) -> &mut dyn Owners {
        &mut self.owners
    }

    /// Its owners, to read.
    pub(crate) fn owners_ref(&self) -> &dyn Owners {
        &self.owners
    }

    #[cfg(test)]
    pub(crate) fn new(alloc: SharedAlloc) -> TickGraph<C> {
        Self::with_wake(alloc, Arc::default())
    }

    /// A graph that raises `wake` when a change waits for the runner.
    pub(crate) fn with_wake(alloc: SharedAlloc, wake: Arc<AtomicBool>) -> TickGraph<C> {
        TickGraph {
            nodes: Vec::new(),
            hot: Vec::new(),
            slot_at: Vec::new(),
            cool: Vec::new(),
            alloc,
            next_seq: 0,
            owners: OwnerIndex::default(),
            dirty: true,
            added: Vec::new(),
            removed: 0,
            intervals: Intervals::default(),
            in_frame: false,
            spawned: Vec::new(),
            events: Vec::new(),
            wake,
            live: 0,
        }
    }

    fn mark_changed(&self) {
        self.wake.store(true, Ordering::Release);
    }

    /// The node of a live handle.
    pub(crate) fn get(&self, h: TickHandle) -> Option<&Node> {
        self.nodes
            .get(h.index() as usize)?
            .as_ref()
            .filter(|n| n.gen == h.tag())
    }

    fn get_mut(&mut self, h: TickHandle) -> Option<&mut Node> {
        node_mut(&mut self.nodes, h)
    }

    /// The node at a slot index, whatever its generation.
    pub(crate) fn at(&self, index: u32) -> Option<&Node> {
        self.nodes.get(index as usize)?.as_ref()
    }

    pub(crate) fn at_mut(&mut self, index: u32) -> Option<&mut Node> {
        self.nodes.get_mut(index as usize)?.as_mut()
    }

    pub(crate) fn handle_at(&self, index: u32) -> Option<TickHandle> {
        self.at(index).map(|n| TickHandle::new(index, n.gen))
    }

    pub(crate) fn slots(&self) -> usize {
        self.nodes.len()
    }

    /// Live nodes with their handles, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (TickHandle, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.as_ref().map(|n| (TickHandle::new(i as u32, n.gen), n)))
    }

    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// The name shown for a function: its own, or its handle.
    pub(crate) fn name_of(&self, h: TickHandle) -> String {
        match self.get(h) {
            Some(n) if !n.settings.name.is_empty() => n.settings.name.clone(),
            _ => format!("tick {h:?}"),
        }
    }

    /// Registers a function under a fresh handle.
    pub(crate) fn insert(
        &mut self,
        settings: TickSettings,
        body: Body<C>,
    ) -> Result<TickHandle, TickError> {
        settings.validate()?;
        let (index, gen) = crate::handle::lock_alloc(&self.alloc).alloc();
        let h = TickHandle::new(index, gen);
        self.insert_reserved(h, settings, body);
        Ok(h)
    }

    /// Registers a function under a handle already taken from the allocator (by `Commands`).
    /// Settings must have been validated.
    pub(crate) fn insert_reserved(&mut self, h: TickHandle, settings: TickSettings, body: Body<C>) {
        let i = h.index() as usize;
        if self.nodes.len() <= i {
            self.nodes.resize_with(i + 1, || None);
            self.cool.resize_with(i + 1, Cooldown::default);
        }
        let parallel = matches!(body, Body::Parallel(_));
        if let Some(owner) = settings.owner {
            self.owners.add(owner, h);
        }
        let enabled = settings.enabled;
        self.nodes[i] = Some(Node {
            gen: h.tag(),
            settings,
            seq: self.next_seq,
            parallel,
            prereqs: Vec::new(),
            depended_on: false,
        });
        let node = self.nodes[i].as_ref().expect("just set");
        self.cool[i] = Cooldown {
            interval: node.settings.interval.flicks(),
            dilation: node.settings.time_dilation,
            gen: h.tag().get(),
            stamp: self.cool[i].stamp.wrapping_add(1),
            ..Cooldown::default()
        };
        let p = u32::try_from(self.hot.len()).expect("fewer than 2^32 positions");
        self.hot.push(Hot {
            gen: h.tag().get(),
            flags: self.nodes[i].as_ref().expect("just set").flags(),
            last_run: 0,
        });
        self.slot_at.push(h.index());
        self.cool[i].pos = p;
        self.events.push(BodyEvent::Insert(p, body));
        self.mark_changed();
        self.next_seq += 1;
        self.live += 1;
        if enabled {
            if parallel {
                self.dirty = true;
            } else {
                self.added.push(h);
            }
            self.became_enabled(h);
        }
    }

    /// Unregisters a function; `false` for a stale handle.
    pub(crate) fn remove(&mut self, h: TickHandle) -> bool {
        let Some(node) = self.get(h) else {
            return false;
        };
        let (enabled, owner) = (node.settings.enabled, node.settings.owner);
        if enabled {
            if node.patchable() {
                self.removed += 1;
            } else {
                self.dirty = true;
            }
        }
        if let Some(owner) = owner {
            self.owners.forget(owner, h);
        }
        let i = h.index() as usize;
        let p = self.cool[i].pos;
        self.nodes[i] = None;
        self.hot[p as usize] = Hot::FREE;
        // The stamp moves on: a queue entry names the slot, not the function.
        self.cool[i] = Cooldown {
            stamp: self.cool[i].stamp.wrapping_add(1),
            ..Cooldown::default()
        };
        self.live -= 1;
        crate::handle::lock_alloc(&self.alloc).free(h.index(), h.tag());
        // The runner drops the callback (once it is not running) when it takes this in.
        self.events.push(BodyEvent::Remove(p));
        self.mark_changed();
        true
    }

    /// Removes every function of `owner`; returns how many.
    pub(crate) fn remove_owner(&mut self, owner: OwnerId) -> usize {
        let list = self.owners.take(owner);
        crate::unwind::each_then_raise(list, |h| self.remove(h))
    }

    /// `true` when the handle is live (whether or not anything changed).
    pub(crate) fn set_enabled(&mut self, h: TickHandle, on: bool) -> bool {
        let Some(node) = node_mut(&mut self.nodes, h) else {
            return false;
        };
        if node.settings.enabled == on {
            return true;
        }
        node.settings.enabled = on;
        let flags = node.flags();
        let p = self.cool[h.index() as usize].pos as usize;
        self.hot[p].flags = flags;
        if !on {
            // Disabling resets the interval bookkeeping: re-enabled, it ticks at once.
            let cool = &mut self.cool[h.index() as usize];
            cool.last_tick = None;
            cool.stamp = cool.stamp.wrapping_add(1);
        }
        self.dirty = true;
        if on {
            self.became_enabled(h);
        }
        true
    }

    /// Schedules the first tick of a function that just became runnable.
    fn became_enabled(&mut self, h: TickHandle) {
        let node = self.get(h).expect("live handle");
        let (clock, has_interval) = (node.clock(), node.has_interval());
        let cool = &mut self.cool[h.index() as usize];
        cool.last_tick = None;
        if has_interval {
            cool.restart(self.intervals.now(clock));
            self.intervals.push(clock, h, cool);
        }
        if self.in_frame {
            self.spawned.push(h);
            self.mark_changed();
        }
    }

    /// Changes the interval and restarts the cooldown from now (a function that has not ticked
    /// since it was enabled still ticks at once). `false` for a stale handle.
    pub(crate) fn set_interval(&mut self, h: TickHandle, interval: crate::time::Span) -> bool {
        let Some(node) = node_mut(&mut self.nodes, h) else {
            return false;
        };
        let had = node.has_interval();
        node.settings.interval = interval;
        let has = node.has_interval();
        let i = h.index() as usize;
        let p = self.cool[i].pos as usize;
        self.hot[p].flags = node.flags();
        let cool = &mut self.cool[i];
        cool.interval = interval.flicks();
        cool.stamp = cool.stamp.wrapping_add(1);
        if has && node.settings.enabled {
            let now = self.intervals.now(node.clock());
            if !had && self.hot[p].last_run > 0 {
                // It has been ticking every frame: the new interval counts from now.
                cool.last_tick = Some(now);
            }
            let due = if cool.last_tick.is_some() {
                now.saturating_add(interval.flicks())
            } else {
                now
            };
            cool.restart(due);
            self.intervals.push(node.clock(), h, cool);
        }
        if had != has {
            self.dirty = true;
        }
        true
    }

    /// Makes `tick` run after `before`. Refuses unknown handles and cycles; a duplicate is a
    /// no-op.
    pub(crate) fn add_prereq(
        &mut self,
        tick: TickHandle,
        before: TickHandle,
    ) -> Result<(), TickError> {
        for h in [tick, before] {
            if self.get(h).is_none() {
                return Err(TickError::UnknownTick { handle: h });
            }
        }
        if let Some(path) = self.path(before, tick) {
            // `before` already waits (through `path`) for `tick`.
            let mut names = vec![self.name_of(tick)];
            names.extend(path[..path.len() - 1].iter().map(|&h| self.name_of(h)));
            return Err(TickError::Cycle { path: names });
        }
        if !self
            .get(tick)
            .expect("checked above")
            .prereqs
            .contains(&before)
        {
            self.link(tick, before);
        }
        Ok(())
    }

    /// Makes `tick` run after `before` without the cycle search: for edges the caller knows
    /// cannot close a cycle and are not there yet (an import's checked prerequisites). Costs
    /// O(1), where [`add_prereq`](Self::add_prereq) searches the graph.
    pub(crate) fn link(&mut self, tick: TickHandle, before: TickHandle) {
        self.get_mut(tick)
            .expect("a live function")
            .prereqs
            .push(before);
        self.get_mut(before).expect("a live function").depended_on = true;
        self.dirty = true;
    }

    /// `false` when `before` was not a prerequisite of `tick` (or a handle is stale).
    pub(crate) fn remove_prereq(&mut self, tick: TickHandle, before: TickHandle) -> bool {
        let Some(node) = self.get_mut(tick) else {
            return false;
        };
        let Some(pos) = node.prereqs.iter().position(|&p| p == before) else {
            return false;
        };
        node.prereqs.remove(pos);
        self.dirty = true;
        true
    }

    /// The prerequisite chain from `from` to `to` (`[from, .., to]`), if `from` waits for `to`
    /// directly or indirectly. Follows edges between live functions, enabled or not: a disabled
    /// function can be enabled again, and the graph must stay acyclic then too.
    fn path(&self, from: TickHandle, to: TickHandle) -> Option<Vec<TickHandle>> {
        if from == to {
            return Some(vec![from]);
        }
        let mut parent: FxHashMap<TickHandle, TickHandle> = FxHashMap::default();
        let mut stack = vec![from];
        while let Some(h) = stack.pop() {
            for &p in &self.get(h).expect("only live nodes are pushed").prereqs {
                if self.get(p).is_none() || p == from || parent.contains_key(&p) {
                    continue;
                }
                parent.insert(p, h);
                if p == to {
                    let mut path = vec![to];
                    let mut cur = to;
                    while cur != from {
                        cur = parent[&cur];
                        path.push(cur);
                    }
                    path.reverse();
                    return Some(path);
                }
                stack.push(p);
            }
        }
        None
    }
}

fn node_mut(nodes: &mut [Option<Node>], h: TickHandle) -> Option<&mut Node> {
    nodes
        .get_mut(h.index() as usize)?
        .as_mut()
        .filter(|n| n.gen == h.tag())
}

#[cfg(test)]
mod tests;
