//! The plainest timer list, written for the benchmark (W1's best peer at every size): due
//! times in flicks beside their callbacks in one vector, every entry checked every frame, a
//! fired one swap-removed (no order among the calls of one frame).
//!
//! Where the linker puts a loop this tight moves its speed by half from one build to the next
//! (155 and 229-245 ns per timer at 1e4 for the same source), so W1 compiles it four times at
//! different addresses ([`COPIES`]) and runs one copy per round in turn: the median over the
//! rounds is a typical build's peer, not one build's luck in either direction.

use super::unreal::Callback;

/// Fires every timer of `timers` (due time in flicks, callback), frame after frame of `frame`
/// flicks, until none is left; returns the counter the callbacks added to, from `K`.
pub(crate) fn fire_all<const K: usize>(mut timers: Timers, frame: u64) -> u64 {
    // `K` in the count keeps the copies apart (identical bodies could be merged).
    let (mut n, mut now) = (K as u64, 0u64);
    while !timers.is_empty() {
        now += frame;
        let mut i = 0;
        while i < timers.len() {
            if timers[i].0 <= now {
                (timers[i].1)(&mut n);
                drop(timers.swap_remove(i));
            } else {
                i += 1;
            }
        }
    }
    n
}

/// Due times in flicks, beside their callbacks.
pub(crate) type Timers = Vec<(u64, Callback)>;

/// The four copies, one per round in turn.
pub(crate) const COPIES: [fn(Timers, u64) -> u64; 4] =
    [fire_all::<0>, fire_all::<1>, fire_all::<2>, fire_all::<3>];
