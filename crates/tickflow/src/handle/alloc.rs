//! The generational handle allocator of tick functions, tickables and tasks.
//!
//! Plain data (tags and a LIFO free list), so a snapshot can keep it exactly and a restored
//! scheduler hands out the same handles. The scheduler and its
//! [`Commands`](crate::scheduler::Commands) share one allocator per kind, so a command queued
//! from a timer callback can return its handle at once. Tags carry the allocator's container id
//! and wrap by retiring the slot (see `handle.rs`).

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::{gen_of, next_tag, saved_tag, ContainerId};

/// An allocator shared by a container and its [`Commands`](crate::scheduler::Commands) (which
/// may be on another thread): locked once per add or remove, never per frame.
pub(crate) type SharedAlloc = Arc<Mutex<HandleAlloc>>;

/// Locks a shared allocator. Poisoning is ignored: no user code runs while it is locked.
pub(crate) fn lock(alloc: &Mutex<HandleAlloc>) -> MutexGuard<'_, HandleAlloc> {
    alloc.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A [`HandleAlloc`] as plain data: its container id, every slot's generation and liveness,
/// and the free list (a stack: its last slot is reused first; a free slot not in it is
/// retired).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct AllocSnapshot {
    container: ContainerId,
    generations: Vec<u32>,
    live: Vec<bool>,
    free: Vec<u32>,
}

impl AllocSnapshot {
    /// The tag a saved generation stands for (a tag no live slot has when it is out of range,
    /// as a damaged snapshot's may be).
    pub(crate) fn tag(&self, gen: u32) -> NonZeroU32 {
        saved_tag(self.container, gen).unwrap_or(NonZeroU32::MIN)
    }
}

/// Hands out `(index, tag)` pairs; a freed index comes back with a newer tag.
#[derive(Debug, Clone)]
pub(crate) struct HandleAlloc {
    id: ContainerId,
    tags: Vec<NonZeroU32>,
    live: Vec<bool>,
    free: Vec<u32>,
}

impl Default for HandleAlloc {
    fn default() -> Self {
        Self::new()
    }
}

impl HandleAlloc {
    /// An empty allocator with a fresh container id.
    pub(crate) fn new() -> Self {
        HandleAlloc {
            id: ContainerId::fresh(),
            tags: Vec::new(),
            live: Vec::new(),
            free: Vec::new(),
        }
    }

    /// A fresh `(index, tag)`, reusing the most recently freed index.
    pub(crate) fn alloc(&mut self) -> (u32, NonZeroU32) {
        if let Some(i) = self.free.pop() {
            self.live[i as usize] = true;
            return (i, self.tags[i as usize]);
        }
        let i = u32::try_from(self.tags.len())
            .ok()
            .filter(|&i| i != u32::MAX)
            .expect("more than 2^32 - 1 handles alive at once");
        let tag = NonZeroU32::new(self.id.first_tag()).expect("tags are never 0");
        self.tags.push(tag);
        self.live.push(true);
        (i, tag)
    }

    /// Frees a live pair; `false` (and nothing changes) when it is stale, foreign or unknown.
    /// A slot whose generation is used up is retired instead of reused.
    pub(crate) fn free(&mut self, index: u32, tag: NonZeroU32) -> bool {
        if !self.is_live(index, tag) {
            return false;
        }
        let i = index as usize;
        self.live[i] = false;
        if let Some(next) = next_tag(tag.get()) {
            self.tags[i] = NonZeroU32::new(next).expect("tags are never 0");
            self.free.push(index);
        }
        true
    }

    /// The allocator as plain data.
    pub(crate) fn save(&self) -> AllocSnapshot {
        AllocSnapshot {
            container: self.id,
            generations: self.tags.iter().map(|t| gen_of(t.get())).collect(),
            live: self.live.clone(),
            free: self.free.clone(),
        }
    }

    /// The allocator a snapshot describes, or why it cannot be one.
    pub(crate) fn restore(s: &AllocSnapshot) -> Result<HandleAlloc, String> {
        let n = s.generations.len();
        if s.live.len() != n {
            return Err(format!(
                "{} liveness flags for {n} handle slots",
                s.live.len()
            ));
        }
        let tags = s
            .generations
            .iter()
            .map(|&g| {
                saved_tag(s.container, g).ok_or_else(|| {
                    format!("a handle generation ({g}) or container id is out of range")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut seen = vec![false; n];
        for &i in &s.free {
            let i = i as usize;
            if i >= n || s.live[i] || std::mem::replace(&mut seen[i], true) {
                return Err(format!(
                    "free handle slot {i} is unknown, live or listed twice"
                ));
            }
        }
        Ok(HandleAlloc {
            id: s.container,
            tags,
            live: s.live.clone(),
            free: s.free.clone(),
        })
    }

    /// A test of whether slot `index` has had generation `gen` (live now, freed, or retired):
    /// what a saved reference to one of this allocator's handles must be. A generation the
    /// slot has not reached, or the one a free slot will hand out next, would alias a future
    /// handle. Builds a table of the free slots once (O(slots)); each test is O(1).
    pub(crate) fn handed_out(&self) -> impl Fn(u32, u32) -> bool + '_ {
        let mut free = vec![false; self.tags.len()];
        for &i in &self.free {
            free[i as usize] = true;
        }
        move |index, gen| {
            let i = index as usize;
            let Some(cur) = self.tags.get(i).map(|t| gen_of(t.get())) else {
                return false;
            };
            gen >= 1 && (gen < cur || (gen == cur && !free[i]))
        }
    }

    /// `true` while the pair is allocated and not freed.
    pub(crate) fn is_live(&self, index: u32, tag: NonZeroU32) -> bool {
        let i = index as usize;
        i < self.tags.len() && self.live[i] && self.tags[i] == tag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_indices_come_back_with_a_new_generation() {
        let mut a = HandleAlloc::new();
        let (i0, g0) = a.alloc();
        let (i1, _) = a.alloc();
        assert_ne!(i0, i1);
        assert!(a.free(i0, g0));
        assert!(!a.free(i0, g0), "double free is refused");
        assert!(!a.is_live(i0, g0));
        let (i2, g2) = a.alloc();
        assert_eq!(i2, i0);
        assert!(g2 > g0);
        assert!(a.is_live(i2, g2));
        assert!(!a.is_live(99, g0));
    }

    #[test]
    fn another_allocators_pairs_are_not_live_here() {
        let (mut a, mut b) = (HandleAlloc::new(), HandleAlloc::new());
        let (ia, ta) = a.alloc();
        let (ib, tb) = b.alloc();
        assert_eq!(ia, ib, "same slot");
        assert!(!a.is_live(ib, tb) && !b.is_live(ia, ta));
        assert!(!a.free(ib, tb));
        assert!(a.is_live(ia, ta));
    }

    #[test]
    fn a_used_up_slot_is_retired() {
        let mut a = HandleAlloc::new();
        let (i, _) = a.alloc();
        let last = NonZeroU32::new(a.id.tag(crate::handle::GEN_MAX)).unwrap();
        a.tags[i as usize] = last;
        assert!(a.free(i, last));
        let (j, _) = a.alloc();
        assert_ne!(i, j, "the retired slot is never handed out again");
        let restored = HandleAlloc::restore(&a.save()).unwrap();
        assert_eq!(restored.free, a.free);
    }
}
