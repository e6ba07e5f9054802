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
use crate::handover::{
    check_parcel, holder_of, holds, not_held, parcel_of, settled, Accepted, Handovers, Holder,
    Parcel, Settled,
};
use crate::row::{read_row, NodeClocks, Row, COLUMNS};
use crate::store::{
    fenced, schema, schema_is_new, wall_ns, Batch, Part, Store, PART_ROWS, SCHEMA_VERSION,
};

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
        let mut part = Vec::with_capacity(PART_ROWS);
        while let Some(r) = rows.next()? {
            let row = read_row!(r, get);
            part.push(row.timer()?);
            if part.len() == PART_ROWS
                && !sink(Part::Timers(std::mem::replace(
                    &mut part,
                    Vec::with_capacity(PART_ROWS),
                )))
            {
                return Ok(());
            }
        }
        if !part.is_empty() {
            sink(Part::Timers(part));
        }
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

fn holder_in(tx: &Connection, owner: OwnerId) -> Result<Option<Holder>, StoreError> {
    let row = tx
        .query_row(
            "SELECT node, epoch FROM tickflow_owners WHERE owner = ?1",
            [owner.get() as i64],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
        )
        .optional()?;
    row.map(|(node, epoch)| holder_of(owner, node, epoch))
        .transpose()
}

impl Handovers for Sqlite {
    fn holder(&mut self, owner: OwnerId) -> Result<Option<Holder>, StoreError> {
        holder_in(&self.conn, owner)
    }

    fn register(&mut self, owner: OwnerId, node: &str) -> Result<Holder, StoreError> {
        let mut tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let holder = Self::register_in(&mut tx, owner, node)?;
        tx.commit()?;
        Ok(holder)
    }

    fn register_in(
        tx: &mut Self::Tx<'_>,
        owner: OwnerId,
        node: &str,
    ) -> Result<Holder, StoreError> {
        tx.execute(
            "INSERT INTO tickflow_owners VALUES (?1, 0, ?2) ON CONFLICT (owner) DO NOTHING",
            params![owner.get() as i64, node],
        )?;
        Ok(holder_in(tx, owner)?.expect("registered in this transaction"))
    }

    fn send(&mut self, parcel: &Parcel) -> Result<(), StoreError> {
        let mut tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Self::send_in(&mut tx, parcel)?;
        Ok(tx.commit()?)
    }

    fn send_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<(), StoreError> {
        check_parcel(parcel)?;
        let holder = holder_in(tx, parcel.owner)?;
        if !holds(&holder, &parcel.sender, parcel.epoch) {
            return Err(not_held(parcel, holder));
        }
        tx.execute(
            "INSERT INTO tickflow_outbox VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (owner, epoch) DO NOTHING",
            params![
                parcel.owner.get() as i64,
                parcel.epoch as i64,
                parcel.sender,
                parcel.receiver,
                parcel.bytes,
                wall_ns() as i64
            ],
        )?;
        Ok(())
    }

    fn inbox(&mut self, node: &str, limit: usize) -> Result<Vec<Parcel>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT owner, epoch, sender, receiver, bytes FROM tickflow_outbox \
             WHERE receiver = ?1 ORDER BY sent, owner LIMIT ?2",
        )?;
        let mut rows = stmt.query(params![node, limit.min(i64::MAX as usize) as i64])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(parcel_of(
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
            )?);
        }
        Ok(out)
    }

    fn accept(
        &mut self,
        parcel: &Parcel,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Accepted, StoreError> {
        let mut effects = effects;
        let mut tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let accepted = Self::accept_in(&mut tx, parcel)?;
        if let Accepted::Stale(_) = accepted {
            // The stale parcel goes; the caller's effects are for a taken owner only.
            tx.execute(
                "DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2",
                params![parcel.owner.get() as i64, parcel.epoch as i64],
            )?;
        } else {
            effects(&mut tx)?;
        }
        tx.commit()?;
        Ok(accepted)
    }

    fn accept_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<Accepted, StoreError> {
        let taken: Option<i64> = tx
            .query_row(
                "UPDATE tickflow_owners SET node = ?3, epoch = epoch + 1 \
                 WHERE owner = ?1 AND epoch = ?2 AND node = ?4 RETURNING epoch",
                params![
                    parcel.owner.get() as i64,
                    parcel.epoch as i64,
                    parcel.receiver,
                    parcel.sender
                ],
                |r| r.get(0),
            )
            .optional()?;
        let Some(epoch) = taken else {
            return Ok(Accepted::Stale(holder_in(tx, parcel.owner)?));
        };
        tx.execute(
            "DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2",
            params![parcel.owner.get() as i64, parcel.epoch as i64],
        )?;
        Ok(Accepted::Taken(epoch as u64))
    }

    fn refuse(&mut self, parcel: &Parcel) -> Result<bool, StoreError> {
        let gone = self.conn.execute(
            "DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2 AND receiver = ?3",
            params![
                parcel.owner.get() as i64,
                parcel.epoch as i64,
                parcel.receiver
            ],
        )?;
        Ok(gone > 0)
    }

    fn settle(&mut self, owner: OwnerId, sender: &str, epoch: u64) -> Result<Settled, StoreError> {
        let tx = self.conn.transaction()?;
        let in_outbox = tx
            .query_row(
                "SELECT 1 FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2 AND sender = ?3",
                params![owner.get() as i64, epoch as i64, sender],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        let holder = holder_in(&tx, owner)?;
        tx.commit()?;
        Ok(settled(in_outbox, sender, epoch, holder))
    }

    // SQLite statements are calls into the library, not round trips: the batch forms run the
    // single forms in one transaction.
    fn send_all(&mut self, parcels: &[Parcel]) -> Result<(), StoreError> {
        let mut tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for p in parcels {
            Self::send_in(&mut tx, p)?;
        }
        Ok(tx.commit()?)
    }

    fn accept_all(
        &mut self,
        parcels: &[Parcel],
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Vec<Accepted>, StoreError> {
        let mut effects = effects;
        let mut tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut out = Vec::with_capacity(parcels.len());
        for p in parcels {
            let a = Self::accept_in(&mut tx, p)?;
            if let Accepted::Stale(_) = a {
                tx.execute(
                    "DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2",
                    params![p.owner.get() as i64, p.epoch as i64],
                )?;
            }
            out.push(a);
        }
        effects(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn settle_all(
        &mut self,
        sent: &[(OwnerId, u64)],
        sender: &str,
    ) -> Result<Vec<Settled>, StoreError> {
        let tx = self.conn.transaction()?;
        let mut out = Vec::with_capacity(sent.len());
        for &(owner, epoch) in sent {
            let in_outbox = tx
                .prepare_cached(
                    "SELECT 1 FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2 AND sender = ?3",
                )?
                .query_row(
                    params![owner.get() as i64, epoch as i64, sender],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            out.push(settled(in_outbox, sender, epoch, holder_in(&tx, owner)?));
        }
        tx.commit()?;
        Ok(out)
    }
}
