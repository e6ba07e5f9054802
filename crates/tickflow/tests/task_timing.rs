//! Tasks keep the timer rules: inclusive boundaries, the creation frame's delta never counts,
//! chained delays count from the previous due time, pause and dilation apply.

use tickflow::prelude::*;

#[derive(Default)]
struct Game {
    log: Vec<String>,
    frames: Vec<u64>,
}

fn note(cx: &TaskCx<Game>, what: &str) {
    let line = format!("{what} @{}", cx.clocks().frame());
    cx.with(|g| g.log.push(line));
}

/// A scheduler with one task that records the frame of every lap of
/// `loop { delay(0.1).await }`.
fn lap_recorder() -> Scheduler<Game> {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        loop {
            cx.delay(secs(0.1)).await;
            let f = cx.clocks().frame();
            cx.with(|g| g.frames.push(f));
        }
    });
    sched
}

/// `loop { delay(0.1).await }` at 0.03 s frames: lap k ends in the first frame reaching
/// k × 0.1 s, so 1,000 laps take exactly 100 s (a Blueprint Delay loop takes 120 s).
#[test]
fn a_delay_loop_keeps_an_exact_rhythm() {
    let mut sched = lap_recorder();
    let mut game = Game::default();
    for _ in 0..3334 {
        sched.tick(secs(0.03), &mut game);
    }
    assert_eq!(game.frames.len(), 1000);
    for (k, &frame) in game.frames.iter().enumerate() {
        let k = k as u64 + 1;
        assert_eq!(frame, (k * 10).div_ceil(3), "lap {k}");
    }
    // The last lap ended at the first frame past 100 s: 100.02 s, 20 ms late, not 20 s.
    assert_eq!(
        sched.clocks().now(Domain::Game),
        Time::ZERO + secs(0.03) * 3334
    );
}

#[test]
fn a_loop_catches_up_after_a_hitch_one_lap_per_frame() {
    let mut sched = lap_recorder();
    let mut game = Game::default();
    for f in 1..=100 {
        let dt = if f == 10 { 0.24 } else { 0.03 };
        sched.tick(secs(dt), &mut game);
    }
    // 99 × 0.03 + 0.24 = 3.21 s: 32 laps, none lost, none doubled in a frame.
    assert_eq!(game.frames.len(), 32);
    assert!(game.frames.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        &game.frames[2..6],
        [10, 11, 12, 13],
        "the hitch is caught up lap by lap"
    );
}

/// Tasks, timers and latent delays started at the same moment end in the same frame.
#[test]
fn tasks_timers_and_latent_delays_agree() {
    let mut sched = Scheduler::<Game>::new();
    let o = OwnerId::from(1);
    // Between frames.
    sched.tasks().spawn(None, |cx| async move {
        cx.delay(secs(0.3)).await;
        note(&cx, "task between");
    });
    sched.timers().after(secs(0.3)).call(|g: &mut Game, cx| {
        g.log
            .push(format!("timer between @{}", cx.now().as_secs_f64() * 10.0))
    });
    sched.latent().delay(o, 1, secs(0.3), |g: &mut Game, _| {
        g.log.push("latent between".into())
    });
    // Early in frame 2 and late in frame 2.
    for group in [TickGroup::PrePhysics, TickGroup::PostUpdateWork] {
        let cmds = sched.commands();
        let name = if group == TickGroup::PrePhysics {
            "early"
        } else {
            "late"
        };
        sched.ticks().add(
            TickSettings::named(name).in_group(group),
            move |_: &mut Game, cx| {
                if cx.clocks().frame() == 2 {
                    cmds.tasks().spawn(None, move |cx| async move {
                        cx.delay(secs(0.3)).await;
                        note(&cx, &format!("task {name}"));
                    });
                    cx.timers().after(secs(0.3)).call(move |g: &mut Game, cx| {
                        g.log
                            .push(format!("timer {name} @{}", cx.now().as_secs_f64() * 10.0))
                    });
                }
            },
        );
    }
    let mut game = Game::default();
    for _ in 0..8 {
        sched.tick(secs(0.1), &mut game);
    }
    let mut log = game.log.clone();
    log.sort();
    assert_eq!(
        log,
        [
            "latent between",
            "task between @3",
            "task early @5",
            "task late @5",
            "timer between @3",
            "timer early @5",
            "timer late @5",
        ]
    );
    let latent_at = game.log.iter().position(|l| l == "latent between").unwrap();
    assert_eq!(latent_at, 1, "after the timer of frame 3, before the task");
}

#[test]
fn zero_delay_resumes_next_frame() {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        note(&cx, "a");
        cx.delay(Span::ZERO).await;
        note(&cx, "b");
        cx.delay_real(Span::ZERO).await;
        note(&cx, "c");
    });
    let mut game = Game::default();
    for _ in 0..4 {
        sched.tick(secs(0.1), &mut game);
    }
    assert_eq!(game.log, ["a @1", "b @2", "c @3"]);
}

#[test]
fn pause_freezes_game_delays_only() {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        cx.delay(secs(0.3)).await;
        note(&cx, "game");
    });
    sched.tasks().spawn(None, |cx| async move {
        cx.delay_real(secs(0.3)).await;
        note(&cx, "real");
    });
    sched.tasks().spawn(None, |cx| async move {
        cx.next_frame().await;
        note(&cx, "next");
        cx.delay(Frames(2)).await;
        note(&cx, "frames");
    });
    sched.set_paused(true);
    let mut game = Game::default();
    for _ in 0..6 {
        sched.tick(secs(0.1), &mut game);
    }
    assert_eq!(game.log, ["next @2", "real @3", "frames @4"]);
    sched.set_paused(false);
    for _ in 0..3 {
        sched.tick(secs(0.1), &mut game);
    }
    assert_eq!(game.log.last().unwrap(), "game @9");
}

#[test]
fn time_dilation_applies_to_game_delays() {
    let mut sched = Scheduler::<Game>::new();
    sched.set_time_dilation(0.5);
    sched.tasks().spawn(None, |cx| async move {
        cx.delay(secs(1.0)).await;
        note(&cx, "game");
    });
    sched.tasks().spawn(None, |cx| async move {
        cx.delay_real(secs(1.0)).await;
        note(&cx, "real");
    });
    let mut game = Game::default();
    for _ in 0..25 {
        sched.tick(secs(0.1), &mut game);
    }
    assert_eq!(game.log, ["real @10", "game @20"]);
}
