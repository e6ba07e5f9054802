//! The plugin in a real headless Bevy `App` (TimePlugin only: no window, no renderer):
//! which frames run, with which deltas, under pause, relative speed and the update
//! strategies, and that everything tickflow runs (timers, tick functions, latent actions,
//! tasks) fires on exact frames.

use std::time::Duration;

use bevy_app::{App, FixedUpdate, Update};
use bevy_ecs::prelude::*;
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy, Virtual};
use tickflow_bevy::prelude::*;

/// What the callbacks saw, in order.
#[derive(Resource, Default, Debug)]
struct Log(Vec<String>);

fn log(world: &mut World, line: String) {
    world.resource_mut::<Log>().0.push(line);
}

/// A headless app with the plugin at `hz`, `steps` fixed steps per update.
fn app(hz: u32, steps: u32) -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, TickflowPlugin::fixed(hz)))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(steps))
        .init_resource::<Log>();
    app.update(); // Bevy's clocks start: no time passes in the first update
    app
}

fn sched(app: &mut App) -> Mut<'_, Tickflow> {
    app.world_mut().resource_mut::<Tickflow>()
}

fn frame(app: &mut App) -> u64 {
    sched(app).scheduler().clocks().frame()
}

/// The game time the scheduler has reached.
fn game_time(app: &mut App) -> Span {
    sched(app)
        .scheduler()
        .clocks()
        .now(Domain::Game)
        .since_start()
}

/// Pauses or resumes Bevy's virtual clock.
fn set_paused(app: &mut App, on: bool) {
    let mut virt = app.world_mut().resource_mut::<Time<Virtual>>();
    if on {
        virt.pause();
    } else {
        virt.unpause();
    }
}

#[test]
fn one_frame_per_fixed_step_of_exactly_one_period() {
    // 60 Hz: Bevy's step is 16,666,667 ns; tickflow's is exactly 1/60 s.
    let mut app = app(60, 3);
    app.world_mut()
        .resource_mut::<Tickflow>()
        .scheduler()
        .ticks()
        .add(TickSettings::named("step"), |world, cx| {
            let line = format!("frame {} dt {:?}", cx.clocks().frame(), cx.dt());
            log(world, line);
        });
    app.update();
    app.update();
    assert_eq!(frame(&mut app), 6);
    let lines = &app.world().resource::<Log>().0;
    assert_eq!(lines.len(), 6);
    let exact = Span::frames(1, 60);
    assert!(lines.iter().all(|l| l.ends_with(&format!("dt {exact:?}"))));
    // A minute of steps is exactly a minute of game time.
    for _ in 0..1198 {
        app.update();
    }
    assert_eq!(game_time(&mut app), secs(60.0));
}

#[test]
fn timers_latent_actions_and_tasks_fire_on_exact_frames() {
    /// The frame, for the latent completion (which gets only the world).
    #[derive(Resource, Default)]
    struct Frame(u64);
    let mut app = app(10, 1); // 100 ms steps
    app.init_resource::<Frame>();
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    let sched = tf.scheduler();
    sched
        .ticks()
        .add(TickSettings::named("frame"), |world, cx| {
            world.resource_mut::<Frame>().0 = cx.clocks().frame();
        });
    sched
        .timers()
        .every(millis(300))
        .call(|world, cx| log(world, format!("timer {}", cx.clocks().frame())));
    sched
        .latent()
        .delay(OwnerId::new(1), 1, millis(500), |world: &mut World, _| {
            let frame = world.resource::<Frame>().0;
            log(world, format!("latent {frame}"))
        });
    sched.tasks().spawn(None, |cx: TaskCx<World>| async move {
        cx.delay(Frames(4)).await;
        let frame = cx.clocks().frame();
        cx.with(|world| log(world, format!("task 4 frames {frame}")));
        cx.delay(millis(200)).await;
        let frame = cx.clocks().frame();
        cx.with(|world| log(world, format!("task +200 ms {frame}")));
    });
    for _ in 0..7 {
        app.update();
    }
    assert_eq!(
        app.world().resource::<Log>().0,
        [
            "timer 3",
            "latent 5",
            "task 4 frames 5", // spawned before frame 1, polled first there
            "timer 6",
            "task +200 ms 7"
        ]
    );
}

