//! An owner walking between nodes, run by [`Durable`]: the handover protocol of
//! [`Handovers`](crate::Handovers) with the scheduler's two-phase move on either side, its
//! writes in the nodes' commits.
//!
//! An owner's states on the sending node, and what each crash leaves (the store's README has
//! the whole table):
//!
//! ```text
//! held ──send──▶ frozen ──commit──▶ in flight ──receiver's commit──▶ moved   (drop it)
//!                  │  (parcel queued)   │ (parcel in the outbox)  └──parcel refused──▶ kept
//!                  └──crash: held again (nothing was sent)        (crash: resumed frozen,
//!                                                                  settles by itself)
//! ```
//!
//! The receiver imports a parcel in [`receive`](Durable::receive) and takes the owner in its
//! next commit, with the owner's rows, in one transaction: a receiver that crashes before that
//! commit finds the parcel in its inbox again.

use tickflow::snapshot::{HandleMap, OwnerSnapshot, Resolver};
use tickflow::{OwnerId, Scheduler};

use super::Durable;
use crate::error::StoreError;
use crate::handover::{holders_in, Handovers, Parcel, Settled, MAX_PARCEL};
use crate::store::{in_tx, Store};

/// An owner that arrived: its scheduler items are imported (they run from the next frame
/// on), and your own state of it is here to set up. The owner is taken in the next commit.
#[derive(Debug)]
#[non_exhaustive]
pub struct Arrival {
    /// The owner.
    pub owner: OwnerId,
    /// The node it came from.
    pub sender: String,
    /// Your state of it, as the sender gave it to [`Durable::send`].
    pub state: Vec<u8>,
    /// The old handles of its timers, tick functions and tickables, mapped to the new ones.
    pub handles: HandleMap,
    /// It was adopted from a lost node ([`Durable::adopt`]), not sent: only its durable
    /// timers came (resumed by their offline policies, as after a restart), `state` and
    /// `handles` are empty, and your state of it is what your own tables hold.
    pub adopted: bool,
}

/// How a handover ended, as [`Durable::handovers`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handover {
    /// An owner this node sent now belongs to `to`: its items are gone from the scheduler;
    /// drop your state of it.
    Moved {
        /// The owner.
        owner: OwnerId,
        /// Its new node.
        to: String,
    },
    /// An owner this node sent was refused (its parcel could not be imported there, or was
    /// damaged): it runs here again from where it was frozen.
    Kept {
        /// The owner.
        owner: OwnerId,
    },
    /// An owner that arrived here could not be taken after all (another node took it first,
    /// or it was delivered twice): its items are gone from the scheduler; drop your state of
    /// it.
    Dropped {
        /// The owner.
        owner: OwnerId,
    },
    /// This node was fenced (paused or cut off past its lease) and another node adopted this
    /// owner meanwhile: its items are gone from the scheduler; drop your state of it, and the
    /// effects you keep for it that no commit wrote (its adopter runs those frames again).
    TakenOver {
        /// The owner.
        owner: OwnerId,
        /// The node that holds it now (`""` when the registry has no row of it).
        by: String,
    },
}

