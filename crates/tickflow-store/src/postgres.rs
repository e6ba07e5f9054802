//! [`Postgres`]: the store for many server processes on one PostgreSQL database.
//!
//! The tables are those of [`Sqlite`](crate::Sqlite), with PostgreSQL's type names. A commit
//! is one transaction of a fixed number of statements whatever its size: the owner epochs
//! are checked with one query (`FOR SHARE`, so a concurrent claim waits for the commit), and
//! the rows are deleted and written with one statement each over arrays (`UNNEST`), so a
//! frame's commit costs a handful of round trips, not one per timer.

use std::collections::HashMap;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, GenericClient, NoTls};
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

/// Durable timers in a PostgreSQL database.
pub struct Postgres {
    client: Client,
}

/// An arbitrary constant: the advisory lock that serializes creating the tables when several
/// processes start at once (`CREATE TABLE IF NOT EXISTS` alone races).
const MIGRATE_LOCK: i64 = 0x7469_636b_666c_6f77;

impl Postgres {
    /// Connects (a `postgres://` URL or key-value string) and creates the tables in the
    /// connection's default schema.
    pub fn connect(url: &str) -> Result<Postgres, StoreError> {
        Postgres::connect_in(url, None)
    }

    /// Connects and keeps the tables in `schema` (created if missing): one database for many
    /// worlds or test runs. `schema` must be a plain identifier (`[A-Za-z_][A-Za-z0-9_]*`).
    pub fn connect_in(url: &str, schema: Option<&str>) -> Result<Postgres, StoreError> {
        let mut client = Client::connect(url, NoTls)?;
        if let Some(schema) = schema {
            let ok = schema.len() <= 63
                && schema.chars().enumerate().all(|(i, c)| {
                    c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
                })
                && !schema.is_empty();
            if !ok {
                return Err(StoreError::Setting(format!(
                    "schema {schema:?} is not a plain identifier"
                )));
            }
            let mut tx = client.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
            tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))?;
            tx.commit()?;
            client.batch_execute(&format!("SET search_path TO {schema}"))?;
        }
        let mut store = Postgres { client };
        store.migrate()?;
        Ok(store)
    }

    /// The client, for your own tables and queries outside a commit.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let mut tx = self.client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
        tx.batch_execute(&schema("BIGINT", "SMALLINT", "BYTEA"))?;
        let found = tx.query_opt("SELECT version FROM tickflow_schema", &[])?;
        if schema_is_new(found.map(|r| r.try_get(0)).transpose()?)? {
            tx.execute(
                "INSERT INTO tickflow_schema VALUES ($1)",
                &[&SCHEMA_VERSION],
            )?;
        }
        Ok(tx.commit()?)
    }
}

/// The columns of many rows, one array each, for `UNNEST`.
#[derive(Default)]
struct Columns {
    epoch: Vec<i64>,
    owner: Vec<i64>,
    name: Vec<String>,
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
    payload: Vec<Vec<u8>>,
    seq: Vec<i64>,
}

impl Columns {
    fn push(&mut self, epoch: i64, r: Row) {
        self.epoch.push(epoch);
        self.owner.push(r.owner);
        self.name.push(r.name);
        self.domain.push(r.domain);
        self.phase.push(r.phase);
        self.time.push(r.time);
        self.period.push(r.period);
        self.looping.push(r.looping);
        self.catch_up.push(r.catch_up);
        self.offline.push(r.offline);
        self.calls.push(r.calls);
        self.times_left.push(r.times_left);
        self.first_delay.push(r.first_delay);
        self.tag.push(r.tag);
        self.payload.push(r.payload);
        self.seq.push(r.seq);
    }
}

const UPSERT: &str = "INSERT INTO tickflow_timers (node, epoch, owner, name, domain, phase, time, \
    period, looping, catch_up, offline, calls, times_left, first_delay, tag, payload, seq) \
    SELECT $1, * FROM UNNEST($2::BIGINT[], $3::BIGINT[], $4::TEXT[], $5::SMALLINT[], \
    $6::SMALLINT[], $7::BIGINT[], $8::BIGINT[], $9::SMALLINT[], $10::SMALLINT[], \
    $11::SMALLINT[], $12::BIGINT[], $13::BIGINT[], $14::BIGINT[], $15::BIGINT[], \
    $16::BYTEA[], $17::BIGINT[]) \
    ON CONFLICT (owner, name) DO UPDATE SET node = excluded.node, epoch = excluded.epoch, \
    domain = excluded.domain, phase = excluded.phase, time = excluded.time, \
    period = excluded.period, looping = excluded.looping, catch_up = excluded.catch_up, \
    offline = excluded.offline, calls = excluded.calls, times_left = excluded.times_left, \
    first_delay = excluded.first_delay, tag = excluded.tag, payload = excluded.payload, \
    seq = excluded.seq";

