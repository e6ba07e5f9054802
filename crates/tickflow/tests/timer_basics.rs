//! One-shots, looping timers, boundaries, handles and queries (rules 1, 2, 6 and 7 of the `tickflow::timer` module docs).

use tickflow::compat::UnrealTimers;
use tickflow::prelude::*;
use tickflow::timer::TimerState;

/// 0.1 s, exact in flicks.
fn frame() -> Span {
    Span::frames(1, 10)
}

type Log = Vec<(&'static str, u64)>;

fn run(timers: &mut TimerManager<Log>, log: &mut Log, frames: usize) {
    for _ in 0..frames {
        timers.tick(frame(), log);
    }
}

fn frame_no(t: &TimerManager<Log>) -> u64 {
    t.clocks().frame()
}

#[test]
fn one_shot_fires_once_at_its_delay_inclusive() {
    let mut timers = TimerManager::<Log>::new();
    let h = timers
        .after(secs(0.3))
        .call(|log, cx| log.push(("a", cx.now().flicks())));
    let mut log = vec![];
    run(&mut timers, &mut log, 2);
    assert!(log.is_empty());
    run(&mut timers, &mut log, 1); // clock reaches exactly 0.3
    assert_eq!(log, vec![("a", secs(0.3).flicks())]);
    run(&mut timers, &mut log, 5);
    assert_eq!(log.len(), 1);
    assert!(!timers.exists(h));
    assert_eq!(timers.len(), 0);
}

#[test]
fn period_equal_to_frame_delta_fires_every_frame() {
    // Unreal fires 0,2,0,2 here (strict boundary); tickflow fires 1,1,1,1.
    let mut timers = TimerManager::<u32>::new();
    timers.every(frame()).call(|n, _| *n += 1);
    let mut n = 0;
    let mut per_frame = vec![];
    for _ in 0..8 {
        let before = n;
        timers.tick(frame(), &mut n);
        per_frame.push(n - before);
    }
    assert_eq!(per_frame, vec![1; 8]);
}

#[test]
fn looping_timer_k_th_call_is_due_exactly_on_the_grid() {
    let mut timers = TimerManager::<Vec<Time>>::new();
    timers
        .every(secs(0.25))
        .first_delay(secs(0.05))
        .call(|log, cx| log.push(cx.scheduled()));
    let mut log = vec![];
    for _ in 0..36_000 {
        // an hour of 1/60 s frames (not a multiple of the period)
        timers.tick(Span::frames(1, 60), &mut log);
    }
    for (k, t) in log.iter().enumerate() {
        assert_eq!(*t, Time::ZERO + secs(0.05) + secs(0.25) * k as u64);
    }
    assert_eq!(log.len(), 2400); // 0.05 + k*0.25 <= 600 -> k <= 2399.8
}

#[test]
fn zero_period_fires_once_every_tick() {
    let mut timers = TimerManager::<u32>::new();
    timers.every(Span::ZERO).call(|n, _| *n += 1);
    let mut n = 0;
    for i in 1..=5 {
        timers.tick(if i % 2 == 0 { Span::ZERO } else { frame() }, &mut n);
        assert_eq!(n, i);
    }
}

#[test]
fn times_limits_calls_and_then_the_timer_is_gone() {
    let mut timers = TimerManager::<u32>::new();
    let h = timers.every(frame()).times(3).call(|n, _| *n += 1);
    let mut n = 0;
    timers.tick(frame(), &mut n);
    assert_eq!(timers.info_of(h).unwrap().calls_left, Some(2));
    timers.tick(secs(1.0), &mut n); // a hitch: the burst stops at the limit
    assert_eq!(n, 3);
    assert!(!timers.exists(h));
    // A one-shot with times(n) repeats with its delay as the period.
    let h = timers.after(frame()).times(2).call(|n, _| *n += 10);
    timers.tick(frame(), &mut n);
    timers.tick(frame(), &mut n);
    assert_eq!(n, 23);
    assert!(!timers.exists(h));
}

/// `times(0)` means what it does on the real-time service: no calls. Nothing is stored, the
/// handle names nothing, and a handle it replaces is cleared as with any other timer.
#[test]
fn times_zero_makes_no_calls_and_stores_nothing() {
    let mut timers = TimerManager::<u32>::new();
    let mut h = timers.every(frame()).call(|n, _| *n += 1);
    let none = timers
        .every(frame())
        .times(0)
        .replace(&mut h)
        .call(|n, _| *n += 100);
    assert_eq!((none, h), (TimerHandle::default(), TimerHandle::default()));
    let mut n = 0;
    timers.tick(frame(), &mut n);
    assert_eq!((n, timers.len()), (0, 0));
}

#[test]
fn frame_timers_count_ticks() {
    let mut timers = TimerManager::<Log>::new();
    timers
        .after(Frames(3))
        .call(|log, cx| log.push(("once", cx.now().flicks())));
    timers
        .every(Frames(2))
        .first_delay(Frames(1))
        .call(|log, cx| log.push(("every", cx.now().flicks())));
    let mut log = vec![];
    for _ in 0..6 {
        timers.tick(Span::ZERO, &mut log); // frame timers run even when no time passes
    }
    assert_eq!(
        log,
        vec![("every", 1), ("once", 3), ("every", 3), ("every", 5)]
    );
    assert_eq!(frame_no(&timers), 6);
}

#[test]
fn real_domain_timers_use_the_real_delta() {
    let mut timers = TimerManager::<Log>::new();
    timers.after(secs(1.0)).call(|log, _| log.push(("game", 0)));
    timers
        .after(secs(1.0))
        .real()
        .call(|log, _| log.push(("real", 0)));
    let mut log = vec![];
    timers.tick_step(Span::ZERO, secs(1.0), &mut log); // paused game
    assert_eq!(log, vec![("real", 0)]);
    timers.tick_step(secs(1.0), Span::ZERO, &mut log);
    assert_eq!(log, vec![("real", 0), ("game", 0)]);
    assert_eq!(timers.clocks().now(Domain::Game), Time::ZERO + secs(1.0));
    assert_eq!(timers.clocks().now(Domain::Real), Time::ZERO + secs(1.0));
}

#[test]
fn set_timer_with_zero_rate_clears_like_unreal() {
    let mut timers = TimerManager::<()>::new();
    let mut h = TimerHandle::default();
    timers.set_timer(&mut h, secs(1.5), false, None, |_, _| {});
    let first = h;
    assert!(timers.exists(first));
    timers.set_timer(&mut h, Span::ZERO, false, None, |_, _| {});
    assert!(!timers.exists(first));
    assert!(h.is_none());
    assert!(timers.is_empty());
}

#[test]
fn set_timer_through_a_handle_replaces_the_old_timer() {
    let mut timers = TimerManager::<u32>::new();
    let mut h = TimerHandle::default();
    timers.set_timer(&mut h, secs(1.0), false, None, |n, _| *n += 1);
    let old = h;
    timers.set_timer(&mut h, secs(5.0), false, None, |n, _| *n += 100);
    assert_ne!(old, h, "a new handle, even if the slot is reused");
    assert!(!timers.exists(old));
    assert_eq!(timers.remaining(h), Some(secs(5.0)));
    let mut n = 0;
    timers.tick(secs(5.0), &mut n);
    assert_eq!(n, 100);
}

#[test]
fn set_timer_first_delay_and_looping() {
    let mut timers = TimerManager::<Vec<u64>>::new();
    let mut h = TimerHandle::default();
    timers.set_timer(&mut h, secs(1.0), true, Some(secs(0.0)), |log, cx| {
        log.push(cx.scheduled().flicks())
    });
    let mut log = vec![];
    timers.tick(secs(0.01), &mut log); // FirstDelay 0 fires on the next tick
    assert_eq!(log, vec![0]);
    assert_eq!(timers.remaining(h), Some(secs(0.99)));
}

#[test]
fn set_timer_for_next_tick_fires_in_the_next_tick_only() {
    let mut timers = TimerManager::<u32>::new();
    let h = timers.set_timer_for_next_tick(|n, _| *n += 1);
    assert!(timers.exists(h) && timers.is_active(h));
    assert_eq!(timers.rate(h), Some(Span::ZERO));
    let mut n = 0;
    timers.tick(Span::ZERO, &mut n);
    assert_eq!(n, 1);
    assert!(!timers.exists(h));
}

#[test]
fn default_and_stale_handles_answer_false_and_none() {
    let mut timers = TimerManager::<()>::new();
    let stale = timers.after(secs(1.0)).call(|_, _| {});
    assert!(timers.clear(stale));
    let live = timers.after(secs(2.0)).call(|_, _| {});
    for h in [TimerHandle::default(), stale] {
        assert!(!timers.exists(h));
        assert!(!timers.is_active(h));
        assert!(!timers.is_paused(h));
        assert!(!timers.is_pending(h));
        assert_eq!(timers.rate(h), None);
        assert_eq!(timers.elapsed(h), None);
        assert_eq!(timers.remaining(h), None);
        assert_eq!(timers.calls_made(h), None);
        assert_eq!(timers.state(h), None);
        assert!(!timers.clear(h));
        assert!(!timers.pause(h));
        assert!(!timers.unpause(h));
        assert!(!timers.fire_now(h, &mut ()));
    }
    // the stale handle did not touch the timer that may share its slot
    assert_eq!(timers.remaining(live), Some(secs(2.0)));
    assert!(timers.is_active(live));
}

#[test]
fn queries_follow_a_looping_timer() {
    // Unreal's UT-08 without the priming frame or float tolerance.
    let mut timers = TimerManager::<u32>::new();
    let h = timers.every(secs(1.5)).call(|n, _| *n += 1);
    let mut n = 0;
    assert_eq!(
        (timers.elapsed(h), timers.remaining(h)),
        (Some(Span::ZERO), Some(secs(1.5)))
    );
    for _ in 0..20 {
        timers.tick(frame(), &mut n);
    }
    assert_eq!(n, 1);
    assert_eq!(timers.elapsed(h), Some(secs(0.5)));
    assert_eq!(timers.remaining(h), Some(secs(1.0)));
    assert_eq!(timers.calls_made(h), Some(1));
    for _ in 0..20 {
        timers.tick(frame(), &mut n);
    }
    assert_eq!(n, 2);
    assert_eq!(timers.elapsed(h), Some(secs(1.0)));
    assert_eq!(timers.remaining(h), Some(secs(0.5)));
    assert_eq!(timers.state(h), Some(TimerState::Active));
}

#[test]
fn a_span_too_large_to_represent_never_fires() {
    let mut timers = TimerManager::<u32>::new();
    timers.tick(secs(1.0), &mut 0);
    let h = timers.after(Span::MAX).call(|n, _| *n += 1);
    let h2 = timers.every(Span::MAX).call(|n, _| *n += 1);
    let mut n = 0;
    timers.tick(Span::MAX, &mut n);
    timers.tick(Span::MAX, &mut n);
    assert_eq!(n, 0);
    assert!(timers.exists(h) && timers.exists(h2));
    assert_eq!(timers.remaining(h), Some(Span::MAX));
    assert!(timers.pause(h) && timers.unpause(h));
    assert_eq!(timers.remaining(h), Some(Span::MAX));
}

#[test]
fn list_reports_every_live_timer_in_set_order() {
    let mut timers = TimerManager::<()>::new();
    let a = timers
        .after(secs(1.0))
        .name("a")
        .owner(OwnerId::from(3))
        .tag(9)
        .call(|_, _| {});
    let b = timers.every(secs(2.0)).call(|_, _| {});
    timers.pause(b);
    let list = timers.list();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].handle, a);
    assert_eq!(list[0].name.as_deref(), Some("a"));
    assert_eq!(list[0].owner, Some(OwnerId::from(3)));
    assert_eq!(list[0].tag, Some(9));
    assert!(!list[0].looping);
    assert_eq!(list[1].handle, b);
    assert_eq!(list[1].state, TimerState::Paused);
    assert_eq!(list[1].rate, secs(2.0));
    assert_eq!(list[1].remaining, secs(2.0));
}

