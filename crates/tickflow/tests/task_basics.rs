//! Async tasks: the waits, `with`, spawn order, awaiting tasks, combinators.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::future::{self, Either};
use tickflow::prelude::*;
use tickflow::{FrameReport, Tickable, TickableCx};

#[derive(Default)]
struct Game {
    log: Vec<String>,
    hp: u32,
}

fn log(cx: &TaskCx<Game>, what: &str) {
    let line = format!("{what} @{}", cx.clocks().frame());
    cx.with(|g| g.log.push(line));
}

fn run(sched: &mut Scheduler<Game>, game: &mut Game, frames: usize) -> Vec<FrameReport> {
    (0..frames).map(|_| sched.tick(secs(0.1), game)).collect()
}

#[test]
fn the_waits_resume_in_the_expected_frames() {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        log(&cx, "start");
        cx.delay(secs(0.25)).await; // started at 0: due 0.25, reached at 0.3
        log(&cx, "delay");
        cx.next_frame().await;
        log(&cx, "next_frame");
        cx.delay(Frames(3)).await;
        log(&cx, "frames(3)");
        cx.delay(Frames(0)).await;
        log(&cx, "frames(0)");
        cx.until(|g: &Game| g.hp >= 3).await;
        log(&cx, "until");
        cx.with(|g| g.hp = 100);
    });
    let mut game = Game::default();
    for _ in 0..12 {
        sched.tick(secs(0.1), &mut game);
        game.hp += 1;
    }
    assert_eq!(
        game.log,
        [
            "start @1",
            "delay @3",
            "next_frame @4",
            "frames(3) @7",
            "frames(0) @7",
            "until @7"
        ]
    );
    assert_eq!(game.hp, 106); // 100 in frame 7, then +1 after each of frames 7..=12
    assert_eq!(sched.tasks().len(), 0);
}

#[test]
fn until_is_checked_once_per_frame_until_it_holds() {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        cx.until(|g: &Game| g.hp >= 4).await;
        log(&cx, "hp");
    });
    let mut game = Game::default();
    let reports: Vec<_> = (0..6)
        .map(|_| {
            game.hp += 1;
            sched.tick(secs(0.1), &mut game)
        })
        .collect();
    assert_eq!(game.log, ["hp @4"]);
    let polls: Vec<_> = reports.iter().map(|r| r.tasks_polled).collect();
    assert_eq!(
        polls,
        [1, 1, 1, 1, 0, 0],
        "polled once per frame while waiting"
    );
}

#[test]
fn woken_tasks_run_in_spawn_order() {
    let mut sched = Scheduler::<Game>::new();
    // Finished tasks free their slots; later tasks reuse them in another order.
    for _ in 0..3 {
        sched.tasks().spawn(None, |_| async {});
    }
    run(&mut sched, &mut Game::default(), 1);
    for name in ["a", "b", "c", "d"] {
        sched.tasks().spawn(None, move |cx| async move {
            for _ in 0..3 {
                cx.delay(secs(0.2)).await;
                log(&cx, name);
            }
        });
    }
    let mut game = Game::default();
    run(&mut sched, &mut game, 3);
    assert_eq!(game.log, ["a @3", "b @3", "c @3", "d @3"]);
}

#[test]
fn a_task_can_await_another() {
    let mut sched = Scheduler::<Game>::new();
    let worker = sched.tasks().spawn(None, |cx| async move {
        cx.delay(secs(0.3)).await;
        log(&cx, "worker done");
    });
    let w = worker.task_ref();
    let doomed = sched.tasks().spawn(None, |cx| async move {
        cx.delay(secs(10.0)).await;
    });
    let d = doomed.task_ref();
    sched.tasks().spawn(None, |cx| async move {
        assert_eq!(w.await, Ok(()));
        log(&cx, "boss saw it");
        assert_eq!(d.await, Err(tickflow::latent::Cancelled));
        log(&cx, "saw the cancel");
    });
    let mut game = Game::default();
    run(&mut sched, &mut game, 4);
    assert!(worker.is_finished() && !worker.is_cancelled());
    assert!(doomed.cancel());
    run(&mut sched, &mut game, 1);
    assert!(doomed.is_cancelled());
    // Resumed in the same latent stage as the task it awaited, in a later pass.
    assert_eq!(
        game.log,
        ["worker done @3", "boss saw it @3", "saw the cancel @5"]
    );
}

