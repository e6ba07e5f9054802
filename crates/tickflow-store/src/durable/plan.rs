//! Which owners of each lost node are this node's to adopt: worked out from that node's
//! registry rows as they are needed, a page at a time, and taken a few at a time, so that a
//! lost node of 50,000 owners is read once per change of the fleet and no frame reads more
//! than [`PLAN_PAGES`] pages of it. The rule that decides is `takeover.rs`'s, passed in.

use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};
use tickflow::OwnerId;

use crate::backend::OwnerRead;
use crate::error::StoreError;
use crate::store::Store;

/// Registry rows a page of a plan reads.
const PLAN_PAGE: usize = 2048;
/// Pages of lost nodes' registries one adopt reads at most.
pub(super) const PLAN_PAGES: usize = 2;

/// Whether the owner is this node's to adopt from the lost node, given the live nodes.
pub(super) type Mine<'a> = &'a dyn Fn(OwnerId, &str, &[&str]) -> bool;

/// The plans of the lost nodes this node adopts from.
#[derive(Default)]
pub(super) struct Plans {
    by_node: FxHashMap<String, Plan>,
    /// Lost nodes not adopted from until then: their rows were being written.
    resting: FxHashMap<String, Instant>,
}

/// One lost node's plan.
pub(super) struct Plan {
    /// What it holds for: the lost node's commit number and the live nodes.
    committed: u64,
    live: Vec<String>,
    /// Owners found for this node and not adopted yet, with their epochs there.
    owners: Vec<(OwnerId, u64)>,
    /// The owner after which the registry is read next; `None` once it was read to the end.
    next: Option<i64>,
    /// The owners the lost node has a parcel in flight for (their receivers take them).
    sent: FxHashSet<i64>,
}

impl Plans {
    /// Drops the plans of these nodes: they are worked out again (owners a commit could not
    /// take are then found again, if their node still has them), from `until` when given.
    pub(super) fn forget(&mut self, nodes: Vec<String>, until: Option<Instant>) {
        for n in nodes {
            self.by_node.remove(&n);
            if let Some(t) = until {
                self.resting.insert(n, t);
            }
        }
    }

    /// Keeps the plans of the nodes `lost` still says are lost.
    pub(super) fn retain(&mut self, lost: impl Fn(&str) -> bool) {
        self.by_node.retain(|n, _| lost(n));
    }

    /// Whether `node` is not to be adopted from now.
    pub(super) fn resting(&mut self, node: &str) -> bool {
        match self.resting.get(node) {
            Some(&t) if t > Instant::now() => true,
            Some(_) => {
                self.resting.remove(node);
                false
            }
            None => false,
        }
    }

    /// The plan for lost node `name` at its commit `committed` with `live` nodes: the one
    /// kept, or a new one (which reads the parcels the node has in flight) when either changed.
    pub(super) fn plan_for<S: Store>(
        &mut self,
        tx: &mut S::Tx<'_>,
        name: &str,
        committed: u64,
        live: &[&str],
    ) -> Result<&mut Plan, StoreError> {
        let fresh =
            (self.by_node.get(name)).is_some_and(|p| p.committed == committed && p.live == live);
        if !fresh {
            let sent = (S::parcels_of_in(tx, name, false, usize::MAX)?.iter())
                .map(|p| p.owner)
                .collect();
            let plan = Plan {
                committed,
                live: live.iter().map(|n| n.to_string()).collect(),
                owners: Vec::new(),
                next: Some(i64::MIN),
                sent,
            };
            self.by_node.insert(name.to_string(), plan);
        }
        Ok(self.by_node.get_mut(name).expect("planned above"))
    }
}

impl Plan {
    /// The next owner to adopt and its epoch at the lost node `name`, reading pages of its
    /// registry rows (`pages`, counted down, at most) until `want` are found; `None` when none
    /// is left or the pages ran out.
    pub(super) fn next<S: Store>(
        &mut self,
        tx: &mut S::Tx<'_>,
        name: &str,
        mine: Mine<'_>,
        (want, pages): (usize, &mut usize),
    ) -> Result<Option<(OwnerId, u64)>, StoreError> {
        if self.owners.is_empty() {
            let live: Vec<&str> = self.live.iter().map(String::as_str).collect();
            while *pages > 0 {
                let Some(after) = self.next.filter(|_| self.owners.len() < want) else {
                    break;
                };
                *pages -= 1;
                let page = S::owners_page_in(tx, name, after, PLAN_PAGE)?;
                self.next = (page.len() == PLAN_PAGE)
                    .then(|| page.last().map(|o| o.owner))
                    .flatten();
                for o in page {
                    let in_flight = self.sent.contains(&o.owner);
                    let (owner, holder) = OwnerRead::holder(o)?;
                    if !in_flight && mine(owner, name, &live) {
                        self.owners.push((owner, holder.epoch));
                    }
                }
            }
        }
        Ok(self.owners.pop())
    }
}
