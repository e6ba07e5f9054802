#![doc = include_str!("../README.md")]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![doc(test(attr(deny(warnings))))]

mod amount;
mod bind;
mod clock;
mod commands;
mod control;
mod later;
mod lend;
mod owner;
mod plugin;
mod queue;
mod read;
mod rebind;
mod resource;
mod spec;
mod stopwatch;
mod target;
mod timer_entity;

pub use amount::Amount;
pub use commands::TickflowCommands;
pub use control::TickflowTimerCommands;
pub use later::{Later, LaterTimer, TickflowCommandsExt};
pub use lend::lend_timers;
pub use owner::{owner, owner_entity, OwnerCheck, TickflowOwner};
pub use plugin::{TickflowPlugin, TickflowSystems};
pub use read::{read_timer, timer_finished, TickflowRead, TickflowTimers, TimerRead};
pub use rebind::Rebind;
pub use resource::{flush, install, restore, snapshot, state_hash, Tickflow};
pub use stopwatch::{TickflowStopwatch, TickflowStopwatchResource};
pub use target::Target;
pub use timer_entity::{TickflowTimer, TimerFired};

/// The names most apps use, for `use tickflow_bevy::prelude::*` beside Bevy's prelude:
/// this crate's, and tickflow's own except the two whose names Bevy's preludes use too
/// (tickflow's `Commands` is [`TickflowCommands`] here, and its `Time` is
/// `tickflow::Time`).
pub mod prelude {
    pub use crate::{
        owner, timer_finished, Amount, Target, Tickflow, TickflowCommands, TickflowCommandsExt,
        TickflowOwner, TickflowPlugin, TickflowSystems, TickflowTimerCommands, TickflowTimers,
        TimerFired,
    };
    pub use tickflow::prelude::{
        millis, secs, CatchUp, Clocks, Domain, Frames, LatentCx, OwnerId, Scheduler, Span, TaskCx,
        TickCx, TickGroup, TickHandle, TickSettings, TimerCx, TimerHandle, TimerManager,
    };
}
