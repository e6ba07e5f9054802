//! Save games and rollback: schedulers and timer managers as plain data.
//!
//! Rollback netcode (GGRS-style), save games and moving an entity between server shards all
//! need the scheduling state of a game as data: the clocks, every timer, every tick
//! function's settings and interval phase, the latent actions, and the handle allocators, so
//! that a restored world hands out the same handles and makes the same calls in the same
//! order as the original.
//!
//! - [`TimerManager::snapshot`](crate::timer::TimerManager::snapshot) /
//!   [`TimerManager::restore`](crate::timer::TimerManager::restore) for a timer manager on its
//!   own, [`Scheduler::snapshot`] / [`Scheduler::restore`] for the whole frame pipeline.
//! - Snapshots are plain data ([`TimerSnapshot`],
//!   [`SchedulerSnapshot`]): `Clone + PartialEq`, and with the `serde` feature
//!   `Serialize + Deserialize` in any serde format (JSON for save files you can read, a
//!   compact binary one such as postcard or bincode for the network).
//! - Closures are the one thing a snapshot cannot hold. On restore, each callback is bound
//!   again by a [`Resolver`]: timers by their [`name`](crate::timer::TimerBuilder::name) or
//!   [`tag`](crate::timer::TimerBuilder::tag), tick functions by
//!   [`TickSettings::name`](crate::tick::TickSettings::name), tickables by
//!   [`Tickable::name`], latent completions by their
//!   `(owner, uuid)` key. A callback's captured state must therefore be derivable from its
//!   key or live in the context `C` (which is yours to save).
//! - Restoring is all or nothing: a callback the resolver cannot bind, a snapshot of another
//!   format version, data that contradicts itself or values no running scheduler reaches (a
//!   clock or counter at its end) give a [`RestoreError`] that names the problem, and nothing
//!   is built. Edited values that are still consistent simply restore and run: with every
//!   field of a snapshot set to extreme values, and with random bytes flipped, neither
//!   restore nor the scheduler it builds panics (`tests/snapshot_damage.rs`).
//! - [`Scheduler::state_hash`] hashes all scheduling state with a fixed, platform-independent
//!   hash (FNV-1a over little-endian integers) for desync detection, and [`sync_test`] runs a
//!   GGRS SyncTest: it rolls back every few frames, re-simulates, and compares hashes, frame
//!   reports and a checksum of your context.
//!
//! # What is not saved
//!
//! - **Async tasks** ([`Scheduler::spawn`]) are opaque futures: a snapshot counts them as not
//!   saved (their delay timers are left out, as if the tasks had been cancelled), and
//!   [`RestoreReport::tasks_not_saved`] says so. Drive scripted sequences that must survive a
//!   rollback with timers, tick functions or latent actions instead.
//! - Latent actions whose [`LatentAction::save`] returns
//!   `None` (the default for custom actions, and [`WaitUntil`](crate::latent::WaitUntil),
//!   whose condition is a closure) are listed in [`RestoreReport::latent_not_saved`].
//! - `on_cancel` hooks already queued for the next frame are closures; they are counted in the
//!   report (so are removed latent actions waiting for their abort hook that cannot save
//!   themselves). `on_cancel` hooks of live timers are bound again through
//!   [`Resolver::timer_on_cancel`] when the resolver offers them.
//! - Commands queued through [`Commands`](crate::scheduler::Commands) and not yet applied:
//!   call [`Scheduler::apply_commands`] before taking a snapshot (any direct call on the
//!   scheduler, and every frame, applies them first too).
//! - [`Scheduler::set_parallel`] is a setting of the machine, not state of the game (both
//!   settings give the same results): a restored scheduler starts with the default, parallel.
//!   Parallel tick functions keep their state `S` in the closure, so like every callback
//!   they start afresh from the resolver; state that must survive a rollback lives in `C`.
//!
//! Snapshots are taken between frames (a snapshot taken from inside a timer callback panics).
//!
//! # Examples
//!
//! A save game: the state of the game is yours (here a counter), the scheduling state is
//! tickflow's, and the resolver binds callbacks by name.
//!
//! ```
//! use tickflow::prelude::*;
//! use tickflow::snapshot::Resolver;
//! use tickflow::tick::{TickBody, TickInfo};
//! use tickflow::timer::{TimerCallback, TimerInfo};
//!
//! #[derive(Clone, Debug, Default, PartialEq)]
//! struct Game { gold: u32, frames: u32 }
//!
//! /// Every callback of the game, by name.
//! struct Callbacks;
//! impl Resolver<Game> for Callbacks {
//!     fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<Game>> {
//!         match info.name.as_deref()? {
//!             "income" => Some(Box::new(|g: &mut Game, _: &mut TimerCx<Game>| g.gold += 10)),
//!             _ => None,
//!         }
//!     }
//!     fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Game>> {
//!         match info.settings.name.as_str() {
//!             "count" => Some(TickBody::serial(|g: &mut Game, _: &mut TickCx<Game>| g.frames += 1)),
//!             _ => None,
//!         }
//!     }
//! }
//!
//! let mut sched = Scheduler::<Game>::new();
//! sched.timers().every(secs(1.0)).name("income").call(|g, _| g.gold += 10);
//! sched.add_tick(TickSettings::named("count"), |g, _| g.frames += 1);
//! let mut game = Game::default();
//! for _ in 0..90 {
//!     sched.tick(Span::frames(1, 60), &mut game);
//! }
//!
//! // Save. With the `serde` feature the snapshot is a serde value like any other: here it
//! // goes through JSON, as a save file would (your game state goes beside it).
//! let saved = sched.snapshot();
//! # #[cfg(feature = "serde")]
//! let saved: tickflow::snapshot::SchedulerSnapshot =
//!     serde_json::from_str(&serde_json::to_string(&saved).unwrap()).unwrap();
//! let saved_game = game.clone();
//!
//! // Load, and both worlds go on identically.
//! let (mut loaded, report) = Scheduler::restore(&saved, &mut Callbacks).unwrap();
//! assert!(report.is_complete());
//! let mut loaded_game = saved_game;
//! for _ in 0..90 {
//!     sched.tick(Span::frames(1, 60), &mut game);
//!     loaded.tick(Span::frames(1, 60), &mut loaded_game);
//! }
//! assert_eq!(game, Game { gold: 30, frames: 180 });
//! assert_eq!(loaded_game, game);
//! assert_eq!(loaded.state_hash(), sched.state_hash());
//! ```
//!
//! Rollback: [`sync_test`] checks that a world survives it (see its docs); a game's own
//! rollback loop keeps the last few snapshots, restores the one before a late input, and
//! re-simulates.

