//! The fleet's database: SQLite or PostgreSQL, with the fleet's tables beside the store's.

use tickflow_store::{Postgres, Sqlite};

use super::tables;
use crate::sql::{err, Sql};

/// The fleet's database.
pub(crate) enum Db {
    Sqlite(Sqlite),
    Postgres(Postgres),
}

/// `sqlite:PATH` or a `postgres://` URL (tables in `schema`, when given), with the fleet's
/// tables made.
pub(crate) fn open(store: &str, schema: Option<&str>) -> Result<Db, String> {
    let mut db = if let Some(path) = store.strip_prefix("sqlite:") {
        Db::Sqlite(Sqlite::create(path).map_err(err)?)
    } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        let pg = match schema {
            Some(schema) => Postgres::create_in(store, schema),
            None => Postgres::create(store),
        };
        Db::Postgres(pg.map_err(err)?)
    } else {
        return Err(format!(
            "--store {store:?}: give sqlite:PATH or a postgres:// URL"
        ));
    };
    with_tx(&mut db, tables::create)?;
    Ok(db)
}

/// Runs `f` in a transaction of `db` and commits it.
pub(crate) fn with_tx<T>(
    db: &mut Db,
    f: impl FnOnce(&mut dyn Sql) -> Result<T, String>,
) -> Result<T, String> {
    match db {
        Db::Sqlite(s) => {
            let behavior = rusqlite::TransactionBehavior::Immediate;
            let mut tx = (s.connection().transaction_with_behavior(behavior)).map_err(err)?;
            let out = f(&mut tx)?;
            tx.commit().map_err(err)?;
            Ok(out)
        }
        Db::Postgres(p) => {
            let mut tx = p.client().map_err(err)?.transaction().map_err(err)?;
            let out = f(&mut tx)?;
            tx.commit().map_err(err)?;
            Ok(out)
        }
    }
}
