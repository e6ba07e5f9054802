//! A closure or future whose destructor panics (or does odd things) takes nothing down with
//! it: the panic reaches, at most, the caller of the call that dropped it, the container
//! stays consistent, and the next tick, frame or service call works.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tickflow::prelude::*;
use tickflow::realtime::{ManualClock, RealtimeTimers};
use tickflow::TaskHandle;

/// Panics when dropped.
struct Bomb;
impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("bomb");
        }
    }
}

fn quiet<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

#[test]
fn a_timer_closure_whose_destructor_panics_leaves_the_next_tick_working() {
    for case in ["one-shot", "clears itself", "last of times(2)"] {
        let mut timers = TimerManager::<u32>::new();
        let bomb = Bomb;
        match case {
            "one-shot" => timers.after(secs(0.1)).call(move |n, _| {
                let _ = &bomb;
                *n += 1;
            }),
            "clears itself" => timers.every(secs(0.1)).call(move |n, cx| {
                let _ = &bomb;
                *n += 1;
                cx.clear_self();
            }),
            _ => timers.every(secs(0.1)).times(2).call(move |n, _| {
                let _ = &bomb;
                *n += 1;
            }),
        };
        let counted = timers.every(secs(0.1)).call(|n, _| *n += 100);
        let mut n = 0;
        let mut ticks = 0;
        let mut panicked = false;
        for _ in 0..3 {
            ticks += 1;
            panicked |= quiet(|| timers.tick(secs(0.1), &mut n)).is_err();
        }
        assert!(
            panicked,
            "{case}: the destructor's panic reaches the caller of tick"
        );
        // Every later tick works, and the other timer kept its schedule.
        timers.tick(secs(0.1), &mut n);
        assert_eq!(timers.calls_made(counted), Some(ticks + 1), "{case}");
        assert_eq!(timers.len(), 1, "{case}: the finished timer is gone");
    }
}

#[test]
fn in_a_scheduler_too() {
    let mut sched = Scheduler::<u32>::new();
    let bomb = Bomb;
    sched.timers().after(secs(0.1)).call(move |n, _| {
        let _ = &bomb;
        *n += 1;
    });
    let mut n = 0;
    assert!(quiet(|| sched.tick(secs(0.1), &mut n)).is_err());
    sched.timers().after(secs(0.1)).call(|n, _| *n += 10);
    sched.tick(secs(0.1), &mut n);
    sched.tick(secs(0.1), &mut n);
    assert_eq!(n, 11);
}

#[test]
fn a_realtime_closure_whose_destructor_panics_does_not_stop_the_service() {
    let clock = ManualClock::new();
    let timers = RealtimeTimers::manual(clock.clone());
    let reports = Arc::new(Mutex::new(Vec::new()));
    let r = reports.clone();
    timers.on_panic(move |p| r.lock().unwrap().push(p.message.clone()));
    let calls = Arc::new(AtomicU32::new(0));
    let bomb = Bomb;
    let c = calls.clone();
    drop(timers.after(Duration::from_millis(10)).call(move || {
        let _ = &bomb;
        c.fetch_add(1, Ordering::Relaxed);
    }));
    let c = calls.clone();
    timers.after(Duration::from_millis(10)).call(move || {
        c.fetch_add(10, Ordering::Relaxed);
    });
    clock.advance(Duration::from_millis(10));
    assert_eq!(
        timers.tick(),
        2,
        "the batch goes on after the destructor's panic"
    );
    assert_eq!(calls.load(Ordering::Relaxed), 11);
    assert_eq!(*reports.lock().unwrap(), ["bomb"]);
}

#[test]
fn the_service_thread_survives_a_destructor_that_panics() {
    let timers = RealtimeTimers::start();
    timers.on_panic(|_| {});
    let bomb = Bomb;
    drop(timers.after(Duration::from_millis(1)).call(move || {
        let _ = &bomb;
    }));
    let (tx, rx) = std::sync::mpsc::channel();
    timers.after(Duration::from_millis(20)).call(move || {
        let _ = tx.send(());
    });
    // A dead thread would never send: wide bounds, not a speed test.
    assert!(rx.recv_timeout(Duration::from_secs(20)).is_ok());
}

/// A guard that spawns a task through its `TaskCx` when dropped.
struct Spawner(TaskCx<u32>);
impl Drop for Spawner {
    fn drop(&mut self) {
        self.0.commands().tasks().spawn(None, |_| async {});
    }
}

