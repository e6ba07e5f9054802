//! The headless app the integration tests share: the plugin at 10 Hz, one fixed step per
//! update, and a log resource that callbacks write to.
// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use tickflow_bevy::prelude::*;

#[derive(Resource, Default, Debug)]
pub struct Log(pub Vec<String>);

pub fn log(world: &mut World, line: impl Into<String>) {
    world.resource_mut::<Log>().0.push(line.into());
}

pub fn lines(app: &App) -> Vec<String> {
    app.world().resource::<Log>().0.clone()
}

/// A headless app at 10 Hz, one step per update, its clocks started.
pub fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, TickflowPlugin::fixed(10)))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .init_resource::<Log>();
    app.update();
    app
}

pub fn run(app: &mut App, updates: u32) {
    for _ in 0..updates {
        app.update();
    }
}
