//! The store on SQLite: every shared behaviour (`common`), and what only a file can suffer:
//! damage to it, a file that is not a store, a table or node row that vanished.

use crate::common;

use std::path::{Path, PathBuf};

use tickflow::prelude::*;
use tickflow_store::{Durable, Inspect, Sqlite, StoreError, SCHEMA_VERSION};

/// A fresh directory for one test, removed with the guard.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(test: &str) -> Dir {
    let dir = std::env::temp_dir().join(format!("tickflow-store-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Dir(dir)
}

/// The shared tests' store: a new file per test.
fn fresh(test: &str) -> Option<(Dir, impl Fn() -> Sqlite)> {
    let d = dir(test);
    let path = d.0.join("world.db");
    Some((d, move || Sqlite::create(&path).unwrap()))
}

all_store_tests!(fresh);

/// A store with a node of two committed timers, then `damage` applied with SQL; resumed.
fn damaged(path: &Path, damage: &str) -> Result<(), StoreError> {
    let open = || Sqlite::create(path).unwrap();
    let (mut d, mut sched) = common::resume(&open, "n");
    for n in ["a", "b"] {
        common::set(&mut sched, 3, n, 60);
    }
    d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    d.store().connection().execute_batch(damage).unwrap();
    drop(d);
    let mut d = Durable::new(Sqlite::open(path)?, "n");
    d.set_lease(std::time::Duration::from_millis(30));
    d.resume(&mut common::registry()).map(drop)
}

#[test]
fn damaged_rows_are_refused_by_name_and_column() {
    let d = dir("damaged");
    let cases = [
        (
            "UPDATE tickflow_timers SET domain = 9 WHERE name = 'b'",
            "sum",
        ),
        (
            "UPDATE tickflow_timers SET payload = 'text' WHERE name = 'b'",
            "payload",
        ),
        (
            "UPDATE tickflow_timers SET time = 'soon' WHERE name = 'b'",
            "time",
        ),
        (
            "UPDATE tickflow_timers SET calls = calls + 1 WHERE name = 'b'",
            "sum",
        ),
        ("UPDATE tickflow_nodes SET game = game + 1", "sum"),
        ("UPDATE tickflow_owners SET epoch = 3", "owner 3"),
        (
            "DELETE FROM tickflow_timers WHERE name = 'b'",
            "vanished or appeared",
        ),
        ("DELETE FROM tickflow_nodes", "tickflow_nodes is gone"),
        ("DROP TABLE tickflow_timers", "tickflow_timers is missing"),
    ];
    for (i, (sql, named)) in cases.into_iter().enumerate() {
        let path = d.0.join(format!("case{i}.db"));
        let err = damaged(&path, sql)
            .map_err(|e| e.to_string())
            .expect_err(sql);
        assert!(err.contains(named), "{sql}: {err}");
        if named == "sum" && sql.contains("timers") {
            assert!(err.contains("\"b\""), "{sql}: names the row: {err}");
        }
    }
    // The schema's one row cannot become two.
    let two = Sqlite::create(d.0.join("two.db"))
        .unwrap()
        .connection()
        .execute_batch("INSERT INTO tickflow_schema VALUES (2, 2)");
    assert!(two.is_err());
    let path = d.0.join("version.db");
    let err = damaged(&path, "UPDATE tickflow_schema SET version = 99").unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Version {
                found: 99,
                supported: SCHEMA_VERSION
            }
        ),
        "{err}"
    );
}