impl<S: Store> Durable<S> {
    /// Sends `owner` to node `to`: freezes its items in `sched` (they stop running), and puts
    /// its parcel — the items and your `state` of it — in the outbox in the next commit. The
    /// owner then settles by itself in later commits: [`Handover::Moved`] once `to` took it,
    /// [`Handover::Kept`] if it was refused.
    ///
    /// # Errors
    ///
    /// Nothing changes: [`StoreError::NotHeld`] when the registry gives the owner another
    /// node, [`StoreError::TooLarge`] for a parcel over [`MAX_PARCEL`],
    /// [`StoreError::Setting`] when the owner is on its way already, and a database error
    /// ([`is_database`](StoreError::is_database)) when the registry row of an owner this node
    /// never wrote could not be read: send it again later.
    pub fn send<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        owner: OwnerId,
        to: &str,
        state: Vec<u8>,
    ) -> Result<(), StoreError> {
        let busy = self.in_flight.contains_key(&owner)
            || self.queue.sends.iter().any(|p| p.owner == owner)
            || sched.is_frozen(owner);
        if busy || owner.get() == 0 || to == self.node {
            return Err(StoreError::Setting(format!(
                "{owner:?} cannot be sent to {to:?}: it is on its way already, is no owner, or \
                 the node is this one"
            )));
        }
        let epoch = match self.epochs.get(&owner) {
            Some(&e) => e,
            None => {
                // Never written by this node: it must be nobody's yet (it is registered to
                // this node by the commit that sends it).
                let ids = [owner.get() as i64];
                let holder = in_tx(&mut self.store, false, |tx| {
                    holders_in::<S>(tx, &ids, false)
                })?;
                if let Some((_, h)) = holder.into_iter().next() {
                    return Err(StoreError::NotHeld {
                        owner,
                        node: self.node.clone(),
                        epoch: 0,
                        holder: Some(h),
                    });
                }
                0
            }
        };
        // The owner's rows as they are at the freeze go in the commit with its parcel: changes
        // its timers made this frame are journaled now, and a frozen timer journals nothing
        // more (a sender that restarts, or keeps the owner, resumes it from these rows).
        let changes = sched.timers().durable_changes();
        self.queue.add_changes(changes);
        // The registry counts the owner's moves across processes: the snapshot's epoch follows
        // it, so a receiver that saw earlier moves of the owner takes this one.
        sched.raise_owner_epoch(owner, epoch);
        let snap = sched
            .freeze_owner(owner)
            .expect("not frozen: checked above");
        let bytes = postcard::to_stdvec(&(&snap, &state)).expect("plain data encodes");
        if bytes.len() > MAX_PARCEL {
            sched.abort_owner(owner);
            return Err(StoreError::TooLarge {
                key: format!("the parcel of {owner:?}"),
                field: "bytes",
                len: bytes.len(),
                max: MAX_PARCEL,
            });
        }
        self.queue.sends.push(Parcel {
            owner,
            epoch,
            sender: self.node.clone(),
            receiver: to.to_string(),
            bytes,
        });
        Ok(())
    }

    /// Takes in up to `limit` parcels addressed to this node: imports each into `sched`
    /// (binding callbacks with `resolver`) and returns them, to set up your state of each;
    /// the next commit takes them in the registry with their rows. A parcel that is damaged,
    /// does not import, or that the registry no longer matches (stale, or delivered twice) is
    /// refused in the next commit and not returned (its sender keeps the owner).
    ///
    /// Call it between frames, as often as you like: a parcel imported and not yet committed
    /// is not returned again. After a restart, the parcels this node had imported but not
    /// taken are in its inbox still, and come back here.
    pub fn receive<C: 'static, R: Resolver<C>>(
        &mut self,
        sched: &mut Scheduler<C>,
        resolver: &mut R,
        limit: usize,
    ) -> Result<Vec<Arrival>, StoreError> {
        let node = self.node.clone();
        let inbox = self.store.inbox(&node, limit)?;
        let pending = |p: &Parcel, q: &super::Queue| {
            q.accepts
                .iter()
                .any(|a| a.owner == p.owner && a.epoch == p.epoch)
                || q.refuses.contains(&(p.owner, p.epoch))
        };
        let fresh: Vec<Parcel> = (inbox.into_iter())
            .filter(|p| !pending(p, &self.queue))
            .filter(|p| self.attempt.as_ref().is_none_or(|a| !pending(p, a.queue())))
            .collect();
        if fresh.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = fresh.iter().map(|p| p.owner.get() as i64).collect();
        let holders = in_tx(&mut self.store, false, |tx| {
            holders_in::<S>(tx, &ids, false)
        })?;
        let mut out = Vec::new();
        for p in fresh {
            let current =
                (holders.get(&p.owner)).is_some_and(|h| h.node == p.sender && h.epoch == p.epoch);
            out.extend(self.take_in(sched, resolver, p, current));
        }
        Ok(out)
    }

    /// Imports parcel `p` for this node (`current`: the registry still names its sender at its
    /// epoch, or the commit checks it) and queues its acceptance; or queues its refusal.
    pub(super) fn take_in<C: 'static, R: Resolver<C>>(
        &mut self,
        sched: &mut Scheduler<C>,
        resolver: &mut R,
        mut p: Parcel,
        current: bool,
    ) -> Option<Arrival> {
        let decoded = postcard::from_bytes::<(OwnerSnapshot, Vec<u8>)>(&p.bytes);
        let imported = match decoded {
            Ok((snap, state)) if current && snap.owner() == p.owner => sched
                .import_owner(&snap, resolver)
                .ok()
                .map(|handles| (handles, state)),
            _ => None,
        };
        let Some((handles, state)) = imported else {
            self.queue.refuses.push((p.owner, p.epoch));
            return None;
        };
        p.bytes = Vec::new(); // the acceptance needs the key only
        p.receiver = self.node.clone(); // (a parcel to a lost node: this one takes it)
        let arrival = Arrival {
            owner: p.owner,
            sender: p.sender.clone(),
            state,
            handles,
            adopted: false,
        };
        self.queue.accepts.push(p);
        Some(arrival)
    }

    /// The handovers that ended since the last call, in the order they ended: owners this
    /// node sent that moved or were kept, and arrivals that could not be taken after all.
    pub fn handovers(&mut self) -> Vec<Handover> {
        std::mem::take(&mut self.events)
    }

    /// The owners this node sent whose handover has not ended yet.
    pub fn in_flight(&self) -> Vec<OwnerId> {
        let queued = self.queue.sends.iter().map(|p| p.owner);
        self.in_flight.keys().copied().chain(queued).collect()
    }

    /// Drops what this node queued for `owner` and the epoch it held: after
    /// [`StoreError::NotHeld`] says another node has it, call this
    /// and remove the owner from the scheduler, and the next commit goes through.
    pub fn forget_owner(&mut self, owner: OwnerId) {
        self.epochs.remove(&owner);
        self.queue.forget(owner);
        if let Some(a) = self.attempt.as_mut() {
            a.forget(owner);
        }
    }

    /// Applies where the handovers in flight stand, as a landed commit read it.
    pub(super) fn settle<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        settled: Vec<(OwnerId, Settled)>,
    ) {
        for (owner, s) in settled {
            self.in_flight.remove(&owner);
            match s {
                Settled::Moved(h) => {
                    sched.commit_owner(owner);
                    self.epochs.remove(&owner);
                    self.queue.drops.push(owner);
                    self.events.push(Handover::Moved { owner, to: h.node });
                }
                Settled::Kept => {
                    sched.abort_owner(owner);
                    self.events.push(Handover::Kept { owner });
                }
                Settled::Waiting => {}
            }
        }
    }

    /// Takes out owners whose parcels a commit found stale: their imports are undone and
    /// their parcels refused.
    pub(super) fn drop_stale<C: 'static>(&mut self, sched: &mut Scheduler<C>, owners: &[OwnerId]) {
        for &owner in owners {
            let q = &mut self.queue;
            if let Some(i) = q.accepts.iter().position(|p| p.owner == owner) {
                let p = q.accepts.remove(i);
                q.refuses.push((p.owner, p.epoch));
            }
            q.adopts.retain(|a| a.owner != owner);
            q.changes.retain(|c| change_owner(c) != owner);
            if sched.freeze_owner(owner).is_some() {
                sched.commit_owner(owner);
            }
            self.events.push(Handover::Dropped { owner });
        }
    }
}

pub(super) fn change_owner(c: &tickflow::timer::DurableChange) -> OwnerId {
    match c {
        tickflow::timer::DurableChange::Set(t) => t.owner,
        tickflow::timer::DurableChange::Removed { owner, .. } => *owner,
    }
}
