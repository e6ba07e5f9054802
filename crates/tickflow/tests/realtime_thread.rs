//! The real-time service on its own thread and the real clock: smoke tests with generous
//! bounds (nothing here depends on the machine's speed), and a stress test from 8 threads.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use tickflow::realtime::{Dispatch, Dispatcher, RealtimeTimers};

const PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn fires_on_its_own_thread() {
    let timers = RealtimeTimers::start();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let t0 = Instant::now();
    timers.after(Duration::from_millis(20)).call(move || {
        tx.lock()
            .unwrap()
            .send(std::thread::current().name().map(String::from))
            .unwrap();
    });
    let name = rx.recv_timeout(PATIENCE).expect("fired");
    assert!(t0.elapsed() >= Duration::from_millis(20), "never early");
    assert_eq!(name.as_deref(), Some("tickflow-realtime"));
}

/// A batching window makes calls later, never earlier: with a window wider than the gap
/// between two timers, both are called at or after their due times, in due order.
#[test]
fn a_batch_window_never_calls_early() {
    let timers = RealtimeTimers::start();
    timers.set_batch_window(Duration::from_millis(30));
    let (tx, rx) = mpsc::channel();
    let t0 = Instant::now();
    for (name, ms) in [("first", 10u64), ("second", 20)] {
        let tx = Mutex::new(tx.clone());
        timers.after(Duration::from_millis(ms)).call(move || {
            let early = t0.elapsed() < Duration::from_millis(ms);
            tx.lock().unwrap().send((name, early)).unwrap();
        });
    }
    let calls: Vec<_> = (0..2)
        .map(|_| rx.recv_timeout(PATIENCE).expect("fired"))
        .collect();
    assert_eq!(calls, [("first", false), ("second", false)]);
}

/// The window is the timer thread's timer slack: the thread sleeps to the exact deadline and
/// the kernel may end the sleep up to the window later. A callback (which runs on that thread)
/// reads the slack back.
#[cfg(target_os = "linux")]
#[test]
fn the_batch_window_is_the_threads_timer_slack() {
    let timers = RealtimeTimers::start();
    // A far timer: the thread then always has a timed sleep to apply the window to.
    timers.after(Duration::from_secs(3600)).call(|| {});
    let mut seen = Vec::new();
    for window in [
        Duration::from_micros(300),
        Duration::ZERO,
        tickflow::realtime::DEFAULT_BATCH_WINDOW,
    ] {
        timers.set_batch_window(window);
        // The thread applies the window before its next timed sleep: the first call after
        // that sleep sees it.
        for _ in 0..2 {
            let (tx, rx) = mpsc::channel();
            let tx = Mutex::new(tx);
            timers.after(Duration::from_millis(2)).call(move || {
                let slack = rustix::thread::current_timer_slack().ok();
                tx.lock().unwrap().send(slack).unwrap();
            });
            let slack = rx.recv_timeout(PATIENCE).expect("fired");
            seen.push(slack);
        }
    }
    assert_eq!(
        [seen[1], seen[3], seen[5]],
        [Some(300_000), Some(1), Some(50_000)]
    );
}

/// Defect: a panicking panic hook unwound the timer thread, and every real-time timer stopped.
#[test]
fn the_thread_survives_a_panicking_panic_hook() {
    let timers = RealtimeTimers::start();
    timers.on_panic(|_| panic!("the hook itself"));
    timers
        .after(Duration::from_millis(1))
        .call(|| panic!("a callback"));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    timers.after(Duration::from_millis(30)).call(move || {
        tx.lock().unwrap().send(()).unwrap();
    });
    if rx.recv_timeout(PATIENCE).is_err() {
        // With the defect, dropping the service would wait forever for the dead thread's call.
        std::mem::forget(timers);
        panic!("the later timer did not fire: the timer thread died");
    }
    timers.shutdown();
}

