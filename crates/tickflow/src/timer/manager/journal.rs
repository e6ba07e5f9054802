//! The durable journal: which slot holds each durable key, and what changed since a store
//! last asked. The manager's durable verbs (`durable.rs`) keep it; the manager's own file
//! holds it and ends keys through it.

use std::hash::BuildHasher;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxBuildHasher;

use super::extras::{Extras, SideTable};
use crate::owner::OwnerId;

/// Durable keys and the changes since the last drain.
#[derive(Default)]
pub(crate) struct Journal {
    /// The slot of the live durable timer of each key. The table holds slots only, hashed by
    /// the key their side-table data holds, so no name is stored twice.
    keys: HashTable<u32>,
    /// Slots marked changed (each once while its `dirty` flag is up; may be stale).
    changed: Vec<u32>,
    /// Keys whose timer ended.
    ended: Vec<(OwnerId, Box<str>)>,
}

/// A durable timer's key as its side-table data holds it.
pub(super) fn key_of<C>(x: &Extras<C>) -> (OwnerId, &str) {
    (
        x.owner.unwrap_or(OwnerId::new(0)),
        x.name.as_deref().unwrap_or(""),
    )
}

fn hash_key((owner, name): (OwnerId, &str)) -> u64 {
    FxBuildHasher.hash_one((owner, name))
}

/// The key of the durable timer in `idx` (`None` if it has no side-table data).
fn key_at<C>(extras: &SideTable<C>, idx: u32) -> Option<(OwnerId, &str)> {
    extras.get(&idx).map(key_of)
}

/// What a regrowth of the key table hashes a slot by. Every slot in the table has its data
/// (a removal lets go of the key first).
fn hash_at<C>(extras: &SideTable<C>, idx: u32) -> u64 {
    key_at(extras, idx).map_or(0, hash_key)
}

impl Journal {
    /// The slot holding `key`.
    pub(super) fn holder<C>(&self, extras: &SideTable<C>, key: (OwnerId, &str)) -> Option<u32> {
        let eq = |&i: &u32| key_at(extras, i) == Some(key);
        self.keys.find(hash_key(key), eq).copied()
    }

    /// Makes `idx` the holder of its key; returns the slot that held it before.
    pub(super) fn hold<C>(&mut self, extras: &SideTable<C>, idx: u32) -> Option<u32> {
        let key = key_at(extras, idx).expect("durable timers have extras");
        let eq = |&i: &u32| key_at(extras, i) == Some(key);
        match self.keys.entry(hash_key(key), eq, |&i| hash_at(extras, i)) {
            Entry::Occupied(mut e) => Some(std::mem::replace(e.get_mut(), idx)),
            Entry::Vacant(e) => {
                e.insert(idx);
                None
            }
        }
    }

    /// `idx` no longer holds `key` (if it did).
    pub(super) fn let_go(&mut self, idx: u32, key: (OwnerId, &str)) {
        if let Ok(e) = self.keys.find_entry(hash_key(key), |&i| i == idx) {
            e.remove();
        }
    }

    /// A durable timer ended: its key is free and its row goes.
    pub(super) fn ended(&mut self, idx: u32, owner: Option<OwnerId>, name: Option<Box<str>>) {
        let k = (owner.unwrap_or(OwnerId::new(0)), name.unwrap_or_default());
        self.let_go(idx, (k.0, &k.1));
        self.ended.push(k);
    }

    /// A row's timer was dropped by its load: its key's row goes.
    pub(super) fn dropped(&mut self, owner: OwnerId, name: String) {
        self.ended.push((owner, name.into()));
    }

    /// Room for `n` more durable timers.
    pub(super) fn reserve<C>(&mut self, extras: &SideTable<C>, n: usize) {
        self.keys.reserve(n, |&i| hash_at(extras, i));
        self.changed.reserve(n);
    }

    /// How many keys a live durable timer holds.
    pub(super) fn held(&self) -> usize {
        self.keys.len()
    }

    /// Takes back the change mark of `idx`, the last one made: its row stands as it is.
    pub(super) fn unmark_last(&mut self, idx: u32) {
        let last = self.changed.pop();
        debug_assert_eq!(last, Some(idx));
    }

    /// Marks `idx` changed (its row is written at the next drain).
    pub(super) fn mark(&mut self, idx: u32) {
        self.changed.push(idx);
    }

    /// The keys whose timers ended and the slots marked changed since the last drain, taken.
    pub(super) fn drain(&mut self) -> (Vec<(OwnerId, Box<str>)>, Vec<u32>) {
        (
            std::mem::take(&mut self.ended),
            std::mem::take(&mut self.changed),
        )
    }

    /// The slots of the live durable timers, in no order.
    pub(super) fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.keys.iter().copied()
    }
}
