//! Unreal's timer calls, for code ported from `FTimerManager`: opt in with
//! `use tickflow::compat::UnrealTimers`. They are recipes over the builder (each method's body
//! is the builder call to write instead), kept here so that the timer API has one way in.
//!
//! ```
//! use tickflow::compat::UnrealTimers;
//! use tickflow::prelude::*;
//!
//! let mut timers = TimerManager::<u32>::new();
//! let mut h = TimerHandle::default();
//! timers.set_timer(&mut h, secs(1.5), true, None, |n, _| *n += 1);
//! assert_eq!(timers.rate(h), Some(secs(1.5)));
//! // A zero rate clears, as in Unreal.
//! timers.set_timer(&mut h, secs(0.0), true, None, |_, _| {});
//! assert!(!timers.exists(h) && timers.is_empty());
//! ```

use crate::time::Span;
use crate::timer::{TimerCx, TimerHandle, Timers};

/// `SetTimer` and `SetTimerForNextTick` on [`Timers`] (and so on a
/// [`TimerManager`](crate::timer::TimerManager) and a scheduler's timers).
pub trait UnrealTimers<C> {
    /// Unreal's `SetTimer`: clears the timer `handle` names (if any), then sets a new one on
    /// the game clock and writes its handle back. A zero `rate` only clears (and leaves
    /// `handle` at its default). `first_delay` is the time to the first call (default:
    /// `rate`). The same as `timers.every(rate)` (or `after(rate)` when not looping)
    /// `.first_delay(d).replace(handle).call(f)`.
    fn set_timer(
        &mut self,
        handle: &mut TimerHandle,
        rate: Span,
        looping: bool,
        first_delay: Option<Span>,
        f: impl FnMut(&mut C, &mut TimerCx<'_, C>) + Send + 'static,
    );

    /// Unreal's `SetTimerForNextTick`: a one-shot that fires in the next timer stage (this
    /// frame's, when set before it). The same as `timers.after(Span::ZERO).call(f)`; its rate
    /// reads as zero.
    fn set_timer_for_next_tick(
        &mut self,
        f: impl FnMut(&mut C, &mut TimerCx<'_, C>) + Send + 'static,
    ) -> TimerHandle;
}

impl<C: 'static> UnrealTimers<C> for Timers<C> {
    fn set_timer(
        &mut self,
        handle: &mut TimerHandle,
        rate: Span,
        looping: bool,
        first_delay: Option<Span>,
        f: impl FnMut(&mut C, &mut TimerCx<'_, C>) + Send + 'static,
    ) {
        if rate.is_zero() {
            self.clear(*handle);
            *handle = TimerHandle::default();
            return;
        }
        let b = if looping {
            self.every(rate)
        } else {
            self.after(rate)
        };
        let b = match first_delay {
            Some(d) => b.first_delay(d),
            None => b,
        };
        b.replace(handle).call(f);
    }

    fn set_timer_for_next_tick(
        &mut self,
        f: impl FnMut(&mut C, &mut TimerCx<'_, C>) + Send + 'static,
    ) -> TimerHandle {
        self.after(Span::ZERO).call(f)
    }
}
