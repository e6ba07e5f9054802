//! Property test: random operations on `LatentActions` against an obviously correct model
//! (a list of countdowns in insertion order), comparing every observable result.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use tickflow::latent::LatentActionManager;
use tickflow::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Delay { owner: u64, uuid: u64, d: u64 },
    Retrigger { owner: u64, uuid: u64, d: u64 },
    Remove { owner: u64, uuid: u64 },
    RemoveOwner { owner: u64 },
    Tick { dt: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    let key = (0..3u64, 0..3u64);
    prop_oneof![
        (key.clone(), 0..6u64).prop_map(|((owner, uuid), d)| Op::Delay { owner, uuid, d }),
        (key.clone(), 0..6u64).prop_map(|((owner, uuid), d)| Op::Retrigger { owner, uuid, d }),
        key.prop_map(|(owner, uuid)| Op::Remove { owner, uuid }),
        (0..3u64).prop_map(|owner| Op::RemoveOwner { owner }),
        (0..4u64).prop_map(|dt| Op::Tick { dt }),
        (0..4u64).prop_map(|dt| Op::Tick { dt }),
    ]
}

/// The model: pending countdowns in insertion order, in whole "units" of time.
#[derive(Default)]
struct Model {
    next: u64,
    pending: Vec<(u64, u64, u64, i64, bool)>, // owner, uuid, id, time left, retriggerable
}

impl Model {
    fn find(&self, owner: u64, uuid: u64) -> Option<usize> {
        self.pending
            .iter()
            .position(|p| p.0 == owner && p.1 == uuid)
    }
}

const UNIT: u64 = 1_000_000;

proptest! {
    #![proptest_config(crate::cases(2_000))]

    #[test]
    fn latent_actions_match_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let mut latent = LatentActionManager::<()>::new();
        let fired: Arc<Mutex<Vec<u64>>> = Arc::default();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Delay { owner, uuid, d } => {
                    let id = model.next;
                    let f = fired.clone();
                    let got = latent.delay(OwnerId::from(owner), uuid, Span::from_flicks(d * UNIT),
                        move |_, _| f.lock().unwrap().push(id));
                    let want = model.find(owner, uuid).is_none();
                    if want {
                        model.pending.push((owner, uuid, id, d as i64, false));
                        model.next += 1;
                    }
                    prop_assert_eq!(got, want);
                }
                Op::Retrigger { owner, uuid, d } => {
                    let id = model.next;
                    let f = fired.clone();
                    let got = latent.retriggerable_delay(OwnerId::from(owner), uuid,
                        Span::from_flicks(d * UNIT), move |_, _| f.lock().unwrap().push(id));
                    let want = match model.find(owner, uuid) {
                        Some(i) if model.pending[i].4 => {
                            model.pending[i].3 = d as i64;
                            true
                        }
                        Some(_) => false,
                        None => {
                            model.pending.push((owner, uuid, id, d as i64, true));
                            model.next += 1;
                            true
                        }
                    };
                    prop_assert_eq!(got, want);
                }
                Op::Remove { owner, uuid } => {
                    let got = latent.remove(OwnerId::from(owner), uuid);
                    let want = model.find(owner, uuid).map(|i| model.pending.remove(i)).is_some();
                    prop_assert_eq!(got, want);
                }
                Op::RemoveOwner { owner } => {
                    let got = latent.remove_owner(OwnerId::from(owner));
                    let before = model.pending.len();
                    model.pending.retain(|p| p.0 != owner);
                    prop_assert_eq!(got, before - model.pending.len());
                }
                Op::Tick { dt } => {
                    fired.lock().unwrap().clear();
                    let n = latent.tick(Span::from_flicks(dt * UNIT), &mut ());
                    let mut want = Vec::new();
                    model.pending.retain_mut(|p| {
                        p.3 -= dt as i64;
                        if p.3 <= 0 {
                            want.push(p.2);
                            false
                        } else {
                            true
                        }
                    });
                    prop_assert_eq!(n, want.len());
                    prop_assert_eq!(&*fired.lock().unwrap(), &want);
                }
            }
            prop_assert_eq!(latent.len(), model.pending.len());
            for owner in 0..3 {
                let want = model.pending.iter().filter(|p| p.0 == owner).count();
                prop_assert_eq!(latent.count_for_owner(OwnerId::from(owner)), want);
            }
            let listed: Vec<(u64, u64)> =
                latent.list().iter().map(|i| (i.owner.get(), i.uuid)).collect();
            let want: Vec<(u64, u64)> = model.pending.iter().map(|p| (p.0, p.1)).collect();
            prop_assert_eq!(listed, want);
        }
    }
}
