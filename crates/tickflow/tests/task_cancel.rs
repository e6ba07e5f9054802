//! Ending tasks early: cancel, owners, dropping the scheduler, panics; and no leaks.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tickflow::latent::TaskRef;
use tickflow::prelude::*;
use tickflow::TaskHandle;

/// Counts its drops.
struct Guard(Arc<AtomicU32>);
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn sleeper(
    sched: &mut Scheduler<u32>,
    owner: Option<OwnerId>,
    drops: &Arc<AtomicU32>,
) -> TaskHandle {
    let guard = Guard(drops.clone());
    sched.tasks().spawn(owner, move |cx| async move {
        let _guard = guard;
        cx.delay(secs(100.0)).await;
        cx.with(|n| *n += 1);
    })
}

/// Between frames the scheduler is not running: the task is cancelled at once (never polled
/// again, its handle says so), and its future is dropped at the scheduler's next call.
#[test]
fn cancel_between_frames_drops_the_future_at_the_next_call() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut sched = Scheduler::<u32>::new();
    let h = sleeper(&mut sched, None, &drops);
    sched.tick(secs(0.1), &mut 0);
    assert_eq!(sched.timers().len(), 1, "the delay is a timer");
    assert!(!h.is_finished());
    assert!(h.cancel());
    assert!(h.is_finished() && h.is_cancelled());
    assert!(!h.cancel(), "already cancelled");
    assert_eq!(drops.load(Ordering::SeqCst), 0, "not dropped yet");
    sched.apply_commands();
    assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped at the next call");
    assert_eq!((sched.tasks().len(), sched.timers().len()), (0, 0));
}

/// From code the scheduler runs (here a timer callback), the future is dropped inside
/// `cancel`.
#[test]
fn cancel_from_a_callback_drops_the_future_at_once() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut sched = Scheduler::<u32>::new();
    let h = sleeper(&mut sched, None, &drops);
    let task = h.task_ref();
    let d = drops.clone();
    sched.timers().after(secs(0.2)).call(move |_, _| {
        assert!(task.cancel());
        assert_eq!(d.load(Ordering::SeqCst), 1, "destructors ran inside cancel");
    });
    sched.tick(secs(0.1), &mut 0);
    sched.tick(secs(0.1), &mut 0);
    assert!(h.is_cancelled());
    assert_eq!((sched.tasks().len(), sched.timers().len()), (0, 0));
}

/// From another thread: cancelled at once, dropped on the scheduler's thread at its next call.
#[test]
fn cancel_from_another_thread() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut sched = Scheduler::<u32>::new();
    let h = sleeper(&mut sched, None, &drops);
    sched.tick(secs(0.1), &mut 0);
    let task = h.task_ref();
    assert!(std::thread::spawn(move || task.cancel()).join().unwrap());
    assert!(h.is_cancelled());
    let report = sched.tick(secs(0.1), &mut 0);
    assert_eq!(report.tasks_polled, 0);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!((sched.tasks().len(), sched.timers().len()), (0, 0));
}

#[test]
fn cancelling_before_the_first_poll() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut sched = Scheduler::<u32>::new();
    let h = sleeper(&mut sched, None, &drops);
    assert!(h.cancel());
    let report = sched.tick(secs(0.1), &mut 0);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(report.tasks_polled, 0);
}

#[test]
fn remove_owner_cancels_only_that_owners_tasks() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut sched = Scheduler::<u32>::new();
    let a = sleeper(&mut sched, Some(OwnerId::from(1)), &drops);
    let b = sleeper(&mut sched, Some(OwnerId::from(2)), &drops);
    let c = sleeper(&mut sched, Some(OwnerId::from(1)), &drops);
    sched.tick(secs(0.1), &mut 0);
    sched.remove_owner(OwnerId::from(1));
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    assert!(a.is_cancelled() && c.is_cancelled() && !b.is_finished());
    assert_eq!((sched.tasks().len(), sched.timers().len()), (1, 1));
}

#[test]
fn a_task_removing_an_owner_through_commands() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut sched = Scheduler::<u32>::new();
    let victim = sleeper(&mut sched, Some(OwnerId::from(5)), &drops);
    let cmds = sched.commands();
    sched.tasks().spawn(None, move |cx| async move {
        cx.delay(secs(0.2)).await;
        cmds.remove_owner(OwnerId::from(5));
    });
    for _ in 0..3 {
        sched.tick(secs(0.1), &mut 0);
    }
    assert!(victim.is_cancelled());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!((sched.tasks().len(), sched.timers().len()), (0, 0));
}

