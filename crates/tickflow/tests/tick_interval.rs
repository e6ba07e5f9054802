//! Interval tick functions (the rules of the `tickflow::tick` module docs): the first tick comes at once, later ones when the
//! time since the previous due time reaches the interval (inclusive), overrun credited, never
//! a burst.

use std::sync::{Arc, Mutex};

use tickflow::prelude::*;

/// (frame, dt in seconds) of every tick.
type Ticks = Arc<Mutex<Vec<(u64, f64)>>>;

fn interval_tick(sched: &mut Scheduler<()>, interval: Span) -> (TickHandle, Ticks) {
    let ticks: Ticks = Arc::default();
    let t = ticks.clone();
    let h = sched.ticks().add(
        TickSettings {
            interval,
            ..TickSettings::named("interval")
        },
        move |_, cx| {
            t.lock()
                .unwrap()
                .push((cx.clocks().frame(), cx.dt().as_secs_f64()))
        },
    );
    (h, ticks)
}

fn frames(ticks: &Ticks) -> Vec<u64> {
    ticks.lock().unwrap().iter().map(|t| t.0).collect()
}

fn dts(ticks: &Ticks) -> Vec<f64> {
    ticks
        .lock()
        .unwrap()
        .iter()
        .map(|t| (t.1 * 1000.0).round() / 1000.0)
        .collect()
}

/// Interval 0.25 s at 0.1 s frames:
///
/// ```text
/// frame   1    2    3    4    5    6    7    8    9   10   11   12   13   14
/// t      0.1  0.2  0.3  0.4  0.5  0.6  0.7  0.8  0.9  1.0  1.1  1.2  1.3  1.4
/// tick    x              x         x              x         x              x
/// dt     0.1            0.3       0.2            0.3       0.2            0.3
/// ```
#[test]
fn interval_a_quarter_second_at_tenth_second_frames() {
    let mut sched = Scheduler::new();
    let (_, ticks) = interval_tick(&mut sched, secs(0.25));
    for _ in 0..15 {
        sched.tick(secs(0.1), &mut ());
    }
    assert_eq!(frames(&ticks), [1, 4, 6, 9, 11, 14]);
    assert_eq!(dts(&ticks), [0.1, 0.3, 0.2, 0.3, 0.2, 0.3]);
}

/// Interval 0.2 s at 0.1 s frames ticks every second frame from the start (inclusive
/// boundary; Unreal waits three frames for the second tick).
#[test]
fn interval_an_exact_multiple_of_the_frame_ticks_every_second_frame() {
    let mut sched = Scheduler::new();
    let (_, ticks) = interval_tick(&mut sched, secs(0.2));
    for _ in 0..15 {
        sched.tick(secs(0.1), &mut ());
    }
    assert_eq!(frames(&ticks), [1, 3, 5, 7, 9, 11, 13, 15]);
    assert_eq!(dts(&ticks), [0.1, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]);
}

/// A hitch gives one tick with the accumulated delta, never a burst (UK-15).
#[test]
fn a_hitch_is_one_tick_with_the_accumulated_delta() {
    let mut sched = Scheduler::new();
    sched.set_max_delta(secs(10.0));
    let (_, ticks) = interval_tick(&mut sched, secs(0.1));
    for dt in [0.1, 0.5, 0.1, 0.1] {
        sched.tick(secs(dt), &mut ());
    }
    assert_eq!(frames(&ticks), [1, 2, 3, 4]);
    assert_eq!(dts(&ticks), [0.1, 0.5, 0.1, 0.1]);

    // A longer interval through a 1 s hitch: one tick at the hitch, then a fresh 0.2 s
    // interval from there.
    let mut sched = Scheduler::new();
    sched.set_max_delta(secs(10.0));
    let (_, ticks) = interval_tick(&mut sched, secs(0.2));
    for dt in [0.1, 0.1, 0.1, 1.0, 0.1, 0.1, 0.1, 0.1] {
        sched.tick(secs(dt), &mut ());
    }
    assert_eq!(frames(&ticks), [1, 3, 4, 6, 8]);
    assert_eq!(dts(&ticks), [0.1, 0.2, 1.0, 0.2, 0.2]);
}

#[test]
fn the_average_period_is_the_interval() {
    let mut sched = Scheduler::new();
    let (_, ticks) = interval_tick(&mut sched, secs(0.25));
    for _ in 0..10_000 {
        sched.tick(secs(0.1), &mut ());
    }
    // 1,000 s of game time: one tick at the start, then one per 0.25 s.
    assert_eq!(ticks.lock().unwrap().len(), 4_000);
}

