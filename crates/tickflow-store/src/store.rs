//! [`Store`]: the transaction primitives a database gives the durable tier. Everything above
//! them — [`Durable`](crate::Durable)'s commit and resume, the [`Handovers`](crate::Handovers)
//! operations — is written once over these, so both databases behave alike by construction.
//!
//! Ground rules for an implementation:
//!
//! - Each method but [`begin`](Store::begin) runs inside the caller's transaction and changes
//!   nothing outside it; a transaction that is dropped without [`finish`](Store::finish) rolls
//!   back.
//! - A method returns rows as their columns (the types in [`backend`](crate::backend)); it does
//!   not check them. Checks, checksums and errors that name the row are the caller's, written
//!   once.
//! - Batch methods take and return slices in one order, and cost a fixed number of round trips
//!   whatever their length where the database has round trips (PostgreSQL: one statement over
//!   arrays).
//! - [`finish`](Store::finish) reports a failure whose outcome is unknown (the connection died
//!   while the `COMMIT` or its answer was on the way) as [`StoreError::Uncertain`], and every
//!   other failure as what it is.

use crate::backend::{ImageRead, NodeRead, NodeRow, OwnerRead, OwnerSwap, ParcelRead, Row};
use crate::error::StoreError;

/// A database that keeps durable timers, the owner registry and the handover outbox:
/// [`Sqlite`](crate::Sqlite) and [`Postgres`](crate::Postgres). Users call it through
/// [`Durable`](crate::Durable) and [`Handovers`](crate::Handovers); the methods here are the
/// primitives those are written over (see the module docs), each inside a transaction the
/// caller owns. `Send`, as a resume reads on a thread of its own while it sets what was read.
pub trait Store: Send {
    /// An open transaction: what your effects hook writes into (a `rusqlite::Transaction` or
    /// a `postgres::Transaction`), so that your effects and the store's rows commit together
    /// or not at all.
    type Tx<'t>;

    /// Opens a transaction: `write` for one that will write (SQLite takes the write lock at
    /// once, so two writers never deadlock on an upgrade). One that does not write reads one
    /// snapshot of the database from its first statement to its end (PostgreSQL: repeatable
    /// read, read only): what it reads in several statements agrees. A backend that lost its
    /// connection makes a new one here.
    fn begin(&mut self, write: bool) -> Result<Self::Tx<'_>, StoreError>;

    /// Commits. A failure whose outcome is unknown is [`StoreError::Uncertain`].
    fn finish(tx: Self::Tx<'_>) -> Result<(), StoreError>;

    /// Now, in microseconds since the Unix epoch, on the clock leases are judged by (the
    /// database server's, where there is one).
    fn now_us_in(tx: &mut Self::Tx<'_>) -> Result<i64, StoreError>;

    /// Now on the same clock as [`now_us_in`](Self::now_us_in), when it can be read without a
    /// transaction (SQLite: this machine's clock); `None` for a server's. A commit stamps its
    /// clocks with it before it waits for the write lock, so that the stamp stands for the
    /// frame's end, not for the end of a wait.
    fn clock_us(&mut self) -> Option<i64> {
        None
    }

    /// Locks `node`'s row for this transaction and returns
    /// [`now_us_in`](Self::now_us_in) as it was before any wait for it. A commit takes its
    /// own node's row first, before it writes anything: so an adopter, which takes the row of
    /// the node it adopts from before it deletes that node's rows, never holds the row that
    /// node's own commit waits for while that commit holds the rows it waits for.
    fn lock_node_in(tx: &mut Self::Tx<'_>, node: &str) -> Result<i64, StoreError> {
        let now = Self::now_us_in(tx)?;
        Self::node_in(tx, node, true)?;
        Ok(now)
    }

    /// Locks the rows of `nodes`, waiting for them only briefly, and says which it holds (all
    /// or, after a short wait, none). An adopter takes its lost nodes' rows this way after its
    /// own: a row held for long is being written by the node itself, back (its owners are
    /// then not adopted in this commit), and a commit never waits long for one, so two nodes
    /// that each take the other for lost cannot wait for each other. PostgreSQL waits 50 ms
    /// (`lock_timeout`, under a savepoint); the default locks them all, waiting (a database
    /// with one writer at a time, like SQLite, never waits for a row).
    fn try_lock_nodes_in(tx: &mut Self::Tx<'_>, nodes: &[&str]) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for node in nodes {
            if Self::node_in(tx, node, true)?.is_some() {
                out.push(node.to_string());
            }
        }
        Ok(out)
    }

    /// A node's row (locked for this transaction when `lock`).
    fn node_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        lock: bool,
    ) -> Result<Option<NodeRead>, StoreError>;

