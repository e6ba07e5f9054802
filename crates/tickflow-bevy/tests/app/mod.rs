//! The headless app the integration tests share: the plugin at 10 Hz, one fixed step per
//! update, and a log resource that callbacks write to.
// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

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

/// Collects the messages of `tracing` events on this thread while the guard lives.
pub fn capture() -> (Arc<Mutex<Vec<String>>>, tracing::subscriber::DefaultGuard) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let guard = tracing::subscriber::set_default(Collect(seen.clone()));
    (seen, guard)
}

pub struct Collect(Arc<Mutex<Vec<String>>>);

pub struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Collect {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target().starts_with("tickflow") {
            let mut m = Message(String::new());
            event.record(&mut m);
            self.0.lock().unwrap().push(m.0);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