#[test]
fn dropping_the_scheduler_drops_every_task() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut sched = Scheduler::<u32>::new();
    let handles: Vec<_> = (0..5).map(|_| sleeper(&mut sched, None, &drops)).collect();
    sched.tick(secs(0.1), &mut 0);
    drop(sched);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
    assert!(handles.iter().all(|h| h.is_cancelled()));
    assert!(!handles[0].cancel(), "nothing left to cancel");
}

#[test]
fn a_task_cancelling_itself_stops_at_the_end_of_its_poll() {
    let drops = Arc::new(AtomicU32::new(0));
    let me: Arc<Mutex<Option<TaskRef>>> = Arc::default();
    let mut sched = Scheduler::<u32>::new();
    let (m, d) = (me.clone(), drops.clone());
    let h = sched.tasks().spawn(None, move |cx| async move {
        let _guard = Guard(d);
        cx.with(|n| *n += 1);
        assert!(m.lock().unwrap().as_ref().unwrap().cancel());
        cx.with(|n| *n += 10); // the rest of this poll still runs
        cx.next_frame().await;
        cx.with(|n| *n += 100); // never
    });
    *me.lock().unwrap() = Some(h.task_ref());
    let mut n = 0;
    let report = sched.tick(secs(0.1), &mut n);
    assert_eq!(n, 11);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(report.tasks_ended, 1);
    assert!(h.is_cancelled());
    sched.tick(secs(0.1), &mut n);
    assert_eq!(n, 11);
}

#[test]
fn a_panicking_task_ends_and_the_others_go_on() {
    let mut sched = Scheduler::<u32>::new();
    let bad = sched.tasks().spawn(None, |cx| async move {
        cx.next_frame().await;
        panic!("task bug");
    });
    for _ in 0..2 {
        sched.tasks().spawn(None, |cx| async move {
            loop {
                cx.next_frame().await;
                cx.with(|n| *n += 1);
            }
        });
    }
    let mut n = 0;
    sched.tick(secs(0.1), &mut n);
    let r = panic::catch_unwind(AssertUnwindSafe(|| sched.tick(secs(0.1), &mut n)));
    assert!(r.is_err());
    assert!(bad.is_cancelled());
    assert_eq!(n, 0, "the tasks after it were not polled in that frame");
    sched.tick(secs(0.1), &mut n);
    assert_eq!(n, 2, "both polled in the next frame");
    assert_eq!(sched.tasks().len(), 2);
}

/// 10,000 tasks with random delays run to the end; 10,000 more are cancelled half-way.
/// Nothing is left behind: no task, no timer, every destructor ran once.
#[test]
fn ten_thousand_tasks_leave_nothing_behind() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut rng = SmallRng::seed_from_u64(7);
    let mut sched = Scheduler::<u32>::new();
    // Miri (when available) runs this at a smaller size.
    let n: u64 = if cfg!(miri) { 100 } else { 10_000 };
    for i in 0..n {
        let guard = Guard(drops.clone());
        let a = secs(rng.random_range(0.0..2.0));
        let b = rng.random_range(0..30);
        sched
            .tasks()
            .spawn(Some(OwnerId::from(i % 10)), move |cx| async move {
                let _guard = guard;
                cx.delay(a).await;
                cx.delay(Frames(b)).await;
                cx.with(|n| *n += 1);
            });
    }
    let mut doomed = Vec::new();
    for i in 0..n {
        let guard = Guard(drops.clone());
        doomed.push(
            sched
                .tasks()
                .spawn(Some(OwnerId::from(100 + i % 2)), move |cx| async move {
                    let _guard = guard;
                    cx.delay(secs(1.0)).await;
                    cx.until(|_: &u32| false).await;
                }),
        );
    }
    let mut done = 0;
    for f in 0..200 {
        sched.tick(secs(1.0 / 60.0), &mut done);
        if f == 100 {
            sched.remove_owner(OwnerId::from(100));
            doomed.iter().for_each(|h| {
                h.cancel();
            });
        }
    }
    assert_eq!(done, n as u32);
    assert_eq!(drops.load(Ordering::SeqCst), 2 * n as u32);
    assert_eq!(sched.tasks().len(), 0);
    assert_eq!(sched.timers().len(), 0);
    assert!(doomed.iter().all(|h| h.is_cancelled()));
}