    /// Every node's row, with its name, in name order: a fleet's members and their leases.
    fn nodes_in(tx: &mut Self::Tx<'_>) -> Result<Vec<(String, NodeRead)>, StoreError>;

    /// Writes a node's row whole: its columns, checksum and lease (insert or replace).
    fn put_node_in(tx: &mut Self::Tx<'_>, node: &str, row: &NodeRead) -> Result<(), StoreError>;

    /// Advances a node's row to `row` (checksum `sum`) and renews its lease to now plus
    /// `lease_us`, only if `holder` holds it and its commit number is `committed`; `false`
    /// when not (then nothing changed).
    fn advance_node_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        holder: u64,
        committed: u64,
        row: &NodeRow,
        sum: i64,
        lease_us: i64,
    ) -> Result<bool, StoreError>;

    /// The registry rows of `owners` that exist, in any order (locked for this transaction
    /// when `lock`).
    fn owners_in(
        tx: &mut Self::Tx<'_>,
        owners: &[i64],
        lock: bool,
    ) -> Result<Vec<OwnerRead>, StoreError>;

    /// Every registry row naming `node`.
    fn owners_of_in(tx: &mut Self::Tx<'_>, node: &str) -> Result<Vec<OwnerRead>, StoreError>;

    /// Up to `limit` registry rows naming `node` whose owner is above `after`, in owner
    /// order: a large node read a page at a time (an index on `(node, owner)` serves it).
    /// The default reads them all and keeps the page; both backends read only the page.
    fn owners_page_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<OwnerRead>, StoreError> {
        let mut rows = Self::owners_of_in(tx, node)?;
        rows.retain(|r| r.owner > after);
        rows.sort_unstable_by_key(|r| r.owner);
        rows.truncate(limit);
        Ok(rows)
    }

    /// Every registry row, in owner order (tools and tests).
    fn all_owners_in(tx: &mut Self::Tx<'_>) -> Result<Vec<OwnerRead>, StoreError>;

    /// Inserts registry rows whose owner has none; an owner that has one keeps it. Which were
    /// inserted.
    fn insert_owners_in(tx: &mut Self::Tx<'_>, rows: &[OwnerRead])
        -> Result<Vec<bool>, StoreError>;

    /// Takes parcels: for each, the parcel keyed by its owner and `from_epoch` is removed from
    /// the outbox, and only when it was there, a compare-and-set of its owner's registry row
    /// (moved to its new value when it is at its `from`). Which owners moved. (A parcel that
    /// is gone — refused, or taken by another node — moves nothing: two nodes that imported
    /// one parcel, a lost node's and the node that received it in its place, cannot both
    /// take it, nor one take what the other refused.)
    fn take_parcels_in(
        tx: &mut Self::Tx<'_>,
        swaps: &[OwnerSwap<'_>],
    ) -> Result<Vec<bool>, StoreError>;

    /// Compare-and-sets of registry rows with no parcel (a takeover's adoptions): each moved
    /// to its new value when it is at its `from`. Which moved.
    fn swap_owners_in(
        tx: &mut Self::Tx<'_>,
        swaps: &[OwnerSwap<'_>],
    ) -> Result<Vec<bool>, StoreError>;

    /// How many timer rows `node` holds.
    fn count_rows_in(tx: &mut Self::Tx<'_>, node: &str) -> Result<u64, StoreError>;

    /// Streams `node`'s timer rows to `sink`, in any order, as they are read; stops when
    /// `sink` returns `false` or an error.
    fn rows_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        sink: &mut dyn FnMut(Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError>;

    /// Streams the timer rows of `node` whose owner is one of `owners` to `sink`, in any
    /// order (what a takeover of a lost node's owners reads); stops as
    /// [`rows_in`](Self::rows_in) does.
    fn owner_rows_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        owners: &[i64],
        sink: &mut dyn FnMut(Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError>;

    /// Inserts or replaces timer rows of `node` (keyed by node, owner and name).
    fn write_rows_in(tx: &mut Self::Tx<'_>, node: &str, rows: &[Row]) -> Result<(), StoreError>;

    /// Deletes timer rows of `node` by owner and name (keys that are not there are skipped).
    fn delete_rows_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        keys: &[(i64, &str)],
    ) -> Result<(), StoreError>;

    /// Deletes every timer row of `node` (a full rewrite follows).
    fn clear_rows_in(tx: &mut Self::Tx<'_>, node: &str) -> Result<(), StoreError>;

    /// Deletes every timer row of `node` whose owner is one of `owners`; the owner, name and
    /// checksum of each row deleted.
    fn delete_owner_rows_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        owners: &[i64],
    ) -> Result<Vec<(i64, String, i64)>, StoreError>;

    /// Puts parcels in the outbox as they are (tools; a send checks first, see
    /// [`send_parcels_in`](Self::send_parcels_in)); one whose owner and epoch are there
    /// already is left as it is. Which were put.
    fn put_parcels_in(
        tx: &mut Self::Tx<'_>,
        parcels: &[ParcelRead],
    ) -> Result<Vec<bool>, StoreError>;

    /// A send: the registry rows of the parcels' owners, locked, in the parcels' order
    /// (`None` where an owner has none), and the parcels put in the outbox (as
    /// [`put_parcels_in`](Self::put_parcels_in)) only when every one of those rows names the
    /// parcel's sender at the parcel's epoch; else nothing is put.
    fn send_parcels_in(
        tx: &mut Self::Tx<'_>,
        parcels: &[ParcelRead],
    ) -> Result<Vec<Option<OwnerRead>>, StoreError>;

    /// Removes parcels by owner and epoch; which were there.
    fn remove_parcels_in(
        tx: &mut Self::Tx<'_>,
        keys: &[(i64, i64)],
    ) -> Result<Vec<bool>, StoreError>;

    /// Parcels by owner and epoch: each that is there (`None` where not), in order.
    fn parcels_in(
        tx: &mut Self::Tx<'_>,
        keys: &[(i64, i64)],
    ) -> Result<Vec<Option<ParcelRead>>, StoreError>;

    /// Up to `limit` parcels addressed to `receiver` (`to`) or sent by it (`!to`), oldest
    /// first.
    fn parcels_of_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        to: bool,
        limit: usize,
    ) -> Result<Vec<ParcelRead>, StoreError>;

    /// Writes `node`'s image (insert or replace): the bytes
    /// [`Durable::commit_image`](crate::Durable::commit_image) encoded, tagged with the number
    /// of the commit that writes it. The default refuses: a store without images.
    fn put_image_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        committed: i64,
        bytes: &[u8],
        sum: i64,
    ) -> Result<(), StoreError> {
        let _ = (tx, committed, bytes, sum);
        Err(StoreError::Setting(format!(
            "node {node:?}: this store keeps no images"
        )))
    }

    /// `node`'s image, if it has one. The default: none.
    fn image_in(tx: &mut Self::Tx<'_>, node: &str) -> Result<Option<ImageRead>, StoreError> {
        let _ = (tx, node);
        Ok(None)
    }

    /// [`send_parcels_in`](Self::send_parcels_in) on its own, committed without waiting for
    /// the disk where the database can (see [`Handovers::send`](crate::Handovers::send) for why
    /// that loses nothing).
    fn send_parcels(&mut self, parcels: &[ParcelRead]) -> Result<Vec<Option<OwnerRead>>, StoreError>
    where
        Self: Sized,
    {
        in_tx(self, true, |tx| Self::send_parcels_in(tx, parcels))
    }

    // Reads outside a transaction of the caller's: what nodes poll. Each is one consistent
    // read; these defaults make it a read transaction, and a backend with round trips answers
    // each with one statement instead.

    /// [`parcels_of_in`](Self::parcels_of_in) on its own: what a receiver polls.
    fn read_parcels(
        &mut self,
        node: &str,
        to: bool,
        limit: usize,
    ) -> Result<Vec<ParcelRead>, StoreError>
    where
        Self: Sized,
    {
        in_tx(self, false, |tx| Self::parcels_of_in(tx, node, to, limit))
    }

    /// The registry rows of `owners` that exist, in any order, on their own.
    fn read_owners(&mut self, owners: &[i64]) -> Result<Vec<OwnerRead>, StoreError>
    where
        Self: Sized,
    {
        in_tx(self, false, |tx| Self::owners_in(tx, owners, false))
    }

    /// The sender of each parcel by owner and epoch (`None` where it is not in the outbox) with
    /// its owner's registry row (`None` where none), read together: what a sender polls.
    #[allow(
        clippy::type_complexity,
        reason = "two optional columns per key, read together"
    )]
    fn read_sent(
        &mut self,
        keys: &[(i64, i64)],
    ) -> Result<Vec<(Option<String>, Option<OwnerRead>)>, StoreError>
    where
        Self: Sized,
    {
        in_tx(self, false, |tx| {
            let parcels = Self::parcels_in(tx, keys)?;
            let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
            let owners = Self::owners_in(tx, &ids, false)?;
            Ok((keys.iter().zip(parcels))
                .map(|(k, p)| {
                    let owner = owners.iter().find(|o| o.owner == k.0).cloned();
                    (p.map(|p| p.sender), owner)
                })
                .collect())
        })
    }
}

/// Runs `f` in a transaction of `store` and commits when it returns `Ok`.
pub(crate) fn in_tx<S: Store, T>(
    store: &mut S,
    write: bool,
    f: impl FnOnce(&mut S::Tx<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut tx = store.begin(write)?;
    let out = f(&mut tx)?;
    S::finish(tx)?;
    Ok(out)
}

/// Unix time now, in nanoseconds.
pub(crate) fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
