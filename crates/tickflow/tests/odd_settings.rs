//! Settings at the edges of their range, as a bad config file gives them: each is refused
//! with a clear error, taken within a documented limit, or works; none hangs, panics inside
//! the library or silently breaks a service.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tickflow::driver::{FixedStep, Pacer};
use tickflow::prelude::*;
use tickflow::realtime::{RealtimeTimers, MAX_BATCH_WINDOW};
use tickflow::snapshot::Registry;

#[test]
fn a_batch_window_of_duration_max_is_capped_and_the_thread_lives() {
    let timers = RealtimeTimers::start();
    timers.set_batch_window(Duration::MAX);
    timers.set_batch_window(Duration::from_micros(25));
    let (tx, rx) = std::sync::mpsc::channel();
    timers.after(Duration::from_millis(5)).call(move || {
        let _ = tx.send(());
    });
    // Under Duration::MAX the thread died; with the cap it waits at most 1 s past a due time.
    // Wide bounds: this is not a speed test.
    assert!(rx.recv_timeout(Duration::from_secs(20)).is_ok());
    assert_eq!(MAX_BATCH_WINDOW, Duration::from_secs(1));
}

#[test]
fn a_timer_set_after_shutdown_is_not_active_and_never_runs() {
    let timers = RealtimeTimers::start();
    let remote = timers.remote();
    let before = remote.after(Duration::from_secs(3600)).call(|| {});
    assert!(before.is_active());
    timers.shutdown();
    assert!(
        !before.is_active(),
        "a stopped service has no active timers"
    );
    let runs = Arc::new(AtomicU32::new(0));
    let r = runs.clone();
    let late = remote.after(Duration::ZERO).call(move || {
        r.fetch_add(1, Ordering::Relaxed);
    });
    assert!(!late.is_active());
    assert!(!late.cancel(), "nothing to cancel");
    assert_eq!(runs.load(Ordering::Relaxed), 0);
}

#[test]
fn a_pacer_far_past_the_end_of_time_returns() {
    let t0 = Instant::now();
    for hz in [1, 60, 1_000_000] {
        let mut pacer = Pacer::new(hz).starting_at(t0);
        // Beyond Span::MAX (about 829 years) past the start: the steps a Span can hold are
        // due, none after them, and the call returns.
        let far = t0 + Duration::from_secs(900 * 365 * 24 * 3600);
        let steps = pacer.due(far);
        assert!(steps >= 1, "{hz} Hz");
        assert_eq!(pacer.due(far), 0, "{hz} Hz: nothing after the last step");
    }
}

/// A step that falls exactly on `now` is due, at rates whose period is not a whole number
/// of nanoseconds (7 Hz: 142,857,142.857 ns), from the first step to far along the grid.
#[test]
fn a_pacer_step_due_exactly_now_is_run() {
    let t0 = Instant::now();
    for hz in [7, 60, 144] {
        let mut pacer = Pacer::new(hz).starting_at(t0);
        for k in 1..=5_000u64 {
            let deadline = pacer.next_deadline();
            assert_eq!(
                pacer.due(deadline - Duration::from_nanos(1)),
                0,
                "{hz} Hz, step {k}"
            );
            assert_eq!(pacer.due(deadline), 1, "{hz} Hz, step {k}");
        }
        let mut jump = Pacer::new(hz).starting_at(t0).catch_up_cap(u64::MAX);
        let at = t0 + Duration::from(Span::frames(1_000_003, hz));
        assert_eq!(jump.due(at), 1_000_003);
    }
}

#[test]
fn rates_that_round_to_no_time_are_refused() {
    for hz in [u32::MAX, 1_411_200_001] {
        let err = Span::try_frames(1, hz).unwrap_err();
        assert!(err.is_rate_too_high() && !err.is_zero_rate(), "{err}");
        assert!(FixedStep::try_new(hz).unwrap_err().is_rate_too_high());
        assert!(Pacer::try_new(hz).unwrap_err().is_rate_too_high());
        let msg = catch_unwind(|| FixedStep::new(hz)).unwrap_err();
        let msg = msg.downcast_ref::<String>().unwrap();
        assert!(msg.starts_with(&format!("FixedStep::new({hz})")), "{msg}");
    }
    // The fastest rate whose frame is one flick, and a real one.
    assert_eq!(
        Span::try_frames(1, 1_411_200_000).unwrap(),
        Span::from_flicks(1)
    );
    assert_eq!(
        Span::try_frames(1, 705_600_000).unwrap(),
        Span::from_flicks(1)
    );
    assert!(FixedStep::try_new(1_000_000).is_ok());
}

#[test]
fn a_max_delta_of_zero_is_refused() {
    let mut sched = Scheduler::<()>::new();
    let err = catch_unwind(AssertUnwindSafe(|| sched.set_max_delta(Span::ZERO))).unwrap_err();
    assert!(err
        .downcast_ref::<&str>()
        .unwrap()
        .contains("set_max_delta"));
    assert_eq!(sched.max_delta(), secs(0.25), "unchanged");
    sched.tick(secs(0.1), &mut ());
    assert_eq!(
        sched.clocks().now(Domain::Game).flicks(),
        secs(0.1).flicks()
    );
}

#[test]
fn commands_of_a_scheduler_kept_alive_after_a_restore_still_feed_it() {
    let mut old = Scheduler::<u32>::new();
    let cmds = old.commands();
    let (mut restored, _) = Scheduler::restore(&old.snapshot(), &mut Registry::new()).unwrap();
    cmds.ticks()
        .add(TickSettings::named("late"), |n: &mut u32, _| *n += 1);
    assert!(cmds.is_connected(), "the old scheduler is alive");
    let (mut a, mut b) = (0, 0);
    old.tick(secs(0.1), &mut a);
    restored.tick(secs(0.1), &mut b);
    assert_eq!((a, b), (1, 0), "the command went to the old scheduler");
    drop(old);
    assert!(!cmds.is_connected());
    restored
        .commands()
        .ticks()
        .add(TickSettings::named("new"), |n: &mut u32, _| *n += 1);
    restored.tick(secs(0.1), &mut b);
    assert_eq!(b, 1);
}
