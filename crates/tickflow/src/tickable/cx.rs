//! [`TickableCx`]: the context of a ticking tickable.

use crate::cx::Cx;
use crate::time::Span;

/// The second argument of [`Tickable::tick`](super::Tickable::tick): its delta, and, as every
/// [`Cx`], the frame's clocks, the timers and the scheduler's commands.
pub type TickableCx<'a, C> = Cx<'a, C, TickableCall>;

/// What a [`TickableCx`] knows of its call.
#[derive(Clone, Debug)]
pub struct TickableCall {
    pub(crate) dt: Span,
}

impl<C: 'static> Cx<'_, C, TickableCall> {
    /// The frame's delta: the game delta, or the real one (clamped to `max_delta`) while
    /// paused.
    pub fn dt(&self) -> Span {
        self.kind().dt
    }
}