#[test]
fn pause_stops_the_game_clock_and_real_time_goes_on() {
    let mut app = app(10, 1);
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    tf.scheduler()
        .timers()
        .every(millis(100))
        .call(|world, _| log(world, "game".into()));
    tf.scheduler()
        .timers()
        .every(millis(100))
        .real()
        .call(|world, _| log(world, "real".into()));
    tf.scheduler()
        .ticks()
        .add(TickSettings::named("menu").when_paused(), |world, cx| {
            if cx.clocks().delta(Domain::Game).is_zero() {
                log(world, "menu (paused)".into());
            }
        });
    app.update();
    assert_eq!(app.world().resource::<Log>().0, ["game", "real"]);
    app.world_mut().resource_mut::<Log>().0.clear();

    set_paused(&mut app, true);
    app.update();
    app.update();
    let report = sched(&mut app).last_report().unwrap().clone();
    assert!(report.paused && report.game_dt.is_zero());
    assert_eq!(report.real_dt, millis(100));
    assert_eq!(
        app.world().resource::<Log>().0,
        ["menu (paused)", "real", "menu (paused)", "real"]
    );
    assert_eq!(game_time(&mut app), millis(100));
    app.world_mut().resource_mut::<Log>().0.clear();

    set_paused(&mut app, false);
    app.update();
    assert_eq!(app.world().resource::<Log>().0, ["game", "real"]);
}

/// Issue 29, defect 14: frame timers count fixed steps, not the paused frames that keep a
/// pause menu going.
#[test]
fn frame_timers_wait_through_a_pause() {
    let mut app = app(10, 1);
    let mut tf = app.world_mut().resource_mut::<Tickflow>();
    tf.scheduler()
        .timers()
        .after(Frames(3))
        .call(|world, _| log(world, "frames".into()));
    tf.scheduler()
        .timers()
        .after(millis(250))
        .real()
        .call(|world, _| log(world, "real".into()));
    app.update(); // step 1
    set_paused(&mut app, true);
    for _ in 0..10 {
        app.update(); // ten paused frames: real time runs, the step count does not
    }
    assert_eq!(app.world().resource::<Log>().0, ["real"]);
    assert_eq!(frame(&mut app), 11, "paused frames are frames");
    let clocks = sched(&mut app).scheduler().clocks();
    assert_eq!(clocks.now(Domain::Frames).flicks(), 1, "but not steps");
    set_paused(&mut app, false);
    app.update(); // step 2
    assert_eq!(app.world().resource::<Log>().0, ["real"]);
    app.update(); // step 3
    assert_eq!(app.world().resource::<Log>().0, ["real", "frames"]);
}

/// The same for a `commands.tickflow()` timer.
#[test]
fn entity_frame_timers_wait_through_a_pause() {
    let mut app = app(10, 1);
    app.world_mut()
        .commands()
        .tickflow()
        .after(Frames(2))
        .call(|world| log(world, "fired".into()));
    app.world_mut().flush();
    app.update(); // step 1: the queued timer is set before the step, which counts
    set_paused(&mut app, true);
    for _ in 0..5 {
        app.update();
    }
    assert!(app.world().resource::<Log>().0.is_empty());
    set_paused(&mut app, false);
    let mut steps = 0;
    while app.world().resource::<Log>().0.is_empty() {
        app.update();
        steps += 1;
        assert!(steps <= 3, "the timer never fired");
    }
    assert_eq!(
        steps, 1,
        "fires on its second step, the first after the pause"
    );
}

#[test]
fn relative_speed_is_the_game_clock_speed() {
    let mut app = App::new();
    app.add_plugins((TimePlugin, TickflowPlugin::fixed(100)))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            50,
        )))
        .init_resource::<Log>();
    app.world_mut()
        .resource_mut::<Time<Virtual>>()
        .set_relative_speed(2.0);
    for _ in 0..11 {
        app.update(); // 10 updates of 50 ms after the first
    }
    let mut tf = sched(&mut app);
    let sched = tf.scheduler();
    assert_eq!(
        sched.clocks().frame(),
        100,
        "1 s of game time in 0.5 s of real time"
    );
    assert_eq!(sched.clocks().now(Domain::Game).since_start(), secs(1.0));
    assert_eq!(sched.clocks().now(Domain::Real).since_start(), millis(500));
}

#[test]
fn fixed_timesteps_are_deterministic() {
    fn run() -> (Vec<String>, u64) {
        let mut app = app(30, 2);
        let mut tf = app.world_mut().resource_mut::<Tickflow>();
        tf.scheduler().timers().every(millis(70)).call(|world, cx| {
            log(
                world,
                format!("{} {}", cx.clocks().frame(), cx.lateness().flicks()),
            )
        });
        tf.scheduler()
            .timers()
            .every(millis(45))
            .real()
            .call(|world, cx| log(world, format!("real {}", cx.clocks().frame())));
        for _ in 0..30 {
            app.update();
        }
        let hash = tickflow_bevy::state_hash(app.world_mut());
        (app.world_mut().remove_resource::<Log>().unwrap().0, hash)
    }
    let first = run();
    assert!(first.0.len() > 20);
    assert_eq!(first, run());
}

#[test]
fn a_changed_bevy_step_is_followed() {
    let mut app = app(64, 1);
    app.world_mut()
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_millis(10)));
    app.update();
    let report = sched(&mut app).last_report().unwrap().clone();
    assert_eq!(report.game_dt, millis(10));
}

