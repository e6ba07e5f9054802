//! Durable tickflow timers: timers that outlive the process, on SQLite (embedded, the default)
//! or PostgreSQL (many processes).
//!
//! A game marks the timers that must survive a restart or a crash —
//! [`durable`](tickflow::timer::TimerBuilder::durable) — and calls [`Durable::end_frame`]
//! after each frame. The frame's changes are written in one transaction together with the
//! game's own effects; after a restart, [`Durable::resume`] brings the scheduler back at the
//! last commit's clocks, and every timer fires on the frame it would have.
//!
//! | piece | what it is |
//! |---|---|
//! | [`Durable`] | the one way in: commit at frames' ends, resume, claim owners |
//! | [`Store`] | what a database provides; [`Sqlite`] and [`Postgres`] implement it |
//! | [`Handovers`] | an owner registry and handover outbox: entities that move between processes |
//! | [`StoreError`] | what was refused and why (a damaged row names its key and column) |
//!
//! What is durable is each timer marked so, as one row keyed by its owner and name, with its
//! clock, due time, period, catch-up and offline policies, call count, the user's payload
//! bytes and the owner's epoch (a write fence: a process that lost an owner to another cannot
//! overwrite the newer owner's rows). Tick functions, tickables, latent actions and tasks stay
//! in memory: they are code, and a game sets them up again at start.

#![warn(missing_docs)]

mod durable;
mod error;
mod handover;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
mod postgres_handover;
mod row;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_handover;
mod store;

pub use durable::{Durable, Resumed};
pub use error::StoreError;
pub use handover::{Accepted, Handovers, Holder, Parcel, Settled, MAX_PARCEL};
#[cfg(feature = "postgres")]
pub use postgres::Postgres;
#[cfg(feature = "postgres")]
pub use postgres_handover::OUTBOX_CHANNEL;
pub use row::{NodeClocks, MAX_NAME, MAX_PAYLOAD};
#[cfg(feature = "sqlite")]
pub use sqlite::Sqlite;
pub use store::{Batch, Part, Saved, Store, PART_ROWS, SCHEMA_VERSION};
