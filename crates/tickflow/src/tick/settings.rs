//! The tick functions' vocabulary: [`TickGroup`], the phases of a frame; [`TickSettings`], a
//! function's options; [`TickError`]; and the cap on spawn passes.

use std::fmt;

use super::handle::TickHandle;
use crate::owner::OwnerId;
use crate::time::Span;

/// How many extra passes run newly spawned functions after the last group, before the rest
/// wait for the next frame. Unreal allows 100; a chain this long is a bug in the game, and the
/// cap turns it into a report instead of a hang.
pub const MAX_SPAWN_PASSES: usize = 100;

/// The phases of a frame, in the order they run (Unreal's `ETickingGroup`).
///
/// The scheduler's timer stage runs between `PostPhysics` and `PostUpdateWork`, followed by
/// tickables and latent actions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TickGroup {
    /// Before physics: movement, input, AI. The default.
    #[default]
    PrePhysics,
    /// Physics starts. Never a demotion target.
    StartPhysics,
    /// While physics runs: work that neither reads nor writes physics results.
    DuringPhysics,
    /// Physics ends. Never a demotion target.
    EndPhysics,
    /// After physics: work that reads physics results (cameras, attachments).
    PostPhysics,
    /// After timers, tickables and latent actions.
    PostUpdateWork,
    /// The last group: demoted functions of last resort.
    LastDemotable,
}

impl TickGroup {
    /// Every group, in the order they run.
    pub const ALL: [TickGroup; TickGroup::COUNT] = [
        TickGroup::PrePhysics,
        TickGroup::StartPhysics,
        TickGroup::DuringPhysics,
        TickGroup::EndPhysics,
        TickGroup::PostPhysics,
        TickGroup::PostUpdateWork,
        TickGroup::LastDemotable,
    ];

    /// How many groups there are.
    pub const COUNT: usize = 7;

    /// Position in [`TickGroup::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Its name, as in `Debug`: for tables and traces.
    pub const fn name(self) -> &'static str {
        match self {
            TickGroup::PrePhysics => "PrePhysics",
            TickGroup::StartPhysics => "StartPhysics",
            TickGroup::DuringPhysics => "DuringPhysics",
            TickGroup::EndPhysics => "EndPhysics",
            TickGroup::PostPhysics => "PostPhysics",
            TickGroup::PostUpdateWork => "PostUpdateWork",
            TickGroup::LastDemotable => "LastDemotable",
        }
    }

    /// `false` for `StartPhysics` and `EndPhysics`: a prerequisite never demotes a function
    /// into them (it lands in the next group instead).
    pub const fn is_demotion_target(self) -> bool {
        !matches!(self, TickGroup::StartPhysics | TickGroup::EndPhysics)
    }

    /// The group after this one, `None` after `LastDemotable`.
    pub fn next(self) -> Option<TickGroup> {
        TickGroup::ALL.get(self.index() + 1).copied()
    }

    /// `self` moved later to `at_least`, skipping groups that are no demotion target.
    pub(crate) fn demote_to(self, at_least: TickGroup) -> TickGroup {
        if at_least <= self {
            return self;
        }
        let mut g = at_least;
        while !g.is_demotion_target() {
            g = g.next().expect("LastDemotable is a demotion target");
        }
        g
    }
}

/// How a tick function is registered: a plain struct, built with struct update syntax or
/// with the chained methods, in the style of the timer builder.
///
/// `Default`: `PrePhysics`, enabled, every frame, not while paused, dilation 1.
///
/// ```
/// use tickflow::prelude::*;
///
/// let think = TickSettings {
///     name: "ai.think".into(),
///     interval: secs(0.2),
///     group: TickGroup::PostPhysics,
///     ..TickSettings::default()
/// };
/// let chained = TickSettings::named("ai.think")
///     .in_group(TickGroup::PostPhysics)
///     .every(secs(0.2));
/// assert_eq!(think, chained);
/// let hud = TickSettings::named("hud").when_paused().first_in_group().owned_by(OwnerId::new(1));
/// assert!(hud.tick_when_paused && hud.high_priority && hud.enabled);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TickSettings {
    /// The earliest group the function runs in.
    pub group: TickGroup,
    /// The latest group the function may finish in (`None`: its start group). tickflow runs
    /// every function to completion inside its actual start group, so this always holds; it
    /// is checked (`group <= end_group`) and shown by `explain_order`.
    pub end_group: Option<TickGroup>,
    /// Time between ticks on the game clock; zero ticks every frame.
    pub interval: Span,
    /// Disabled functions do not run and cost nothing per frame.
    pub enabled: bool,
    /// Runs while the scheduler is paused (with the real delta); its interval counts on the
    /// [unpaused clock](crate::time::Clocks::unpaused).
    pub tick_when_paused: bool,
    /// Runs before the other functions of its group that do not depend on it.
    pub high_priority: bool,
    /// Whose function this is: [`Scheduler::remove_owner`](crate::scheduler::Scheduler::remove_owner)
    /// removes all of an owner's functions.
    pub owner: Option<OwnerId>,
    /// Shown in errors, `explain_order` and the DOT graph, and the key a
    /// [`Resolver`](crate::snapshot::Resolver) binds the callback by after a
    /// [restore](crate::scheduler::Scheduler::restore). Empty: the handle is shown instead.
    pub name: String,
    /// Multiplies the delta this function receives; 1 leaves it alone. Must be finite, not
    /// negative and at most [`MAX_TIME_DILATION`](crate::time::MAX_TIME_DILATION).
    pub time_dilation: f64,
}

