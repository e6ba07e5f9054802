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
//!    late follows its [`CatchUp`] policy, and every burst call takes its own place in the
//!    order (A due at 0.3/0.6/0.9 and B at 0.5 run A, B, A, A). One timer makes at most
//!    [`DEFAULT_CATCH_UP_CAP`] calls per tick ([`set_catch_up_cap`](Timers::set_catch_up_cap)):
//!    whatever the delta, the rest of its missed periods are dropped onto its grid and
//!    counted, so no input makes one tick do unbounded work.
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
//! `wheel/`) with lazy removal; a tick's due calls are sorted once (`ready.rs`), and calls
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

mod builder;
mod callback;
mod cx;
mod manager;
mod ready;
mod slot;
mod spec;
mod standalone;
mod wheel;
#[cfg(test)]
mod wheel_model;

use crate::time::{Domain, Span};

pub(crate) use crate::owner::OwnerId;
pub use builder::{check_durable, TimerBuilder};
pub(crate) use callback::Callback;
pub use cx::{Cx, TimerCall, TimerCx};
pub(crate) use manager::snapshot;
pub(crate) use manager::snapshot::unbound;
pub(crate) use manager::snapshot::TimerSnapshot;
pub(crate) use manager::MovedTimer;
pub use manager::Timers;
pub(crate) use manager::WakeTarget;
pub use manager::{DurableChange, DurableLoad, DurablePhase, DurableTimer, LoadReport};
pub use spec::Offline;

pub use standalone::TimerManager;

