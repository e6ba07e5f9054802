//! [`TickflowTimerCommands`]: pause, restart, speed up or shorten a timer of
//! `commands.tickflow()` through its entity, as `bevy_time::Timer` is controlled through its
//! component.

use bevy_ecs::prelude::*;
use tickflow::prelude::Domain;
use tickflow::time::Interval;

use crate::commands::TickflowCommands;
use crate::queue::{set_queued, Control, LaterQueue};
use crate::resource::with_idle;
use crate::timer_entity::TickflowTimer;

/// Controls for the timer a [`commands.tickflow()`](crate::TickflowCommandsExt) entity holds,
/// on its `EntityCommands`. Applied with the commands (in the frame the timer was set too),
/// and straight to the scheduler: a [`TickflowTimers`](crate::TickflowTimers) read after
/// them sees them. An entity that holds no such timer (it fired its last call, or was
/// despawned), or an amount in frames for a timer of time (or the other way round), is
/// ignored with a warning through `tracing` (Bevy's `LogPlugin` shows it).
///
/// Amounts are in the timer's unit: a [`Span`](tickflow::Span) (`secs(0.5)`) for a timer of
/// time, [`Frames`](tickflow::time::Frames) for a frame timer.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_ecs::system::RunSystemOnce;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1));
/// app.update(); // starts Bevy's clocks
/// let world = app.world_mut();
/// let cooldown = world
///     .run_system_once(|mut commands: Commands| {
///         let mut timer = commands.tickflow().every(secs(2.0)).fire();
///         timer.shorten_timer(secs(0.5)).pause_timer(); // in the frame it is set
///         timer.id()
///     })
///     .unwrap();
/// let read = |world: &mut World| {
///     world
///         .run_system_once(move |t: TickflowTimers| (t.remaining(cooldown), t.is_paused(cooldown)))
///         .unwrap()
/// };
/// assert_eq!(read(world), (Some(Amount::Time(secs(1.5))), Some(true)));
/// app.update();
/// assert_eq!(read(app.world_mut()), (Some(Amount::Time(secs(1.5))), Some(true))); // paused
/// app.world_mut().commands().entity(cooldown).unpause_timer().set_timer_rate(secs(1.0));
/// app.world_mut().flush();
/// app.update();
/// // The countdown keeps what it ran (0.5 s) and ends at the new length: 0.5 s left, less a step.
/// assert_eq!(read(app.world_mut()), (Some(Amount::Time(secs(0.4))), Some(false)));
/// ```
pub trait TickflowTimerCommands {
    /// Pauses the timer: its countdown stops where it is.
    fn pause_timer(&mut self) -> &mut Self;

    /// Resumes a paused timer.
    fn unpause_timer(&mut self) -> &mut Self;

    /// Starts the countdown in progress over, at its full length.
    fn restart_timer(&mut self) -> &mut Self;

    /// Sets its period (a one-shot's delay); the countdown in progress keeps the time it
    /// has run ([`Timers::set_rate`](tickflow::timer::Timers::set_rate)).
    fn set_timer_rate(&mut self, rate: impl Interval) -> &mut Self;

    /// Sets the time left until its next call
    /// ([`Timers::set_remaining`](tickflow::timer::Timers::set_remaining)).
    fn set_timer_remaining(&mut self, left: impl Interval) -> &mut Self;

    /// Takes `by` off the time left ("cut the cooldown by 0.5 s"); no less than zero.
    fn shorten_timer(&mut self, by: impl Interval) -> &mut Self;
}

/// The control, and whether its amount is in frames (`None`: it has no amount).
fn amount(i: impl Interval, make: fn(u64) -> Control) -> (Control, Option<bool>) {
    let (domain, n) = i.clock_amount();
    (make(n), Some(domain == Domain::Frames))
}

fn queue(entity: &mut EntityCommands<'_>, (op, frames): (Control, Option<bool>)) {
    let id = entity.id();
    // A despawned entity (a one-shot after its call, say) is a stale handle: a warning, not
    // Bevy's default error handler's panic.
    entity.queue_handled(
        move |e: EntityWorldMut<'_>| control(e.into_world_mut(), id, op, frames),
        move |_, _| {
            let op = op.describe(frames == Some(true));
            tracing::warn!(
                "tickflow: {op} for the timer of {id}: the entity is gone (despawned, or its \
                 timer made its last call): ignored"
            );
        },
    );
}

impl TickflowTimerCommands for EntityCommands<'_> {
    fn pause_timer(&mut self) -> &mut Self {
        queue(self, (Control::Pause, None));
        self
    }

    fn unpause_timer(&mut self) -> &mut Self {
        queue(self, (Control::Unpause, None));
        self
    }

    fn restart_timer(&mut self) -> &mut Self {
        queue(self, (Control::Restart, None));
        self
    }

    fn set_timer_rate(&mut self, rate: impl Interval) -> &mut Self {
        queue(self, amount(rate, Control::Rate));
        self
    }

    fn set_timer_remaining(&mut self, left: impl Interval) -> &mut Self {
        queue(self, amount(left, Control::Remaining));
        self
    }

    fn shorten_timer(&mut self, by: impl Interval) -> &mut Self {
        queue(self, amount(by, Control::Shorten));
        self
    }
}

/// Applies `control` to the timer of `entity`: now when the scheduler is idle, else queued
/// for the running frame's next apply (or, for a timer not set yet, for its setting).
/// Ignored with a warning when the entity holds no timer of `commands.tickflow()`, or the
/// amount's unit is not the timer's.
fn control(world: &mut World, entity: Entity, control: Control, frames: Option<bool>) {
    let said = control.describe(frames == Some(true));
    let Some(timer) = world.get::<TickflowTimer>(entity) else {
        tracing::warn!(
            "tickflow: {said} for {entity}, which holds no timer of commands.tickflow() (it \
             fired its last call, was despawned, or never had one): ignored"
        );
        return;
    };
    if frames.is_some_and(|f| f != timer.counts_frames()) {
        let (given, counts) = match timer.counts_frames() {
            true => ("time", "frames"),
            false => ("frames", "time"),
        };
        tracing::warn!(
            "tickflow: {said} for the timer of {entity} is in {given}, the timer counts \
             {counts}: ignored"
        );
        return;
    }
    let handle = timer.handle();
    let applied = with_idle(world, |world, sched| {
        // Not set yet: set the queued batch now, so the control acts on the timer as it is.
        set_queued(world, sched);
        if let Some(h) = world
            .get::<TickflowTimer>(entity)
            .and_then(TickflowTimer::handle)
        {
            control.apply(sched.timers(), h);
        }
    });
    if applied.is_none() {
        // A frame is running: with the running frame's next apply, or with the timer's
        // setting at the next frame.
        match handle {
            Some(h) => world.resource::<TickflowCommands>().timers(move |t| {
                control.apply(t, h);
            }),
            None => {
                (world.resource_mut::<LaterQueue>()).push_control(entity, control);
                if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
                    timer.mark_controlled();
                }
            }
        }
    }
}