/// A store of schema 2 (before the nodes' offline shift) or 3 (before images) is upgraded as it
/// is opened: its nodes resume as they were and commit on, with images too.
#[test]
fn older_stores_are_upgraded_in_place() {
    let d = dir("upgrade");
    let path = d.0.join("old.db");
    let open = || Sqlite::create(&path).unwrap();
    let (mut node, mut sched) = common::resume(&open, "n");
    common::set(&mut sched, 3, "a", 60);
    node.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    let want = sched.timers().durable_timers();
    drop((node, sched));
    for old in common::OLDER_SCHEMAS {
        Sqlite::open(&path)
            .unwrap()
            .connection()
            .execute_batch(old)
            .unwrap();
        let mut store = Sqlite::open(&path).unwrap();
        let version: i64 = (store.connection())
            .query_row("SELECT version FROM tickflow_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        assert_eq!(store.saved("n").unwrap().timers, want);
        let (mut node, mut sched) = common::resume(&open, "n");
        assert_eq!(sched.timers().durable_timers(), want);
        node.commit_image(&mut sched, b"state", |_, _| Ok(()))
            .unwrap();
        drop((node, sched));
        let mut node = common::node(&open, "n");
        let (_, resumed) = node.resume(&mut common::registry()).unwrap();
        assert_eq!(resumed.state.as_deref(), Some(&b"state"[..]));
    }
    // A store of this version that lost a table is refused, not mended.
    (Sqlite::open(&path).unwrap().connection())
        .execute_batch("DROP TABLE tickflow_images")
        .unwrap();
    assert!(matches!(
        Sqlite::open(&path),
        Err(StoreError::Missing { .. })
    ));
}

#[test]
fn a_file_that_is_not_a_store_is_refused() {
    let d = dir("garbage");
    let path = d.0.join("garbage.db");
    std::fs::write(
        &path,
        b"this is not a database at all, just bytes".repeat(100),
    )
    .unwrap();
    assert!(matches!(
        Sqlite::open(&path),
        Err(StoreError::Missing { .. } | StoreError::Sqlite(_))
    ));
    assert!(Sqlite::create(&path).is_err(), "nor made into one");

    // Missing, empty, or a database of something else: not a world, unless asked to make one.
    let missing = d.0.join("missing.db");
    assert!(matches!(
        Sqlite::open(&missing),
        Err(StoreError::Missing { .. })
    ));
    assert!(!missing.exists(), "open makes no file");
    let empty = d.0.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = Sqlite::open(&empty).unwrap_err().to_string();
    assert!(err.contains("not a store"), "{err}");
    assert!(Sqlite::create(&empty).is_ok());

    // A real store cut in half.
    let path = d.0.join("truncated.db");
    let open = || Sqlite::create(&path).unwrap();
    let (mut durable, mut sched) = common::resume(&open, "n");
    common::populate(&mut sched, 2000, 5);
    durable.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    durable
        .store()
        .connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    drop((durable, sched));
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let loaded = Sqlite::open(&path).and_then(|s| {
        let mut d = Durable::new(s, "n");
        d.set_lease(std::time::Duration::from_millis(30));
        d.resume(&mut common::registry()).map(|(_, r)| r)
    });
    assert!(
        loaded.is_err(),
        "a truncated file loads nothing: {loaded:?}"
    );
}

#[test]
fn an_owner_row_of_another_table_does_not_check() {
    // A row's checksum covers its node: the same row copied to another node is refused.
    let d = dir("copied");
    let path = d.0.join("w.db");
    let open = || Sqlite::create(&path).unwrap();
    let (mut a, mut sa) = common::resume(&open, "a");
    sa.timers()
        .after(secs(1.0))
        .name("x")
        .durable(tickflow::timer::Offline::Freeze)
        .call(common::record);
    a.end_frame(&mut sa, |_, _| Ok(())).unwrap();
    let (b, _sb) = common::resume(&open, "b");
    drop(b);
    a.store()
        .connection()
        .execute_batch(
            "INSERT INTO tickflow_timers SELECT 'b', owner, name, epoch, domain, phase, time, \
             period, looping, catch_up, offline, calls, times_left, first_delay, tag, payload, \
             seq, sum FROM tickflow_timers WHERE node = 'a'",
        )
        .unwrap();
    let mut b = common::node(&open, "b");
    let err = b
        .resume(&mut common::registry())
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(err.contains("sum"), "{err}");
}
