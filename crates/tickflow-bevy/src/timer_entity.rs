//! The timers of `commands.tickflow()` as entities: the component that holds a timer's
//! settings and target, how it gets into the scheduler (queued by a hook, set in a batch at
//! the next frame), how it runs and ends, and how a restored scheduler finds it again.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};

use bevy_ecs::entity::EntityHashSet;
use bevy_ecs::lifecycle::HookContext;
use bevy_ecs::prelude::*;
use bevy_ecs::world::DeferredWorld;
use tickflow::latent::{Completion, LatentAction, LatentInfo};
use tickflow::prelude::{Frames, Scheduler, Span, Tickable, TimerCx, TimerHandle, Timers};
use tickflow::snapshot::Resolver;
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::TimerBuilder;
use tickflow::timer::{CancelHook, TimerCallback, TimerInfo};

use crate::commands::TickflowCommands;
use crate::resource::Tickflow;
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
#[derive(Component)]
#[component(on_add = queue, on_remove = cancel)]
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
            .field("spec", &self.spec.spec(None))
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

    /// The timer in the scheduler (`None` while it waits for the next frame, and after its
    /// last call).
    pub fn handle(&self) -> Option<TimerHandle> {
        self.handle
    }

    /// A timer not set yet (queued for the next frame's batch), with the options its entity
    /// carries: its first countdown's length and its rate, in flicks or frames. It reads as
    /// that countdown, untouched: nothing can have changed it (a control sets the batch
    /// first). `None` once set, or for a timer that will never be set (`times(0)`).
    pub(crate) fn waiting(&self, options: Option<&LaterOptions>) -> Option<(u64, u64)> {
        if self.handle.is_some() || self.spec.controlled() || options.is_some_and(|o| o.never()) {
            return None;
        }
        let rate = self.spec.amount();
        let first = options.and_then(|o| o.first_delay);
        Some((first.unwrap_or(rate), rate))
    }

    /// `true` when it counts frames (`after(Frames(n))`, `every(Frames(n))`).
    pub(crate) fn counts_frames(&self) -> bool {
        self.spec.counts_frames()
    }
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
    /// Applies it to the timer `h`: `false` when the timer is gone or refused it.
    fn apply(self, t: &mut Timers<World>, h: TimerHandle) -> bool {
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

/// Applies `control` to the timer of `entity`: now when the scheduler is idle, else queued
/// for the running frame's next apply (or, for a timer not set yet, for its setting).
/// Ignored with a warning when the entity holds no timer of `commands.tickflow()`, or the
/// amount's unit is not the timer's.
pub(crate) fn control(world: &mut World, entity: Entity, control: Control, frames: Option<bool>) {
    let Some(timer) = world.get::<TickflowTimer>(entity) else {
        tracing::warn!(
            "tickflow: {control:?} for {entity}, which holds no timer of commands.tickflow() \
             (it fired its last call, was despawned, or never had one): ignored"
        );
        return;
    };
    if frames.is_some_and(|f| f != timer.counts_frames()) {
        let (given, counts) = match timer.counts_frames() {
            true => ("time", "frames"),
            false => ("frames", "time"),
        };
        tracing::warn!(
            "tickflow: {control:?} for the timer of {entity} is in {given}, the timer counts \
             {counts}: ignored"
        );
        return;
    }
    let handle = timer.handle;
    let applied = with_idle(world, |world, sched| {
        // Not set yet: set the queued batch now, so the control acts on the timer as it is.
        set_queued(world, sched);
        if let Some(h) = world.get::<TickflowTimer>(entity).and_then(|t| t.handle) {
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
                (world.resource_mut::<LaterQueue>().controls).push((entity, control));
                if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
                    timer.spec.set_controlled();
                }
            }
        }
    }
}

/// Runs `f` with the scheduler taken out of the world, and puts it back even when `f`
/// panics (a queued closure applied on the way may): `None` while a frame runs it.
pub(crate) fn with_idle<R>(
    world: &mut World,
    f: impl FnOnce(&mut World, &mut Scheduler<World>) -> R,
) -> Option<R> {
    let mut sched = world.resource_mut::<Tickflow>().take_idle()?;
    let result = panic::catch_unwind(AssertUnwindSafe(|| f(world, &mut sched)));
    world.resource_mut::<Tickflow>().put_back(sched);
    Some(result.unwrap_or_else(|p| panic::resume_unwind(p)))
}

