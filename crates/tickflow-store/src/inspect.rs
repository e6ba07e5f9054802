//! [`Inspect`]: reading what a node left, without taking the node — for tools, checkers and
//! tests. A node is changed only by the process that runs it ([`Durable`](crate::Durable)).

use tickflow::timer::DurableTimer;

use crate::error::StoreError;
use crate::store::{in_tx, Store};
use crate::vocab::NodeClocks;

/// What a node left in the store, as [`Inspect::saved`] reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Saved {
    /// Its clocks at its last commit (`None`: it never committed).
    pub clocks: Option<NodeClocks>,
    /// The number of its last commit (0: none).
    pub committed: u64,
    /// Its durable timers, in no particular order (each carries its place in set order).
    pub timers: Vec<DurableTimer>,
}

/// Reads a node's rows, each checked (its checksum too), in one transaction.
pub trait Inspect: Store + Sized {
    /// What `node` left: its clocks, commit number and timers.
    fn saved(&mut self, node: &str) -> Result<Saved, StoreError> {
        in_tx(self, false, |tx| {
            let Some(read) = Self::node_in(tx, node, false)? else {
                return Ok(Saved::default());
            };
            let read = read.checked(node)?;
            let mut timers = Vec::new();
            let mut failed = None;
            Self::rows_in(tx, node, &mut |row| match row.timer(node, read.row.shift) {
                Ok(t) => {
                    timers.push(t);
                    Ok(true)
                }
                Err(e) => {
                    failed = Some(e);
                    Ok(false)
                }
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            let committed = read.row.committed;
            Ok(Saved {
                clocks: (committed > 0).then_some(read.row.clocks),
                committed,
                timers,
            })
        })
    }
}

impl<S: Store> Inspect for S {}
