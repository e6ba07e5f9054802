//! Owners: who a timer, tick function, tickable, latent action or task belongs to, and the
//! one index from an owner to its items that every part keeps.

use std::collections::hash_map::Entry;
use std::fmt;

use rustc_hash::FxHashMap;

/// Who a timer, tick function, tickable, latent action or task belongs to: an entity id, an
/// actor id. Every service takes it, so it lives at the crate's root.
///
/// [`Scheduler::remove_owner`](crate::Scheduler::remove_owner) removes everything an owner
/// has; [`Timers::clear_owner`](crate::timer::Timers::clear_owner) and
/// [`Timers::pause_owner`](crate::timer::Timers::pause_owner) act on all of its timers at
/// once (Unreal's `ClearAllTimersForObject`); an owner's items move to another scheduler
/// together ([`Scheduler::export_owner`](crate::Scheduler::export_owner)).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct OwnerId(u64);

impl OwnerId {
    /// An owner id from a number (usable in `const` items).
    pub const fn new(id: u64) -> OwnerId {
        OwnerId(id)
    }

    /// The number this id was made from.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl From<u64> for OwnerId {
    fn from(id: u64) -> OwnerId {
        OwnerId(id)
    }
}

impl fmt::Debug for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "owner#{}", self.0)
    }
}

/// A service's owners, whatever its items are: for the scheduler's tracking of new owners
/// ([`Scheduler::track_new_owners`](crate::Scheduler::track_new_owners)).
pub(crate) trait Owners {
    /// Starts or stops recording owners that get their first item.
    fn track(&mut self, on: bool);
    /// Moves the owners recorded since the last call to `out`.
    fn take_fresh(&mut self, out: &mut Vec<OwnerId>);
    /// Calls `f` with every owner that has an item.
    fn each(&self, f: &mut dyn FnMut(OwnerId));
}

/// The owners a part recorded while tracking (`None`: not tracking, which costs nothing).
#[derive(Clone, Debug, Default)]
pub(crate) struct Fresh(Option<Vec<OwnerId>>);

impl Fresh {
    /// Starts (keeping what is recorded) or stops (forgetting it) recording.
    pub(crate) fn track(&mut self, on: bool) {
        match (on, &self.0) {
            (true, None) => self.0 = Some(Vec::new()),
            (false, _) => self.0 = None,
            (true, Some(_)) => {}
        }
    }

    /// Records `owner`, while tracking.
    pub(crate) fn note(&mut self, owner: OwnerId) {
        if let Some(fresh) = &mut self.0 {
            fresh.push(owner);
        }
    }

    /// Moves what was recorded since the last call to `out`.
    pub(crate) fn take(&mut self, out: &mut Vec<OwnerId>) {
        if let Some(fresh) = &mut self.0 {
            out.append(fresh);
        }
    }
}

impl<T> Owners for OwnerIndex<T> {
    fn track(&mut self, on: bool) {
        self.fresh.track(on);
    }

    fn take_fresh(&mut self, out: &mut Vec<OwnerId>) {
        self.fresh.take(out);
    }

    fn each(&self, f: &mut dyn FnMut(OwnerId)) {
        self.map.keys().copied().for_each(f);
    }
}

/// The items of each owner, in the order they were added. Removing an item keeps the order
/// of the others, and an owner without items takes no room.
#[derive(Clone, Debug)]
pub(crate) struct OwnerIndex<T> {
    map: FxHashMap<OwnerId, Vec<T>>,
    /// Owners that got their first item since the last `take_fresh`, while tracking
    /// ([`Scheduler::track_new_owners`](crate::Scheduler::track_new_owners)).
    fresh: Fresh,
}

impl<T> Default for OwnerIndex<T> {
    fn default() -> Self {
        OwnerIndex {
            map: FxHashMap::default(),
            fresh: Fresh::default(),
        }
    }
}

impl<T: Copy + PartialEq> OwnerIndex<T> {
    /// Records `item` as `owner`'s.
    pub(crate) fn add(&mut self, owner: OwnerId, item: T) {
        match self.map.entry(owner) {
            Entry::Occupied(mut e) => e.get_mut().push(item),
            Entry::Vacant(e) => {
                e.insert(vec![item]);
                self.fresh.note(owner);
            }
        }
    }

    /// Forgets `item` of `owner` (nothing when it is not there).
    pub(crate) fn forget(&mut self, owner: OwnerId, item: T) {
        if let Some(list) = self.map.get_mut(&owner) {
            if let Some(pos) = list.iter().position(|&x| x == item) {
                list.remove(pos);
            }
            if list.is_empty() {
                self.map.remove(&owner);
            }
        }
    }

    /// `owner`'s items, oldest first.
    pub(crate) fn get(&self, owner: OwnerId) -> &[T] {
        self.map.get(&owner).map_or(&[], Vec::as_slice)
    }

    /// Takes all of `owner`'s items out of the index.
    pub(crate) fn take(&mut self, owner: OwnerId) -> Vec<T> {
        self.map.remove(&owner).unwrap_or_default()
    }

    /// Heap bytes, for the memory figures.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<(OwnerId, Vec<T>)>() + 1)
            + self
                .map
                .values()
                .map(|v| v.capacity() * std::mem::size_of::<T>())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_keep_their_order_and_empty_owners_leave() {
        let (a, b) = (OwnerId::new(1), OwnerId::new(2));
        let mut index = OwnerIndex::default();
        for item in [10, 11, 12] {
            index.add(a, item);
        }
        index.add(b, 20);
        index.forget(a, 11);
        index.forget(a, 99);
        assert_eq!(index.get(a), [10, 12]);
        index.forget(b, 20);
        assert_eq!(index.get(b), [] as [i32; 0]);
        assert_eq!(index.map.len(), 1, "an owner without items takes no room");
        assert_eq!(index.take(a), [10, 12]);
        assert!(index.take(a).is_empty());
    }
}
