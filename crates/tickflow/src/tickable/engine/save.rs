//! Tickables in a scheduler snapshot: handles, names, owners and modes in registration
//! order. The objects themselves are user types, rebuilt by the resolver from their names.

use rustc_hash::FxHashSet;

use super::{TickableEntry, Tickables};
use crate::format::RestoreError;
use crate::handle::gen_of;
use crate::handle::{AllocSnapshot, HandleAlloc};
use crate::owner::OwnerId;
use crate::tickable::object::{Tickable, TickableHandle, TickableMode};

/// The saved part of a scheduler's tickables.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct TickableSnapshot {
    alloc: AllocSnapshot,
    /// Registered tickables in registration order.
    tickables: Vec<SavedTickable>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct SavedTickable {
    index: u32,
    gen: u32,
    name: String,
    owner: Option<OwnerId>,
    mode: TickableMode,
}

/// What a [`Resolver`](crate::snapshot::Resolver) is told about a tickable to rebuild.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TickableInfo {
    /// Its handle (the same in the restored scheduler).
    pub handle: TickableHandle,
    /// [`Tickable::name`] of the saved object: the key to rebuild it by.
    pub name: String,
    /// [`Tickable::owner`] of the saved object (the restored one keeps this owner).
    pub owner: Option<OwnerId>,
    /// [`Tickable::mode`] of the saved object (the restored one keeps this mode).
    pub mode: TickableMode,
}

impl TickableSnapshot {
    /// What the resolver is asked with, in registration order.
    pub(crate) fn infos(&self) -> impl Iterator<Item = TickableInfo> + '_ {
        self.tickables.iter().map(|t| TickableInfo {
            handle: TickableHandle::new(t.index, self.alloc.tag(t.gen)),
            name: t.name.clone(),
            owner: t.owner,
            mode: t.mode,
        })
    }

    /// Checks the handles; returns the allocator to restore.
    pub(crate) fn check(&self) -> Result<HandleAlloc, RestoreError> {
        let alloc = HandleAlloc::restore(&self.alloc).map_err(RestoreError::corrupt)?;
        let mut seen = FxHashSet::default();
        for t in &self.tickables {
            let live = alloc.is_live(t.index, self.alloc.tag(t.gen));
            if !live || !seen.insert(t.index) {
                return Err(RestoreError::corrupt(format!(
                    "tickable `{}` has a handle that is not live or saved twice",
                    t.name
                )));
            }
        }
        Ok(alloc)
    }
}

impl<C> Tickables<C> {
    /// Saves every registered tickable. Taken between frames.
    pub(crate) fn save(&self) -> TickableSnapshot {
        let tickables = self
            .order
            .iter()
            .filter_map(|&h| {
                let e = self.entry(h)?;
                Some(SavedTickable {
                    index: h.index(),
                    gen: gen_of(h.tag().get()),
                    name: e
                        .obj
                        .as_deref()
                        .map_or_else(String::new, |o| o.name().to_owned()),
                    owner: e.owner,
                    mode: e.mode,
                })
            })
            .collect();
        TickableSnapshot {
            alloc: crate::handle::lock_alloc(&self.alloc).save(),
            tickables,
        }
    }

    /// Fills empty tickables from a checked snapshot; `objects` are in its order.
    pub(crate) fn restore(
        &mut self,
        snap: &TickableSnapshot,
        alloc: HandleAlloc,
        objects: Vec<Box<dyn Tickable<C>>>,
    ) {
        *crate::handle::lock_alloc(&self.alloc) = alloc;
        for (info, obj) in snap.infos().zip(objects) {
            let h = info.handle;
            let i = h.index() as usize;
            if self.slots.len() <= i {
                self.slots.resize_with(i + 1, || None);
            }
            self.slots[i] = Some(TickableEntry {
                gen: h.tag(),
                mode: info.mode,
                owner: info.owner,
                obj: Some(obj),
            });
            self.order.push(h);
            self.live += 1;
        }
    }
}