#[test]
fn variable_mode_runs_one_frame_per_update_of_virtual_time() {
    let mut app = App::new();
    app.add_plugins((TimePlugin, TickflowPlugin::variable()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            7_000_001,
        )))
        .init_resource::<Log>();
    for _ in 0..1000 {
        app.update();
    }
    // 999 updates of 7,000,001 ns after the first: the nanoseconds are carried, never
    // rounded away.
    let now = game_time(&mut app);
    assert_eq!(now.flicks(), 999 * 7_000_001 * 441 / 625);
    assert_eq!(frame(&mut app), 1000);
    set_paused(&mut app, true);
    app.update();
    assert!(sched(&mut app).last_report().unwrap().paused);
}

#[test]
fn systems_order_around_the_frame() {
    #[derive(Resource, Default)]
    struct Seen(Vec<u64>);
    let mut app = app(10, 1);
    app.init_resource::<Seen>().add_systems(
        FixedUpdate,
        (|tf: Res<Tickflow>, mut seen: ResMut<Seen>| {
            seen.0.push(tf.last_report().map_or(0, |r| r.frame));
        })
        .after(TickflowSystems::Frame),
    );
    app.add_systems(Update, |mut commands: Commands| {
        commands.tickflow().after(Frames(1)).call(|_| {});
    });
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(app.world().resource::<Seen>().0, [1, 2, 3]);
}

/// A callback that reaches for the scheduler through the resource is told why it cannot.
#[test]
#[should_panic(expected = "the scheduler is running a frame")]
fn the_scheduler_is_busy_inside_its_frame() {
    let mut app = app(10, 1);
    sched(&mut app)
        .scheduler()
        .timers()
        .after(Frames(1))
        .call(|world, _| {
            world.resource_mut::<Tickflow>().scheduler();
        });
    app.update();
}

/// Stopwatches as components read without clocks: the game one stands still through a pause
/// and through a stop, the real one runs on through the pause, and each equals its clock's
/// reading over the time it ran.
#[test]
fn stopwatches_follow_their_clocks() {
    use tickflow_bevy::TickflowStopwatch;
    let mut app = app(10, 1);
    let game = app
        .world_mut()
        .spawn(TickflowStopwatch::running(Domain::Game))
        .id();
    let real = app
        .world_mut()
        .spawn(TickflowStopwatch::running(Domain::Real))
        .id();
    let start_real = sched(&mut app).scheduler().clocks().now(Domain::Real);
    let read = |app: &App, e: Entity| app.world().get::<TickflowStopwatch>(e).unwrap().elapsed();
    for _ in 0..5 {
        app.update();
    }
    set_paused(&mut app, true);
    for _ in 0..3 {
        app.update();
    }
    set_paused(&mut app, false);
    app.world_mut()
        .get_mut::<TickflowStopwatch>(game)
        .unwrap()
        .stop();
    for _ in 0..2 {
        app.update();
    }
    app.world_mut()
        .get_mut::<TickflowStopwatch>(game)
        .unwrap()
        .start();
    app.update();
    assert_eq!(read(&app, game), Amount::Time(secs(0.6)), "5 + 1 steps ran");
    let now_real = sched(&mut app).scheduler().clocks().now(Domain::Real);
    assert_eq!(read(&app, real), Amount::Time(now_real - start_real));
    assert!(
        read(&app, real).time().unwrap() > secs(0.6),
        "the pause counted"
    );
}

/// `commands.tickflow().at(time)`: the boss at 1.0 s of game time comes in the frame that
/// reaches it, whenever it was set; queued, it reads as that time less the clock's; a time
/// already past fires in the next frame.
#[test]
fn an_entity_timer_at_a_game_time() {
    use bevy_ecs::system::RunSystemOnce;
    let mut app = app(10, 1);
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(game_time(&mut app), secs(0.3));
    let (boss, late) = app
        .world_mut()
        .run_system_once(|mut commands: Commands| {
            let at = |what: &'static str| {
                move |w: &mut World| {
                    let frame = w.resource::<TickflowCommands>().clocks().frame();
                    log(w, format!("{what} at frame {frame}"));
                }
            };
            let boss = (commands.tickflow().at(tickflow::Time::from_secs(1.0)))
                .call(at("boss"))
                .id();
            let late = (commands.tickflow().at(tickflow::Time::from_secs(0.1)))
                .call(at("late"))
                .id();
            (boss, late)
        })
        .unwrap();
    let queued = tickflow_bevy::read_timer(app.world(), boss).unwrap();
    assert_eq!(queued.remaining, Amount::Time(secs(0.7)));
    assert_eq!(
        tickflow_bevy::read_timer(app.world(), late)
            .unwrap()
            .remaining,
        Amount::Time(Span::ZERO)
    );
    tickflow_bevy::flush(app.world_mut());
    assert_eq!(tickflow_bevy::read_timer(app.world(), boss), Some(queued));
    for _ in 0..8 {
        app.update();
    }
    let lines = app.world().resource::<Log>().0.clone();
    assert_eq!(lines, ["late at frame 4", "boss at frame 10"]);
}
