//! Durable tickflow timers: timers and owners that outlive the process, on SQLite (embedded,
//! the default) or PostgreSQL (many processes, behind the `postgres` feature).
//!
//! A game marks the timers that must survive a restart or a crash —
//! [`durable`](tickflow::timer::TimerBuilder::durable) — and calls [`Durable::end_frame`]
//! after each frame. The frame's changes are written in one numbered transaction together with
//! the game's own effects; after a restart, [`Durable::resume`] gives back everything the node
//! held at its last commit, and every timer fires on the frame it would have. Entities walk
//! between nodes with [`Durable::send`] and [`Durable::receive`]; in a fleet without a
//! director, live nodes adopt the owners of a node that was lost ([`Durable::adopt`]), and a
//! node that was paused past its lease rejoins by itself.
//!
//! | piece | what it is |
//! |---|---|
//! | [`Durable`] | the one way in: resume, commit at frames' ends, send and receive owners, adopt a lost node's |
//! | [`TakeoverRule`], [`Rendezvous`] | which live node of a fleet adopts which owner of a lost one |
//! | [`Sqlite`], [`Postgres`] | the two databases ([`Store`]: the primitives both give) |
//! | [`Handovers`] | the owner registry and handover outbox, step by step, for tools |
//! | [`Inspect`] | what a node left, read without taking the node (tools, checkers) |
//! | [`StoreError`] | what was refused and why (a damaged row names its key and column) |
//! | [`backend`] | what only a backend implementer needs |
//!
//! What is durable is each timer marked so, as one row keyed by its node, owner and name, with
//! its clock, due time, period, catch-up and offline policies, call count, the user's payload
//! bytes, the owner's epoch and a checksum. Owners are the world's: the registry gives each to
//! one node, and a node writes only the owners it holds. Tick functions, tickables, latent
//! actions and tasks stay in memory: they are code, and a game sets them up again at start
//! (an owner that moves takes them along).

#![warn(missing_docs)]

pub mod backend;
mod durable;
mod error;
mod handover;
mod inspect;
#[cfg(feature = "postgres")]
mod postgres;
mod row;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store;
mod sum;
mod tables;
mod vocab;

pub use backend::SCHEMA_VERSION;
pub use durable::{
    Arrival, Commit, Durable, Handover, Rendezvous, Resumed, TakeoverRule, DEFAULT_LEASE,
};
pub use error::StoreError;
pub use handover::{Accepted, Handovers, Holder, Parcel, Settled, MAX_PARCEL};
pub use inspect::{Inspect, Saved};
#[cfg(feature = "postgres")]
pub use postgres::{Postgres, OUTBOX_CHANNEL};
pub use row::{MAX_NAME, MAX_PAYLOAD};
#[cfg(feature = "sqlite")]
pub use sqlite::Sqlite;
pub use store::Store;
pub use vocab::NodeClocks;
