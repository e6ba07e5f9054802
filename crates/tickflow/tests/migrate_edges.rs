//! Moving an owner at the edges the random property test rarely reaches: a function overdue
//! when it leaves (its frame was cut short by a panic), one that ran in the frame it left,
//! an outside prerequisite whose name only the moved owner has, a timer with `u64::MAX` calls
//! left, and an import beside items the owner already has at the destination.
#![cfg(feature = "serde")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::Value;
use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::tick::{TickBody, TickInfo};

const ORC: OwnerId = OwnerId::new(7);
const BOMB: OwnerId = OwnerId::new(9);

#[derive(Default)]
struct Game {
    log: Vec<String>,
    explode_in_frame: Option<u64>,
}

fn think(g: &mut Game, cx: &mut TickCx<Game>) {
    g.log.push(format!(
        "think {} {}",
        cx.clocks().frame(),
        cx.dt().flicks()
    ));
}

/// Binds every function by its name, and every timer to one that logs its call.
fn bind() -> Registry<Game> {
    Registry::new()
        .other_ticks(|info: &TickInfo| {
            let name = info.settings.name.clone();
            Some(TickBody::serial(
                move |g: &mut Game, cx: &mut TickCx<Game>| {
                    if name == "think" {
                        think(g, cx)
                    } else {
                        g.log.push(format!("{name} {}", cx.clocks().frame()))
                    }
                },
            ))
        })
        .other_timers(|_| {
            Some(Box::new(|g: &mut Game, cx: &mut TimerCx<Game>| {
                g.log.push(format!("timer {}", cx.call_index()))
            }))
        })
}

/// The record a scheduler snapshot keeps of the function named `name`, without what a move
/// renumbers (its handle and registration number).
fn record(s: &Scheduler<Game>, name: &str) -> Value {
    let v = serde_json::to_value(s.snapshot()).unwrap();
    let mut f = (v["ticks"]["functions"].as_array().unwrap().iter())
        .find(|f| f["settings"]["name"] == name)
        .unwrap()
        .clone();
    for key in ["index", "gen", "seq", "prereqs"] {
        f.as_object_mut().unwrap().remove(key);
    }
    f
}

/// A world where the orc's "think" (0.25 s interval, `PostPhysics`) waits for a bomb's
/// function in `PrePhysics` that panics in frame 4, cutting that frame short: "think" was
/// due in it and did not run.
fn world(orc: bool) -> Scheduler<Game> {
    let mut s = Scheduler::new();
    s.ticks().add(
        TickSettings::named("bomb").owned_by(BOMB),
        |g: &mut Game, cx| {
            if g.explode_in_frame == Some(cx.clocks().frame()) {
                panic!("boom");
            }
        },
    );
    let settings = TickSettings::named("think")
        .owned_by(ORC)
        .every(millis(250))
        .in_group(TickGroup::PostPhysics);
    if orc {
        s.ticks().add(settings, think);
    }
    s
}

fn frame(s: &mut Scheduler<Game>, g: &mut Game) {
    let _ = catch_unwind(AssertUnwindSafe(|| s.tick(millis(100), g)));
}

#[test]
fn a_function_overdue_or_just_run_when_it_leaves_moves_as_it_was() {
    // `stay` never moves the orc; `from` hands it to `to` in lockstep after frame `k`.
    for k in [3, 4, 5] {
        let (mut stay, mut from, mut to) = (world(true), world(true), world(false));
        let (mut g1, mut g2) = (Game::default(), Game::default());
        for g in [&mut g1, &mut g2] {
            g.explode_in_frame = Some(4);
        }
        for _ in 0..k {
            frame(&mut stay, &mut g1);
            frame(&mut from, &mut g2);
            frame(&mut to, &mut g2);
        }
        let moved = from.export_owner(ORC);
        to.import_owner(&moved, &mut bind()).unwrap();
        assert_eq!(
            record(&stay, "think"),
            record(&to, "think"),
            "moved after frame {k}"
        );
        for _ in 0..12 {
            frame(&mut stay, &mut g1);
            frame(&mut from, &mut g2);
            frame(&mut to, &mut g2);
            assert_eq!(
                record(&stay, "think"),
                record(&to, "think"),
                "moved after frame {k}"
            );
        }
        let thinks = |g: &Game| -> Vec<String> {
            g.log
                .iter()
                .filter(|l| l.starts_with("think"))
                .cloned()
                .collect()
        };
        assert_eq!(thinks(&g1), thinks(&g2), "moved after frame {k}");
    }
}

