//! Tick functions: per-frame callbacks in ordered groups, with prerequisites and intervals.
//!
//! This is Unreal's `FTickFunction`/`FTickTaskManager` for any Rust game loop. A tick function
//! is registered on a [`Scheduler`](crate::scheduler::Scheduler) with [`TickSettings`] and a
//! callback `FnMut(&mut C, &mut TickCx<C>)`; the scheduler runs every enabled one once per frame
//! in its [`TickGroup`].
//!
//! # Rules
//!
//! 1. **Groups** run in the order of [`TickGroup`]'s variants. A function's *actual group* is
//!    the latest of its own group and the actual groups of its prerequisites (Unreal's
//!    demotion); a demotion never lands in `StartPhysics` or `EndPhysics`, which are bumped to
//!    the next group. Groups are resolved from the graph, not frame by frame, so a function
//!    stays demoted in frames where its prerequisite happens not to tick.
//! 2. **Prerequisites**: `add_prerequisite(tick, before)` makes `tick` run after `before` in
//!    every frame where both run. Cycles and unknown handles are refused with a [`TickError`];
//!    a prerequisite that is disabled or removed is ignored.
//! 3. **Order** is deterministic: within a group, functions with no prerequisite between them
//!    run high-priority first, then in registration order. Every enabled function runs at most
//!    once per frame.
//! 4. **Intervals** ([`TickSettings::interval`]): the first tick comes on the first frame after
//!    the function is enabled; later ones when the game time since the previous tick's due time
//!    reaches the interval (inclusive: 0.2 s at 0.1 s frames ticks on frames 1, 3, 5, ...).
//!    Overrun shorter than an interval is credited to the next period, so the average period
//!    is the interval; a function late by a whole interval or more (a hitch) ticks once with
//!    the whole accumulated delta and starts a fresh interval there: never a
//!    burst. Waiting functions cost nothing per frame until they are due.
//! 5. **Newly spawned** functions (added, or enabled, while a frame runs) run in that same
//!    frame, in the first group after the current stage that they may run in, after that
//!    group's planned functions. Functions spawned in the last group run in extra passes, at
//!    most [`MAX_SPAWN_PASSES`]; the rest run next frame and the
//!    [`FrameReport`](crate::scheduler::FrameReport) says how many were held back.
//! 6. **Structural changes** made from a tick function through its
//!    [`cx.commands()`](TickCx::commands) apply as soon as it returns (a function disabled or
//!    removed by an earlier one in the same group does not run); the
//!    frame's order is fixed when it starts, so new or removed prerequisites shape the order
//!    from the next frame. Parallel functions queue their changes in a [`Deferred`] buffer,
//!    applied at the end of their group in registration order.
//! 7. **Parallel** functions ([`TickFunctions::add_parallel`](crate::tick::TickFunctions::add_parallel))
//!    own their state and see the context as `&C`; those of one group with no prerequisite
//!    between them run at the same time on rayon's worker pool (without the `rayon` feature,
//!    one after the other), and the group ends when all are done. Their results are the same
//!    as running them one by one.
//! 8. **Paused** scheduler: only `tick_when_paused` functions run, with the frame's real delta
//!    (clamped like the game delta); the others keep their interval cooldowns frozen. Their
//!    intervals count on the [unpaused clock](crate::time::Clocks::unpaused).
//! 9. **Time dilation** per function multiplies the delta it receives. Intervals are measured
//!    on the scheduler's game clock, before the function's own dilation (as in Unreal).
//!
//! # Cost
//!
//! The order is resolved only when the graph changes (add, remove, enable, prerequisite), in
//! O(n log n); a frame then costs O(functions that run): the ones that run every frame are
//! walked in plan order, and interval functions wait in a calendar queue until due, costing
//! nothing before. A function takes about 200 bytes: a 104-byte node read when the graph
//! changes, a 16-byte check record and its 24-byte callback slot read every frame it runs, a
//! 64-byte cooldown read when an interval or dilation applies, and a place in the plan; plus
//! its name, its prerequisite list and its callback's box.

// Inside (for the engineers; not in the public docs).
//
// The engines keep their fields to themselves: the graph (`graph/`) changes only through its
// verbs, and what a frame asks of it (rebuild or patch the plan, the functions added since,
// the plan's places published, the frame opened and closed, a run recorded, the calendar
// drained) is `graph/frame.rs`; the plan (`plan/`) lends its lanes through verbs; the runner
// (`run/`) holds the graph and the callbacks and reaches neither's fields. The records below
// are plain data whose fields are read outside their files, each for a reason:
//
// - `Hot` (`graph/mod.rs`): a function's 16-byte check record, the one record the frame's
//   innermost loop reads and stamps (`run/fast.rs`), in place over a lane's slice of them.
// - `Node` (`graph/mod.rs`): a function's settings and prerequisites, read by the plan's
//   resolution and the runner's placing of spawned functions; written only by the graph.
// - `Cooldown` and `QueuedCooldown` (`interval.rs`): the interval bookkeeping, kept by the
//   graph; the plan writes each function's place (`rank`, `cut`) into the records the graph
//   hands it (`TickGraph::publish`), and the due lists read them.
// - `Resolved`, `DueInterval`, `LaneRun` (`plan/mod.rs`): what the plan tells the runner
//   about a function or a lane, read once per run.
// - `ParJob` (`body.rs`), `Env` (`run/mod.rs`), `TickCall` and `Deferred` (`cx.rs`): what
//   one call or one parallel batch carries; built by the runner, read by the body or the
//   context.
// - `MovedTick` (`graph/moved.rs`): the record of a function moved to another scheduler.

mod bind;
mod body;
mod cx;
mod graph;
mod handle;
mod interval;
mod plan;
mod run;
mod service;
mod settings;

pub(crate) use bind::bind_tick;
pub use bind::BindTicks;
pub(crate) use body::Body;
pub use cx::{Deferred, TickCall, TickCx};
pub(crate) use graph::moved::MovedTick;
pub(crate) use graph::save::TickSnapshot;
pub use graph::save::{TickBody, TickInfo};
pub use handle::TickHandle;
pub(crate) use run::Env;
pub use run::TickFunctions;
pub use settings::{TickError, TickGroup, TickSettings, MAX_SPAWN_PASSES};
