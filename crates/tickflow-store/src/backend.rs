//! What only a backend implementer needs: the plain data that crosses the [`Store`](crate::Store)
//! primitives. Applications use [`Durable`](crate::Durable) and the
//! [`Handovers`](crate::Handovers) operations, which are written once over those primitives
//! and check every row they read.
//!
//! Every value read from the database is untrusted: a backend returns rows as the columns it
//! read (a [`Row`], a [`NodeRow`], ...), and the callers check them (types, ranges and the
//! row's checksum) before anything is built from them.

use crate::error::StoreError;
pub use crate::row::Row;
use crate::vocab::NodeClocks;

/// A node's row in `tickflow_nodes`: its clocks at its last commit, the commit number, and the
/// count and XOR of the checksums of its timer rows (what a load checks the rows against: a
/// row that vanished or appeared is found, not only a damaged one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeRow {
    /// The node's clocks at its last commit.
    pub clocks: NodeClocks,
    /// The number of its last commit (0: it never committed).
    pub committed: u64,
    /// How many timer rows it holds.
    pub rows: u64,
    /// XOR of their checksums.
    pub xsum: u64,
    /// The time it spent offline, all restarts together (flicks): the rows of timers that this
    /// time moves ([`shifts_offline`](tickflow::timer::DurableTimer::shifts_offline)) are
    /// stored that much later than they are due, so that a restart moves them all by moving
    /// this alone.
    pub shift: u64,
}

/// Who runs a node: one live process at a time ([`Durable`](crate::Durable)'s lease).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The holding process's token (random, made at its start).
    pub holder: u64,
    /// When the lease ends unless renewed: microseconds since the Unix epoch on the
    /// database's clock (PostgreSQL's `clock_timestamp()`; the machine's for SQLite).
    pub until_us: i64,
    /// The holder's machine and process-id namespace (`""` when unknown): a process of the
    /// same one may see whether the holder's process is still there.
    pub host: String,
    /// The holder's process id.
    pub pid: u32,
}

impl Lease {
    /// No process's: a node closed, or fenced by a takeover (the next process takes it at
    /// once, and the old holder's commits are refused).
    pub fn none() -> Lease {
        Lease {
            holder: 0,
            until_us: 0,
            host: String::new(),
            pid: 0,
        }
    }
}

/// A node's row as read back: its columns, its lease, and its stored checksum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRead {
    /// The columns the checksum covers.
    pub row: NodeRow,
    /// Its lease (not covered by the checksum: a new process writes it before it reads the
    /// rest).
    pub lease: Lease,
    /// The stored checksum.
    pub sum: i64,
}

/// The columns of a node's row as the backends read them, in the order of
/// [`NodeRead::from_columns`] (the host, a string, is column 12, between the lease's end and
/// the process id).
pub const NODE_COLUMNS: &str = "game, real, frames, frame, wall_ns, committed, rows, xsum, \
     shift, sum, holder, lease_until, host, pid";

/// The names of [`NODE_COLUMNS`]' integer columns, in order (for errors that name one).
pub const NODE_INTS: [&str; 13] = [
    "game",
    "real",
    "frames",
    "frame",
    "wall_ns",
    "committed",
    "rows",
    "xsum",
    "shift",
    "sum",
    "holder",
    "lease_until",
    "pid",
];

impl NodeRead {
    /// A node's row from its integer columns (in the order of [`NODE_INTS`]) and its host.
    pub fn from_columns(v: [i64; 13], host: String) -> NodeRead {
        let u = |x: i64| x as u64;
        NodeRead {
            row: NodeRow {
                clocks: NodeClocks {
                    game: u(v[0]),
                    real: u(v[1]),
                    frames: u(v[2]),
                    frame: u(v[3]),
                    wall_ns: u(v[4]),
                },
                committed: u(v[5]),
                rows: u(v[6]),
                xsum: u(v[7]),
                shift: u(v[8]),
            },
            sum: v[9],
            lease: Lease {
                holder: u(v[10]),
                until_us: v[11],
                host,
                pid: v[12] as u32,
            },
        }
    }
}

/// A registry row as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRead {
    /// The owner.
    pub owner: i64,
    /// Its epoch.
    pub epoch: i64,
    /// The node holding it.
    pub node: String,
    /// The stored checksum.
    pub sum: i64,
}