#[test]
fn an_outside_prerequisite_is_never_linked_to_a_moved_function() {
    // The orc's "aim" waits for another owner's "target"; the orc has a "target" of its own
    // that waits for "aim". At a destination with no other "target", linking the name to the
    // orc's own would close a cycle.
    let mut s = Scheduler::<Game>::new();
    let outside = s
        .ticks()
        .add(TickSettings::named("target"), |_: &mut Game, _| {});
    let aim = s.ticks().add(
        TickSettings::named("aim").owned_by(ORC),
        |_: &mut Game, _| {},
    );
    let own = s.ticks().add(
        TickSettings::named("target").owned_by(ORC),
        |_: &mut Game, _| {},
    );
    s.ticks().add_prerequisite(aim, outside).unwrap();
    s.ticks().add_prerequisite(own, aim).unwrap();
    let moved = s.export_owner(ORC);

    let mut dest = Scheduler::<Game>::new();
    let map = dest.import_owner(&moved, &mut bind()).unwrap();
    let new_aim = map.tick(aim).unwrap();
    assert_eq!(
        map.unlinked_prerequisites(),
        [(new_aim, "target".to_string())]
    );
    let mut g = Game::default();
    dest.tick(millis(100), &mut g);
    assert_eq!(g.log, ["aim 1", "target 1"]);
    Scheduler::restore(&dest.snapshot(), &mut bind()).expect("the graph has no cycle");

    // With one at the destination, that one is linked.
    let mut dest = Scheduler::<Game>::new();
    let there = TickSettings::named("target").in_group(TickGroup::PostPhysics);
    let there = dest.ticks().add(there, |g: &mut Game, cx| {
        g.log.push(format!("there {}", cx.clocks().frame()))
    });
    let map = dest.import_owner(&moved, &mut bind()).unwrap();
    assert!(map.unlinked_prerequisites().is_empty());
    assert!(dest
        .ticks()
        .remove_prerequisite(map.tick(aim).unwrap(), there));
}

#[test]
fn a_timer_with_every_call_left_moves() {
    let mut s = Scheduler::<Game>::new();
    let h = (s.timers().every(secs(1.0)).times(u64::MAX).owner(ORC)).call(|_, _| {});
    let fresh = (s.timers().every(secs(5.0)).times(u64::MAX).owner(ORC)).call(|_, _| {});
    s.tick(secs(1.0), &mut Game::default());
    let untouched = s.timers().info_of(fresh).unwrap().calls_left;
    assert_eq!(untouched, Some(u64::MAX));
    let left = s.timers().info_of(h).unwrap().calls_left;
    assert!(left.is_some_and(|n| n > u64::MAX - 2));
    let moved = s.export_owner(ORC);
    let mut dest = Scheduler::<Game>::new();
    let map = dest.import_owner(&moved, &mut bind()).unwrap();
    let new = map.timer(h).unwrap();
    assert_eq!(dest.timers().info_of(new).unwrap().calls_left, left);
    let new = map.timer(fresh).unwrap();
    assert_eq!(dest.timers().info_of(new).unwrap().calls_left, untouched);
}

#[test]
fn an_import_beside_items_the_owner_has_here_keeps_both() {
    let mut from = Scheduler::<Game>::new();
    from.timers()
        .after(secs(1.0))
        .owner(ORC)
        .name("moved")
        .call(|_, _| {});
    let moved = from.export_owner(ORC);
    let mut dest = Scheduler::<Game>::new();
    dest.timers()
        .after(secs(2.0))
        .owner(ORC)
        .name("welcome")
        .call(|_, _| {});
    dest.import_owner(&moved, &mut bind()).unwrap();
    let mut names: Vec<_> = (dest.timers().list().into_iter())
        .map(|t| t.name.unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["moved", "welcome"]);
    dest.remove_owner(ORC);
    assert!(dest.timers().is_empty(), "both belong to the owner");
}
