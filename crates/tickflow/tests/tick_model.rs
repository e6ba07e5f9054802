//! Property test: random prerequisite graphs with random groups, priorities, enables and
//! removals. Every frame, the executed order must equal a naive reference that recomputes
//! demotion (a fixed point) and a topological order from scratch, and every `add_prerequisite`
//! must be refused exactly when the reference finds a cycle.

use proptest::prelude::*;
use tickflow::prelude::*;
use tickflow::tick::TickError;

#[derive(Clone, Debug)]
enum Op {
    Add {
        group: usize,
        high: bool,
        enabled: bool,
    },
    Prereq(usize, usize),
    Unprereq(usize, usize),
    Enable(usize, bool),
    Remove(usize),
    Frame,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..7usize, prop::bool::weighted(0.2), prop::bool::weighted(0.85))
            .prop_map(|(group, high, enabled)| Op::Add { group, high, enabled }),
        4 => (0..16usize, 0..16usize).prop_map(|(a, b)| Op::Prereq(a, b)),
        1 => (0..16usize, 0..16usize).prop_map(|(a, b)| Op::Unprereq(a, b)),
        1 => (0..16usize, any::<bool>()).prop_map(|(a, on)| Op::Enable(a, on)),
        1 => (0..16usize).prop_map(Op::Remove),
        2 => Just(Op::Frame),
    ]
}

struct Func {
    group: usize,
    high: bool,
    enabled: bool,
    prereqs: Vec<usize>,
}

/// The reference: a list of functions by id, `None` once removed.
#[derive(Default)]
struct Model {
    funcs: Vec<Option<Func>>,
}

impl Model {
    fn live(&self, i: usize) -> Option<&Func> {
        self.funcs.get(i)?.as_ref()
    }

    fn enabled(&self, i: usize) -> bool {
        self.live(i).is_some_and(|f| f.enabled)
    }

    /// Does `from` wait, directly or not, for `to`?
    fn reaches(&self, from: usize, to: usize) -> bool {
        let mut seen = vec![false; self.funcs.len()];
        let mut stack = vec![from];
        while let Some(i) = stack.pop() {
            if i == to {
                return true;
            }
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            stack.extend(
                self.live(i)
                    .unwrap()
                    .prereqs
                    .iter()
                    .filter(|&&p| self.live(p).is_some()),
            );
        }
        false
    }

    /// (id, actual group) in run order.
    fn frame_order(&self) -> Vec<(usize, usize)> {
        let n = self.funcs.len();
        let mut actual: Vec<usize> = (0..n)
            .map(|i| self.live(i).map_or(0, |f| f.group))
            .collect();
        loop {
            let mut changed = false;
            for i in (0..n).filter(|&i| self.enabled(i)) {
                let f = self.live(i).unwrap();
                let latest = f
                    .prereqs
                    .iter()
                    .filter(|&&p| self.enabled(p))
                    .map(|&p| actual[p])
                    .max()
                    .unwrap_or(0);
                let mut g = f.group;
                if latest > g {
                    g = latest;
                    while g == 1 || g == 3 {
                        g += 1; // StartPhysics, EndPhysics are no demotion targets
                    }
                }
                if g != actual[i] {
                    actual[i] = g;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut done = vec![false; n];
        let mut order = Vec::new();
        for g in 0..7 {
            loop {
                let next = (0..n)
                    .filter(|&i| self.enabled(i) && !done[i] && actual[i] == g)
                    .filter(|&i| {
                        self.live(i)
                            .unwrap()
                            .prereqs
                            .iter()
                            .all(|&p| !self.enabled(p) || actual[p] != g || done[p])
                    })
                    .min_by_key(|&i| (!self.live(i).unwrap().high, i));
                match next {
                    Some(i) => {
                        done[i] = true;
                        order.push((i, g));
                    }
                    None => break,
                }
            }
        }
        order
    }
}

fn group(i: usize) -> TickGroup {
    TickGroup::ALL[i]
}

proptest! {
    #![proptest_config(crate::cases(5_000))]

    #[test]
    fn executed_order_matches_the_naive_reference(ops in prop::collection::vec(op(), 1..80)) {
        let mut sched = Scheduler::<Vec<(usize, TickGroup)>>::new();
        let mut handles: Vec<TickHandle> = Vec::new();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Add { group: g, high, enabled } => {
                    let id = handles.len();
                    let h = sched.ticks().add(
                        TickSettings {
                            high_priority: high,
                            enabled,
                            ..TickSettings::named(id.to_string()).in_group(group(g))
                        },
                        move |log, cx| log.push((id, cx.group())),
                    );
                    handles.push(h);
                    model.funcs.push(Some(Func { group: g, high, enabled, prereqs: vec![] }));
                }
                Op::Prereq(a, b) if a < handles.len() && b < handles.len() => {
                    let got = sched.ticks().add_prerequisite(handles[a], handles[b]);
                    match (model.live(a).is_some(), model.live(b).is_some()) {
                        (true, true) => {
                            if model.reaches(b, a) {
                                let Err(TickError::Cycle { path }) = got else {
                                    panic!("expected a cycle for {a} after {b}, got {got:?}");
                                };
                                prop_assert_eq!(&path[0], &a.to_string());
                                prop_assert!(path.contains(&b.to_string()));
                            } else {
                                prop_assert_eq!(got, Ok(()));
                                let f = model.funcs[a].as_mut().unwrap();
                                if !f.prereqs.contains(&b) {
                                    f.prereqs.push(b);
                                }
                            }
                        }
                        _ => {
                            let unknown = matches!(got, Err(TickError::UnknownTick { .. }));
                            prop_assert!(unknown);
                        }
                    }
                }
                Op::Unprereq(a, b) if a < handles.len() && b < handles.len() => {
                    let got = sched.ticks().remove_prerequisite(handles[a], handles[b]);
                    let want = match model.funcs[a].as_mut() {
                        Some(f) => match f.prereqs.iter().position(|&p| p == b) {
                            Some(k) => { f.prereqs.remove(k); true }
                            None => false,
                        },
                        None => false,
                    };
                    prop_assert_eq!(got, want);
                }
                Op::Enable(a, on) if a < handles.len() => {
                    let got = sched.ticks().set_enabled(handles[a], on);
                    prop_assert_eq!(got, model.live(a).is_some());
                    if let Some(f) = model.funcs[a].as_mut() {
                        f.enabled = on;
                    }
                }
                Op::Remove(a) if a < handles.len() => {
                    prop_assert_eq!(sched.ticks().remove(handles[a]), model.live(a).is_some());
                    model.funcs[a] = None;
                }
                Op::Frame => {
                    let mut log = Vec::new();
                    let report = sched.tick(secs(0.1), &mut log);
                    let want: Vec<(usize, TickGroup)> =
                        model.frame_order().into_iter().map(|(i, g)| (i, group(g))).collect();
                    prop_assert_eq!(report.ticks_run, want.len());
                    prop_assert_eq!(log, want);
                }
                _ => {}
            }
        }
    }
}
