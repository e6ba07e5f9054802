//! tickflow: exact, deterministic time services for game loops, simulations and game servers.
//!
//! - [`time`]: exact integer time (flicks), [`Span`], [`Time`] and the three clocks.
//! - [`timer`]: [`TimerManager`], one-shot and looping timers with generational handles.
//! - [`tick`]: tick functions in ordered groups, with prerequisites, intervals and parallel
//!   groups ([`TickSettings`], [`TickCx`]).
//! - [`tickable`]: light objects that just want `tick(dt)` ([`Tickable`]).
//! - [`latent`]: latent actions ([`LatentActions`], the Delay family) and async tasks
//!   ([`TaskCx`], [`TaskHandle`]) driven by frames.
//! - [`realtime`]: [`RealtimeTimers`](realtime::RealtimeTimers), a thread-safe wall-clock
//!   timer service with drift-free repeats and dispatch to a thread of your choice.
//! - [`scheduler`]: [`Scheduler`], the frame pipeline that runs all of the above.
//! - [`driver`]: the loops: a fixed-step driver for render loops, a paced runner for servers.
//! - [`snapshot`]: save games, rollback and desync checks: all of the above as plain data,
//!   restored exactly (below).
//!
//! The containers are `Send`, whatever the context type (they never hold one), and
//! [`Commands`] and the task handles are `Send + Sync`: a scheduler can live in a tokio task or
//! move to a worker thread. Callbacks must be `Send` for that; keep state that is not (an `Rc`)
//! in the context, which every callback receives. What each kind of callback can reach, and how,
//! is in the [scheduler docs](scheduler#what-every-callback-can-do).
//!
//! Where it runs: your own loop ([`driver::FixedStep`] for a render loop, [`driver::PacedRunner`]
//! for a server thread, [`driver::Pacer`] for an async runtime), a tokio task, or Bevy through
//! the `tickflow-bevy` plugin. Programs to copy, each run by CI: `cargo run -p tickflow
//! --example game_loop` (a render loop on `FixedStep`), `--example tokio_rooms` (a tokio game
//! server: rooms on `Pacer`, heartbeats on the real-time service), and `cargo run -p
//! tickflow-bevy --example headless` (a headless Bevy app).
//!
//! Cargo feature `tracing` (off by default): a [`tracing`](https://docs.rs/tracing) span per
//! frame (`frame`, with the frame number) and per stage (named after the [`Stage`]:
//! `PrePhysics` … `NewlySpawned`) of [`Scheduler::tick`], for any subscriber or profiler; the
//! `tickflow demo` tool turns them into a Perfetto trace. Cargo feature `serde` (off by
//! default): `Serialize`/`Deserialize` for the [snapshots](snapshot).
//!
//! ```
//! use tickflow::prelude::*;
//!
//! struct Game { score: u32 }
//!
//! let mut timers = TimerManager::<Game>::new();
//! timers.every(secs(0.5)).call(|game, _| game.score += 1);
//!
//! let mut game = Game { score: 0 };
//! for _ in 0..60 {
//!     timers.tick(Span::frames(1, 60), &mut game); // one second of 60 Hz frames
//! }
//! assert_eq!(game.score, 2);
//! ```
//!
//! # Save games and rollback
//!
//! [`Scheduler::snapshot`] saves every clock, timer, tick function, tickable and latent action
//! with the handle allocators as plain data; [`Scheduler::restore`] builds a scheduler from it
//! that hands out the same handles and makes the same calls in the same order, binding the
//! callbacks again through a [`Resolver`](snapshot::Resolver) (by name, tag or key). Your game
//! state is yours to copy. A rollback netcode loop keeps the last confirmed frame and
//! re-simulates from it when a late input arrives:
//!
//! ```
//! use tickflow::prelude::*;
//! use tickflow::snapshot::Resolver;
//! use tickflow::timer::{TimerCallback, TimerInfo};
//!
//! #[derive(Clone, Debug, PartialEq)]
//! struct World { hp: u32 }
//!
//! fn regen(w: &mut World, _: &mut TimerCx<World>) { w.hp += 1 }
//!
//! /// Binds callbacks by name after a restore.
//! struct Bind;
//! impl Resolver<World> for Bind {
//!     fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<World>> {
//!         (info.name.as_deref() == Some("regen")).then(|| Box::new(regen) as TimerCallback<World>)
//!     }
//! }
//!
//! let mut sched = Scheduler::<World>::new();
//! sched.timers().every(millis(100)).name("regen").call(regen);
//! let (mut world, dt) = (World { hp: 0 }, Span::frames(1, 60));
//! for _ in 0..10 {
//!     sched.tick(dt, &mut world);
//! }
//! let confirmed = (sched.snapshot(), world.clone()); // frame 10, confirmed by every peer
//! for _ in 0..5 {
//!     sched.tick(dt, &mut world); // frames 11..15, predicted
//! }
//!
//! // A late input for frame 11: roll back to frame 10 and simulate again.
//! let (mut resim, report) = Scheduler::restore(&confirmed.0, &mut Bind).unwrap();
//! assert!(report.is_complete()); // nothing was left out (no async tasks here)
//! let mut resim_world = confirmed.1.clone();
//! for _ in 0..5 {
//!     resim.tick(dt, &mut resim_world);
//! }
//! assert_eq!(resim_world, World { hp: 2 });
//! assert_eq!((resim_world, resim.state_hash()), (world, sched.state_hash()));
//! ```
//!
//! The [`snapshot`] module has the rules, what cannot be saved (async tasks), a save-game
//! example with serde, and [`sync_test`](snapshot::sync_test), which checks that a world
//! survives rollbacks.
// One module needs unsafe code (`latent/lend.rs`, which says why); it opts in alone.
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![doc(test(attr(deny(warnings))))]

