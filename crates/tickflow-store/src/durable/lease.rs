//! One live process per node: the lease in the node's row.
//!
//! Ground rules:
//!
//! - A process takes a node in [`Durable::resume`](crate::Durable::resume): it writes its token
//!   (random, made at its start) and a lease that ends `lease` from now on the database's
//!   clock. Each commit renews it in the same statement that advances the node's commit number,
//!   and only while the token is still this process's: a process whose node was taken over
//!   stops committing ([`StoreError::NodeLost`]).
//! - A lease that ran out is not lost by itself: nothing happens until another process wants
//!   the node, or — in a fleet whose nodes take part in takeovers (`takeover.rs`) — until a
//!   live node adopts its owners and fences it. So a paused lone game keeps its node, and
//!   only a contender needs the lease to be fresh.
//! - A process that wants a node whose lease is another's and has not run out waits while the
//!   lease lasts: if the holder renews it meanwhile, it is alive and the newcomer is refused
//!   ([`StoreError::NodeHeld`]); if not, the newcomer takes it. A holder on the same machine
//!   (and process-id namespace) whose process is gone is known dead at once: a server restarted
//!   after a crash takes its node without waiting.

use std::time::{Duration, Instant};

use crate::backend::{Lease, NodeRead, NodeRow};
use crate::error::StoreError;
use crate::store::{in_tx, Store};

/// The default lease: long enough for a loaded machine's stalls between two commits, short
/// enough that a node whose process died without a trace is free again within a second.
pub const DEFAULT_LEASE: Duration = Duration::from_millis(500);

/// A token for this process: 64 random bits (the standard library seeds `RandomState` from
/// the operating system's random source) mixed with the process id and the time.
pub(crate) fn token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() | 1 // never 0, which no process holds
}

/// This machine's boot and process-id namespace, where the system tells them (Linux): two
/// processes with the same one see each other's process ids.
pub(crate) fn host() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let link = std::fs::read_link("/proc/self/ns/pid").ok();
    match (read("/proc/sys/kernel/random/boot_id"), link) {
        (Some(boot), Some(ns)) => format!("{boot} {}", ns.display()),
        _ => String::new(),
    }
}

/// Whether the holder of `lease` is certainly gone: a process of this machine and namespace
/// that no longer runs (or runs another program under its old id).
fn gone(lease: &Lease, here: &str) -> bool {
    if lease.host.is_empty() || lease.host != here || lease.pid == std::process::id() {
        return false;
    }
    // A process id that now belongs to another process reads as alive: the safe side.
    !std::path::Path::new(&format!("/proc/{}", lease.pid)).exists()
}

/// What a process that takes a node, or rejoins it, is allowed on top of its lease for reading
/// the node's `rows` rows before its first commit, in microseconds (20 µs a row; a PostgreSQL
/// on loopback reads and loads one in 5-10): without it, a node whose rows take longer to
/// read than its lease would be lost again before its first commit, and again after each
/// rejoin.
pub(crate) fn grace_us(rows: u64) -> i64 {
    (rows.min(1 << 40) as i64).saturating_mul(20)
}

/// What the lease step found.
pub(crate) enum Taken {
    /// The node is this process's; its row as read (checked), or `None` for a new node, and
    /// now on the store's clock (microseconds).
    Node(Option<NodeRead>, i64),
    /// Another process holds it and renewed it while this one waited.
    Held(Lease, i64),
}

/// Takes `node` for the process with `token`, waiting at most while another holder's lease
/// lasts (see the module docs); its row as read, and now on the store's clock (microseconds).
pub(crate) fn take<S: Store>(
    store: &mut S,
    node: &str,
    token: u64,
    lease: Duration,
) -> Result<(Option<NodeRead>, i64), StoreError> {
    let here = host();
    let lease_us = lease.as_micros().min(i64::MAX as u128) as i64;
    let start = Instant::now();
    let mut seen: Option<Lease> = None;
    loop {
        let found = in_tx(store, true, |tx| {
            try_take::<S>(tx, node, token, lease_us, &here, seen.as_ref())
        })?;
        match found {
            Taken::Node(row, now) => return Ok((row, now)),
            Taken::Held(l, now) => {
                let left = l.until_us.saturating_sub(now).max(0) as u64;
                let renewed = seen.as_ref().is_some_and(|s| *s != l);
                if renewed || start.elapsed() > lease * 4 {
                    return Err(StoreError::NodeHeld {
                        node: node.to_string(),
                        pid: l.pid,
                        for_ms: left / 1000,
                    });
                }
                seen = Some(l);
                // Past the lease's end, plus a little for the clocks' disagreement.
                std::thread::sleep(Duration::from_micros(left + 2_000).min(lease));
            }
        }
    }
}

