//! [`Scheduler::export_owner`], [`Scheduler::freeze_owner`] with its commit and abort, and
//! [`Scheduler::import_owner`].

use super::{Bound, Epochs, HandleMap, Held, ImportError, OwnerSnapshot};
use crate::format::{RestoreError, FORMAT_VERSION};
use crate::latent::{LatentInfo, MovedLatent};
use crate::owner::OwnerId;
use crate::scheduler::{Resolver, Scheduler};
use crate::tick::MovedTick;

/// The last epoch an import accepts: a signed 64-bit column (a database's `BIGINT`) holds
/// it, and no epoch can wrap. Counting a move a millisecond, an owner reaches it after 290
/// million years; a snapshot that carries more was damaged or forged.
pub(crate) const MAX_EPOCH: u64 = i64::MAX as u64;

impl<C: 'static> Scheduler<C> {
    /// Takes every timer, tick function, tickable and latent action of `owner` out of this
    /// scheduler as plain data, for [`import_owner`](Self::import_owner) into another (a
    /// server shard the entity walked into, say). Between frames.
    ///
    /// What cannot move is reported in the snapshot and dropped here: the owner's async tasks
    /// are cancelled ([`OwnerSnapshot::tasks_not_moved`]), latent actions that cannot save
    /// themselves are dropped without their abort hooks
    /// ([`OwnerSnapshot::latent_not_moved`]). No `on_cancel` or abort hook runs: the items
    /// moved, they were not cancelled. Hooks of live timers travel as a flag and are bound
    /// again by [`BindTimers::timer_on_cancel`](crate::timer::BindTimers::timer_on_cancel) at the
    /// destination.
    ///
    /// The snapshot's epoch is one more than the last this scheduler saw for the owner; each
    /// scheduler remembers, per owner that moved through it, the last epochs it saw (a
    /// small map entry, kept after the owner leaves so that a late duplicate is still
    /// refused).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let orc = OwnerId::new(12);
    /// let mut here = Scheduler::<()>::new();
    /// here.timers().every(secs(1.0)).owner(orc).name("regen").call(|_, _| {});
    /// here.ticks().add(TickSettings::named("think").owned_by(orc), |_, _| {});
    /// let moved = here.export_owner(orc);
    /// assert_eq!((moved.owner(), moved.epoch()), (orc, 1));
    /// assert_eq!((moved.timer_count(), moved.tick_count()), (1, 1));
    /// assert!(here.timers().is_empty() && here.ticks().is_empty());
    /// ```
    pub fn export_owner(&mut self, owner: OwnerId) -> OwnerSnapshot {
        let Held { snap, bound } = self.take_out(owner);
        drop(bound);
        self.flush();
        let exec = self.tasks.exec();
        exec.cancel_owner(owner);
        self.flush();
        snap
    }

    /// The first half of a two-phase handover: takes `owner`'s items out as
    /// [`export_owner`](Self::export_owner) does, but keeps their callbacks (and its async
    /// tasks running) until [`commit_owner`](Self::commit_owner) drops them or
    /// [`abort_owner`](Self::abort_owner) puts them back. Frozen items do not run; their
    /// times stand still. Items the owner gains meanwhile are not part of the handover.
    ///
    /// `None`, changing nothing, when the owner is frozen already.
    pub fn freeze_owner(&mut self, owner: OwnerId) -> Option<OwnerSnapshot> {
        if self.moves.frozen.contains_key(&owner) {
            return None;
        }
        let held = self.take_out(owner);
        let snap = held.snap.clone();
        self.moves.frozen.insert(owner, held);
        Some(snap)
    }

    /// Ends a handover that succeeded: drops the frozen owner's callbacks and cancels its
    /// async tasks. `false` when the owner is not frozen.
    pub fn commit_owner(&mut self, owner: OwnerId) -> bool {
        let Some(held) = self.moves.frozen.remove(&owner) else {
            return false;
        };
        drop(held);
        self.flush();
        self.tasks.exec().cancel_owner(owner);
        self.flush();
        true
    }

    /// Ends a handover that failed: puts the frozen owner's items back, with the time each
    /// had left at the freeze (its time stood still), and returns their new handles (the
    /// old slots may have been reused meanwhile). A latent key that an action took during
    /// the freeze keeps that action. The abort counts as the import of the freeze's
    /// snapshot: that snapshot is refused here from now on. `None` when the owner is not
    /// frozen.
    pub fn abort_owner(&mut self, owner: OwnerId) -> Option<HandleMap> {
        let held = self.moves.frozen.remove(&owner)?;
        self.flush();
        let seen = self.moves.epochs.entry(owner).or_default();
        seen.imported = seen.imported.max(held.snap.epoch);
        Some(self.put(&held.snap, held.bound))
    }

    /// Counts `owner`'s moves from `epoch` on: its next export's epoch is at least
    /// `epoch + 1`. For a registry that counts an owner's moves across processes (the
    /// `tickflow-store` crate's): a scheduler that restarted, or never saw the owner's earlier
    /// moves, then hands out an epoch that no scheduler imported yet, so the receiver does not
    /// refuse the move as a duplicate.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let orc = OwnerId::new(3);
    /// let mut here = Scheduler::<()>::new();
    /// here.raise_owner_epoch(orc, 41);
    /// assert_eq!(here.export_owner(orc).epoch(), 42);
    /// ```
    pub fn raise_owner_epoch(&mut self, owner: OwnerId, epoch: u64) {
        let seen = self.moves.epochs.entry(owner).or_default();
        seen.seen = seen.seen.max(epoch.min(MAX_EPOCH));
    }

    /// `true` while `owner` is frozen by [`freeze_owner`](Self::freeze_owner).
    pub fn is_frozen(&self, owner: OwnerId) -> bool {
        self.moves.frozen.contains_key(&owner)
    }

    /// Sets an exported owner's items up here, with their times re-anchored on this
    /// scheduler's clocks and fresh handles, binding callbacks through `resolver` as
    /// [`restore`](Self::restore) does. Between frames. Ties between the owner's timers keep
    /// their exported order. Prerequisites on other owners' functions are re-linked by name
    /// ([`HandleMap::unlinked_prerequisites`] lists those this scheduler has no function
    /// for).
    ///
    /// Items the owner already has here (set up before the import arrived, say) stay, beside
    /// the moved ones: the import adds, it never replaces. Fencing a handover so an entity
    /// lives in one place is the epoch's job here, and the owner registry's across processes.
    ///
    /// # Untrusted bytes
    ///
    /// A snapshot decoded from a peer or a file may be damaged or forged; the import holds
    /// against any value. It never panics, never hangs, allocates in proportion to the
    /// snapshot, and costs O(n log n) in the moved items plus one pass over this scheduler's
    /// functions when a moved one waits for another owner's by name (1,000 densely linked
    /// functions, half a million edges, import in about 12 ms: BENCHMARKS.md, SN3). A
    /// snapshot it accepts leaves a scheduler that runs, exports the owner on and snapshots
    /// and restores like any other. Epochs above `i64::MAX` are refused as damaged.
    ///
    /// # Errors
    ///
    /// All or nothing: nothing changes here when the import fails.
    /// - [`ImportError::Duplicate`]: this scheduler imported this move of the owner already.
    /// - [`ImportError::Frozen`]: the owner is frozen here for a handover.
    /// - [`ImportError::LatentKeyInUse`]: an unfinished latent action here holds a key of one
    ///   in the snapshot.
    /// - [`ImportError::Restore`]: another format version, damaged data, or a callback the
    ///   resolver could not bind.
    pub fn import_owner(
        &mut self,
        snap: &OwnerSnapshot,
        resolver: &mut impl Resolver<C>,
    ) -> Result<HandleMap, ImportError> {
        self.flush();
        self.check_import(snap)?;
        let bound = bind(snap, resolver)?;
        let map = self.put(snap, bound);
        let seen = self.moves.epochs.entry(snap.owner).or_default();
        *seen = Epochs {
            seen: seen.seen.max(snap.epoch),
            imported: snap.epoch,
        };
        Ok(map)
    }

    /// Sets up the items of `snap` with their closures, in the snapshot's order, and maps
    /// their handles. A latent key taken here keeps its action (an import checked there is
    /// none; after a freeze, an abort drops the frozen action, without its abort hook).
    fn put(&mut self, snap: &OwnerSnapshot, bound: Bound<C>) -> HandleMap {
        let mut map = HandleMap::default();
        for (m, (cb, hook)) in snap.timers.iter().zip(bound.timers) {
            let new = self.timers.put_moved(m, cb, hook);
            map.timers.extend(m.old_handle().map(|old| (old, new)));
        }
        let (handles, unlinked) = self.ticks.put_moved(&snap.ticks, bound.ticks);
        for (m, new) in snap.ticks.iter().zip(handles) {
            map.ticks.extend(m.old_handle().map(|old| (old, new)));
        }
        map.unlinked = unlinked;
        for (m, obj) in snap.tickables.iter().zip(bound.tickables) {
            let new = self.tickables.add_boxed(obj);
            map.tickables.extend(m.old_handle().map(|old| (old, new)));
        }
        for (uuid, action, done) in bound.latent {
            self.latent.add_boxed(snap.owner, uuid, action, done);
        }
        map
    }

    /// Takes the owner's items out with their closures; the snapshot gets the next epoch.
    fn take_out(&mut self, owner: OwnerId) -> Held<C> {
        self.flush();
        let (timers, timer_fns) = (self.timers.take_owner(owner).into_iter())
            .map(|(m, cb, hook)| (m, (cb, hook)))
            .unzip();
        let (ticks, tick_fns) = self.ticks.take_owner(owner).into_iter().unzip();
        let (tickables, objects) = self.tickables.take_owner(owner).into_iter().unzip();
        let mut snap = OwnerSnapshot {
            version: FORMAT_VERSION,
            owner,
            epoch: 0,
            timers,
            ticks,
            tickables,
            latent: Vec::new(),
            latent_not_moved: Vec::new(),
            tasks_not_moved: self.tasks.exec().count_owner(owner) as u64,
        };
        let mut latent = Vec::new();
        for l in self.latent.take_owner(owner) {
            match l.saved {
                Some(action) => snap.latent.push(MovedLatent {
                    uuid: l.info.uuid,
                    action,
                }),
                None => snap.latent_not_moved.push(l.info.clone()),
            }
            latent.push((l.info.uuid, l.action, l.on_complete));
        }
        let seen = self.moves.epochs.entry(owner).or_default();
        // Never wraps: an epoch past `MAX_EPOCH` is refused by every import, not reused.
        seen.seen = seen.seen.saturating_add(1);
        snap.epoch = seen.seen;
        let bound = Bound {
            timers: timer_fns,
            ticks: tick_fns,
            tickables: objects,
            latent,
        };
        Held { snap, bound }
    }

    /// Everything an import checks before it binds a callback.
    fn check_import(&self, snap: &OwnerSnapshot) -> Result<(), ImportError> {
        if snap.version != FORMAT_VERSION {
            return Err(RestoreError::Version {
                found: snap.version,
                supported: FORMAT_VERSION,
            }
            .into());
        }
        let owner = snap.owner;
        if self.moves.frozen.contains_key(&owner) {
            return Err(ImportError::Frozen { owner });
        }
        if snap.epoch > MAX_EPOCH {
            return Err(RestoreError::corrupt(format!(
                "the epoch of {owner:?} ({}) is past the last one a move can have ({MAX_EPOCH})",
                snap.epoch
            ))
            .into());
        }
        let imported = self.moves.epochs.get(&owner).map_or(0, |e| e.imported);
        if snap.epoch == 0 || snap.epoch <= imported {
            return Err(ImportError::Duplicate {
                owner,
                epoch: snap.epoch,
                imported,
            });
        }
        for t in &snap.timers {
            t.check(owner)?;
        }
        MovedTick::check_all(&snap.ticks, owner)?;
        let mut uuids = rustc_hash::FxHashSet::default();
        for l in &snap.latent {
            if !uuids.insert(l.uuid) {
                return Err(RestoreError::corrupt(format!(
                    "latent key ({owner:?}, {}) is moved twice",
                    l.uuid
                ))
                .into());
            }
            if self.latent.find(owner, l.uuid).is_some() {
                return Err(ImportError::LatentKeyInUse {
                    owner,
                    uuid: l.uuid,
                });
            }
        }
        Ok(())
    }
}

