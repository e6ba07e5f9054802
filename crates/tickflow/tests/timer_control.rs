//! Pause, owners, names, on_cancel, fire_now and the fire budget (rules 5, 7 and 8 of the `tickflow::timer` module docs).

use std::sync::{Arc, Mutex};

use tickflow::prelude::*;
use tickflow::timer::TimerState;

fn frame() -> Span {
    Span::frames(1, 10)
}

#[test]
fn pause_keeps_the_remaining_time_exactly() {
    let mut timers = TimerManager::<u32>::new();
    let h = timers.every(secs(1.0)).call(|n, _| *n += 1);
    let mut n = 0;
    for _ in 0..3 {
        timers.tick(frame(), &mut n);
    }
    assert!(timers.pause(h));
    assert!(!timers.pause(h), "already paused");
    assert!(timers.is_paused(h) && !timers.is_active(h));
    for _ in 0..50 {
        timers.tick(frame(), &mut n);
    }
    assert_eq!(timers.remaining(h), Some(secs(0.7)));
    assert_eq!(timers.elapsed(h), Some(secs(0.3)));
    assert!(timers.unpause(h));
    assert!(!timers.unpause(h), "already running");
    for _ in 0..7 {
        timers.tick(frame(), &mut n);
    }
    assert_eq!(n, 1);
    assert_eq!(timers.remaining(h), Some(secs(1.0)));
}

#[test]
fn a_looping_timer_pausing_itself_keeps_the_time_to_its_next_period() {
    let mut timers = TimerManager::<u32>::new();
    let h = timers.every(secs(1.0)).call(|n, cx| {
        *n += 1;
        let me = cx.handle();
        assert!(cx.timers().pause(me));
        assert!(cx.timers().is_paused(me));
    });
    let mut n = 0;
    timers.tick(secs(1.05), &mut n); // late by 0.05: next period at 2.0
    assert_eq!(n, 1);
    assert_eq!(timers.state(h), Some(TimerState::Paused));
    assert_eq!(timers.remaining(h), Some(secs(0.95)));
    timers.tick(secs(10.0), &mut n);
    assert!(timers.unpause(h));
    timers.tick(secs(0.95), &mut n);
    assert_eq!(n, 2);
}

#[test]
fn a_one_shot_pausing_itself_still_finishes() {
    let mut timers = TimerManager::<u32>::new();
    let h = timers.after(frame()).call(|n, cx| {
        *n += 1;
        let me = cx.handle();
        cx.timers().pause(me);
    });
    let mut n = 0;
    timers.tick(frame(), &mut n);
    assert_eq!(n, 1);
    assert!(!timers.exists(h));
}

#[test]
fn queries_from_inside_the_callback() {
    let mut timers = TimerManager::<Vec<(bool, bool, Option<Span>, Option<TimerState>)>>::new();
    timers.every(secs(1.0)).call(|log, cx| {
        let me = cx.handle();
        let t = cx.timers();
        log.push((t.exists(me), t.is_active(me), t.remaining(me), t.state(me)));
    });
    let mut log = vec![];
    timers.tick(secs(1.0), &mut log);
    assert_eq!(
        log,
        vec![(true, true, Some(Span::ZERO), Some(TimerState::Executing))]
    );
}

#[test]
fn clear_and_pause_by_owner_and_by_name() {
    let mut timers = TimerManager::<Vec<&'static str>>::new();
    let (o1, o2) = (OwnerId::from(1), OwnerId::from(2));
    timers.every(frame()).owner(o1).call(|l, _| l.push("o1a"));
    timers
        .every(frame())
        .owner(o1)
        .name("x")
        .call(|l, _| l.push("o1x"));
    timers
        .every(frame())
        .owner(o2)
        .name("x")
        .call(|l, _| l.push("o2x"));
    timers.every(frame()).call(|l, _| l.push("free"));
    let mut log = vec![];
    assert_eq!(timers.pause_owner(o1), 2);
    timers.tick(frame(), &mut log);
    assert_eq!(log, vec!["o2x", "free"]);
    assert_eq!(timers.unpause_owner(o1), 2);
    assert_eq!(timers.clear_named("x"), 2);
    log.clear();
    timers.tick(frame(), &mut log);
    assert_eq!(log, vec!["o1a", "free"]);
    assert_eq!(timers.clear_owner(o1), 1);
    assert_eq!(timers.clear_owner(o1), 0);
    assert_eq!(timers.len(), 1);
    timers.clear_all();
    assert!(timers.is_empty());
}

#[test]
fn on_cancel_runs_at_the_next_tick_only_for_unfinished_timers() {
    let mut timers = TimerManager::<Vec<&'static str>>::new();
    let a = timers
        .after(secs(5.0))
        .on_cancel(|l| l.push("a cancelled"))
        .call(|_, _| {});
    timers
        .after(frame())
        .on_cancel(|l| l.push("b cancelled"))
        .call(|l, _| l.push("b fired"));
    timers
        .every(frame())
        .times(2)
        .on_cancel(|l| l.push("c cancelled"))
        .call(|l, cx| {
            l.push("c fired");
            cx.clear_self(); // on its first call: cancelled
        });
    timers
        .every(frame())
        .times(1)
        .on_cancel(|l| l.push("d cancelled"))
        .call(|l, cx| {
            l.push("d fired");
            cx.clear_self(); // on its last call: finished, not cancelled
        });
    let mut log = vec![];
    assert!(timers.clear(a));
    assert!(log.is_empty(), "clear never runs user code");
    timers.tick(frame(), &mut log);
    assert_eq!(log, vec!["a cancelled", "b fired", "c fired", "d fired"]);
    timers.tick(frame(), &mut log);
    assert_eq!(
        log,
        vec![
            "a cancelled",
            "b fired",
            "c fired",
            "d fired",
            "c cancelled"
        ]
    );
}

