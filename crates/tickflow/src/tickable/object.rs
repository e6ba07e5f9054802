//! What a tickable is: the trait a user implements, the mode it is ticked in, and the handle
//! that names one.

use crate::owner::OwnerId;
use crate::tickable::cx::TickableCx;

/// Whether a tickable is asked before each tick.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TickableMode {
    /// Ticks every frame; [`Tickable::is_tickable`] is never called.
    Always,
    /// Ticks in frames where [`Tickable::is_tickable`] returns `true`.
    #[default]
    Conditional,
}

/// An object ticked once per frame by the [`Scheduler`](crate::scheduler::Scheduler).
///
/// `Send`, so that a scheduler holding it can move between threads: keep state that is not
/// `Send` (an `Rc`) in the context `C`, which every call receives.
///
/// ```compile_fail
/// use std::rc::Rc;
/// use tickflow::prelude::*;
/// use tickflow::{Tickable, TickableCx};
///
/// struct Shared(Rc<u32>); // not Send
/// impl Tickable<u32> for Shared {
///     fn tick(&mut self, n: &mut u32, _: &mut TickableCx<'_, u32>) { *n += *self.0 }
/// }
/// ```
pub trait Tickable<C>: Send {
    /// Called once per frame with the context and a [`TickableCx`]: the frame's game delta
    /// (the real delta while paused), the clocks, the timers and the scheduler's commands.
    fn tick(&mut self, ctx: &mut C, cx: &mut TickableCx<'_, C>);

    /// Asked every frame in [`TickableMode::Conditional`]; `false` skips this frame.
    fn is_tickable(&self) -> bool {
        true
    }

    /// `true` to keep ticking while the scheduler is paused.
    fn tick_when_paused(&self) -> bool {
        false
    }

    /// Read once, when the tickable is added.
    fn mode(&self) -> TickableMode {
        TickableMode::Conditional
    }

    /// A name for debugging, and the key a [`Resolver`](crate::snapshot::Resolver) rebuilds
    /// the tickable by after a [restore](crate::scheduler::Scheduler::restore).
    fn name(&self) -> &str {
        ""
    }

    /// Whose tickable this is, read once when it is added:
    /// [`Scheduler::remove_owner`](crate::scheduler::Scheduler::remove_owner) removes it with
    /// the owner's timers and tick functions.
    fn owner(&self) -> Option<OwnerId> {
        None
    }
}

crate::handle::handle_type! {
    /// Names one tickable in one scheduler. Generational: a removed tickable's handle never
    /// reaches a newer one, and another scheduler's handle is answered like a stale one.
    TickableHandle
}
