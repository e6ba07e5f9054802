//! [`Store`]: what a database gives the durable tier, and the plain data that crosses it.

use tickflow::timer::{DurableChange, DurableTimer};
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::row::NodeClocks;

/// The schema version this build writes and reads (the `tickflow_schema` table). A database of
/// another version is refused with [`StoreError::Version`].
pub const SCHEMA_VERSION: i64 = 1;

/// The tables, the same on both databases but for three type names: a 64-bit integer, a small
/// integer and a byte string (`INTEGER`, `INTEGER`, `BLOB` on SQLite; `BIGINT`, `SMALLINT`,
/// `BYTEA` on PostgreSQL).
pub(crate) fn schema(int: &str, small: &str, bytes: &str) -> String {
    "
CREATE TABLE IF NOT EXISTS tickflow_schema (version {I} NOT NULL);
CREATE TABLE IF NOT EXISTS tickflow_nodes (
    node TEXT PRIMARY KEY, game {I} NOT NULL, real {I} NOT NULL,
    frames {I} NOT NULL, frame {I} NOT NULL, wall_ns {I} NOT NULL);
CREATE TABLE IF NOT EXISTS tickflow_owners (
    owner {I} PRIMARY KEY, epoch {I} NOT NULL, node TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tickflow_timers (
    node TEXT NOT NULL, epoch {I} NOT NULL,
    owner {I} NOT NULL, name TEXT NOT NULL, domain {S} NOT NULL,
    phase {S} NOT NULL, time {I} NOT NULL, period {I} NOT NULL,
    looping {S} NOT NULL, catch_up {S} NOT NULL, offline {S} NOT NULL,
    calls {I} NOT NULL, times_left {I}, first_delay {I}, tag {I},
    payload {B} NOT NULL, seq {I} NOT NULL,
    PRIMARY KEY (owner, name));
CREATE INDEX IF NOT EXISTS tickflow_timers_node ON tickflow_timers (node);
CREATE TABLE IF NOT EXISTS tickflow_outbox (
    owner {I} NOT NULL, epoch {I} NOT NULL, sender TEXT NOT NULL, receiver TEXT NOT NULL,
    bytes {B} NOT NULL, sent {I} NOT NULL,
    PRIMARY KEY (owner, epoch));
CREATE INDEX IF NOT EXISTS tickflow_outbox_receiver ON tickflow_outbox (receiver, sent);
"
    .replace("{I}", int)
    .replace("{S}", small)
    .replace("{B}", bytes)
}

/// What one commit writes: a node's changes, its clocks, and the owner epochs that fence them.
#[derive(Debug)]
pub struct Batch<'a> {
    /// The node (process) that writes: the clocks its rows' times are on.
    pub node: &'a str,
    /// The node's clocks at this commit.
    pub clocks: NodeClocks,
    /// Rows to write and keys to delete, in order.
    pub changes: &'a [DurableChange],
    /// Delete every row of the node first (a full save).
    pub replace: bool,
    /// Each owner the changes touch with the epoch this node holds for it (0: never claimed),
    /// sorted by owner. A commit that touches an owner whose stored epoch is higher is refused
    /// whole.
    pub fences: &'a [(OwnerId, u64)],
}

impl Batch<'_> {
    /// The epoch this batch holds for `owner` (0 when it never claimed it): what its rows carry.
    pub fn epoch(&self, owner: OwnerId) -> u64 {
        (self.fences.binary_search_by_key(&owner, |&(o, _)| o)).map_or(0, |i| self.fences[i].1)
    }
}

/// What a node left in the store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// Its clocks at its last commit (`None`: it never committed).
    pub clocks: Option<NodeClocks>,
    /// Its durable timers, in no particular order (each row carries its place in set order).
    pub timers: Vec<DurableTimer>,
}

/// One piece of what a node left, as [`Store::load_parts`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Always the first part.
    Clocks {
        /// Its clocks at its last commit (`None`: it never committed).
        clocks: Option<NodeClocks>,
        /// How many rows follow (so that the tables they go into grow once).
        rows: usize,
    },
    /// Up to [`PART_ROWS`] of its rows, each checked.
    Timers(Vec<DurableTimer>),
}

