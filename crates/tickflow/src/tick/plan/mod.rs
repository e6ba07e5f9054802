//! Order resolution: actual groups (demotion) and the run order inside each group.
//!
//! Rebuilt from scratch only when the graph changed (`TickGraph::dirty`), then reused frame
//! after frame; Unreal instead re-walks every prerequisite of every function each frame.
//!
//! Spawning and despawning do not rebuild it. A new serial, normal-priority function with no
//! prerequisites that nothing waits for is where a rebuild would put it: last in its group
//! (it is always ready and has the largest key, and Kahn's algorithm below takes it only when
//! nothing else is ready, which in a DAG means nothing else is left), so `append` adds it
//! there. Removing a serial function that no function ever waited for leaves the others'
//! order unchanged (popping it readies nothing), so its stale handle just stays in the lists
//! (skipped: its position's check record is freed, and an entry's generation no longer
//! matches), until stale entries pass a quarter of the plan and a rebuild compacts them.
//! Ranks are `group << 28 | position`, so an appended function gets the next rank of its
//! group.
//!
//! Algorithm: one depth-first pass (explicit stack, so a chain of 100,000 prerequisites does
//! not overflow) gives each enabled function its actual group, the latest of its own and its
//! enabled prerequisites' actual groups, moved past `StartPhysics`/`EndPhysics`. Then, per
//! group, Kahn's algorithm over the edges inside the group, choosing among ready functions
//! high-priority first, then by registration order. When the best ready function is parallel,
//! every ready parallel function is taken at once, so functions that can share the worker pool
//! sit next to each other. Cost O((n + e) log n).

use std::fmt::Write as _;
use std::num::NonZeroU32;

use super::graph::{Node, TickGraph};
use super::interval::{Cooldown, NO_POS};
use crate::tick::handle::TickHandle;
use crate::tick::settings::TickGroup;

mod dot;
mod resolve;

/// Where one function landed.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) gen: NonZeroU32,
    pub(crate) actual: TickGroup,
    /// The prerequisite that moved it out of its own group.
    pub(crate) demoted_by: Option<TickHandle>,
    /// Position in the frame's order; functions spawned during a frame get `u32::MAX`.
    pub(crate) rank: u32,
    /// How many of its group's lane run before it: where a due interval function cuts in.
    pub(crate) cut: u32,
}

/// A function to run and the position of its check record and callback (where it is placed).
pub(crate) type Placed = (TickHandle, u32);

/// A due interval function: where it cuts into its group's lane, and where it is placed
/// (taken from its cooldown record when the frame starts; positions do not move during a
/// frame).
#[derive(Copy, Clone, Debug)]
pub(crate) struct DueInterval {
    pub(crate) cut: u32,
    pub(crate) at: Placed,
}

/// The resolved order.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    info: Vec<Option<Resolved>>,
    /// Per group, the enabled functions without an interval, in run order.
    always: [Lane; TickGroup::COUNT],
    /// Every enabled function, in run order (as resolved; `append` does not extend it).
    order: Vec<u32>,
    /// Next position in each group.
    next: [u32; TickGroup::COUNT],
    /// Functions planned, including appended ones.
    planned: usize,
    /// `append` has added functions since `resolve`.
    patched: bool,
}

/// The functions of one group that run every frame (no interval), in run order, with their
/// positions. After the plan is rebuilt they are consecutive (`lay_out`), and the frame walks
/// that part by position alone, in memory order: it reads each function's check record and
/// callback, not a list entry as well (a fifth less time per function at 1e3 functions).
/// Functions appended since (`append`) follow with their positions.
#[derive(Debug, Default)]
pub(crate) struct Lane {
    entries: Vec<Placed>,
    /// How many entries from the start sit at consecutive positions from the first's (set by
    /// `locate`). A function removed since keeps its entry and its position, whose check
    /// record is free.
    laid: u32,
}

impl Lane {
    pub(crate) fn push(&mut self, h: TickHandle, pos: u32) {
        self.entries.push((h, pos));
    }

    /// Functions in the lane (stale handles of patched removals included).
    pub(crate) fn len(&self) -> u32 {
        self.entries.len() as u32
    }

