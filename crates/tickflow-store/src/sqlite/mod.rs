//! [`Sqlite`]: the embedded store, one file and no server.
//!
//! The file is in WAL mode with `synchronous = NORMAL`: a commit is one append to the
//! write-ahead log, and a process killed at any point (SIGKILL included) loses no committed
//! frame. What it can lose, and the setting that prevents it:
//!
//! - An operating-system crash or power loss may take the last few commits back (their log
//!   frames were written but not yet synced): the node resumes at an earlier commit, whole and
//!   consistent. `durable_sync(true)` makes every commit wait for the disk, at an fsync each.
//! - SQLite checks each log frame against a checksum when it opens the file and keeps the log
//!   only up to the first frame that fails, as it must after a torn write. So a damaged or
//!   cut `-wal` file also takes back the commits from the damage on, silently, and no setting
//!   of SQLite's tells the two apart. Keep the `-wal` file with the database (copy both, or
//!   checkpoint before copying), and put both on storage that does not corrupt data.
//!
//! Rows themselves carry checksums, and the node's row their count and XOR, so damage to the
//! database file is refused naming the row rather than loaded as different timers. Several
//! processes of one machine may share the file: writers take turns (`BEGIN IMMEDIATE`,
//! waiting up to 5 s for the lock).

mod ops;
mod rows;

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};

use crate::backend::SCHEMA_VERSION;
use crate::backend::{schema, TABLES};
use crate::error::StoreError;

/// Durable timers in a SQLite file (see the module docs for what a commit costs and keeps).
///
/// ```
/// use tickflow_store::{Durable, Sqlite};
///
/// let dir = std::env::temp_dir().join(format!("tickflow-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("world.db");
/// assert!(Sqlite::open(&path).is_err(), "no store there yet");
/// let store = Sqlite::create(&path).unwrap();
/// let durable = Durable::new(store, "zone-1");
/// # drop(durable); std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct Sqlite {
    conn: Connection,
}

impl std::fmt::Debug for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite")
            .field("path", &self.conn.path())
            .finish()
    }
}

impl Sqlite {
    /// Opens the store in the file at `path`. A file that is missing, is not a SQLite
    /// database, lacks tickflow's tables (an empty file among them) or holds another schema
    /// version is refused: a world is never made up in place of one that is gone (a store of
    /// schema 2, the one before, is upgraded in place: a column is added). Use
    /// [`create`](Self::create) for a new store.
    pub fn open(path: impl AsRef<Path>) -> Result<Sqlite, StoreError> {
        let path = path.as_ref();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| StoreError::Missing {
            what: format!(
                "no store at {}: {e} (Sqlite::create makes a new one)",
                path.display()
            ),
        })?;
        let mut store = Sqlite::setup(conn)?;
        store.check(false)?;
        Ok(store)
    }

    /// Opens the store in the file at `path`, making the file and tickflow's tables when there
    /// are none. A file with some of the tables but not all, or of another schema version, is
    /// refused as [`open`](Self::open) refuses it.
    pub fn create(path: impl AsRef<Path>) -> Result<Sqlite, StoreError> {
        let mut store = Sqlite::setup(Connection::open(path)?)?;
        store.check(true)?;
        Ok(store)
    }

    /// A new store in memory, gone when dropped (tests and tools).
    pub fn in_memory() -> Result<Sqlite, StoreError> {
        let mut store = Sqlite::setup(Connection::open_in_memory()?)?;
        store.check(true)?;
        Ok(store)
    }

    fn setup(conn: Connection) -> Result<Sqlite, StoreError> {
        conn.busy_timeout(Duration::from_secs(5))?;
        // Setting the mode takes a lock even when it is WAL already, and fails at once (no
        // busy wait) while another process recovers the log after a crash: set it only on a
        // new file.
        // Two processes making a new file at once: one of them waits for the other's change.
        let start = std::time::Instant::now();
        loop {
            let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
            if mode.eq_ignore_ascii_case("wal") {
                break;
            }
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && start.elapsed() < Duration::from_secs(5) =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                r => r?,
            }
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(Sqlite { conn })
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

    /// Checks the tables and the schema version; `create` makes the tables when there are none.
    fn check(&mut self, create: bool) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut have = Vec::new();
        for t in TABLES {
            let found: Option<i64> = tx
                .query_row(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [t],
                    |r| r.get(0),
                )
                .optional()?;
            if found.is_some() {
                have.push(t);
            }
        }
        if have.is_empty() && create {
            tx.execute_batch(&schema("INTEGER", "INTEGER", "BLOB", " WITHOUT ROWID"))?;
            tx.execute(
                "INSERT INTO tickflow_schema (one, version) VALUES (1, ?1)",
                [SCHEMA_VERSION],
            )?;
            return Ok(tx.commit()?);
        }
        crate::backend::check_tables(&have, false)?;
        let found: Vec<i64> = {
            let mut stmt = tx.prepare("SELECT version FROM tickflow_schema")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        let exec = |sql: &str| Ok(tx.execute_batch(sql)?);
        crate::backend::settle_schema(&have, &found, "INTEGER", "BLOB", exec)?;
        Ok(tx.commit()?)
    }
}
