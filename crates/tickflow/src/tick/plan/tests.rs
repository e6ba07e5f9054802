//! Unit tests of `plan.rs`.

use super::*;
use crate::tick::settings::TickSettings;
use crate::time::Span;
use TickGroup::*;

fn body() -> crate::tick::body::Body<()> {
    crate::tick::body::Body::Serial(crate::timer::Callback::new(|_, _| {}))
}

fn add(g: &mut TickGraph<()>, name: &str, group: TickGroup) -> TickHandle {
    g.insert(TickSettings::named(name).in_group(group), body())
        .unwrap()
}

fn names(g: &TickGraph<()>, p: &Plan, group: TickGroup) -> Vec<String> {
    p.always[group.index()]
        .handles()
        .map(|h| g.name_of(h))
        .collect()
}

#[test]
fn demotion_follows_prerequisites() {
    let mut g = TickGraph::new(Default::default());
    let a = add(&mut g, "a", PrePhysics);
    let b = add(&mut g, "b", PostPhysics);
    let c = add(&mut g, "c", PrePhysics);
    let d = add(&mut g, "d", PrePhysics);
    let s = add(&mut g, "s", StartPhysics);
    g.add_prereq(a, b).unwrap();
    g.add_prereq(c, a).unwrap();
    g.add_prereq(d, s).unwrap();
    let plan = Plan::resolve(&g);
    assert_eq!(plan.get(a).unwrap().actual, PostPhysics);
    assert_eq!(plan.get(a).unwrap().demoted_by, Some(b));
    assert_eq!(plan.get(c).unwrap().actual, PostPhysics);
    assert_eq!(
        plan.get(d).unwrap().actual,
        DuringPhysics,
        "never into StartPhysics"
    );
    assert_eq!(
        plan.get(s).unwrap().actual,
        StartPhysics,
        "own group is fine"
    );
    assert_eq!(names(&g, &plan, PostPhysics), ["b", "a", "c"]);
    let text = plan.explain(&g);
    assert!(
        text.contains("demoted from PrePhysics: waits for `b` in PostPhysics"),
        "{text}"
    );
    let dot = plan.dot(&g);
    assert!(dot.contains("t1 -> t0;"), "{dot}");
}

#[test]
fn disabled_prerequisites_are_ignored() {
    let mut g = TickGraph::new(Default::default());
    let a = add(&mut g, "a", PrePhysics);
    let b = add(&mut g, "b", PostPhysics);
    g.add_prereq(a, b).unwrap();
    g.set_enabled(b, false);
    let plan = Plan::resolve(&g);
    assert_eq!(plan.get(a).unwrap().actual, PrePhysics);
    assert!(plan.get(b).is_none());
}

#[test]
fn high_priority_first_then_registration_order() {
    let mut g = TickGraph::new(Default::default());
    let x = add(&mut g, "x", PrePhysics);
    let _y = add(&mut g, "y", PrePhysics);
    let hp = TickSettings {
        high_priority: true,
        ..TickSettings::named("hp")
    };
    let hp = g.insert(hp, body()).unwrap();
    let plan = Plan::resolve(&g);
    assert_eq!(names(&g, &plan, PrePhysics), ["hp", "x", "y"]);
    // A prerequisite still wins over priority.
    g.add_prereq(hp, x).unwrap();
    let plan = Plan::resolve(&g);
    assert_eq!(names(&g, &plan, PrePhysics), ["x", "hp", "y"]);
}

/// The lists a frame runs, without the stale handles it skips.
fn run_order(g: &TickGraph<()>, p: &Plan) -> Vec<Vec<TickHandle>> {
    p.always
        .iter()
        .map(|l| (l.handles()).filter(|&h| g.get(h).is_some()).collect())
        .collect()
}

#[test]
fn patched_plans_match_fresh_ones() {
    use super::super::run::TickFunctions;
    let mut t = TickFunctions::<()>::new(Default::default(), Default::default());
    let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
    let mut next = |n: usize| rng.below(n as u64) as usize;
    let mut live: Vec<TickHandle> = Vec::new();
    let mut patched = 0;
    for step in 0..3_000 {
        match next(10) {
            0..=4 => {
                let s = TickSettings {
                    high_priority: next(10) == 0,
                    interval: if next(5) == 0 {
                        Span::from_millis(100)
                    } else {
                        Span::ZERO
                    },
                    ..TickSettings::named(step.to_string()).in_group(TickGroup::ALL[next(7)])
                };
                live.push(
                    t.add_boxed(s, crate::timer::Callback::new(|_, _| {}))
                        .unwrap(),
                );
            }
            5..=8 if !live.is_empty() => {
                let h = live.swap_remove(next(live.len()));
                assert!(t.remove(h));
            }
            _ if live.len() > 2 => {
                let (a, b) = (live[next(live.len())], live[next(live.len())]);
                let _ = t.graph_mut().add_prereq(a, b); // refused when it would close a cycle
            }
            _ => {}
        }
        if step % 5 == 0 {
            t.plan();
            let cached = t.with_cached_plan(|p, g| (run_order(g, p), p.patched));
            patched += usize::from(cached.1);
            let cached = cached.0;
            assert_eq!(
                cached,
                run_order(t.graph(), &Plan::resolve(t.graph())),
                "step {step}"
            );
        }
    }
    assert!(patched > 100, "the patch path ran only {patched} times");
}

#[test]
fn long_chains_do_not_overflow_the_stack() {
    let mut g = TickGraph::new(Default::default());
    let mut prev = add(&mut g, "0", PrePhysics);
    for i in 1..100_000 {
        let h = add(&mut g, &i.to_string(), PrePhysics);
        g.add_prereq(prev, h).unwrap(); // each earlier one waits for the next
        prev = h;
    }
    let plan = Plan::resolve(&g);
    assert_eq!(plan.always[0].len(), 100_000);
    assert_eq!(g.name_of(plan.always[0].handles().next().unwrap()), "99999");
}

proptest::proptest! {
    /// A lane's runs, cut anywhere, cover its entries once each and in order: the laid-out
    /// part by position (consecutive from the first entry, as far as they go), the rest with
    /// the positions the entries carry.
    #[test]
    fn runs_cover_the_lane_in_order(
        laid in 0usize..20,
        rest in proptest::collection::vec(0u32..1000, 0..10),
        first in 0u32..1000,
        mut cuts in proptest::collection::vec(0u32..40, 0..8),
    ) {
        let positions: Vec<u32> = (0..laid as u32).map(|i| first + i).chain(rest).collect();
        let mut lane = Lane::default();
        for (i, _) in positions.iter().enumerate() {
            lane.push(TickHandle::new(i as u32, NonZeroU32::MIN), NO_POS);
        }
        lane.locate(|h| Some(positions[h.index() as usize]));
        cuts.sort_unstable();
        let due: Vec<DueInterval> = (cuts.iter())
            .map(|&cut| DueInterval { cut, at: (TickHandle::default(), NO_POS) })
            .collect();
        let mut walked = Vec::new();
        let mut runs = 0;
        for (run, then) in lane.runs(&due) {
            walked.extend(run.laid.clone());
            walked.extend(run.placed.iter().map(|&(_, p)| p));
            runs += 1;
            proptest::prop_assert_eq!(then.is_some(), runs <= due.len());
        }
        proptest::prop_assert_eq!(runs, due.len() + 1);
        proptest::prop_assert_eq!(walked, positions);
    }
}