mod sync;

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::latent::{Completion, LatentAction, LatentInfo};
use crate::tick::{TickBody, TickInfo};
use crate::tickable::{Tickable, TickableInfo};
use crate::timer::{CancelHook, TimerCallback, TimerInfo};

use crate::scheduler::Scheduler;

pub use crate::scheduler::SchedulerSnapshot;
pub use crate::timer::TimerSnapshot;
pub use sync::{sync_test, SyncError, SyncReport};

/// The snapshot format this build writes and reads. Restoring a snapshot of another version
/// fails with [`RestoreError::Version`].
///
/// Version 2 (this one) added the container id that ties handles to their container, 20-bit
/// generations and the timer manager's catch-up cap; version 1 snapshots are refused.
pub const FORMAT_VERSION: u32 = 2;

/// Why a snapshot could not be restored. Nothing was built or changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestoreError {
    /// The snapshot was written by another format version.
    Version {
        /// The snapshot's version.
        found: u32,
        /// The version this build reads ([`FORMAT_VERSION`]).
        supported: u32,
    },
    /// The snapshot contradicts itself (edited or damaged data).
    Corrupt {
        /// What is wrong.
        reason: String,
    },
    /// The resolver had no callback for something saved: the first one it could not bind.
    Unbound {
        /// `"timer"`, `"tick function"`, `"tickable"` or `"latent action"`.
        kind: &'static str,
        /// Its name (or key, when it has no name).
        name: String,
        /// More about it: its handle, tag, owner or what was missing.
        detail: String,
    },
}

impl RestoreError {
    /// [`RestoreError::Corrupt`] with this reason.
    pub(crate) fn corrupt(reason: impl Into<String>) -> RestoreError {
        RestoreError::Corrupt {
            reason: reason.into(),
        }
    }

    pub(crate) fn unbound_timer(info: &TimerInfo) -> RestoreError {
        let mut detail = format!("{:?}", info.handle);
        if let Some(tag) = info.tag {
            detail += &format!(", tag {tag}");
        }
        if let Some(owner) = info.owner {
            detail += &format!(", {owner:?}");
        }
        RestoreError::Unbound {
            kind: "timer",
            name: info.name.clone().unwrap_or_else(|| "(unnamed)".into()),
            detail,
        }
    }
}

impl fmt::Display for RestoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RestoreError::Version { found, supported } => write!(
                f,
                "snapshot format version {found} cannot be read (this build reads version {supported})"
            ),
            RestoreError::Corrupt { reason } => write!(f, "corrupted snapshot: {reason}"),
            RestoreError::Unbound { kind, name, detail } => {
                write!(f, "no callback to restore {kind} `{name}` ({detail})")
            }
        }
    }
}

impl std::error::Error for RestoreError {}

/// Binds callbacks again when a [`SchedulerSnapshot`] is restored.
///
/// Every method has a default that binds nothing, so implement the ones your game uses; a
/// saved item the resolver cannot bind makes the restore fail with [`RestoreError::Unbound`]
/// naming it. Each method is asked once per saved item, in the order they run.
pub trait Resolver<C> {
    /// A timer's callback, by its name, tag or owner.
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<C>> {
        let _ = info;
        None
    }

