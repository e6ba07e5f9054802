//! The store as the arena's medium between processes: a frame's inputs and outputs in a table
//! beside `tickflow-store`'s; actors move through its owner registry and outbox, and each
//! shard's image is the store's own (`Durable::commit_image`).
//!
//! Nothing here waits on a signal: a reader polls (`POLL`) on both databases, which on a
//! frame barrier costs at most that much latency per frame.

use std::time::Duration;

use tickflow::OwnerId;
use tickflow_store::{Accepted, Handovers, Holder, Parcel, Postgres, Settled, Sqlite, Store};

use crate::sql::{err, Sql, V};

/// How long a reader sleeps between two looks at the store.
pub(crate) const POLL: Duration = Duration::from_micros(200);

/// Kinds of rows in `arena_frames`.
const INPUT: i64 = 0;
const OUTPUT: i64 = 1;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS arena_frames (
    shard BIGINT NOT NULL, frame BIGINT NOT NULL, kind BIGINT NOT NULL, bytes BLOB NOT NULL,
    PRIMARY KEY (shard, frame, kind));
";

/// What a shard's frame commits, in its `Durable` commit's transaction.
pub(crate) struct FrameWrite<'a> {
    pub(crate) shard: usize,
    pub(crate) frame: u64,
    pub(crate) node: &'a str,
    pub(crate) output: &'a [u8],
    pub(crate) spawned: &'a [OwnerId],
    pub(crate) sends: &'a [Parcel],
    pub(crate) accepts: &'a [Parcel],
    /// Parcels refused (damaged, stale, delivered twice): removed.
    pub(crate) refuses: &'a [Parcel],
}

/// The arena's store: SQLite (one file shared by the processes of one machine) or
/// PostgreSQL (processes on many machines).
pub(crate) enum Mailbox {
    Sqlite(Sqlite),
    Postgres(Postgres),
}

/// Runs `f` in a transaction of whichever store, committing when it returns `Ok`.
macro_rules! in_tx {
    ($mb:expr, |$tx:ident, $S:ident| $body:expr) => {
        match $mb {
            Mailbox::Sqlite(s) => {
                let behavior = rusqlite::TransactionBehavior::Immediate;
                let mut $tx = s
                    .connection()
                    .transaction_with_behavior(behavior)
                    .map_err(err)?;
                type $S = Sqlite;
                let out = $body?;
                $tx.commit().map_err(err)?;
                Ok(out)
            }
            Mailbox::Postgres(p) => {
                let mut $tx = p.client().map_err(err)?.transaction().map_err(err)?;
                type $S = Postgres;
                let out = $body?;
                $tx.commit().map_err(err)?;
                Ok(out)
            }
        }
    };
}

