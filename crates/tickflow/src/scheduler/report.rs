//! [`FrameReport`]: what one frame did and where its time went.

use std::time::Duration;

use crate::tick::{TickError, TickGroup};
use crate::time::Span;

/// The stages of a frame, in the order they run. [`Stage::ALL`] is the one list of that
/// order: the frame runs its stages by walking it, and the report and the tool read it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Stage {
    /// The frame's start: queued commands applied, the tick order resolved again if the
    /// graph changed, and the interval functions due this frame collected.
    FrameStart,
    /// A tick group.
    Group(TickGroup),
    /// The timer manager's tick.
    Timers,
    /// The tickables.
    Tickables,
    /// Latent actions, then woken async tasks.
    Latent,
    /// Extra passes for functions spawned after the last group.
    NewlySpawned,
}

impl Stage {
    /// Every stage, in the order a frame runs them.
    pub const ALL: [Stage; Stage::COUNT] = [
        Stage::FrameStart,
        Stage::Group(TickGroup::PrePhysics),
        Stage::Group(TickGroup::StartPhysics),
        Stage::Group(TickGroup::DuringPhysics),
        Stage::Group(TickGroup::EndPhysics),
        Stage::Group(TickGroup::PostPhysics),
        Stage::Timers,
        Stage::Tickables,
        Stage::Latent,
        Stage::Group(TickGroup::PostUpdateWork),
        Stage::Group(TickGroup::LastDemotable),
        Stage::NewlySpawned,
    ];

    /// How many stages a frame has.
    pub const COUNT: usize = 12;

    /// Position in [`Stage::ALL`].
    pub const fn index(self) -> usize {
        let mut i = 0;
        while i < Stage::COUNT {
            if Stage::ALL[i].same(self) {
                return i;
            }
            i += 1;
        }
        unreachable!()
    }

    /// `==` for const code.
    const fn same(self, other: Stage) -> bool {
        match (self, other) {
            (Stage::Group(a), Stage::Group(b)) => a as usize == b as usize,
            (Stage::FrameStart, Stage::FrameStart)
            | (Stage::Timers, Stage::Timers)
            | (Stage::Tickables, Stage::Tickables)
            | (Stage::Latent, Stage::Latent)
            | (Stage::NewlySpawned, Stage::NewlySpawned) => true,
            _ => false,
        }
    }

    /// A short name for tables and traces.
    pub fn name(self) -> &'static str {
        match self {
            Stage::FrameStart => "FrameStart",
            Stage::Group(g) => g.name(),
            Stage::Timers => "Timers",
            Stage::Tickables => "Tickables",
            Stage::Latent => "Latent",
            Stage::NewlySpawned => "NewlySpawned",
        }
    }
}

/// What [`Scheduler::tick`](super::Scheduler::tick) did in one frame.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct FrameReport {
    /// The frame's number (the first frame is 1).
    pub frame: u64,
    /// How far the game clock moved: the delta clamped to `max_delta`, times the dilation,
    /// zero while paused.
    pub game_dt: Span,
    /// How far the real clock moved: the delta as given.
    pub real_dt: Span,
    /// Game time thrown away by the `max_delta` clamp (before dilation).
    pub discarded: Span,
    /// `true` when the frame ran paused.
    pub paused: bool,
    /// Tick functions run, in all groups and passes.
    pub ticks_run: usize,
    /// Tick functions run per group (extra passes count under `LastDemotable`).
    pub ticks_per_group: [usize; TickGroup::COUNT],
    /// Extra passes run for functions spawned after the last group.
    pub spawn_passes: usize,
    /// Functions spawned after the last group that hit the pass cap and wait for the next
    /// frame (runaway spawning).
    pub held_back: usize,
    /// Timer calls made.
    pub timers_fired: usize,
    /// Missed timer calls dropped by the catch-up cap in this frame (see
    /// [`Timers::set_catch_up_cap`](crate::timer::Timers::set_catch_up_cap)).
    pub calls_dropped: u64,
    /// A clock stands at the end of representable time (about 829 years after it started):
    /// it stops there, timers on it that are not yet due never fire, and interval tick
    /// functions on it run with a zero delta. Reaching it takes a huge delta or dilation;
    /// a game that sees this has a bug in its loop.
    pub end_of_time: bool,
    /// Tickables ticked.
    pub tickables_ticked: usize,
    /// Latent action completions run.
    pub latent_completed: usize,
    /// Polls of async tasks.
    pub tasks_polled: usize,
    /// Async tasks that ended (finished or cancelled) in the latent stage.
    pub tasks_ended: usize,
    /// Wall-clock time spent per stage, indexed by [`Stage::index`], when the scheduler times
    /// its stages ([`Scheduler::set_stage_timing`](crate::Scheduler::set_stage_timing), off by
    /// default: then all zero). A stage that had nothing to do (a group in which no function
    /// ran, no timers, ...) is not timed: it reads zero, and its few nanoseconds count toward
    /// the next stage that is.
    pub stage_times: [Duration; Stage::COUNT],
    /// Queued commands that failed when applied (a prerequisite that would form a cycle).
    pub errors: Vec<TickError>,
}

impl FrameReport {
    /// Tick functions run in one group.
    pub fn ticks_in(&self, group: TickGroup) -> usize {
        self.ticks_per_group[group.index()]
    }

    /// Wall-clock time spent in one stage.
    pub fn stage_time(&self, stage: Stage) -> Duration {
        self.stage_times[stage.index()]
    }

    /// Wall-clock time of the whole frame's stages.
    pub fn total_time(&self) -> Duration {
        self.stage_times.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_indices_follow_the_frame() {
        for (i, s) in Stage::ALL.iter().enumerate() {
            assert_eq!(s.index(), i, "{s:?}");
        }
        assert_eq!(Stage::Timers.name(), "Timers");
        assert_eq!(Stage::Group(TickGroup::EndPhysics).name(), "EndPhysics");
        // Every group is a stage, in its own order.
        let groups: Vec<TickGroup> = Stage::ALL
            .iter()
            .filter_map(|s| match s {
                Stage::Group(g) => Some(*g),
                _ => None,
            })
            .collect();
        assert_eq!(groups, TickGroup::ALL);
    }
}
