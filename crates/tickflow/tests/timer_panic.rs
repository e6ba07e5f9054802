//! A panicking callback leaves the manager consistent (rule 9 of the `tickflow::timer` module docs).

use std::panic::{catch_unwind, AssertUnwindSafe};

use tickflow::prelude::*;

fn frame() -> Span {
    Span::frames(1, 10)
}

#[test]
fn a_panicking_one_shot_counts_as_fired_and_the_rest_run_next_tick() {
    let mut timers = TimerManager::<Vec<&'static str>>::new();
    let bad = timers.after(frame()).call(|_, _| panic!("boom"));
    timers.after(frame()).call(|l, _| l.push("after the panic"));
    let mut log = vec![];
    let err = catch_unwind(AssertUnwindSafe(|| timers.tick(frame(), &mut log))).unwrap_err();
    assert_eq!(err.downcast_ref::<&str>(), Some(&"boom"));
    assert!(!timers.exists(bad));
    assert!(log.is_empty());
    assert_eq!(timers.tick(frame(), &mut log), 1);
    assert_eq!(log, vec!["after the panic"]);
    assert!(timers.is_empty());
}

#[test]
fn a_panicking_looping_timer_keeps_its_schedule() {
    let mut timers = TimerManager::<u32>::new();
    let h = timers.every(frame()).call(|n, _| {
        *n += 1;
        if *n == 2 {
            panic!("second call");
        }
    });
    let mut n = 0;
    timers.tick(frame(), &mut n);
    assert!(catch_unwind(AssertUnwindSafe(|| timers.tick(frame(), &mut n))).is_err());
    assert_eq!(timers.calls_made(h), Some(2));
    assert_eq!(timers.remaining(h), Some(frame()));
    timers.tick(frame(), &mut n);
    assert_eq!(n, 3);
}

#[test]
fn a_panicking_on_cancel_hook_does_not_lose_the_others() {
    let mut timers = TimerManager::<Vec<u32>>::new();
    let a = timers
        .after(frame())
        .on_cancel(|_| panic!("hook"))
        .call(|_, _| {});
    let b = timers
        .after(frame())
        .on_cancel(|l| l.push(2))
        .call(|_, _| {});
    timers.clear(a);
    timers.clear(b);
    let mut log = vec![];
    assert!(catch_unwind(AssertUnwindSafe(|| timers.tick(frame(), &mut log))).is_err());
    timers.tick(frame(), &mut log);
    assert_eq!(log, vec![2]);
}
