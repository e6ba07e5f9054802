//! Rows of the store's tables as PostgreSQL returns them, checked for type and named when one
//! is not what it should be; and the statements more than one primitive runs.

use postgres::types::Type;
use postgres::{GenericClient, Row as PgRow};

use crate::backend::{NodeRead, OwnerRead, ParcelRead, Row, NODE_COLUMNS, NODE_INTS};
use crate::error::StoreError;
use crate::row::COLUMNS;

/// The channel a send notifies (the payload: the receiver's node), for receivers that
/// `LISTEN` instead of polling their inbox.
pub const OUTBOX_CHANNEL: &str = "tickflow_outbox";

/// Reads column `i` of a row of `table` keyed `key`, naming both when its type is wrong.
pub(super) fn col<'a, T: postgres::types::FromSql<'a>>(
    r: &'a PgRow,
    i: usize,
    table: &'static str,
    key: impl Fn() -> String,
    field: &'static str,
) -> Result<T, StoreError> {
    r.try_get(i)
        .map_err(|e| StoreError::bad_row(table, key(), field, format!("cannot be read: {e}")))
}

pub(super) const NODE: &str = NODE_COLUMNS;

pub(super) fn node_of(r: &PgRow, node: &str) -> Result<NodeRead, StoreError> {
    let key = || format!("{node:?}");
    let mut v = [0i64; 13];
    for (i, slot) in v.iter_mut().enumerate() {
        // The host (column 12) is the one text column: the process id comes after it.
        let at = if i == 12 { 13 } else { i };
        *slot = col(r, at, "tickflow_nodes", key, NODE_INTS[i])?;
    }
    let host = col(r, 12, "tickflow_nodes", key, "host")?;
    Ok(NodeRead::from_columns(v, host))
}

/// A registry row from columns `at..at + 4`; `None` where a left join found none (its owner
/// column is NULL).
pub(super) fn owner_at(r: &PgRow, at: usize) -> Result<Option<OwnerRead>, StoreError> {
    let Some(owner) = col::<Option<i64>>(r, at, "tickflow_owners", || "?".into(), "owner")? else {
        return Ok(None);
    };
    let key = || format!("owner {}", owner as u64);
    Ok(Some(OwnerRead {
        owner,
        epoch: col(r, at + 1, "tickflow_owners", key, "epoch")?,
        node: col(r, at + 2, "tickflow_owners", key, "node")?,
        sum: col(r, at + 3, "tickflow_owners", key, "sum")?,
    }))
}

/// Rows of `tickflow_owners` itself (whose owner column is never NULL).
pub(super) fn owners_of(rows: &[PgRow]) -> Result<Vec<OwnerRead>, StoreError> {
    (rows.iter())
        .map(|r| {
            let null = || StoreError::bad_row("tickflow_owners", "?", "owner", "is NULL");
            owner_at(r, 0)?.ok_or_else(null)
        })
        .collect()
}

pub(super) const PARCEL: &str = "owner, epoch, sender, receiver, bytes, sent, sum";

/// An outbox row from columns `at..at + 7`.
pub(super) fn parcel_of(r: &PgRow, at: usize) -> Result<ParcelRead, StoreError> {
    let (owner, epoch): (i64, i64) = (
        col(r, at, "tickflow_outbox", || "?".into(), "owner")?,
        col(r, at + 1, "tickflow_outbox", || "?".into(), "epoch")?,
    );
    let key = || format!("(owner {}, epoch {epoch})", owner as u64);
    Ok(ParcelRead {
        owner,
        epoch,
        sender: col(r, at + 2, "tickflow_outbox", key, "sender")?,
        receiver: col(r, at + 3, "tickflow_outbox", key, "receiver")?,
        bytes: col(r, at + 4, "tickflow_outbox", key, "bytes")?,
        sent: col(r, at + 5, "tickflow_outbox", key, "sent")?,
        sum: col(r, at + 6, "tickflow_outbox", key, "sum")?,
    })
}

