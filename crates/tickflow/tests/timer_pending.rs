//! The pending rule (rule 3 of the `tickflow::timer` module docs): the delta of the frame a timer was set in never counts.

use tickflow::compat::UnrealTimers;
use tickflow::prelude::*;

fn frame() -> Span {
    Span::frames(1, 10)
}

#[test]
fn a_timer_set_before_the_timer_tick_counts_from_the_time_that_tick_reaches() {
    let mut timers = TimerManager::<Vec<Time>>::new();
    let mut log = vec![];
    timers.tick(frame(), &mut log); // time 0.1
    timers.begin_frame();
    let h = timers.after(secs(0.2)).call(|l, cx| l.push(cx.now()));
    assert!(timers.is_pending(h));
    assert_eq!(timers.remaining(h), Some(secs(0.2)));
    assert_eq!(timers.elapsed(h), Some(Span::ZERO));
    timers.tick(frame(), &mut log); // time 0.2: countdown starts here
    assert!(!timers.is_pending(h));
    assert_eq!(timers.remaining(h), Some(secs(0.2)));
    for _ in 0..2 {
        timers.begin_frame();
        timers.tick(frame(), &mut log);
    }
    assert_eq!(log, vec![Time::ZERO + secs(0.4)]);
}

#[test]
fn before_or_after_the_timer_tick_of_a_frame_gives_the_same_due_time() {
    let mut timers = TimerManager::<Vec<&'static str>>::new();
    let mut log = vec![];
    timers.begin_frame();
    let before = timers.after(secs(0.3)).call(|l, _| l.push("before"));
    timers.tick(frame(), &mut log);
    let after = timers.after(secs(0.3)).call(|l, _| l.push("after"));
    assert_eq!(timers.remaining(before), timers.remaining(after));
    for _ in 0..3 {
        timers.begin_frame();
        timers.tick(frame(), &mut log);
    }
    assert_eq!(log, vec!["before", "after"]);
}

#[test]
fn a_zero_delay_set_in_an_open_frame_fires_in_that_frames_tick() {
    let mut timers = TimerManager::<u32>::new();
    timers.begin_frame();
    timers.set_timer_for_next_tick(|n, _| *n += 1);
    let mut n = 0;
    timers.tick(frame(), &mut n);
    assert_eq!(n, 1);
}

#[test]
fn a_manager_never_told_about_frames_counts_from_the_last_tick() {
    let mut timers = TimerManager::<u32>::new();
    let mut n = 0;
    timers.tick(frame(), &mut n);
    let h = timers.after(secs(0.2)).call(|n, _| *n += 1);
    assert!(!timers.is_pending(h));
    timers.tick(frame(), &mut n);
    assert_eq!(timers.remaining(h), Some(secs(0.1)));
    timers.tick(frame(), &mut n);
    assert_eq!(n, 1);
}

#[test]
fn pausing_and_clearing_a_pending_timer() {
    let mut timers = TimerManager::<u32>::new();
    timers.begin_frame();
    let a = timers.after(secs(0.5)).call(|n, _| *n += 1);
    let b = timers.after(secs(0.5)).call(|n, _| *n += 10);
    assert!(timers.pause(a));
    assert!(timers.clear(b));
    let mut n = 0;
    timers.tick(secs(1.0), &mut n);
    assert_eq!(timers.remaining(a), Some(secs(0.5)));
    assert!(timers.unpause(a));
    timers.tick(secs(0.5), &mut n);
    assert_eq!(n, 1);
}