pub mod driver;
mod handle;
pub mod latent;
pub mod realtime;
pub mod scheduler;
mod sleep;
pub mod snapshot;
pub mod tick;
pub mod tickable;
pub mod time;
pub mod timer;
mod unwind;

pub use latent::{LatentAction, LatentActions, TaskCx, TaskHandle, TaskRef};
pub use scheduler::{Commands, FrameReport, Scheduler, Stage};
pub use tick::{Deferred, TickCx, TickError, TickGroup, TickHandle, TickSettings};
pub use tickable::{Tickable, TickableHandle, TickableMode};
pub use time::{
    millis, secs, Clocks, Domain, Span, Time, TimeError, FLICKS_PER_SECOND, MAX_TIME_DILATION,
};
pub use timer::{
    CatchUp, OwnerId, TimerBuilder, TimerCx, TimerHandle, TimerInfo, TimerManager, TimerState,
};

/// The names most programs use, for `use tickflow::prelude::*`.
pub mod prelude {
    pub use crate::latent::{LatentActions, TaskCx, TaskHandle, TaskRef};
    pub use crate::scheduler::{Commands, FrameReport, Scheduler};
    pub use crate::tick::{Deferred, TickCx, TickGroup, TickHandle, TickSettings};
    pub use crate::tickable::{Tickable, TickableHandle};
    pub use crate::time::{millis, secs, Clocks, Domain, Span, Time};
    pub use crate::timer::{CatchUp, OwnerId, TimerCx, TimerHandle, TimerManager};
}

/// The README's example, compiled and run as a doctest so the front page cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// What can move between threads: the containers are `Send` (their callbacks, hooks, tick
/// bodies, tickables, latent actions and task futures all are), `Commands` and the task
/// handles are `Send + Sync`. Checked at compile time.
#[allow(dead_code, reason = "compile-time assertions only")]
const _: () = {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    /// A context that is neither `Send` nor `Sync`: the containers never hold one.
    struct Local(std::rc::Rc<()>);
    fn check() {
        send::<Scheduler<Local>>();
        send::<TimerManager<Local>>();
        send::<LatentActions<Local>>();
        send_sync::<Commands<Local>>();
        send_sync::<TaskCx<Local>>();
        send_sync::<TaskHandle<u32>>();
        send_sync::<latent::TaskRef>();
        send_sync::<realtime::RealtimeTimers>();
    }
};