impl Default for TickSettings {
    fn default() -> TickSettings {
        TickSettings {
            group: TickGroup::PrePhysics,
            end_group: None,
            interval: Span::ZERO,
            enabled: true,
            tick_when_paused: false,
            high_priority: false,
            owner: None,
            name: String::new(),
            time_dilation: 1.0,
        }
    }
}

impl TickSettings {
    /// The clock its interval and delta count on.
    pub(crate) fn clock(&self) -> super::interval::IntervalClock {
        if self.tick_when_paused {
            super::interval::IntervalClock::Unpaused
        } else {
            super::interval::IntervalClock::Game
        }
    }

    /// Settings with this name and the defaults otherwise.
    pub fn named(name: impl Into<String>) -> TickSettings {
        TickSettings {
            name: name.into(),
            ..TickSettings::default()
        }
    }

    /// These settings in another group.
    pub fn in_group(self, group: TickGroup) -> TickSettings {
        TickSettings { group, ..self }
    }

    /// With [`end_group`](Self::end_group) set: the latest group it may finish in.
    pub fn ending_in(self, end_group: TickGroup) -> TickSettings {
        TickSettings {
            end_group: Some(end_group),
            ..self
        }
    }

    /// With an [`interval`](Self::interval) between ticks (zero: every frame).
    pub fn every(self, interval: Span) -> TickSettings {
        TickSettings { interval, ..self }
    }

    /// Registered disabled ([`enabled`](Self::enabled) `false`): it waits for
    /// `ticks().set_enabled`.
    pub fn disabled(self) -> TickSettings {
        TickSettings {
            enabled: false,
            ..self
        }
    }

    /// Runs while the scheduler is paused ([`tick_when_paused`](Self::tick_when_paused)).
    pub fn when_paused(self) -> TickSettings {
        TickSettings {
            tick_when_paused: true,
            ..self
        }
    }

    /// Runs first in its group ([`high_priority`](Self::high_priority)).
    pub fn first_in_group(self) -> TickSettings {
        TickSettings {
            high_priority: true,
            ..self
        }
    }

    /// Belongs to `owner` ([`owner`](Self::owner)).
    pub fn owned_by(self, owner: OwnerId) -> TickSettings {
        TickSettings {
            owner: Some(owner),
            ..self
        }
    }

    /// With its own [`time_dilation`](Self::time_dilation).
    pub fn dilated(self, factor: f64) -> TickSettings {
        TickSettings {
            time_dilation: factor,
            ..self
        }
    }

    pub(crate) fn validate(&self) -> Result<(), TickError> {
        if let Some(end) = self.end_group {
            if end < self.group {
                return Err(TickError::InvalidSettings {
                    reason: format!(
                        "end_group {end:?} is before group {:?} in `{}`",
                        self.group, self.name
                    ),
                });
            }
        }
        if !crate::time::valid_dilation(self.time_dilation) {
            return Err(TickError::InvalidSettings {
                reason: format!(
                    "time_dilation {:?} of `{}` is not a finite number from 0 to {}",
                    self.time_dilation,
                    self.name,
                    crate::time::MAX_TIME_DILATION
                ),
            });
        }
        Ok(())
    }
}

/// Why a tick-function operation was refused. Nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TickError {
    /// The prerequisite would close a cycle. `path` names every function on it, starting with
    /// the function that was to wait: each waits for the next, and the last for the first.
    Cycle {
        /// The functions on the cycle, by name (or handle when unnamed).
        path: Vec<String>,
    },
    /// The handle names no registered tick function (never did, or it was removed).
    UnknownTick {
        /// The handle that was given.
        handle: TickHandle,
    },
    /// The settings cannot be used.
    InvalidSettings {
        /// What is wrong with them.
        reason: String,
    },
}

impl fmt::Display for TickError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TickError::Cycle { path } => {
                write!(f, "prerequisite would form a cycle: ")?;
                for name in path {
                    write!(f, "`{name}` waits for ")?;
                }
                write!(f, "`{}`", path[0])
            }
            TickError::UnknownTick { handle } => {
                write!(f, "no tick function is registered for {handle:?}")
            }
            TickError::InvalidSettings { reason } => write!(f, "invalid tick settings: {reason}"),
        }
    }
}

impl std::error::Error for TickError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demotion_skips_physics_edges() {
        use TickGroup::*;
        assert_eq!(PrePhysics.demote_to(StartPhysics), DuringPhysics);
        assert_eq!(PrePhysics.demote_to(EndPhysics), PostPhysics);
        assert_eq!(StartPhysics.demote_to(PrePhysics), StartPhysics);
        assert_eq!(PostPhysics.demote_to(PrePhysics), PostPhysics);
        assert_eq!(PrePhysics.demote_to(LastDemotable), LastDemotable);
    }

    #[test]
    fn cycle_message_names_every_function() {
        let e = TickError::Cycle {
            path: vec!["a".into(), "b".into(), "c".into()],
        };
        assert_eq!(
            e.to_string(),
            "prerequisite would form a cycle: `a` waits for `b` waits for `c` waits for `a`"
        );
    }

    #[test]
    fn settings_are_checked() {
        let bad = TickSettings {
            group: TickGroup::PostPhysics,
            end_group: Some(TickGroup::PrePhysics),
            ..TickSettings::named("x")
        };
        assert!(bad.validate().is_err());
        let bad = TickSettings {
            time_dilation: f64::NAN,
            ..TickSettings::default()
        };
        assert!(bad.validate().is_err());
        assert!(TickSettings::default().validate().is_ok());
        assert_eq!(std::mem::size_of::<Option<TickHandle>>(), 8);
    }
}
