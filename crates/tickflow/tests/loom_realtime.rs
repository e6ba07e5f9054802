//! The real-time service's races under loom (every interleaving of a small model):
//!
//! ```sh
//! RUSTFLAGS="--cfg tickflow_loom" cargo test -p tickflow --test loom_realtime --release
//! ```
//!
//! Without that flag this file is empty.
#![cfg(tickflow_loom)]

use std::time::Duration;

use loom::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use loom::sync::Arc;
use loom::thread;
use tickflow::realtime::{Dispatch, Dispatcher, ManualClock, RealtimeTimers};

/// `tick` on one thread, `cancel` on another: once `cancel` returned `true`, at most the call
/// already running finishes; none starts.
#[test]
fn cancel_against_tick() {
    loom::model(|| {
        let clock = ManualClock::new();
        let timers = Arc::new(RealtimeTimers::manual(clock.clone()));
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let h = timers
            .every(Duration::from_millis(10))
            .times(2)
            .call(move || {
                c.fetch_add(1, Ordering::SeqCst);
            });
        clock.advance(Duration::from_millis(20));
        let t = timers.clone();
        let ticker = thread::spawn(move || t.tick());
        let at_cancel = if h.cancel() {
            Some(calls.load(Ordering::SeqCst))
        } else {
            None
        };
        ticker.join().unwrap();
        let n = calls.load(Ordering::SeqCst);
        match at_cancel {
            Some(at) => assert!(n <= at + 1, "{n} calls, {at} at cancel"),
            None => assert_eq!(n, 2, "not cancelled: both calls made"),
        }
    });
}

/// `tick` against `cancel` of a one-shot: its only call is its last, so `cancel` answers
/// `true` exactly when that call never runs, and `false` when it has started (a running last
/// call has nothing left to cancel).
#[test]
fn cancel_against_a_last_call() {
    loom::model(|| {
        let clock = ManualClock::new();
        let timers = Arc::new(RealtimeTimers::manual(clock.clone()));
        let calls = Arc::new(AtomicU32::new(0));
        let hooks = Arc::new(AtomicU32::new(0));
        let (c, k) = (calls.clone(), hooks.clone());
        let h = timers
            .after(Duration::from_millis(10))
            .on_cancel(move || {
                k.fetch_add(1, Ordering::SeqCst);
            })
            .call(move || {
                c.fetch_add(1, Ordering::SeqCst);
            });
        clock.advance(Duration::from_millis(10));
        let t = timers.clone();
        let ticker = thread::spawn(move || t.tick());
        let cancelled = h.cancel();
        ticker.join().unwrap();
        let (n, hooked) = (calls.load(Ordering::SeqCst), hooks.load(Ordering::SeqCst));
        assert_eq!((n, hooked), if cancelled { (0, 1) } else { (1, 0) });
    });
}

/// `pump` on one thread, `cancel` on another, with two queued calls of the same timer.
#[test]
fn cancel_against_pump() {
    loom::model(|| {
        let clock = ManualClock::new();
        let timers = RealtimeTimers::manual(clock.clone());
        let main = Dispatcher::new();
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let h = timers
            .every(Duration::from_millis(10))
            .times(2)
            .dispatch(Dispatch::Queue(main.clone()))
            .call(move || {
                c.fetch_add(1, Ordering::SeqCst);
            });
        clock.advance(Duration::from_millis(20));
        assert_eq!(timers.tick(), 2);
        let m = main.clone();
        let pumper = thread::spawn(move || m.pump());
        let at_cancel = if h.cancel() {
            Some(calls.load(Ordering::SeqCst))
        } else {
            None
        };
        let ran = pumper.join().unwrap();
        let n = calls.load(Ordering::SeqCst);
        assert_eq!(n as usize, ran, "pump counts what ran");
        match at_cancel {
            Some(at) => assert!(n <= at + 1),
            None => assert_eq!(n, 2),
        }
    });
}

/// `shutdown` against `pump`: after shutdown returns, no callback is running or starts.
#[test]
fn shutdown_against_pump() {
    loom::model(|| {
        let clock = ManualClock::new();
        let timers = RealtimeTimers::manual(clock.clone());
        let main = Dispatcher::new();
        let running = Arc::new(AtomicBool::new(false));
        let after = Arc::new(AtomicBool::new(false));
        let (r, a) = (running.clone(), after.clone());
        timers
            .after(Duration::from_millis(1))
            .dispatch(Dispatch::Queue(main.clone()))
            .call(move || {
                assert!(
                    !a.load(Ordering::SeqCst),
                    "a call started after shutdown returned"
                );
                r.store(true, Ordering::SeqCst);
                r.store(false, Ordering::SeqCst);
            });
        clock.advance(Duration::from_millis(1));
        timers.tick();
        let m = main.clone();
        let pumper = thread::spawn(move || m.pump());
        timers.shutdown();
        assert!(!running.load(Ordering::SeqCst), "a call still running");
        after.store(true, Ordering::SeqCst);
        pumper.join().unwrap();
    });
}
