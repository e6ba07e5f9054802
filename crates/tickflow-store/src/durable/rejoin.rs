//! A fenced node rejoins: its process was paused or cut off past its lease, live nodes adopted
//! some of its owners and fenced it (`takeover.rs`), and its next commit was refused.
//!
//! Ground rules:
//!
//! - Only a node that takes part in takeovers rejoins; and only when its row was fenced
//!   (lease holder 0). A node another process took whole (a restart elsewhere) stays lost:
//!   [`StoreError::NodeLost`].
//! - Rejoining takes the node's lease again and reads which owners the registry still gives
//!   it, in one transaction under the node's row. Owners it no longer holds leave the
//!   scheduler, their queued changes and sends are dropped, and [`Handover::TakenOver`] names
//!   their adopter; the frames since the last commit stay queued for the owners it kept, and
//!   the next commit writes them.
//! - The node's rows' checksums are read again (adopters deleted rows of it), and checked
//!   against its row, as a resume checks them.

use tickflow::{OwnerId, Scheduler};

use super::tally::Rows;
use super::{lease, Durable, Handover};
use crate::backend::{Lease, NodeRead};
use crate::error::StoreError;
use crate::handover::holders_in;
use crate::store::{in_tx, Store};

impl<S: Store> Durable<S> {
    /// What a refused commit says: [`StoreError::Rejoined`] when this node was fenced by a
    /// takeover and rejoined, else `e` (or why the rejoin failed).
    pub(super) fn fenced<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        e: StoreError,
    ) -> StoreError {
        if !matches!(e, StoreError::NodeLost { .. }) || self.takeover.is_none() {
            return e;
        }
        match self.rejoin(sched) {
            Ok(taken) => StoreError::Rejoined {
                node: self.node.clone(),
                taken,
            },
            Err(e) => e,
        }
    }

    fn rejoin<C: 'static>(&mut self, sched: &mut Scheduler<C>) -> Result<usize, StoreError> {
        let (node, token, committed) = (self.node.clone(), self.token, self.committed);
        let lease_us = self.lease.as_micros().min(i64::MAX as u128) as i64;
        let held: Vec<(OwnerId, u64)> = self.epochs.iter().map(|(&o, &e)| (o, e)).collect();
        let (read, taken) = in_tx(&mut self.store, true, |tx| {
            let now = S::now_us_in(tx)?;
            let Some(read) = S::node_in(tx, &node, true)? else {
                return Err(StoreError::Missing {
                    what: format!("node {node:?}: its row in tickflow_nodes is gone"),
                });
            };
            if read.lease.holder != 0 && read.lease.holder != token {
                return Err(StoreError::NodeLost { node: node.clone() });
            }
            let read = read.checked(&node)?;
            if read.row.committed != committed {
                return Err(StoreError::Missing {
                    what: format!(
                        "node {node:?} is at commit {} where this process left it at \
                         {committed}: its row was changed by something other than a takeover",
                        read.row.committed
                    ),
                });
            }
            let mine = Lease {
                holder: token,
                until_us: now
                    .saturating_add(lease_us)
                    .saturating_add(lease::grace_us(read.row.rows)),
                host: lease::host(),
                pid: std::process::id(),
            };
            let ours = NodeRead {
                lease: mine,
                ..read.clone()
            };
            S::put_node_in(tx, &node, &ours)?;
            let ids: Vec<i64> = held.iter().map(|(o, _)| o.get() as i64).collect();
            let holders = holders_in::<S>(tx, &ids, false)?;
            let taken: Vec<(OwnerId, String)> = (held.iter())
                .filter_map(|&(o, e)| match holders.get(&o) {
                    Some(h) if h.node == node && h.epoch == e => None,
                    h => Some((o, h.map_or(String::new(), |h| h.node.clone()))),
                })
                .collect();
            Ok((read, taken))
        })?;
        self.renewed = std::time::Instant::now();
        let rows = in_tx(&mut self.store, false, |tx| {
            let mut rows = Rows::default();
            S::rows_in(tx, &self.node, &mut |r| {
                rows.push(Rows::key(OwnerId::new(r.owner as u64), &r.name), r.sum);
                Ok(true)
            })?;
            rows.seal();
            Ok(rows)
        })?;
        rows.check(&self.node, &read.row)?;
        self.rows = rows;
        for (owner, by) in &taken {
            if !sched.is_frozen(*owner) {
                sched.freeze_owner(*owner);
            }
            sched.commit_owner(*owner);
            self.forget_owner(*owner);
            self.in_flight.remove(owner);
            self.events.push(Handover::TakenOver {
                owner: *owner,
                by: by.clone(),
            });
        }
        Ok(taken.len())
    }
}