#[test]
fn repeats_to_a_dispatcher_pumped_by_this_thread() {
    let timers = RealtimeTimers::start();
    let main = Dispatcher::new();
    let n = Arc::new(AtomicU32::new(0));
    let c = n.clone();
    let h = timers
        .every(Duration::from_millis(5))
        .times(5)
        .dispatch(Dispatch::Queue(main.clone()))
        .call(move || {
            c.fetch_add(1, Ordering::Relaxed);
        });
    let deadline = Instant::now() + PATIENCE;
    let mut pumped = 0;
    while pumped < 5 && Instant::now() < deadline {
        pumped += main.pump();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(pumped, 5);
    assert_eq!(n.load(Ordering::Relaxed), 5);
    assert!(!h.is_active());
}

#[test]
fn shutdown_waits_for_the_running_callback() {
    let timers = RealtimeTimers::start();
    let started = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let (s, f) = (started.clone(), finished.clone());
    timers.after(Duration::ZERO).call(move || {
        s.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(100));
        f.store(true, Ordering::SeqCst);
    });
    let deadline = Instant::now() + PATIENCE;
    while !started.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert!(started.load(Ordering::SeqCst));
    timers.shutdown();
    assert!(
        finished.load(Ordering::SeqCst),
        "shutdown returned while a callback ran"
    );
}

#[test]
fn nothing_runs_after_drop() {
    let n = Arc::new(AtomicU32::new(0));
    {
        let timers = RealtimeTimers::start();
        let c = n.clone();
        timers.every(Duration::from_millis(1)).call(move || {
            c.fetch_add(1, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(20));
    }
    let after_drop = n.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(n.load(Ordering::SeqCst), after_drop);
}

/// A service dropped by its own callback stops without waiting for that call (which would
/// wait for itself): the call finishes and nothing runs after it.
#[test]
fn dropped_by_its_own_callback() {
    let slot: Arc<Mutex<Option<RealtimeTimers>>> = Arc::default();
    let timers = RealtimeTimers::start();
    let calls = Arc::new(AtomicU32::new(0));
    let (s, c) = (slot.clone(), calls.clone());
    let remote = timers.remote();
    *slot.lock().unwrap() = Some(timers);
    remote.every(Duration::from_millis(1)).call(move || {
        c.fetch_add(1, Ordering::SeqCst);
        let me = s.lock().unwrap().take();
        drop(me);
    });
    let deadline = Instant::now() + PATIENCE;
    while calls.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(slot.lock().unwrap().is_none());
}

/// 8 threads schedule 100,000 timers (1–3 calls each, 0–20 ms apart) and cancel every third
/// one right away. Every timer not cancelled makes exactly its calls; a cancelled one makes at
/// most one more call after `cancel` returned (the one that may have been running).
#[test]
fn stress_eight_threads_schedule_and_cancel() {
    const PER_THREAD: usize = 12_500;
    let timers = RealtimeTimers::start();
    let remote = timers.remote();
    let counts: Arc<Vec<AtomicU32>> =
        Arc::new((0..8 * PER_THREAD).map(|_| AtomicU32::new(0)).collect());
    let expected: Vec<(u32, Option<u32>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let remote = remote.clone();
                let counts = counts.clone();
                s.spawn(move || {
                    let mut out = Vec::with_capacity(PER_THREAD);
                    for i in 0..PER_THREAD {
                        let id = t * PER_THREAD + i;
                        let times = 1 + (id % 3) as u64;
                        let c = counts.clone();
                        let h = remote
                            .every(Duration::from_millis(1 + (id % 7) as u64))
                            .first_delay(Duration::from_millis((id % 20) as u64))
                            .times(times)
                            .call(move || {
                                c[id].fetch_add(1, Ordering::SeqCst);
                            });
                        if id % 3 == 0 && h.cancel() {
                            out.push((times as u32, Some(counts[id].load(Ordering::SeqCst))));
                        } else {
                            out.push((times as u32, None));
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let deadline = Instant::now() + PATIENCE;
    let done = |id: usize| match expected[id] {
        (times, None) => counts[id].load(Ordering::SeqCst) >= times,
        (_, Some(_)) => true,
    };
    while !(0..counts.len()).all(done) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(50)); // time for any wrong extra call to show
    for (id, &(times, cancelled_at)) in expected.iter().enumerate() {
        let n = counts[id].load(Ordering::SeqCst);
        match cancelled_at {
            None => assert_eq!(n, times, "timer {id}"),
            Some(at) => assert!(n <= at + 1, "timer {id}: {n} calls, {at} when cancelled"),
        }
    }
    timers.shutdown();
}
