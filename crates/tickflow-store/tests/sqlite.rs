//! The store on SQLite: resume on the exact frame, epoch fences, effects in the transaction,
//! and refusal of damaged files and rows.

mod common;

use std::path::PathBuf;

use tickflow::prelude::*;
use tickflow::timer::Offline;
use tickflow_store::{Durable, Sqlite, Store, StoreError};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickflow-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("world.db")
}

#[test]
fn resumes_on_the_exact_frame() {
    let path = temp("exact");
    common::resumes_on_the_exact_frame(|| Sqlite::open(&path).unwrap());
}

#[test]
fn a_stale_epoch_is_fenced() {
    let path = temp("fence");
    common::a_stale_epoch_is_fenced(|| Sqlite::open(&path).unwrap());
}

#[test]
fn failed_effects_roll_the_commit_back() {
    let path = temp("effects");
    common::failed_effects_roll_the_commit_back(|| Sqlite::open(&path).unwrap());
}

#[test]
fn oversized_rows_are_refused_before_writing() {
    let path = temp("oversized");
    common::oversized_rows_are_refused_before_writing(|| Sqlite::open(&path).unwrap());
}

#[test]
fn a_resume_in_many_parts_is_whole() {
    let path = temp("parts");
    common::a_resume_in_many_parts_is_whole(|| Sqlite::open(&path).unwrap());
}

#[test]
fn an_owner_moves_once() {
    let path = temp("handover");
    common::an_owner_moves_once(|| Sqlite::open(&path).unwrap());
}

#[test]
fn an_owner_moves_with_its_rows() {
    let path = temp("handover-rows");
    common::an_owner_moves_with_its_rows(|| Sqlite::open(&path).unwrap());
}

#[test]
fn batches_move_many_owners_once() {
    let path = temp("handover-batch");
    common::batches_move_many_owners_once(|| Sqlite::open(&path).unwrap());
}

/// A store with two committed timers, then `damage` applied with SQL.
fn damaged(name: &str, damage: &str) -> Result<(), StoreError> {
    let path = temp(name);
    let mut d = Durable::new(Sqlite::open(&path).unwrap(), "n");
    let (mut sched, _) = d.resume(&mut common::registry()).unwrap();
    for n in ["a", "b"] {
        (sched
            .timers()
            .after(secs(1.0))
            .owner(OwnerId::new(3))
            .name(n))
        .durable(Offline::Freeze)
        .call(common::record);
    }
    d.end_frame(sched.timers(), |_| Ok(())).unwrap();
    d.store().connection().execute_batch(damage).unwrap();
    drop(d);
    let mut d = Durable::new(Sqlite::open(&path)?, "n");
    d.resume(&mut common::registry()).map(drop)
}

#[test]
fn damaged_rows_are_refused_by_name_and_column() {
    let cases = [
        (
            "UPDATE tickflow_timers SET domain = 9 WHERE name = 'b'",
            "domain",
        ),
        (
            "UPDATE tickflow_timers SET payload = 'text' WHERE name = 'b'",
            "payload",
        ),
        (
            "UPDATE tickflow_timers SET times_left = 0 WHERE name = 'b'",
            "times_left",
        ),
        (
            "UPDATE tickflow_timers SET seq = -1 WHERE name = 'b'",
            "seq",
        ),
        (
            "UPDATE tickflow_timers SET looping = 2 WHERE name = 'b'",
            "looping",
        ),
        (
            "UPDATE tickflow_timers SET time = 'soon' WHERE name = 'b'",
            "time",
        ),
        ("UPDATE tickflow_nodes SET game = -1", "game"),
    ];
    for (sql, named) in cases {
        let err = damaged(&format!("bad{}", named.len()), sql)
            .map_err(|e| e.to_string())
            .expect_err(sql);
        assert!(err.contains(named), "{sql}: {err}");
        if named != "game" {
            assert!(err.contains("\"b\""), "{sql}: names the row: {err}");
        }
    }
    let long = "UPDATE tickflow_timers SET name = printf('%.2000c', 'x') WHERE name = 'b'";
    let err = damaged("long", long).unwrap_err().to_string();
    assert!(err.contains("column name is 2000 bytes"), "{err}");
    let err = damaged("version", "UPDATE tickflow_schema SET version = 99").unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Version {
                found: 99,
                supported: 1
            }
        ),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_a_store_is_refused() {
    let path = temp("garbage");
    std::fs::write(
        &path,
        b"this is not a database at all, just bytes".repeat(100),
    )
    .unwrap();
    assert!(matches!(Sqlite::open(&path), Err(StoreError::Sqlite(_))));

    // A real store cut in half.
    let path = temp("truncated");
    let mut d = Durable::new(Sqlite::open(&path).unwrap(), "n");
    let (mut sched, _) = d.resume(&mut common::registry()).unwrap();
    common::populate(&mut sched, 2000, 5);
    d.end_frame(sched.timers(), |_| Ok(())).unwrap();
    d.store()
        .connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    drop((d, sched));
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let loaded = Sqlite::open(&path).and_then(|s| {
        let mut d = Durable::new(s, "n");
        d.resume(&mut common::registry()).map(|(_, r)| r)
    });
    assert!(
        loaded.is_err(),
        "a truncated file loads nothing: {loaded:?}"
    );
}

#[test]
fn a_second_node_keeps_its_own_rows() {
    let path = temp("nodes");
    let mut a = Durable::new(Sqlite::open(&path).unwrap(), "a");
    let mut b = Durable::new(Sqlite::open(&path).unwrap(), "b");
    let (mut sa, _) = a.resume(&mut common::registry()).unwrap();
    let (mut sb, _) = b.resume(&mut common::registry()).unwrap();
    common::populate(&mut sa, 10, 1);
    sb.timers()
        .after(secs(1.0))
        .owner(OwnerId::new(99))
        .name("b")
        .durable(Offline::Freeze)
        .call(common::record);
    a.end_frame(sa.timers(), |_| Ok(())).unwrap();
    b.end_frame(sb.timers(), |_| Ok(())).unwrap();
    assert_eq!(a.store().load("a").unwrap().timers.len(), 10);
    assert_eq!(a.store().load("b").unwrap().timers.len(), 1);
}
