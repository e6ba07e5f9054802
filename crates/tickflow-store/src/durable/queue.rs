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
}

impl Queue {
    /// Adds a frame's changes: a later change of a key replaces an earlier one (a timer set
    /// and then cleared leaves only its removal).
    pub(super) fn add_changes(&mut self, changes: Vec<DurableChange>) {
        if self.changes.is_empty() {
            self.changes = changes;
        } else if !changes.is_empty() {
            self.changes.extend(changes);
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
