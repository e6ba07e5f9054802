//! The [`Store`] primitives on PostgreSQL: one statement each, its parameter types given so it
//! costs one round trip, batches over arrays.

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::IsolationLevel;

use super::rows::{
    col, flags, node_of, owner_at, owners_of, parcel_of, parcels_of, send_parcels, write_rows,
    NODE, OUTBOX_CHANNEL, PARCEL,
};
use super::Postgres;
use crate::backend::{ImageRead, NodeRead, NodeRow, OwnerRead, OwnerSwap, ParcelRead, Row};
use crate::error::StoreError;
use crate::row::{read_row, COLUMNS};
use crate::store::Store;

type Tx<'t> = postgres::Transaction<'t>;
type P<'a> = (&'a (dyn ToSql + Sync), Type);

/// Whether a failed `COMMIT` is known not to have landed: the server answered it with an
/// error of its own and the connection lives. A connection that ends is not such an answer,
/// even when the server says why (`57P01`, ended by an administrator, may come after the
/// commit is kept): nor is any error of the classes 08 (connection) and 57 (operator).
fn refused(e: &postgres::Error) -> bool {
    let Some(db) = e.as_db_error() else {
        return false;
    };
    let class = &db.code().code()[..2];
    !e.is_closed() && db.severity() == "ERROR" && class != "08" && class != "57"
}

/// How long a commit waits for the row of a node it adopts from (see `try_lock_nodes_in`).
const TRY_LOCK_MS: u32 = 50;

/// Now on the server's clock, in microseconds since the Unix epoch.
const NOW_US: &str = "(extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT";

impl Store for Postgres {
    type Tx<'t> = Tx<'t>;

