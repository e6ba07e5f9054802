//! Functions that become runnable during a frame: where they run.

use super::TickFunctions;
use crate::tick::handle::TickHandle;
use crate::tick::settings::TickGroup;

impl<C: 'static> TickFunctions<C> {
    /// Places functions that became runnable during the frame: in the first group after the
    /// current position that they may run in, no earlier than their prerequisites.
    pub(super) fn route_spawned(&mut self) {
        let spawned = self.graph.take_spawned();
        if !self.graph.in_frame() {
            return;
        }
        let floor = self.current.next();
        // Prerequisites among the spawned functions themselves: settle targets first, then
        // order each target list by depth (prerequisites first) and registration.
        let mut placed: Vec<(Option<TickGroup>, u32, u64, TickHandle)> = Vec::new();
        for &h in &spawned {
            let Some(n) = self.graph.get(h) else { continue };
            if !n.settings.enabled || self.graph.hot(h).is_none_or(|x| x.last_run == self.frame) {
                continue;
            }
            placed.push((None, 0, n.seq, h));
        }
        for _round in 0..=placed.len() {
            let mut changed = false;
            for k in 0..placed.len() {
                let h = placed[k].3;
                let node = self.graph.get(h).expect("live");
                let mut target = floor.map(|f| node.settings.group.demote_to(f));
                let mut depth = 0;
                for &p in &node.prereqs {
                    if !self.graph.get(p).is_some_and(|pn| pn.settings.enabled) {
                        continue;
                    }
                    let (pg, pd) = match placed.iter().find(|x| x.3 == p) {
                        Some(x) => (x.0, x.1 + 1),
                        None => (self.plan.get(p).map(|r| r.actual), 0),
                    };
                    depth = depth.max(pd);
                    if let (Some(t), Some(pg)) = (target, pg) {
                        target = Some(node.settings.group.demote_to(t.max(pg)));
                    }
                }
                if (target, depth) != (placed[k].0, placed[k].1) {
                    placed[k].0 = target;
                    placed[k].1 = depth;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        placed.sort_by_key(|&(_, depth, seq, _)| (depth, seq));
        for (target, _, _, h) in placed {
            match target {
                Some(g) => {
                    self.plan.set_spawned(h, g);
                    let p = self.graph.pos_of(h).expect("live");
                    self.spawned_in[g.index()].push((h, p));
                }
                None => {
                    self.plan.set_spawned(h, TickGroup::LastDemotable);
                    let p = self.graph.pos_of(h).expect("live");
                    self.extra.push((h, p));
                }
            }
        }
    }
}
