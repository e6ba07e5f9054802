//! Reads of the timers from inside a tickflow frame. While a frame runs, the scheduler is out
//! of the [`Tickflow`](crate::Tickflow) resource (it has the world), so a system that a
//! callback sets off — an observer of [`TimerFired`](crate::TimerFired), a `run_system` or
//! `trigger` target — cannot reach it there. The callback can: it lends its `cx.timers()` for
//! the length of what it sets off, and [`TickflowTimers`](crate::TickflowTimers) reads through
//! them. The plugin's own timer callback does so for every target and `TimerFired`; a callback
//! of yours does with [`lend_timers`].
//!
//! The one unsafe block of the crate is here: the lent timers are kept as a pointer in a
//! thread-local for the length of the lending call, because a system parameter cannot name the
//! callback's borrow. Measured need: there is no safe way for an observer to see them.

use std::cell::Cell;

use bevy_ecs::world::World;
use tickflow::Timers;

thread_local! {
    /// The timers lent on this thread, or null.
    static LENT: Cell<*const Timers<World>> = const { Cell::new(std::ptr::null()) };
}

/// Lends `timers` to [`TickflowTimers`](crate::TickflowTimers) for the length of `f`, on this
/// thread: what `f` sets off (an observer, a one-shot system, a schedule run on this thread)
/// reads timers through them instead of panicking because the scheduler is running a frame.
/// The plugin lends them around its own targets and [`TimerFired`](crate::TimerFired); call
/// it in a callback of yours that triggers or runs systems that read timers.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::prelude::*;
/// use bevy_time::{TimePlugin, TimeUpdateStrategy};
/// use tickflow_bevy::prelude::*;
///
/// #[derive(Event)]
/// struct Refresh(Entity);
///
/// #[derive(Resource, Default)]
/// struct Hud(Vec<String>);
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
///     .init_resource::<Hud>()
///     .add_observer(|r: On<Refresh>, timers: TickflowTimers, mut hud: ResMut<Hud>| {
///         let left = timers.remaining(r.0).map(|a| a.to_string());
///         hud.0.push(left.unwrap_or_default());
///     });
/// app.update();
/// let buff = app
///     .world_mut()
///     .run_system_once(|mut commands: Commands| commands.tickflow().after(secs(2.0)).fire().id())
///     .unwrap();
/// app.world_mut()
///     .resource_mut::<Tickflow>()
///     .scheduler()
///     .timers()
///     .after(secs(0.5))
///     .call(move |world, cx| {
///         tickflow_bevy::lend_timers(cx.timers(), || world.trigger(Refresh(buff)));
///     });
/// for _ in 0..5 {
///     app.update();
/// }
/// assert_eq!(app.world().resource::<Hud>().0, ["1.5s"]);
/// # use bevy_ecs::system::RunSystemOnce;
/// ```
pub fn lend_timers<R>(timers: &Timers<World>, f: impl FnOnce() -> R) -> R {
    /// Puts back what was lent before (nested lending), also when `f` panics.
    struct Restore(*const Timers<World>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LENT.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LENT.with(|l| l.replace(timers)));
    f()
}

/// Runs `f` on the timers lent on this thread, if any. `f` cannot keep the reference: its
/// result does not borrow from it.
pub(crate) fn lent<R>(f: impl FnOnce(&Timers<World>) -> R) -> Option<R> {
    let p = LENT.with(Cell::get);
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is non-null only inside a `lend_timers` call on this thread, which holds the
    // shared borrow `p` came from until it returns (its guard resets the pointer before that,
    // on a panic too): the timers are alive, and nothing can change them meanwhile (no
    // `&mut` can coexist with that borrow). `f` gets a reference that cannot outlive this
    // call (its result is not tied to the reference's lifetime).
    Some(f(unsafe { &*p }))
}
