//! How the timers of `commands.tickflow()` get into the scheduler: their component's hooks queue
//! each new entity (and cancel the timer of one that goes), and the queue is set in one batch
//! at the next frame, by `flush`, or when one of them is controlled.

use bevy_ecs::lifecycle::HookContext;
use bevy_ecs::prelude::*;
use bevy_ecs::world::DeferredWorld;
use tickflow::timer::TimerBuilder;
use tickflow::{Frames, Scheduler, Span, TimerHandle, Timers};

use crate::bind::fire;
use crate::commands::TickflowCommands;
use crate::spec::{Given, LaterOptions, Spec, When};
use crate::timer_entity::TickflowTimer;

/// Gives [`TickflowTimer`] its hooks in `world` (the plugin does, before any timer exists).
pub(crate) fn register_hooks(world: &mut World) {
    world
        .register_component_hooks::<TickflowTimer>()
        .on_add(queue)
        .on_remove(cancel);
}

/// A change to a timer made through its entity
/// ([`TickflowTimerCommands`](crate::TickflowTimerCommands)); amounts in flicks, or frames
/// for a frame timer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    Pause,
    Unpause,
    Restart,
    Rate(u64),
    Remaining(u64),
    Shorten(u64),
}

impl Control {
    /// The control as it was called, for a warning: `shorten_timer(0.5s)`,
    /// `set_timer_rate(20 frames)` (`frames`: its amount counts frames), never raw flicks.
    pub(crate) fn describe(self, frames: bool) -> String {
        let amount = |n| crate::Amount::of(frames, n);
        match self {
            Control::Pause => "pause_timer".into(),
            Control::Unpause => "unpause_timer".into(),
            Control::Restart => "restart_timer".into(),
            Control::Rate(n) => format!("set_timer_rate({})", amount(n)),
            Control::Remaining(n) => format!("set_timer_remaining({})", amount(n)),
            Control::Shorten(n) => format!("shorten_timer({})", amount(n)),
        }
    }

    /// Applies it to the timer `h`: `false` when the timer is gone or refused it.
    pub(crate) fn apply(self, t: &mut Timers<World>, h: TimerHandle) -> bool {
        let span = Span::from_flicks;
        match self {
            Control::Pause => t.pause(h),
            Control::Unpause => t.unpause(h),
            Control::Restart => t.restart(h),
            Control::Rate(r) => t.set_rate(h, span(r)),
            Control::Remaining(left) => t.set_remaining(h, span(left)),
            Control::Shorten(by) => t
                .remaining(h)
                .is_some_and(|left| t.set_remaining(h, left.saturating_sub(span(by)))),
        }
    }
}

/// Timer entities added since their timers were last set, to set in one batch (at the next
/// frame, by `flush`, or when one of them is controlled), and the controls given inside a
/// frame to timers not set then.
#[derive(Resource, Default, Debug)]
pub(crate) struct LaterQueue {
    entities: Vec<Entity>,
    controls: Vec<(Entity, Control)>,
    /// The batch's way to the timers' components, kept between batches: a fraction of the
    /// instructions of `World::get_mut`, which finds the component's id by its type each
    /// time.
    components: Option<QueryState<Batch>>,
}

impl LaterQueue {
    /// Queues a control given inside a frame to a timer not set then.
    pub(crate) fn push_control(&mut self, entity: Entity, control: Control) {
        self.controls.push((entity, control));
    }
}

/// What setting a queued timer reads and writes on its entity.
type Batch = (
    &'static mut TickflowTimer,
    Option<&'static mut LaterOptions>,
);

fn queue(mut world: DeferredWorld, ctx: HookContext) {
    // Only queued: set in one batch at the next frame, or sooner when something needs its
    // handle (`flush`, a control). Setting each one here, in its hook, measured 30-50 %
    // slower per timer (the hook's lookups, and timers set between entity spawns).
    if let Some(mut q) = world.get_resource_mut::<LaterQueue>() {
        q.entities.push(ctx.entity);
    }
}

fn cancel(world: DeferredWorld, ctx: HookContext) {
    let handle = world
        .get::<TickflowTimer>(ctx.entity)
        .and_then(TickflowTimer::handle);
    // Not set yet: the batch skips an entity that lost its component.
    if let (Some(h), Some(commands)) = (handle, world.get_resource::<TickflowCommands>()) {
        commands.timers(move |t| {
            t.clear(h);
        });
    }
}

