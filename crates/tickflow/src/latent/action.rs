//! The [`LatentAction`] trait, the [`LatentResponse`] an update fills in, and the built-in
//! actions: [`Delay`], [`RetriggerableDelay`], [`DelayUntilNextTick`] and [`WaitUntil`].

use std::fmt;

use crate::time::{Domain, Interval, Span};

/// What one update of a [`LatentAction`] decided. Made fresh for every update.
#[derive(Debug)]
pub struct LatentResponse {
    dt: Span,
    frame: u64,
    creation_frame: bool,
    pub(crate) finished: bool,
    pub(crate) triggered: bool,
    pub(crate) late_by: Option<Span>,
}

impl LatentResponse {
    pub(crate) fn new(dt: Span, frame: u64, creation_frame: bool) -> Self {
        LatentResponse {
            dt,
            frame,
            creation_frame,
            finished: false,
            triggered: false,
            late_by: None,
        }
    }

    /// Time elapsed on the action's clock since its last update (frames count as one flick
    /// each on [`Domain::Frames`]). Zero in the frame the action was added in, because the
    /// delta of the creation frame never counts.
    pub fn dt(&self) -> Span {
        self.dt
    }

    /// The number of the frame being run (the first is 1).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// `true` when the action was added earlier in this same frame (its `dt` is zero).
    pub fn is_creation_frame(&self) -> bool {
        self.creation_frame
    }

    /// When `cond` holds: the action finishes (it is removed, its key is free again) and its
    /// completion runs after every action of this frame has been updated.
    pub fn finish_and_trigger_if(&mut self, cond: bool) {
        if cond {
            self.finished = true;
            self.triggered = true;
        }
    }

    /// Runs the completion this frame without finishing (for repeating actions).
    pub fn trigger(&mut self) {
        self.triggered = true;
    }

    /// Finishes without running the completion.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Says that the action's due time passed `by` ago. An action added by its completion on
    /// the same clock is told through [`LatentAction::started_late`], so a chain of delays keeps
    /// its rhythm instead of losing the overshoot of every link.
    pub fn late_by(&mut self, by: Span) {
        self.late_by = Some(by);
    }
}

/// A polled action: Unreal's `FPendingLatentAction`.
///
/// [`LatentActions`](super::LatentActions) calls [`update`](Self::update) once per frame with
/// the time elapsed on the action's [`domain`](Self::domain); the action finishes and/or
/// triggers its completion through the [`LatentResponse`].
///
/// ```
/// use tickflow::latent::{LatentAction, LatentActionManager, LatentResponse};
/// use tickflow::prelude::*;
///
/// /// Completes every third frame, forever.
/// struct EveryThird(u32);
/// impl LatentAction<Vec<u64>> for EveryThird {
///     fn update(&mut self, r: &mut LatentResponse, _log: &mut Vec<u64>) {
///         self.0 += 1;
///         if self.0 % 3 == 0 {
///             r.trigger();
///         }
///     }
/// }
///
/// let mut latent = LatentActionManager::new();
/// let mut frame = 0;
/// latent.add(OwnerId::from(1), 0, EveryThird(0), |log: &mut Vec<u64>, _| log.push(0));
/// let mut log = Vec::new();
/// for _ in 1..=7 {
///     frame += 1;
///     latent.tick(secs(0.1), &mut log);
///     if log.last() == Some(&0) {
///         *log.last_mut().unwrap() = frame; // the frame of each completion
///     }
/// }
/// assert_eq!(log, [3, 6]);
/// ```
///
/// `Send`, so that the actions can move with their scheduler between threads.
pub trait LatentAction<C>: Send {
    /// Advances the action by `response.dt()` and says whether it finished or triggers.
    fn update(&mut self, response: &mut LatentResponse, ctx: &mut C);

    /// A line for debugging lists.
    fn describe(&self) -> String {
        String::from("latent action")
    }

