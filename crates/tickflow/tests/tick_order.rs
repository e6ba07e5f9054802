//! Frame order, demotion and at-most-once (Unreal UK-01..UK-05, UK-18).

use tickflow::prelude::*;
use tickflow::{Tickable, TickableCx};

type Log = Vec<String>;

fn logger(sched: &mut Scheduler<Log>, name: &str, group: TickGroup) -> TickHandle {
    let name = name.to_owned();
    sched.ticks().add(
        TickSettings::named(&name).in_group(group),
        move |log, cx| {
            log.push(format!("{name}@{:?}", cx.group()));
        },
    )
}

struct Board;
impl Tickable<Log> for Board {
    fn tick(&mut self, log: &mut Log, _cx: &mut TickableCx<'_, Log>) {
        log.push("tickable".into());
    }
}

#[test]
fn one_frame_runs_groups_then_timers_then_tickables_then_late_groups() {
    let mut sched = Scheduler::<Log>::new();
    // Registered backwards: the group order must win over registration order.
    for g in TickGroup::ALL.iter().rev() {
        logger(&mut sched, &format!("{g:?}"), *g);
    }
    sched.tickables().add(Board);
    sched
        .timers()
        .every(secs(0.1))
        .call(|log, _| log.push("timer".into()));
    let mut log = Log::new();
    let report = sched.tick(secs(0.1), &mut log);
    assert_eq!(
        log,
        [
            "PrePhysics@PrePhysics",
            "StartPhysics@StartPhysics",
            "DuringPhysics@DuringPhysics",
            "EndPhysics@EndPhysics",
            "PostPhysics@PostPhysics",
            "timer",
            "tickable",
            "PostUpdateWork@PostUpdateWork",
            "LastDemotable@LastDemotable",
        ]
    );
    assert_eq!(report.frame, 1);
    assert_eq!(report.ticks_run, 7);
    assert_eq!(report.ticks_per_group, [1; 7]);
    assert_eq!(report.timers_fired, 1);
    assert_eq!(report.tickables_ticked, 1);
}

#[test]
fn prerequisites_demote_to_the_later_group() {
    let mut sched = Scheduler::<Log>::new();
    let a = logger(&mut sched, "a", TickGroup::PrePhysics);
    let b = logger(&mut sched, "b", TickGroup::PostPhysics);
    let c = logger(&mut sched, "c", TickGroup::PrePhysics);
    let s = logger(&mut sched, "s", TickGroup::StartPhysics);
    let e = logger(&mut sched, "e", TickGroup::EndPhysics);
    let d = logger(&mut sched, "d", TickGroup::PrePhysics);
    let f = logger(&mut sched, "f", TickGroup::PrePhysics);
    sched.ticks().add_prerequisite(a, b).unwrap(); // a waits for b (PostPhysics)
    sched.ticks().add_prerequisite(c, s).unwrap(); // never demoted into StartPhysics
    sched.ticks().add_prerequisite(d, e).unwrap(); // never demoted into EndPhysics
    sched.ticks().add_prerequisite(f, a).unwrap(); // follows a's demotion
    let mut log = Log::new();
    sched.tick(secs(0.1), &mut log);
    assert_eq!(
        log,
        [
            "s@StartPhysics",
            "c@DuringPhysics",
            "e@EndPhysics",
            "b@PostPhysics",
            "a@PostPhysics",
            "d@PostPhysics",
            "f@PostPhysics",
        ]
    );
}

#[test]
fn a_prerequisite_in_an_earlier_group_changes_nothing() {
    let mut sched = Scheduler::<Log>::new();
    let a = logger(&mut sched, "a", TickGroup::PostPhysics);
    let b = logger(&mut sched, "b", TickGroup::PrePhysics);
    sched.ticks().add_prerequisite(a, b).unwrap();
    let mut log = Log::new();
    sched.tick(secs(0.1), &mut log);
    assert_eq!(log, ["b@PrePhysics", "a@PostPhysics"]);
}

#[test]
fn demotion_holds_in_frames_where_the_prerequisite_waits_on_its_interval() {
    let mut sched = Scheduler::<Log>::new();
    let a = logger(&mut sched, "a", TickGroup::PrePhysics);
    let b = sched.ticks().add(
        TickSettings {
            interval: secs(0.3),
            ..TickSettings::named("b").in_group(TickGroup::PostPhysics)
        },
        |log, _| log.push("b".into()),
    );
    sched.ticks().add_prerequisite(a, b).unwrap();
    let mut log = Log::new();
    for _ in 0..6 {
        sched.tick(secs(0.1), &mut log);
    }
    assert_eq!(
        log.iter().filter(|l| *l == "a@PostPhysics").count(),
        6,
        "{log:?}"
    );
    assert_eq!(log.iter().filter(|l| *l == "b").count(), 2, "{log:?}");
}

