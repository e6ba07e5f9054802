//! Owners: who a timer, tick function, tickable, latent action or task belongs to, and the
//! one index from an owner to its items that every part keeps.

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

/// The items of each owner, in the order they were added. Removing an item keeps the order
/// of the others, and an owner without items takes no room.
#[derive(Clone, Debug)]
pub(crate) struct OwnerIndex<T> {
    map: FxHashMap<OwnerId, Vec<T>>,
}

impl<T> Default for OwnerIndex<T> {
    fn default() -> Self {
        OwnerIndex {
            map: FxHashMap::default(),
        }
    }
}

impl<T: Copy + PartialEq> OwnerIndex<T> {
    /// Records `item` as `owner`'s.
    pub(crate) fn add(&mut self, owner: OwnerId, item: T) {
        self.map.entry(owner).or_default().push(item);
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
