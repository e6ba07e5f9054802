//! [`Postgres`]: the store for many server processes on one PostgreSQL database.
//!
//! The tables are those of [`Sqlite`](crate::Sqlite), with PostgreSQL's type names. Every
//! primitive is one statement with its parameter types given (`query_typed`: parse, bind and
//! run in one round trip), batch ones over arrays (`UNNEST`), so a commit costs a handful of
//! round trips whatever its size.
//!
//! A lost connection is made again by itself: the next operation reconnects, and while the
//! server is out of reach each failed try doubles the wait before the next (10 ms up to 1 s),
//! so a game loop that ends its frames meanwhile is not held up, and its changes stay queued.
//! A connection string with several hosts and `target_session_attrs=read-write` finds the one
//! that takes writes: the primary, after a failover too. A commit whose connection failed
//! while its `COMMIT` or the answer was on the way is [`StoreError::Uncertain`]
//! ([`Durable`](crate::Durable) finds out which at its next commit).

mod ops;
mod rows;

use std::time::{Duration, Instant};

use postgres::{Client, Config, NoTls};

use crate::backend::SCHEMA_VERSION;
use crate::backend::{schema, TABLES};
use crate::error::StoreError;

pub use rows::OUTBOX_CHANNEL;

/// Durable timers in a PostgreSQL database.
pub struct Postgres {
    /// Boxed: a connection's settings are large, and a store often sits in an enum beside
    /// another.
    config: Box<Config>,
    schema: Option<String>,
    client: Option<Box<Client>>,
    /// When the next try to connect may be made, and the wait after a failure.
    next_try: Instant,
    wait: Duration,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("hosts", &self.config.get_hosts())
            .field("schema", &self.schema)
            .field(
                "connected",
                &self.client.as_ref().is_some_and(|c| !c.is_closed()),
            )
            .finish()
    }
}

/// An arbitrary constant: the advisory lock that serializes creating the tables when several
/// processes start at once (`CREATE TABLE IF NOT EXISTS` alone races).
const MIGRATE_LOCK: i64 = 0x7469_636b_666c_6f77;

/// The first wait after a failed connection, and the longest.
const FIRST_WAIT: Duration = Duration::from_millis(10);
const LONGEST_WAIT: Duration = Duration::from_secs(1);

impl Postgres {
    /// Connects (a `postgres://` URL or key-value string, one host or several) to a database
    /// that holds a store in its default schema. A database without tickflow's tables, with
    /// some of them, or of another schema version is refused; [`create`](Self::create) makes
    /// a new store.
    pub fn connect(url: &str) -> Result<Postgres, StoreError> {
        Postgres::open(url, None, false)
    }

    /// Connects, making tickflow's tables in the default schema when there are none.
    pub fn create(url: &str) -> Result<Postgres, StoreError> {
        Postgres::open(url, None, true)
    }

    /// As [`connect`](Self::connect), with the tables in `schema`: one database for many
    /// worlds or test runs. `schema` must be a plain identifier (`[A-Za-z_][A-Za-z0-9_]*`).
    pub fn connect_in(url: &str, schema: &str) -> Result<Postgres, StoreError> {
        Postgres::open(url, Some(schema), false)
    }

    /// As [`create`](Self::create), with the tables in `schema` (made if missing).
    pub fn create_in(url: &str, schema: &str) -> Result<Postgres, StoreError> {
        Postgres::open(url, Some(schema), true)
    }

    fn open(url: &str, schema: Option<&str>, create: bool) -> Result<Postgres, StoreError> {
        let mut config: Config = url.parse()?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        if let Some(schema) = schema {
            let plain = !schema.is_empty()
                && schema.len() <= 63
                && schema.chars().enumerate().all(|(i, c)| {
                    c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
                });
            if !plain {
                return Err(StoreError::Setting(format!(
                    "schema {schema:?} is not a plain identifier"
                )));
            }
        }
        let mut store = Postgres {
            config: Box::new(config),
            schema: schema.map(str::to_string),
            client: None,
            next_try: Instant::now(),
            wait: FIRST_WAIT,
        };
        store.check(create)?;
        Ok(store)
    }

    /// The client, connected (again, if the connection was lost), for your own tables and
    /// queries outside a commit.
    pub fn client(&mut self) -> Result<&mut Client, StoreError> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            self.client = None;
        }
        if self.client.is_none() {
            let now = Instant::now();
            if now < self.next_try {
                return Err(StoreError::Disconnected {
                    last: "the connection was lost".into(),
                    retry_in_ms: (self.next_try - now).as_millis() as u64,
                });
            }
            match self.connect_now() {
                Ok(c) => {
                    self.client = Some(Box::new(c));
                    self.wait = FIRST_WAIT;
                }
                Err(e) => {
                    self.next_try = Instant::now() + self.wait;
                    self.wait = (self.wait * 2).min(LONGEST_WAIT);
                    return Err(e);
                }
            }
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    fn connect_now(&mut self) -> Result<Client, StoreError> {
        let mut client = self.config.connect(NoTls)?;
        // A session whose client vanished mid-transaction (a cut network) would hold its locks
        // — the node's row among them — until the server noticed; no transaction of the store
        // waits on its client that long.
        client.batch_execute("SET idle_in_transaction_session_timeout = '10s'")?;
        if let Some(schema) = &self.schema {
            client.batch_execute(&format!("SET search_path TO {schema}"))?;
        }
        Ok(client)
    }

    /// Checks the tables and the schema version; `create` makes them when there are none.
    fn check(&mut self, create: bool) -> Result<(), StoreError> {
        let space = self.schema.clone();
        let client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
        if let (Some(space), true) = (&space, create) {
            tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {space}"))?;
        }
        let tables: Vec<String> = tx
            .query(
                "SELECT tablename::TEXT FROM pg_tables WHERE schemaname = current_schema()",
                &[],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let have: Vec<&str> = (TABLES.iter().copied())
            .filter(|t| tables.iter().any(|x| x == t))
            .collect();
        if have.is_empty() && create {
            tx.batch_execute(&schema("BIGINT", "SMALLINT", "BYTEA", ""))?;
            tx.execute(
                "INSERT INTO tickflow_schema (one, version) VALUES (1, $1)",
                &[&SCHEMA_VERSION],
            )?;
            return Ok(tx.commit()?);
        }
        crate::backend::check_tables(&have, false)?;
        let found: Vec<i64> = (tx.query("SELECT version FROM tickflow_schema", &[])?.iter())
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        let exec = |sql: &str| Ok(tx.batch_execute(sql)?);
        crate::backend::settle_schema(&have, &found, "BIGINT", "BYTEA", exec)?;
        Ok(tx.commit()?)
    }
}
