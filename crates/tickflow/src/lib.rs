//! tickflow: exact, deterministic time services for game loops, simulations and game servers.
//!
//! # Start here: the loop of a small game
//!
//! A [`Scheduler`] owns every time service and runs them in one frame pipeline; your game
//! state is the context `C` that every callback receives. Add tick functions (per-frame
//! work, in ordered groups), timers and async tasks, then advance it once per frame. The
//! [`driver::FixedStep`] turns a render loop's frames, whatever their length, into fixed
//! simulation steps:
//!
//! ```
//! use std::time::Duration;
//! use tickflow::driver::FixedStep;
//! use tickflow::prelude::*;
//!
//! #[derive(Default)]
//! struct Game { x: f64, waves: u32, boss_said: Vec<&'static str> }
//!
//! let mut sched = Scheduler::<Game>::new();
//! // Every frame: move, by exactly this frame's game time.
//! sched.ticks().add(TickSettings::named("move"), |g: &mut Game, cx| {
//!     g.x += 60.0 * cx.dt().as_secs_f64();
//! });
//! // Every 2 s of game time: a wave.
//! sched.timers().every(secs(2.0)).call(|g: &mut Game, _| g.waves += 1);
//! // A script that waits across frames.
//! sched.tasks().spawn(None, |cx| async move {
//!     cx.delay(secs(1.0)).await;
//!     cx.with(|g| g.boss_said.push("you are late"));
//! });
//!
//! let mut game = Game::default();
//! let mut fixed = FixedStep::new(60); // 60 steps of exactly 1/60 s per second
//! for _ in 0..150 {
//!     // In a real loop: the time since the last rendered frame, from `Instant::now()`.
//!     let rendered_frame = Duration::from_millis(33);
//!     let (due, _) = fixed.run(rendered_frame, &mut sched, &mut game);
//!     let _draw_between_the_last_two_states_at = due.alpha;
//! }
//! // 150 frames of 33 ms: 4.95 s, so 297 steps have run and 0.0 s are carried.
//! assert_eq!(sched.clocks().frame(), 297);
//! assert_eq!(sched.clocks().now(Domain::Game).since_start(), Span::frames(297, 60));
//! assert_eq!((game.waves, game.boss_said.len()), (2, 1));
//! assert!((game.x - 60.0 * 4.95).abs() < 1e-9);
//! ```
//!
//! **Fixed or variable delta.** Pass each frame's measured duration straight to
//! [`Scheduler::tick`] (`sched.tick(frame_time.into(), &mut game)`) for a variable step: one
//! frame of the pipeline per rendered frame, `cx.dt()` is the frame's length, as in Unreal's
//! tick or Unity's `Update` (a frame longer than [`Scheduler::max_delta`], 0.25 s by default,
//! counts as that long, so a debugger pause is not one giant step). Put [`driver::FixedStep`] in between for a fixed step, as in
//! Unity's `FixedUpdate` or Bevy's `FixedUpdate`: the simulation, timers included, sees only
//! steps of exactly `1/hz` s, so it is the same on every machine (and can be replayed or
//! rolled back); render with `due.alpha` between the last two states. Timers are exact
//! either way: a timer due in the middle of a frame fires in that frame, with its
//! [`scheduled`](timer::TimerCx::scheduled) time. A server has no render loop: it paces
//! itself with [`driver::PacedRunner`] (a thread) or [`driver::Pacer`] (an async task).
//!
//! **Threads.** The containers are `Send`, whatever the context type (they never hold one),
//! and [`Commands`] and the task handles are `Send + Sync`: a scheduler can live in a tokio
//! task or move to a worker thread. Callbacks must be `Send` for that; keep state that is not
//! (an `Rc`) in the context, which every callback receives. What each kind of callback can
//! reach, and how, is in the [scheduler docs](scheduler#one-context-for-every-callback).
//!
//! **Callbacks kept in variables.** A closure passed straight to `call` or `ticks().add` gets
//! its argument types from there. One stored in a variable first does not, and Rust asks for
//! the types of `|g, cx|`: write them (the context's lifetime can stay elided), or use a
//! function:
//!
//! ```
//! use tickflow::prelude::*;
//!
//! let regen = |hp: &mut u32, _: &mut TimerCx<u32>| *hp += 1;
//! let mut sched = Scheduler::<u32>::new();
//! sched.timers().every(secs(1.0)).call(regen);
//! let mut hp = 0;
//! for _ in 0..60 {
//!     sched.tick(Span::frames(1, 20), &mut hp); // 3 s of 20 Hz frames
//! }
//! assert_eq!(hp, 3);
//! ```
//!
//! **Where to go next.** Programs to copy, each run by CI: `cargo run -p tickflow --example
//! game_loop` (the loop above, with real frames), `--example tokio_rooms` (a tokio game
//! server: rooms on `Pacer`, heartbeats on the real-time service), and `cargo run -p
//! tickflow-bevy --example headless` (Bevy: the `tickflow-bevy` plugin runs a scheduler in
//! Bevy's fixed step, with timers as components and delayed commands). `cargo run --release`
//! runs the `tickflow` tool's demo, an arena that uses every part.
//!
//! # The parts
//!
//! - [`time`]: exact integer time (flicks), [`Span`], [`Time`] and the three clocks.
//! - [`timer`]: [`Timers`], one-shot and looping timers with generational handles. They
//!   also stand alone: `TimerManager::<Game>::new()` and `timers.tick(dt, &mut game)`.
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
//!   restored exactly (below); and one entity's part of it, moved to another scheduler
//!   ([`Scheduler::export_owner`], [`Scheduler::import_owner`]) when a server shards its world.
//!
//! Cargo feature `tracing` (off by default): a [`tracing`](https://docs.rs/tracing) span per
//! frame (`frame`, with the frame number) and per stage (named after the [`Stage`]:
//! `FrameStart`, `PrePhysics` … `NewlySpawned`) of [`Scheduler::tick`], for any subscriber or
//! profiler; the `tickflow demo` tool turns them into a Perfetto trace. Cargo feature `serde`
//! (off by default): `Serialize`/`Deserialize` for the [snapshots](snapshot). Cargo feature
//! `rayon` (on by default): parallel tick functions on rayon's pool and
//! [`Dispatch::Pool`](realtime::Dispatch) for real-time timers; without it parallel groups run
//! one function after the other, in the same order and with the same results. Unreal's
//! `SetTimer` calls are an opt-in extension, [`compat::UnrealTimers`].
//!
//! # Save games and rollback
//!
//! [`Scheduler::snapshot`] saves every clock, timer, tick function, tickable and latent action
//! with the handle allocators as plain data; [`Scheduler::restore`] builds a scheduler from it
//! that hands out the same handles and makes the same calls in the same order, binding the
//! callbacks again by name through a [`Registry`](snapshot::Registry). Your game
//! state is yours to copy. A rollback netcode loop keeps the last confirmed frame and
//! re-simulates from it when a late input arrives:
//!
//! ```
//! use tickflow::prelude::*;
//! use tickflow::snapshot::Registry;
//!
//! #[derive(Clone, Debug, PartialEq)]
//! struct World { hp: u32 }
//!
//! fn regen(w: &mut World, _: &mut TimerCx<World>) { w.hp += 1 }
//!
//! // Binds callbacks by name after a restore.
//! let mut callbacks = Registry::new().timer("regen", regen);
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
//! let (mut resim, report) = Scheduler::restore(&confirmed.0, &mut callbacks).unwrap();
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
// Three modules need unsafe code (`executor/lend.rs`, `timer/callback.rs` and `prefetch.rs`,
// which say why); each opts in alone.
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![doc(test(attr(deny(warnings))))]

