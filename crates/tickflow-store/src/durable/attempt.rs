//! A commit whose outcome is unknown: the connection failed while its `COMMIT` or the answer
//! was on the way. The next commit reads the node's commit number first: if it is the lost
//! commit's, that commit landed and counts as done (its changes are not written again, its
//! parcels not sent twice, and the frames it covered are not covered again); if it is the one
//! before, nothing of it landed and it is tried again with what came since.

use tickflow::{OwnerId, Scheduler};

use rustc_hash::FxHashMap;

use super::tally::Landing;
use super::{Durable, Queue};
use crate::error::StoreError;
use crate::handover::Settled;
use crate::store::Store;

/// What a commit's transaction did, applied when it is known to have landed.
#[derive(Debug)]
pub(super) struct Done {
    pub(super) landing: Landing,
    /// Owners registered to this node, and those taken from parcels, at their epochs.
    pub(super) held: FxHashMap<OwnerId, u64>,
    pub(super) settled: Vec<(OwnerId, Settled)>,
    /// The commit's wall-clock stamp and the real clock's reading it stands for.
    pub(super) stamp: (u64, u64),
}

/// A commit that may have landed: what it wrote, to count it done or put it back.
#[derive(Debug)]
pub(super) struct Attempt {
    number: u64,
    frame: u64,
    queue: Queue,
    done: Done,
}

impl Attempt {
    /// Commit `number`, of the frames up to `frame`, which wrote `queue` and did `done` if it
    /// landed.
    pub(super) fn new(number: u64, frame: u64, queue: Queue, done: Done) -> Attempt {
        Attempt {
            number,
            frame,
            queue,
            done,
        }
    }

    /// What it wrote.
    pub(super) fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Drops what it wrote for `owner` (it is another node's).
    pub(super) fn forget(&mut self, owner: OwnerId) {
        self.queue.forget(owner);
    }
}

impl<S: Store> Durable<S> {
    /// Finds out whether the commit whose outcome is unknown landed, and counts it done or
    /// puts what it wrote back in front of the queue.
    pub(super) fn resolve<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
    ) -> Result<(), StoreError> {
        let Some(attempt) = self.attempt.take() else {
            return Ok(());
        };
        let node = self.node.clone();
        // Locked, in a writing transaction: a lost commit may still be on its way through the
        // server, holding the node's row until it ends; a plain read would not see it yet and
        // take it for one that did not land.
        let read = crate::store::in_tx(&mut self.store, true, |tx| S::node_in(tx, &node, true));
        // The commit number says whether it landed even when a takeover fenced the node since
        // (holder 0: a takeover does not commit for the node), and then the node is lost
        // after all; not when another process took the node, whose commits count too.
        let fenced = matches!(&read, Ok(Some(r)) if r.lease.holder == 0);
        let found = match read {
            Ok(Some(r)) if r.lease.holder != self.token && !fenced => {
                Err(StoreError::NodeLost { node })
            }
            Ok(Some(r)) if r.row.committed == attempt.number => Ok(true),
            Ok(Some(r)) if r.row.committed + 1 == attempt.number => Ok(false),
            Ok(Some(r)) => Err(StoreError::Missing {
                what: format!(
                    "node {node:?} is at commit {} where this process left it at {}",
                    r.row.committed,
                    attempt.number - 1
                ),
            }),
            Ok(None) => Err(StoreError::Missing {
                what: format!("node {node:?}: its row in tickflow_nodes is gone"),
            }),
            Err(e) => Err(e),
        };
        let landed = match found {
            Ok(landed) => landed,
            Err(e) => {
                self.attempt = Some(attempt);
                return Err(e);
            }
        };
        let newer = std::mem::take(&mut self.queue);
        self.queue = attempt.queue;
        if landed {
            self.land(sched, attempt.number, attempt.frame, attempt.done);
        }
        self.queue.append(newer);
        if fenced {
            return Err(StoreError::NodeLost {
                node: self.node.clone(),
            });
        }
        Ok(())
    }
}
