//! The loop drivers through the public API: `FixedStep` against an exact reference (the sum of
//! every frame time as a fraction of a second), and `Pacer` against a reference that rescans
//! the deadline grid. Neither depends on the machine's speed: the pacer is given its times.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use tickflow::driver::{FixedStep, Pacer};
use tickflow::prelude::*;
use tickflow::time::CatchUp;

/// Flicks per second: a step of `s` flicks is `s / FLICKS` s.
const FLICKS: u128 = 705_600_000;

proptest! {
    #![proptest_config(crate::cases(256))]

    /// Steps run plus steps dropped are always exactly the whole steps in the total time fed
    /// (nanosecond frames against a flick step: nothing is rounded away), and the fraction
    /// left is what remains.
    #[test]
    fn fixed_steps_account_for_every_nanosecond(
        hz in prop::sample::select(vec![24u32, 30, 50, 60, 64, 90, 120, 144, 240, 1000]),
        cap in 1u32..20,
        frames in prop::collection::vec(0u64..200_000_000, 1..300),
    ) {
        let mut fixed = FixedStep::new(hz).max_steps(cap);
        let step = fixed.step();
        let (mut ran, mut dropped_flicks) = (0u128, 0u128);
        let mut total_ns = 0u128;
        // The reference: whole steps in the time fed since the last drop, capped per frame.
        let mut acc_ns_flicks = 0u128; // time not yet stepped, in ns·flicks/s (exact)
        let step_exact = u128::from(step.flicks()) * 1_000_000_000;
        for ns in frames {
            total_ns += u128::from(ns);
            acc_ns_flicks += u128::from(ns) * FLICKS;
            let due_steps = acc_ns_flicks / step_exact;
            acc_ns_flicks %= step_exact;
            let run = due_steps.min(u128::from(cap));
            let due = fixed.push(Duration::from_nanos(ns));
            prop_assert_eq!(u128::from(due.steps), run);
            prop_assert_eq!(
                u128::from(due.dropped.flicks()),
                (due_steps - run) * u128::from(step.flicks())
            );
            let alpha = acc_ns_flicks as f64 / step_exact as f64;
            prop_assert!((due.alpha - alpha).abs() < 1e-9);
            ran += u128::from(due.steps);
            dropped_flicks += u128::from(due.dropped.flicks());
        }
        let whole_steps = total_ns * FLICKS / 1_000_000_000 / u128::from(step.flicks());
        prop_assert_eq!(
            ran * u128::from(step.flicks()) + dropped_flicks,
            whole_steps * u128::from(step.flicks())
        );
    }

    /// The pacer's steps are the deadlines `start + n × period` passed, for random wake-up
    /// times, under each catch-up policy; a reference rescans the grid from the start.
    #[test]
    fn paced_steps_follow_the_deadline_grid(
        hz in prop::sample::select(vec![10u32, 30, 60, 64, 128]),
        policy in 0u8..3,
        wakes in prop::collection::vec(0u64..200_000, 1..200),
    ) {
        let t0 = Instant::now();
        let catch_up = [CatchUp::Burst, CatchUp::Once, CatchUp::Delay][policy as usize];
        let mut pacer = Pacer::new(hz).starting_at(t0).catch_up(catch_up);
        // Reference grid: (start, index of the next step).
        let (mut start, mut next) = (t0, 1u64);
        let mut now = t0;
        let deadline = |start: Instant, n: u64| {
            start + Duration::from(Span::frames(n, hz))
        };
        for us in wakes {
            now += Duration::from_micros(us);
            let mut behind = 0u64;
            while deadline(start, next + behind) <= now {
                behind += 1;
            }
            let expected = match catch_up {
                CatchUp::Burst => behind,
                _ => behind.min(1),
            };
            if behind > 0 {
                if catch_up == CatchUp::Delay && behind > 1 {
                    start = now;
                    next = 1;
                } else {
                    next += behind;
                }
            }
            prop_assert_eq!(pacer.due(now), expected);
            prop_assert_eq!(pacer.next_deadline(), deadline(start, next));
        }
    }
}

/// A fixed-step loop rendering at an uneven rate runs the scheduler's timers on the same
/// frames as a loop fed exactly one step per frame.
#[test]
fn uneven_render_frames_give_the_same_simulation() {
    fn simulate(frame_times: impl Iterator<Item = Duration>) -> Vec<u64> {
        let mut sched = Scheduler::<Vec<u64>>::new();
        sched
            .timers()
            .every(Span::from_millis(100))
            .call(|log, cx| log.push(cx.clocks().frame()));
        let mut fixed = FixedStep::new(60).max_steps(u32::MAX);
        let mut log = Vec::new();
        for dt in frame_times {
            fixed.run(dt, &mut sched, &mut log);
        }
        log
    }
    let even = simulate(std::iter::repeat_n(Duration::from_nanos(16_666_667), 600));
    let uneven = simulate(
        [3u64, 41, 9, 17, 17, 26, 1, 50]
            .into_iter()
            .cycle()
            .map(Duration::from_millis)
            .take(608), // 10 s and a little more
    );
    assert_eq!(even.len(), 100);
    assert_eq!(uneven[..100], even[..]);
}
