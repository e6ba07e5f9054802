//! The frame clock: pause, time dilation and `max_delta`.

use std::sync::{Arc, Mutex};

use tickflow::prelude::*;
use tickflow::{Tickable, TickableCx, MAX_TIME_DILATION};

type Log = Arc<Mutex<Vec<String>>>;

struct Ui(Log, bool);
impl Tickable<()> for Ui {
    fn tick(&mut self, _: &mut (), cx: &mut TickableCx<'_, ()>) {
        let dt = cx.dt();
        self.0
            .lock()
            .unwrap()
            .push(format!("ui {}", dt.as_secs_f64()));
    }
    fn tick_when_paused(&self) -> bool {
        self.1
    }
}

fn setup() -> (Scheduler<()>, Log) {
    let log: Log = Arc::default();
    let mut sched = Scheduler::new();
    let l = log.clone();
    sched
        .ticks()
        .add(TickSettings::named("game"), move |_, cx| {
            l.lock()
                .unwrap()
                .push(format!("game {}", cx.dt().as_secs_f64()));
        });
    let l = log.clone();
    sched.ticks().add(
        TickSettings {
            tick_when_paused: true,
            ..TickSettings::named("menu")
        },
        move |_, cx| {
            l.lock()
                .unwrap()
                .push(format!("menu {}", cx.dt().as_secs_f64()))
        },
    );
    let l = log.clone();
    sched
        .timers()
        .every(secs(0.1))
        .call(move |_, _| l.lock().unwrap().push("game timer".into()));
    let l = log.clone();
    sched
        .timers()
        .every(secs(0.1))
        .real()
        .call(move |_, _| l.lock().unwrap().push("real timer".into()));
    sched.tickables().add(Ui(log.clone(), false));
    sched.tickables().add(Ui(log.clone(), true));
    (sched, log)
}

#[test]
fn paused_frames_run_only_what_ticks_when_paused() {
    let (mut sched, log) = setup();
    sched.tick(secs(0.1), &mut ());
    assert_eq!(
        *log.lock().unwrap(),
        [
            "game 0.1",
            "menu 0.1",
            "game timer",
            "real timer",
            "ui 0.1",
            "ui 0.1"
        ]
    );
    log.lock().unwrap().clear();
    sched.set_paused(true);
    let report = sched.tick(secs(0.1), &mut ());
    assert!(report.paused);
    assert_eq!(report.game_dt, Span::ZERO);
    assert_eq!(*log.lock().unwrap(), ["menu 0.1", "real timer", "ui 0.1"]);
    assert_eq!(
        sched.clocks().now(Domain::Game),
        Time::ZERO + secs(0.1),
        "the game clock froze"
    );
    assert_eq!(sched.clocks().now(Domain::Real), Time::ZERO + secs(0.2));
    log.lock().unwrap().clear();
    sched.set_paused(false);
    sched.tick(secs(0.1), &mut ());
    assert_eq!(log.lock().unwrap().len(), 6, "{:?}", log.lock().unwrap());
}

/// `tick_split`: the host's game and real deltas, each clock advanced by its own; the
/// scheduler's pause still stops the game clock, its dilation is not applied again.
#[test]
fn split_frames_advance_each_clock_by_its_own_delta() {
    let (mut sched, log) = setup();
    sched.set_time_dilation(3.0);
    let report = sched.tick_split(secs(0.1), secs(0.05), &mut ());
    assert_eq!((report.game_dt, report.real_dt), (secs(0.1), secs(0.05)));
    assert_eq!(
        *log.lock().unwrap(),
        ["game 0.1", "menu 0.1", "game timer", "ui 0.1", "ui 0.1"],
        "the real timer waits for 0.1 s of real time"
    );
    log.lock().unwrap().clear();
    sched.set_paused(true);
    let report = sched.tick_split(secs(0.1), secs(0.05), &mut ());
    assert_eq!(report.game_dt, Span::ZERO);
    assert_eq!(*log.lock().unwrap(), ["menu 0.05", "real timer", "ui 0.05"]);
    assert_eq!(sched.clocks().now(Domain::Game), Time::ZERO + secs(0.1));
    assert_eq!(sched.clocks().now(Domain::Real), Time::ZERO + secs(0.1));
    sched.set_paused(false);
    let report = sched.tick_split(secs(1.0), secs(1.0), &mut ());
    assert_eq!((report.game_dt, report.discarded), (secs(0.25), secs(0.75)));
    assert_eq!(sched.clocks().frame(), 3);
}

