//! `remove_owner`, tickables added and removed mid-frame, and panics.

use std::sync::{Arc, Mutex};

use tickflow::prelude::*;
use tickflow::{Tickable, TickableCx, TickableHandle};

struct Game {
    log: Vec<String>,
    doomed: Option<TickableHandle>,
}

struct Named(&'static str, Option<OwnerId>);
impl Tickable<Game> for Named {
    fn tick(&mut self, g: &mut Game, cx: &mut TickableCx<'_, Game>) {
        g.log.push(self.0.into());
        if self.0 == "t1" && g.log.len() == 1 {
            cx.commands().tickables().add(Named("t2", None));
            cx.commands().tickables().remove(g.doomed.unwrap());
        }
    }
    fn owner(&self) -> Option<OwnerId> {
        self.1
    }
    fn name(&self) -> &str {
        self.0
    }
}

fn game(_: &Scheduler<Game>) -> Game {
    Game {
        log: Vec::new(),
        doomed: None,
    }
}

#[test]
fn tickables_added_mid_stage_start_next_frame_and_removed_ones_are_skipped_at_once() {
    let mut sched = Scheduler::new();
    sched.tickables().add(Named("t1", None));
    let t3 = sched.tickables().add(Named("t3", None));
    let mut g = game(&sched);
    g.doomed = Some(t3);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["t1"]);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["t1", "t1", "t2"]);
    assert!(!sched.tickables().contains(t3));
    assert_eq!(sched.tickables().len(), 2);
}

#[test]
fn remove_owner_mid_frame_takes_timers_ticks_and_tickables() {
    let owner = OwnerId::from(42);
    let mut sched = Scheduler::new();
    sched
        .ticks()
        .add(TickSettings::named("killer"), move |g: &mut Game, cx| {
            g.log.push("killer".into());
            if cx.clocks().frame() == 2 {
                cx.commands().remove_owner(owner);
            }
        });
    sched.ticks().add(
        TickSettings {
            owner: Some(owner),
            ..TickSettings::named("victim").in_group(TickGroup::PostPhysics)
        },
        |g: &mut Game, _| g.log.push("victim".into()),
    );
    sched
        .timers()
        .every(secs(0.1))
        .owner(owner)
        .call(|g: &mut Game, _| g.log.push("victim timer".into()));
    sched.tickables().add(Named("victim tickable", Some(owner)));
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(
        g.log,
        ["killer", "victim", "victim timer", "victim tickable"]
    );
    g.log.clear();
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["killer"]);
    assert_eq!(
        (
            sched.ticks().len(),
            sched.tickables().len(),
            sched.timers().len()
        ),
        (1, 0, 0)
    );
}

/// A timer callback that removes an owner (through `Commands`, as a game engine's despawn
/// hook does) stops the owner's timers due later in the same timer stage: commands queued by
/// a timer callback are applied before the next call, not after the stage.
#[test]
fn remove_owner_from_a_timer_stops_its_later_timers_in_the_same_frame() {
    let owner = OwnerId::from(7);
    let mut sched = Scheduler::new();
    sched
        .timers()
        .after(secs(0.1))
        .call(move |g: &mut Game, cx| {
            g.log.push("despawn".into());
            cx.commands().remove_owner(owner);
        });
    sched
        .timers()
        .after(secs(0.1))
        .owner(owner)
        .call(|g: &mut Game, _| g.log.push("owned, same due time".into()));
    sched
        .timers()
        .every(secs(0.05))
        .owner(owner)
        .call(|g: &mut Game, _| g.log.push("owned, repeating".into()));
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["owned, repeating", "despawn"]);
    assert!(sched.timers().is_empty());
}

