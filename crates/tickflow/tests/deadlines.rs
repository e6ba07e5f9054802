//! Absolute deadlines (`Timers::at`, `TaskCx::delay_until`) and changing the time left
//! (`set_remaining`, `set_elapsed`), through the scheduler.

use tickflow::prelude::*;

fn at(s: f64) -> Time {
    Time::ZERO + secs(s)
}

/// Set from a tick function before the timer stage (a frame in progress, whose clocks have not
/// moved yet), a deadline is still the time it names, not that time plus the frame's step.
#[test]
fn a_deadline_set_inside_a_frame_is_exact() {
    let mut sched = Scheduler::<Vec<(u64, Time)>>::new();
    sched.ticks().add(TickSettings::named("early"), |_, cx| {
        if cx.clocks().frame() == 2 {
            cx.timers()
                .at(at(0.45))
                .call(|log, cx| log.push((cx.clocks().frame(), cx.scheduled())));
        }
    });
    let mut log = Vec::new();
    for _ in 0..6 {
        sched.tick(secs(0.1), &mut log);
    }
    assert_eq!(log, [(5, at(0.45))]);
}

#[test]
fn a_deadline_passed_fires_in_the_next_tick_and_real_ones_run_while_paused() {
    let mut sched = Scheduler::<Vec<&str>>::new();
    let mut log = Vec::new();
    for _ in 0..4 {
        sched.tick(secs(0.25), &mut log); // the game clock's longest step
    }
    sched.timers().at(at(0.5)).call(|log, _| log.push("late"));
    sched.tick(Span::ZERO, &mut log);
    assert_eq!(log, ["late"]);
    sched
        .timers()
        .at(at(1.5))
        .real()
        .call(|log, _| log.push("real"));
    let game = sched.timers().at(at(1.5)).call(|log, _| log.push("game"));
    sched.set_paused(true);
    sched.tick(secs(0.5), &mut log);
    assert_eq!(log, ["late", "real"]);
    assert_eq!(sched.timers().remaining(game), Some(secs(0.5)));
}

#[test]
fn time_left_changes_while_paused_and_from_commands() {
    let mut sched = Scheduler::<u32>::new();
    let h = sched.timers().every(secs(2.0)).call(|n, _| *n += 1);
    let mut n = 0;
    sched.tick(secs(0.5), &mut n);
    assert!(sched.timers().pause(h));
    assert!(sched.timers().set_remaining(h, secs(0.25)));
    assert_eq!(sched.timers().fraction(h), Some(0.875));
    sched.tick(secs(1.0), &mut n);
    assert_eq!(n, 0, "paused");
    assert!(sched.timers().unpause(h));
    // Queued from anywhere: cut what is left by 0.25 s when applied.
    sched.commands().timers(move |t| {
        let left = t.remaining(h).unwrap();
        t.set_remaining(h, left.saturating_sub(secs(0.25)));
    });
    sched.tick(Span::ZERO, &mut n);
    assert_eq!(n, 1);
    assert_eq!(sched.timers().remaining(h), Some(secs(2.0)));
    assert!(sched.timers().set_elapsed(h, secs(5.0)));
    assert_eq!(sched.timers().remaining(h), Some(Span::ZERO));
    let stale = h;
    sched.timers().clear(h);
    assert!(!sched.timers().set_remaining(stale, secs(1.0)));
    assert!(!sched.timers().set_elapsed(stale, secs(1.0)));
}

#[test]
fn a_task_waits_until_a_time_on_either_clock() {
    let mut sched = Scheduler::<Vec<(&str, u64)>>::new();
    sched.tasks().spawn(None, |cx| async move {
        cx.delay_until(at(0.3)).await;
        let f = cx.clocks().frame();
        cx.with(|log| log.push(("game", f)));
    });
    sched.tasks().spawn(None, |cx| async move {
        cx.delay_until_real(at(0.2)).await;
        let f = cx.clocks().frame();
        cx.with(|log| log.push(("real", f)));
    });
    let mut log = Vec::new();
    sched.set_time_dilation(0.5);
    for _ in 0..6 {
        sched.tick(secs(0.1), &mut log);
    }
    // Real time reaches 0.2 s in frame 2; game time, at half speed, 0.3 s in frame 6.
    assert_eq!(log, [("real", 2), ("game", 6)]);
}