/// How many rows a [`Part::Timers`] holds at most: enough that handing a part over costs
/// little per row, few enough that the first part is set while the rest are read.
pub const PART_ROWS: usize = 4096;

/// Rows gathered into parts of [`PART_ROWS`] for a [`Store::load_parts`] sink: what both
/// backends do with the rows they read.
pub(crate) struct Parts<'s> {
    sink: &'s mut dyn FnMut(Part) -> bool,
    part: Vec<DurableTimer>,
}

impl<'s> Parts<'s> {
    pub(crate) fn new(sink: &'s mut dyn FnMut(Part) -> bool) -> Parts<'s> {
        Parts {
            sink,
            part: Vec::with_capacity(PART_ROWS),
        }
    }

    /// Adds a row, handing a full part over; `false` once the sink wants no more.
    pub(crate) fn push(&mut self, row: DurableTimer) -> bool {
        self.part.push(row);
        if self.part.len() < PART_ROWS {
            return true;
        }
        let full = std::mem::replace(&mut self.part, Vec::with_capacity(PART_ROWS));
        (self.sink)(Part::Timers(full))
    }

    /// Hands over the last, partial part.
    pub(crate) fn finish(self) {
        if !self.part.is_empty() {
            (self.sink)(Part::Timers(self.part));
        }
    }
}

/// A database that keeps durable timers: [`Sqlite`](crate::Sqlite) and
/// [`Postgres`](crate::Postgres). Every method is one transaction; a failed one changes
/// nothing. Users call it through [`Durable`](crate::Durable), which reads on a thread of its
/// own while it sets what was read (hence `Send`).
pub trait Store: Send {
    /// The open transaction your effects hook writes into, so that your effects and the
    /// timers' rows commit together or not at all.
    type Tx<'t>;

    /// Writes a batch and runs `effects` in the same transaction, then commits.
    fn commit(
        &mut self,
        batch: &Batch<'_>,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;

    /// Reads what `node` left in one transaction, its clocks first and then its rows in
    /// parts, giving each part to `sink` as soon as it is read; stops (with `Ok`) when `sink`
    /// returns `false`.
    fn load_parts(
        &mut self,
        node: &str,
        sink: &mut dyn FnMut(Part) -> bool,
    ) -> Result<(), StoreError>;

    /// Reads what `node` left: its clocks and its rows, each checked.
    fn load(&mut self, node: &str) -> Result<Saved, StoreError> {
        let mut saved = Saved::default();
        self.load_parts(node, &mut |part| {
            match part {
                Part::Clocks { clocks, rows } => {
                    saved.clocks = clocks;
                    // The count is the database's word: capped as `DurableLoad::reserve` caps it.
                    saved.timers.reserve(rows.min(1 << 24));
                }
                Part::Timers(rows) => saved.timers.extend(rows),
            }
            true
        })?;
        Ok(saved)
    }

    /// Takes `owner` for `node`: its epoch goes up by one and is returned. From then on a
    /// commit by a node holding an older epoch for it is refused.
    fn claim(&mut self, owner: OwnerId, node: &str) -> Result<u64, StoreError>;
}

/// What a database's schema version says: `Ok(true)` when it has none yet (the caller writes
/// [`SCHEMA_VERSION`]), `Ok(false)` when it is this build's, an error for any other.
pub(crate) fn schema_is_new(found: Option<i64>) -> Result<bool, StoreError> {
    match found {
        None => Ok(true),
        Some(v) if v == SCHEMA_VERSION => Ok(false),
        Some(found) => Err(StoreError::Version {
            found,
            supported: SCHEMA_VERSION,
        }),
    }
}

/// The epoch check every backend makes inside its transaction: the first fenced owner.
pub(crate) fn fenced(
    held: &[(OwnerId, u64)],
    mut stored: impl FnMut(OwnerId) -> Result<Option<u64>, StoreError>,
) -> Result<(), StoreError> {
    for &(owner, held) in held {
        if let Some(current) = stored(owner)? {
            if current > held {
                return Err(StoreError::Fenced {
                    owner,
                    held,
                    current,
                });
            }
        }
    }
    Ok(())
}

/// Unix time now, in nanoseconds.
pub(crate) fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
