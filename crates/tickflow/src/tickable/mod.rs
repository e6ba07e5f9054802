//! Tickables: light objects that just want `tick(dt)` once per frame.
//!
//! Unreal's `FTickableGameObject`: no groups, no prerequisites, no intervals. Tickables tick
//! once per frame in the scheduler's tickable stage (after the timers), in registration order.
//!
//! # Rules
//!
//! - [`TickableMode::Always`] ticks every frame without asking; [`TickableMode::Conditional`]
//!   (the default) asks [`Tickable::is_tickable`] every frame. The mode is read once, when the
//!   tickable is added.
//! - A tickable added while tickables tick (through [`Commands`](crate::scheduler::Commands))
//!   starts next frame; one added earlier in the frame ticks this frame. A tickable removed
//!   while tickables tick is skipped at once, even if it has not ticked yet this frame; one
//!   that removes itself finishes its call and is dropped after it.
//! - While the scheduler is paused only tickables whose
//!   [`tick_when_paused`](Tickable::tick_when_paused) is `true` tick, with the real delta.
//!
//! ```
//! use tickflow::prelude::*;
//! use tickflow::{Tickable, TickableCx};
//!
//! struct Scoreboard { frames: u32 }
//! impl Tickable<u64> for Scoreboard {
//!     fn tick(&mut self, total: &mut u64, cx: &mut TickableCx<'_, u64>) {
//!         self.frames += 1;
//!         *total += cx.dt().flicks();
//!     }
//! }
//!
//! let mut sched = Scheduler::<u64>::new();
//! let h = sched.tickables().add(Scoreboard { frames: 0 });
//! let mut total = 0;
//! sched.tick(secs(0.1), &mut total);
//! sched.tick(secs(0.1), &mut total);
//! assert_eq!(total, secs(0.2).flicks());
//! assert!(sched.tickables().remove(h));
//! assert!(!sched.tickables().remove(h), "stale handles answer false");
//! ```

mod bind;
mod cx;
mod engine;
mod object;

pub(crate) use bind::bind_tickable;
pub use bind::BindTickables;
pub use cx::{TickableCall, TickableCx};
pub(crate) use engine::moved::MovedTickable;
pub use engine::save::TickableInfo;
pub(crate) use engine::save::TickableSnapshot;
pub use engine::Tickables;
pub use object::{Tickable, TickableHandle, TickableMode};