    /// The functions in run order (stale handles of patched removals included).
    pub(crate) fn handles(&self) -> impl Iterator<Item = TickHandle> + '_ {
        self.entries.iter().map(|&(h, _)| h)
    }

    /// Takes every function's position from `pos_of` (after the graph reordered them), and
    /// notes how many sit at consecutive positions from the first.
    pub(crate) fn locate(&mut self, pos_of: impl Fn(TickHandle) -> Option<u32>) {
        for (h, p) in &mut self.entries {
            *p = pos_of(*h).unwrap_or(NO_POS);
        }
        let first = self.entries.first().map_or(0, |e| e.1);
        let laid = (self.entries.iter().zip(0u32..))
            .take_while(|&(&(_, p), i)| p != NO_POS && first.checked_add(i) == Some(p))
            .count();
        self.laid = laid as u32;
    }

    /// The lane cut before each due function (`due`: sorted by rank): `(lane run, due
    /// function)` pairs in run order, then the rest of the lane with `None`. Each function
    /// knows where it cuts in (`Resolved::cut`), so the frame walks the lane in place, with
    /// no merged copy and no search.
    pub(crate) fn runs<'a>(&'a self, due: &'a [DueInterval]) -> Runs<'a> {
        Runs {
            lane: self,
            due: due.iter(),
            at: 0,
            done: false,
        }
    }

    /// Entries `at..end` as a run: the laid-out part by position, then the rest.
    #[inline]
    fn run(&self, at: usize, end: usize) -> LaneRun<'_> {
        let cut = (self.laid as usize).clamp(at, end);
        // `first + laid` fits: the last laid position is below `NO_POS`.
        let laid = match self.entries.first() {
            Some(&(_, first)) if at < cut => first + at as u32..first + cut as u32,
            _ => 0..0,
        };
        LaneRun {
            laid,
            placed: &self.entries[cut..end],
        }
    }
}

/// Part of a lane, to run in order: functions at consecutive positions, then functions with
/// their positions.
#[derive(Clone, Debug)]
pub(crate) struct LaneRun<'a> {
    pub(crate) laid: std::ops::Range<u32>,
    pub(crate) placed: &'a [Placed],
}

impl<'a> LaneRun<'a> {
    /// A list of functions with their positions (spawned ones, a pass of late ones).
    pub(crate) fn placed(list: &'a [Placed]) -> Self {
        LaneRun {
            laid: 0..0,
            placed: list,
        }
    }
}

/// See [`Lane::runs`].
pub(crate) struct Runs<'a> {
    lane: &'a Lane,
    due: std::slice::Iter<'a, DueInterval>,
    at: usize,
    done: bool,
}

impl Runs<'_> {
    /// The position of the due function `k` places after the next one (to fetch its records
    /// ahead).
    pub(crate) fn upcoming(&self, k: usize) -> Option<u32> {
        self.due.as_slice().get(k).map(|d| d.at.1)
    }
}

impl<'a> Iterator for Runs<'a> {
    type Item = (LaneRun<'a>, Option<Placed>);

    /// Inlined into the frame's loop: as a call, it handed each run back through memory, and
    /// S2's game-shaped frame (one run per due function) took 3 % longer.
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let len = self.lane.entries.len();
        if let Some(d) = self.due.next() {
            let end = (d.cut as usize).clamp(self.at, len);
            let run = self.lane.run(self.at, end);
            self.at = end;
            return Some((run, Some(d.at)));
        }
        if std::mem::replace(&mut self.done, true) {
            return None;
        }
        Some((self.lane.run(self.at, len), None))
    }
}

/// Positions inside a group take the low bits of a rank.
const POSITION_BITS: u32 = 28;
/// The position bits of a rank.
pub(crate) const POSITION_MASK: u32 = (1 << POSITION_BITS) - 1;

/// The group (index) of a rank.
pub(crate) fn group_of(rank: u32) -> usize {
    (rank >> POSITION_BITS) as usize
}

impl Plan {
    /// Every group's lane of every-frame functions, in group order.
    pub(crate) fn lanes(&self) -> &[Lane; TickGroup::COUNT] {
        &self.always
    }

    /// Every group's lane, to locate its functions after a layout (`Lane::locate`).
    pub(crate) fn lanes_mut(&mut self) -> &mut [Lane; TickGroup::COUNT] {
        &mut self.always
    }

    /// Lends group `g`'s lane for the group's run (the run changes the runner, which owns
    /// the plan); [`put_lane`](Self::put_lane) gives it back.
    pub(crate) fn take_lane(&mut self, g: TickGroup) -> Lane {
        std::mem::take(&mut self.always[g.index()])
    }

    /// Gives back the lane `take_lane` lent.
    pub(crate) fn put_lane(&mut self, g: TickGroup, lane: Lane) {
        self.always[g.index()] = lane;
    }

    /// Whether functions were appended since the plan was resolved (a plan resolved afresh
    /// may order them differently).
    pub(crate) fn is_patched(&self) -> bool {
        self.patched
    }

    pub(crate) fn get(&self, h: TickHandle) -> Option<&Resolved> {
        self.info
            .get(h.index() as usize)?
            .as_ref()
            .filter(|r| r.gen == h.tag())
    }

