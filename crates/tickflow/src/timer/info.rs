//! The timers' vocabulary: [`TimerHandle`], [`TimerState`], [`TimerInfo`] and the limits of a
//! durable timer, which every part of the timers and the parts above them name.

use crate::owner::OwnerId;
use crate::time::{CatchUp, Domain, Span};

/// Longest name of a durable timer (bytes): a store keeps it in every row of the timer, and
/// reads it back from a database another process may have written.
pub const MAX_DURABLE_NAME: usize = 1024;

/// Largest payload of a durable timer (bytes): written with each change of the timer, in the
/// frame's commit.
pub const MAX_DURABLE_PAYLOAD: usize = 1 << 20;

crate::handle::handle_type! {
    /// Identifies one timer in one [`Timers`](super::Timers) (of a scheduler or a
    /// [`TimerManager`](super::TimerManager)).
    ///
    /// Copy it freely: once the timer is cleared or finished, every query with the handle answers
    /// `false`/`None`, even after a new timer reuses its slot. The `Default` handle never names a
    /// timer (like Unreal's invalid `FTimerHandle`), which makes it a good initial value for a
    /// field passed to [`replace`](super::TimerBuilder::replace). 8 bytes; `Option<TimerHandle>` is
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

/// A plain record of one live timer, for debugging and tools ([`Timers::list`](super::Timers::list)).
///
/// For [`Domain::Frames`] timers, `remaining` and `rate` count frames (`flicks()` is the
/// number of frames).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerInfo {
    /// The timer's handle.
    pub handle: TimerHandle,
    /// The name given with [`TimerBuilder::name`](super::TimerBuilder::name).
    pub name: Option<String>,
    /// The tag given with [`TimerBuilder::tag`](super::TimerBuilder::tag).
    pub tag: Option<u64>,
    /// The owner given with [`TimerBuilder::owner`](super::TimerBuilder::owner).
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
    /// Calls left for a timer limited with [`TimerBuilder::times`](super::TimerBuilder::times).
    pub calls_left: Option<u64>,
}