/// One try, in a transaction: `seen` is the lease found by the previous try, which may be
/// taken over once its end has passed unchanged.
fn try_take<S: Store>(
    tx: &mut S::Tx<'_>,
    node: &str,
    token: u64,
    lease_us: i64,
    here: &str,
    seen: Option<&Lease>,
) -> Result<Taken, StoreError> {
    let now = S::now_us_in(tx)?;
    let mine = Lease {
        holder: token,
        until_us: now.saturating_add(lease_us),
        host: here.to_string(),
        pid: std::process::id(),
    };
    let Some(read) = S::node_in(tx, node, true)? else {
        if S::count_rows_in(tx, node)? > 0 || !S::owners_of_in(tx, node)?.is_empty() {
            return Err(StoreError::Missing {
                what: format!(
                    "node {node:?} has timer rows or owners but its row in tickflow_nodes is \
                     gone: the store is damaged (restore it from a backup)"
                ),
            });
        }
        let row = NodeRow::default();
        let sum = row.sum_for(node);
        S::put_node_in(
            tx,
            node,
            &NodeRead {
                row,
                lease: mine,
                sum,
            },
        )?;
        return Ok(Taken::Node(None, now));
    };
    let l = &read.lease;
    let free =
        l.holder == token || l.until_us <= now && seen == Some(l) || gone(l, here) || l.holder == 0;
    if !free {
        return Ok(Taken::Held(read.lease, now));
    }
    let read = read.checked(node)?;
    let until_us = mine.until_us.saturating_add(grace_us(read.row.rows));
    let taken = NodeRead {
        lease: Lease { until_us, ..mine },
        ..read.clone()
    };
    S::put_node_in(tx, node, &taken)?;
    Ok(Taken::Node(Some(read), now))
}

/// Gives `node` up, if the process with `token` holds it: the next process takes it at once.
pub(crate) fn release<S: Store>(store: &mut S, node: &str, token: u64) -> Result<(), StoreError> {
    in_tx(store, true, |tx| {
        if let Some(read) = S::node_in(tx, node, true)? {
            if read.lease.holder == token {
                S::put_node_in(
                    tx,
                    node,
                    &NodeRead {
                        lease: Lease::none(),
                        ..read
                    },
                )?;
            }
        }
        Ok(())
    })
}

impl<S: Store> super::Durable<S> {
    /// [`StoreError::NodeLost`] if another process runs this node now.
    pub(super) fn lost(&mut self) -> Option<StoreError> {
        let (node, token) = (self.node.clone(), self.token);
        let read = in_tx(&mut self.store, false, |tx| S::node_in(tx, &node, false)).ok()??;
        (read.lease.holder != token).then_some(StoreError::NodeLost { node })
    }

    /// Renews this process's hold on the node without a commit, for its lease and `extra_us`
    /// more.
    pub(super) fn renew(&mut self, extra_us: i64) -> Result<(), StoreError> {
        let node = self.node.clone();
        let (token, committed) = (self.token, self.committed);
        let lease_us =
            (self.lease.as_micros().min(i64::MAX as u128) as i64).saturating_add(extra_us);
        let mut tx = self.store.begin(true)?;
        let Some(read) = S::node_in(&mut tx, &node, true)? else {
            return Err(StoreError::Missing {
                what: format!("node {node:?}: its row in tickflow_nodes is gone"),
            });
        };
        if read.lease.holder != token {
            return Err(StoreError::NodeLost { node });
        }
        if !S::advance_node_in(
            &mut tx, &node, token, committed, &read.row, read.sum, lease_us,
        )? {
            return Err(not_advanced::<S>(&mut tx, &node, token, committed)?);
        }
        S::finish(tx)?;
        self.renewed = std::time::Instant::now();
        Ok(())
    }
}

/// Why the node's row did not advance: another process took the node, or its row is gone.
pub(super) fn not_advanced<S: Store>(
    tx: &mut S::Tx<'_>,
    node: &str,
    token: u64,
    committed: u64,
) -> Result<StoreError, StoreError> {
    let node = node.to_string();
    Ok(match S::node_in(tx, &node, false)? {
        Some(r) if r.lease.holder != token => StoreError::NodeLost { node },
        Some(r) => StoreError::Missing {
            what: format!(
                "node {node:?} is at commit {} where this process left it at {committed}: its \
                 row was changed by something other than this process",
                r.row.committed
            ),
        },
        None => StoreError::Missing {
            what: format!("node {node:?}: its row in tickflow_nodes is gone"),
        },
    })
}
