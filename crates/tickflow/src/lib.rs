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
//!
//! Cargo feature `tracing` (off by default): a [`tracing`](https://docs.rs/tracing) span per
//! frame (`frame`, with the frame number) and per stage (named after the [`Stage`]:
//! `PrePhysics` … `NewlySpawned`) of [`Scheduler::tick`], for any subscriber or profiler; the
//! `tickflow demo` tool turns them into a Perfetto trace.
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
// One module needs unsafe code (`latent/lend.rs`, which says why); it opts in alone.
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![doc(test(attr(deny(warnings))))]

pub mod latent;
pub mod realtime;
pub mod scheduler;
pub mod snapshot;
pub mod tick;
pub mod tickable;
pub mod time;
pub mod timer;

pub use latent::{LatentAction, LatentActions, TaskCx, TaskHandle};
pub use scheduler::{Commands, FrameReport, Scheduler, Stage};
pub use tick::{Deferred, TickCx, TickError, TickGroup, TickHandle, TickSettings};
pub use tickable::{Tickable, TickableHandle, TickableMode};
pub use time::{millis, secs, Domain, Span, Time, TimeError, FLICKS_PER_SECOND};
pub use timer::{
    CatchUp, OwnerId, TimerBuilder, TimerCx, TimerHandle, TimerInfo, TimerManager, TimerState,
};

/// The names most programs use, for `use tickflow::prelude::*`.
pub mod prelude {
    pub use crate::latent::{LatentActions, TaskCx, TaskHandle};
    pub use crate::scheduler::{Commands, FrameReport, Scheduler};
    pub use crate::tick::{Deferred, TickCx, TickGroup, TickHandle, TickSettings};
    pub use crate::tickable::{Tickable, TickableHandle};
    pub use crate::time::{millis, secs, Domain, Span, Time};
    pub use crate::timer::{CatchUp, OwnerId, TimerCx, TimerHandle, TimerManager};
}

/// The README's example, compiled and run as a doctest so the front page cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
