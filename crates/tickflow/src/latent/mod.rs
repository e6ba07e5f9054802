//! Latent actions and async tasks: work that waits across frames.
//!
//! Two ways to write "do this, wait, then do that", both run in the scheduler's *latent
//! stage* (after the tickables, before `PostUpdateWork`):
//!
//! - [`LatentActions`]: Unreal's latent action manager and the Blueprint Delay family. Polled
//!   objects ([`LatentAction`]) keyed by `(owner, uuid)`, with built-in [`Delay`],
//!   [`RetriggerableDelay`], [`DelayUntilNextTick`] and [`WaitUntil`].
//! - Async tasks: [`Tasks::spawn`](crate::latent::Tasks::spawn) runs an `async`
//!   block that awaits [`TaskCx::delay`], [`next_frame`](TaskCx::next_frame),
//!   [`frames`](TaskCx::delay), [`until`](TaskCx::until) and touches the game state with
//!   [`with`](TaskCx::with) between awaits. The executor is the frame: woken tasks are polled
//!   on the game thread, nothing runs elsewhere.
//!
//! # Timing rules (both)
//!
//! Latent waits keep the timer rules: boundaries are inclusive (a 0.3 s wait at 0.1 s frames
//! ends in the third frame); the delta of the frame a wait starts in never counts; and a wait
//! started right when another one on the same clock ends counts from that one's *due* time,
//! so `loop { cx.delay(secs(0.1)).await; .. }` at 0.03 s frames averages exactly 0.1 s per lap
//! (a Blueprint Delay loop takes four frames, 0.12 s, every lap). A wait never ends in the
//! frame it started in, so a loop runs at most one lap per frame. Game-clock waits are
//! dilated and stop while paused; real-clock waits ([`TaskCx::delay_real`],
//! [`Delay::real`]) keep going.
//!
//! # Latent actions
//!
//! - Adding under a key that holds an unfinished action is ignored and returns `false` (the
//!   Blueprint Delay's "calling it again while it counts down does nothing");
//!   [`retriggerable_delay`](LatentActions::retriggerable_delay) restarts it instead.
//! - Every action is updated at most once per frame, in the order added, with the delta of
//!   its [domain](LatentAction::domain). Then the completions of that frame run, in the same
//!   order. An action that finishes frees its key before its completion runs, so the
//!   completion can add it again.
//! - An action added in a frame before the latent stage gets a zero delta that frame (so
//!   `Delay(0)` completes in the next latent stage, possibly this frame's); one added during or
//!   after the latent stage is first updated next frame.
//! - [`remove_owner`](LatentActions::remove_owner) and [`remove`](LatentActions::remove) take
//!   effect at once: the completion never runs, the [abort hook](LatentAction::aborted) runs
//!   at the start of the next latent stage.
//! - A completion gets a [`LatentCx`]: actions it adds with
//!   `cx.commands().latent().delay(..)` and friends are applied right after it returns, so a
//!   delay re-armed there counts from the finished delay's due time.
//!
//! # Tasks
//!
//! - A spawned task is first polled in the next latent stage: this frame's when spawned
//!   before it, else the next frame's. After that a task is polled only when woken: its
//!   timer fired, the next frame came for `next_frame`/`until`, a task it awaits ended, or any
//!   other waker was used.
//! - Woken tasks are polled in spawn order, each **at most once per frame**. A task woken by
//!   another task (or spawned) during the stage is polled later in the same stage, in a
//!   further pass (up to [`MAX_TASK_PASSES`]); one woken again after its poll this frame (a
//!   task that wakes itself yields) waits for the next frame.
//! - A task's delays are timers in the scheduler's
//!   [`TimerManager`](crate::timer::TimerManager): a waiting task costs nothing per frame.
//!   Each task that has awaited a game-clock delay keeps one timer there, re-armed for every
//!   delay, until it ends (so `timers().len()` counts it); other delays are one-shot timers.
//!   Clearing those timers behind the scheduler's back (`clear_all`) leaves the task waiting.
//! - [`TaskRef::cancel`] (a [`TaskHandle`] is one), [`Scheduler::remove_owner`](crate::scheduler::Scheduler::remove_owner)
//!   and dropping the scheduler drop the task's future, so its destructors run (its pending
//!   delay timers are cleared too). A task that panics ends as cancelled; the panic reaches
//!   the caller of `Scheduler::tick`, and the other tasks go on next frame.
//! - [`TaskHandle`] is a future: another task can await it.
//!
//! # Safety
//!
//! `TaskCx::with` hands the task a `&mut C` that the scheduler borrows only for the frame.
//! That needs one small piece of unsafe code (a pointer lent for the length of a poll), kept in
//! `executor/lend.rs` with its argument; miri cannot run here (no nightly toolchain), so CI runs its
//! tests and the task tests under valgrind (`bash .ci/valgrind`).
//!
//! # Examples
//!
//! ```
//! use tickflow::prelude::*;
//!
//! #[derive(Default)]
//! struct Boss { hp: u32, log: Vec<String> }
//!
//! let mut sched = Scheduler::<Boss>::new();
//! sched.tasks().spawn(None, |cx| async move {
//!     cx.delay(secs(0.5)).await;
//!     cx.with(|b| b.log.push(format!("roar at {:.1} s", cx.clocks().now(Domain::Game).as_secs_f64())));
//!     cx.until(|b: &Boss| b.hp < 50).await;
//!     cx.with(|b| b.log.push(format!("enraged in frame {}", cx.clocks().frame())));
//! });
//!
//! let mut boss = Boss { hp: 100, ..Boss::default() };
//! for frame in 1..=10 {
//!     if frame == 8 { boss.hp = 40; }
//!     sched.tick(secs(0.1), &mut boss);
//! }
//! assert_eq!(boss.log, ["roar at 0.5 s", "enraged in frame 8"]);
//! assert_eq!(sched.tasks().len(), 0);
//! ```

mod action;
mod actions;
mod bind;

pub use action::{
    Delay, DelayUntilNextTick, LatentAction, LatentResponse, RetriggerableDelay, SavedAction,
    WaitUntil,
};
pub use actions::{
    Completion, LatentActionManager, LatentActions, LatentCall, LatentCx, LatentHandle, LatentInfo,
};
// The async tasks' executor is a module of its own (`executor/`); its public types are
// reached here, beside the latent actions, as the one door to work that waits across frames.
pub use crate::executor::{
    Cancelled, NextFrame, Sleep, TaskCx, TaskHandle, TaskRef, Tasks, Until, MAX_TASK_PASSES,
};

pub(crate) use actions::{LatentSnapshot, MovedLatent};
pub(crate) use bind::bind_action;
pub use bind::BindLatent;
