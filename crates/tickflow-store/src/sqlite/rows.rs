//! Rows of the store's tables as SQLite returns them, checked for type and named when one is
//! not what it should be.

use rusqlite::Row as SqlRow;

use crate::backend::{Lease, NodeRead, NodeRow, OwnerRead, ParcelRead};
use crate::error::StoreError;
use crate::vocab::NodeClocks;

/// Reads column `i` of a row of `table` keyed `key`, naming both when its type is wrong.
fn col<T: rusqlite::types::FromSql>(
    r: &SqlRow<'_>,
    i: usize,
    table: &'static str,
    key: impl Fn() -> String,
    field: &'static str,
) -> Result<T, StoreError> {
    r.get(i)
        .map_err(|e| StoreError::bad_row(table, key(), field, format!("cannot be read: {e}")))
}

pub(super) const NODE: &str =
    "game, real, frames, frame, wall_ns, committed, rows, xsum, sum, holder, \
     lease_until, host, pid";

pub(super) fn node_of(r: &SqlRow<'_>, node: &str) -> Result<NodeRead, StoreError> {
    let key = || format!("{node:?}");
    let names = [
        "game",
        "real",
        "frames",
        "frame",
        "wall_ns",
        "committed",
        "rows",
        "xsum",
        "sum",
        "holder",
        "lease_until",
    ];
    let mut v = [0i64; 11];
    for (i, slot) in v.iter_mut().enumerate() {
        *slot = col(r, i, "tickflow_nodes", key, names[i])?;
    }
    let u = |x: i64| x as u64;
    Ok(NodeRead {
        row: NodeRow {
            clocks: NodeClocks {
                game: u(v[0]),
                real: u(v[1]),
                frames: u(v[2]),
                frame: u(v[3]),
                wall_ns: u(v[4]),
            },
            committed: u(v[5]),
            rows: u(v[6]),
            xsum: u(v[7]),
        },
        sum: v[8],
        lease: Lease {
            holder: u(v[9]),
            until_us: v[10],
            host: col(r, 11, "tickflow_nodes", key, "host")?,
            pid: col::<i64>(r, 12, "tickflow_nodes", key, "pid")? as u32,
        },
    })
}

pub(super) fn owner_of(r: &SqlRow<'_>) -> Result<OwnerRead, StoreError> {
    let owner: i64 = col(r, 0, "tickflow_owners", || "?".into(), "owner")?;
    let key = || format!("owner {}", owner as u64);
    Ok(OwnerRead {
        owner,
        epoch: col(r, 1, "tickflow_owners", key, "epoch")?,
        node: col(r, 2, "tickflow_owners", key, "node")?,
        sum: col(r, 3, "tickflow_owners", key, "sum")?,
    })
}

pub(super) const PARCEL: &str = "owner, epoch, sender, receiver, bytes, sent, sum";

pub(super) fn parcel_of(r: &SqlRow<'_>) -> Result<ParcelRead, StoreError> {
    let (owner, epoch): (i64, i64) = (
        col(r, 0, "tickflow_outbox", || "?".into(), "owner")?,
        col(r, 1, "tickflow_outbox", || "?".into(), "epoch")?,
    );
    let key = || format!("(owner {}, epoch {epoch})", owner as u64);
    Ok(ParcelRead {
        owner,
        epoch,
        sender: col(r, 2, "tickflow_outbox", key, "sender")?,
        receiver: col(r, 3, "tickflow_outbox", key, "receiver")?,
        bytes: col(r, 4, "tickflow_outbox", key, "bytes")?,
        sent: col(r, 5, "tickflow_outbox", key, "sent")?,
        sum: col(r, 6, "tickflow_outbox", key, "sum")?,
    })
}
