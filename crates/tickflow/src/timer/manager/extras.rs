//! A timer's side data ([`Extras`]): what only some timers carry, kept off the 48-byte hot
//! entry in a hash table by slot ([`SideTable`]). Its fields are read and written by the
//! manager's files (`manager/`), as they were when it lived in the manager's own file.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::owner::OwnerId;
use crate::timer::callback::CancelHook;
use crate::timer::spec::Offline;

/// What only some timers carry, kept off the 48-byte hot entry. It is itself an entry of a
/// hash table keyed by slot, so it holds only what most of those timers have (an owner, a
/// name, durability): the rest is boxed in [`Rare`], which keeps the table's entries at 56
/// bytes instead of 120 (a million durable timers resume with half the memory traffic).
pub(crate) struct Extras<C> {
    pub(super) owner: Option<OwnerId>,
    pub(super) name: Option<Box<str>>,
    pub(super) rare: Option<Box<Rare<C>>>,
    /// High 32 bits of the call count.
    pub(super) calls_hi: u32,
    /// Durable: a store keeps it, and what a restart does with the time that passed.
    pub(super) durable: Option<Offline>,
    /// Durable and in the journal since the last drain.
    pub(super) dirty: bool,
}

// An entry of the side table (slot number and `Extras`) stays at 56 bytes: see `Extras`.
const _: () = assert!(std::mem::size_of::<Extras<()>>() == 48);

/// The side table: each timer's [`Extras`] by slot number.
pub(crate) type SideTable<C> = HashMap<u32, Extras<C>, BuildHasherDefault<SlotHash>>;

/// Hashes a slot number to itself in the low bits, which pick the table's bucket, and to a
/// mixed value in the top 7, the tag a probe compares first. Slots taken one after another
/// (a load, a restore, a burst of sets) then fill neighbouring buckets instead of random ones:
/// a resume of a million durable timers writes its side table in order. Slot numbers come from
/// the slot allocator, dense from 0, not from input, so no caller can make them collide.
#[derive(Default)]
pub(crate) struct SlotHash(u64);

impl Hasher for SlotHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u32` keys are hashed here; any other input is folded in, well enough.
        for &b in bytes {
            self.write_u32(u32::from(b) ^ (self.0 as u32).rotate_left(8));
        }
    }

    fn write_u32(&mut self, i: u32) {
        let mixed = u64::from(i).wrapping_mul(0xf135_7aea_2e62_a9c5);
        self.0 = u64::from(i) | (mixed & (0x7f << 57));
    }
}

/// What few timers with [`Extras`] have.
pub(super) struct Rare<C> {
    pub(super) on_cancel: Option<CancelHook<C>>,
    /// Calls left, for timers limited with `times(n)`; includes a call that is running.
    pub(super) times_left: Option<u64>,
    /// The first delay of a timer whose first delay differs from its period (or, for a
    /// one-shot, from the delay its rate reports): what `elapsed` counts against before the
    /// first call.
    pub(super) first_delay: Option<u64>,
    /// Bytes of the user's that travel with the timer (its row, when durable).
    pub(super) payload: Option<Box<[u8]>>,
    /// Calls owed from before its clock's start: a durable timer that lapsed offline for
    /// longer than its clock had run (`Offline::CatchUp`). Made first, at its first due time.
    pub(super) owed: u64,
}

impl<C> Default for Rare<C> {
    fn default() -> Self {
        Rare {
            on_cancel: None,
            times_left: None,
            first_delay: None,
            payload: None,
            owed: 0,
        }
    }
}

impl<C> Default for Extras<C> {
    fn default() -> Self {
        Extras {
            owner: None,
            name: None,
            rare: None,
            calls_hi: 0,
            durable: None,
            dirty: false,
        }
    }
}

impl<C> Extras<C> {
    pub(super) fn is_empty(&self) -> bool {
        self.owner.is_none()
            && self.name.is_none()
            && self.rare.is_none()
            && self.calls_hi == 0
            && self.durable.is_none()
    }

    /// The rare part, made when first written.
    pub(super) fn rare_mut(&mut self) -> &mut Rare<C> {
        self.rare.get_or_insert_with(Box::default)
    }

    /// The rare fields given, boxed only when one of them is set.
    pub(super) fn set_rare(
        &mut self,
        on_cancel: Option<CancelHook<C>>,
        times_left: Option<u64>,
        first_delay: Option<u64>,
        payload: Option<Box<[u8]>>,
    ) {
        if on_cancel.is_some() || times_left.is_some() || first_delay.is_some() || payload.is_some()
        {
            self.rare = Some(Box::new(Rare {
                on_cancel,
                times_left,
                first_delay,
                payload,
                owed: 0,
            }));
        }
    }

    pub(super) fn times_left(&self) -> Option<u64> {
        self.rare.as_ref().and_then(|r| r.times_left)
    }

    pub(super) fn first_delay(&self) -> Option<u64> {
        self.rare.as_ref().and_then(|r| r.first_delay)
    }

    pub(super) fn payload(&self) -> Option<&[u8]> {
        self.rare.as_ref().and_then(|r| r.payload.as_deref())
    }

    pub(super) fn owed(&self) -> u64 {
        self.rare.as_ref().map_or(0, |r| r.owed)
    }

    pub(super) fn has_on_cancel(&self) -> bool {
        self.rare.as_ref().is_some_and(|r| r.on_cancel.is_some())
    }

    pub(super) fn take_on_cancel(&mut self) -> Option<CancelHook<C>> {
        self.rare.as_mut().and_then(|r| r.on_cancel.take())
    }
}