#[test]
fn dropping_a_scheduler_whose_task_destructor_spawns_a_task() {
    type Spawned = std::sync::Arc<std::sync::Mutex<Vec<TaskHandle>>>;
    struct SpawnOnDrop(Option<TaskCx<u32>>, Commands<u32>, Spawned);
    impl Drop for SpawnOnDrop {
        fn drop(&mut self) {
            let cx = self.0.take().unwrap();
            let a = cx
                .commands()
                .tasks()
                .spawn(None, |cx| async move { cx.next_frame().await });
            let b = (self.1)
                .tasks()
                .spawn(None, |cx| async move { cx.next_frame().await });
            self.2.lock().unwrap().extend([a, b]);
        }
    }
    let spawned = Spawned::default();
    let mut sched = Scheduler::<u32>::new();
    let (cmds, seen) = (sched.commands(), spawned.clone());
    sched.tasks().spawn(None, move |cx| async move {
        let _guard = SpawnOnDrop(Some(cx), cmds, seen);
        cx.delay(secs(10.0)).await;
    });
    sched.tick(secs(0.1), &mut 0);
    drop(sched); // no panic, no abort
    let spawned = spawned.lock().unwrap();
    assert_eq!(spawned.len(), 2);
    assert!(
        spawned.iter().all(|h| h.is_cancelled()),
        "tasks spawned while the scheduler drops never run, and say so"
    );
}

#[test]
fn dropping_a_scheduler_whose_tasks_spawn_from_destructors_for_ever() {
    struct Again(Option<TaskCx<u32>>);
    impl Drop for Again {
        fn drop(&mut self) {
            let cx = self.0.take().unwrap();
            cx.commands().tasks().spawn(None, move |_| async move {
                let _again = Again(Some(cx));
                std::future::pending::<()>().await;
            });
        }
    }
    let mut sched = Scheduler::<u32>::new();
    sched.tasks().spawn(None, move |cx| async move {
        let _guard = Again(Some(cx));
        cx.delay(secs(10.0)).await;
    });
    sched.tick(secs(0.1), &mut 0);
    drop(sched); // no panic, no abort, no hang
}

#[test]
fn dropping_a_scheduler_whose_queued_task_spawns_when_dropped() {
    // A task's destructor spawns, through Commands, a task whose own destructor spawns through
    // its TaskCx: the queued task is dropped with the scheduler, after its executor.
    struct ViaCommands(Commands<u32>);
    impl Drop for ViaCommands {
        fn drop(&mut self) {
            self.0.tasks().spawn(None, |cx| {
                let guard = Spawner(cx);
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                }
            });
        }
    }
    let mut sched = Scheduler::<u32>::new();
    let guard = ViaCommands(sched.commands());
    sched.tasks().spawn(None, move |cx| async move {
        let _guard = guard;
        cx.delay(secs(10.0)).await;
    });
    sched.tick(secs(0.1), &mut 0);
    drop(sched); // no panic, no abort
}

#[test]
fn dropping_a_scheduler_whose_unpolled_tasks_spawn_when_dropped_for_ever() {
    // Each task holds, from before its first poll, a guard that spawns another such task
    // when dropped: two chains that never end, which outlast any number of cancel rounds.
    struct Chain(TaskCx<u32>);
    impl Drop for Chain {
        fn drop(&mut self) {
            spawn_chain(&self.0);
        }
    }
    fn spawn_chain(cx: &TaskCx<u32>) {
        cx.commands().tasks().spawn(None, |cx| {
            let guard = Chain(cx);
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            }
        });
    }
    let mut sched = Scheduler::<u32>::new();
    for _ in 0..2 {
        sched.tasks().spawn(None, |cx| {
            let guard = Chain(cx);
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            }
        });
    }
    sched.tick(secs(0.1), &mut 0);
    drop(sched); // no panic, no abort, no hang
}

#[test]
fn dropping_a_scheduler_with_queued_tasks_that_spawn_when_dropped() {
    // Spawned through `Commands` between frames, so still queued when the scheduler goes.
    let sched = Scheduler::<u32>::new();
    let cmds = sched.commands();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            cmds.tasks().spawn(None, |cx| {
                let guard = Spawner(cx);
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                }
            })
        })
        .collect();
    drop(sched); // no panic, no abort
    assert!(
        handles.iter().all(|h| h.is_cancelled()),
        "their handles learn it"
    );
    assert!(!cmds.is_connected());
}

#[test]
fn dropping_a_scheduler_whose_timer_closure_spawns_when_dropped() {
    let mut sched = Scheduler::<u32>::new();
    sched.tasks().spawn(None, |cx| async move {
        let guard = Spawner(cx);
        cx.timers(|t| {
            t.after(secs(10.0)).call(move |_, _| {
                let _ = &guard;
            })
        });
    });
    sched.tick(secs(0.1), &mut 0);
    assert_eq!(sched.timers().len(), 1);
    drop(sched); // no panic, no abort
}
