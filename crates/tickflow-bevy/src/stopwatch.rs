//! [`TickflowStopwatch`]: a stopwatch on one of tickflow's clocks that lives as a component or
//! a resource and reads without clocks: the plugin moves every running one by each frame's
//! step of its clock.

use bevy_ecs::prelude::*;
use tickflow::prelude::{Clocks, Domain, Span};
#[cfg(feature = "reflect")]
use {
    bevy_ecs::reflect::{ReflectComponent, ReflectResource},
    bevy_reflect::std_traits::ReflectDefault,
};

use crate::amount::Amount;

/// A stopwatch on tickflow's game clock (the default: it stops while the game is paused and
/// runs at its speed), real clock, or frame clock, that needs no clocks passed to it: put it
/// on an entity, or insert it as a resource in [`TickflowStopwatchResource`], and the plugin
/// adds each tickflow frame's step of its clock to it while it runs. A lap timer, a speedrun
/// clock, "time in this zone".
///
/// It counts whole tickflow frames: one started or stopped between frames (from a system) is
/// exact; one started from inside a frame's callback counts that frame too. For exact times
/// inside callbacks, tickflow's own [`Stopwatch`](tickflow::time::Stopwatch) reads the
/// callback's clocks.
///
/// ```
/// use bevy_app::App;
/// use bevy_time::{Time, TimePlugin, TimeUpdateStrategy, Virtual};
/// use tickflow_bevy::prelude::*;
/// use tickflow_bevy::{TickflowStopwatch, TickflowStopwatchResource};
///
/// let mut app = App::new();
/// app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
///     .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
///     .insert_resource(TickflowStopwatchResource(TickflowStopwatch::running(Domain::Game)));
/// let lap = app.world_mut().spawn(TickflowStopwatch::running(Domain::Frames)).id();
/// for _ in 0..4 {
///     app.update(); // three steps of 0.1 s
/// }
/// app.world_mut().resource_mut::<Time<Virtual>>().pause();
/// app.update(); // paused: the game clock stands still
/// let game = app.world().resource::<TickflowStopwatchResource>();
/// assert_eq!(game.elapsed(), Amount::Time(secs(0.3)));
/// let mut lap = app.world_mut().get_mut::<TickflowStopwatch>(lap).unwrap();
/// assert_eq!(lap.lap(), Amount::Frames(Frames(3)));
/// assert_eq!(lap.elapsed(), Amount::Frames(Frames(0)));
/// ```
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Component, Default, Debug, PartialEq, Hash)
)]
pub struct TickflowStopwatch {
    domain: Domain,
    running: bool,
    /// Flicks, or frames on the frame clock.
    elapsed: u64,
}

impl Default for TickflowStopwatch {
    /// Stopped at zero, on the game clock.
    fn default() -> Self {
        TickflowStopwatch::new(Domain::Game)
    }
}

impl TickflowStopwatch {
    /// Stopped at zero, on `domain`'s clock.
    pub fn new(domain: Domain) -> Self {
        TickflowStopwatch {
            domain,
            running: false,
            elapsed: 0,
        }
    }

    /// Running from zero, on `domain`'s clock.
    pub fn running(domain: Domain) -> Self {
        TickflowStopwatch {
            running: true,
            ..TickflowStopwatch::new(domain)
        }
    }

    /// The clock it counts on.
    pub fn domain(&self) -> Domain {
        self.domain
    }

    /// Runs from where it stands.
    pub fn start(&mut self) {
        self.running = true;
    }

    /// Stands still, keeping its time.
    pub fn stop(&mut self) {
        self.running = false;
    }

    /// Back to zero (running or not, as it was).
    pub fn reset(&mut self) {
        self.elapsed = 0;
    }

    /// `true` while it runs.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Its time: frames on the frame clock, time on the others.
    pub fn elapsed(&self) -> Amount {
        Amount::of(self.domain == Domain::Frames, self.elapsed)
    }

    /// Its time, and back to zero: a lap.
    pub fn lap(&mut self) -> Amount {
        let lap = self.elapsed();
        self.elapsed = 0;
        lap
    }

    /// Adds a frame's step of its clock, if it runs.
    fn advance(&mut self, clocks: &Clocks) {
        if self.running {
            let step: Span = clocks.delta(self.domain);
            self.elapsed = self.elapsed.saturating_add(step.flicks());
        }
    }
}

/// A [`TickflowStopwatch`] as a resource (a type is a component or a resource in Bevy, not
/// both): the plugin moves it as it moves the components.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Default, Debug, PartialEq, Hash)
)]
pub struct TickflowStopwatchResource(pub TickflowStopwatch);

impl std::ops::Deref for TickflowStopwatchResource {
    type Target = TickflowStopwatch;
    fn deref(&self) -> &TickflowStopwatch {
        &self.0
    }
}

impl std::ops::DerefMut for TickflowStopwatchResource {
    fn deref_mut(&mut self) -> &mut TickflowStopwatch {
        &mut self.0
    }
}

/// The plugin's way to the stopwatches, kept between frames.
#[derive(Resource, Default)]
pub(crate) struct Stopwatches(Option<QueryState<&'static mut TickflowStopwatch>>);

/// After a frame: every running stopwatch, components and the resource, moves by the
/// frame's step of its clock. Costs a visit per stopwatch per frame.
pub(crate) fn advance_all(world: &mut World, clocks: &Clocks) {
    if let Some(mut sw) = world.get_resource_mut::<TickflowStopwatchResource>() {
        sw.advance(clocks);
    }
    let Some(mut cached) = world.get_resource_mut::<Stopwatches>() else {
        return;
    };
    let mut query = cached.0.take().unwrap_or_else(|| QueryState::new(world));
    for mut sw in query.iter_mut(world) {
        sw.advance(clocks);
    }
    world.resource_mut::<Stopwatches>().0 = Some(query);
}
