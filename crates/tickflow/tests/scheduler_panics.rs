//! A panic anywhere leaves every part consistent, nothing lost, and the next frame normal:
//! frames aborted before their timer and latent stages, task destructors that panic, and
//! parallel tick functions that panic. Each test names the defect it guards against.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use tickflow::prelude::*;

fn frame() -> Span {
    secs(0.1)
}

fn quietly<R>(f: impl FnOnce() -> R) -> Option<R> {
    panic::catch_unwind(AssertUnwindSafe(f)).ok()
}

/// Defect: after a panic aborted a frame before its timer and latent stages, timers and latent
/// delays set between frames reported `is_pending() == true` and fired a frame late.
#[test]
fn after_an_aborted_frame_new_timers_and_delays_are_on_time() {
    let mut sched = Scheduler::<Vec<String>>::new();
    let boom = sched.ticks().add(TickSettings::named("boom"), |_, cx| {
        if cx.clocks().frame() == 1 {
            panic!("in PrePhysics");
        }
    });
    let mut log = Vec::new();
    assert!(quietly(|| sched.tick(frame(), &mut log)).is_none());
    assert_eq!(
        sched.clocks().now(Domain::Game),
        Time::ZERO + frame(),
        "the frame's time passed"
    );
    sched.ticks().remove(boom);
    let t = sched.timers().after(frame()).call(|log, cx| {
        log.push(format!("timer at {}", cx.now()));
    });
    assert!(!sched.timers().is_pending(t));
    sched.latent().delay(OwnerId::new(1), 0, frame(), |log, _| {
        log.push("delay".into())
    });
    sched.tick(frame(), &mut log);
    assert_eq!(log, ["timer at @0.2s", "delay"]);
}

/// A latent delay that was running when a frame aborted ends in the same frame as a timer of
/// the same length: the aborted frame's delta is owed to it.
#[test]
fn latent_delays_do_not_lose_an_aborted_frame() {
    let mut sched = Scheduler::<Vec<&str>>::new();
    sched
        .timers()
        .after(frame() * 3)
        .call(|log, _| log.push("timer"));
    sched
        .latent()
        .delay(OwnerId::new(1), 0, frame() * 3, |log, _| log.push("delay"));
    sched.ticks().add(TickSettings::named("boom"), |_, cx| {
        if cx.clocks().frame() == 2 {
            panic!("in PrePhysics");
        }
    });
    let mut log = Vec::new();
    sched.tick(frame(), &mut log);
    assert!(quietly(|| sched.tick(frame(), &mut log)).is_none());
    assert!(log.is_empty());
    sched.tick(frame(), &mut log);
    assert_eq!(log, ["timer", "delay"]);
}

/// A task spawned in a frame that then aborts before its timer stage counts its delays from
/// the time the abort leaves, as a timer set at the same moment does.
#[test]
fn a_task_spawned_in_an_aborted_frame_keeps_time_with_timers() {
    struct Game {
        log: Vec<String>,
    }
    let mut sched = Scheduler::<Game>::new();
    let mut game = Game { log: Vec::new() };
    sched
        .ticks()
        .add(TickSettings::named("spawner"), |_: &mut Game, cx| {
            if cx.clocks().frame() != 1 {
                return;
            }
            cx.timers()
                .after(frame() * 2)
                .call(|game: &mut Game, cx| game.log.push(format!("timer {}", cx.now())));
            cx.commands().tasks().spawn(None, |cx| async move {
                cx.delay(frame() * 2).await;
                let now = cx.clocks().now(Domain::Game);
                cx.with(|game: &mut Game| game.log.push(format!("task {now}")));
            });
            panic!("after spawning");
        });
    assert!(quietly(|| sched.tick(frame(), &mut game)).is_none());
    for _ in 0..3 {
        sched.tick(frame(), &mut game);
    }
    assert_eq!(game.log, ["timer @0.3s", "task @0.3s"]);
}

struct PanicOnDrop(Arc<AtomicU32>);
impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("a task destructor");
    }
}

