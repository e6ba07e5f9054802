//! The `reflect` feature: what an inspector sees, through the app's type registry
//! (`cargo test -p tickflow-bevy --features reflect --test reflect`).

use bevy_ecs::prelude::*;
use bevy_ecs::reflect::{AppTypeRegistry, ReflectComponent};
use bevy_ecs::system::RunSystemOnce;
use bevy_reflect::{PartialReflect, ReflectRef};
use tickflow_bevy::prelude::*;
use tickflow_bevy::{TickflowStopwatch, TimerRead};

mod app;

use app::*;

#[test]
fn an_inspector_reads_the_stopwatch_and_the_read_out() {
    let mut app = app();
    let lap = app
        .world_mut()
        .spawn(TickflowStopwatch::running(Domain::Game))
        .id();
    let timer = (app.world_mut())
        .run_system_once(|mut commands: Commands| commands.tickflow().after(secs(1.0)).fire().id())
        .unwrap();
    run(&mut app, 3);

    let registry = app.world().resource::<AppTypeRegistry>().read();
    // The stopwatch, as an inspector finds it on its entity: by the registry, not by type.
    let reflect = registry
        .get_type_data::<ReflectComponent>(std::any::TypeId::of::<TickflowStopwatch>())
        .expect("TickflowStopwatch is registered as a component");
    let entity = app.world().entity(lap);
    let shown = reflect.reflect(entity).expect("the entity has one");
    let ReflectRef::Struct(fields) = shown.reflect_ref() else {
        panic!("a struct: {shown:?}");
    };
    let domain = fields.field("domain").unwrap().try_downcast_ref::<Domain>();
    assert_eq!(domain, Some(&Domain::Game));
    assert_eq!(
        fields.field("running").unwrap().try_downcast_ref(),
        Some(&true)
    );
    assert_eq!(
        fields.field("elapsed").unwrap().try_downcast_ref::<u64>(),
        Some(&secs(0.3).flicks())
    );
    // tickflow's own types are registered, and show as they print.
    for name in [
        "tickflow::time::span::Span",
        "tickflow::time::frames::Frames",
    ] {
        assert!(registry.get_with_type_path(name).is_some(), "{name}");
    }
    drop(registry);

    // The read-out of a timer, whole.
    let read: TimerRead = tickflow_bevy::read_timer(app.world(), timer).unwrap();
    let ReflectRef::Struct(fields) = read.reflect_ref() else {
        panic!("a struct");
    };
    let remaining = fields.field("remaining").unwrap();
    assert_eq!(remaining.try_downcast_ref(), Some(&Amount::Time(secs(0.7))));
    assert_eq!(format!("{remaining:?}"), "Time(0.7s)");
    assert_eq!(
        fields.field("fraction").unwrap().try_downcast_ref(),
        Some(&0.3)
    );
    let _: &dyn PartialReflect = &read;
}
