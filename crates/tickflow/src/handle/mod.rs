//! Handles: the one definition every handle type uses, the container ids that tie a handle
//! to the container that made it, and the one allocator (`alloc.rs`) of tick functions,
//! tickables and tasks.
//!
//! A handle is 8 bytes: a slot index and a 32-bit *tag*. The tag packs the id of the container
//! that made the handle (a timer manager, a scheduler's tick functions or tickables) in its
//! high [`CONTAINER_BITS`] bits and the slot's generation in the low [`GEN_BITS`] bits. Slots
//! store the full tag of their current occupant, so the one comparison that rejects a stale
//! handle (same slot, older generation) also rejects a foreign one (another container's id).
//!
//! Ground rules:
//!
//! - **Container ids** are handed out round-robin from 1 to 4,095 by a process-wide counter, so
//!   any two of 4,095 containers made one after the other have different ids, and a handle
//!   passed to the wrong one is answered like a stale handle (`false`/`None`). Two containers
//!   made exactly a multiple of 4,095 creations apart share an id: a handle passed between
//!   those two is not detected (it may reach an unrelated item in the same slot).
//! - A **restored** container takes the id of the one it was saved from, so the handles held
//!   in game state keep working. Ids are left out of [state hashes](crate::snapshot): they are
//!   an identity, not state, and two peers of a lockstep game need not make their containers in
//!   the same order.
//! - **Generations** start at 1 and count to 2^20 − 1 (about a million reuses of one slot).
//!   A slot whose generation would wrap is retired (never reused), so a stale handle can never
//!   match a newer occupant: a few bytes lost per million reuses of one slot. One policy for
//!   every allocator.
//! - **Allocators**: tick functions, tickables and tasks take their handles from one
//!   [`HandleAlloc`] each (tags and a LIFO free stack, plain data for snapshots). The timer
//!   manager's slots keep their tags inside their 48-byte entries instead, so that a call
//!   touches one place; they take every tag from [`next_tag`] all the same.

mod alloc;

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};

pub(crate) use alloc::{lock as lock_alloc, AllocSnapshot, HandleAlloc, SharedAlloc};

/// Bits of a tag that hold the generation.
pub(crate) const GEN_BITS: u32 = 20;
/// Bits of a tag that hold the container id.
pub(crate) const CONTAINER_BITS: u32 = 32 - GEN_BITS;
/// The last generation a slot can have; freeing it then retires the slot.
pub(crate) const GEN_MAX: u32 = (1 << GEN_BITS) - 1;
const ID_COUNT: u32 = (1 << CONTAINER_BITS) - 1;

/// Which container a handle belongs to: 1 to 4,095.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub(crate) struct ContainerId(u16);

/// Ids are identities, not state: they are left out of hashes so that state hashes of two
/// processes that made their containers in different orders still agree.
impl std::hash::Hash for ContainerId {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

static NEXT_ID: AtomicU32 = AtomicU32::new(0);

impl ContainerId {
    /// The next id in the round-robin.
    pub(crate) fn fresh() -> ContainerId {
        let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        ContainerId((n % ID_COUNT + 1) as u16)
    }

    /// An id read back from a snapshot; `None` when it is out of range.
    #[cfg(test)]
    pub(crate) fn saved(id: u16) -> Option<ContainerId> {
        ContainerId(id).is_valid().then_some(ContainerId(id))
    }

    /// `false` for an id no container is given (a damaged snapshot's).
    pub(crate) fn is_valid(self) -> bool {
        self.0 != 0 && u32::from(self.0) <= ID_COUNT
    }

    /// The tag of generation `gen` (1 to [`GEN_MAX`]) in this container.
    pub(crate) fn tag(self, gen: u32) -> u32 {
        debug_assert!((1..=GEN_MAX).contains(&gen));
        u32::from(self.0) << GEN_BITS | gen
    }

    /// The tag a new slot starts with.
    pub(crate) fn first_tag(self) -> u32 {
        self.tag(1)
    }
}

/// The tag of a slot's next occupant, or `None` when the generation is used up (retire it).
pub(crate) fn next_tag(tag: u32) -> Option<u32> {
    (gen_of(tag) < GEN_MAX).then_some(tag + 1)
}

/// The generation part of a tag.
pub(crate) fn gen_of(tag: u32) -> u32 {
    tag & GEN_MAX
}

/// Rebuilds a tag from a saved generation; `None` when the generation is out of range.
pub(crate) fn saved_tag(id: ContainerId, gen: u32) -> Option<NonZeroU32> {
    (id.is_valid() && (1..=GEN_MAX).contains(&gen))
        .then(|| NonZeroU32::new(id.tag(gen)).expect("generations start at 1"))
}

/// Defines a handle type: a slot index and a tag, `Copy`, 8 bytes (`Option` too), a `Default`
/// that never names anything, and a compact `Debug` (`12v3`: slot 12, generation 3).
macro_rules! handle_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name {
            index: u32,
            tag: std::num::NonZeroU32,
        }

        impl $name {
            pub(crate) fn new(index: u32, tag: std::num::NonZeroU32) -> $name {
                $name { index, tag }
            }

            /// The slot index.
            pub(crate) fn index(self) -> u32 {
                self.index
            }

            /// The slot's tag: container id and generation.
            pub(crate) fn tag(self) -> std::num::NonZeroU32 {
                self.tag
            }

            /// The handle as plain numbers `(index, tag)`, for records that travel (an
            /// owner's snapshot names each item by its handle in the source).
            pub(crate) fn to_raw(self) -> (u32, u32) {
                (self.index, self.tag.get())
            }

            /// A handle from [`to_raw`](Self::to_raw)'s numbers; `None` for a zero tag
            /// (damaged data).
            pub(crate) fn from_raw((index, tag): (u32, u32)) -> Option<$name> {
                std::num::NonZeroU32::new(tag).map(|tag| $name { index, tag })
            }

            /// `true` for the `Default` handle, which never names anything.
            pub fn is_none(self) -> bool {
                self == $name::default()
            }
        }

        impl Default for $name {
            fn default() -> $name {
                // Slot u32::MAX is never allocated, and container id 0 is never given out.
                $name::new(u32::MAX, std::num::NonZeroU32::MIN)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                if self.is_none() {
                    return write!(f, "{}(none)", stringify!($name));
                }
                write!(
                    f,
                    "{}v{}",
                    self.index,
                    $crate::handle::gen_of(self.tag.get())
                )
            }
        }
    };
}

pub(crate) use handle_type;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_go_round_robin_and_tags_keep_them_apart() {
        let a = ContainerId::fresh();
        let b = ContainerId::fresh();
        assert_ne!(a, b);
        assert_ne!(a.first_tag(), b.first_tag());
        assert_eq!(gen_of(a.tag(7)), 7);
        assert_eq!(next_tag(a.tag(7)), Some(a.tag(8)));
        assert_eq!(next_tag(a.tag(GEN_MAX)), None, "retired, never wrapped");
        assert_eq!(ContainerId::saved(0), None);
        assert_eq!(ContainerId::saved(4095), Some(ContainerId(4095)));
        assert_eq!(ContainerId::saved(4096), None);
        assert_eq!(saved_tag(a, 0), None);
        assert_eq!(saved_tag(a, GEN_MAX + 1), None);
    }

    #[test]
    fn every_id_is_in_range() {
        for _ in 0..5_000 {
            let id = ContainerId::fresh();
            assert!(ContainerId::saved(id.0).is_some());
        }
    }
}