    /// The `on_cancel` hook of a timer that had one; `None` (the default) restores the timer
    /// without it ([`RestoreReport::unbound_cancel_hooks`] counts those).
    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<C>> {
        let _ = info;
        None
    }

    /// A tick function's body, by its settings (usually the name). It must be parallel
    /// exactly when [`TickInfo::parallel`] says so.
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<C>> {
        let _ = info;
        None
    }

    /// A tickable object, by its [name](Tickable::name).
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<C>>> {
        let _ = info;
        None
    }

    /// The completion of a latent action, by its `(owner, uuid)` key.
    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<C>> {
        let _ = info;
        None
    }

    /// A custom latent action from the data its [`save`](LatentAction::save) returned as
    /// [`SavedAction::Custom`](crate::latent::SavedAction::Custom).
    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<C>>> {
        let _ = (kind, data);
        None
    }

    /// Called by [`sync_test`] after each restore with the restored scheduler and the copy of
    /// the context it will run: a context that holds handles to its scheduler (such as
    /// [`Commands`](crate::scheduler::Commands)) points them at the restored one here. Your
    /// own rollback loop does the same after [`Scheduler::restore`]. The default does nothing.
    fn after_restore(&mut self, sched: &Scheduler<C>, ctx: &mut C) {
        let _ = (sched, ctx);
    }
}

/// What [`Scheduler::restore`] could not bring back (everything else is exact).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreReport {
    /// Async tasks that were running when the snapshot was taken: futures cannot be saved.
    pub tasks_not_saved: u64,
    /// Commands queued through [`Commands`](crate::scheduler::Commands) and not applied when
    /// the snapshot was taken ([`Scheduler::apply_commands`] before a snapshot avoids them).
    pub commands_not_applied: u64,
    /// Latent actions that could not save themselves.
    pub latent_not_saved: Vec<LatentInfo>,
    /// `on_cancel` hooks of cleared timers that were waiting for the next frame.
    pub dropped_cancel_hooks: u64,
    /// Removed latent actions waiting for their abort hook at the next frame that could not
    /// save themselves (the others are saved, and their hooks run in the restored world).
    pub dropped_aborts: u64,
    /// Live timers restored without their `on_cancel` hook (the resolver had none).
    pub unbound_cancel_hooks: u64,
}

impl RestoreReport {
    /// `true` when nothing was left out: the restored scheduler behaves exactly as the
    /// original.
    pub fn is_complete(&self) -> bool {
        *self == RestoreReport::default()
    }
}

impl fmt::Display for RestoreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_complete() {
            return f.write_str("everything restored");
        }
        let mut parts = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        };
        say(self.tasks_not_saved, "async task(s) not saved");
        say(self.commands_not_applied, "queued command(s) not applied");
        say(
            self.latent_not_saved.len() as u64,
            "latent action(s) not saved",
        );
        say(
            self.dropped_cancel_hooks,
            "queued on_cancel hook(s) dropped",
        );
        say(self.dropped_aborts, "queued latent abort hook(s) dropped");
        say(self.unbound_cancel_hooks, "on_cancel hook(s) not bound");
        f.write_str(&parts.join(", "))
    }
}

/// A 64-bit hash of `value` that is the same on every platform and in every run: FNV-1a over
/// the value's [`Hash`] input, with every integer written little-endian and `usize` as `u64`.
/// [`Scheduler::state_hash`] uses it; use it for your own state to compare across machines.
///
/// Compare hashes made by builds with the same Rust release, as the peers of one game are:
/// the standard library does not promise that the `Hash` input of its own types (how a `str`
/// ends, how a derived enum names its variant) stays the same from one release to the next.
/// The test of this example would catch such a change.
///
/// ```
/// // FNV-1a of the bytes 01 00 00 00 (1u32), 61 ("a") and ff (str's end marker):
/// assert_eq!(tickflow::snapshot::stable_hash(&(1u32, "a")), 0xfa0b_bfc7_3a99_6080);
/// ```
pub fn stable_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = StableHasher(0xcbf2_9ce4_8422_2325);
    value.hash(&mut h);
    h.finish()
}

struct StableHasher(u64);

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u16(&mut self, n: u16) {
        self.write(&n.to_le_bytes());
    }

    fn write_u32(&mut self, n: u32) {
        self.write(&n.to_le_bytes());
    }

    fn write_u64(&mut self, n: u64) {
        self.write(&n.to_le_bytes());
    }

    fn write_u128(&mut self, n: u128) {
        self.write(&n.to_le_bytes());
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_i16(&mut self, n: i16) {
        self.write_u16(n as u16);
    }

    fn write_i32(&mut self, n: i32) {
        self.write_u32(n as u32);
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    fn write_i128(&mut self, n: i128) {
        self.write_u128(n as u128);
    }

    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }
}
