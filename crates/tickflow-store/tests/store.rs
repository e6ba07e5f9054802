//! The store's tests that need no process of their own, one module per file, in one test
//! binary: the behaviour every store shares (`common`), run on SQLite and on PostgreSQL (when
//! `TICKFLOW_PG_URL` is set), and damage to the stored bytes. Two binaries linking the same
//! suite cost more to build than their tests take to run. `crash.rs` and `faults.rs`, which
//! run their own binary again as child processes, stay binaries of their own.
//!
//! Run one file's tests by its module name: `cargo test -p tickflow-store --test store sqlite::`.

#[macro_use]
mod common;

mod damage;
mod postgres;
mod sqlite;