impl Store for Postgres {
    type Tx<'t> = postgres::Transaction<'t>;

    fn commit(
        &mut self,
        batch: &Batch<'_>,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut effects = effects;
        let mut tx = self.client.transaction()?;
        if !batch.fences.is_empty() {
            let owners: Vec<i64> = batch.fences.iter().map(|(o, _)| o.get() as i64).collect();
            let stored: HashMap<i64, i64> = tx
                .query(
                    "SELECT owner, epoch FROM tickflow_owners WHERE owner = ANY($1) FOR SHARE",
                    &[&owners],
                )?
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<_, postgres::Error>>()?;
            fenced(batch.fences, |o| {
                Ok(stored.get(&(o.get() as i64)).map(|&e| e as u64))
            })?;
        }
        if batch.replace {
            tx.execute(
                "DELETE FROM tickflow_timers WHERE node = $1",
                &[&batch.node],
            )?;
        }
        let (mut gone_owner, mut gone_name) = (Vec::new(), Vec::new());
        let mut set = Columns::default();
        for change in batch.changes {
            match change {
                DurableChange::Removed { owner, name } => {
                    gone_owner.push(owner.get() as i64);
                    gone_name.push(name.as_str());
                }
                DurableChange::Set(t) => {
                    let epoch = batch.epoch(t.owner) as i64;
                    set.push(epoch, Row::of(t));
                }
            }
        }
        if !gone_owner.is_empty() {
            tx.execute(
                "DELETE FROM tickflow_timers t USING UNNEST($1::BIGINT[], $2::TEXT[]) AS g(owner, name) \
                 WHERE t.owner = g.owner AND t.name = g.name",
                &[&gone_owner, &gone_name],
            )?;
        }
        if !set.owner.is_empty() {
            let c = &set;
            tx.execute(
                UPSERT,
                &[
                    &batch.node,
                    &c.epoch,
                    &c.owner,
                    &c.name,
                    &c.domain,
                    &c.phase,
                    &c.time,
                    &c.period,
                    &c.looping,
                    &c.catch_up,
                    &c.offline,
                    &c.calls,
                    &c.times_left,
                    &c.first_delay,
                    &c.tag,
                    &c.payload,
                    &c.seq,
                ],
            )?;
        }
        let [game, real, frames, frame, wall] = batch.clocks.columns();
        tx.execute(
            "INSERT INTO tickflow_nodes VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (node) DO UPDATE \
             SET game = excluded.game, real = excluded.real, frames = excluded.frames, \
             frame = excluded.frame, wall_ns = excluded.wall_ns",
            &[&batch.node, &game, &real, &frames, &frame, &wall],
        )?;
        effects(&mut tx)?;
        Ok(tx.commit()?)
    }