#[test]
fn remove_owner_between_frames() {
    let owner = OwnerId::from(1);
    let mut sched = Scheduler::<()>::new();
    for _ in 0..3 {
        sched.ticks().add(
            TickSettings {
                owner: Some(owner),
                ..TickSettings::default()
            },
            |_, _| {},
        );
    }
    sched.ticks().add(TickSettings::default(), |_, _| {});
    sched.remove_owner(owner);
    assert_eq!(sched.ticks().len(), 1);
    assert_eq!(sched.tick(secs(0.1), &mut ()).ticks_run, 1);
}

#[test]
fn a_panicking_tick_leaves_the_scheduler_usable() {
    let runs: Arc<Mutex<Vec<u64>>> = Arc::default();
    let mut sched = Scheduler::<()>::new();
    let r = runs.clone();
    sched
        .ticks()
        .add(TickSettings::named("bomb"), move |_, cx| {
            r.lock().unwrap().push(cx.clocks().frame());
            if cx.clocks().frame() == 1 {
                panic!("boom");
            }
        });
    let r = runs.clone();
    sched.ticks().add(
        TickSettings {
            interval: secs(0.2),
            ..TickSettings::named("later").in_group(TickGroup::PostPhysics)
        },
        move |_, cx| r.lock().unwrap().push(100 + cx.clocks().frame()),
    );
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sched.tick(secs(0.1), &mut ());
    }));
    assert!(caught.is_err());
    // The interval function that was due but skipped is still due on frame 2.
    sched.tick(secs(0.1), &mut ());
    assert_eq!(*runs.lock().unwrap(), [1, 2, 102]);
    assert_eq!(sched.ticks().len(), 2);
}

#[test]
fn queued_cycle_errors_are_reported() {
    let mut sched = Scheduler::<()>::new();
    let a = sched.ticks().add(TickSettings::named("a"), |_, _| {});
    let b = sched.ticks().add(TickSettings::named("b"), |_, _| {});
    let cmds = sched.commands();
    cmds.ticks().add_prerequisite(a, b);
    cmds.ticks().add_prerequisite(b, a);
    let report = sched.tick(secs(0.1), &mut ());
    assert_eq!(report.errors.len(), 1);
    assert_eq!(
        report.errors[0].to_string(),
        "prerequisite would form a cycle: `b` waits for `a` waits for `b`"
    );
    assert!(sched.tick(secs(0.1), &mut ()).errors.is_empty());
}

/// Every part reports an owner's first item while tracking, and `owners` lists who has items.
#[test]
fn new_owners_are_reported_by_every_part() {
    let mut sched = Scheduler::<Game>::new();
    let o = OwnerId::new;
    sched.track_new_owners(true);
    sched.timers().after(secs(1.0)).owner(o(1)).call(|_, _| {});
    sched
        .ticks()
        .add(TickSettings::named("ai").owned_by(o(2)), |_, _| {});
    sched.tickables().add(Named("ui", Some(o(3))));
    sched.latent().delay(o(4), 7, secs(1.0), |_, _| {});
    sched
        .tasks()
        .spawn(Some(o(5)), |cx| async move { cx.delay(secs(9.0)).await });
    // Queued from a `Commands` handle: reported once applied.
    sched.commands().timers(move |t| {
        t.after(secs(1.0)).owner(o(6)).call(|_, _| {});
    });
    let mut fresh = sched.take_new_owners();
    fresh.sort();
    assert_eq!(fresh, (1..=6).map(o).collect::<Vec<_>>());
    sched.timers().after(secs(1.0)).owner(o(1)).call(|_, _| {});
    assert!(sched.take_new_owners().is_empty(), "not new");
    assert_eq!(sched.owners(), (1..=6).map(o).collect::<Vec<_>>());
    sched.remove_owner(o(3));
    sched.remove_owner(o(5));
    assert_eq!(sched.owners(), [o(1), o(2), o(4), o(6)]);
    sched.track_new_owners(false);
    sched.timers().after(secs(1.0)).owner(o(9)).call(|_, _| {});
    assert!(sched.take_new_owners().is_empty(), "not tracking");
}