mod commands;
pub mod compat;
mod cx;
pub mod driver;
mod executor;
mod format;
mod handle;
pub mod latent;
mod owner;
mod prefetch;
pub mod realtime;
pub mod scheduler;
mod sleep;
pub mod snapshot;
#[cfg(test)]
mod test_rng;
pub mod tick;
pub mod tickable;
pub mod time;
pub mod timer;
mod unwind;

pub use commands::Commands;
pub use cx::Cx;
pub use latent::{
    LatentAction, LatentActionManager, LatentActions, LatentCx, TaskCx, TaskHandle, TaskRef,
};
pub use owner::OwnerId;
pub use scheduler::{FrameReport, Scheduler, Stage};
pub use tick::{Deferred, TickCx, TickError, TickGroup, TickHandle, TickSettings};
pub use tickable::{Tickable, TickableCx, TickableHandle, TickableMode};
pub use time::{
    millis, secs, CatchUp, Clocks, Domain, Frames, Span, Time, TimeError, FLICKS_PER_SECOND,
    MAX_TIME_DILATION,
};
pub use timer::{TimerBuilder, TimerCx, TimerHandle, TimerInfo, TimerManager, TimerState, Timers};

/// The names most programs use, for `use tickflow::prelude::*`: the twenty that the quickstart
/// and the four common tasks name (a game loop with timers and tick functions, a tokio server
/// room, save and rollback, durable timers). Everything else is at the crate's root
/// (`tickflow::Timers`, `tickflow::Tickable`, `tickflow::LatentActions`, ...) or in its module.
pub mod prelude {
    pub use crate::commands::Commands;
    pub use crate::latent::{LatentCx, TaskCx};
    pub use crate::owner::OwnerId;
    pub use crate::scheduler::Scheduler;
    pub use crate::tick::{TickCx, TickGroup, TickHandle, TickSettings};
    pub use crate::time::{millis, secs, CatchUp, Clocks, Domain, Frames, Span, Time};
    pub use crate::timer::{TimerCx, TimerHandle, TimerManager};
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
        send::<LatentActionManager<Local>>();
        send_sync::<Commands<Local>>();
        send_sync::<TaskCx<Local>>();
        send_sync::<TaskHandle<u32>>();
        send_sync::<latent::TaskRef>();
        send_sync::<realtime::RealtimeTimers>();
    }
};
