//! The real-time service's rules, driven by a manual clock: no sleeping, exact times.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use tickflow::realtime::{
    scheduled, Clock, Dispatch, Dispatcher, ManualClock, RealtimeTimers, TimerPanic,
};
use tickflow::CatchUp;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// (label, due offset in ms) of every call.
type Log = Arc<Mutex<Vec<(String, u64)>>>;

/// A service, its clock, its start time and a log.
fn setup() -> (RealtimeTimers, ManualClock, Instant, Log) {
    let clock = ManualClock::new();
    let t0 = clock.now();
    (
        RealtimeTimers::manual(clock.clone()),
        clock,
        t0,
        Arc::default(),
    )
}

fn logger(log: &Log, t0: Instant, label: &str) -> impl FnMut() + Send + 'static {
    let (log, label) = (log.clone(), label.to_string());
    move || {
        let due = scheduled().expect("inside a call") - t0;
        log.lock()
            .unwrap()
            .push((label.clone(), due.as_millis() as u64));
    }
}

fn taken(log: &Log) -> Vec<(String, u64)> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn l(label: &str, due: u64) -> (String, u64) {
    (label.to_string(), due)
}

#[test]
fn one_shot_is_inclusive_and_fires_once() {
    let (timers, clock, t0, log) = setup();
    let h = timers.after(ms(100)).call(logger(&log, t0, "a"));
    clock.advance(ms(99));
    assert_eq!(timers.tick(), 0);
    assert!(h.is_active());
    clock.advance(ms(1));
    assert_eq!(timers.tick(), 1);
    clock.advance(ms(1000));
    assert_eq!(timers.tick(), 0);
    assert_eq!(taken(&log), [l("a", 100)]);
    assert!(!h.is_active() && !h.cancel());
}

/// Repeats stay on `start + first_delay + k × period` however late the ticks are.
#[test]
fn repeats_do_not_drift() {
    let (timers, clock, t0, log) = setup();
    timers
        .every(ms(100))
        .first_delay(ms(30))
        .call(logger(&log, t0, "r"));
    for step in [37, 91, 45, 150, 13, 64] {
        clock.advance(ms(step));
        timers.tick();
    }
    // 400 ms in all: due at 30, 130, 230, 330 (Burst makes each).
    let dues: Vec<u64> = taken(&log).into_iter().map(|(_, d)| d).collect();
    assert_eq!(dues, [30, 130, 230, 330]);
}

#[test]
fn times_limits_calls_and_after_times_repeats() {
    let (timers, clock, t0, log) = setup();
    let a = timers
        .every(ms(10))
        .times(3)
        .call(logger(&log, t0, "every"));
    let b = timers
        .after(ms(25))
        .times(2)
        .call(logger(&log, t0, "after"));
    let c = timers.after(ms(5)).times(0).call(logger(&log, t0, "never"));
    assert!(!c.is_active());
    clock.advance(ms(100));
    assert_eq!(timers.tick(), 5);
    assert_eq!(
        taken(&log),
        [
            l("every", 10),
            l("every", 20),
            l("after", 25),
            l("every", 30),
            l("after", 50)
        ]
    );
    assert!(!a.is_active() && !b.is_active());
}

#[test]
fn catch_up_policies_after_a_stall() {
    let (timers, clock, t0, log) = setup();
    timers.every(ms(100)).call(logger(&log, t0, "burst"));
    timers
        .every(ms(100))
        .catch_up(CatchUp::Once)
        .call(logger(&log, t0, "once"));
    timers
        .every(ms(100))
        .catch_up(CatchUp::Delay)
        .call(logger(&log, t0, "delay"));
    clock.advance(ms(350));
    timers.tick();
    let first: Vec<_> = taken(&log);
    assert_eq!(
        first,
        [
            l("burst", 100),
            l("once", 100),
            l("delay", 100),
            l("burst", 200),
            l("burst", 300)
        ]
    );
    clock.advance(ms(100)); // 450
    timers.tick();
    // Once: back on the grid (400). Delay: a new grid from the late call (350 + 100).
    assert_eq!(
        taken(&log),
        [l("burst", 400), l("once", 400), l("delay", 450)]
    );
}

#[test]
fn cancel_is_final_and_runs_its_hook() {
    let (timers, clock, t0, log) = setup();
    let hooked = Arc::new(AtomicU32::new(0));
    let hk = hooked.clone();
    let h = timers
        .every(ms(10))
        .on_cancel(move || {
            hk.fetch_add(1, Ordering::Relaxed);
        })
        .call(logger(&log, t0, "x"));
    clock.advance(ms(25));
    timers.tick();
    let other = h.clone();
    assert!(other.cancel());
    assert_eq!(
        hooked.load(Ordering::Relaxed),
        1,
        "the hook ran inside cancel"
    );
    assert!(!h.cancel(), "already cancelled");
    assert!(!h.is_active());
    clock.advance(ms(100));
    assert_eq!(timers.tick(), 0);
    assert_eq!(taken(&log).len(), 2);
    assert_eq!(hooked.load(Ordering::Relaxed), 1);
}

/// A timer cancelled while it was behind makes no call and counts no dropped calls, however
/// far behind; the timers beside it go on by their rules.
#[test]
fn a_cancelled_timer_behind_its_grid_drops_nothing() {
    let (timers, clock, t0, log) = setup();
    timers.set_catch_up_cap(2);
    let gone = timers.every(ms(10)).call(logger(&log, t0, "gone"));
    timers.every(ms(10)).call(logger(&log, t0, "kept"));
    assert!(gone.cancel());
    clock.advance(ms(100));
    assert_eq!(timers.tick(), 2);
    assert_eq!(taken(&log), [l("kept", 10), l("kept", 20)]);
    assert_eq!(timers.calls_dropped(), 8, "the kept timer's 30..=100 only");
    clock.advance(ms(100));
    timers.tick();
    assert!(taken(&log).iter().all(|(label, _)| label == "kept"));
}

