//! [`StoreError`]: what a store refuses, and why.

use std::fmt;

use tickflow::snapshot::RestoreError;
use tickflow::OwnerId;

/// Why a store operation failed. Nothing was written (a commit is one transaction) and, for a
/// load, nothing was set — except [`StoreError::Uncertain`], whose commit may have landed (a
/// [`Durable`](crate::Durable) learns which by itself at its next commit).
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The database was written by another version of this crate's schema.
    Version {
        /// The schema version the database holds.
        found: i64,
        /// The version this build reads and writes ([`SCHEMA_VERSION`](crate::SCHEMA_VERSION)).
        supported: i64,
    },
    /// A stored row cannot be a durable timer: damaged or edited data.
    BadRow {
        /// The table.
        table: &'static str,
        /// The row's key, as stored (owner and name, or the node).
        key: String,
        /// The column.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The rows are each valid but do not make a scheduler (a callback the resolver cannot
    /// bind, two rows with one key, ...).
    Restore(RestoreError),
    /// A write or a handover for an owner that the registry gives another node (or the same
    /// node at another epoch): nothing was written. A node writes only the owners it holds.
    NotHeld {
        /// The owner.
        owner: OwnerId,
        /// The node that tried.
        node: String,
        /// The epoch it thought it held.
        epoch: u64,
        /// Who holds it (`None`: no one registered it).
        holder: Option<crate::vocab::Holder>,
    },
    /// A value over the store's limits, refused before anything was written: a durable
    /// timer's name or payload, or a parcel.
    TooLarge {
        /// What it belongs to (a timer's owner and name, or a parcel's owner and epoch).
        key: String,
        /// Which value.
        field: &'static str,
        /// Its size (bytes).
        len: usize,
        /// The limit (bytes).
        max: usize,
    },
    /// The connection failed while a commit's `COMMIT` or its answer was on the way: it may
    /// have landed or not. A [`Durable`](crate::Durable) finds out at its next commit (from the
    /// node's commit number) and never applies a frame's changes twice; keep your effects
    /// until an `end_frame` returns the commit that covers their frame.
    Uncertain(Box<StoreError>),
    /// Another live process runs this node: a node is run by one process at a time.
    NodeHeld {
        /// The node.
        node: String,
        /// The process that holds it (its id, on its machine).
        pid: u32,
        /// How long its lease lasts unless it renews it (it renews it with each commit).
        for_ms: u64,
    },
    /// This process no longer runs the node: another process took it over (this one was
    /// paused or cut off past its lease). Nothing was written; stop this process's world.
    NodeLost {
        /// The node.
        node: String,
    },
    /// This node was fenced — its process stalled or was cut off past its lease, and live
    /// nodes adopted owners of it ([`Durable::set_takeover`](crate::Durable::set_takeover))
    /// — and has rejoined: it runs again with the owners it kept. The commit did not land; its
    /// changes and frames stay queued for the next commit, but for the owners taken, which
    /// [`Durable::handovers`](crate::Durable::handovers) lists as
    /// [`Handover::TakenOver`](crate::Handover::TakenOver): drop your state of them and the
    /// effects you keep for them, and go on.
    Rejoined {
        /// The node.
        node: String,
        /// How many owners were taken.
        taken: usize,
    },
    /// The connection to the database is lost, and the next try to make a new one waits a
    /// little (each failed try doubles the wait, up to a second): nothing was written.
    Disconnected {
        /// Why the last try failed.
        last: String,
        /// How long until the next try.
        retry_in_ms: u64,
    },
    /// The database is not a store, or lacks part of one (a table, a node's row that its
    /// rows need): nothing is made up in its place.
    Missing {
        /// What is missing, and what to do.
        what: String,
    },
    /// Your effects hook failed; the commit was rolled back with it.
    Effects(Box<dyn std::error::Error + Send + Sync>),
    /// The SQLite database (open, read or write).
    #[cfg(feature = "sqlite")]
    Sqlite(rusqlite::Error),
    /// The PostgreSQL server (connect, read or write).
    #[cfg(feature = "postgres")]
    Postgres(postgres::Error),
    /// A setting the store cannot use (a schema name that is not an identifier, say).
    Setting(String),
}

impl StoreError {
    /// Whether a commit may have landed ([`StoreError::Uncertain`]).
    pub fn is_uncertain(&self) -> bool {
        matches!(self, StoreError::Uncertain(_))
    }

    /// Whether the owner written or sent is another node's ([`StoreError::NotHeld`]).
    pub fn is_fenced(&self) -> bool {
        matches!(self, StoreError::NotHeld { .. })
    }

