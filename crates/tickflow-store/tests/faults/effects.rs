//! The effects table of the fault harness, on each database: the world's effects, written in
//! the commit that covers their frame, read back by the checker.

use tickflow_store::{Sqlite, Store, StoreError};

/// One call of an owner's timer, as the world records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    /// The frame of the node that made it (which commit covers it).
    pub frame: u64,
    pub node: String,
    pub owner: u64,
    pub name: String,
    pub call: u64,
    /// Frames the owner had run when the call was made.
    pub age: u64,
}

/// How a backend keeps the effects table, in the commit's transaction.
pub trait Effects: Store + Sized {
    fn create(&mut self);
    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError>;
    fn read(&mut self) -> Vec<Effect>;
    /// How many effects are stored.
    fn effects_total(&mut self) -> Result<u64, StoreError>;
    /// Whether no parcel is on its way.
    fn outbox_empty(&mut self) -> Result<bool, StoreError>;
}

const CREATE: &str = "CREATE TABLE IF NOT EXISTS effects (id INTEGER PRIMARY KEY AUTOINCREMENT, \
     node TEXT, owner INTEGER, name TEXT, call INTEGER, age INTEGER)";

impl Effects for Sqlite {
    fn create(&mut self) {
        self.connection().execute_batch(CREATE).unwrap();
    }

    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError> {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO effects (node, owner, name, call, age) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for e in effects {
            stmt.execute(rusqlite::params![
                e.node,
                e.owner as i64,
                e.name,
                e.call as i64,
                e.age as i64
            ])?;
        }
        Ok(())
    }

    fn read(&mut self) -> Vec<Effect> {
        let mut stmt = (self.connection())
            .prepare("SELECT node, owner, name, call, age FROM effects ORDER BY id")
            .unwrap();
        let rows = stmt.query_map([], |r| {
            Ok(Effect {
                frame: 0,
                node: r.get(0)?,
                owner: r.get::<_, i64>(1)? as u64,
                name: r.get(2)?,
                call: r.get::<_, i64>(3)? as u64,
                age: r.get::<_, i64>(4)? as u64,
            })
        });
        rows.unwrap().map(Result::unwrap).collect()
    }

    fn effects_total(&mut self) -> Result<u64, StoreError> {
        let n: i64 = self
            .connection()
            .query_row("SELECT count(*) FROM effects", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    fn outbox_empty(&mut self) -> Result<bool, StoreError> {
        let n: i64 =
            self.connection()
                .query_row("SELECT count(*) FROM tickflow_outbox", [], |r| r.get(0))?;
        Ok(n == 0)
    }
}

#[cfg(feature = "postgres")]
impl Effects for tickflow_store::Postgres {
    fn create(&mut self) {
        (self.client().unwrap())
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS effects (id BIGSERIAL PRIMARY KEY, node TEXT, \
                 owner BIGINT, name TEXT, call BIGINT, age BIGINT)",
            )
            .unwrap();
    }

    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError> {
        let effects: Vec<&Effect> = effects.collect();
        if effects.is_empty() {
            return Ok(());
        }
        let node: Vec<&str> = effects.iter().map(|e| e.node.as_str()).collect();
        let owner: Vec<i64> = effects.iter().map(|e| e.owner as i64).collect();
        let name: Vec<&str> = effects.iter().map(|e| e.name.as_str()).collect();
        let call: Vec<i64> = effects.iter().map(|e| e.call as i64).collect();
        let age: Vec<i64> = effects.iter().map(|e| e.age as i64).collect();
        tx.execute(
            "INSERT INTO effects (node, owner, name, call, age) SELECT * FROM UNNEST($1::TEXT[], \
             $2::BIGINT[], $3::TEXT[], $4::BIGINT[], $5::BIGINT[])",
            &[&node, &owner, &name, &call, &age],
        )?;
        Ok(())
    }

    fn read(&mut self) -> Vec<Effect> {
        (self.client().unwrap())
            .query(
                "SELECT node, owner, name, call, age FROM effects ORDER BY id",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| Effect {
                frame: 0,
                node: r.get(0),
                owner: r.get::<_, i64>(1) as u64,
                name: r.get(2),
                call: r.get::<_, i64>(3) as u64,
                age: r.get::<_, i64>(4) as u64,
            })
            .collect()
    }

    fn effects_total(&mut self) -> Result<u64, StoreError> {
        let n: i64 = self
            .client()?
            .query_one("SELECT count(*) FROM effects", &[])?
            .get(0);
        Ok(n as u64)
    }

    fn outbox_empty(&mut self) -> Result<bool, StoreError> {
        let n: i64 = self
            .client()?
            .query_one("SELECT count(*) FROM tickflow_outbox", &[])?
            .get(0);
        Ok(n == 0)
    }
}