/// An outbox row as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParcelRead {
    /// The owner that moves.
    pub owner: i64,
    /// The epoch its sender holds.
    pub epoch: i64,
    /// The node that sent it.
    pub sender: String,
    /// The node it goes to.
    pub receiver: String,
    /// What moves.
    pub bytes: Vec<u8>,
    /// When it was sent (nanoseconds since the Unix epoch, the sender's clock).
    pub sent: i64,
    /// The stored checksum.
    pub sum: i64,
}

/// One registry change inside a transaction: set `owner` to `(node, epoch)` when it is at
/// `expected` (a compare-and-set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerSwap<'a> {
    /// The owner.
    pub owner: i64,
    /// The epoch it must be at.
    pub from_epoch: i64,
    /// The node that must hold it.
    pub from_node: &'a str,
    /// Its new epoch.
    pub epoch: i64,
    /// Its new holder.
    pub node: &'a str,
    /// The new row's checksum.
    pub sum: i64,
}

/// How a transaction's `COMMIT` ended when it did not succeed (see
/// [`Store::finish`](crate::Store::finish)): whether the database may have kept it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The database said no: nothing was kept.
    Refused,
    /// The connection failed while the `COMMIT` was on its way or its answer was: the
    /// transaction may have been kept. [`Durable`](crate::Durable) learns which from the
    /// node's commit number.
    Unknown,
}

/// The schema version this build writes and reads (the `tickflow_schema` table). A database of
/// another version is refused with [`StoreError::Version`].
pub const SCHEMA_VERSION: i64 = 4;

/// The store's own tables, for a backend's schema: the same on both databases but for three
/// type names (a 64-bit integer, a small integer, a byte string) and what follows the timers'
/// table (SQLite's `WITHOUT ROWID`: its rows are kept in key order, so a node's rows are read
/// in one sweep instead of one lookup each).
pub fn schema(int: &str, small: &str, bytes: &str, clustered: &str) -> String {
    "
CREATE TABLE IF NOT EXISTS tickflow_schema (
    one {I} PRIMARY KEY CHECK (one = 1), version {I} NOT NULL);
CREATE TABLE IF NOT EXISTS tickflow_nodes (
    node TEXT PRIMARY KEY, game {I} NOT NULL, real {I} NOT NULL, frames {I} NOT NULL,
    frame {I} NOT NULL, wall_ns {I} NOT NULL, committed {I} NOT NULL, rows {I} NOT NULL,
    xsum {I} NOT NULL, shift {I} NOT NULL DEFAULT 0, sum {I} NOT NULL,
    holder {I} NOT NULL, lease_until {I} NOT NULL, host TEXT NOT NULL, pid {I} NOT NULL);
CREATE TABLE IF NOT EXISTS tickflow_owners (
    owner {I} PRIMARY KEY, epoch {I} NOT NULL, node TEXT NOT NULL, sum {I} NOT NULL);
CREATE INDEX IF NOT EXISTS tickflow_owners_node ON tickflow_owners (node, owner);
CREATE TABLE IF NOT EXISTS tickflow_timers (
    node TEXT NOT NULL, owner {I} NOT NULL, name TEXT NOT NULL, epoch {I} NOT NULL,
    domain {S} NOT NULL, phase {S} NOT NULL, time {I} NOT NULL, period {I} NOT NULL,
    looping {S} NOT NULL, catch_up {S} NOT NULL, offline {S} NOT NULL,
    calls {I} NOT NULL, times_left {I}, first_delay {I}, tag {I},
    payload {B} NOT NULL, seq {I} NOT NULL, sum {I} NOT NULL,
    PRIMARY KEY (node, owner, name)){W};
CREATE TABLE IF NOT EXISTS tickflow_outbox (
    owner {I} NOT NULL, epoch {I} NOT NULL, sender TEXT NOT NULL, receiver TEXT NOT NULL,
    bytes {B} NOT NULL, sent {I} NOT NULL, sum {I} NOT NULL,
    PRIMARY KEY (owner, epoch));
CREATE INDEX IF NOT EXISTS tickflow_outbox_receiver ON tickflow_outbox (receiver, sent);
CREATE INDEX IF NOT EXISTS tickflow_outbox_sender ON tickflow_outbox (sender);
{IMAGES}"
        .replace("{IMAGES}", &images(int, bytes))
        .replace("{I}", int)
        .replace("{S}", small)
        .replace("{B}", bytes)
        .replace("{W}", clustered)
}

