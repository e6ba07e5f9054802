//! The demo's real-time section: an autosave every 2 s of wall time, run by the real-time
//! service's thread but delivered to the main loop through a `Dispatcher`, with its lateness.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tickflow::realtime::{scheduled, Dispatch, Dispatcher, RealtimeTimers};

/// Runs a 60 Hz main loop for 4.1 s of wall time and prints each autosave.
pub(crate) fn run() {
    let timers = RealtimeTimers::start();
    let main_loop = Dispatcher::new();
    let t0 = Instant::now();
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let autosave = timers
        .every(Duration::from_secs(2))
        .dispatch(Dispatch::Queue(main_loop.clone()))
        .call(move || {
            let due = scheduled().expect("inside a call");
            let now = Instant::now();
            let thread = std::thread::current().name().unwrap_or("?").to_string();
            l.lock().unwrap().push(format!(
                "  autosave due at {:.3} s, ran at {:.3} s on thread `{thread}` (lateness {:.2} ms, \
                 including the wait for the frame's pump)",
                (due - t0).as_secs_f64(),
                (now - t0).as_secs_f64(),
                (now - due).as_secs_f64() * 1e3
            ));
        });

    let frame = Duration::from_secs(1) / 60;
    let mut next = t0;
    let mut frames = 0;
    while t0.elapsed() < Duration::from_millis(4_100) {
        main_loop.pump(); // the game's main thread, once per frame
        frames += 1;
        next += frame;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    autosave.cancel();
    timers.shutdown();
    println!("\nReal-time service: an autosave every 2 s, pumped by a 60 Hz main loop");
    for line in log.lock().unwrap().iter() {
        println!("{line}");
    }
    println!(
        "  {frames} frames in {:.2} s of wall time",
        t0.elapsed().as_secs_f64()
    );
}