    fn load_parts(
        &mut self,
        node: &str,
        sink: &mut dyn FnMut(Part) -> bool,
    ) -> Result<(), StoreError> {
        let mut tx = self.client.build_transaction().read_only(true).start()?;
        let clocks = tx
            .query_opt(
                "SELECT game, real, frames, frame, wall_ns FROM tickflow_nodes WHERE node = $1",
                &[&node],
            )?
            .map(|r| -> Result<_, StoreError> {
                let mut c = [0i64; 5];
                for (i, v) in c.iter_mut().enumerate() {
                    *v = r.try_get(i)?;
                }
                NodeClocks::from_columns(node, c)
            })
            .transpose()?;
        let rows: i64 = tx
            .query_one(
                "SELECT count(*) FROM tickflow_timers WHERE node = $1",
                &[&node],
            )?
            .try_get(0)?;
        let rows = usize::try_from(rows).unwrap_or(0);
        if !sink(Part::Clocks { clocks, rows }) {
            return Ok(());
        }
        // Streamed as the server sends them, not gathered first.
        let mut rows = tx.query_raw(
            &format!("SELECT {COLUMNS} FROM tickflow_timers WHERE node = $1"),
            [node],
        )?;
        let mut part = Vec::with_capacity(PART_ROWS);
        while let Some(r) = rows.next()? {
            let row = read_row!(&r, try_get);
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
        drop(rows);
        if !part.is_empty() {
            sink(Part::Timers(part));
        }
        tx.commit()?;
        Ok(())
    }

    fn claim(&mut self, owner: OwnerId, node: &str) -> Result<u64, StoreError> {
        let row = self.client.query_one(
            "INSERT INTO tickflow_owners VALUES ($1, 1, $2) ON CONFLICT (owner) \
             DO UPDATE SET epoch = tickflow_owners.epoch + 1, node = excluded.node RETURNING epoch",
            &[&(owner.get() as i64), &node],
        )?;
        Ok(row.try_get::<_, i64>(0)? as u64)
    }
}

fn holder_in(
    c: &mut impl GenericClient,
    owner: OwnerId,
    lock: &str,
) -> Result<Option<Holder>, StoreError> {
    let row = c.query_opt(
        &format!("SELECT node, epoch FROM tickflow_owners WHERE owner = $1 {lock}"),
        &[&(owner.get() as i64)],
    )?;
    row.map(|r| holder_of(owner, r.try_get(0)?, r.try_get(1)?))
        .transpose()
}

/// The channel a send notifies (the payload: the receiver's node), for receivers that
/// `LISTEN` instead of polling their inbox.
pub const OUTBOX_CHANNEL: &str = "tickflow_outbox";

impl Handovers for Postgres {
    fn holder(&mut self, owner: OwnerId) -> Result<Option<Holder>, StoreError> {
        holder_in(&mut self.client, owner, "")
    }

    fn register(&mut self, owner: OwnerId, node: &str) -> Result<Holder, StoreError> {
        let mut tx = self.client.transaction()?;
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
            "INSERT INTO tickflow_owners VALUES ($1, 0, $2) ON CONFLICT (owner) DO NOTHING",
            &[&(owner.get() as i64), &node],
        )?;
        Ok(holder_in(tx, owner, "")?.expect("registered in this transaction"))
    }

    fn send(&mut self, parcel: &Parcel) -> Result<(), StoreError> {
        // One statement (one round trip, its own transaction): the holder locked and checked,
        // the parcel put and the receiver notified only when the check passes.
        check_parcel(parcel)?;
        let row = self.client.query_opt(
            "WITH h AS (SELECT node, epoch FROM tickflow_owners WHERE owner = $1::BIGINT FOR UPDATE), \
             ok AS (SELECT 1 FROM h WHERE node = $3::TEXT AND epoch = $2::BIGINT), \
             put AS (INSERT INTO tickflow_outbox \
                 SELECT $1::BIGINT, $2::BIGINT, $3::TEXT, $4::TEXT, $5::BYTEA, $6::BIGINT FROM ok \
                 ON CONFLICT (owner, epoch) DO NOTHING), \
             n AS (SELECT pg_notify($7::TEXT, $4::TEXT) FROM ok) \
             SELECT node, epoch, (SELECT count(*) FROM n) FROM h",
            &[
                &(parcel.owner.get() as i64),
                &(parcel.epoch as i64),
                &parcel.sender,
                &parcel.receiver,
                &parcel.bytes,
                &(wall_ns() as i64),
                &OUTBOX_CHANNEL,
            ],
        )?;
        let holder = row
            .map(|r| holder_of(parcel.owner, r.try_get(0)?, r.try_get(1)?))
            .transpose()?;
        match holds(&holder, &parcel.sender, parcel.epoch) {
            true => Ok(()),
            false => Err(not_held(parcel, holder)),
        }
    }

