//! Newly spawned tick functions run in the same frame (UK-08..UK-10), wherever they come from.

use tickflow::prelude::*;
use tickflow::tick::MAX_SPAWN_PASSES;
use tickflow::{Tickable, TickableCx};

struct Game {
    log: Vec<String>,
}

fn game(_: &Scheduler<Game>) -> Game {
    Game { log: Vec::new() }
}

fn child(name: &'static str) -> impl FnMut(&mut Game, &mut TickCx<'_, Game>) {
    move |g, cx| {
        g.log
            .push(format!("{name}@{:?}#{}", cx.group(), cx.clocks().frame()))
    }
}

#[test]
fn spawned_from_a_tick_runs_in_the_next_eligible_group() {
    let mut sched = Scheduler::new();
    sched
        .ticks()
        .add(TickSettings::named("spawner"), |g: &mut Game, cx| {
            g.log.push(format!("spawner#{}", cx.clocks().frame()));
            if cx.clocks().frame() == 1 {
                // Own group PrePhysics: StartPhysics is no target, so DuringPhysics.
                cx.commands()
                    .ticks()
                    .add(TickSettings::named("same"), child("same"));
                // A later own group is kept.
                cx.commands().ticks().add(
                    TickSettings::named("late").in_group(TickGroup::PostPhysics),
                    child("late"),
                );
            }
        });
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(
        g.log,
        ["spawner#1", "same@DuringPhysics#1", "late@PostPhysics#1"]
    );
    // Next frame they are in the plan, in their own groups.
    g.log.clear();
    sched.tick(secs(0.1), &mut g);
    assert_eq!(
        g.log,
        ["spawner#2", "same@PrePhysics#2", "late@PostPhysics#2"]
    );
}

#[test]
fn spawned_with_a_prerequisite_on_another_spawned_one_runs_after_it() {
    let mut sched = Scheduler::new();
    sched
        .ticks()
        .add(TickSettings::named("spawner"), |_: &mut Game, cx| {
            if cx.clocks().frame() == 1 {
                let a = cx
                    .commands()
                    .ticks()
                    .add(TickSettings::named("a"), child("a"));
                let b = cx.commands().ticks().add(
                    TickSettings::named("b").in_group(TickGroup::PostPhysics),
                    child("b"),
                );
                cx.commands().ticks().add_prerequisite(a, b);
            }
        });
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["b@PostPhysics#1", "a@PostPhysics#1"]);
}

#[test]
fn spawned_from_a_timer_runs_in_post_update_work() {
    let mut sched = Scheduler::new();
    sched.timers().after(secs(0.1)).call(|g: &mut Game, cx| {
        g.log.push("timer".into());
        cx.commands()
            .ticks()
            .add(TickSettings::named("t"), child("t"));
    });
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["timer", "t@PostUpdateWork#1"]);
}

struct Spawner;
impl Tickable<Game> for Spawner {
    fn tick(&mut self, g: &mut Game, cx: &mut TickableCx<'_, Game>) {
        if g.log.is_empty() {
            g.log.push("tickable".into());
            cx.commands().ticks().add(
                TickSettings::named("from-tickable").in_group(TickGroup::LastDemotable),
                child("from-tickable"),
            );
        }
    }
}

#[test]
fn spawned_from_a_tickable_runs_later_in_the_frame() {
    let mut sched = Scheduler::new();
    sched.tickables().add(Spawner);
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["tickable", "from-tickable@LastDemotable#1"]);
}

#[test]
fn spawned_from_the_last_group_runs_in_an_extra_pass() {
    let mut sched = Scheduler::new();
    sched.ticks().add(
        TickSettings::named("last").in_group(TickGroup::LastDemotable),
        |g: &mut Game, cx| {
            g.log.push("last".into());
            if cx.clocks().frame() == 1 {
                cx.commands()
                    .ticks()
                    .add(TickSettings::named("extra"), child("extra"));
            }
        },
    );
    let mut g = game(&sched);
    let report = sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["last", "extra@LastDemotable#1"]);
    assert_eq!((report.spawn_passes, report.held_back), (1, 0));
    assert_eq!(report.ticks_in(TickGroup::LastDemotable), 2);
}

fn chain(g: &mut Game, cx: &mut TickCx<'_, Game>) {
    g.log.push(format!("{}", cx.clocks().frame()));
    if cx.clocks().frame() == 1 {
        cx.commands()
            .ticks()
            .add(TickSettings::named("link"), chain);
    }
}

#[test]
fn runaway_spawning_is_capped_and_reported() {
    let mut sched = Scheduler::new();
    sched.ticks().add(
        TickSettings::named("seed").in_group(TickGroup::LastDemotable),
        chain,
    );
    let mut g = game(&sched);
    let report = sched.tick(secs(0.1), &mut g);
    assert_eq!(report.spawn_passes, MAX_SPAWN_PASSES);
    assert_eq!(report.held_back, 1);
    assert_eq!(g.log.len(), 1 + MAX_SPAWN_PASSES);
    // The held-back function is registered and runs next frame, with every other one.
    let before = sched.ticks().len();
    assert_eq!(before, 2 + MAX_SPAWN_PASSES);
    g.log.clear();
    let report = sched.tick(secs(0.1), &mut g);
    assert_eq!(report.ticks_run, before);
    assert_eq!(report.spawn_passes, 0);
}

