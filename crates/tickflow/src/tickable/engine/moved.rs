//! One owner's tickables for a move to another scheduler: names, owners and modes in
//! registration order. The objects are user types: the destination's resolver builds them
//! again from their names (their own state is the game's to carry), as after a restore.

use super::save::TickableInfo;
use super::Tickables;
use crate::owner::OwnerId;
use crate::tickable::object::{Tickable, TickableHandle, TickableMode};

/// One tickable of a moved owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct MovedTickable {
    /// Its handle in the source, as `(index, tag)`: the key of the handle map.
    pub(crate) handle: (u32, u32),
    name: String,
    mode: TickableMode,
}

impl MovedTickable {
    /// The source handle (`None` when the record was damaged).
    pub(crate) fn old_handle(&self) -> Option<TickableHandle> {
        TickableHandle::from_raw(self.handle)
    }

    /// What the resolver is told (`handle` is the source's until the import makes one).
    pub(crate) fn info(&self, owner: OwnerId) -> TickableInfo {
        TickableInfo {
            handle: self.old_handle().unwrap_or_default(),
            name: self.name.clone(),
            owner: Some(owner),
            mode: self.mode,
        }
    }
}

impl<C> Tickables<C> {
    /// Takes every tickable of `owner` out, in registration order, with its object.
    pub(crate) fn take_owner(
        &mut self,
        owner: OwnerId,
    ) -> Vec<(MovedTickable, Box<dyn Tickable<C>>)> {
        let list: Vec<TickableHandle> = (self.order.iter().copied())
            .filter(|&h| self.entry(h).is_some_and(|e| e.owner == Some(owner)))
            .collect();
        let mut out = Vec::with_capacity(list.len());
        for h in list {
            let entry = self.take(h);
            let obj = entry.obj.expect("no tickable runs between frames");
            let moved = MovedTickable {
                handle: h.to_raw(),
                name: obj.name().to_owned(),
                mode: entry.mode,
            };
            out.push((moved, obj));
        }
        out
    }
}
