//! [`Plan::resolve`] in its two passes: the actual group of every enabled function
//! (prerequisites first, one depth-first walk), then the order inside each group (Kahn's
//! algorithm over the edges inside the group).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Plan, Resolved, POSITION_BITS};
use crate::tick::graph::TickGraph;
use crate::tick::handle::TickHandle;
use crate::tick::interval::NO_POS;
use crate::tick::settings::TickGroup;

/// Every enabled function's actual group: the latest of its own and its enabled
/// prerequisites' actual groups, moved past `StartPhysics`/`EndPhysics`. An explicit stack,
/// so a chain of 100,000 prerequisites does not overflow.
pub(super) fn actual_groups<C>(graph: &TickGraph<C>) -> Vec<Option<Resolved>> {
    let enabled = |h: TickHandle| graph.get(h).filter(|p| p.settings.enabled);
    let mut info: Vec<Option<Resolved>> = vec![None; graph.slots()];
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for (h, node) in graph.iter() {
        if !node.settings.enabled || info[h.index() as usize].is_some() {
            continue;
        }
        stack.push((h.index(), 0));
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            let node = graph.at(i).expect("live");
            if let Some(&p) = node.prereqs[*next..].first() {
                *next += 1;
                if enabled(p).is_some() && info[p.index() as usize].is_none() {
                    stack.push((p.index(), 0));
                }
                continue;
            }
            let mut latest = (node.settings.group, None);
            for &p in &node.prereqs {
                if enabled(p).is_none() {
                    continue;
                }
                let g = info[p.index() as usize].expect("resolved first").actual;
                if g > latest.0 {
                    latest = (g, Some(p));
                }
            }
            info[i as usize] = Some(Resolved {
                gen: node.gen,
                actual: node.settings.group.demote_to(latest.0),
                demoted_by: latest.1,
                rank: 0,
                cut: 0,
            });
            stack.pop();
        }
    }
    info
}

/// The prerequisite edges inside each group, as prerequisite -> dependents lists (CSR),
/// with each function's count of prerequisites not yet placed.
pub(super) struct GroupEdges {
    indeg: Vec<u32>,
    edges: Vec<(u32, u32)>,
    start: Vec<usize>,
}

impl GroupEdges {
    pub(super) fn new<C>(graph: &TickGraph<C>, info: &[Option<Resolved>]) -> GroupEdges {
        let n = graph.slots();
        let enabled = |h: TickHandle| graph.get(h).filter(|p| p.settings.enabled);
        let mut indeg = vec![0u32; n];
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for (h, node) in graph.iter() {
            let Some(r) = info[h.index() as usize] else {
                continue;
            };
            for &p in &node.prereqs {
                if enabled(p).is_some() && info[p.index() as usize].unwrap().actual == r.actual {
                    edges.push((p.index(), h.index()));
                    indeg[h.index() as usize] += 1;
                }
            }
        }
        edges.sort_unstable();
        let mut start = vec![0usize; n + 1];
        for &(p, _) in &edges {
            start[p as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        GroupEdges {
            indeg,
            edges,
            start,
        }
    }
}

impl Plan {
    /// Resolves the order of every enabled function.
    pub(crate) fn resolve<C>(graph: &TickGraph<C>) -> Plan {
        let info = actual_groups(graph);
        let mut edges = GroupEdges::new(graph, &info);
        let mut by_group: [Vec<u32>; TickGroup::COUNT] = Default::default();
        for (h, _) in graph.iter() {
            if let Some(r) = info[h.index() as usize] {
                by_group[r.actual.index()].push(h.index());
            }
        }
        let mut plan = Plan {
            info,
            ..Plan::default()
        };
        for (g, members) in by_group.iter().enumerate() {
            plan.order_group(graph, g, members, &mut edges);
        }
        debug_assert_eq!(
            plan.order.len(),
            plan.info.iter().flatten().count(),
            "acyclic"
        );
        plan.planned = plan.order.len();
        plan
    }

    /// Orders the members of group `g`: among ready functions, high-priority first, then by
    /// registration; when the best ready one is parallel, every ready parallel function is
    /// taken at once, so functions that can share the worker pool sit next to each other.
    pub(super) fn order_group<C>(
        &mut self,
        graph: &TickGraph<C>,
        g: usize,
        members: &[u32],
        edges: &mut GroupEdges,
    ) {
        let key = |i: u32| {
            let node = graph.at(i).expect("live");
            Reverse((!node.settings.high_priority, node.seq, i))
        };
        let mut serial = BinaryHeap::new();
        let mut parallel = BinaryHeap::new();
        let ready = |i: u32, serial: &mut BinaryHeap<_>, parallel: &mut BinaryHeap<_>| {
            if graph.at(i).expect("live").parallel {
                parallel.push(key(i));
            } else {
                serial.push(key(i));
            }
        };
        for &i in members {
            if edges.indeg[i as usize] == 0 {
                ready(i, &mut serial, &mut parallel);
            }
        }
        let mut batch = Vec::new();
        loop {
            let take_parallel = match (serial.peek(), parallel.peek()) {
                (None, None) => break,
                (Some(_), None) => false,
                (None, Some(_)) => true,
                (Some(s), Some(p)) => p > s,
            };
            batch.clear();
            if take_parallel {
                batch.extend(std::iter::from_fn(|| parallel.pop()).map(|Reverse(k)| k.2));
            } else {
                batch.push(serial.pop().expect("peeked").0 .2);
            }
            for &i in &batch {
                let r = self.info[i as usize].as_mut().expect("resolved");
                r.rank = ((g as u32) << POSITION_BITS) | self.next[g];
                r.cut = self.always[g].len();
                self.next[g] += 1;
                self.order.push(i);
                let node = graph.at(i).expect("live");
                if !node.has_interval() {
                    self.always[g].push(TickHandle::new(i, node.gen), NO_POS);
                }
            }
            for &i in &batch {
                for k in edges.start[i as usize]..edges.start[i as usize + 1] {
                    let d = edges.edges[k].1;
                    edges.indeg[d as usize] -= 1;
                    if edges.indeg[d as usize] == 0 {
                        ready(d, &mut serial, &mut parallel);
                    }
                }
            }
        }
    }
}