#[test]
fn enabling_during_a_frame_counts_as_spawning() {
    let mut sched = Scheduler::new();
    let sleeper = sched.ticks().add(
        TickSettings {
            enabled: false,
            ..TickSettings::named("sleeper")
        },
        child("sleeper"),
    );
    sched
        .ticks()
        .add(TickSettings::named("waker"), move |_: &mut Game, cx| {
            cx.commands().ticks().set_enabled(sleeper, true);
        });
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(g.log, ["sleeper@DuringPhysics#1"]);
}

/// What one call changes is in place before the next call: a function that removed itself is
/// dropped (its captured state with it), and a command it queued has been applied.
#[test]
fn a_calls_changes_land_before_the_next_call() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Guard(Arc<AtomicUsize>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut sched = Scheduler::new();
    let guard = Guard(dropped.clone());
    sched
        .ticks()
        .add(TickSettings::named("once"), move |g: &mut Game, cx| {
            let _keep = &guard;
            g.log.push("once".into());
            let me = cx.handle();
            assert!(cx.commands().ticks().remove(me));
        });
    let seen = dropped.clone();
    sched
        .ticks()
        .add(TickSettings::named("after"), move |g: &mut Game, _| {
            g.log
                .push(format!("after saw {} drop", seen.load(Ordering::SeqCst)));
        });
    // The queuer runs first; its victim comes next and is off by then.
    let victim = Arc::new(std::sync::OnceLock::new());
    let target = victim.clone();
    sched
        .ticks()
        .add(TickSettings::named("queuer"), move |g: &mut Game, cx| {
            g.log.push("queuer".into());
            cx.commands()
                .ticks()
                .set_enabled(*target.get().unwrap(), false);
        });
    let h = sched
        .ticks()
        .add(TickSettings::named("victim"), child("victim"));
    victim.set(h).unwrap();
    sched
        .ticks()
        .add(TickSettings::named("last"), child("last"));
    let mut g = game(&sched);
    sched.tick(secs(0.1), &mut g);
    assert_eq!(
        g.log,
        ["once", "after saw 1 drop", "queuer", "last@PrePhysics#1"]
    );
    assert!(!sched.ticks().is_enabled(h));
}

/// A frame walks a group's functions by position: every call sees its own handle, a function
/// removed earlier in the frame never runs, nor does one disabled then, and a function that
/// takes the removed one's slot (same index, new tag) runs as itself, in this frame and the
/// next, when the group is laid out again.
#[test]
fn a_reused_slot_runs_as_its_new_function() {
    use std::sync::{Arc, Mutex};
    type Seen = Arc<Mutex<Vec<(&'static str, TickHandle)>>>;
    fn logger(name: &'static str, seen: &Seen) -> impl FnMut(&mut Game, &mut TickCx<'_, Game>) {
        let seen = seen.clone();
        move |_, cx| seen.lock().unwrap().push((name, cx.handle()))
    }
    let seen: Seen = Arc::default();
    let mut sched = Scheduler::new();
    let names = ["a", "b", "c", "d", "e"];
    // "a" removes "b" and disables "d"; "c" adds "new" once the removal is in, so that the
    // new function takes the slot "b" freed.
    let victims: Arc<Mutex<Vec<TickHandle>>> = Arc::default();
    let added: Arc<Mutex<Option<TickHandle>>> = Arc::default();
    let mut handles = Vec::new();
    for name in names {
        let (v, new, s) = (victims.clone(), added.clone(), seen.clone());
        let mut log = logger(name, &seen);
        let h = sched
            .ticks()
            .add(TickSettings::named(name), move |g: &mut Game, cx| {
                log(g, cx);
                if cx.clocks().frame() != 2 {
                    return;
                }
                let v = v.lock().unwrap();
                if name == "a" {
                    assert!(cx.commands().ticks().remove(v[0]));
                    assert!(cx.commands().ticks().set_enabled(v[1], false));
                } else if name == "c" {
                    let t = cx.commands().ticks();
                    *new.lock().unwrap() =
                        Some(t.add(TickSettings::named("new"), logger("new", &s)));
                }
            });
        handles.push(h);
    }
    victims.lock().unwrap().extend([handles[1], handles[3]]);
    let mut g = game(&sched);
    let mut frame = |sched: &mut Scheduler<Game>| {
        sched.tick(secs(0.1), &mut g);
        std::mem::take(&mut *seen.lock().unwrap())
    };
    let all: Vec<_> = names.into_iter().zip(handles.iter().copied()).collect();
    assert_eq!(frame(&mut sched), all);
    let second = frame(&mut sched);
    let new = added.lock().unwrap().expect("added in frame 2");
    let index = |h: TickHandle| format!("{h:?}").split('v').next().unwrap().to_string();
    assert_eq!(
        index(new),
        index(handles[1]),
        "the new function took b's slot"
    );
    assert_ne!(new, handles[1]);
    let expected = vec![
        ("a", handles[0]),
        ("c", handles[2]),
        ("e", handles[4]),
        ("new", new),
    ];
    assert_eq!(second, expected);
    assert_eq!(
        frame(&mut sched),
        expected,
        "laid out again, the same calls"
    );
}
