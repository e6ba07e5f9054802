//! The `Frames` clock and the frame number: by default every frame counts on both; with
//! `set_frame_clock_pauses(true)` paused frames count only as frame numbers, so frame timers
//! and frame waits of tasks count the frames the game ran (issue 29, defect 14).

use tickflow::prelude::*;
use tickflow::snapshot::Registry;

#[derive(Default, Debug)]
struct Game {
    log: Vec<String>,
}

/// Frame `k` of the game: paused in frames 2..=6 (five paused frames).
fn run(sched: &mut Scheduler<Game>, game: &mut Game, frames: std::ops::RangeInclusive<u64>) {
    for k in frames {
        sched.set_paused((2..=6).contains(&k));
        sched.tick(millis(16), game);
    }
}

/// A frame timer, a task waiting three frames then one more, and a tick function that notes
/// the frame number and the `Frames` clock.
fn world(pauses: bool) -> Scheduler<Game> {
    let mut sched = Scheduler::<Game>::new();
    sched.set_frame_clock_pauses(pauses);
    assert_eq!(sched.frame_clock_pauses(), pauses);
    sched
        .timers()
        .after(Frames(3))
        .name("three")
        .call(|g: &mut Game, cx| g.log.push(format!("timer @{}", cx.clocks().frame())));
    sched.tasks().spawn(None, |cx| async move {
        cx.delay(Frames(3)).await;
        let f = cx.clocks().frame();
        cx.with(|g| g.log.push(format!("task @{f}")));
        cx.next_frame().await;
        let f = cx.clocks().frame();
        cx.with(|g| g.log.push(format!("next @{f}")));
    });
    sched
}

#[test]
fn by_default_paused_frames_count_on_the_frame_clock() {
    let mut sched = world(false);
    let mut game = Game::default();
    run(&mut sched, &mut game, 1..=9);
    // The task's wait starts at its first poll, in frame 1.
    assert_eq!(game.log, ["timer @3", "task @4", "next @5"]);
    let c = sched.clocks();
    assert_eq!((c.frame(), c.now(Domain::Frames).flicks()), (9, 9));
    assert_eq!(c.delta(Domain::Frames).flicks(), 1);
}

#[test]
fn a_pausing_frame_clock_counts_only_running_frames() {
    let mut sched = world(true);
    let mut game = Game::default();
    run(&mut sched, &mut game, 1..=6);
    assert!(game.log.is_empty(), "{:?}", game.log);
    let c = sched.clocks();
    assert_eq!((c.frame(), c.now(Domain::Frames).flicks()), (6, 1));
    assert_eq!(
        c.delta(Domain::Frames),
        Span::ZERO,
        "a paused frame moves it by nothing"
    );
    run(&mut sched, &mut game, 7..=10);
    // Running frames 1, 7, 8: the third is frame 8; the task waits from its first poll in
    // frame 1 for three more running frames. `next_frame` is the next frame, paused or not.
    assert_eq!(game.log, ["timer @8", "task @9", "next @10"]);
    let c = sched.clocks();
    assert_eq!((c.frame(), c.now(Domain::Frames).flicks()), (10, 5));
}

#[test]
fn a_burst_stopped_by_the_fire_budget_does_not_carry_into_a_paused_frame() {
    // A game-clock timer 5 periods late, with a budget of 2 calls per tick: the rest of the
    // burst runs in the next ticks, the first of them paused. The burst count belongs to the
    // tick (the frame number), so a stopped frame clock changes nothing here.
    fn log(pauses: bool) -> Vec<String> {
        let mut sched = Scheduler::<Game>::new();
        sched.set_frame_clock_pauses(pauses);
        sched.timers().set_fire_budget(Some(2));
        sched
            .timers()
            .every(millis(10))
            .catch_up(CatchUp::Burst)
            .call(|g: &mut Game, cx| {
                let line = format!("{} of {}", cx.call_index(), cx.calls_this_tick());
                g.log.push(line);
            });
        let mut game = Game::default();
        sched.tick(millis(16), &mut game);
        sched.tick(millis(50), &mut game);
        sched.set_paused(true);
        sched.tick(millis(16), &mut game);
        sched.tick(millis(16), &mut game);
        game.log
    }
    assert_eq!(log(true), log(false));
    assert_eq!(log(true).len(), 6);
}

/// The frame timer's callback, as `world` sets it.
fn bind() -> Registry<Game> {
    Registry::new().timer("three", |g: &mut Game, cx: &mut TimerCx<Game>| {
        g.log.push(format!("timer @{}", cx.clocks().frame()))
    })
}

#[test]
fn a_snapshot_keeps_the_setting_and_both_counts() {
    let mut sched = world(true);
    let mut game = Game::default();
    run(&mut sched, &mut game, 1..=6);
    let snap = sched.snapshot();
    assert_eq!(snap.frame(), 6);
    let (mut restored, report) = Scheduler::restore(&snap, &mut bind()).unwrap();
    assert_eq!(report.tasks_not_saved, 1);
    assert!(restored.frame_clock_pauses());
    assert_eq!(restored.clocks().frame(), 6);
    assert_eq!(restored.clocks().now(Domain::Frames).flicks(), 1);
    assert_eq!(restored.snapshot().timers(), snap.timers());
    let mut again = Game::default();
    run(&mut restored, &mut again, 7..=9);
    assert_eq!(again.log, ["timer @8"]);
}

#[cfg(feature = "serde")]
#[test]
fn a_saved_frame_clock_ahead_of_the_frame_number_is_refused() {
    let mut sched = Scheduler::<Game>::new();
    sched.set_frame_clock_pauses(true);
    sched.set_paused(true);
    sched.tick(millis(16), &mut Game::default());
    let mut v = serde_json::to_value(sched.snapshot()).unwrap();
    // The frame number says 1 tick and the `Frames` clock 5: no scheduler gets there.
    v["timers"]["clocks"][2] = 5.into();
    let snap = serde_json::from_value(v).unwrap();
    let err = Scheduler::restore(&snap, &mut bind()).unwrap_err();
    assert!(
        matches!(&err, tickflow::snapshot::RestoreError::Corrupt { reason } if reason.contains("frame clock")),
        "{err}"
    );
}
