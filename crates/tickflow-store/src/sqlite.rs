//! [`Sqlite`]: the embedded store, one file and no server.
//!
//! The file is in WAL mode with `synchronous = NORMAL`: a commit is one append to the
//! write-ahead log, and a process killed at any point (SIGKILL included) loses no committed
//! frame; only an operating-system crash or power loss may take the last few commits back
//! (`durable_sync(true)` makes every commit wait for the disk). Several processes of one
//! machine may share the file: writers take turns (`BEGIN IMMEDIATE`, waiting up to 5 s).

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use tickflow::timer::DurableChange;
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::row::{read_row, NodeClocks, Row, COLUMNS};
use crate::store::{fenced, schema, schema_is_new, Batch, Part, Parts, Store, SCHEMA_VERSION};

/// Durable timers in a SQLite file (see the module docs for what a commit costs and keeps).
///
/// ```
/// use tickflow_store::{Durable, Sqlite};
///
/// let dir = std::env::temp_dir().join(format!("tickflow-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let store = Sqlite::open(dir.join("world.db")).unwrap();
/// let durable = Durable::new(store, "zone-1");
/// # drop(durable); std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct Sqlite {
    conn: Connection,
}

impl Sqlite {
    /// Opens (or creates) the store in the file at `path`, creating its tables. A file that is
    /// not a SQLite database, or holds another schema version, is refused.
    pub fn open(path: impl AsRef<Path>) -> Result<Sqlite, StoreError> {
        Sqlite::from_connection(Connection::open(path)?)
    }

    /// A store in memory, gone when dropped (tests and tools).
    pub fn in_memory() -> Result<Sqlite, StoreError> {
        Sqlite::from_connection(Connection::open_in_memory()?)
    }

    fn from_connection(conn: Connection) -> Result<Sqlite, StoreError> {
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let mut store = Sqlite { conn };
        store.migrate()?;
        Ok(store)
    }

    /// `true`: every commit waits until it is on disk (`synchronous = FULL`), surviving an
    /// operating-system crash too, at the cost of an fsync per commit.
    pub fn durable_sync(&mut self, on: bool) -> Result<(), StoreError> {
        let mode = if on { "FULL" } else { "NORMAL" };
        Ok(self.conn.pragma_update(None, "synchronous", mode)?)
    }

    /// The connection, for your own tables and queries outside a commit.
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(&schema("INTEGER", "INTEGER", "BLOB"))?;
        let found: Option<i64> = tx
            .query_row("SELECT version FROM tickflow_schema", [], |r| r.get(0))
            .optional()?;
        if schema_is_new(found)? {
            tx.execute("INSERT INTO tickflow_schema VALUES (?1)", [SCHEMA_VERSION])?;
        }
        Ok(tx.commit()?)
    }
}

impl Store for Sqlite {
    type Tx<'t> = rusqlite::Transaction<'t>;

    fn commit(
        &mut self,
        batch: &Batch<'_>,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut effects = effects;
        let mut tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut epoch_of =
                tx.prepare_cached("SELECT epoch FROM tickflow_owners WHERE owner = ?1")?;
            fenced(batch.fences, |o| {
                let e: Option<i64> = epoch_of
                    .query_row([o.get() as i64], |r| r.get(0))
                    .optional()?;
                Ok(e.map(|e| e as u64))
            })?;
        }
        if batch.replace {
            tx.execute("DELETE FROM tickflow_timers WHERE node = ?1", [batch.node])?;
        }
        {
            let mut delete =
                tx.prepare_cached("DELETE FROM tickflow_timers WHERE owner = ?1 AND name = ?2")?;
            let mut upsert = tx.prepare_cached(&format!(
                "INSERT OR REPLACE INTO tickflow_timers (node, epoch, {COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
            ))?;
            for change in batch.changes {
                match change {
                    DurableChange::Removed { owner, name } => {
                        delete.execute(params![owner.get() as i64, name])?;
                    }
                    DurableChange::Set(t) => {
                        let r = Row::of(t);
                        upsert.execute(params![
                            batch.node,
                            batch.epoch(t.owner) as i64,
                            r.owner,
                            r.name,
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
                        ])?;
                    }
                }
            }
            let [game, real, frames, frame, wall] = batch.clocks.columns();
            tx.prepare_cached(
                "INSERT OR REPLACE INTO tickflow_nodes VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![batch.node, game, real, frames, frame, wall])?;
        }
        effects(&mut tx)?;
        Ok(tx.commit()?)
    }

    fn load_parts(
        &mut self,
        node: &str,
        sink: &mut dyn FnMut(Part) -> bool,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let clocks = tx
            .query_row(
                "SELECT game, real, frames, frame, wall_ns FROM tickflow_nodes WHERE node = ?1",
                [node],
                |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?]),
            )
            .optional()?
            .map(|c| NodeClocks::from_columns(node, c))
            .transpose()?;
        let rows: i64 = tx.query_row(
            "SELECT count(*) FROM tickflow_timers WHERE node = ?1",
            [node],
            |r| r.get(0),
        )?;
        let rows = usize::try_from(rows).unwrap_or(0);
        if !sink(Part::Clocks { clocks, rows }) {
            return Ok(());
        }
        let mut stmt = tx.prepare(&format!(
            "SELECT {COLUMNS} FROM tickflow_timers WHERE node = ?1"
        ))?;
        let mut rows = stmt.query([node])?;
        let mut parts = Parts::new(sink);
        while let Some(r) = rows.next()? {
            if !parts.push(read_row!(r, get).timer()?) {
                return Ok(());
            }
        }
        parts.finish();
        Ok(())
    }

    fn claim(&mut self, owner: OwnerId, node: &str) -> Result<u64, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let epoch: i64 = tx.query_row(
            "INSERT INTO tickflow_owners VALUES (?1, 1, ?2) ON CONFLICT (owner) \
             DO UPDATE SET epoch = epoch + 1, node = excluded.node RETURNING epoch",
            params![owner.get() as i64, node],
            |r| r.get(0),
        )?;
        tx.commit()?;
        Ok(epoch as u64)
    }
}