    /// Called (at the next latent stage) when the action is removed before it finished, by
    /// [`remove`](super::LatentActions::remove) or [`remove_owner`](super::LatentActions::remove_owner).
    /// Its completion never runs.
    fn aborted(&mut self, ctx: &mut C) {
        let _ = ctx;
    }

    /// The clock whose elapsed time [`update`](Self::update) gets; read once, when added.
    fn domain(&self) -> Domain {
        Domain::Game
    }

    /// Asked by [`retriggerable_delay`](super::LatentActions::retriggerable_delay) when its key
    /// already holds this action: `true` when the action restarted with `duration`.
    fn restart(&mut self, duration: Span) -> bool {
        let _ = duration;
        false
    }

    /// Called when the action is added by the completion of an action on the same clock that
    /// was [late by](LatentResponse::late_by) `by`: a delay counts from that due time.
    fn started_late(&mut self, by: Span) {
        let _ = by;
    }

    /// The action as plain data for a [scheduler snapshot](crate::snapshot), or `None` (the
    /// default) when it cannot be saved: the snapshot then lists it as not saved. The Delay
    /// family saves itself; a custom action returns [`SavedAction::Custom`] with bytes of its
    /// own choosing, and the restoring [`Resolver`](crate::snapshot::Resolver) turns them
    /// back into the action in [`latent_action`](crate::snapshot::BindLatent::latent_action).
    fn save(&self) -> Option<SavedAction> {
        None
    }
}

/// A latent action as plain data, from [`LatentAction::save`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SavedAction {
    /// A [`Delay`].
    Delay {
        /// Its whole duration.
        duration: Span,
        /// Time counted so far.
        elapsed: Span,
        /// The clock it counts on.
        domain: Domain,
    },
    /// A [`RetriggerableDelay`].
    RetriggerableDelay {
        /// Its whole duration.
        duration: Span,
        /// Time counted so far.
        elapsed: Span,
        /// The clock it counts on.
        domain: Domain,
    },
    /// A [`DelayUntilNextTick`].
    DelayUntilNextTick,
    /// A user action: `kind` says which, `data` is its state in any encoding the action and
    /// the resolver agree on.
    Custom {
        /// Which action this is (the resolver dispatches on it).
        kind: String,
        /// The action's state.
        data: Vec<u8>,
    },
}

impl SavedAction {
    /// The action again, for the built-in kinds; `None` for [`SavedAction::Custom`].
    pub fn builtin<C>(&self) -> Option<Box<dyn LatentAction<C>>> {
        let delay = |duration: Span, elapsed: Span, domain: Domain| Delay {
            duration,
            elapsed,
            domain,
        };
        Some(match self {
            SavedAction::Delay {
                duration,
                elapsed,
                domain,
            } => Box::new(delay(*duration, *elapsed, *domain)),
            SavedAction::RetriggerableDelay {
                duration,
                elapsed,
                domain,
            } => Box::new(RetriggerableDelay(delay(*duration, *elapsed, *domain))),
            SavedAction::DelayUntilNextTick => Box::new(DelayUntilNextTick),
            SavedAction::Custom { .. } => return None,
        })
    }
}

/// Completes once, `duration` after it starts: the Blueprint Delay. Adding it again under a
/// key that is still counting down is ignored (see [`RetriggerableDelay`] for the other rule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delay {
    duration: Span,
    elapsed: Span,
    domain: Domain,
}

impl Delay {
    /// A delay of `duration` on the game clock, or of `n` frames for
    /// [`Frames(n)`](crate::time::Frames).
    pub fn new(duration: impl Interval) -> Self {
        let (domain, amount) = duration.clock_amount();
        Delay {
            duration: Span::from_flicks(amount),
            elapsed: Span::ZERO,
            domain,
        }
    }

    /// A delay of `duration` on the real clock, which keeps counting while paused.
    pub fn real(duration: Span) -> Self {
        Delay {
            domain: Domain::Real,
            ..Delay::new(duration)
        }
    }

    /// Time left (frames on the frame clock).
    pub fn remaining(&self) -> Span {
        self.duration.saturating_sub(self.elapsed)
    }