    /// Records where a function spawned during the frame runs, so later spawns that depend on
    /// it land no earlier.
    pub(crate) fn set_spawned(&mut self, h: TickHandle, actual: TickGroup) {
        let i = h.index() as usize;
        if self.info.len() <= i {
            self.info.resize(i + 1, None);
        }
        self.info[i] = Some(Resolved {
            gen: h.tag(),
            actual,
            demoted_by: None,
            rank: u32::MAX,
            cut: 0,
        });
    }

    /// Copies every function's place into its cooldown record (`rank`, `cut`), where the
    /// frame's drain reads it.
    pub(crate) fn publish(&self, cool: &mut [Cooldown]) {
        for (i, c) in cool.iter_mut().enumerate() {
            self.place(i, c);
        }
    }

    /// The same for one function (appended by `append`).
    pub(crate) fn publish_one(&self, h: TickHandle, cool: &mut [Cooldown]) {
        let i = h.index() as usize;
        self.place(i, &mut cool[i]);
    }

    fn place(&self, slot: usize, cool: &mut Cooldown) {
        let r = self.info.get(slot).copied().flatten();
        cool.rank = r.map_or(u32::MAX, |r| r.rank);
        cool.cut = r.map_or(0, |r| r.cut);
    }

    /// Functions planned.
    pub(crate) fn len(&self) -> usize {
        self.planned
    }

    /// Puts a new function last in its group, where `resolve` would put it; the caller checks
    /// that it qualifies (enabled, serial, normal priority, no prerequisites, nothing waits
    /// for it). `false` when its group has no rank left (then rebuild).
    pub(crate) fn append(&mut self, h: TickHandle, node: &Node, pos: u32) -> bool {
        let g = node.settings.group.demote_to(node.settings.group);
        let k = self.next[g.index()];
        if k >= (1 << POSITION_BITS) - 1 {
            return false;
        }
        self.next[g.index()] += 1;
        let i = h.index() as usize;
        if self.info.len() <= i {
            self.info.resize(i + 1, None);
        }
        self.info[i] = Some(Resolved {
            gen: h.tag(),
            actual: g,
            demoted_by: None,
            rank: ((g.index() as u32) << POSITION_BITS) | k,
            cut: self.always[g.index()].len(),
        });
        if !node.has_interval() {
            self.always[g.index()].push(h, pos);
        }
        self.planned += 1;
        self.patched = true;
        true
    }

    /// The human-readable order (see `Scheduler::explain_order`).
    pub(crate) fn explain<C>(&self, graph: &TickGraph<C>) -> String {
        let mut out = String::new();
        let disabled: Vec<String> = graph
            .iter()
            .filter(|(_, n)| !n.settings.enabled)
            .map(|(h, _)| graph.name_of(h))
            .collect();
        let _ = writeln!(
            out,
            "tick order of the next frame: {} enabled, {} disabled",
            self.order.len(),
            disabled.len()
        );
        let mut group = None;
        for (pos, &i) in self.order.iter().enumerate() {
            let node = graph.at(i).expect("live");
            let h = TickHandle::new(i, node.gen);
            let r = self.get(h).expect("resolved");
            if group != Some(r.actual) {
                group = Some(r.actual);
                let _ = writeln!(out, "{:?}", r.actual);
            }
            let _ = write!(out, "  {:>3}. {:<24} ", pos + 1, graph.name_of(h));
            let _ = write!(out, "{}", why(graph, self, node, r));
            let _ = writeln!(out, "{}", flags(node));
        }
        if !disabled.is_empty() {
            let _ = writeln!(out, "disabled: {}", disabled.join(", "));
        }
        out
    }
}

fn why<C>(graph: &TickGraph<C>, plan: &Plan, node: &Node, r: &Resolved) -> String {
    match r.demoted_by {
        Some(p) => format!(
            "demoted from {:?}: waits for `{}` in {:?}",
            node.settings.group,
            graph.name_of(p),
            plan.get(p).map_or(r.actual, |x| x.actual)
        ),
        None if node.settings.group == r.actual => "own group".to_string(),
        None => format!("own group {:?}", node.settings.group),
    }
}

fn flags(node: &Node) -> String {
    let s = &node.settings;
    let mut out = String::new();
    let mut add = |text: String| {
        out.push_str(if out.is_empty() { "  [" } else { ", " });
        out.push_str(&text);
    };
    if s.high_priority {
        add("high priority".into());
    }
    if node.parallel {
        add("parallel".into());
    }
    if node.has_interval() {
        add(format!("every {} s", s.interval.as_secs_f64()));
    }
    if s.tick_when_paused {
        add("ticks when paused".into());
    }
    if let Some(end) = s.end_group {
        add(format!("ends by {end:?}"));
    }
    if s.time_dilation != 1.0 {
        add(format!("dilation {}", s.time_dilation));
    }
    if !out.is_empty() {
        out.push(']');
    }
    out
}

#[cfg(test)]
mod tests;