/// Defect: a task destructor that panicked escaped `cancel` before the task's delay timer was
/// cleared (it leaked forever) and before tasks awaiting it were woken (they never woke).
#[test]
fn a_panicking_task_destructor_still_cleans_up() {
    let mut sched = Scheduler::<Vec<&str>>::new();
    let drops = Arc::new(AtomicU32::new(0));
    let d = drops.clone();
    let task = sched.tasks().spawn(None, move |cx| async move {
        let _guard = PanicOnDrop(d);
        cx.delay(secs(10.0)).await;
    });
    let awaited = task.task_ref();
    sched.tasks().spawn(None, |cx| async move {
        let result = awaited.await;
        cx.with(|log| {
            log.push(if result.is_err() {
                "woken: cancelled"
            } else {
                "?"
            })
        });
    });
    let mut log = Vec::new();
    sched.tick(frame(), &mut log);
    assert_eq!(sched.timers().len(), 1, "the sleeping task's delay timer");
    assert!(
        task.cancel(),
        "between frames: cancelled now, dropped at the next call"
    );
    assert!(task.is_cancelled());
    assert!(
        quietly(|| sched.apply_commands()).is_none(),
        "the destructor's panic goes on"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    sched.tick(frame(), &mut log);
    assert_eq!(log, ["woken: cancelled"]);
    assert_eq!((sched.timers().len(), sched.tasks().len()), (0, 0));
}

/// `remove_owner` and dropping the scheduler cancel every task even when an earlier one's
/// destructor panics.
#[test]
fn owner_removal_and_drop_cancel_every_task_past_a_panic() {
    let owner = OwnerId::new(3);
    let mut sched = Scheduler::<()>::new();
    let drops = Arc::new(AtomicU32::new(0));
    let mut handles = Vec::new();
    for _ in 0..3 {
        let d = drops.clone();
        handles.push(sched.tasks().spawn(Some(owner), move |cx| async move {
            let _guard = PanicOnDrop(d);
            cx.delay(secs(10.0)).await;
        }));
    }
    sched.tick(frame(), &mut ());
    assert!(quietly(|| sched.remove_owner(owner)).is_none());
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    assert!(handles.iter().all(|h| h.is_cancelled()));
    assert_eq!((sched.tasks().len(), sched.timers().len()), (0, 0));

    for _ in 0..3 {
        let d = drops.clone();
        sched.tasks().spawn(None, move |cx| async move {
            let _guard = PanicOnDrop(d);
            cx.next_frame().await;
        });
    }
    sched.tick(frame(), &mut ());
    assert!(quietly(move || drop(sched)).is_none());
    assert_eq!(drops.load(Ordering::SeqCst), 6);
}

/// Defect: one panicking parallel tick function discarded the deferred output of the others
/// in its batch (their state had advanced), and with `set_parallel(false)` the rest did not
/// run at all. Both ways, every function runs and every output is applied before the panic
/// goes on.
#[test]
fn a_panicking_parallel_function_loses_nobody_elses_output() {
    for threads in [true, false] {
        let mut sched = Scheduler::<Vec<u32>>::new();
        sched.ticks().set_parallel(threads);
        for i in 0..4u32 {
            sched
                .ticks()
                .add_parallel(TickSettings::default(), 0u32, move |runs, _, out| {
                    *runs += 1;
                    let n = *runs;
                    out.run(move |log: &mut Vec<u32>| log.push(i * 10 + n));
                    if i == 1 && n == 1 {
                        panic!("function 1");
                    }
                });
        }
        let mut log = Vec::new();
        assert!(quietly(|| sched.tick(frame(), &mut log)).is_none());
        assert_eq!(log, [1, 11, 21, 31], "threads {threads}");
        sched.tick(frame(), &mut log);
        assert_eq!(log[4..], [2, 12, 22, 32], "threads {threads}");
    }
}

/// Commands queued behind one whose destructor panics are not lost: they apply at the next
/// boundary.
#[test]
fn commands_behind_a_panicking_one_stay_queued() {
    struct Loud;
    impl Drop for Loud {
        fn drop(&mut self) {
            panic!("a tick function's captured state");
        }
    }
    let mut sched = Scheduler::<u32>::new();
    let loud = Loud;
    let t = sched.ticks().add(TickSettings::default(), move |_, _| {
        let _ = &loud;
    });
    let cmds = sched.commands();
    cmds.ticks().remove(t);
    cmds.ticks()
        .add(TickSettings::named("after"), |n, _| *n += 1);
    let mut n = 0;
    assert!(quietly(|| sched.apply_commands()).is_none());
    assert!(!sched.ticks().contains(t));
    sched.tick(frame(), &mut n);
    assert_eq!(n, 1, "the command behind the panic was applied");
}
