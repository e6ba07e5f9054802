//! The [`Store`] primitives on SQLite. A statement is a call into the library, not a round
//! trip, so the batch forms run one cached statement per item.

use rusqlite::{params, TransactionBehavior};

use super::rows::{node_of, owner_of, parcel_of, NODE, PARCEL};
use super::Sqlite;
use crate::backend::{ImageRead, NodeRead, NodeRow, OwnerRead, OwnerSwap, ParcelRead, Row};
use crate::error::StoreError;
use crate::row::{read_row, COLUMNS};
use crate::store::{wall_ns, Store};

type Tx<'t> = rusqlite::Transaction<'t>;

/// Now on this machine's clock, in microseconds since the Unix epoch: SQLite's store clock
/// (the processes sharing a file share the machine).
fn now_us() -> i64 {
    (wall_ns() / 1000) as i64
}

impl Store for Sqlite {
    type Tx<'t> = Tx<'t>;

    fn begin(&mut self, write: bool) -> Result<Tx<'_>, StoreError> {
        let behavior = match write {
            true => TransactionBehavior::Immediate,
            false => TransactionBehavior::Deferred,
        };
        Ok(self.conn.transaction_with_behavior(behavior)?)
    }

    fn finish(tx: Tx<'_>) -> Result<(), StoreError> {
        // SQLite commits in this process: an error here is an answer, not a lost one (a
        // failed write of the log is rolled back by the library).
        Ok(tx.commit()?)
    }

    fn now_us_in(_: &mut Tx<'_>) -> Result<i64, StoreError> {
        Ok(now_us())
    }

    fn clock_us(&mut self) -> Option<i64> {
        Some(now_us())
    }

    fn lock_node_in(_: &mut Tx<'_>, _: &str) -> Result<i64, StoreError> {
        // A write transaction holds the whole database (`BEGIN IMMEDIATE`): nothing to lock.
        Ok(now_us())
    }

    fn node_in(tx: &mut Tx<'_>, node: &str, _lock: bool) -> Result<Option<NodeRead>, StoreError> {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {NODE} FROM tickflow_nodes WHERE node = ?1"
        ))?;
        let mut rows = stmt.query([node])?;
        match rows.next()? {
            Some(r) => Ok(Some(node_of(r, node)?)),
            None => Ok(None),
        }
    }

    fn nodes_in(tx: &mut Tx<'_>) -> Result<Vec<(String, NodeRead)>, StoreError> {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {NODE}, node FROM tickflow_nodes ORDER BY node"
        ))?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let name: String = r.get(14).map_err(|e| {
                StoreError::bad_row(
                    "tickflow_nodes",
                    "?",
                    "node",
                    format!("cannot be read: {e}"),
                )
            })?;
            let read = node_of(r, &name)?;
            out.push((name, read));
        }
        Ok(out)
    }

    fn put_node_in(tx: &mut Tx<'_>, node: &str, n: &NodeRead) -> Result<(), StoreError> {
        let c = &n.row.clocks;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO tickflow_nodes (node, game, real, frames, frame, wall_ns, \
             committed, rows, xsum, sum, holder, lease_until, host, pid, shift) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )?
        .execute(params![
            node,
            c.game as i64,
            c.real as i64,
            c.frames as i64,
            c.frame as i64,
            c.wall_ns as i64,
            n.row.committed as i64,
            n.row.rows as i64,
            n.row.xsum as i64,
            n.sum,
            n.lease.holder as i64,
            n.lease.until_us,
            n.lease.host,
            i64::from(n.lease.pid),
            n.row.shift as i64,
        ])?;
        Ok(())
    }

    fn advance_node_in(
        tx: &mut Tx<'_>,
        node: &str,
        holder: u64,
        committed: u64,
        row: &NodeRow,
        sum: i64,
        lease_us: i64,
    ) -> Result<bool, StoreError> {
        let c = &row.clocks;
        let until = now_us().saturating_add(lease_us);
        let n = tx
            .prepare_cached(
                "UPDATE tickflow_nodes SET game = ?1, real = ?2, frames = ?3, frame = ?4, \
                 wall_ns = ?5, committed = ?6, rows = ?7, xsum = ?8, sum = ?9, lease_until = ?10, \
                 shift = ?14 WHERE node = ?11 AND holder = ?12 AND committed = ?13",
            )?
            .execute(params![
                c.game as i64,
                c.real as i64,
                c.frames as i64,
                c.frame as i64,
                c.wall_ns as i64,
                row.committed as i64,
                row.rows as i64,
                row.xsum as i64,
                sum,
                until,
                node,
                holder as i64,
                committed as i64,
                row.shift as i64,
            ])?;
        Ok(n == 1)
    }

    fn owners_in(
        tx: &mut Tx<'_>,
        owners: &[i64],
        _lock: bool,
    ) -> Result<Vec<OwnerRead>, StoreError> {
        let mut stmt = tx.prepare_cached(
            "SELECT owner, epoch, node, sum FROM tickflow_owners WHERE owner = ?1",
        )?;
        let mut out = Vec::with_capacity(owners.len());
        for &o in owners {
            let mut rows = stmt.query([o])?;
            if let Some(r) = rows.next()? {
                out.push(owner_of(r)?);
            }
        }
        Ok(out)
    }

    fn owners_of_in(tx: &mut Tx<'_>, node: &str) -> Result<Vec<OwnerRead>, StoreError> {
        let mut stmt = tx.prepare_cached(
            "SELECT owner, epoch, node, sum FROM tickflow_owners WHERE node = ?1",
        )?;
        let mut rows = stmt.query([node])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(owner_of(r)?);
        }
        Ok(out)
    }

    fn owners_page_in(
        tx: &mut Tx<'_>,
        node: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<OwnerRead>, StoreError> {
        let mut stmt = tx.prepare_cached(
            "SELECT owner, epoch, node, sum FROM tickflow_owners \
             WHERE node = ?1 AND owner > ?2 ORDER BY owner LIMIT ?3",
        )?;
        let limit = limit.min(i64::MAX as usize) as i64;
        let mut rows = stmt.query(params![node, after, limit])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(owner_of(r)?);
        }
        Ok(out)
    }

    fn all_owners_in(tx: &mut Tx<'_>) -> Result<Vec<OwnerRead>, StoreError> {
        let mut stmt = tx
            .prepare_cached("SELECT owner, epoch, node, sum FROM tickflow_owners ORDER BY owner")?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(owner_of(r)?);
        }
        Ok(out)
    }

    fn insert_owners_in(tx: &mut Tx<'_>, rows: &[OwnerRead]) -> Result<Vec<bool>, StoreError> {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO tickflow_owners (owner, epoch, node, sum) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (owner) DO NOTHING",
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            out.push(stmt.execute(params![r.owner, r.epoch, r.node, r.sum])? == 1);
        }
        Ok(out)
    }

    fn take_parcels_in(tx: &mut Tx<'_>, swaps: &[OwnerSwap<'_>]) -> Result<Vec<bool>, StoreError> {
        let keys: Vec<(i64, i64)> = swaps.iter().map(|s| (s.owner, s.from_epoch)).collect();
        let there = Self::remove_parcels_in(tx, &keys)?;
        let taken: Vec<OwnerSwap<'_>> = (swaps.iter().zip(&there))
            .filter(|(_, &t)| t)
            .map(|(s, _)| s.clone())
            .collect();
        let mut moved = Self::swap_owners_in(tx, &taken)?.into_iter();
        Ok(there
            .into_iter()
            .map(|t| t && moved.next().unwrap_or(false))
            .collect())
    }

    fn swap_owners_in(tx: &mut Tx<'_>, swaps: &[OwnerSwap<'_>]) -> Result<Vec<bool>, StoreError> {
        let mut stmt = tx.prepare_cached(
            "UPDATE tickflow_owners SET epoch = ?1, node = ?2, sum = ?3 \
             WHERE owner = ?4 AND epoch = ?5 AND node = ?6",
        )?;
        let mut out = Vec::with_capacity(swaps.len());
        for s in swaps {
            let n = stmt.execute(params![
                s.epoch,
                s.node,
                s.sum,
                s.owner,
                s.from_epoch,
                s.from_node
            ])?;
            out.push(n == 1);
        }
        Ok(out)
    }

    fn count_rows_in(tx: &mut Tx<'_>, node: &str) -> Result<u64, StoreError> {
        let n: i64 = tx
            .prepare_cached("SELECT count(*) FROM tickflow_timers WHERE node = ?1")?
            .query_row([node], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    fn rows_in(
        tx: &mut Tx<'_>,
        node: &str,
        sink: &mut dyn FnMut(Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = tx.prepare(&format!(
            "SELECT {COLUMNS} FROM tickflow_timers WHERE node = ?1"
        ))?;
        let mut rows = stmt.query([node])?;
        while let Some(r) = rows.next()? {
            if !sink(read_row!(r, get))? {
                break;
            }
        }
        Ok(())
    }

    fn owner_rows_in(
        tx: &mut Tx<'_>,
        node: &str,
        owners: &[i64],
        sink: &mut dyn FnMut(Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        // One sweep of the key's (node, owner) prefix per owner.
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tickflow_timers WHERE node = ?1 AND owner = ?2"
        ))?;
        for &o in owners {
            let mut rows = stmt.query(params![node, o])?;
            while let Some(r) = rows.next()? {
                if !sink(read_row!(r, get))? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn write_rows_in(tx: &mut Tx<'_>, node: &str, rows: &[Row]) -> Result<(), StoreError> {
        let mut stmt = tx.prepare_cached(&format!(
            "INSERT OR REPLACE INTO tickflow_timers (node, {COLUMNS}) VALUES (?1, ?2, ?3, ?4, \
             ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
        ))?;
        for r in rows {
            stmt.execute(params![
                node,
                r.owner,
                r.name,
                r.epoch,
                r.domain,
                r.phase,
                r.time,
                r.period,
                r.looping,
                r.catch_up,
                r.offline,
                r.calls,
                r.times_left,
                r.first_delay,
                r.tag,
                r.payload,
                r.seq,
                r.sum,
            ])?;
        }
        Ok(())
    }

    fn delete_rows_in(tx: &mut Tx<'_>, node: &str, keys: &[(i64, &str)]) -> Result<(), StoreError> {
        let mut stmt = tx.prepare_cached(
            "DELETE FROM tickflow_timers WHERE node = ?1 AND owner = ?2 AND name = ?3",
        )?;
        for (owner, name) in keys {
            stmt.execute(params![node, owner, name])?;
        }
        Ok(())
    }

    fn clear_rows_in(tx: &mut Tx<'_>, node: &str) -> Result<(), StoreError> {
        tx.execute("DELETE FROM tickflow_timers WHERE node = ?1", [node])?;
        Ok(())
    }

    fn delete_owner_rows_in(
        tx: &mut Tx<'_>,
        node: &str,
        owners: &[i64],
    ) -> Result<Vec<(i64, String, i64)>, StoreError> {
        let mut stmt = tx.prepare_cached(
            "DELETE FROM tickflow_timers WHERE node = ?1 AND owner = ?2 RETURNING owner, name, sum",
        )?;
        let mut out = Vec::new();
        for &o in owners {
            let mut rows = stmt.query(params![node, o])?;
            while let Some(r) = rows.next()? {
                out.push((r.get(0)?, r.get(1)?, r.get(2)?));
            }
        }
        Ok(out)
    }

    fn put_image_in(
        tx: &mut Tx<'_>,
        node: &str,
        committed: i64,
        bytes: &[u8],
        sum: i64,
    ) -> Result<(), StoreError> {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO tickflow_images (node, committed, bytes, sum) \
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![node, committed, bytes, sum])?;
        Ok(())
    }

    fn image_in(tx: &mut Tx<'_>, node: &str) -> Result<Option<ImageRead>, StoreError> {
        let mut stmt =
            tx.prepare_cached("SELECT committed, bytes, sum FROM tickflow_images WHERE node = ?1")?;
        let mut rows = stmt.query([node])?;
        let Some(r) = rows.next()? else {
            return Ok(None);
        };
        let bad = |field: &'static str, e: rusqlite::Error| {
            StoreError::bad_row("tickflow_images", format!("{node:?}"), field, e.to_string())
        };
        Ok(Some(ImageRead {
            committed: r.get(0).map_err(|e| bad("committed", e))?,
            bytes: r.get(1).map_err(|e| bad("bytes", e))?,
            sum: r.get(2).map_err(|e| bad("sum", e))?,
        }))
    }

    fn put_parcels_in(tx: &mut Tx<'_>, parcels: &[ParcelRead]) -> Result<Vec<bool>, StoreError> {
        let mut stmt = tx.prepare_cached(&format!(
            "INSERT INTO tickflow_outbox ({PARCEL}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
             ON CONFLICT (owner, epoch) DO NOTHING"
        ))?;
        let mut out = Vec::with_capacity(parcels.len());
        for p in parcels {
            let n = stmt.execute(params![
                p.owner, p.epoch, p.sender, p.receiver, p.bytes, p.sent, p.sum
            ])?;
            out.push(n == 1);
        }
        Ok(out)
    }

    fn send_parcels_in(
        tx: &mut Tx<'_>,
        parcels: &[ParcelRead],
    ) -> Result<Vec<Option<OwnerRead>>, StoreError> {
        let mut stmt = tx.prepare_cached(
            "SELECT owner, epoch, node, sum FROM tickflow_owners WHERE owner = ?1",
        )?;
        let mut rows = Vec::with_capacity(parcels.len());
        let mut all = true;
        for p in parcels {
            let mut found = stmt.query([p.owner])?;
            let row = found.next()?.map(owner_of).transpose()?;
            all &= row
                .as_ref()
                .is_some_and(|r| r.node == p.sender && r.epoch == p.epoch);
            rows.push(row);
        }
        drop(stmt);
        if all {
            Self::put_parcels_in(tx, parcels)?;
        }
        Ok(rows)
    }

    fn remove_parcels_in(tx: &mut Tx<'_>, keys: &[(i64, i64)]) -> Result<Vec<bool>, StoreError> {
        let mut stmt =
            tx.prepare_cached("DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2")?;
        let mut out = Vec::with_capacity(keys.len());
        for &(o, e) in keys {
            out.push(stmt.execute(params![o, e])? == 1);
        }
        Ok(out)
    }

    fn parcels_in(
        tx: &mut Tx<'_>,
        keys: &[(i64, i64)],
    ) -> Result<Vec<Option<ParcelRead>>, StoreError> {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {PARCEL} FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2"
        ))?;
        let mut out = Vec::with_capacity(keys.len());
        for &(o, e) in keys {
            let mut rows = stmt.query(params![o, e])?;
            out.push(rows.next()?.map(parcel_of).transpose()?);
        }
        Ok(out)
    }

    fn parcels_of_in(
        tx: &mut Tx<'_>,
        node: &str,
        to: bool,
        limit: usize,
    ) -> Result<Vec<ParcelRead>, StoreError> {
        let by = if to { "receiver" } else { "sender" };
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {PARCEL} FROM tickflow_outbox WHERE {by} = ?1 ORDER BY sent, owner LIMIT ?2"
        ))?;
        let mut rows = stmt.query(params![node, limit.min(i64::MAX as usize) as i64])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(parcel_of(r)?);
        }
        Ok(out)
    }
}
