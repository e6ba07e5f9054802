//! The timers of `commands.tickflow()` as entities: [`TickflowTimer`], the component that holds
//! a timer's settings, target and handle, and [`TimerFired`], the event its calls trigger. How
//! the timers get into the scheduler is `queue.rs`; what runs at each call, and how a restored
//! scheduler finds the entities again, is `bind.rs`.

use std::fmt;

use bevy_ecs::prelude::*;
use tickflow::prelude::{Clocks, Span, TimerHandle};

use crate::spec::{LaterOptions, Packed, Spec, When};
use crate::target::Target;

/// Triggered on a timer's entity at each call of a timer set with
/// [`LaterTimer::fire`](crate::LaterTimer::fire).
#[derive(EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerFired {
    /// The timer's entity.
    pub entity: Entity,
    /// The call's index, from 0.
    pub call: u64,
    /// `true` for the timer's last call (its entity despawns after it).
    pub last: bool,
}

/// A timer set with [`commands.tickflow()`](crate::TickflowCommandsExt), on the entity that is
/// its handle. The timers of the entities added since the last frame are set in the scheduler
/// in one batch at the start of the next tickflow frame, counting from the scheduler's time
/// then (the end of the last frame, as any timer set between frames), or sooner: by
/// [`flush`](crate::flush), or when one of them is controlled through its entity
/// ([`TickflowTimerCommands`](crate::TickflowTimerCommands)). Reads through
/// [`TickflowTimers`](crate::TickflowTimers) are exact before that too. Removing the component
/// or despawning the entity cancels it.
///
/// Change detection: `Changed<TickflowTimer>` says the component was added or its timer set
/// or detached, nothing more — the countdown, a pause, a shortened or restarted timer do not
/// mark it (they live in the scheduler, which a frame changes without touching the entity).
/// Read those through `TickflowTimers` or [`read_timer`](crate::read_timer) when you draw.
#[derive(Component)]
pub struct TickflowTimer {
    /// Its settings, whether it fires `TimerFired`, and whether controls wait for it in the
    /// queue (given inside a frame, before it was set). Small on purpose: see `spec.rs`.
    spec: Packed,
    /// Taken out while it runs (it gets the world, this component included).
    target: Option<Target>,
    /// Its timer, once set.
    handle: Option<TimerHandle>,
}

const _: () = assert!(std::mem::size_of::<TickflowTimer>() == 40);

impl fmt::Debug for TickflowTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickflowTimer")
            .field("spec", &self.spec)
            .field("fire", &self.spec.fire())
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

impl TickflowTimer {
    #[inline]
    pub(crate) fn new(spec: &Spec, target: Option<Target>, fire: bool) -> Self {
        TickflowTimer {
            spec: Packed::new(spec, fire),
            target,
            handle: None,
        }
    }

    /// The entity of a timer already in the scheduler (`h`, bound again after a restart):
    /// it counts frames when `frames`, and runs `target` and fires [`TimerFired`] (`fire`) at
    /// each call.
    pub(crate) fn bound(h: TimerHandle, frames: bool, target: Option<Target>, fire: bool) -> Self {
        let when = match frames {
            true => When::AfterFrames(0),
            false => When::After(Span::ZERO),
        };
        TickflowTimer {
            spec: Packed::new(&Spec::new(when), fire),
            target,
            handle: Some(h),
        }
    }

    /// The timer in the scheduler (`None` while it waits for the next frame, and after its
    /// last call).
    pub fn handle(&self) -> Option<TimerHandle> {
        self.handle
    }

    /// A timer not set yet (queued for the next frame's batch), with the options its entity
    /// carries: its first countdown's length and its rate, in flicks or frames (for a timer
    /// due `at` a time, that time less its clock's reading, from `clocks`). It reads as that
    /// countdown, untouched: nothing can have changed it (a control sets the batch first).
    /// `None` once set, or for a timer that will never be set (`times(0)`, an orphan).
    pub(crate) fn waiting(
        &self,
        options: Option<&LaterOptions>,
        clocks: impl FnOnce() -> Option<Clocks>,
    ) -> Option<(u64, u64)> {
        if self.handle.is_some()
            || self.spec.controlled()
            || self.spec.orphan()
            || options.is_some_and(|o| o.never())
        {
            return None;
        }
        if let Some(clock) = self.spec.at_clock() {
            let now = clocks()?.now(clock).flicks();
            let left = self.spec.amount().saturating_sub(now);
            return Some((left, left));
        }
        let rate = self.spec.amount();
        let first = options.and_then(|o| o.first_delay);
        Some((first.unwrap_or(rate), rate))
    }

    /// `true` when it counts frames (`after(Frames(n))`, `every(Frames(n))`).
    pub(crate) fn counts_frames(&self) -> bool {
        self.spec.counts_frames()
    }

    /// Its settings, with the options its entity carries.
    pub(crate) fn settings(&self, options: Option<&LaterOptions>) -> Spec {
        self.spec.spec(options)
    }

    /// Its timer is set: `h`.
    pub(crate) fn set_handle(&mut self, h: TimerHandle) {
        self.handle = Some(h);
    }

    /// It holds no timer any more (its last call, or a restore that did not bind it).
    pub(crate) fn detach(&mut self) {
        self.handle = None;
    }

    /// Its owner was despawned before it was set: it never will be (the next batch despawns
    /// its entity).
    pub(crate) fn mark_orphan(&mut self) {
        self.spec.set_orphan();
    }

    /// `true` when its owner was despawned before it was set.
    pub(crate) fn is_orphan(&self) -> bool {
        self.spec.orphan()
    }

    /// A control waits for it to be set.
    pub(crate) fn mark_controlled(&mut self) {
        self.spec.set_controlled();
    }

    /// `true` when each call triggers [`TimerFired`] on its entity.
    pub(crate) fn fires_event(&self) -> bool {
        self.spec.fire()
    }

    /// Takes its target out to run it (the target gets the world, this component included).
    pub(crate) fn take_target(&mut self) -> Option<Target> {
        self.target.take()
    }

    /// Puts its target back after a call.
    pub(crate) fn put_target(&mut self, target: Target) {
        self.target = Some(target);
    }
}