fn cancel(world: DeferredWorld, ctx: HookContext) {
    let handle = world
        .get::<TickflowTimer>(ctx.entity)
        .and_then(|t| t.handle);
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
        if options.as_deref().is_some_and(LaterOptions::never) {
            // No call will ever come, so no last call would despawn it.
            never.push(entity);
        } else if timer.handle.is_none() {
            let spec = timer.spec.spec(options.as_deref());
            // The name goes to the scheduler.
            let name = options.as_mut().and_then(|o| o.name.take());
            timer.handle = Some(set(timers, spec, entity, name));
        }
    }
    for entity in never {
        world.despawn(entity);
    }
    for &(entity, control) in &controls {
        if let Ok((timer, _)) = components.get(world, entity) {
            if let Some(h) = timer.handle {
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

fn set(
    timers: &mut Timers<World>,
    spec: Spec,
    entity: Entity,
    name: Option<Box<str>>,
) -> TimerHandle {
    match spec.when {
        When::After(d) => time(timers.after(d), spec, entity, name),
        When::Every(p) => time(timers.every(p), spec, entity, name),
        When::AfterFrames(n) => frames(timers.after(Frames(n)), spec, entity, name),
        When::EveryFrames(n) => frames(timers.every(Frames(n)), spec, entity, name),
    }
}

/// The options of a timer that counts time.
fn time(
    mut b: TimerBuilder<'_, World>,
    spec: Spec,
    entity: Entity,
    name: Option<Box<str>>,
) -> TimerHandle {
    if spec.real {
        b = b.real();
    }
    if let Some(f) = spec.first_delay {
        b = b.first_delay(Span::from_flicks(f));
    }
    finish(b, spec, entity, name)
}

/// The options of a timer that counts frames.
fn frames(
    mut b: TimerBuilder<'_, World, Frames>,
    spec: Spec,
    entity: Entity,
    name: Option<Box<str>>,
) -> TimerHandle {
    if let Some(f) = spec.first_delay {
        b = b.first_delay(Frames(f));
    }
    finish(b, spec, entity, name)
}

/// The options every timer has, and its callback.
fn finish<U>(
    builder: TimerBuilder<'_, World, U>,
    spec: Spec,
    entity: Entity,
    name: Option<Box<str>>,
) -> TimerHandle {
    // The tag finds the entity again after a restore; no owner, and a name only when given
    // (each costs a side-table entry).
    let mut builder = builder.tag(entity.to_bits());
    if let Some(name) = name {
        builder = builder.name(name);
    }
    if let Some(c) = spec.catch_up {
        builder = builder.catch_up(c);
    }
    if let Some(n) = spec.times {
        builder = builder.times(n);
    }
    builder.call(fire)
}

/// The callback of every timer set through `commands.tickflow()`: everything it needs is on
/// its entity, named by its tag, so it captures nothing (boxing it allocates nothing) and a
/// restored scheduler binds it again as it is.
fn fire(world: &mut World, cx: &mut TimerCx<'_, World>) {
    let Some(entity) = cx.tag().and_then(Entity::try_from_bits) else {
        return;
    };
    if !run_entity(
        world,
        entity,
        cx.handle(),
        cx.call_index(),
        cx.is_last_call(),
    ) {
        // Its entity is gone, or holds another timer: nothing to run, now or later.
        cx.clear_self();
    }
}

/// After a restore: an entity holding a timer the restore did not bind to it (its timer is
/// not in the save) loses its handle, which may name another timer now, and is despawned.
/// Entities not set yet (no handle) stay queued.
pub(crate) fn detach_stale(world: &mut World, bound: &EntityHashSet) {
    let mut q = world.query::<(Entity, &TickflowTimer)>();
    let stale: Vec<Entity> = (q.iter(world))
        .filter(|(e, t)| t.handle.is_some() && !bound.contains(e))
        .map(|(e, _)| e)
        .collect();
    for entity in stale {
        if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
            timer.handle = None;
        }
        world.despawn(entity);
    }
}

/// Runs what `entity` holds for its timer `handle`; `false` when it does not hold that timer.
fn run_entity(
    world: &mut World,
    entity: Entity,
    handle: TimerHandle,
    call: u64,
    last: bool,
) -> bool {
    let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) else {
        return false;
    };
    if timer.handle != Some(handle) {
        return false;
    }
    let fire = timer.spec.fire();
    if let Some(mut target) = timer.target.take() {
        target.run(world);
        if !last {
            if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
                timer.target = Some(target);
            }
        }
    }
    if fire {
        world.trigger(TimerFired { entity, call, last });
    }
    if last {
        // Its timer is making its last call: nothing to cancel.
        if let Some(mut timer) = world.get_mut::<TickflowTimer>(entity) {
            timer.handle = None;
        }
        if let Ok(e) = world.get_entity_mut(entity) {
            e.despawn();
        }
    }
    true
}

/// Binds the timers of `commands.tickflow()` on restore (a timer whose tag names an entity
/// whose component holds that very handle), and asks the user's resolver for the rest. A
/// tagged timer the user's resolver does not know and whose tag names no entity holding it
/// is one of ours whose entity is gone: bound, and listed to be cleared after the restore.
pub(crate) struct LaterResolver<'r> {
    world: &'r World,
    user: &'r mut dyn Resolver<World>,
    bound: EntityHashSet,
    gone: Vec<TimerHandle>,
}

impl<'r> LaterResolver<'r> {
    pub(crate) fn new(world: &'r World, user: &'r mut dyn Resolver<World>) -> Self {
        LaterResolver {
            world,
            user,
            bound: EntityHashSet::default(),
            gone: Vec::new(),
        }
    }

    /// The entities whose timers it bound, and the timers whose entities are gone.
    pub(crate) fn finish(self) -> (EntityHashSet, Vec<TimerHandle>) {
        (self.bound, self.gone)
    }
}

impl Resolver<World> for LaterResolver<'_> {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<World>> {
        let Some(entity) = info.tag.and_then(Entity::try_from_bits) else {
            return self.user.timer(info);
        };
        let timer = self.world.get::<TickflowTimer>(entity);
        if timer.is_some_and(|t| t.handle == Some(info.handle)) {
            self.bound.insert(entity);
            return Some(Box::new(fire));
        }
        if let Some(cb) = self.user.timer(info) {
            return Some(cb);
        }
        self.gone.push(info.handle);
        Some(Box::new(fire))
    }

    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<World>> {
        self.user.timer_on_cancel(info)
    }

    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<World>> {
        self.user.tick(info)
    }

    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<World>>> {
        self.user.tickable(info)
    }

    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<World>> {
        self.user.latent(info)
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<World>>> {
        self.user.latent_action(kind, data)
    }
}