/// The table of the nodes' images (schema 4): a node that commits with
/// [`Durable::commit_image`](crate::Durable::commit_image) keeps its whole scheduler and your
/// state there, one row per node, tagged with the commit that wrote it.
fn images(int: &str, bytes: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS tickflow_images (
    node TEXT PRIMARY KEY, committed {int} NOT NULL, bytes {bytes} NOT NULL, sum {int} NOT NULL);
"
    )
}

/// A node's image as read back ([`Durable::commit_image`](crate::Durable::commit_image)): the
/// commit that wrote it, its bytes and its stored checksum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRead {
    /// The number of the commit that wrote it.
    pub committed: i64,
    /// The encoded scheduler snapshot and state.
    pub bytes: Vec<u8>,
    /// The stored checksum.
    pub sum: i64,
}

/// The tables a store must have, for the refusal of a database that lacks one (the last came
/// with schema 4: an older store gains it as it is opened).
pub const TABLES: [&str; 6] = [
    "tickflow_schema",
    "tickflow_nodes",
    "tickflow_owners",
    "tickflow_timers",
    "tickflow_outbox",
    "tickflow_images",
];

/// The tables an upgrade adds to an older store ([`upgrade`]).
const UPGRADE_ADDS: [&str; 1] = ["tickflow_images"];

/// Refuses a database that has some of the store's tables but not all (`have`: the ones it
/// has), or none; `all: false` leaves out the tables an upgrade adds (checked again, with
/// `all`, when the store needs none: [`settle_schema`]).
pub fn check_tables(have: &[&str], all: bool) -> Result<(), StoreError> {
    let mut need = TABLES.iter().filter(|t| all || !UPGRADE_ADDS.contains(t));
    if have.is_empty() {
        return Err(StoreError::Missing {
            what: "the database has none of tickflow's tables: it is not a store (the \
                   `create` forms make a new one)"
                .into(),
        });
    }
    if let Some(gone) = need.find(|t| !have.contains(t)) {
        return Err(StoreError::Missing {
            what: format!("the store's table {gone} is missing: the database is damaged"),
        });
    }
    Ok(())
}

/// The statements that upgrade a database whose `tickflow_schema` says `found` to this build's
/// version, where there are some: a schema-2 database gains the nodes' offline shift (a column,
/// 0 for every node, which its checksum then leaves out), and a schema-2 or 3 one the table of
/// images. `int` and `bytes` are the backend's 64-bit and byte-string types.
pub fn upgrade(found: &[i64], int: &str, bytes: &str) -> Option<String> {
    let shift = match found {
        [2] => format!("ALTER TABLE tickflow_nodes ADD COLUMN shift {int} NOT NULL DEFAULT 0;"),
        [3] => String::new(),
        _ => return None,
    };
    Some(format!(
        "{shift}\n{}UPDATE tickflow_schema SET version = {SCHEMA_VERSION};",
        images(int, bytes)
    ))
}

/// Brings a store whose tables are `have` (the ones [`check_tables`] without `all` passed)
/// and whose `tickflow_schema` says `found` to this build's schema: runs its upgrade with
/// `exec` where there is one; otherwise refuses another version, or a table missing.
/// `int` and `bytes` are the backend's 64-bit and byte-string types.
pub fn settle_schema(
    have: &[&str],
    found: &[i64],
    int: &str,
    bytes: &str,
    exec: impl FnOnce(&str) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    match upgrade(found, int, bytes) {
        Some(sql) => exec(&sql),
        None => {
            check_version(found)?;
            check_tables(have, true)
        }
    }
}

/// Checks the rows of `tickflow_schema`: exactly one, of this build's version.
pub fn check_version(found: &[i64]) -> Result<(), StoreError> {
    match found {
        [v] if *v == SCHEMA_VERSION => Ok(()),
        [v] => Err(StoreError::Version {
            found: *v,
            supported: SCHEMA_VERSION,
        }),
        _ => Err(StoreError::bad_row(
            "tickflow_schema",
            "(all rows)",
            "version",
            format!("has {} rows where there is one", found.len()),
        )),
    }
}
