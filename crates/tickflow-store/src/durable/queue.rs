//! What the next commit writes besides the node's rows' checksums: the timers' changes, and the
//! handovers begun since.

use tickflow::timer::DurableChange;
use tickflow::OwnerId;

use crate::handover::Parcel;

/// What the next commit writes.
#[derive(Default, Debug)]
pub(super) struct Queue {
    pub(super) changes: Vec<DurableChange>,
    /// Parcels of owners this node froze to send.
    pub(super) sends: Vec<Parcel>,
    /// Parcels this node imported, to take in the registry.
    pub(super) accepts: Vec<Parcel>,
    /// Parcels addressed to this node that it cannot take (damaged or stale): removed.
    pub(super) refuses: Vec<(OwnerId, u64)>,
    /// Owners that moved away: this node's rows of them are deleted.
    pub(super) drops: Vec<OwnerId>,
    /// Owners of lost nodes this node imported, to take in the registry.
    pub(super) adopts: Vec<super::takeover::Adopt>,
    /// `changes` may hold a key more than once: see [`compact`](Self::compact).
    mixed: bool,
}

impl Queue {
    /// Adds changes after those queued. A later change of a key replaces an earlier one (a
    /// timer set and then cleared leaves only its removal) once [`compact`](Self::compact)
    /// runs, which the commit does: each add is then O(its own changes), where sorting out
    /// the whole queue on every add made a frame of many sends (each adds its owner's
    /// changes) cost the queue's length times the sends (4.4 s for 1,700 sends after a
    /// restart whose first tick queued 15,000 changes).
    pub(super) fn add_changes(&mut self, changes: Vec<DurableChange>) {
        if self.changes.is_empty() {
            self.changes = changes;
        } else if !changes.is_empty() {
            self.changes.extend(changes);
            self.mixed = true;
        }
    }

    /// Keeps the last change of each key, in the order of those last changes.
    pub(super) fn compact(&mut self) {
        if std::mem::take(&mut self.mixed) {
            self.changes = latest_per_key(std::mem::take(&mut self.changes));
        }
    }

    /// Puts `later` after what this queue holds.
    pub(super) fn append(&mut self, later: Queue) {
        self.add_changes(later.changes);
        self.sends.extend(later.sends);
        self.accepts.extend(later.accepts);
        self.refuses.extend(later.refuses);
        self.drops.extend(later.drops);
        self.adopts.extend(later.adopts);
    }
}

/// The last change of each key, in the order of those last changes.
fn latest_per_key(changes: Vec<DurableChange>) -> Vec<DurableChange> {
    let key = |ch: &DurableChange| match ch {
        DurableChange::Set(t) => (t.owner, t.name.clone()),
        DurableChange::Removed { owner, name } => (*owner, name.clone()),
    };
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<_> = (changes.into_iter().rev())
        .filter(|ch| seen.insert(key(ch)))
        .collect();
    kept.reverse();
    kept
}

impl Queue {
    /// Drops what is queued for `owner`.
    pub(super) fn forget(&mut self, owner: OwnerId) {
        self.changes
            .retain(|c| super::moves::change_owner(c) != owner);
        self.sends.retain(|p| p.owner != owner);
        self.accepts.retain(|p| p.owner != owner);
        self.adopts.retain(|a| a.owner != owner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickflow::time::CatchUp;
    use tickflow::time::Domain;
    use tickflow::timer::{DurablePhase, DurableTimer, Offline};

    fn set(owner: u64, name: &str, calls: u64) -> DurableChange {
        DurableChange::Set(DurableTimer {
            owner: OwnerId::new(owner),
            name: name.into(),
            domain: Domain::Game,
            phase: DurablePhase::Scheduled,
            time: 1,
            period: 1,
            looping: true,
            catch_up: CatchUp::Burst,
            offline: Offline::Freeze,
            calls,
            times_left: None,
            first_delay: None,
            tag: None,
            payload: Vec::new(),
            seq: 0,
        })
    }

    #[test]
    fn the_last_change_of_each_key_is_kept_in_its_order() {
        let mut q = Queue::default();
        q.add_changes(vec![set(1, "a", 0), set(2, "b", 0)]);
        q.add_changes(vec![set(1, "a", 1)]);
        let gone = DurableChange::Removed {
            owner: OwnerId::new(2),
            name: "b".into(),
        };
        q.add_changes(vec![gone.clone(), set(3, "c", 0)]);
        assert_eq!(q.changes.len(), 5, "adds only append");
        q.compact();
        assert_eq!(q.changes, [set(1, "a", 1), gone, set(3, "c", 0)]);
    }
}
