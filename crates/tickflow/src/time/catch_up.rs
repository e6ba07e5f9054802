//! [`CatchUp`], what a late looping timer does, and the cap on its calls in one pass: the
//! vocabulary the frame timers, the real-time service, the latent actions and the paced driver
//! share.

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
/// `Burst` makes at most the [catch-up cap](crate::timer::Timers::set_catch_up_cap) of calls
/// per tick and then continues like `Once`. The real-time service's timers follow the same
/// timeline.
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

/// The default of [`Timers::set_catch_up_cap`](crate::timer::Timers::set_catch_up_cap): at
/// most 1,000 calls per timer per tick.
///
/// A late [`CatchUp::Burst`] timer makes one call per missed period. Without a cap, a laptop
/// that slept for eight hours gives a 16 ms real-clock timer 1.8 million calls in one tick. A
/// thousand calls of a small callback take well under a millisecond, and cover 16 s of missed
/// 60 Hz periods: enough for every hitch a game survives, small enough that no input can stall
/// a frame.
pub const DEFAULT_CATCH_UP_CAP: u64 = 1_000;

/// The highest [catch-up cap](crate::timer::Timers::set_catch_up_cap): 10,000 calls per
/// timer per tick (ten times the default; 2.8 minutes of missed 60 Hz periods).
///
/// The cap is what bounds a tick's work: a tick makes at most this many calls per timer, so a
/// snapshot from a save file (which carries its cap) can never make one tick do more than
/// its timers times this. A game that needs more calls of one timer in one frame is in a
/// catch-up spiral already.
pub const MAX_CATCH_UP_CAP: u64 = 10_000;

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
