//! Save games and rollback: schedulers and timer managers as plain data.
//!
//! Rollback netcode (GGRS-style), save games and moving an entity between server shards all
//! need the scheduling state of a game as data: the clocks, every timer, every tick
//! function's settings and interval phase, the latent actions, and the handle allocators, so
//! that a restored world hands out the same handles and makes the same calls in the same
//! order as the original.
//!
//! - [`Timers::snapshot`](crate::timer::Timers::snapshot) /
//!   [`TimerManager::restore`](crate::timer::TimerManager::restore) for a timer manager on its
//!   own, [`Scheduler::snapshot`] / [`Scheduler::restore`] for the whole frame pipeline.
//! - Snapshots are plain data ([`TimerSnapshot`],
//!   [`SchedulerSnapshot`]): `Clone + PartialEq`, and with the `serde` feature
//!   `Serialize + Deserialize` in any serde format (JSON for save files you can read, a
//!   compact binary one such as postcard or bincode for the network).
//! - Closures are the one thing a snapshot cannot hold. On restore, each callback is bound
//!   again by a [`Resolver`], usually a [`Registry`] of callbacks by name: timers by their
//!   [`name`](crate::timer::TimerBuilder::name) or [`tag`](crate::timer::TimerBuilder::tag),
//!   tick functions by [`TickSettings::name`](crate::tick::TickSettings::name), tickables by
//!   [`Tickable::name`], latent completions by their `(owner, uuid)` key. A callback's captured
//!   state must therefore be derivable from its key or live in the context `C` (which is yours
//!   to save).
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
//! - **Async tasks** ([`Tasks::spawn`](crate::latent::Tasks::spawn)) are opaque futures: a snapshot counts them as not
//!   saved (their delay timers are left out, as if the tasks had been cancelled), and
//!   [`RestoreReport::tasks_not_saved`] says so. Drive scripted sequences that must survive a
//!   rollback with timers, tick functions or latent actions instead.
//! - Latent actions whose [`LatentAction::save`] returns
//!   `None` (the default for custom actions, and [`WaitUntil`](crate::latent::WaitUntil),
//!   whose condition is a closure) are listed in [`RestoreReport::latent_not_saved`].
//! - `on_cancel` hooks already queued for the next frame are closures; they are counted in the
//!   report (so are removed latent actions waiting for their abort hook that cannot save
//!   themselves). `on_cancel` hooks of live timers are bound again through
//!   [`BindTimers::timer_on_cancel`] when the resolver offers them.
//! - Owners frozen for a handover ([`Scheduler::freeze_owner`]): their items are out of the
//!   scheduler, their callbacks held aside; and the epochs of owners that moved (a restored
//!   scheduler accepts any move again).
//! - Commands queued through [`Commands`](crate::scheduler::Commands) and not yet applied:
//!   call [`Scheduler::apply_commands`] before taking a snapshot (any direct call on the
//!   scheduler, and every frame, applies them first too).
//! - [`TickFunctions::set_parallel`](crate::tick::TickFunctions::set_parallel) is a setting of the machine, not state of the game (both
//!   settings give the same results): a restored scheduler starts with the default, parallel.
//!   Parallel tick functions keep their state `S` in the closure, so like every callback
//!   they start afresh from the resolver; state that must survive a rollback lives in `C`.
//!
//! Snapshots are taken between frames (a snapshot taken from inside a timer callback panics).
//!
//! # Examples
//!
//! A save game: the state of the game is yours (here a counter), the scheduling state is
//! tickflow's, and a [`Registry`] binds callbacks by name.
//!
//! ```
//! use tickflow::prelude::*;
//! use tickflow::snapshot::Registry;
//!
//! #[derive(Clone, Debug, Default, PartialEq)]
//! struct Game { gold: u32, frames: u32 }
//!
//! fn income(g: &mut Game, _: &mut TimerCx<Game>) {
//!     g.gold += 10;
//! }
//! fn count(g: &mut Game, _: &mut TickCx<Game>) {
//!     g.frames += 1;
//! }
//!
//! let mut sched = Scheduler::<Game>::new();
//! sched.timers().every(secs(1.0)).name("income").call(income);
//! sched.ticks().add(TickSettings::named("count"), count);
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
//! let mut callbacks = Registry::new().timer("income", income).tick("count", count);
//! let (mut loaded, report) = Scheduler::restore(&saved, &mut callbacks).unwrap();
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
//!
//! # Moving an owner between schedulers
//!
//! A server that outgrows one process shards its world, and entities cross from one shard to
//! another. [`Scheduler::export_owner`] takes everything one [`OwnerId`] has (timers, tick
//! functions, tickables, latent actions) out of a scheduler as an [`OwnerSnapshot`], with
//! times relative to that scheduler's clocks; [`Scheduler::import_owner`] sets it up in
//! another, re-anchored on its clocks, and returns a [`HandleMap`] from the old handles to
//! the new ones. The snapshot is plain data: send it over the network with the entity's own
//! state (postcard with the `serde` feature: 37 bytes per named timer).
//!
//! - **What the owner keeps**: time to each timer's next call, calls made and left, pause,
//!   domain and catch-up policy, names and tags; each tick function's settings, interval
//!   phase and prerequisites among its own functions (one on another owner's function is
//!   re-linked by name when the destination has it, else listed in
//!   [`HandleMap::unlinked_prerequisites`]); latent actions with the time they counted.
//!   Calls keep their per-owner order: an owner that moves between schedulers in lockstep
//!   makes the same calls, with the same arguments, in the same order as if it had stayed
//!   (`tests/migrate_split_world.rs` holds this under random moves). Relative to other
//!   owners, its items count as set at the import.
//! - **What cannot move**: closures, so callbacks are bound again by the destination's
//!   [`Resolver`] exactly as after a restore; a tickable object is built again by name (its
//!   own state is the game's to carry); async tasks, which the export cancels
//!   ([`OwnerSnapshot::tasks_not_moved`]); latent actions that cannot save themselves
//!   ([`OwnerSnapshot::latent_not_moved`]).
//! - **Exactly once**: a snapshot carries `(owner, epoch)`, and the epoch counts the owner's
//!   moves, so a destination refuses a snapshot it imported already or an older one
//!   ([`ImportError::Duplicate`]): a retried network delivery cannot duplicate an entity. A
//!   failed import changes nothing.
//! - **Two-phase handover**: [`Scheduler::freeze_owner`] takes the owner out but keeps its
//!   callbacks; once the destination confirms, [`Scheduler::commit_owner`] drops them,
//!   and if the handover fails, [`Scheduler::abort_owner`] puts everything back with the
//!   time it had left (its time stood still meanwhile).
//! - **With a server framework's handover** (a region server passing a player on, an actor
//!   activated elsewhere): the losing side exports between two frames and ships the bytes
//!   with the entity's state; the gaining side imports before its next frame and fixes the
//!   handles it keeps through the [`HandleMap`]. A framework that confirms in two steps
//!   uses freeze, then commit or abort. Cross-entity effects that must not depend on where
//!   an entity runs travel as messages applied at a fixed point of the frame, as in the
//!   `tickflow demo --shards N` arena, which prints the one-shard checksum.
//! - **Long timers** (a building that finishes tomorrow) should not depend on one process
//!   staying up: keep them as rows in the game's database (owner, due time, what to do),
//!   arm a timer when the entity is loaded and its due time is near, and write the time left
//!   back when it unloads.
//! - **Costs** (`tickflow bench --only snapshot`, SN2 in `BENCHMARKS.md`): an owner shaped
//!   like a demo actor (two tick functions, two timers, a projectile in flight) moves in
//!   about 3 µs (export, postcard both ways, import) and 194 bytes.
//!
//! ```
//! use tickflow::prelude::*;
//! use tickflow::snapshot::Registry;
//!
//! /// The owner's state: hit points. Callbacks find it through the owner id.
//! #[derive(Default)]
//! struct Shard { hp: std::collections::BTreeMap<u64, u32> }
//!
//! fn regen(id: u64) -> impl FnMut(&mut Shard, &mut TimerCx<Shard>) + Send {
//!     move |s: &mut Shard, _: &mut TimerCx<Shard>| *s.hp.entry(id).or_default() += 1
//! }
//! // The callback is made for the owner the saved timer had.
//! let mut bind =
//!     Registry::new().timer_with("regen", |info| Box::new(regen(info.owner.unwrap().get())));
//!
//! let orc = OwnerId::new(7);
//! let (mut west, mut east) = (Scheduler::<Shard>::new(), Scheduler::<Shard>::new());
//! let (mut w, mut e) = (Shard::default(), Shard::default());
//! west.timers().every(secs(1.0)).owner(orc).name("regen").call(regen(7));
//! for _ in 0..90 {
//!     west.tick(Span::frames(1, 60), &mut w); // 1.5 s: one call, the next due in 0.5 s
//!     east.tick(Span::frames(1, 60), &mut e);
//! }
//!
//! // The orc walks east: its timer and its hit points go together.
//! let moved = west.export_owner(orc);
//! let hp = w.hp.remove(&7).unwrap();
//! # #[cfg(feature = "serde")]
//! let moved: tickflow::snapshot::OwnerSnapshot =
//!     serde_json::from_str(&serde_json::to_string(&moved).unwrap()).unwrap();
//! east.import_owner(&moved, &mut bind).unwrap();
//! e.hp.insert(7, hp);
//! assert!(east.import_owner(&moved, &mut bind).is_err(), "delivered twice: refused");
//!
//! for _ in 0..30 {
//!     east.tick(Span::frames(1, 60), &mut e); // 0.5 s later: the second call, on time
//! }
//! assert_eq!(e.hp[&7], 2);
//! assert!(west.timers().is_empty());
//! ```

pub use crate::format::{stable_hash, RestoreError, FORMAT_VERSION};
// The one public path of these types (they live beside the code that makes them).
pub use crate::latent::BindLatent;
pub use crate::scheduler::migrate::{HandleMap, ImportError, OwnerSnapshot};
pub use crate::scheduler::registry::Registry;
pub use crate::scheduler::resolver::{Resolver, RestoreReport};
pub use crate::scheduler::snapshot::SchedulerSnapshot;
pub use crate::scheduler::sync::{sync_test, SyncError, SyncReport};
pub use crate::tick::BindTicks;
pub use crate::tickable::BindTickables;
pub use crate::timer::snapshot::TimerSnapshot;
pub use crate::timer::BindTimers;

#[cfg(doc)]
use crate::latent::LatentAction;
#[cfg(doc)]
use crate::owner::OwnerId;
#[cfg(doc)]
use crate::scheduler::Scheduler;
#[cfg(doc)]
use crate::tickable::Tickable;
