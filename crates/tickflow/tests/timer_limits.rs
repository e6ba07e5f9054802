//! Limits and bad input on the timer manager: the catch-up cap, far-away timers, handles of
//! another manager, the end of representable time, and the answers of queries that once
//! reported the wrong value. Each test names the defect (or the mutation) it guards against.

use std::sync::{Arc, Mutex};

use tickflow::compat::UnrealTimers;
use tickflow::prelude::*;
use tickflow::time::DEFAULT_CATCH_UP_CAP;
use tickflow::{Tickable, TickableCx, FLICKS_PER_SECOND};

/// Defect: one tick replayed every missed period of a `Burst` timer: an eight-hour sleep gave a
/// 16 ms real-clock timer 1.8 million calls in one tick, a 1e7 s delta 625 million. Now at most
/// the cap per timer per tick; the rest land on the grid and are counted.
#[test]
fn a_huge_delta_makes_at_most_the_cap_of_calls() {
    let mut timers = TimerManager::<u64>::new();
    let period = millis(16);
    let h = timers.every(period).real().call(|n, cx| {
        assert!(cx.calls_this_tick() <= DEFAULT_CATCH_UP_CAP);
        *n += 1;
    });
    let mut n = 0;
    let sleep = Span::from_secs(8 * 3600);
    timers.tick(sleep, &mut n);
    assert_eq!(n, DEFAULT_CATCH_UP_CAP);
    let due = sleep.flicks() / period.flicks(); // 1,800,000 periods were due
    assert_eq!(timers.calls_dropped(), due - DEFAULT_CATCH_UP_CAP);
    // Back on the grid: the next call is the first period after the sleep.
    let rem = timers.remaining(h).unwrap();
    assert_eq!(rem, period * (due + 1) - sleep);
    timers.tick(Span::from_secs(10_000_000), &mut n);
    assert_eq!(n, 2 * DEFAULT_CATCH_UP_CAP);
}

/// Mutation `BLIND_LEVELS` 5 -> 6 in `timer/wheel/level.rs`: the wheel then read only the low 32
/// bits of due times at a level whose slots span more than that, and timers due 100 s or more
/// ahead were silently lost (`after(120 s)` never fired).
#[test]
fn far_timers_fire_at_their_time() {
    let mut timers = TimerManager::<Vec<u64>>::new();
    let delays = [97u64, 100, 120, 1_000, 100_000, 10_000_000];
    for &s in &delays {
        timers
            .after(Span::from_secs(s))
            .call(move |log, cx| log.push(cx.scheduled().flicks() / FLICKS_PER_SECOND));
    }
    let mut log = Vec::new();
    // One-second frames up to 1,000 s, then long hops.
    for _ in 0..1_000 {
        timers.tick(Span::from_secs(1), &mut log);
    }
    assert_eq!(log, [97, 100, 120, 1_000]);
    timers.tick(Span::from_secs(99_000), &mut log);
    timers.tick(Span::from_secs(9_900_000), &mut log);
    assert_eq!(log, delays);
    assert!(timers.is_empty());
}

/// Defect: a handle of manager A, passed to manager B, cleared B's unrelated timer in the same
/// slot. Every operation must answer like a stale handle and change nothing.
#[test]
fn another_managers_handle_changes_nothing() {
    let mut a = TimerManager::<u32>::new();
    let mut b = TimerManager::<u32>::new();
    let ha = a.after(secs(1.0)).call(|n, _| *n += 1);
    let hb = b.after(secs(1.0)).call(|n, _| *n += 10);
    assert_ne!(ha, hb, "same slot and generation, different managers");
    assert!(!b.clear(ha) && !b.pause(ha) && !b.unpause(ha));
    assert!(!b.fire_now(ha, &mut 0));
    assert_eq!(
        (b.exists(ha), b.remaining(ha), b.calls_made(ha)),
        (false, None, None)
    );
    let mut n = 0;
    b.tick(secs(1.0), &mut n);
    assert_eq!(n, 10, "b's own timer fired");
    assert!(a.exists(ha));
}