#[test]
fn join_and_select_work() {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        future::join(cx.delay(secs(0.2)), cx.delay(Frames(4))).await;
        log(&cx, "joined");
        let first = future::select(cx.delay(secs(0.5)), cx.delay(secs(0.2))).await;
        assert!(matches!(first, Either::Right(_)));
        log(&cx, "selected");
        cx.delay(secs(0.1)).await;
        log(&cx, "after");
    });
    let mut game = Game::default();
    run(&mut sched, &mut game, 10);
    assert_eq!(game.log, ["joined @5", "selected @7", "after @8"]);
    assert_eq!(
        sched.timers().len(),
        0,
        "the losing delay's timer was cleared"
    );
}

#[test]
fn tasks_spawn_from_ticks_tasks_and_commands() {
    let mut sched = Scheduler::<Game>::new();
    let cmds = sched.commands();
    sched
        .ticks()
        .add(TickSettings::named("spawner"), move |_: &mut Game, cx| {
            if cx.clocks().frame() == 2 {
                cmds.tasks().spawn(None, |cx| async move {
                    log(&cx, "from a tick");
                    cx.commands()
                        .tasks()
                        .spawn(None, |cx| async move { log(&cx, "from a task") });
                });
            }
        });
    let mut game = Game::default();
    let reports = run(&mut sched, &mut game, 3);
    assert_eq!(game.log, ["from a tick @2", "from a task @2"]);
    assert_eq!((reports[1].tasks_polled, reports[1].tasks_ended), (2, 2));
}

/// Wakes itself and returns `Pending` once: a yield.
struct YieldNow(bool);
impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn a_task_that_wakes_itself_yields_to_the_next_frame() {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        loop {
            YieldNow(false).await;
            cx.with(|g| g.hp += 1);
        }
    });
    let mut game = Game::default();
    let reports = run(&mut sched, &mut game, 5);
    assert_eq!(game.hp, 4);
    assert!(reports.iter().all(|r| r.tasks_polled == 1));
}

#[test]
fn latent_stage_runs_after_tickables_and_before_post_update_work() {
    struct T;
    impl Tickable<Game> for T {
        fn tick(&mut self, g: &mut Game, _cx: &mut TickableCx<'_, Game>) {
            g.log.push("tickable".into());
        }
    }
    let mut sched = Scheduler::<Game>::new();
    sched.ticks().add(
        TickSettings::named("late").in_group(TickGroup::PostUpdateWork),
        |g: &mut Game, _| g.log.push("post update".into()),
    );
    sched.tickables().add(T);
    sched
        .latent()
        .delay(OwnerId::from(1), 0, Span::ZERO, |g: &mut Game, _| {
            g.log.push("latent action".into())
        });
    sched.tasks().spawn(
        None,
        |cx| async move { cx.with(|g| g.log.push("task".into())) },
    );
    let mut game = Game::default();
    sched.set_stage_timing(true);
    let report = sched.tick(secs(0.1), &mut game);
    assert_eq!(
        game.log,
        ["tickable", "latent action", "task", "post update"]
    );
    assert_eq!((report.latent_completed, report.tasks_ended), (1, 1));
    assert!(report.stage_time(tickflow::Stage::Latent) > std::time::Duration::ZERO);
}

#[test]
#[should_panic(expected = "its scheduler is not running this task")]
fn with_outside_a_poll_panics() {
    let mut sched = Scheduler::<Game>::new();
    let keep = std::sync::Arc::new(std::sync::Mutex::new(None));
    let k = keep.clone();
    sched.tasks().spawn(None, move |cx| {
        *k.lock().unwrap() = Some(cx);
        async {}
    });
    let cx = keep.lock().unwrap().take().unwrap();
    cx.with(|g| g.hp = 1);
}

#[test]
#[should_panic(expected = "TaskCx::with")]
fn nested_with_panics() {
    let mut sched = Scheduler::<Game>::new();
    sched.tasks().spawn(None, |cx| async move {
        let inner = cx;
        cx.with(move |_| inner.with(|g| g.hp = 1));
    });
    sched.tick(secs(0.1), &mut Game::default());
}