    fn send_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<(), StoreError> {
        check_parcel(parcel)?;
        // Locked, so that an accept of an earlier parcel cannot pass between check and insert.
        let holder = holder_in(tx, parcel.owner, "FOR UPDATE")?;
        if !holds(&holder, &parcel.sender, parcel.epoch) {
            return Err(not_held(parcel, holder));
        }
        tx.execute(
            "INSERT INTO tickflow_outbox VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (owner, epoch) DO NOTHING",
            &[
                &(parcel.owner.get() as i64),
                &(parcel.epoch as i64),
                &parcel.sender,
                &parcel.receiver,
                &parcel.bytes,
                &(wall_ns() as i64),
            ],
        )?;
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[&OUTBOX_CHANNEL, &parcel.receiver],
        )?;
        Ok(())
    }

    fn inbox(&mut self, node: &str, limit: usize) -> Result<Vec<Parcel>, StoreError> {
        let rows = self.client.query(
            "SELECT owner, epoch, sender, receiver, bytes FROM tickflow_outbox \
             WHERE receiver = $1 ORDER BY sent, owner LIMIT $2",
            &[&node, &(limit.min(i64::MAX as usize) as i64)],
        )?;
        (rows.iter())
            .map(|r| {
                parcel_of(
                    r.try_get(0)?,
                    r.try_get(1)?,
                    r.try_get(2)?,
                    r.try_get(3)?,
                    r.try_get(4)?,
                )
            })
            .collect()
    }

    fn accept(
        &mut self,
        parcel: &Parcel,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Accepted, StoreError> {
        let mut effects = effects;
        let mut tx = self.client.transaction()?;
        let accepted = Self::accept_in(&mut tx, parcel)?;
        if let Accepted::Stale(_) = accepted {
            // The stale parcel goes; the caller's effects are for a taken owner only.
            tx.execute(
                "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2",
                &[&(parcel.owner.get() as i64), &(parcel.epoch as i64)],
            )?;
        } else {
            effects(&mut tx)?;
        }
        tx.commit()?;
        Ok(accepted)
    }

    fn accept_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<Accepted, StoreError> {
        let (owner, epoch) = (parcel.owner.get() as i64, parcel.epoch as i64);
        let taken = tx.query_opt(
            "UPDATE tickflow_owners SET node = $3, epoch = epoch + 1 \
             WHERE owner = $1 AND epoch = $2 AND node = $4 RETURNING epoch",
            &[&owner, &epoch, &parcel.receiver, &parcel.sender],
        )?;
        let Some(row) = taken else {
            return Ok(Accepted::Stale(holder_in(tx, parcel.owner, "")?));
        };
        tx.execute(
            "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2",
            &[&owner, &epoch],
        )?;
        Ok(Accepted::Taken(row.try_get::<_, i64>(0)? as u64))
    }

    fn refuse(&mut self, parcel: &Parcel) -> Result<bool, StoreError> {
        let gone = self.client.execute(
            "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2 AND receiver = $3",
            &[
                &(parcel.owner.get() as i64),
                &(parcel.epoch as i64),
                &parcel.receiver,
            ],
        )?;
        Ok(gone > 0)
    }

    fn settle(&mut self, owner: OwnerId, sender: &str, epoch: u64) -> Result<Settled, StoreError> {
        // One statement, one snapshot, one round trip (a sender polls this).
        let r = self.client.query_one(
            "SELECT EXISTS (SELECT 1 FROM tickflow_outbox \
                 WHERE owner = $1 AND epoch = $2 AND sender = $3), \
             (SELECT node FROM tickflow_owners WHERE owner = $1), \
             (SELECT epoch FROM tickflow_owners WHERE owner = $1)",
            &[&(owner.get() as i64), &(epoch as i64), &sender],
        )?;
        let (node, held): (Option<String>, Option<i64>) = (r.try_get(1)?, r.try_get(2)?);
        let holder = match (node, held) {
            (Some(node), Some(e)) => Some(holder_of(owner, node, e)?),
            _ => None,
        };
        Ok(settled(r.try_get(0)?, sender, epoch, holder))
    }

    // Each batch form is a fixed number of statements over arrays, whatever its size.
    fn send_all(&mut self, parcels: &[Parcel]) -> Result<(), StoreError> {
        parcels.iter().try_for_each(check_parcel)?;
        let mut tx = self.client.transaction()?;
        let owners: Vec<i64> = parcels.iter().map(|p| p.owner.get() as i64).collect();
        let holders = holders_in(&mut tx, &owners, "FOR UPDATE")?;
        for p in parcels {
            let holder = holders.get(&(p.owner.get() as i64)).cloned();
            if !holds(&holder, &p.sender, p.epoch) {
                return Err(not_held(p, holder));
            }
        }
        let epochs: Vec<i64> = parcels.iter().map(|p| p.epoch as i64).collect();
        let senders: Vec<&str> = parcels.iter().map(|p| p.sender.as_str()).collect();
        let receivers: Vec<&str> = parcels.iter().map(|p| p.receiver.as_str()).collect();
        let bytes: Vec<&[u8]> = parcels.iter().map(|p| p.bytes.as_slice()).collect();
        tx.execute(
            "INSERT INTO tickflow_outbox SELECT o, e, s, r, b, $6 FROM \
             UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BYTEA[]) AS p(o, e, s, r, b) \
             ON CONFLICT (owner, epoch) DO NOTHING",
            &[&owners, &epochs, &senders, &receivers, &bytes, &(wall_ns() as i64)],
        )?;
        let mut notified: Vec<&str> = receivers.clone();
        notified.sort_unstable();
        notified.dedup();
        for r in notified {
            tx.execute("SELECT pg_notify($1, $2)", &[&OUTBOX_CHANNEL, &r])?;
        }
        Ok(tx.commit()?)
    }

    fn accept_all(
        &mut self,
        parcels: &[Parcel],
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Vec<Accepted>, StoreError> {
        let mut effects = effects;
        let mut tx = self.client.transaction()?;
        let owners: Vec<i64> = parcels.iter().map(|p| p.owner.get() as i64).collect();
        let epochs: Vec<i64> = parcels.iter().map(|p| p.epoch as i64).collect();
        let senders: Vec<&str> = parcels.iter().map(|p| p.sender.as_str()).collect();
        let receivers: Vec<&str> = parcels.iter().map(|p| p.receiver.as_str()).collect();
        let taken: HashMap<(i64, i64), i64> = tx
            .query(
                "UPDATE tickflow_owners o SET node = p.r, epoch = o.epoch + 1 \
                 FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[]) AS p(o, e, s, r) \
                 WHERE o.owner = p.o AND o.epoch = p.e AND o.node = p.s \
                 RETURNING o.owner, o.epoch",
                &[&owners, &epochs, &senders, &receivers],
            )?
            .iter()
            .map(|r| Ok(((r.try_get(0)?, r.try_get::<_, i64>(1)? - 1), r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()?;
        tx.execute(
            "DELETE FROM tickflow_outbox t USING UNNEST($1::BIGINT[], $2::BIGINT[]) AS p(o, e) \
             WHERE t.owner = p.o AND t.epoch = p.e",
            &[&owners, &epochs],
        )?;
        let stale: Vec<i64> = (parcels.iter())
            .filter(|p| !taken.contains_key(&(p.owner.get() as i64, p.epoch as i64)))
            .map(|p| p.owner.get() as i64)
            .collect();
        let holders = holders_in(&mut tx, &stale, "")?;
        let out = (parcels.iter())
            .map(|p| {
                let (o, e) = (p.owner.get() as i64, p.epoch as i64);
                match taken.get(&(o, e)) {
                    Some(&epoch) => Accepted::Taken(epoch as u64),
                    None => Accepted::Stale(holders.get(&o).cloned()),
                }
            })
            .collect();
        effects(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn settle_all(
        &mut self,
        sent: &[(OwnerId, u64)],
        sender: &str,
    ) -> Result<Vec<Settled>, StoreError> {
        let mut tx = self.client.build_transaction().read_only(true).start()?;
        let owners: Vec<i64> = sent.iter().map(|(o, _)| o.get() as i64).collect();
        let waiting: std::collections::HashSet<(i64, i64)> = tx
            .query(
                "SELECT owner, epoch FROM tickflow_outbox WHERE owner = ANY($1) AND sender = $2",
                &[&owners, &sender],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()?;
        let holders = holders_in(&mut tx, &owners, "")?;
        tx.commit()?;
        Ok((sent.iter())
            .map(|&(o, e)| {
                let key = (o.get() as i64, e as i64);
                settled(
                    waiting.contains(&key),
                    sender,
                    e,
                    holders.get(&key.0).cloned(),
                )
            })
            .collect())
    }
}

/// The holders of `owners`, by owner.
fn holders_in(
    c: &mut impl GenericClient,
    owners: &[i64],
    lock: &str,
) -> Result<HashMap<i64, Holder>, StoreError> {
    if owners.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = c.query(
        &format!("SELECT owner, node, epoch FROM tickflow_owners WHERE owner = ANY($1) {lock}"),
        &[&owners],
    )?;
    (rows.iter())
        .map(|r| {
            let owner: i64 = r.try_get(0)?;
            Ok((
                owner,
                holder_of(OwnerId::new(owner as u64), r.try_get(1)?, r.try_get(2)?)?,
            ))
        })
        .collect()
}
