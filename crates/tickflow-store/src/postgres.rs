//! [`Postgres`]: the store for many server processes on one PostgreSQL database.
//!
//! The tables are those of [`Sqlite`](crate::Sqlite), with PostgreSQL's type names. A commit
//! is one transaction of a fixed number of statements whatever its size: the owner epochs
//! are checked with one query (`FOR SHARE`, so a concurrent claim waits for the commit), and
//! the rows are deleted and written with one statement each over arrays (`UNNEST`), so a
//! frame's commit costs a handful of round trips, not one per timer.

use std::collections::HashMap;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};
use tickflow::timer::DurableChange;
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::row::{read_row, NodeClocks, Row, COLUMNS};
use crate::store::{fenced, schema, schema_is_new, Batch, Part, Parts, Store, SCHEMA_VERSION};

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
        let mut parts = Parts::new(sink);
        while let Some(r) = rows.next()? {
            if !parts.push(read_row!(&r, try_get).timer()?) {
                return Ok(());
            }
        }
        drop(rows);
        parts.finish();
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
