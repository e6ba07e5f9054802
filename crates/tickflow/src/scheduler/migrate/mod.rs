//! Moving an owner between schedulers: [`OwnerSnapshot`], [`HandleMap`], [`ImportError`].
//! The scheduler's methods are in `migrate/ops.rs`; the guide is in the
//! [`snapshot`](crate::snapshot) module docs ("Moving an owner").

mod ops;

use std::fmt;

use rustc_hash::FxHashMap;

use crate::format::RestoreError;
use crate::latent::{Completion, LatentAction, LatentInfo, MovedLatent};
use crate::owner::OwnerId;
use crate::tick::{MovedTick, TickBody, TickHandle};
use crate::tickable::{MovedTickable, Tickable, TickableHandle};
use crate::timer::{Callback, CancelHook, MovedTimer, TimerHandle};

/// One owner's timers, tick functions, tickables and latent actions as plain data, taken
/// out of one scheduler by [`Scheduler::export_owner`](super::Scheduler::export_owner) (or
/// [`freeze_owner`](super::Scheduler::freeze_owner)) to be imported into another by
/// [`Scheduler::import_owner`](super::Scheduler::import_owner).
///
/// Times are relative to the source's clocks (time to the next call, interval phase, time
/// counted by a latent delay), so the import re-anchors them on the destination's clocks,
/// whatever those read. It carries `(owner, epoch)`: the epoch counts the owner's moves, so
/// a destination refuses a snapshot it imported already (a duplicate delivery) or an older
/// one.
///
/// `Clone + PartialEq + Send`; with the `serde` feature `Serialize + Deserialize` (37 bytes
/// per named timer in postcard, `tests/migrate_owner.rs`).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OwnerSnapshot {
    version: u32,
    owner: OwnerId,
    epoch: u64,
    timers: Vec<MovedTimer>,
    ticks: Vec<MovedTick>,
    tickables: Vec<MovedTickable>,
    latent: Vec<MovedLatent>,
    latent_not_moved: Vec<LatentInfo>,
    tasks_not_moved: u64,
}

impl OwnerSnapshot {
    /// The owner whose items these are.
    pub fn owner(&self) -> OwnerId {
        self.owner
    }

    /// Which move of the owner this is: 1 for its first export, then one more than the
    /// last epoch the exporting scheduler saw for it.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The format version this snapshot was written with.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Timers moved.
    pub fn timer_count(&self) -> usize {
        self.timers.len()
    }

    /// Tick functions moved.
    pub fn tick_count(&self) -> usize {
        self.ticks.len()
    }

    /// Tickables moved.
    pub fn tickable_count(&self) -> usize {
        self.tickables.len()
    }

    /// Latent actions moved.
    pub fn latent_count(&self) -> usize {
        self.latent.len()
    }

    /// Latent actions that could not save themselves (custom actions whose
    /// [`save`](crate::LatentAction::save) returns `None`, [`WaitUntil`](crate::latent::WaitUntil)):
    /// an export drops them, without running their abort hooks.
    pub fn latent_not_moved(&self) -> &[LatentInfo] {
        &self.latent_not_moved
    }

    /// The owner's async tasks: futures cannot move. An export cancels them; a freeze leaves
    /// them running until the commit.
    pub fn tasks_not_moved(&self) -> u64 {
        self.tasks_not_moved
    }

    /// `true` when everything the owner had is in the snapshot.
    pub fn is_complete(&self) -> bool {
        self.latent_not_moved.is_empty() && self.tasks_not_moved == 0
    }
}

/// The handles an import gave each moved item, by the handle it had in the source: game
/// state that holds handles is fixed up through it (as an entity map is after a network
/// rollback). Latent actions keep their `(owner, uuid)` key and need no mapping.
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::snapshot::Registry;
///
/// fn open(n: &mut u32, _: &mut TimerCx<u32>) {
///     *n += 1;
/// }
/// let door = OwnerId::new(7);
/// let (mut a, mut b) = (Scheduler::<u32>::new(), Scheduler::<u32>::new());
/// let old = a.timers().after(secs(1.0)).owner(door).name("open").call(open);
/// let moved = a.export_owner(door);
/// let map = b.import_owner(&moved, &mut Registry::new().timer("open", open)).unwrap();
/// let new = map.timer(old).unwrap();
/// assert!(b.timers().exists(new) && !a.timers().exists(old));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandleMap {
    timers: Vec<(TimerHandle, TimerHandle)>,
    ticks: Vec<(TickHandle, TickHandle)>,
    tickables: Vec<(TickableHandle, TickableHandle)>,
    unlinked: Vec<(TickHandle, String)>,
}

impl HandleMap {
    /// The new handle of the timer that had `old` in the source.
    pub fn timer(&self, old: TimerHandle) -> Option<TimerHandle> {
        find(&self.timers, old)
    }