/// `TimerCx::tag` and `TimerCx::is_last_call`: one callback shared by many timers, each
/// finding its data by tag and knowing its last call.
#[test]
fn a_callback_sees_its_tag_and_its_last_call() {
    let mut timers = TimerManager::<Vec<(u64, bool)>>::new();
    let cb = |log: &mut Vec<(u64, bool)>, cx: &mut TimerCx<'_, Vec<(u64, bool)>>| {
        log.push((cx.tag().unwrap_or(0), cx.is_last_call()));
    };
    timers.after(secs(0.1)).tag(1).call(cb);
    timers.every(secs(0.1)).times(2).tag(2).call(cb);
    timers.every(secs(0.1)).call(cb); // untagged, endless
    timers
        .every(secs(0.1))
        .tag(4)
        .call(|log: &mut Vec<(u64, bool)>, cx| {
            cx.clear_self();
            log.push((cx.tag().unwrap_or(0), cx.is_last_call()));
        });
    let mut log = Vec::new();
    timers.tick(secs(0.1), &mut log);
    timers.tick(secs(0.1), &mut log);
    assert_eq!(
        log,
        [
            (1, true),
            (2, false),
            (0, false),
            (0, true), // cleared itself: its tag went with it
            (2, true),
            (0, false)
        ]
    );
}
