//! Rows of the store's tables as SQLite returns them, checked for type and named when one is
//! not what it should be.

use rusqlite::Row as SqlRow;

use crate::backend::{NodeRead, OwnerRead, ParcelRead, NODE_COLUMNS, NODE_INTS};
use crate::error::StoreError;

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

pub(super) const NODE: &str = NODE_COLUMNS;

pub(super) fn node_of(r: &SqlRow<'_>, node: &str) -> Result<NodeRead, StoreError> {
    let key = || format!("{node:?}");
    let mut v = [0i64; 13];
    for (i, slot) in v.iter_mut().enumerate() {
        // The host (column 12) is the one text column: the process id comes after it.
        let at = if i == 12 { 13 } else { i };
        *slot = col(r, at, "tickflow_nodes", key, NODE_INTS[i])?;
    }
    let host = col(r, 12, "tickflow_nodes", key, "host")?;
    Ok(NodeRead::from_columns(v, host))
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
