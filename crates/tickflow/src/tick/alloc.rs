//! Generational handle allocator shared by tick functions and tickables.
//!
//! Plain data (generations and a LIFO free list), so a snapshot can keep it exactly and a
//! restored scheduler hands out the same handles. The scheduler and its
//! [`Commands`](crate::scheduler::Commands) share one allocator per kind, so a command queued
//! from a timer callback can return its handle at once.

use std::num::NonZeroU32;

/// A [`HandleAlloc`] as plain data: every slot's generation and liveness, and the free list
/// (a stack: its last slot is reused first).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct AllocSnapshot {
    generations: Vec<u32>,
    live: Vec<bool>,
    free: Vec<u32>,
}

/// Hands out `(index, generation)` pairs; a freed index comes back with a higher generation.
#[derive(Debug, Default, Clone)]
pub(crate) struct HandleAlloc {
    gens: Vec<NonZeroU32>,
    live: Vec<bool>,
    free: Vec<u32>,
}

impl HandleAlloc {
    /// A fresh `(index, generation)`, reusing the most recently freed index.
    pub(crate) fn alloc(&mut self) -> (u32, NonZeroU32) {
        if let Some(i) = self.free.pop() {
            self.live[i as usize] = true;
            return (i, self.gens[i as usize]);
        }
        let i = u32::try_from(self.gens.len())
            .ok()
            .filter(|&i| i != u32::MAX)
            .expect("more than 2^32 - 1 handles alive at once");
        self.gens.push(NonZeroU32::MIN);
        self.live.push(true);
        (i, NonZeroU32::MIN)
    }

    /// Frees a live pair; `false` (and nothing changes) when it is stale or unknown.
    pub(crate) fn free(&mut self, index: u32, gen: NonZeroU32) -> bool {
        if !self.is_live(index, gen) {
            return false;
        }
        let i = index as usize;
        self.live[i] = false;
        // Wrapping after 2^32 reuses of one index could alias a very old handle; that many
        // reuses of one slot is far beyond any game's lifetime.
        self.gens[i] = gen.checked_add(1).unwrap_or(NonZeroU32::MIN);
        self.free.push(index);
        true
    }

    /// The allocator as plain data.
    pub(crate) fn save(&self) -> AllocSnapshot {
        AllocSnapshot {
            generations: self.gens.iter().map(|g| g.get()).collect(),
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
        let gens = s
            .generations
            .iter()
            .map(|&g| NonZeroU32::new(g).ok_or("a handle generation is 0"))
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
            gens,
            live: s.live.clone(),
            free: s.free.clone(),
        })
    }

    /// `true` while the pair is allocated and not freed.
    pub(crate) fn is_live(&self, index: u32, gen: NonZeroU32) -> bool {
        let i = index as usize;
        i < self.gens.len() && self.live[i] && self.gens[i] == gen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_indices_come_back_with_a_new_generation() {
        let mut a = HandleAlloc::default();
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
}