/// Binds every callback of a snapshot, in its order (the restore's rules, `resolver.rs`);
/// the first one missing is the error.
fn bind<C: 'static>(
    snap: &OwnerSnapshot,
    r: &mut dyn Resolver<C>,
) -> Result<Bound<C>, RestoreError> {
    let mut timers = Vec::with_capacity(snap.timers.len());
    for m in &snap.timers {
        let info = m.info();
        let bound = crate::timer::bind_timer(r, &info, m.hooked());
        timers.push(bound.ok_or_else(|| crate::timer::unbound(&info))?);
    }
    let ticks = (snap.ticks.iter())
        .map(|m| crate::tick::bind_tick(r, &m.info()))
        .collect::<Result<_, _>>()?;
    let mut tickables = Vec::with_capacity(snap.tickables.len());
    for m in &snap.tickables {
        let info = m.info(snap.owner);
        let obj = crate::tickable::bind_tickable(r, &info)?;
        if obj.owner() != Some(snap.owner) {
            return Err(RestoreError::Unbound {
                kind: "tickable",
                name: info.name,
                detail: format!("built with another owner than {:?}", snap.owner),
            });
        }
        tickables.push(obj);
    }
    let mut latent = Vec::with_capacity(snap.latent.len());
    for m in &snap.latent {
        let unbound = |detail: String| RestoreError::Unbound {
            kind: "latent action",
            name: format!("{:?}, uuid {}", snap.owner, m.uuid),
            detail,
        };
        let action = crate::latent::bind_action(r, &m.action)
            .ok_or_else(|| unbound(format!("{:?}", m.action)))?;
        let info = LatentInfo {
            owner: snap.owner,
            uuid: m.uuid,
            description: action.describe(),
        };
        let done = r.latent(&info).ok_or_else(|| unbound(info.description))?;
        latent.push((m.uuid, action, done));
    }
    Ok(Bound {
        timers,
        ticks,
        tickables,
        latent,
    })
}
