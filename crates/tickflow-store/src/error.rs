//! [`StoreError`]: what a store refuses, and why.

use std::fmt;

use tickflow::snapshot::RestoreError;
use tickflow::OwnerId;

/// Why a store operation failed. Nothing was written (a commit is one transaction) and, for a
/// load, nothing was set.
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
    /// A write for an owner that another process took over since this one got it: the whole
    /// commit was refused, and the newer owner's rows are as it wrote them.
    Fenced {
        /// The owner.
        owner: OwnerId,
        /// The epoch this process holds.
        held: u64,
        /// The epoch the database holds.
        current: u64,
    },
    /// A handover from a node the registry does not name as the owner's holder at that
    /// epoch: nothing was sent.
    NotHeld {
        /// The owner.
        owner: OwnerId,
        /// The node that tried.
        node: String,
        /// The epoch it thought it held.
        epoch: u64,
        /// Who holds it (`None`: no one registered it).
        holder: Option<crate::Holder>,
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
            StoreError::Fenced {
                owner,
                held,
                current,
            } => write!(
                f,
                "{owner:?} moved on: this process holds epoch {held}, the store epoch {current}; \
                 the commit was refused"
            ),
            StoreError::NotHeld {
                owner,
                node,
                epoch,
                holder,
            } => write!(
                f,
                "{owner:?} is not held by {node:?} at epoch {epoch} (the registry says {holder:?})"
            ),
            StoreError::Effects(e) => write!(f, "the effects hook failed: {e}"),
            #[cfg(feature = "sqlite")]
            StoreError::Sqlite(e) => write!(f, "sqlite: {e}"),
            #[cfg(feature = "postgres")]
            StoreError::Postgres(e) => write!(f, "postgres: {e}"),
            StoreError::Setting(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Restore(e) => Some(e),
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