    /// Whether the database could not be reached or answered with an error of its own (the
    /// connection, a lock, the disk), as opposed to a refusal by this crate's rules: such an
    /// operation may succeed when tried again.
    pub fn is_database(&self) -> bool {
        match self {
            StoreError::Uncertain(_) | StoreError::Disconnected { .. } => true,
            #[cfg(feature = "sqlite")]
            StoreError::Sqlite(_) => true,
            #[cfg(feature = "postgres")]
            StoreError::Postgres(_) => true,
            _ => false,
        }
    }

    pub(crate) fn bad_row(
        table: &'static str,
        key: impl Into<String>,
        field: &'static str,
        reason: impl Into<String>,
    ) -> StoreError {
        StoreError::BadRow {
            table,
            key: key.into(),
            field,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Version { found, supported } => write!(
                f,
                "the store holds schema version {found}; this build reads version {supported}"
            ),
            StoreError::BadRow {
                table,
                key,
                field,
                reason,
            } => write!(f, "{table} row {key}: column {field} {reason}"),
            StoreError::Restore(e) => write!(f, "stored timers cannot be loaded: {e}"),
            StoreError::NotHeld {
                owner,
                node,
                epoch,
                holder,
            } => write!(
                f,
                "{owner:?} is not held by {node:?} at epoch {epoch} (the registry says {holder:?})"
            ),
            StoreError::TooLarge {
                key,
                field,
                len,
                max,
            } => write!(
                f,
                "{key}: {field} is {len} bytes, over the store's limit of {max}; nothing was \
                 written (shorten it, or clear the timer)"
            ),
            StoreError::Uncertain(e) => write!(
                f,
                "the connection failed at commit, which may or may not have landed (the next \
                 commit finds out): {e}"
            ),
            StoreError::NodeHeld { node, pid, for_ms } => write!(
                f,
                "node {node:?} is run by another live process (pid {pid}; its lease lasts \
                 {for_ms} ms more unless renewed): one process per node"
            ),
            StoreError::NodeLost { node } => write!(
                f,
                "node {node:?} was taken over by another process: this one stops committing"
            ),
            StoreError::Rejoined { node, taken } => write!(
                f,
                "node {node:?} was fenced (it stalled or was cut off past its lease) and \
                 rejoined: {taken} of its owners were adopted by other nodes; the commit did \
                 not land and the next one writes the rest"
            ),
            StoreError::Missing { what } => write!(f, "{what}"),
            StoreError::Disconnected { last, retry_in_ms } => write!(
                f,
                "the database is out of reach ({last}); the next try to connect is in \
                 {retry_in_ms} ms"
            ),
            StoreError::Effects(e) => write!(f, "the effects hook failed: {e}"),
            #[cfg(feature = "sqlite")]
            StoreError::Sqlite(e) => write!(f, "sqlite: {e}"),
            #[cfg(feature = "postgres")]
            StoreError::Postgres(e) => write_postgres(f, e),
            StoreError::Setting(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Restore(e) => Some(e),
            StoreError::Uncertain(e) => Some(&**e),
            StoreError::Effects(e) => Some(&**e),
            #[cfg(feature = "sqlite")]
            StoreError::Sqlite(e) => Some(e),
            #[cfg(feature = "postgres")]
            StoreError::Postgres(e) => Some(e),
            _ => None,
        }
    }
}

impl From<RestoreError> for StoreError {
    fn from(e: RestoreError) -> Self {
        StoreError::Restore(e)
    }
}

#[cfg(feature = "sqlite")]
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e)
    }
}

#[cfg(feature = "postgres")]
impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> Self {
        StoreError::Postgres(e)
    }
}

/// A PostgreSQL error with the server's own words: its message, SQLSTATE, detail and hint
/// (the client's `Display` says only "db error"), or the client's error and its cause.
#[cfg(feature = "postgres")]
fn write_postgres(f: &mut fmt::Formatter<'_>, e: &postgres::Error) -> fmt::Result {
    if let Some(db) = e.as_db_error() {
        write!(
            f,
            "postgres: {} (SQLSTATE {})",
            db.message(),
            db.code().code()
        )?;
        if let Some(detail) = db.detail() {
            write!(f, "; {detail}")?;
        }
        if let Some(hint) = db.hint() {
            write!(f, "; hint: {hint}")?;
        }
        return Ok(());
    }
    write!(f, "postgres: {e}")?;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        write!(f, ": {s}")?;
        source = s.source();
    }
    Ok(())
}
