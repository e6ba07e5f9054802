//! The timer manager: one-shot and looping timers on exact integer time.
//!
//! [`Timers<C>`] sets, clears, pauses and queries timers; its clocks move with the frames of
//! the [`Scheduler`](crate) that holds it (its timer stage), or with
//! [`TimerManager::tick`] for a [`TimerManager<C>`], a complete timer library on its own
//! (tick it from your loop; it derefs to `Timers`). It is modelled on Unreal's
//! `FTimerManager`, Unity's `vp_Timer` and the C# `TickTimer`/`FrameTimer`, with their
//! disagreements settled as below.
//!
//! # Rules
//!
//! 1. [`after`](Timers::after)/[`every`](Timers::every) return a generational
//!    [`TimerHandle`]: a handle of a cleared timer never reaches a newer timer in the same slot.
//! 2. Boundaries are inclusive: a timer due at `t` fires in the first tick whose clock reaches
//!    `t`. A period equal to the frame delta fires once every frame (Unreal: 0, 2, 0, 2).
//! 3. The *pending rule*: after [`begin_frame`](TimerManager::begin_frame), timers set before
//!    this frame's tick count their delay from the time that tick reaches, so the delta of the
//!    frame they were created in never counts. A manager that is never told about frames treats
//!    every set as made right after the last tick.
//! 4. Calls run in exact global due order, ties in set order. A looping timer several periods
//!    late follows its [`CatchUp`](crate::time::CatchUp) policy, and every burst call takes its
//!    own place in the order (A due at 0.3/0.6/0.9 and B at 0.5 run A, B, A, A). One timer makes
//!    at most [`DEFAULT_CATCH_UP_CAP`](crate::time::DEFAULT_CATCH_UP_CAP) calls per tick
//!    ([`set_catch_up_cap`](Timers::set_catch_up_cap)): whatever the delta, the rest of its missed
//!    periods are dropped onto its grid and counted, so no input makes one tick do unbounded work.
//! 5. A callback may set, clear, pause or query any timer, itself included; clearing itself
//!    drops the rest of its burst. A timer set from a callback counts from that call's scheduled
//!    time (chains of one-shots do not drift) but never fires in the tick that set it.
//! 6. A zero period means "once every tick"; Unreal-style
//!    [`set_timer`](crate::compat::UnrealTimers::set_timer) with a zero rate clears instead
//!    (Unreal's rule).
//! 7. `on_cancel` hooks run at the start of the next tick for timers cleared before they
//!    finished; `clear` itself never calls user code (beyond dropping the closure).
//! 8. Pause keeps the remaining time exactly; unpause resumes from it.
//! 9. Bad input never corrupts state: stale handles, and handles of another manager, answer
//!    `false`/`None`; a panicking callback (or closure destructor) leaves the manager
//!    consistent (a one-shot counts as fired, a looping timer keeps its schedule, the panic
//!    reaches the caller of `tick`, the next `tick` works).
//!
//! At the end of representable time (about 829 years of a clock) the clocks stop, and timers
//! not yet due never fire; [`at_end_of_time`](Timers::at_end_of_time) and the
//! scheduler's [`FrameReport::end_of_time`](crate::FrameReport::end_of_time) say so.
//!
//! # Callbacks stored in variables
//!
//! A closure passed straight to [`call`](TimerBuilder::call) needs no annotation. One stored
//! in a variable first must say its argument types, or Rust infers a signature for one
//! lifetime only and reports "implementation of `FnMut` is not general enough":
//!
//! ```
//! use tickflow::prelude::*;
//!
//! struct Game { hp: u32 }
//! let mut timers = TimerManager::<Game>::new();
//!
//! // Write both argument types...
//! let regen = |g: &mut Game, _: &mut TimerCx<Game>| g.hp += 1;
//! timers.every(secs(1.0)).call(regen);
//! // ...or use a function, which works as it is.
//! fn shield(g: &mut Game, _: &mut TimerCx<Game>) { g.hp += 5 }
//! timers.after(secs(2.0)).call(shield);
//! ```
//!
//! The same holds for tick functions (`|g: &mut Game, cx: &mut TickCx<Game>|`).
//!
//! # Engine and limits
//!
//! Timers not yet due live in a hierarchical timing wheel per clock (Varghese & Lauck; see
//! `wheel/`) with lazy removal; a tick's due calls are sorted once (`ready/`), and calls
//! that become due while it runs join through a small heap. Insert, clear and pause are O(1)
//! (amortized); a tick costs O(due calls × log(due calls) + non-empty wheel slots passed +
//! records moved down a level), never O(all timers).
//!
//! Memory per idle timer: 40 bytes (a 32-byte record and an 8-byte wheel entry) plus the
//! 16-byte callback stored beside the record: a closure that captures at most 8 bytes (nothing,
//! an id, a handle, an `Arc`) lives in it with no allocation of its own; a larger one is boxed
//! (the box's size on top). Plus growth slack (about 1.2 B at 1e6 timers made with
//! [`TimerManager::with_capacity`]), and the records of cleared or paused timers until their
//! wheel slot is reached or compacted (at most about one per live timer of the slot; about
//! 5 B per timer after a million clear-and-set pairs without a tick). Each wheel level keeps
//! the largest record buffer an emptied slot gave back, for reuse: after a million timers have
//! fired, a few MiB stay with the manager until it is dropped. Owner, name, `on_cancel`, `times(n)`
//! and a first delay different from the period add a side-table entry only to the timers that
//! use them; [tags](TimerBuilder::tag), which a game sets on many timers to rebind them after a
//! [restore](TimerManager::restore), live in a dense table of 8 bytes per slot, made when the
//! first tag is set. Each manager has about 140 KiB of fixed tables (three wheels): make one per world,
//! not one per entity (owners are the per-entity handle). Resolution 1 flick
//! (1.42 ns); range about 829 years; up to 2^32 − 2 timers at once.
//!
//! # Examples
//!
//! ```
//! use tickflow::time::{secs, Span};
//! use tickflow::timer::TimerManager;
//!
//! let mut timers = TimerManager::<Vec<&str>>::new();
//! timers.after(secs(0.5)).call(|log, _| log.push("boom"));
//! let tick = timers.every(secs(0.2)).times(3).call(|log, _| log.push("tick"));
//!
//! let mut log = Vec::new();
//! for _ in 0..10 {
//!     timers.tick(Span::frames(1, 10), &mut log); // 0.1 s frames
//! }
//! assert_eq!(log, ["tick", "tick", "boom", "tick"]);
//! assert!(!timers.exists(tick)); // finished after three calls
//! ```

mod bind;
mod builder;
mod call;
mod callback;
mod cx;
mod info;
mod manager;
mod ready;
mod slot;
mod spec;
mod standalone;
mod wheel;
#[cfg(test)]
mod wheel_model;

pub(crate) use bind::bind_timer;
pub use bind::BindTimers;
pub use builder::{check_durable, TimerBuilder};
pub use call::{TimerCall, TimerCx};
pub(crate) use callback::Callback;
pub use callback::{CancelHook, TimerCallback};
pub use info::{TimerHandle, TimerInfo, TimerState, MAX_DURABLE_NAME, MAX_DURABLE_PAYLOAD};
pub use manager::durable::{DurableChange, DurablePhase, DurableTimer, LoadReport};
pub use manager::durable_load::DurableLoad;
pub(crate) use manager::moved::MovedTimer;
pub(crate) use manager::snapshot;
pub(crate) use manager::snapshot::unbound;
pub(crate) use manager::snapshot::TimerSnapshot;
pub(crate) use manager::wake::WakeTarget;
pub use manager::Timers;
pub use spec::Offline;

pub use standalone::TimerManager;