/// The same for tick functions and tickables of two schedulers.
#[test]
fn another_schedulers_handles_change_nothing() {
    struct Count;
    impl Tickable<u32> for Count {
        fn tick(&mut self, n: &mut u32, _cx: &mut TickableCx<'_, u32>) {
            *n += 100;
        }
    }
    let mut a = Scheduler::<u32>::new();
    let mut b = Scheduler::<u32>::new();
    let ta = a.ticks().add(TickSettings::default(), |_, _| {});
    let tb = b.ticks().add(TickSettings::default(), |n, _| *n += 1);
    let ka = a.tickables().add(Count);
    b.tickables().add(Count);
    assert!(!b.ticks().remove(ta) && !b.ticks().set_enabled(ta, false));
    assert!(!b.ticks().set_interval(ta, secs(1.0)) && !b.ticks().contains(ta));
    assert!(b.ticks().add_prerequisite(tb, ta).is_err());
    assert!(!b.tickables().remove(ka) && !b.tickables().contains(ka));
    assert!(!b.commands().ticks().remove(ta));
    let mut n = 0;
    b.tick(secs(0.1), &mut n);
    assert_eq!(n, 101);
}

/// Defect: `elapsed` of `after(5 s).first_delay(1 s)` (and the same through `set_timer`) was
/// 4 s right after it was set; the documented value is 0.
#[test]
fn elapsed_of_a_one_shot_counts_from_its_first_delay() {
    let mut timers = TimerManager::<()>::new();
    let h = timers
        .after(secs(5.0))
        .first_delay(secs(1.0))
        .call(|_, _| {});
    let mut u = TimerHandle::default();
    timers.set_timer(&mut u, secs(5.0), false, Some(secs(1.0)), |_, _| {});
    for h in [h, u] {
        assert_eq!(timers.elapsed(h), Some(Span::ZERO));
    }
    timers.tick(secs(0.25), &mut ());
    for h in [h, u] {
        assert_eq!(timers.elapsed(h), Some(secs(0.25)));
        assert_eq!(timers.remaining(h), Some(secs(0.75)));
        assert_eq!(timers.rate(h), Some(secs(5.0)));
    }
}

/// Mutation: `unpause` counting the remaining time from the running call's scheduled time
/// (`Base::Call`) instead of now. A callback late in a tick pauses and unpauses another
/// timer: it must keep exactly the time it had left.
#[test]
fn unpause_from_a_late_callback_keeps_the_remaining_time() {
    type Seen = Arc<Mutex<Vec<Option<Span>>>>;
    let mut timers = TimerManager::<()>::new();
    let other = timers.after(secs(1.0)).call(|_, _| {});
    let seen: Seen = Arc::default();
    let s = seen.clone();
    timers.after(secs(0.1)).call(move |_, cx| {
        // Due at 0.1, called in a tick that reached 0.4: 0.3 s late.
        let before = cx.timers().remaining(other);
        assert!(cx.timers().pause(other));
        assert!(cx.timers().unpause(other));
        s.lock()
            .unwrap()
            .extend([before, cx.timers().remaining(other)]);
    });
    timers.tick(secs(0.4), &mut ());
    assert_eq!(*seen.lock().unwrap(), [Some(secs(0.6)), Some(secs(0.6))]);
    timers.tick(secs(0.6), &mut ());
    assert!(!timers.exists(other), "fired at 1.0, not earlier or later");
}

/// Defect: at the end of representable time the clocks saturated silently. They still stop
/// there (timers not yet due never fire), and the manager and the frame report say so.
#[test]
fn the_end_of_time_is_reported() {
    let mut timers = TimerManager::<()>::new();
    let h = timers.after(secs(1.0)).call(|_, _| {});
    assert!(!timers.at_end_of_time());
    timers.tick(Span::MAX, &mut ());
    assert!(timers.at_end_of_time() && !timers.exists(h));

    let mut sched = Scheduler::<()>::new();
    sched.set_max_delta(Span::MAX);
    assert!(!sched.tick(secs(1.0), &mut ()).end_of_time);
    assert!(sched.tick(Span::MAX, &mut ()).end_of_time);
}