#[test]
fn disabled_and_removed_prerequisites_are_ignored() {
    let mut sched = Scheduler::<Log>::new();
    let a = logger(&mut sched, "a", TickGroup::PrePhysics);
    let b = logger(&mut sched, "b", TickGroup::PostPhysics);
    let c = logger(&mut sched, "c", TickGroup::PrePhysics);
    let d = logger(&mut sched, "d", TickGroup::LastDemotable);
    sched.ticks().add_prerequisite(a, b).unwrap();
    sched.ticks().add_prerequisite(c, d).unwrap();
    assert!(sched.ticks().set_enabled(b, false));
    assert!(sched.ticks().remove(d));
    let mut log = Log::new();
    sched.tick(secs(0.1), &mut log);
    assert_eq!(log, ["a@PrePhysics", "c@PrePhysics"]);
    // Enabled again, the demotion is back.
    sched.ticks().set_enabled(b, true);
    log.clear();
    sched.tick(secs(0.1), &mut log);
    assert_eq!(log, ["c@PrePhysics", "b@PostPhysics", "a@PostPhysics"]);
}

#[test]
fn high_priority_runs_first_and_ties_keep_registration_order() {
    let mut sched = Scheduler::<Log>::new();
    for name in ["one", "two", "three"] {
        logger(&mut sched, name, TickGroup::PrePhysics);
    }
    sched.ticks().add(
        TickSettings {
            high_priority: true,
            ..TickSettings::named("urgent")
        },
        |log, _| log.push("urgent".into()),
    );
    let mut log = Log::new();
    sched.tick(secs(0.1), &mut log);
    assert_eq!(
        log,
        [
            "urgent",
            "one@PrePhysics",
            "two@PrePhysics",
            "three@PrePhysics"
        ]
    );
}

#[test]
fn every_function_runs_at_most_once_per_frame() {
    // f is a prerequisite of g and h; g disables and re-enables f after it ran.
    let mut sched = Scheduler::<Log>::new();
    let f = logger(&mut sched, "f", TickGroup::PrePhysics);
    let g = sched.ticks().add(TickSettings::named("g"), move |log, cx| {
        log.push("g".into());
        cx.commands().ticks().set_enabled(f, false);
        cx.commands().ticks().set_enabled(f, true);
    });
    let h = logger(&mut sched, "h", TickGroup::DuringPhysics);
    sched.ticks().add_prerequisite(g, f).unwrap();
    sched.ticks().add_prerequisite(h, f).unwrap();
    let mut log = Log::new();
    for _ in 0..3 {
        sched.tick(secs(0.1), &mut log);
    }
    assert_eq!(
        log.iter().filter(|l| l.starts_with("f@")).count(),
        3,
        "{log:?}"
    );
}

#[test]
fn a_function_disabled_or_removed_earlier_in_the_frame_does_not_run() {
    let mut sched = Scheduler::<Log>::new();
    let victim = TickHandle::default();
    let handles = std::sync::Arc::new(std::sync::Mutex::new((victim, victim)));
    let hs = handles.clone();
    sched
        .ticks()
        .add(TickSettings::named("killer"), move |log, cx| {
            log.push("killer".into());
            let (a, b) = *hs.lock().unwrap();
            assert!(cx.commands().ticks().set_enabled(a, false));
            assert!(cx.commands().ticks().remove(b));
        });
    let a = logger(&mut sched, "same-group", TickGroup::PrePhysics);
    let b = logger(&mut sched, "later-group", TickGroup::PostPhysics);
    *handles.lock().unwrap() = (a, b);
    let mut log = Log::new();
    sched.tick(secs(0.1), &mut log);
    assert_eq!(log, ["killer"]);
    assert!(!sched.ticks().is_enabled(a));
    assert!(!sched.ticks().contains(b));
    assert_eq!(sched.ticks().len(), 2);
}

#[test]
fn explain_and_dot_describe_the_resolved_graph() {
    let mut sched = Scheduler::<Log>::new();
    let physics = logger(&mut sched, "physics", TickGroup::DuringPhysics);
    let camera = logger(&mut sched, "camera", TickGroup::PrePhysics);
    let off = logger(&mut sched, "off", TickGroup::PrePhysics);
    sched.ticks().set_enabled(off, false);
    sched.ticks().add_prerequisite(camera, physics).unwrap();
    sched.tickables().add(Board);
    let text = sched.explain_order();
    let expected_lines = [
        "tick order of the next frame: 2 enabled, 1 disabled",
        "DuringPhysics",
        "disabled: off",
    ];
    for line in expected_lines {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    let physics_at = text.find("physics ").unwrap();
    let camera_at = text.find("camera ").unwrap();
    assert!(physics_at < camera_at, "{text}");
    assert!(text.contains("demoted from PrePhysics: waits for `physics` in DuringPhysics"));
    assert!(text.contains("tickables (after the timers): tickable"));
    let dot = sched.ticks().graph_dot();
    assert!(dot.starts_with("digraph ticks {"));
    assert!(dot.contains("label=\"DuringPhysics\""));
    assert!(dot.contains("t0 -> t1;"), "{dot}");
    assert!(dot.contains("style=dashed"));
}