/// Sets the timers of the entities queued since the last call, then applies the controls
/// given meanwhile (inside a frame) to timers not set then, in order.
pub(crate) fn set_queued(world: &mut World, sched: &mut Scheduler<World>) {
    let Some(mut q) = world.get_resource_mut::<LaterQueue>() else {
        return;
    };
    if q.entities.is_empty() && q.controls.is_empty() {
        return;
    }
    let (mut queued, mut controls, components) = (
        std::mem::take(&mut q.entities),
        std::mem::take(&mut q.controls),
        q.components.take(),
    );
    let mut components = components.unwrap_or_else(|| world.query());
    let timers = sched.timers();
    // One allocation for the batch, where growing as they arrive copies the table at each
    // doubling (in a new app, a page fault per page copied).
    timers.reserve(queued.len());
    // Despawning needs the world, so it waits for the end of the batch: it changes no timer,
    // and the timers are still set in the order their entities were spawned.
    let mut never = Vec::new();
    let mut batch = components.query_mut(&mut *world);
    for &entity in &queued {
        let Ok((mut timer, mut options)) = batch.get_mut(entity) else {
            continue; // despawned before its frame
        };
        if options.as_deref().is_some_and(LaterOptions::never) || timer.is_orphan() {
            // No call will ever come (`times(0)`, or its owner was gone before it was set), so
            // no last call would despawn it.
            never.push(entity);
        } else if timer.handle().is_none() {
            let spec = timer.settings(options.as_deref());
            // The name, durability and payload go to the scheduler.
            let given = options.as_mut().map(|o| std::mem::take(&mut o.given));
            timer.set_handle(set(timers, spec, entity, given.unwrap_or_default()));
        }
    }
    for entity in never {
        world.despawn(entity);
    }
    for &(entity, control) in &controls {
        if let Ok((timer, _)) = components.get(world, entity) {
            if let Some(h) = timer.handle() {
                control.apply(sched.timers(), h);
            }
        }
    }
    queued.clear();
    controls.clear();
    // Keep the buffers (no hook runs here, but be exact: keep what one might have queued).
    let mut q = world.resource_mut::<LaterQueue>();
    if q.entities.is_empty() {
        q.entities = queued;
    }
    if q.controls.is_empty() {
        q.controls = controls;
    }
    q.components = Some(components);
}

fn set(timers: &mut Timers<World>, spec: Spec, entity: Entity, given: Given) -> TimerHandle {
    match spec.when {
        When::After(d) => time(timers.after(d), spec, entity, given),
        When::Every(p) => time(timers.every(p), spec, entity, given),
        When::AfterFrames(n) => frames(timers.after(Frames(n)), spec, entity, given),
        When::EveryFrames(n) => frames(timers.every(Frames(n)), spec, entity, given),
        When::At(t) => time(timers.at(t), spec, entity, given),
    }
}

/// The options of a timer that counts time.
fn time(mut b: TimerBuilder<'_, World>, spec: Spec, entity: Entity, given: Given) -> TimerHandle {
    if spec.real {
        b = b.real();
    }
    if let Some(f) = spec.first_delay {
        b = b.first_delay(Span::from_flicks(f));
    }
    finish(b, spec, entity, given)
}

/// The options of a timer that counts frames.
fn frames(
    mut b: TimerBuilder<'_, World, Frames>,
    spec: Spec,
    entity: Entity,
    given: Given,
) -> TimerHandle {
    if let Some(f) = spec.first_delay {
        b = b.first_delay(Frames(f));
    }
    finish(b, spec, entity, given)
}

/// The options every timer has, and its callback.
fn finish<U>(
    builder: TimerBuilder<'_, World, U>,
    spec: Spec,
    entity: Entity,
    given: Given,
) -> TimerHandle {
    // The tag finds the entity again after a restore; no owner, and a name, durability and
    // payload only when given (each costs a side-table entry).
    let mut builder = builder.tag(entity.to_bits());
    if let Some(name) = given.name {
        builder = builder.name(name);
    }
    if let Some(offline) = given.durable {
        builder = builder.durable(offline);
    }
    if let Some(payload) = given.payload {
        builder = builder.payload(payload);
    }
    if let Some(c) = spec.catch_up {
        builder = builder.catch_up(c);
    }
    if let Some(n) = spec.times {
        builder = builder.times(n);
    }
    builder.call(fire)
}