#[test]
fn queued_calls_run_at_pump_in_due_order_and_skip_cancelled_timers() {
    let (timers, clock, t0, log) = setup();
    let main = Dispatcher::new();
    timers
        .every(ms(30))
        .dispatch(Dispatch::Queue(main.clone()))
        .call(logger(&log, t0, "a"));
    let b = timers
        .after(ms(50))
        .dispatch(Dispatch::Queue(main.clone()))
        .call(logger(&log, t0, "b"));
    let c = timers
        .after(ms(40))
        .dispatch(Dispatch::Queue(main.clone()))
        .call(logger(&log, t0, "c"));
    clock.advance(ms(100));
    assert_eq!(timers.tick(), 5);
    assert_eq!(main.len(), 5);
    assert!(taken(&log).is_empty(), "nothing runs before pump");
    assert!(c.cancel(), "cancelled while queued");
    assert_eq!(main.pump(), 4);
    assert_eq!(
        taken(&log),
        [l("a", 30), l("b", 50), l("a", 60), l("a", 90)]
    );
    assert!(!b.is_active());
    assert_eq!(main.pump(), 0);
}

#[test]
#[cfg(feature = "rayon")]
fn pool_calls_run_on_worker_threads() {
    let (timers, clock, _, _) = setup();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    timers.after(ms(5)).dispatch(Dispatch::Pool).call(move || {
        let name = std::thread::current().name().map(String::from);
        tx.lock()
            .unwrap()
            .send((std::thread::current().id(), name))
            .unwrap();
    });
    clock.advance(ms(5));
    assert_eq!(timers.tick(), 1);
    let (id, _) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the pool ran it");
    assert_ne!(id, std::thread::current().id());
}

#[test]
fn callbacks_can_schedule_and_cancel_timers() {
    let (timers, clock, t0, log) = setup();
    let remote = timers.remote();
    let victim = timers.after(ms(50)).call(logger(&log, t0, "victim"));
    let inner_log = log.clone();
    timers.after(ms(10)).call(move || {
        assert!(victim.cancel());
        remote.after(ms(5)).call(logger(&inner_log, t0, "child"));
    });
    clock.advance(ms(10));
    timers.tick();
    clock.advance(ms(100));
    timers.tick();
    // The child counts from the moment it was set (10 ms), not from its parent's due time.
    assert_eq!(taken(&log), [l("child", 15)]);
}

#[test]
fn a_panicking_callback_is_reported_and_the_service_goes_on() {
    let (timers, clock, t0, log) = setup();
    let reports: Arc<Mutex<Vec<TimerPanic>>> = Arc::default();
    let r = reports.clone();
    timers.on_panic(move |p| r.lock().unwrap().push(p.clone()));
    let mut n = 0;
    let bad = timers.every(ms(10)).call(move || {
        n += 1;
        if n == 1 {
            panic!("boom {n}");
        }
    });
    timers.every(ms(10)).call(logger(&log, t0, "good"));
    clock.advance(ms(30));
    assert_eq!(timers.tick(), 6);
    assert_eq!(reports.lock().unwrap()[0].message, "boom 1");
    assert_eq!(reports.lock().unwrap().len(), 1);
    assert!(bad.is_active(), "a panic does not cancel the timer");
    assert_eq!(taken(&log).len(), 3);
}

#[test]
fn delays_too_large_to_represent_never_fire() {
    let (timers, clock, t0, log) = setup();
    let h = timers.after(Duration::MAX).call(logger(&log, t0, "never"));
    let e = timers
        .every(Duration::MAX)
        .call(logger(&log, t0, "never either"));
    let f = timers
        .every(ms(10))
        .first_delay(Duration::MAX)
        .call(logger(&log, t0, "nor this"));
    clock.advance(Duration::from_secs(1_000_000));
    assert_eq!(timers.tick(), 0);
    assert!(h.is_active() && e.is_active() && f.is_active());
    assert!(h.cancel());
}

#[test]
fn after_shutdown_queued_calls_are_skipped() {
    let (timers, clock, t0, log) = setup();
    let main = Dispatcher::new();
    timers
        .after(ms(1))
        .dispatch(Dispatch::Queue(main.clone()))
        .call(logger(&log, t0, "late"));
    clock.advance(ms(1));
    timers.tick();
    timers.shutdown();
    assert_eq!(main.pump(), 0);
    assert!(taken(&log).is_empty());
}

/// Shutting down one service from another's callback is fine: only a service's own callbacks
/// cannot wait for it.
#[test]
fn shutdown_from_callbacks() {
    let (a, clock, _, _) = setup();
    let b = Arc::new(Mutex::new(Some(RealtimeTimers::manual(clock.clone()))));
    let b_calls = Arc::new(AtomicU32::new(0));
    let c = b_calls.clone();
    b.lock()
        .unwrap()
        .as_ref()
        .unwrap()
        .every(ms(10))
        .call(move || {
            c.fetch_add(1, Ordering::SeqCst);
        });
    let bb = b.clone();
    a.after(ms(5))
        .call(move || bb.lock().unwrap().take().unwrap().shutdown());
    clock.advance(ms(5));
    assert_eq!(a.tick(), 1);
    assert!(b.lock().unwrap().is_none());
}
