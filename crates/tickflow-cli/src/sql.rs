//! Statements on either database's open transaction, for the tool's own tables beside the
//! store's (the arena's frames, the fleet's effects): `?N` placeholders, rewritten for
//! PostgreSQL.

/// A value bound to a statement.
#[derive(Clone, Copy)]
pub(crate) enum V<'a> {
    I(i64),
    B(&'a [u8]),
    T(&'a str),
}

/// Statements on either database's open transaction (`?N` placeholders, rewritten for
/// PostgreSQL).
pub(crate) trait Sql {
    /// Runs a statement; the rows it changed.
    fn exec(&mut self, sql: &str, v: &[V<'_>]) -> Result<u64, String>;
    /// The byte column of the first row, if any.
    fn bytes(&mut self, sql: &str, v: &[V<'_>]) -> Result<Option<Vec<u8>>, String>;
    /// Rows of an integer and a text column.
    fn pairs(&mut self, sql: &str, v: &[V<'_>]) -> Result<Vec<(i64, String)>, String>;
    /// Rows of integer and text columns (a NULL reads as the integer 0).
    fn rows(&mut self, sql: &str, v: &[V<'_>]) -> Result<Vec<Vec<Cell>>, String>;
    /// Now on the database's clock (the server's; this machine's for SQLite), µs since the
    /// Unix epoch.
    fn now_us(&mut self) -> Result<i64, String>;
}

/// One column's value, as [`Sql::rows`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    I(i64),
    T(String),
}

impl Cell {
    /// The integer (0 for text).
    pub(crate) fn i(&self) -> i64 {
        match self {
            Cell::I(i) => *i,
            Cell::T(_) => 0,
        }
    }

    /// The text (empty for an integer).
    pub(crate) fn t(&self) -> &str {
        match self {
            Cell::I(_) => "",
            Cell::T(t) => t,
        }
    }
}

fn sqlite_values(v: &[V<'_>]) -> Vec<rusqlite::types::Value> {
    (v.iter())
        .map(|v| match v {
            V::I(i) => rusqlite::types::Value::Integer(*i),
            V::B(b) => rusqlite::types::Value::Blob(b.to_vec()),
            V::T(t) => rusqlite::types::Value::Text(t.to_string()),
        })
        .collect()
}

impl Sql for rusqlite::Transaction<'_> {
    fn exec(&mut self, sql: &str, v: &[V<'_>]) -> Result<u64, String> {
        let params = rusqlite::params_from_iter(sqlite_values(v));
        self.execute(sql, params).map(|n| n as u64).map_err(err)
    }
    fn bytes(&mut self, sql: &str, v: &[V<'_>]) -> Result<Option<Vec<u8>>, String> {
        use rusqlite::OptionalExtension;
        let params = rusqlite::params_from_iter(sqlite_values(v));
        (self.query_row(sql, params, |r| r.get(0)).optional()).map_err(err)
    }
    fn pairs(&mut self, sql: &str, v: &[V<'_>]) -> Result<Vec<(i64, String)>, String> {
        let mut stmt = self.prepare(sql).map_err(err)?;
        let params = rusqlite::params_from_iter(sqlite_values(v));
        let rows = stmt.query_map(params, |r| Ok((r.get(0)?, r.get(1)?)));
        let out: Result<Vec<_>, _> = rows.map_err(err)?.collect();
        out.map_err(err)
    }
    fn now_us(&mut self) -> Result<i64, String> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        Ok(now.map_or(0, |d| d.as_micros() as i64))
    }
    fn rows(&mut self, sql: &str, v: &[V<'_>]) -> Result<Vec<Vec<Cell>>, String> {
        use rusqlite::types::ValueRef;
        let mut stmt = self.prepare(sql).map_err(err)?;
        let n = stmt.column_count();
        let params = rusqlite::params_from_iter(sqlite_values(v));
        let rows = stmt.query_map(params, |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        ValueRef::Integer(x) => Cell::I(x),
                        ValueRef::Text(t) => Cell::T(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Real(f) => Cell::I(f as i64),
                        _ => Cell::I(0),
                    })
                })
                .collect::<Result<Vec<_>, rusqlite::Error>>()
        });
        let out: Result<Vec<_>, _> = rows.map_err(err)?.collect();
        out.map_err(err)
    }
}

fn pg_sql(sql: &str) -> String {
    sql.replace('?', "$").replace("BLOB", "BYTEA")
}

fn pg_values<'a>(v: &'a [V<'a>]) -> Vec<Box<dyn postgres::types::ToSql + Sync + 'a>> {
    (v.iter())
        .map(|v| -> Box<dyn postgres::types::ToSql + Sync> {
            match v {
                V::I(i) => Box::new(*i),
                V::B(b) => Box::new(*b),
                V::T(t) => Box::new(*t),
            }
        })
        .collect()
}

impl Sql for postgres::Transaction<'_> {
    fn exec(&mut self, sql: &str, v: &[V<'_>]) -> Result<u64, String> {
        let vals = pg_values(v);
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = vals.iter().map(|b| &**b).collect();
        self.execute(&pg_sql(sql), &refs).map_err(err)
    }
    fn bytes(&mut self, sql: &str, v: &[V<'_>]) -> Result<Option<Vec<u8>>, String> {
        let vals = pg_values(v);
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = vals.iter().map(|b| &**b).collect();
        let row = self.query_opt(&pg_sql(sql), &refs).map_err(err)?;
        row.map(|r| r.try_get(0).map_err(err)).transpose()
    }
    fn pairs(&mut self, sql: &str, v: &[V<'_>]) -> Result<Vec<(i64, String)>, String> {
        let vals = pg_values(v);
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = vals.iter().map(|b| &**b).collect();
        let rows = self.query(&pg_sql(sql), &refs).map_err(err)?;
        (rows.iter())
            .map(|r| Ok((r.try_get(0).map_err(err)?, r.try_get(1).map_err(err)?)))
            .collect()
    }
    fn now_us(&mut self) -> Result<i64, String> {
        let row = (self.query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT",
            &[],
        ))
        .map_err(err)?;
        row.try_get(0).map_err(err)
    }
    fn rows(&mut self, sql: &str, v: &[V<'_>]) -> Result<Vec<Vec<Cell>>, String> {
        use postgres::types::Type;
        let vals = pg_values(v);
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = vals.iter().map(|b| &**b).collect();
        let rows = self.query(&pg_sql(sql), &refs).map_err(err)?;
        (rows.iter())
            .map(|r| {
                (0..r.len())
                    .map(|i| {
                        let ty = r.columns()[i].type_().clone();
                        Ok(match ty {
                            Type::TEXT | Type::VARCHAR | Type::NAME => {
                                let t: Option<String> = r.try_get(i).map_err(err)?;
                                Cell::T(t.unwrap_or_default())
                            }
                            Type::INT4 => {
                                let x: Option<i32> = r.try_get(i).map_err(err)?;
                                Cell::I(i64::from(x.unwrap_or(0)))
                            }
                            _ => {
                                let x: Option<i64> = r.try_get(i).map_err(err)?;
                                Cell::I(x.unwrap_or(0))
                            }
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

pub(crate) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}
