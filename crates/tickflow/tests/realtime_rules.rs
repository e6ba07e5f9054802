//! The real-time service keeps the frame timers' rules for the same input: builder options in
//! any order, zero periods, `times(0)`, catch-up without drift, the catch-up cap, and cancel
//! from a timer's last call. Each test names the defect it guards against.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use tickflow::realtime::{
    scheduled, Clock, Dispatch, Dispatcher, ManualClock, RealtimeHandle, RealtimeTimers,
};
use tickflow::time::millis;
use tickflow::CatchUp;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Due offsets (ms from the start) of every call.
type Dues = Arc<Mutex<Vec<u64>>>;

fn setup() -> (RealtimeTimers, ManualClock, Instant, Dues) {
    let clock = ManualClock::new();
    let t0 = clock.now();
    (
        RealtimeTimers::manual(clock.clone()),
        clock,
        t0,
        Dues::default(),
    )
}

fn record(dues: &Dues, t0: Instant) -> impl FnMut() + Send + 'static {
    let dues = dues.clone();
    move || {
        let due = scheduled().expect("inside a call") - t0;
        dues.lock().unwrap().push(due.as_millis() as u64);
    }
}

fn taken(dues: &Dues) -> Vec<u64> {
    std::mem::take(&mut *dues.lock().unwrap())
}

/// Defect: `times(n)` took its period from whatever the first delay held when `times` was
/// called, so `after(5ms).first_delay(1ms).times(3)` fired at 1, 2, 3 ms, and `after(0)
/// .times(3)` built a repeating timer without a period that panicked the service's thread.
#[test]
fn times_repeats_with_the_delay_whatever_the_builder_order() {
    let (timers, clock, t0, dues) = setup();
    timers
        .after(ms(5))
        .first_delay(ms(1))
        .times(3)
        .call(record(&dues, t0));
    clock.advance(ms(20));
    timers.tick();
    assert_eq!(taken(&dues), [1, 6, 11]);

    let (timers, clock, t0, dues) = setup();
    timers
        .after(ms(5))
        .times(3)
        .first_delay(ms(1))
        .call(record(&dues, t0));
    clock.advance(ms(20));
    timers.tick();
    assert_eq!(taken(&dues), [1, 6, 11]);
}

/// A zero period means once per tick, as on the frame timers (it used to panic in `every`,
/// and to kill the thread through `after(0).times(n)`).
#[test]
fn a_zero_period_calls_once_per_tick() {
    let (timers, clock, t0, dues) = setup();
    let h = timers
        .after(Duration::ZERO)
        .times(3)
        .call(record(&dues, t0));
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    timers.every(Duration::ZERO).call(move || {
        c.fetch_add(1, Ordering::Relaxed);
    });
    for step in [0, 7, 0, 5, 3] {
        clock.advance(ms(step));
        timers.tick();
    }
    // Each call is scheduled at the time of the tick that made the one before.
    assert_eq!(taken(&dues), [0, 0, 7]);
    assert!(!h.is_active());
    assert_eq!(calls.load(Ordering::Relaxed), 5);
}

#[test]
fn times_zero_makes_no_calls_and_spans_are_accepted() {
    let (timers, clock, t0, dues) = setup();
    let none = timers.every(ms(1)).times(0).call(record(&dues, t0));
    assert!(!none.is_active() && !none.cancel());
    timers
        .after(millis(10))
        .first_delay(millis(4))
        .times(2)
        .call(record(&dues, t0));
    clock.advance(ms(50));
    timers.tick();
    assert_eq!(taken(&dues), [4, 14]);
}

/// Defect: `CatchUp::Delay` re-anchored on every call, so a 300 ms timer ticked at 301, 602,
/// 903 ms ran at 300, 601, 902 and drifted by the wake-up latency every period. On time, all
/// three policies keep the grid; late, Delay restarts it from the tick.
#[test]
fn an_on_time_timer_keeps_its_grid_under_every_policy() {
    for policy in [CatchUp::Burst, CatchUp::Once, CatchUp::Delay] {
        let (timers, clock, t0, dues) = setup();
        timers
            .every(ms(300))
            .catch_up(policy)
            .call(record(&dues, t0));
        for _ in 0..3 {
            clock.advance(ms(301));
            timers.tick();
        }
        assert_eq!(taken(&dues), [300, 600, 900], "{policy:?}");
    }
    let (timers, clock, t0, dues) = setup();
    timers
        .every(ms(300))
        .catch_up(CatchUp::Delay)
        .call(record(&dues, t0));
    for step in [301, 700, 300] {
        clock.advance(ms(step));
        timers.tick();
    }
    // Late at 1001 (600 and 900 missed): one call, then the grid restarts from 1001.
    assert_eq!(taken(&dues), [300, 600, 1301]);
}

/// Defect: a `Burst` timer that fell far behind built every missed call at once: `every(1 ns)`
/// 10 ms behind queued ten million calls (1.1 GB).
#[test]
fn burst_catch_up_is_capped_per_tick() {
    let (timers, clock, _, _) = setup();
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    timers.every(Duration::from_nanos(1)).call(move || {
        c.fetch_add(1, Ordering::Relaxed);
    });
    clock.advance(ms(10));
    assert_eq!(timers.tick(), 1_000);
    assert_eq!(timers.calls_dropped(), 10_000_000 - 1_000);
    timers.set_catch_up_cap(3);
    clock.advance(Duration::from_nanos(10));
    assert_eq!(timers.tick(), 3);
    assert_eq!(calls.load(Ordering::Relaxed), 1_003);
}

