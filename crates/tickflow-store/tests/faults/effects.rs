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
    /// The commit that stored it (0 until then).
    pub commit: u64,
}

/// How a backend keeps the effects table, in the commit's transaction.
pub trait Effects: Store + Sized {
    fn create(&mut self);
    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        commit: u64,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError>;
    fn read(&mut self) -> Vec<Effect>;
    /// How many effects are stored.
    fn effects_total(&mut self) -> Result<u64, StoreError>;
    /// Whether no parcel is on its way.
    fn outbox_empty(&mut self) -> Result<bool, StoreError>;
}

const CREATE: &str = "CREATE TABLE IF NOT EXISTS effects (id INTEGER PRIMARY KEY AUTOINCREMENT, \
     node TEXT, owner INTEGER, name TEXT, call INTEGER, age INTEGER, frame INTEGER, \
     commit_no INTEGER)";

impl Effects for Sqlite {
    fn create(&mut self) {
        self.connection().execute_batch(CREATE).unwrap();
    }

    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        commit: u64,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError> {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO effects (node, owner, name, call, age, frame, commit_no) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for e in effects {
            let n = [e.owner, e.call, e.age, e.frame, commit].map(|v| v as i64);
            stmt.execute(rusqlite::params![
                e.node, n[0], e.name, n[1], n[2], n[3], n[4]
            ])?;
        }
        Ok(())
    }

    fn read(&mut self) -> Vec<Effect> {
        let mut stmt = (self.connection())
            .prepare(
                "SELECT node, owner, name, call, age, frame, commit_no FROM effects ORDER BY id",
            )
            .unwrap();
        let rows = stmt.query_map([], |r| {
            Ok(Effect {
                node: r.get(0)?,
                owner: r.get::<_, i64>(1)? as u64,
                name: r.get(2)?,
                call: r.get::<_, i64>(3)? as u64,
                age: r.get::<_, i64>(4)? as u64,
                frame: r.get::<_, i64>(5)? as u64,
                commit: r.get::<_, i64>(6)? as u64,
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
                 owner BIGINT, name TEXT, call BIGINT, age BIGINT, frame BIGINT, commit_no BIGINT)",
            )
            .unwrap();
    }

    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        commit: u64,
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
        let frame: Vec<i64> = effects.iter().map(|e| e.frame as i64).collect();
        tx.execute(
            "INSERT INTO effects (node, owner, name, call, age, frame, commit_no) \
             SELECT *, $7 FROM UNNEST($1::TEXT[], $2::BIGINT[], $3::TEXT[], $4::BIGINT[], \
             $5::BIGINT[], $6::BIGINT[])",
            &[&node, &owner, &name, &call, &age, &frame, &(commit as i64)],
        )?;
        Ok(())
    }

    fn read(&mut self) -> Vec<Effect> {
        let sql = "SELECT node, owner, name, call, age, frame, commit_no FROM effects ORDER BY id";
        (self.client().unwrap().query(sql, &[]).unwrap().iter())
            .map(|r| Effect {
                node: r.get(0),
                owner: r.get::<_, i64>(1) as u64,
                name: r.get(2),
                call: r.get::<_, i64>(3) as u64,
                age: r.get::<_, i64>(4) as u64,
                frame: r.get::<_, i64>(5) as u64,
                commit: r.get::<_, i64>(6) as u64,
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