#[test]
fn set_tick_interval_restarts_the_cooldown() {
    let mut sched = Scheduler::new();
    let (h, ticks) = interval_tick(&mut sched, secs(0.5));
    for _ in 0..3 {
        sched.tick(secs(0.1), &mut ()); // ticks on frame 1, then waits until t = 0.6
    }
    assert!(sched.ticks().set_interval(h, secs(0.2))); // at t = 0.3: next tick at 0.5
    for _ in 0..5 {
        sched.tick(secs(0.1), &mut ());
    }
    assert_eq!(frames(&ticks), [1, 5, 7]);
    assert_eq!(dts(&ticks), [0.1, 0.4, 0.2]);
    // Back to every frame.
    assert!(sched.ticks().set_interval(h, Span::ZERO));
    sched.tick(secs(0.1), &mut ());
    sched.tick(secs(0.1), &mut ());
    assert_eq!(frames(&ticks), [1, 5, 7, 9, 10]);
    assert!(!sched.ticks().set_interval(TickHandle::default(), secs(1.0)));
}

#[test]
fn disabling_resets_the_interval() {
    let mut sched = Scheduler::new();
    let (h, ticks) = interval_tick(&mut sched, secs(0.5));
    sched.tick(secs(0.1), &mut ()); // frame 1 ticks
    sched.tick(secs(0.1), &mut ());
    sched.ticks().set_enabled(h, false);
    sched.tick(secs(0.1), &mut ());
    sched.ticks().set_enabled(h, true);
    sched.tick(secs(0.1), &mut ()); // frame 4: first tick after enabling, with the frame's dt
    sched.tick(secs(0.1), &mut ());
    assert_eq!(frames(&ticks), [1, 4]);
    assert_eq!(dts(&ticks), [0.1, 0.1]);
}

#[test]
fn only_due_functions_cost_anything() {
    // 1,000 functions with a 10 s interval tick once, then never in the next 99 frames.
    let mut sched = Scheduler::<u32>::new();
    for _ in 0..1_000 {
        sched.ticks().add(
            TickSettings {
                interval: secs(10.0),
                ..TickSettings::default()
            },
            |n, _| *n += 1,
        );
    }
    let mut n = 0;
    let first = sched.tick(secs(0.1), &mut n);
    assert_eq!(first.ticks_run, 1_000);
    for _ in 0..99 {
        assert_eq!(sched.tick(secs(0.1), &mut n).ticks_run, 0);
    }
    assert_eq!(n, 1_000);
}

/// A due interval function keeps its registration-order place after an earlier function of
/// its group was removed and its slot reused (the removal is patched into the plan, leaving a
/// stale handle that once sorted last and made every due function jump the rest of the group).
#[test]
fn due_interval_functions_keep_their_place_after_a_removal() {
    let mut sched = Scheduler::<Vec<&'static str>>::new();
    let add = |sched: &mut Scheduler<Vec<&'static str>>, name: &'static str, interval| {
        let s = TickSettings {
            interval,
            ..TickSettings::named(name)
        };
        sched.ticks().add(s, move |log, _| log.push(name))
    };
    let a = add(&mut sched, "a", Span::ZERO);
    add(&mut sched, "b", Span::ZERO);
    add(&mut sched, "c", secs(0.2));
    add(&mut sched, "d", Span::ZERO);
    let mut log = Vec::new();
    sched.tick(secs(0.1), &mut log);
    assert_eq!(log, ["a", "b", "c", "d"]);
    assert!(sched.ticks().remove(a));
    let e = add(&mut sched, "e", Span::ZERO); // takes a's slot, with a new generation
    assert!(!sched.ticks().contains(a) && sched.ticks().contains(e));
    let mut frames = Vec::new();
    for _ in 0..4 {
        log.clear();
        sched.tick(secs(0.1), &mut log);
        frames.push(log.concat());
    }
    // c ticks every other frame, always between b and d.
    assert_eq!(frames, ["bde", "bcde", "bde", "bcde"]);
}

/// A function that takes the slot of a removed interval function never runs on the removed
/// one's queued cooldown. Two guards keep it out: the entry's stamp, checked when the frame
/// drains the calendar (the stamp moves on when a slot is freed and when it is taken), and
/// the due check before the call. For each number of frames the first function ran, its
/// pending entry carries another stamp, and one of them equals the newcomer's while it waits;
/// the test fails when both guards are gone.
#[test]
fn a_reused_slot_ignores_the_removed_functions_queued_cooldown() {
    for ran in 1..12 {
        let mut sched = Scheduler::new();
        let (old, _) = interval_tick(&mut sched, secs(0.3));
        for _ in 0..ran {
            sched.tick(secs(0.1), &mut ());
        }
        assert!(sched.ticks().remove(old));
        let (new, ticks) = interval_tick(&mut sched, secs(10.0));
        assert!(!sched.ticks().contains(old) && sched.ticks().contains(new));
        for _ in 0..20 {
            sched.tick(secs(0.1), &mut ());
        }
        // Its first tick at once, the next one 10 s later.
        assert_eq!(frames(&ticks), [ran + 1], "after {ran} frames");
    }
}
