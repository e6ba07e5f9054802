//! Global order, bursts and the three catch-up policies (rule 4 of the `tickflow::timer` module docs), including the cases
//! where Unreal, Bevy and tokio disagree.

use tickflow::compat::UnrealTimers;
use tickflow::prelude::*;

type Log = Vec<(&'static str, f64)>;

fn sched(log: &mut Log, name: &'static str, t: Time) {
    // round to the microsecond for readable assertions
    log.push((name, (t.as_secs_f64() * 1e6).round() / 1e6));
}

#[test]
fn burst_calls_take_their_own_place_in_the_global_order() {
    // A due at 0.3/0.6/0.9 and B at 0.5: Unreal runs A, A, A, B; tickflow A, B, A, A.
    let mut timers = TimerManager::<Log>::new();
    timers
        .every(secs(0.3))
        .call(|l, cx| sched(l, "A", cx.scheduled()));
    timers
        .after(secs(0.5))
        .call(|l, cx| sched(l, "B", cx.scheduled()));
    let mut log = vec![];
    timers.tick(secs(1.0), &mut log);
    assert_eq!(log, vec![("A", 0.3), ("B", 0.5), ("A", 0.6), ("A", 0.9)]);
}

#[test]
fn ties_run_in_set_order() {
    let mut timers = TimerManager::<Vec<u32>>::new();
    for i in 0..5 {
        timers.after(secs(1.0)).call(move |l, _| l.push(i));
    }
    timers.every(secs(0.5)).call(|l, _| l.push(99)); // due at 0.5 and 1.0
    timers.after(secs(1.0)).call(|l, _| l.push(5));
    let mut log = vec![];
    timers.tick(secs(2.0), &mut log);
    assert_eq!(log, vec![99, 0, 1, 2, 3, 4, 99, 5, 99, 99]);
}

/// Period 0.1 s; frames end at 0.1, 0.45, 0.55 (one 0.35 s hitch).
fn hitch(policy: CatchUp) -> Vec<Vec<(f64, u64)>> {
    let mut timers = TimerManager::<Vec<(f64, u64)>>::new();
    timers.every(secs(0.1)).catch_up(policy).call(|l, cx| {
        l.push((
            (cx.scheduled().as_secs_f64() * 1e6).round() / 1e6,
            cx.calls_this_tick(),
        ))
    });
    let mut frames = vec![];
    for dt in [0.1, 0.35, 0.1, 0.1] {
        let mut log = vec![];
        timers.tick(secs(dt), &mut log);
        frames.push(log);
    }
    frames
}

#[test]
fn burst_calls_every_missed_period() {
    // tick at:   0.1    0.45                0.55   0.65
    // Burst:     0.1    0.2, 0.3, 0.4       0.5    0.6
    assert_eq!(
        hitch(CatchUp::Burst),
        vec![
            vec![(0.1, 1)],
            vec![(0.2, 3), (0.3, 3), (0.4, 3)],
            vec![(0.5, 1)],
            vec![(0.6, 1)],
        ]
    );
}

#[test]
fn once_drops_missed_periods_and_keeps_the_grid() {
    // Once:      0.1    0.2 (0.3, 0.4 lost) 0.5    0.6
    assert_eq!(
        hitch(CatchUp::Once),
        vec![
            vec![(0.1, 1)],
            vec![(0.2, 1)],
            vec![(0.5, 1)],
            vec![(0.6, 1)]
        ]
    );
}

#[test]
fn delay_restarts_the_period_from_the_late_tick() {
    // Delay:     0.1    0.2                 0.55   0.65
    assert_eq!(
        hitch(CatchUp::Delay),
        vec![
            vec![(0.1, 1)],
            vec![(0.2, 1)],
            vec![(0.55, 1)],
            vec![(0.65, 1)]
        ]
    );
}

#[test]
fn once_with_period_equal_to_frame_does_not_halve_the_rate() {
    // Unreal's bMaxOncePerFrame gives 0,1,0,1 here.
    let mut timers = TimerManager::<u32>::new();
    timers
        .every(secs(0.125))
        .catch_up(CatchUp::Once)
        .call(|n, _| *n += 1);
    let mut n = 0;
    for i in 1..=8 {
        timers.tick(secs(0.125), &mut n);
        assert_eq!(n, i);
    }
}

#[test]
fn a_long_frame_bursts_like_unreal_by_default() {
    // UT-14: looping 0.125 s, one 1.0 s frame: 8 calls, then 0.125 s remaining.
    let mut timers = TimerManager::<u32>::new();
    let h = timers.every(secs(0.125)).call(|n, _| *n += 1);
    let mut n = 0;
    timers.tick(secs(1.0), &mut n);
    assert_eq!(n, 8);
    assert_eq!(timers.remaining(h), Some(secs(0.125)));
}

#[test]
fn clearing_itself_mid_burst_drops_the_rest() {
    let mut timers = TimerManager::<u32>::new();
    let h = timers.every(secs(0.1)).call(|n, cx| {
        *n += 1;
        if *n == 2 {
            cx.clear_self();
        }
    });
    let mut n = 0;
    timers.tick(secs(1.0), &mut n);
    assert_eq!(n, 2);
    assert!(!timers.exists(h));
}

#[test]
fn re_setting_itself_mid_burst_replaces_the_timer() {
    // UT-10: the callback re-sets its own handle to a 1.0 s loop; the new timer counts from
    // the call's scheduled time and never fires in this tick.
    let mut timers = TimerManager::<Vec<(u32, f64)>>::new();
    let mut h = TimerHandle::default();
    timers.set_timer(&mut h, secs(0.1), true, None, |log, cx| {
        log.push((1, cx.scheduled().as_secs_f64()));
        let mut me = cx.handle();
        cx.timers()
            .set_timer(&mut me, secs(1.0), true, None, |log, cx| {
                log.push((2, (cx.scheduled().as_secs_f64() * 1e6).round() / 1e6))
            });
    });
    let mut log = vec![];
    timers.tick(secs(0.35), &mut log); // old timer: one call only, the burst is gone
    assert_eq!(log, vec![(1, 0.1)]);
    assert_eq!(timers.len(), 1);
    for _ in 0..10 {
        timers.tick(secs(0.1), &mut log);
    }
    assert_eq!(log, vec![(1, 0.1), (2, 1.1)]);
}

#[test]
fn a_timer_set_in_a_callback_with_a_tiny_delay_waits_for_the_next_tick() {
    // UT-22, and no infinite loop from a callback that re-arms itself with a zero delay.
    fn rearm(n: &mut u32, cx: &mut TimerCx<'_, u32>) {
        *n += 1;
        cx.timers().after(Span::ZERO).call(rearm);
    }
    let mut timers = TimerManager::<u32>::new();
    timers.after(secs(0.1)).call(rearm);
    let mut n = 0;
    timers.tick(secs(1.0), &mut n);
    assert_eq!(n, 1);
    timers.tick(secs(1.0), &mut n);
    assert_eq!(n, 2);
    assert_eq!(timers.len(), 1);
}

#[test]
fn a_chain_of_one_shots_does_not_drift() {
    // Each link sets the next 0.1 s after its own scheduled time, at 1/60 s frames.
    fn link(log: &mut Vec<Time>, cx: &mut TimerCx<'_, Vec<Time>>) {
        log.push(cx.scheduled());
        cx.timers().after(secs(0.1)).call(link);
    }
    let mut timers = TimerManager::<Vec<Time>>::new();
    timers.after(secs(0.1)).call(link);
    let mut log = vec![];
    for _ in 0..6000 {
        timers.tick(Span::frames(1, 60), &mut log);
    }
    assert_eq!(log.len(), 1000);
    for (k, t) in log.iter().enumerate() {
        assert_eq!(*t, Time::ZERO + secs(0.1) * (k as u64 + 1));
    }
}

#[test]
fn clocks_are_merged_by_place_in_the_tick() {
    // Game runs at half speed: game 0.125 is halfway through the frame, real 0.5 at its end;
    // calls at the same place run in set order.
    let mut timers = TimerManager::<Vec<&'static str>>::new();
    timers.after(Frames(1)).call(|l, _| l.push("frame end"));
    timers
        .after(secs(0.5))
        .real()
        .call(|l, _| l.push("real end"));
    timers.after(secs(0.125)).call(|l, _| l.push("game half"));
    timers.after(secs(0.25)).call(|l, _| l.push("game end"));
    timers
        .after(secs(0.1))
        .real()
        .call(|l, _| l.push("real fifth"));
    let mut log = vec![];
    timers.tick_step(secs(0.25), secs(0.5), &mut log);
    assert_eq!(
        log,
        vec![
            "real fifth",
            "game half",
            "frame end",
            "real end",
            "game end"
        ]
    );
}

#[test]
fn lateness_and_call_index_are_reported() {
    let mut timers = TimerManager::<Vec<(u64, Span)>>::new();
    timers
        .every(secs(0.25))
        .call(|l, cx| l.push((cx.call_index(), cx.lateness())));
    let mut log = vec![];
    timers.tick(secs(0.3), &mut log);
    timers.tick(secs(0.3), &mut log);
    timers.tick(secs(0.15), &mut log);
    assert_eq!(log, vec![(0, secs(0.05)), (1, secs(0.1)), (2, Span::ZERO)]);
}