/// A boxed timer callback: what a restore's resolver returns. `Send`, so that a manager can
/// move between threads (and be a Bevy resource). ([`TimerBuilder::call`] takes the closure
/// itself, and stores one that captures at most 8 bytes without a box.)
pub type TimerCallback<C> = Box<dyn FnMut(&mut C, &mut TimerCx<'_, C>) + Send>;

/// A boxed `on_cancel` hook ([`TimerBuilder::on_cancel`]).
pub type CancelHook<C> = Box<dyn FnOnce(&mut C) + Send>;

/// The default of [`Timers::set_catch_up_cap`]: at most 1,000 calls per timer per tick.
///
/// A late [`CatchUp::Burst`] timer makes one call per missed period. Without a cap, a laptop
/// that slept for eight hours gives a 16 ms real-clock timer 1.8 million calls in one tick. A
/// thousand calls of a small callback take well under a millisecond, and cover 16 s of missed
/// 60 Hz periods: enough for every hitch a game survives, small enough that no input can stall
/// a frame.
pub const DEFAULT_CATCH_UP_CAP: u64 = 1_000;

/// The highest [catch-up cap](Timers::set_catch_up_cap): 10,000 calls per timer per
/// tick (ten times the default; 2.8 minutes of missed 60 Hz periods).
///
/// The cap is what bounds a tick's work: a tick makes at most this many calls per timer, so a
/// snapshot from a save file (which carries its cap) can never make one tick do more than
/// its timers times this. A game that needs more calls of one timer in one frame is in a
/// catch-up spiral already.
pub const MAX_CATCH_UP_CAP: u64 = 10_000;

/// Longest name of a durable timer (bytes): a store keeps it in every row of the timer, and
/// reads it back from a database another process may have written.
pub const MAX_DURABLE_NAME: usize = 1024;

/// Largest payload of a durable timer (bytes): written with each change of the timer, in the
/// frame's commit.
pub const MAX_DURABLE_PAYLOAD: usize = 1 << 20;

/// `true` for a catch-up cap the timers accept: 1 to [`MAX_CATCH_UP_CAP`].
pub(crate) fn valid_catch_up_cap(calls_per_timer: u64) -> bool {
    (1..=MAX_CATCH_UP_CAP).contains(&calls_per_timer)
}

/// The check of both `set_catch_up_cap`s, the frame timers' and the real-time service's.
#[track_caller]
pub(crate) fn assert_catch_up_cap(calls_per_timer: u64) {
    assert!(
        valid_catch_up_cap(calls_per_timer),
        "set_catch_up_cap: calls_per_timer must be from 1 to {MAX_CATCH_UP_CAP}, got {calls_per_timer}"
    );
}

crate::handle::handle_type! {
    /// Identifies one timer in one [`Timers`] (of a scheduler or a [`TimerManager`]).
    ///
    /// Copy it freely: once the timer is cleared or finished, every query with the handle answers
    /// `false`/`None`, even after a new timer reuses its slot. The `Default` handle never names a
    /// timer (like Unreal's invalid `FTimerHandle`), which makes it a good initial value for a
    /// field passed to [`replace`](TimerBuilder::replace). 8 bytes; `Option<TimerHandle>` is
    /// 8 bytes too.
    ///
    /// A handle belongs to the manager that made it: passed to another manager it is answered
    /// like a stale one and changes nothing there. The check is certain between any two of
    /// 4,095 managers, schedulers and restores made one after the other (each takes the next of
    /// 4,095 container ids in turn; a restored manager takes the id of the one it was saved
    /// from, so saved handles stay valid).
    ///
    /// # Examples
    ///
    /// ```
    /// use tickflow::time::secs;
    /// use tickflow::timer::{TimerHandle, TimerManager};
    ///
    /// let mut timers = TimerManager::<()>::new();
    /// let old = timers.after(secs(1.0)).call(|_, _| {});
    /// assert!(timers.clear(old));
    /// let new = timers.after(secs(1.0)).call(|_, _| {}); // same slot, new generation
    /// assert!(!timers.exists(old) && timers.exists(new));
    /// assert!(!timers.exists(TimerHandle::default()));
    /// assert_eq!(std::mem::size_of::<Option<TimerHandle>>(), 8);
    ///
    /// let mut ui = TimerManager::<()>::new();
    /// let theirs = ui.after(secs(1.0)).call(|_, _| {});
    /// assert!(!timers.clear(theirs), "another manager's handle");
    /// assert!(timers.exists(new));
    /// ```
    TimerHandle
}

/// What a looping timer does when a tick finds it several periods late.
///
/// Timeline of a timer with period 0.1 s, due at 0.1, 0.2, ..., through one 0.35 s hitch
/// (frames end at 0.1, 0.45, 0.55):
///
/// ```text
/// tick at:   0.1    0.45                0.55
/// Burst:     0.1    0.2, 0.3, 0.4       0.5      (every period called, each in its place)
/// Once:      0.1    0.2 (0.3, 0.4 lost) 0.5      (period grid kept)
/// Delay:     0.1    0.2                 0.55     (next period counted from 0.45)
/// ```
///
/// A timer that is on time (its next period not yet due) behaves the same under all three.
/// `Burst` makes at most the [catch-up cap](Timers::set_catch_up_cap) of calls per tick
/// and then continues like `Once`. The real-time service's timers follow the same timeline.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash)
)]
pub enum CatchUp {
    /// Call once per missed period (Unreal's default, tokio's `Burst`).
    #[default]
    Burst = 0,
    /// Call at most once per tick, drop the missed periods, keep the grid (Unreal 5's "max
    /// once per frame", tokio's `Skip`).
    Once = 1,
    /// Call once, then count the next period from the tick that made the late call (tokio's
    /// `Delay`).
    Delay = 2,
}

/// The state of a live timer, as [`TimerInfo`] reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TimerState {
    /// Set in an open frame; its countdown starts at this frame's timer tick.
    Pending,
    /// Counting down (or due and waiting for its call).
    Active,
    /// Paused; the remaining time is kept.
    Paused,
    /// Its callback is running now.
    Executing,
}

/// A plain record of one live timer, for debugging and tools ([`Timers::list`]).
///
/// For [`Domain::Frames`] timers, `remaining` and `rate` count frames (`flicks()` is the
/// number of frames).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerInfo {
    /// The timer's handle.
    pub handle: TimerHandle,
    /// The name given with [`TimerBuilder::name`].
    pub name: Option<String>,
    /// The tag given with [`TimerBuilder::tag`].
    pub tag: Option<u64>,
    /// The owner given with [`TimerBuilder::owner`].
    pub owner: Option<OwnerId>,
    /// Pending, active, paused or executing.
    pub state: TimerState,
    /// The clock it counts on.
    pub domain: Domain,
    /// Whether it repeats.
    pub looping: bool,
    /// Its catch-up policy.
    pub catch_up: CatchUp,
    /// Time to its next call (`Span::MAX` for never).
    pub remaining: Span,
    /// Its period (looping) or delay (one-shot).
    pub rate: Span,
    /// Calls made so far.
    pub calls_made: u64,
    /// Calls left for a timer limited with [`TimerBuilder::times`].
    pub calls_left: Option<u64>,
}