    fn begin(&mut self, write: bool) -> Result<Tx<'_>, StoreError> {
        let client = self.client()?;
        if write {
            // Read committed: a writer's reads that must agree with each other take row locks
            // (its node's row first), and its compare-and-sets check what they change.
            return Ok(client.transaction()?);
        }
        // A reader reads one snapshot, as SQLite's does: under read committed each statement
        // sees the commits made since the one before, and a resume that read the registry
        // before a receiver's commit and the outbox after it would lose its parcel in flight
        // (and run the owner on two nodes). Read only, this level never fails to serialize.
        Ok(client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?)
    }

    fn finish(tx: Tx<'_>) -> Result<(), StoreError> {
        match tx.commit() {
            Ok(()) => Ok(()),
            Err(e) if refused(&e) => Err(e.into()),
            // The connection failed with the `COMMIT` or its answer on the way.
            Err(e) => Err(StoreError::Uncertain(Box::new(e.into()))),
        }
    }

    fn now_us_in(tx: &mut Tx<'_>) -> Result<i64, StoreError> {
        Ok(tx
            .query_typed_one(&format!("SELECT {NOW_US}"), &[])?
            .try_get(0)?)
    }

    fn lock_node_in(tx: &mut Tx<'_>, node: &str) -> Result<i64, StoreError> {
        // One statement; its start is the time before any wait for the row. The count makes
        // the locking CTE run (an unreferenced one would not).
        Ok(tx
            .query_typed_one(
                "WITH l AS (SELECT node FROM tickflow_nodes WHERE node = $1 FOR UPDATE) \
                 SELECT (extract(epoch FROM statement_timestamp()) * 1000000)::BIGINT, \
                 (SELECT count(*) FROM l)",
                &[(&node, Type::TEXT)],
            )?
            .try_get(0)?)
    }

    fn try_lock_nodes_in(tx: &mut Tx<'_>, nodes: &[&str]) -> Result<Vec<String>, StoreError> {
        // Waits a little (another adopter holds the row only at the end of its commit), but
        // never long: a row held longer is the node's own, back and writing, or a cycle of
        // nodes that each took the next for lost, which the timeout breaks at once. On the
        // timeout the savepoint keeps the transaction alive, with none of the rows.
        tx.batch_execute(&format!(
            "SAVEPOINT tickflow_try; SET LOCAL lock_timeout = '{TRY_LOCK_MS}ms'"
        ))?;
        let locked = tx.query_typed(
            "SELECT node FROM tickflow_nodes WHERE node = ANY($1) ORDER BY node FOR UPDATE",
            &[(&nodes, Type::TEXT_ARRAY)],
        );
        match locked {
            Ok(rows) => {
                tx.batch_execute("SET LOCAL lock_timeout TO DEFAULT; RELEASE tickflow_try")?;
                rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
            }
            Err(e) if e.code() == Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
                tx.batch_execute("ROLLBACK TO tickflow_try; RELEASE tickflow_try")?;
                Ok(Vec::new())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn node_in(tx: &mut Tx<'_>, node: &str, lock: bool) -> Result<Option<NodeRead>, StoreError> {
        let lock = if lock { "FOR UPDATE" } else { "" };
        let row = tx.query_typed_opt(
            &format!("SELECT {NODE} FROM tickflow_nodes WHERE node = $1 {lock}"),
            &[(&node, Type::TEXT)],
        )?;
        row.map(|r| node_of(&r, node)).transpose()
    }

    fn nodes_in(tx: &mut Tx<'_>) -> Result<Vec<(String, NodeRead)>, StoreError> {
        let rows = tx.query_typed(
            &format!("SELECT {NODE}, node FROM tickflow_nodes ORDER BY node"),
            &[],
        )?;
        (rows.iter())
            .map(|r| {
                let name: String = col(r, 14, "tickflow_nodes", || "?".into(), "node")?;
                Ok((name.clone(), node_of(r, &name)?))
            })
            .collect()
    }

    fn put_node_in(tx: &mut Tx<'_>, node: &str, n: &NodeRead) -> Result<(), StoreError> {
        let c = &n.row.clocks;
        let v = [
            c.game,
            c.real,
            c.frames,
            c.frame,
            c.wall_ns,
            n.row.committed,
            n.row.rows,
            n.row.xsum,
            n.row.shift,
        ]
        .map(|x| x as i64);
        let (holder, pid) = (n.lease.holder as i64, i64::from(n.lease.pid));
        let mut p: Vec<P<'_>> = vec![(&node, Type::TEXT)];
        p.extend(v.iter().map(|x| (x as &(dyn ToSql + Sync), Type::INT8)));
        p.extend([
            (&n.sum as &(dyn ToSql + Sync), Type::INT8),
            (&holder, Type::INT8),
            (&n.lease.until_us, Type::INT8),
            (&n.lease.host, Type::TEXT),
            (&pid, Type::INT8),
        ]);
        tx.execute_typed(
            "INSERT INTO tickflow_nodes (node, game, real, frames, frame, wall_ns, committed, \
             rows, xsum, shift, sum, holder, lease_until, host, pid) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
             ON CONFLICT (node) DO UPDATE SET game = excluded.game, real = excluded.real, \
             frames = excluded.frames, frame = excluded.frame, wall_ns = excluded.wall_ns, \
             committed = excluded.committed, rows = excluded.rows, xsum = excluded.xsum, \
             shift = excluded.shift, \
             sum = excluded.sum, holder = excluded.holder, lease_until = excluded.lease_until, \
             host = excluded.host, pid = excluded.pid",
            &p,
        )?;
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
        let v = [
            c.game,
            c.real,
            c.frames,
            c.frame,
            c.wall_ns,
            row.committed,
            row.rows,
            row.xsum,
            row.shift,
        ]
        .map(|x| x as i64);
        let (holder, committed) = (holder as i64, committed as i64);
        let mut p: Vec<P<'_>> = v
            .iter()
            .map(|x| (x as &(dyn ToSql + Sync), Type::INT8))
            .collect();
        p.extend([
            (&sum as &(dyn ToSql + Sync), Type::INT8),
            (&lease_us, Type::INT8),
            (&node, Type::TEXT),
            (&holder, Type::INT8),
            (&committed, Type::INT8),
        ]);
        let n = tx.execute_typed(
            &format!(
                "UPDATE tickflow_nodes SET game = $1, real = $2, frames = $3, frame = $4, \
                 wall_ns = $5, committed = $6, rows = $7, xsum = $8, shift = $9, sum = $10, \
                 lease_until = {NOW_US} + $11 WHERE node = $12 AND holder = $13 AND committed = $14"
            ),
            &p,
        )?;
        Ok(n == 1)
    }

    fn owners_in(
        tx: &mut Tx<'_>,
        owners: &[i64],
        lock: bool,
    ) -> Result<Vec<OwnerRead>, StoreError> {
        // Locked in owner order, so that two transactions never wait on each other's.
        let lock = if lock {
            "ORDER BY owner FOR UPDATE"
        } else {
            ""
        };
        let rows = tx.query_typed(
            &format!(
                "SELECT owner, epoch, node, sum FROM tickflow_owners WHERE owner = ANY($1) {lock}"
            ),
            &[(&owners, Type::INT8_ARRAY)],
        )?;
        owners_of(&rows)
    }

    fn owners_of_in(tx: &mut Tx<'_>, node: &str) -> Result<Vec<OwnerRead>, StoreError> {
        let rows = tx.query_typed(
            "SELECT owner, epoch, node, sum FROM tickflow_owners WHERE node = $1",
            &[(&node, Type::TEXT)],
        )?;
        owners_of(&rows)
    }

    fn owners_page_in(
        tx: &mut Tx<'_>,
        node: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<OwnerRead>, StoreError> {
        let limit = limit.min(i64::MAX as usize) as i64;
        let rows = tx.query_typed(
            "SELECT owner, epoch, node, sum FROM tickflow_owners \
             WHERE node = $1 AND owner > $2 ORDER BY owner LIMIT $3",
            &[
                (&node, Type::TEXT),
                (&after, Type::INT8),
                (&limit, Type::INT8),
            ],
        )?;
        owners_of(&rows)
    }

    fn all_owners_in(tx: &mut Tx<'_>) -> Result<Vec<OwnerRead>, StoreError> {
        let rows = tx.query_typed(
            "SELECT owner, epoch, node, sum FROM tickflow_owners ORDER BY owner",
            &[],
        )?;
        owners_of(&rows)
    }

    fn insert_owners_in(tx: &mut Tx<'_>, rows: &[OwnerRead]) -> Result<Vec<bool>, StoreError> {
        let owner: Vec<i64> = rows.iter().map(|r| r.owner).collect();
        let epoch: Vec<i64> = rows.iter().map(|r| r.epoch).collect();
        let node: Vec<&str> = rows.iter().map(|r| r.node.as_str()).collect();
        let sum: Vec<i64> = rows.iter().map(|r| r.sum).collect();
        let put = tx.query_typed(
            "WITH p AS (INSERT INTO tickflow_owners (owner, epoch, node, sum) \
             SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::BIGINT[]) \
             ON CONFLICT (owner) DO NOTHING RETURNING owner) \
             SELECT k.i FROM UNNEST($1::BIGINT[]) WITH ORDINALITY AS k(o, i) JOIN p ON p.owner = k.o",
            &[
                (&owner, Type::INT8_ARRAY),
                (&epoch, Type::INT8_ARRAY),
                (&node, Type::TEXT_ARRAY),
                (&sum, Type::INT8_ARRAY),
            ],
        )?;
        flags(rows.len(), &put)
    }

    fn take_parcels_in(tx: &mut Tx<'_>, swaps: &[OwnerSwap<'_>]) -> Result<Vec<bool>, StoreError> {
        // The parcels' removal and the compare-and-set of those that were there, in one
        // statement.
        swap(
            tx,
            swaps,
            "WITH d AS (DELETE FROM tickflow_outbox t USING UNNEST($1::BIGINT[], $2::BIGINT[]) \
                 AS g(o, e) WHERE t.owner = g.o AND t.epoch = g.e RETURNING t.owner, t.epoch), \
             u AS (",
            "JOIN d ON d.owner = s.o AND d.epoch = s.fe",
            ") SELECT i FROM u",
        )
    }

    fn swap_owners_in(tx: &mut Tx<'_>, swaps: &[OwnerSwap<'_>]) -> Result<Vec<bool>, StoreError> {
        swap(tx, swaps, "", "", "")
    }

    fn count_rows_in(tx: &mut Tx<'_>, node: &str) -> Result<u64, StoreError> {
        let n: i64 = tx
            .query_typed_one(
                "SELECT count(*) FROM tickflow_timers WHERE node = $1",
                &[(&node, Type::TEXT)],
            )?
            .try_get(0)?;
        Ok(n.max(0) as u64)
    }

    fn rows_in(
        tx: &mut Tx<'_>,
        node: &str,
        sink: &mut dyn FnMut(Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        // Streamed as the server sends them, not gathered first.
        let mut rows = tx.query_typed_raw(
            &format!("SELECT {COLUMNS} FROM tickflow_timers WHERE node = $1"),
            [(node, Type::TEXT)],
        )?;
        while let Some(r) = rows.next()? {
            if !sink(read_row!(&r, try_get))? {
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
        let rows = tx.query_typed(
            &format!("SELECT {COLUMNS} FROM tickflow_timers WHERE node = $1 AND owner = ANY($2)"),
            &[(&node, Type::TEXT), (&owners, Type::INT8_ARRAY)],
        )?;
        for r in &rows {
            if !sink(read_row!(r, try_get))? {
                break;
            }
        }
        Ok(())
    }

    fn write_rows_in(tx: &mut Tx<'_>, node: &str, rows: &[Row]) -> Result<(), StoreError> {
        write_rows(tx, node, rows)
    }

    fn delete_rows_in(tx: &mut Tx<'_>, node: &str, keys: &[(i64, &str)]) -> Result<(), StoreError> {
        let owner: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let name: Vec<&str> = keys.iter().map(|k| k.1).collect();
        tx.execute_typed(
            "DELETE FROM tickflow_timers t USING UNNEST($2::BIGINT[], $3::TEXT[]) AS g(owner, name) \
             WHERE t.node = $1 AND t.owner = g.owner AND t.name = g.name",
            &[
                (&node, Type::TEXT),
                (&owner, Type::INT8_ARRAY),
                (&name, Type::TEXT_ARRAY),
            ],
        )?;
        Ok(())
    }

    fn clear_rows_in(tx: &mut Tx<'_>, node: &str) -> Result<(), StoreError> {
        tx.execute_typed(
            "DELETE FROM tickflow_timers WHERE node = $1",
            &[(&node, Type::TEXT)],
        )?;
        Ok(())
    }

    fn delete_owner_rows_in(
        tx: &mut Tx<'_>,
        node: &str,
        owners: &[i64],
    ) -> Result<Vec<(i64, String, i64)>, StoreError> {
        let rows = tx.query_typed(
            "DELETE FROM tickflow_timers WHERE node = $1 AND owner = ANY($2) \
             RETURNING owner, name, sum",
            &[(&node, Type::TEXT), (&owners, Type::INT8_ARRAY)],
        )?;
        (rows.iter())
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect()
    }

    fn put_image_in(
        tx: &mut Tx<'_>,
        node: &str,
        committed: i64,
        bytes: &[u8],
        sum: i64,
    ) -> Result<(), StoreError> {
        tx.execute_typed(
            "INSERT INTO tickflow_images (node, committed, bytes, sum) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (node) DO UPDATE SET committed = EXCLUDED.committed, \
             bytes = EXCLUDED.bytes, sum = EXCLUDED.sum",
            &[
                (&node, Type::TEXT),
                (&committed, Type::INT8),
                (&bytes, Type::BYTEA),
                (&sum, Type::INT8),
            ],
        )?;
        Ok(())
    }

    fn image_in(tx: &mut Tx<'_>, node: &str) -> Result<Option<ImageRead>, StoreError> {
        let rows = tx.query_typed(
            "SELECT committed, bytes, sum FROM tickflow_images WHERE node = $1",
            &[(&node, Type::TEXT)],
        )?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        let bad = |field: &'static str, e: postgres::Error| {
            StoreError::bad_row("tickflow_images", format!("{node:?}"), field, e.to_string())
        };
        Ok(Some(ImageRead {
            committed: r.try_get(0).map_err(|e| bad("committed", e))?,
            bytes: r.try_get(1).map_err(|e| bad("bytes", e))?,
            sum: r.try_get(2).map_err(|e| bad("sum", e))?,
        }))
    }

    fn put_parcels_in(tx: &mut Tx<'_>, parcels: &[ParcelRead]) -> Result<Vec<bool>, StoreError> {
        let owner: Vec<i64> = parcels.iter().map(|p| p.owner).collect();
        let epoch: Vec<i64> = parcels.iter().map(|p| p.epoch).collect();
        let sender: Vec<&str> = parcels.iter().map(|p| p.sender.as_str()).collect();
        let receiver: Vec<&str> = parcels.iter().map(|p| p.receiver.as_str()).collect();
        let bytes: Vec<&[u8]> = parcels.iter().map(|p| p.bytes.as_slice()).collect();
        let sent: Vec<i64> = parcels.iter().map(|p| p.sent).collect();
        let sum: Vec<i64> = parcels.iter().map(|p| p.sum).collect();
        // One notification per receiver, in the same statement.
        let rows = tx.query_typed(
            &format!(
                "WITH p AS (INSERT INTO tickflow_outbox ({PARCEL}) SELECT o, e, s, r, b, t, m \
                 FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BYTEA[], \
                 $6::BIGINT[], $7::BIGINT[]) AS p(o, e, s, r, b, t, m) \
                 ON CONFLICT (owner, epoch) DO NOTHING RETURNING owner, epoch, receiver), \
                 n AS (SELECT pg_notify($8, r) FROM (SELECT DISTINCT receiver AS r FROM p) d) \
                 SELECT k.i FROM UNNEST($1::BIGINT[], $2::BIGINT[]) WITH ORDINALITY AS k(o, e, i) \
                 JOIN p ON p.owner = k.o AND p.epoch = k.e, (SELECT count(*) FROM n) c"
            ),
            &[
                (&owner, Type::INT8_ARRAY),
                (&epoch, Type::INT8_ARRAY),
                (&sender, Type::TEXT_ARRAY),
                (&receiver, Type::TEXT_ARRAY),
                (&bytes, Type::BYTEA_ARRAY),
                (&sent, Type::INT8_ARRAY),
                (&sum, Type::INT8_ARRAY),
                (&OUTBOX_CHANNEL, Type::TEXT),
            ],
        )?;
        flags(parcels.len(), &rows)
    }

    fn send_parcels_in(
        tx: &mut Tx<'_>,
        parcels: &[ParcelRead],
    ) -> Result<Vec<Option<OwnerRead>>, StoreError> {
        send_parcels(tx, parcels, false)
    }

    fn remove_parcels_in(tx: &mut Tx<'_>, keys: &[(i64, i64)]) -> Result<Vec<bool>, StoreError> {
        let owner: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let epoch: Vec<i64> = keys.iter().map(|k| k.1).collect();
        let rows = tx.query_typed(
            "WITH d AS (DELETE FROM tickflow_outbox t USING UNNEST($1::BIGINT[], $2::BIGINT[]) \
             AS g(o, e) WHERE t.owner = g.o AND t.epoch = g.e RETURNING t.owner, t.epoch) \
             SELECT k.i FROM UNNEST($1::BIGINT[], $2::BIGINT[]) WITH ORDINALITY AS k(o, e, i) \
             JOIN d ON d.owner = k.o AND d.epoch = k.e",
            &[(&owner, Type::INT8_ARRAY), (&epoch, Type::INT8_ARRAY)],
        )?;
        flags(keys.len(), &rows)
    }

    fn parcels_in(
        tx: &mut Tx<'_>,
        keys: &[(i64, i64)],
    ) -> Result<Vec<Option<ParcelRead>>, StoreError> {
        let owner: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let epoch: Vec<i64> = keys.iter().map(|k| k.1).collect();
        let rows = tx.query_typed(
            "SELECT k.i, t.owner, t.epoch, t.sender, t.receiver, t.bytes, t.sent, t.sum \
             FROM UNNEST($1::BIGINT[], $2::BIGINT[]) WITH ORDINALITY AS k(o, e, i) \
             JOIN tickflow_outbox t ON t.owner = k.o AND t.epoch = k.e",
            &[(&owner, Type::INT8_ARRAY), (&epoch, Type::INT8_ARRAY)],
        )?;
        let mut out = vec![None; keys.len()];
        for r in &rows {
            let i: i64 = r.try_get(0)?;
            if let Some(slot) = usize::try_from(i - 1).ok().and_then(|i| out.get_mut(i)) {
                *slot = Some(parcel_of(r, 1)?);
            }
        }
        Ok(out)
    }

    fn parcels_of_in(
        tx: &mut Tx<'_>,
        node: &str,
        to: bool,
        limit: usize,
    ) -> Result<Vec<ParcelRead>, StoreError> {
        parcels_of(tx, node, to, limit)
    }

    // One statement each, outside a transaction: one round trip.

    fn read_parcels(
        &mut self,
        node: &str,
        to: bool,
        limit: usize,
    ) -> Result<Vec<ParcelRead>, StoreError> {
        parcels_of(self.client()?, node, to, limit)
    }

    fn send_parcels(
        &mut self,
        parcels: &[ParcelRead],
    ) -> Result<Vec<Option<OwnerRead>>, StoreError> {
        send_parcels(self.client()?, parcels, true)
    }

    fn read_owners(&mut self, owners: &[i64]) -> Result<Vec<OwnerRead>, StoreError> {
        let rows = self.client()?.query_typed(
            "SELECT owner, epoch, node, sum FROM tickflow_owners WHERE owner = ANY($1)",
            &[(&owners, Type::INT8_ARRAY)],
        )?;
        owners_of(&rows)
    }

    fn read_sent(
        &mut self,
        keys: &[(i64, i64)],
    ) -> Result<Vec<(Option<String>, Option<OwnerRead>)>, StoreError> {
        let owner: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let epoch: Vec<i64> = keys.iter().map(|k| k.1).collect();
        let rows = self.client()?.query_typed(
            "SELECT t.sender, w.owner, w.epoch, w.node, w.sum \
             FROM UNNEST($1::BIGINT[], $2::BIGINT[]) WITH ORDINALITY AS k(o, e, i) \
             LEFT JOIN tickflow_outbox t ON t.owner = k.o AND t.epoch = k.e \
             LEFT JOIN tickflow_owners w ON w.owner = k.o ORDER BY k.i",
            &[(&owner, Type::INT8_ARRAY), (&epoch, Type::INT8_ARRAY)],
        )?;
        (rows.iter())
            .map(|r| {
                let sender: Option<String> = col(r, 0, "tickflow_outbox", || "?".into(), "sender")?;
                Ok((sender, owner_at(r, 1)?))
            })
            .collect()
    }
}

/// The registry's compare-and-set of `swaps` in one statement, `before`, `join` and `after`
/// around it (a parcel's removal it must wait on, for one); which moved.
fn swap(
    tx: &mut Tx<'_>,
    swaps: &[OwnerSwap<'_>],
    before: &str,
    join: &str,
    after: &str,
) -> Result<Vec<bool>, StoreError> {
    let owner: Vec<i64> = swaps.iter().map(|s| s.owner).collect();
    let from_epoch: Vec<i64> = swaps.iter().map(|s| s.from_epoch).collect();
    let from_node: Vec<&str> = swaps.iter().map(|s| s.from_node).collect();
    let epoch: Vec<i64> = swaps.iter().map(|s| s.epoch).collect();
    let node: Vec<&str> = swaps.iter().map(|s| s.node).collect();
    let sum: Vec<i64> = swaps.iter().map(|s| s.sum).collect();
    let rows = tx.query_typed(
        &format!(
            "{before}UPDATE tickflow_owners o SET epoch = s.e, node = s.n, sum = s.sum \
             FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::BIGINT[], $5::TEXT[], \
             $6::BIGINT[]) WITH ORDINALITY AS s(o, fe, fn, e, n, sum, i) {join} \
             WHERE o.owner = s.o AND o.epoch = s.fe AND o.node = s.fn RETURNING s.i{after}"
        ),
        &[
            (&owner, Type::INT8_ARRAY),
            (&from_epoch, Type::INT8_ARRAY),
            (&from_node, Type::TEXT_ARRAY),
            (&epoch, Type::INT8_ARRAY),
            (&node, Type::TEXT_ARRAY),
            (&sum, Type::INT8_ARRAY),
        ],
    )?;
    flags(swaps.len(), &rows)
}