    /// The new handle of the tick function that had `old` in the source.
    pub fn tick(&self, old: TickHandle) -> Option<TickHandle> {
        find(&self.ticks, old)
    }

    /// The new handle of the tickable that had `old` in the source.
    pub fn tickable(&self, old: TickableHandle) -> Option<TickableHandle> {
        find(&self.tickables, old)
    }

    /// Every moved timer as `(old, new)`, in set order.
    pub fn timers(&self) -> &[(TimerHandle, TimerHandle)] {
        &self.timers
    }

    /// Every moved tick function as `(old, new)`, in registration order.
    pub fn ticks(&self) -> &[(TickHandle, TickHandle)] {
        &self.ticks
    }

    /// Every moved tickable as `(old, new)`, in registration order.
    pub fn tickables(&self) -> &[(TickableHandle, TickableHandle)] {
        &self.tickables
    }

    /// Prerequisites on another owner's function that this scheduler has no function for:
    /// `(new handle of the moved function, name it waited for)`. The function runs without
    /// that edge; add it with [`add_prerequisite`](crate::tick::TickFunctions::add_prerequisite)
    /// once the other function exists.
    pub fn unlinked_prerequisites(&self) -> &[(TickHandle, String)] {
        &self.unlinked
    }
}

fn find<H: Copy + PartialEq>(pairs: &[(H, H)], old: H) -> Option<H> {
    pairs.iter().find(|(o, _)| *o == old).map(|&(_, new)| new)
}

/// Why [`Scheduler::import_owner`](super::Scheduler::import_owner) refused a snapshot.
/// Nothing of the destination changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportError {
    /// This scheduler imported this move of the owner (or a later one) already: the snapshot
    /// was delivered twice, or is stale.
    Duplicate {
        /// The owner.
        owner: OwnerId,
        /// The snapshot's epoch.
        epoch: u64,
        /// The latest epoch of the owner this scheduler imported.
        imported: u64,
    },
    /// The owner is frozen in this scheduler ([`freeze_owner`](super::Scheduler::freeze_owner)):
    /// commit or abort that handover first.
    Frozen {
        /// The owner.
        owner: OwnerId,
    },
    /// A latent action of the snapshot has a key that an unfinished action holds here.
    LatentKeyInUse {
        /// The owner.
        owner: OwnerId,
        /// The key within the owner.
        uuid: u64,
    },
    /// The snapshot cannot be used: another format version, data that contradicts itself,
    /// or a callback the resolver could not bind.
    Restore(RestoreError),
}

impl From<RestoreError> for ImportError {
    fn from(e: RestoreError) -> Self {
        ImportError::Restore(e)
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Duplicate {
                owner,
                epoch,
                imported,
            } => write!(
                f,
                "move {epoch} of {owner:?} was refused: move {imported} of it was imported here already"
            ),
            ImportError::Frozen { owner } => write!(
                f,
                "{owner:?} is frozen here for a handover: commit or abort it before importing"
            ),
            ImportError::LatentKeyInUse { owner, uuid } => write!(
                f,
                "latent action ({owner:?}, {uuid}) cannot be imported: an unfinished action holds its key"
            ),
            ImportError::Restore(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ImportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ImportError::Restore(e) => Some(e),
            _ => None,
        }
    }
}

/// A latent action with its key and completion.
type KeyedAction<C> = (u64, Box<dyn LatentAction<C>>, Completion<C>);

/// The closures of an owner's items, in the order of a snapshot's records: bound by the
/// resolver for an import, or kept by a freeze for an abort.
struct Bound<C> {
    timers: Vec<(Callback<C>, Option<CancelHook<C>>)>,
    ticks: Vec<TickBody<C>>,
    tickables: Vec<Box<dyn Tickable<C>>>,
    /// Every latent action with its key (a freeze also keeps those that cannot save
    /// themselves, which the snapshot only lists).
    latent: Vec<KeyedAction<C>>,
}

/// An owner's items taken out by a freeze: the snapshot it returned (its epoch included) and
/// the closures, until a commit drops them or an abort puts them back.
struct Held<C> {
    snap: OwnerSnapshot,
    bound: Bound<C>,
}

/// The epochs of one owner this scheduler saw.
#[derive(Clone, Copy, Default)]
struct Epochs {
    /// The latest, exported or imported: the next export's epoch is one more.
    seen: u64,
    /// The latest imported (an abort counts as the import of its freeze): a snapshot of
    /// this epoch or an older one is refused.
    imported: u64,
}

/// What a scheduler keeps about moves: each owner's epochs and the frozen owners.
pub(super) struct Moves<C> {
    epochs: FxHashMap<OwnerId, Epochs>,
    frozen: FxHashMap<OwnerId, Held<C>>,
}

impl<C> Default for Moves<C> {
    fn default() -> Self {
        Moves {
            epochs: FxHashMap::default(),
            frozen: FxHashMap::default(),
        }
    }
}