impl Mailbox {
    /// `sqlite:PATH` or a `postgres://` URL (tables in `schema`, when given).
    pub(crate) fn open(store: &str, schema: Option<&str>) -> Result<Mailbox, String> {
        let mut mb = if let Some(path) = store.strip_prefix("sqlite:") {
            Mailbox::Sqlite(Sqlite::create(path).map_err(err)?)
        } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
            let pg = match schema {
                Some(schema) => Postgres::create_in(store, schema),
                None => Postgres::create(store),
            };
            Mailbox::Postgres(pg.map_err(err)?)
        } else {
            return Err(format!(
                "--store {store:?}: give sqlite:PATH or a postgres:// URL"
            ));
        };
        let made: Result<u64, String> = in_tx!(&mut mb, |tx, _S| {
            let mut r: Result<u64, String> = Ok(0);
            for stmt in TABLES.split(';').filter(|s| !s.trim().is_empty()) {
                r = tx.exec(stmt, &[]);
                if r.is_err() {
                    break;
                }
            }
            r
        });
        made?;
        Ok(mb)
    }

    fn put(&mut self, rows: &[(usize, u64, i64, &[u8])]) -> Result<(), String> {
        let done: Result<u64, String> = in_tx!(self, |tx, _S| {
            let mut r: Result<u64, String> = Ok(0);
            for &(shard, frame, kind, bytes) in rows {
                r = tx.exec(
                    "INSERT INTO arena_frames VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT (shard, frame, kind) DO NOTHING",
                    &[
                        V::I(shard as i64),
                        V::I(frame as i64),
                        V::I(kind),
                        V::B(bytes),
                    ],
                );
                if r.is_err() {
                    break;
                }
            }
            r
        });
        done.map(drop)
    }

    fn get(&mut self, shard: usize, frame: u64, kind: i64) -> Result<Option<Vec<u8>>, String> {
        in_tx!(self, |tx, _S| tx.bytes(
            "SELECT bytes FROM arena_frames WHERE shard = ?1 AND frame = ?2 AND kind = ?3",
            &[V::I(shard as i64), V::I(frame as i64), V::I(kind)],
        ))
    }

    /// The director's inputs for a frame, every shard's in one transaction.
    pub(crate) fn put_inputs(
        &mut self,
        frame: u64,
        inputs: &[(usize, Vec<u8>)],
    ) -> Result<(), String> {
        let rows: Vec<_> = (inputs.iter())
            .map(|(k, b)| (*k, frame, INPUT, b.as_slice()))
            .collect();
        self.put(&rows)
    }

    pub(crate) fn input(&mut self, shard: usize, frame: u64) -> Result<Option<Vec<u8>>, String> {
        self.get(shard, frame, INPUT)
    }

    pub(crate) fn output(&mut self, shard: usize, frame: u64) -> Result<Option<Vec<u8>>, String> {
        self.get(shard, frame, OUTPUT)
    }

    /// Whether the store holds nothing of a run yet (no frame or owner).
    pub(crate) fn is_fresh(&mut self) -> Result<bool, String> {
        let arena: Result<bool, String> = in_tx!(&mut *self, |tx, _S| {
            let any = tx.pairs("SELECT 0, '' FROM arena_frames LIMIT 1", &[]);
            any.map(|rows| rows.is_empty())
        });
        Ok(arena? && self.owners()?.is_empty())
    }

    /// Every registered owner and its holder, in owner order.
    pub(crate) fn owners(&mut self) -> Result<Vec<(OwnerId, Holder)>, String> {
        match self {
            Mailbox::Sqlite(s) => s.owners(),
            Mailbox::Postgres(p) => p.owners(),
        }
        .map_err(err)
    }

    pub(crate) fn inbox(&mut self, node: &str) -> Result<Vec<Parcel>, String> {
        match self {
            Mailbox::Sqlite(s) => s.inbox(node, usize::MAX),
            Mailbox::Postgres(p) => p.inbox(node, usize::MAX),
        }
        .map_err(err)
    }

    pub(crate) fn holder(&mut self, owner: OwnerId) -> Result<Option<Holder>, String> {
        match self {
            Mailbox::Sqlite(s) => s.holder(owner),
            Mailbox::Postgres(p) => p.holder(owner),
        }
        .map_err(err)
    }

    pub(crate) fn settle(
        &mut self,
        owner: OwnerId,
        node: &str,
        epoch: u64,
    ) -> Result<Settled, String> {
        match self {
            Mailbox::Sqlite(s) => s.settle(owner, node, epoch),
            Mailbox::Postgres(p) => p.settle(owner, node, epoch),
        }
        .map_err(err)
    }

    /// Puts a parcel in the outbox as it is, unchecked (the fault runs' damaged and
    /// repeated deliveries); `false` when one with its owner and epoch is there.
    pub(crate) fn inject(&mut self, p: &Parcel) -> Result<bool, String> {
        let row = p.to_row(0);
        let put: Result<Vec<bool>, String> = in_tx!(self, |tx, S| S::put_parcels_in(
            &mut tx,
            std::slice::from_ref(&row)
        )
        .map_err(err));
        Ok(put?[0])
    }
}

/// A shard's frame in its commit's transaction `tx`: its output, the owners it spawned, and
/// the parcels it takes, sends and refuses.
pub(crate) fn write_frame<S: Handovers>(
    tx: &mut S::Tx<'_>,
    w: &FrameWrite<'_>,
) -> Result<(), String>
where
    for<'t> S::Tx<'t>: Sql,
{
    tx.exec(
        "INSERT INTO arena_frames VALUES (?1, ?2, ?3, ?4)",
        &[
            V::I(w.shard as i64),
            V::I(w.frame as i64),
            V::I(OUTPUT),
            V::B(w.output),
        ],
    )?;
    for &owner in w.spawned {
        S::register_in(tx, owner, w.node).map_err(err)?;
    }
    // Taken before sent: an actor that arrives and walks on in one frame.
    for p in w.accepts {
        if let Accepted::Stale(h) = S::accept_in(tx, p).map_err(err)? {
            return Err(format!("the parcel of {:?} is stale: {h:?}", p.owner));
        }
    }
    for p in w.sends {
        S::send_in(tx, p).map_err(err)?;
    }
    for p in w.refuses {
        S::refuse_in(tx, p).map_err(err)?;
    }
    Ok(())
}