    fn advance(&mut self, r: &mut LatentResponse) {
        self.elapsed = self.elapsed.saturating_add(r.dt());
        if self.elapsed >= self.duration {
            r.late_by(self.elapsed - self.duration);
            r.finish_and_trigger_if(true);
        }
    }

    fn describe_as(&self, what: &str) -> String {
        match self.domain {
            Domain::Frames => format!("{what}: {} frames left", self.remaining().flicks()),
            d => format!(
                "{what}: {:.3} s left ({d:?} clock)",
                self.remaining().as_secs_f64()
            ),
        }
    }
}

impl<C> LatentAction<C> for Delay {
    fn update(&mut self, r: &mut LatentResponse, _: &mut C) {
        self.advance(r);
    }

    fn describe(&self) -> String {
        self.describe_as("Delay")
    }

    fn domain(&self) -> Domain {
        self.domain
    }

    fn started_late(&mut self, by: Span) {
        self.elapsed = by;
    }

    fn save(&self) -> Option<SavedAction> {
        Some(SavedAction::Delay {
            duration: self.duration,
            elapsed: self.elapsed,
            domain: self.domain,
        })
    }
}

/// A [`Delay`] that restarts when added again under its key: the Blueprint Retriggerable
/// Delay. The new duration replaces what was left (it is not added to it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetriggerableDelay(Delay);

impl RetriggerableDelay {
    /// A retriggerable delay of `duration` on the game clock, or of `n` frames for
    /// [`Frames(n)`](crate::time::Frames).
    pub fn new(duration: impl Interval) -> Self {
        RetriggerableDelay(Delay::new(duration))
    }

    /// A retriggerable delay of `duration` on the real clock.
    pub fn real(duration: Span) -> Self {
        RetriggerableDelay(Delay::real(duration))
    }

    /// Time left.
    pub fn remaining(&self) -> Span {
        self.0.remaining()
    }
}

impl<C> LatentAction<C> for RetriggerableDelay {
    fn update(&mut self, r: &mut LatentResponse, _: &mut C) {
        self.0.advance(r);
    }

    fn describe(&self) -> String {
        self.0.describe_as("RetriggerableDelay")
    }

    fn domain(&self) -> Domain {
        self.0.domain
    }

    fn restart(&mut self, duration: Span) -> bool {
        self.0.duration = duration;
        self.0.elapsed = Span::ZERO;
        true
    }

    fn started_late(&mut self, by: Span) {
        self.0.elapsed = by;
    }

    fn save(&self) -> Option<SavedAction> {
        Some(SavedAction::RetriggerableDelay {
            duration: self.0.duration,
            elapsed: self.0.elapsed,
            domain: self.0.domain,
        })
    }
}

/// Completes at the first latent stage of a later frame than the one it was added in (Unreal's
/// `DelayUntilNextTick` with its next-frame guarantee).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelayUntilNextTick;

impl<C> LatentAction<C> for DelayUntilNextTick {
    fn update(&mut self, r: &mut LatentResponse, _: &mut C) {
        let done = !r.is_creation_frame();
        r.finish_and_trigger_if(done);
    }

    fn describe(&self) -> String {
        String::from("DelayUntilNextTick")
    }

    fn save(&self) -> Option<SavedAction> {
        Some(SavedAction::DelayUntilNextTick)
    }
}

/// Completes in the first latent stage where `cond(&ctx)` holds (checked once per frame,
/// starting with the frame it was added in): Unity's `WaitUntil`.
pub struct WaitUntil<F>(pub F);

impl<F> fmt::Debug for WaitUntil<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WaitUntil")
    }
}

impl<C, F: FnMut(&C) -> bool + Send> LatentAction<C> for WaitUntil<F> {
    fn update(&mut self, r: &mut LatentResponse, ctx: &mut C) {
        let done = (self.0)(ctx);
        r.finish_and_trigger_if(done);
    }

    fn describe(&self) -> String {
        String::from("WaitUntil")
    }
}