/// The rows' indexes (1-based ordinals) a statement returned, as flags in order.
pub(super) fn flags(n: usize, rows: &[PgRow]) -> Result<Vec<bool>, StoreError> {
    let mut out = vec![false; n];
    for r in rows {
        let i: i64 = r.try_get(0)?;
        if let Some(slot) = usize::try_from(i - 1).ok().and_then(|i| out.get_mut(i)) {
            *slot = true;
        }
    }
    Ok(out)
}

/// A send in one statement: the owners' registry rows locked and read, and the parcels put
/// (each receiver notified) only when every row names the parcel's sender at its epoch.
/// `relaxed`: a statement on its own, whose commit need not wait for the disk.
pub(super) fn send_parcels(
    c: &mut impl GenericClient,
    parcels: &[ParcelRead],
    relaxed: bool,
) -> Result<Vec<Option<OwnerRead>>, StoreError> {
    let owner: Vec<i64> = parcels.iter().map(|p| p.owner).collect();
    let epoch: Vec<i64> = parcels.iter().map(|p| p.epoch).collect();
    let sender: Vec<&str> = parcels.iter().map(|p| p.sender.as_str()).collect();
    let receiver: Vec<&str> = parcels.iter().map(|p| p.receiver.as_str()).collect();
    let bytes: Vec<&[u8]> = parcels.iter().map(|p| p.bytes.as_slice()).collect();
    let sent: Vec<i64> = parcels.iter().map(|p| p.sent).collect();
    let sum: Vec<i64> = parcels.iter().map(|p| p.sum).collect();
    // `set_config(.., true)` lasts until this statement's own transaction ends, and its commit
    // reads it; the final SELECT names it so that it runs. "Every parcel's sender holds its
    // owner" is counted over an inner join on equal columns (owners are unique in `h`), which
    // the planner runs as a hash or merge join: as a `NOT EXISTS` over a left join with `OR`
    // it chose a nested loop, 22 ms for 500 parcels instead of 0.5.
    let relax = match relaxed {
        true => "set_config('synchronous_commit', 'off', true)",
        false => "''",
    };
    let rows = c.query_typed(
        &format!(
            "WITH r AS (SELECT {relax} AS v), \
             k AS (SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], \
                 $5::BYTEA[], $6::BIGINT[], $7::BIGINT[]) WITH ORDINALITY \
                 AS k(o, e, s, rcv, b, t, m, i)), \
             h AS (SELECT owner, epoch, node, sum FROM tickflow_owners \
                 WHERE owner = ANY($1) ORDER BY owner FOR UPDATE), \
             ok AS (SELECT count(*) = (SELECT count(*) FROM k) AS all_held \
                 FROM k JOIN h ON h.owner = k.o AND h.node = k.s AND h.epoch = k.e), \
             p AS (INSERT INTO tickflow_outbox ({PARCEL}) \
                 SELECT o, e, s, rcv, b, t, m FROM k WHERE (SELECT all_held FROM ok) \
                 ON CONFLICT (owner, epoch) DO NOTHING RETURNING receiver), \
             n AS (SELECT pg_notify($8, r) FROM (SELECT DISTINCT receiver AS r FROM p) d) \
             SELECT k.i, h.owner, h.epoch, h.node, h.sum, (SELECT count(*) FROM n), \
                 (SELECT v FROM r) FROM k LEFT JOIN h ON h.owner = k.o ORDER BY k.i"
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
    rows.iter().map(|r| owner_at(r, 1)).collect()
}

/// Up to `limit` parcels to or from `node`, oldest first, on a client or in a transaction.
pub(super) fn parcels_of(
    c: &mut impl GenericClient,
    node: &str,
    to: bool,
    limit: usize,
) -> Result<Vec<ParcelRead>, StoreError> {
    let by = if to { "receiver" } else { "sender" };
    let limit = limit.min(i64::MAX as usize) as i64;
    let rows = c.query_typed(
        &format!(
            "SELECT {PARCEL} FROM tickflow_outbox WHERE {by} = $1 ORDER BY sent, owner LIMIT $2"
        ),
        &[(&node, Type::TEXT), (&limit, Type::INT8)],
    )?;
    rows.iter().map(|r| parcel_of(r, 0)).collect()
}

/// The columns of many rows, one array each, for `UNNEST`.
#[derive(Default)]
struct Columns<'a> {
    owner: Vec<i64>,
    name: Vec<&'a str>,
    epoch: Vec<i64>,
    domain: Vec<i16>,
    phase: Vec<i16>,
    time: Vec<i64>,
    period: Vec<i64>,
    looping: Vec<i16>,
    catch_up: Vec<i16>,
    offline: Vec<i16>,
    calls: Vec<i64>,
    times_left: Vec<Option<i64>>,
    first_delay: Vec<Option<i64>>,
    tag: Vec<Option<i64>>,
    payload: Vec<&'a [u8]>,
    seq: Vec<i64>,
    sum: Vec<i64>,
}

impl<'a> Columns<'a> {
    fn of(rows: &'a [Row]) -> Columns<'a> {
        let mut c = Columns::default();
        for r in rows {
            c.owner.push(r.owner);
            c.name.push(&r.name);
            c.epoch.push(r.epoch);
            c.domain.push(r.domain);
            c.phase.push(r.phase);
            c.time.push(r.time);
            c.period.push(r.period);
            c.looping.push(r.looping);
            c.catch_up.push(r.catch_up);
            c.offline.push(r.offline);
            c.calls.push(r.calls);
            c.times_left.push(r.times_left);
            c.first_delay.push(r.first_delay);
            c.tag.push(r.tag);
            c.payload.push(&r.payload);
            c.seq.push(r.seq);
            c.sum.push(r.sum);
        }
        c
    }
}

/// Inserts or replaces timer rows of `node` in one statement over arrays.
pub(super) fn write_rows(
    tx: &mut postgres::Transaction<'_>,
    node: &str,
    rows: &[Row],
) -> Result<(), StoreError> {
    let c = Columns::of(rows);
    tx.execute_typed(
        &format!(
            "INSERT INTO tickflow_timers (node, {COLUMNS}) SELECT $1, * FROM UNNEST(\
             $2::BIGINT[], $3::TEXT[], $4::BIGINT[], $5::SMALLINT[], $6::SMALLINT[], \
             $7::BIGINT[], $8::BIGINT[], $9::SMALLINT[], $10::SMALLINT[], $11::SMALLINT[], \
             $12::BIGINT[], $13::BIGINT[], $14::BIGINT[], $15::BIGINT[], $16::BYTEA[], \
             $17::BIGINT[], $18::BIGINT[]) \
             ON CONFLICT (node, owner, name) DO UPDATE SET epoch = excluded.epoch, \
             domain = excluded.domain, phase = excluded.phase, time = excluded.time, \
             period = excluded.period, looping = excluded.looping, \
             catch_up = excluded.catch_up, offline = excluded.offline, \
             calls = excluded.calls, times_left = excluded.times_left, \
             first_delay = excluded.first_delay, tag = excluded.tag, \
             payload = excluded.payload, seq = excluded.seq, sum = excluded.sum"
        ),
        &[
            (&node, Type::TEXT),
            (&c.owner, Type::INT8_ARRAY),
            (&c.name, Type::TEXT_ARRAY),
            (&c.epoch, Type::INT8_ARRAY),
            (&c.domain, Type::INT2_ARRAY),
            (&c.phase, Type::INT2_ARRAY),
            (&c.time, Type::INT8_ARRAY),
            (&c.period, Type::INT8_ARRAY),
            (&c.looping, Type::INT2_ARRAY),
            (&c.catch_up, Type::INT2_ARRAY),
            (&c.offline, Type::INT2_ARRAY),
            (&c.calls, Type::INT8_ARRAY),
            (&c.times_left, Type::INT8_ARRAY),
            (&c.first_delay, Type::INT8_ARRAY),
            (&c.tag, Type::INT8_ARRAY),
            (&c.payload, Type::BYTEA_ARRAY),
            (&c.seq, Type::INT8_ARRAY),
            (&c.sum, Type::INT8_ARRAY),
        ],
    )?;
    Ok(())
}