#[test]
fn fire_now_counts_a_call_and_keeps_the_schedule() {
    let mut timers = TimerManager::<u32>::new();
    let one = timers.after(secs(1.0)).call(|n, _| *n += 1);
    let lim = timers.every(secs(1.0)).times(2).call(|n, _| *n += 10);
    let mut n = 0;
    assert!(timers.fire_now(one, &mut n));
    assert!(!timers.exists(one), "a one-shot is done after its call");
    assert!(timers.fire_now(lim, &mut n));
    assert_eq!(timers.calls_made(lim), Some(1));
    timers.tick(secs(1.0), &mut n);
    assert_eq!(n, 21);
    assert!(!timers.exists(lim));
}

#[test]
fn fire_now_of_a_running_timer_is_refused() {
    let mut timers = TimerManager::<Vec<bool>>::new();
    timers.after(frame()).call(|l, cx| {
        let me = cx.handle();
        let mut inner = vec![];
        l.push(cx.timers().fire_now(me, &mut inner));
    });
    let mut log = vec![];
    timers.tick(frame(), &mut log);
    assert_eq!(log, vec![false]);
}

#[test]
fn the_fire_budget_spills_calls_into_the_next_tick_in_order() {
    let mut timers = TimerManager::<Vec<u32>>::new();
    for i in 0..5 {
        timers
            .after(secs(0.1) * (i + 1))
            .call(move |l, _| l.push(i as u32));
    }
    timers.set_fire_budget(Some(2));
    let mut log = vec![];
    assert_eq!(timers.tick(secs(1.0), &mut log), 2);
    assert_eq!(log, vec![0, 1]);
    timers.after(Span::ZERO).call(|l, _| l.push(99));
    assert_eq!(timers.tick(frame(), &mut log), 2);
    assert_eq!(timers.tick(frame(), &mut log), 2);
    assert_eq!(log, vec![0, 1, 2, 3, 4, 99]);
    timers.set_fire_budget(None);
}

#[test]
fn a_callback_can_clear_and_pause_other_timers() {
    let shared = Arc::new(Mutex::new(vec![]));
    let mut timers = TimerManager::<Vec<&'static str>>::new();
    let victim = timers.after(secs(0.5)).call(|l, _| l.push("victim"));
    let frozen = timers.after(secs(0.5)).call(|l, _| l.push("frozen"));
    let s = shared.clone();
    timers.after(secs(0.2)).call(move |l, cx| {
        l.push("killer");
        s.lock().unwrap().push(cx.timers().clear(victim));
        s.lock().unwrap().push(cx.timers().pause(frozen));
    });
    let mut log = vec![];
    timers.tick(secs(1.0), &mut log);
    assert_eq!(log, vec!["killer"]);
    assert_eq!(*shared.lock().unwrap(), vec![true, true]);
    assert_eq!(timers.remaining(frozen), Some(Span::ZERO));
}

#[test]
fn a_cleared_timers_slot_reused_on_another_clock_keeps_its_own_time() {
    // The game-clock timer due at flick 100 is cleared; the frame-clock timer set next reuses
    // its slot and is due at frame 100. The first tick passes flick 100 but not frame 100.
    // A second game timer keeps the first one's wheel slot in use.
    let mut timers = TimerManager::<Vec<&'static str>>::new();
    let game = timers
        .after(Span::from_flicks(100))
        .call(|l, _| l.push("game"));
    timers
        .after(Span::from_flicks(101))
        .call(|l, _| l.push("game 101"));
    assert!(timers.clear(game));
    timers.after(Frames(100)).call(|l, _| l.push("frame 100"));
    let mut log = vec![];
    timers.tick(frame(), &mut log);
    assert_eq!(log, vec!["game 101"]);
    for _ in 1..100 {
        timers.tick(frame(), &mut log);
    }
    assert_eq!(log, vec!["game 101", "frame 100"]);
}

#[test]
fn timers_unpaused_in_reverse_still_fire_in_set_order_when_due_together() {
    // Unpausing puts each timer back in the wheel in the order of the calls, here the reverse
    // of set order, and pausing keeps each one's time left: all 200 come due in one tick, a
    // batch large enough for the tick's packed sort, which must restore set order.
    let mut timers = TimerManager::<Vec<u32>>::new();
    let hs: Vec<_> = (0..200u32)
        .map(|i| {
            timers
                .after(secs(1.0))
                .call(move |log: &mut Vec<u32>, _| log.push(i))
        })
        .collect();
    let mut log = vec![];
    timers.tick(frame(), &mut log);
    for &h in &hs {
        assert!(timers.pause(h));
    }
    for &h in hs.iter().rev() {
        assert!(timers.unpause(h));
    }
    for _ in 0..9 {
        timers.tick(frame(), &mut log);
    }
    assert_eq!(log, (0..200).collect::<Vec<_>>());
}
