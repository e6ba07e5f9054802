//! The checker: what a run left in the store, against what the world must have done. Nothing
//! lost, nothing twice, nothing early, every owner held by one node, its rows in that node
//! only, no parcel left, and every node resumable.

use std::collections::HashMap;

use tickflow_store::{Durable, Handovers, Inspect};

use super::effects::Effects;
use super::world::{OWNERS, PULSE, PULSE_EVERY, REGEN, REGEN_EVERY};

/// What the checker found wrong (all 0 in a good run).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Faults {
    /// Calls that should have been made and are not in the effects.
    pub lost: u64,
    /// Calls made more than once (each extra one counts).
    pub duplicate: u64,
    /// Calls made before their due time on their owner's clock.
    pub early: u64,
    /// Owners whose timer rows are in a node the registry does not give them.
    pub two_places: u64,
    /// Owners the registry does not know, or that are still on their way.
    pub no_holder: u64,
}

impl Faults {
    pub fn add(&mut self, o: Faults) {
        self.lost += o.lost;
        self.duplicate += o.duplicate;
        self.early += o.early;
        self.two_places += o.two_places;
        self.no_holder += o.no_holder;
    }

    pub fn is_clean(&self) -> bool {
        *self == Faults::default()
    }
}

/// Checks the store `open` gives, after a run.
pub fn check<S: Effects>(open: impl Fn() -> S) -> Faults {
    let mut f = Faults::default();
    let mut store = open();
    let mut seen: HashMap<(u64, String, u64), u64> = HashMap::new();
    let effects = store.read();
    for e in &effects {
        let every = if e.name == "regen" {
            REGEN_EVERY
        } else {
            PULSE_EVERY
        };
        if e.age < every * (e.call + 1) {
            f.early += 1;
        }
        *seen.entry((e.owner, e.name.clone(), e.call)).or_default() += 1;
    }
    // The first calls made twice, with where each was made: what to look at when one is.
    let twice: Vec<_> = (effects.iter())
        .filter(|e| seen[&(e.owner, e.name.clone(), e.call)] > 1)
        .take(8)
        .collect();
    if !twice.is_empty() {
        eprintln!("made twice: {twice:?}");
    }
    for owner in 1..=OWNERS {
        for (name, calls) in [("regen", REGEN), ("pulse", PULSE)] {
            for call in 0..calls {
                match seen.get(&(owner, name.to_string(), call)) {
                    None => f.lost += 1,
                    Some(&n) => f.duplicate += n - 1,
                }
            }
        }
    }
    let owners = store.owners().expect("the registry reads");
    for owner in 1..=OWNERS {
        if !owners.iter().any(|(o, _)| o.get() == owner) {
            f.no_holder += 1;
        }
    }
    if !store.outbox_empty().expect("the outbox reads") {
        f.no_holder += 1;
    }
    for node in ["a", "b"] {
        let saved = store.saved(node).expect("each node's rows check");
        for t in saved.timers {
            let holder = owners
                .iter()
                .find(|(o, _)| *o == t.owner)
                .map(|(_, h)| h.node.as_str());
            if holder != Some(node) {
                f.two_places += 1;
            }
        }
        // Each node resumes: its rows, their count and checksums, its owners.
        let mut d = Durable::new(open(), node);
        d.set_lease(std::time::Duration::from_millis(1));
        let registry = tickflow::snapshot::Registry::<super::world::World>::new()
            .other_timers(|_| Some(Box::new(|_: &mut _, _: &mut _| {})));
        let mut registry = registry;
        d.resume(&mut registry).expect("every node resumes");
    }
    f
}