#[test]
fn time_dilation_scales_the_game_clock_and_each_function() {
    let mut sched = Scheduler::<Vec<f64>>::new();
    sched.ticks().add(TickSettings::named("normal"), |v, cx| {
        v.push(cx.dt().as_secs_f64())
    });
    sched.ticks().add(
        TickSettings {
            time_dilation: 2.0,
            ..TickSettings::named("fast")
        },
        |v, cx| v.push(cx.dt().as_secs_f64()),
    );
    sched.set_time_dilation(0.5);
    let mut v = Vec::new();
    let report = sched.tick(secs(0.2), &mut v);
    assert_eq!(report.game_dt, secs(0.1));
    assert_eq!(report.real_dt, secs(0.2));
    assert_eq!(v, [0.1, 0.2]);
    assert_eq!(sched.clocks().now(Domain::Game), Time::ZERO + secs(0.1));
}

#[test]
fn max_delta_clamps_the_game_clock_only() {
    let mut sched = Scheduler::<()>::new();
    let report = sched.tick(secs(1.0), &mut ());
    assert_eq!(report.game_dt, secs(0.25));
    assert_eq!(report.discarded, secs(0.75));
    assert_eq!(report.real_dt, secs(1.0));
    sched.set_max_delta(secs(2.0));
    let report = sched.tick(secs(1.0), &mut ());
    assert_eq!((report.game_dt, report.discarded), (secs(1.0), Span::ZERO));
    assert_eq!(sched.clocks().now(Domain::Game), Time::ZERO + secs(1.25));
    assert_eq!(sched.clocks().now(Domain::Real), Time::ZERO + secs(2.0));
    assert_eq!(sched.clocks().frame(), 2);
}

#[test]
#[should_panic(
    expected = "time dilation must be finite, not negative and at most 1000000, got NaN"
)]
fn a_nan_dilation_is_refused() {
    Scheduler::<()>::new().set_time_dilation(f64::NAN);
}

/// Dilation is applied after the `max_delta` clamp, so `1e300` once made one frame cover
/// the rest of representable time, and a game-clock `every(1 s)` timer spun for minutes.
#[test]
#[should_panic(expected = "at most 1000000, got 1e300")]
fn a_dilation_past_the_maximum_is_refused() {
    Scheduler::<()>::new().set_time_dilation(1e300);
}

#[test]
fn the_maximum_dilation_is_accepted_and_bounded_by_the_catch_up_cap() {
    let mut sched = Scheduler::<u64>::new();
    sched.set_time_dilation(MAX_TIME_DILATION);
    sched.timers().every(secs(1.0)).call(|n, _| *n += 1);
    let mut n = 0;
    let report = sched.tick(secs(1.0), &mut n); // clamped to 0.25 s, dilated to 250,000 s
    assert_eq!(report.game_dt, secs(250_000.0));
    assert_eq!(n, tickflow::time::DEFAULT_CATCH_UP_CAP);
    assert_eq!(
        report.calls_dropped,
        250_000 - tickflow::time::DEFAULT_CATCH_UP_CAP
    );
    let bad = TickSettings {
        time_dilation: MAX_TIME_DILATION * 2.0,
        ..TickSettings::named("fast")
    };
    let err = sched.ticks().try_add(bad, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("from 0 to 1000000"), "{err}");
}

#[test]
fn timers_set_from_a_tick_are_pending_until_the_timer_stage() {
    // Set at frame 1 in PrePhysics with 0.1 s: counts from the time frame 1 reaches (0.1),
    // so it fires at frame 2 (t = 0.2), not at frame 1.
    let mut sched = Scheduler::<Vec<u64>>::new();
    sched.ticks().add(TickSettings::named("setter"), |_, cx| {
        if cx.clocks().frame() == 1 {
            let frame_of_set = cx.clocks().frame();
            cx.timers()
                .after(secs(0.1))
                .call(move |v: &mut Vec<u64>, t| {
                    v.push(frame_of_set * 100 + t.now().flicks() / secs(0.1).flicks())
                });
        }
    });
    let mut v = Vec::new();
    sched.tick(secs(0.1), &mut v);
    assert!(v.is_empty());
    sched.tick(secs(0.1), &mut v);
    assert_eq!(v, [102]);
}

#[test]
fn stage_timing_is_opt_in_and_can_be_turned_off_again() {
    let mut sched = Scheduler::<()>::new();
    sched.ticks().add(TickSettings::named("work"), |_, _| {
        std::hint::black_box((0..1000u64).sum::<u64>());
    });
    let report = sched.tick(secs(0.1), &mut ());
    assert_eq!(report.ticks_run, 1);
    assert_eq!(
        report.total_time(),
        std::time::Duration::ZERO,
        "off by default"
    );
    sched.set_stage_timing(true);
    assert!(sched.tick(secs(0.1), &mut ()).total_time() > std::time::Duration::ZERO);
    sched.set_stage_timing(false);
    let report = sched.tick(secs(0.1), &mut ());
    assert_eq!(report.ticks_run, 1);
    assert_eq!(
        report.stage_times,
        [std::time::Duration::ZERO; tickflow::Stage::COUNT]
    );
}