/// A handle that a timer's callback can reach.
fn slot() -> Arc<Mutex<Option<RealtimeHandle>>> {
    Arc::default()
}

/// Defect: `cancel()` from inside a timer's own last call returned `true` and ran `on_cancel`,
/// though nothing was left to cancel (the frame timers answer `false`). From an earlier call
/// it must still cancel the rest (a mutation that refuses to cancel a running timer fails this).
#[test]
fn cancel_from_the_last_call_cancels_nothing() {
    let (timers, clock, _, _) = setup();
    let hooks = Arc::new(AtomicU32::new(0));
    let answers = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for n in [1u64, 3] {
        // cancels itself in its call number `cancel_at` (1-based) of `n`
        for cancel_at in 1..=n {
            let me = slot();
            let (m, a, count) = (me.clone(), answers.clone(), Arc::new(AtomicU32::new(0)));
            let hk = hooks.clone();
            let h = timers
                .every(ms(10))
                .times(n)
                .on_cancel(move || {
                    hk.fetch_add(1, Ordering::Relaxed);
                })
                .call(move || {
                    let k = u64::from(count.fetch_add(1, Ordering::Relaxed)) + 1;
                    if k == cancel_at {
                        let h = m.lock().unwrap().clone().unwrap();
                        a.lock().unwrap().push((n, cancel_at, h.cancel()));
                    }
                });
            *me.lock().unwrap() = Some(h.clone());
            handles.push(h);
        }
    }
    for _ in 0..4 {
        clock.advance(ms(10));
        timers.tick();
    }
    let mut answers = answers.lock().unwrap().clone();
    answers.sort();
    assert_eq!(
        answers,
        [(1, 1, false), (3, 1, true), (3, 2, true), (3, 3, false)]
    );
    assert_eq!(
        hooks.load(Ordering::Relaxed),
        2,
        "hooks only for real cancels"
    );
    assert!(handles.iter().all(|h| !h.is_active()));
}

/// Cancel from another thread while a call of the timer runs: the running call finishes, no
/// further call starts, and the hook runs inside `cancel`.
#[test]
fn cancel_while_a_call_runs_on_another_thread() {
    let (timers, clock, _, _) = setup();
    let main = Dispatcher::new();
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let h = timers
        .every(ms(10))
        .dispatch(Dispatch::Queue(main.clone()))
        .call(move || {
            c.fetch_add(1, Ordering::SeqCst);
            entered_tx.send(()).unwrap();
            release_rx.lock().unwrap().recv().unwrap();
        });
    clock.advance(ms(20));
    timers.tick(); // two calls queued
    let pump = std::thread::spawn(move || main.pump());
    entered.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(
        h.cancel(),
        "a running call that is not the last can be cancelled"
    );
    release.send(()).unwrap();
    assert_eq!(pump.join().unwrap(), 1, "the second queued call is skipped");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(!h.is_active());
}

/// Defect: `tick()` from inside a callback whose own timer was due again deadlocked on the
/// callback's lock. It panics instead, like `TimerManager::tick`; the service reports the
/// callback's panic and goes on.
#[test]
fn tick_from_inside_a_callback_panics_instead_of_deadlocking() {
    let clock = ManualClock::new();
    let timers = Arc::new(RealtimeTimers::manual(clock.clone()));
    let reports = Arc::new(Mutex::new(Vec::new()));
    let r = reports.clone();
    timers.on_panic(move |p| r.lock().unwrap().push(p.message.clone()));
    let inner = Arc::downgrade(&timers);
    timers.every(ms(1)).times(2).call(move || {
        if let Some(t) = inner.upgrade() {
            t.tick();
        }
    });
    clock.advance(ms(5));
    let (done_tx, done) = mpsc::channel();
    let t = timers.clone();
    std::thread::spawn(move || done_tx.send(t.tick()).unwrap());
    let made = done
        .recv_timeout(Duration::from_secs(30))
        .expect("no deadlock");
    assert_eq!(made, 2);
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 2);
    assert!(reports[0].contains("from inside one of its own callbacks"));
}

/// Defect: a panicking panic hook left the in-flight count raised, so `shutdown` (and drop)
/// waited forever, and on a started service the timer thread died.
#[test]
fn a_panicking_panic_hook_does_not_hang_shutdown() {
    // On another thread, so that the defect fails this test instead of hanging it.
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let (timers, clock, _, _) = setup();
        timers.on_panic(|_| panic!("the hook itself"));
        timers.after(ms(1)).call(|| panic!("a callback"));
        clock.advance(ms(1));
        let made = timers.tick();
        timers.shutdown();
        done_tx.send(made).unwrap();
    });
    let made = done
        .recv_timeout(Duration::from_secs(30))
        .expect("tick and shutdown returned");
    assert_eq!(made, 1);
}
