//! The commit protocol: one transaction per commit, numbered.
//!
//! Ground rules:
//!
//! - A commit writes, in one transaction: the registry moves of the parcels this node imported
//!   (a compare-and-set each), the registration of owners it writes for the first time, the
//!   deletion of its rows of owners that moved away, its timers' changes, its parcels sent,
//!   its refusals, your effects, and last its node's row — clocks, the commit number `n`, the
//!   count and XOR of its rows' checksums and a renewed lease — by a compare-and-set that
//!   passes only while this process holds the node and the row says `n - 1`.
//! - Every owner a commit writes must be this node's: held (the registry gave it to this node,
//!   and only this node's own handovers or a takeover of the node, through the node's row, move
//!   it away), or registered to it in this very commit. A write of another node's owner refuses
//!   the whole commit ([`StoreError::NotHeld`]).
//! - A commit that fails is tried again by the next one under the same number, with what came
//!   since. Rows are states, not events, so writing a row again is harmless; parcels, registry
//!   moves and your effects are not, and are never written twice: when a commit's outcome is
//!   unknown ([`StoreError::Uncertain`]), the next commit first reads the node's commit number.
//!   If it is `n`, that commit landed: what it wrote is done, and the next one is `n + 1`,
//!   covering only the frames after it ([`Commit::frames`]).
//!
//! Cost: a fixed number of statements per commit on PostgreSQL (arrays), one per row on
//! SQLite; one hash lookup per changed row for the node's checksum tally.

use std::time::Instant;

use rustc_hash::FxHashMap;

use tickflow::timer::DurableChange;
use tickflow::{OwnerId, Scheduler};

use super::attempt::{Attempt, Done};
use super::lease::not_advanced;
use super::tally::{Rows, Tally};
use super::{Commit, Durable, Queue};
use crate::backend::{NodeRow, Row};
use crate::error::StoreError;
use crate::handover::{holders_in, Accepted, Handovers, Settled};
use crate::row::check_sizes;
use crate::store::Store;
use crate::tables::owner_row;
use crate::vocab::NodeClocks;

/// Why a transaction did not land.
enum Failed {
    /// Some parcels this node imported are stale: they leave, and the commit is tried again.
    Stale(Vec<OwnerId>),
    /// The rows of the nodes some adopted owners come from are being written (by the node
    /// itself, back, or by another adopter): those owners leave, and the commit is tried again.
    Busy(Vec<OwnerId>),
    /// The `COMMIT` may have landed; what it did if it did.
    Uncertain(StoreError, Box<Done>),
    Error(StoreError),
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Self {
        Failed::Error(e)
    }
}

impl<S: Store> Durable<S> {
    /// Ends a frame: every [`commit_every`](Self::commit_every) frames, commits (see
    /// [`commit`](Self::commit)); returns the commit made, if any. On other frames it only
    /// renews this process's hold on the node when half of its lease has passed.
    ///
    /// Write your game's outcome of the frames in [`Commit::frames`] in `effects` (it runs in
    /// the commit's transaction) and drop them from your buffer when this returns the commit.
    /// On an error nothing is lost: the frame's changes stay queued and the next commit
    /// writes them with the frames since. [`StoreError::Uncertain`] says the commit may have
    /// landed; the next commit finds out, and its [`Commit::frames`] start after the last
    /// frame that is stored, so keeping every effect until it is covered never writes one
    /// twice.
    pub fn end_frame<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        effects: impl FnMut(&mut S::Tx<'_>, &Commit) -> Result<(), StoreError>,
    ) -> Result<Option<Commit>, StoreError> {
        self.frames_since += 1;
        if self.frames_since < self.every {
            if self.started && self.attempt.is_none() && self.renewed.elapsed() > self.lease / 2 {
                if let Err(e) = self.renew(0) {
                    return Err(self.fenced(sched, e));
                }
            }
            return Ok(None);
        }
        self.commit(sched, effects).map(Some)
    }

    /// Commits now: the durable changes since the last commit, the handovers begun since,
    /// and `effects`, in one transaction (see the module docs of `commit.rs` for what it
    /// checks). Settles the handovers this node has in flight: see
    /// [`handovers`](Self::handovers).
    ///
    /// # Errors
    ///
    /// Nothing was written, and all of it stays queued for the next commit:
    /// [`StoreError::Uncertain`] (it may have landed: the next commit finds out),
    /// [`StoreError::NotHeld`] (a changed timer's owner is another node's:
    /// [`forget_owner`](Self::forget_owner) it), [`StoreError::TooLarge`] (clear or
    /// shorten the timer), [`StoreError::NodeLost`] (another process runs this node now: stop),
    /// your hook's error, or the database's.
    pub fn commit<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        effects: impl FnMut(&mut S::Tx<'_>, &Commit) -> Result<(), StoreError>,
    ) -> Result<Commit, StoreError> {
        let changes = sched.timers().durable_changes();
        self.queue.add_changes(changes);
        self.write(sched, false, effects)
    }

    /// Rewrites every row of this node from the scheduler's durable timers (after a snapshot
    /// restore or a rollback, which journal nothing), with `effects`, in one commit.
    pub fn save_all<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        effects: impl FnMut(&mut S::Tx<'_>, &Commit) -> Result<(), StoreError>,
    ) -> Result<Commit, StoreError> {
        sched.timers().durable_changes(); // superseded
        let all = sched.timers().durable_timers();
        self.queue.changes = all.into_iter().map(DurableChange::Set).collect();
        self.write(sched, true, effects)
    }

    /// [`write_once`](Self::write_once), rejoining when a takeover fenced this node.
    fn write<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        replace: bool,
        effects: impl FnMut(&mut S::Tx<'_>, &Commit) -> Result<(), StoreError>,
    ) -> Result<Commit, StoreError> {
        self.write_once(sched, replace, effects)
            .map_err(|e| self.fenced(sched, e))
    }

    fn write_once<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        replace: bool,
        mut effects: impl FnMut(&mut S::Tx<'_>, &Commit) -> Result<(), StoreError>,
    ) -> Result<Commit, StoreError> {
        if !self.started {
            return Err(StoreError::Setting(format!(
                "node {:?}: call resume before the first commit (it takes the node for this \
                 process)",
                self.node
            )));
        }
        self.resolve(sched)?;
        self.queue.compact();
        for change in &self.queue.changes {
            if let DurableChange::Set(t) = change {
                check_sizes(t.owner.get(), &t.name, t.payload.len())?;
            }
        }
        let frame = sched.clocks().frame();
        let mut commit = Commit {
            number: self.committed + 1,
            first: self.landed_frame + 1,
            last: frame,
            dropped: Vec::new(),
        };
        let c = sched.clocks();
        let clocks = NodeClocks {
            game: c.now(tickflow::time::Domain::Game).flicks(),
            real: c.now(tickflow::time::Domain::Real).flicks(),
            frames: c.now(tickflow::time::Domain::Frames).flicks(),
            frame,
            wall_ns: self.wall.map_or(0, |f| f()), // the store's clock: set in the transaction
        };
        // Three tries at most: another only after stale parcels or adoptions were taken out of
        // the one before.
        for _ in 0..3 {
            match self.transact(&commit, clocks, replace, &mut effects) {
                Ok(done) => {
                    self.land(sched, commit.number, frame, done);
                    return Ok(commit);
                }
                Err(Failed::Stale(owners)) => self.leave_out(sched, &mut commit, owners, None),
                Err(Failed::Busy(owners)) => {
                    // The lost node may be back, and writing all its rows: not before a lease.
                    let rest = Instant::now() + self.lease;
                    self.leave_out(sched, &mut commit, owners, Some(rest));
                }
                Err(Failed::Uncertain(e, done)) => {
                    let queue = std::mem::take(&mut self.queue);
                    self.attempt = Some(Attempt::new(commit.number, frame, queue, *done));
                    return Err(e);
                }
                // Refused for an owner that moved on: if this process no longer runs the node
                // (it stalled past its lease and another took it), that is what to say.
                Err(Failed::Error(e)) if e.is_fenced() => return Err(self.lost().unwrap_or(e)),
                Err(Failed::Error(e)) => return Err(e),
            }
        }
        Err(StoreError::Setting(
            "a commit found stale parcels or adoptions three times".into(),
        ))
    }

    /// Takes `owners` out of the commit about to be tried again: their imports leave the
    /// scheduler, and the plans of the lost nodes they were adopted from are worked out again
    /// (from `rest`, when given).
    fn leave_out<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        commit: &mut Commit,
        owners: Vec<OwnerId>,
        rest: Option<Instant>,
    ) {
        let from: Vec<String> = (self.queue.adopts.iter())
            .filter(|a| owners.contains(&a.owner))
            .map(|a| a.from.clone())
            .collect();
        self.plans.forget(from, rest);
        self.drop_stale(sched, &owners);
        commit.dropped.extend(owners);
    }

    /// The commit's transaction.
    fn transact(
        &mut self,
        commit: &Commit,
        clocks: NodeClocks,
        replace: bool,
        effects: &mut impl FnMut(&mut S::Tx<'_>, &Commit) -> Result<(), StoreError>,
    ) -> Result<Done, Failed> {
        let node = self.node.as_str();
        let q = &self.queue;
        let before = self.store.clock_us();
        let mut tx = self.store.begin(true)?;
        let locked_at = S::lock_node_in(&mut tx, node)?;
        let mut clocks = clocks;
        if self.wall.is_none() {
            clocks.wall_ns = before.unwrap_or(locked_at).max(0) as u64 * 1000;
        }
        let mut held: FxHashMap<OwnerId, u64> = FxHashMap::default();
        // Adopted owners are taken last (below), so that the lost node's row is held for as
        // short a time as can be: every adopter of that node needs it.
        held.extend(q.adopts.iter().map(|a| (a.owner, a.epoch + 1)));
        if !q.accepts.is_empty() {
            let taken = S::accept_all_in(&mut tx, &q.accepts)?;
            let stale: Vec<OwnerId> = (q.accepts.iter().zip(&taken))
                .filter(|(_, a)| matches!(a, Accepted::Stale(_)))
                .map(|(p, _)| p.owner)
                .collect();
            if !stale.is_empty() {
                return Err(Failed::Stale(stale));
            }
            held.extend(q.accepts.iter().map(|p| (p.owner, p.epoch + 1)));
        }
        let epoch_of = |o: OwnerId, held: &FxHashMap<OwnerId, u64>| {
            held.get(&o).or(self.epochs.get(&o)).copied()
        };
        let new = check_owners::<S>(&mut tx, node, q, &held, &self.epochs)?;
        if !new.is_empty() {
            let rows: Vec<_> = new.iter().map(|&o| owner_row(o, node, 0)).collect();
            let put = S::insert_owners_in(&mut tx, &rows)?;
            for (&o, _) in new.iter().zip(put).filter(|(_, put)| !put) {
                // Not put: registered since it was read, by this node (a `register` of yours)
                // or another (which the commit must not write for).
                match crate::handover::holder_in::<S>(&mut tx, o)? {
                    Some(h) if h.node == node && h.epoch == 0 => {}
                    holder => {
                        return Err(Failed::Error(StoreError::NotHeld {
                            owner: o,
                            node: node.to_string(),
                            epoch: 0,
                            holder,
                        }))
                    }
                }
            }
            held.extend(new.iter().map(|&o| (o, 0)));
        }
        let mut tally = Tally::new(&self.rows);
        if replace {
            S::clear_rows_in(&mut tx, node)?;
            tally.clear();
        }
        if !q.drops.is_empty() {
            let owners: Vec<i64> = q.drops.iter().map(|o| o.get() as i64).collect();
            for (owner, name, _) in S::delete_owner_rows_in(&mut tx, node, &owners)? {
                tally.set(Rows::key(OwnerId::new(owner as u64), &name), None);
            }
        }
        let mut gone = Vec::new();
        let mut rows = Vec::new();
        let prefix = Row::prefix(node);
        for change in &q.changes {
            match change {
                DurableChange::Removed { owner, name } => {
                    tally.set(Rows::key(*owner, name), None);
                    gone.push((owner.get() as i64, name.as_str()));
                }
                DurableChange::Set(t) => {
                    let epoch = epoch_of(t.owner, &held).unwrap_or(0);
                    let row = Row::of(t, prefix, epoch, self.shift);
                    tally.set(Rows::key(t.owner, &t.name), Some(row.sum));
                    rows.push(row);
                }
            }
        }
        if !gone.is_empty() {
            S::delete_rows_in(&mut tx, node, &gone)?;
        }
        if !rows.is_empty() {
            S::write_rows_in(&mut tx, node, &rows)?;
        }
        if !q.sends.is_empty() {
            S::send_all_in(&mut tx, &q.sends)?;
        }
        if !q.refuses.is_empty() {
            let keys: Vec<_> = (q.refuses.iter())
                .map(|&(o, e)| (o.get() as i64, e as i64))
                .collect();
            S::remove_parcels_in(&mut tx, &keys)?;
        }
        let mut settled = Vec::new();
        if !self.in_flight.is_empty() {
            let sent: Vec<(OwnerId, u64)> =
                self.in_flight.iter().map(|(&o, (e, _))| (o, *e)).collect();
            let answers = S::settle_all_in(&mut tx, &sent, node)?;
            settled = (sent.iter().zip(answers))
                .filter(|(_, s)| *s != Settled::Waiting)
                .map(|(&(o, _), s)| (o, s))
                .collect();
        }
        if !q.adopts.is_empty() {
            let mut from: Vec<&str> = q.adopts.iter().map(|a| a.from.as_str()).collect();
            from.sort_unstable();
            from.dedup();
            let locked = S::try_lock_nodes_in(&mut tx, &from)?;
            let busy: Vec<OwnerId> = (q.adopts.iter())
                .filter(|a| !locked.contains(&a.from))
                .map(|a| a.owner)
                .collect();
            if !busy.is_empty() {
                return Err(Failed::Busy(busy));
            }
            let stale = super::takeover::adopt_in::<S>(&mut tx, node, &q.adopts)?;
            if !stale.is_empty() {
                return Err(Failed::Stale(stale));
            }
        }
        let landing = tally.done();
        let row = NodeRow {
            clocks,
            committed: commit.number,
            rows: landing.count(),
            xsum: landing.xsum(),
            shift: self.shift,
        };
        let lease_us = self.lease.as_micros().min(i64::MAX as u128) as i64;
        let sum = row.sum_for(node);
        if !S::advance_node_in(
            &mut tx,
            node,
            self.token,
            self.committed,
            &row,
            sum,
            lease_us,
        )? {
            return Err(Failed::Error(not_advanced::<S>(
                &mut tx,
                node,
                self.token,
                self.committed,
            )?));
        }
        super::image::put::<S>(&mut tx, node, self.image.as_deref(), commit.number)?;
        effects(&mut tx, commit)?;
        let done = Done {
            landing,
            held,
            settled,
            stamp: (clocks.wall_ns, clocks.real),
        };
        match S::finish(tx) {
            Ok(()) => Ok(done),
            Err(e) if e.is_uncertain() => Err(Failed::Uncertain(e, Box::new(done))),
            Err(e) => Err(Failed::Error(e)),
        }
    }

    /// Counts a landed commit done.
    pub(super) fn land<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        number: u64,
        frame: u64,
        done: Done,
    ) {
        let Done {
            landing,
            held,
            settled,
            stamp,
        } = done;
        self.stamp = Some(stamp);
        self.rows.absorb(landing);
        self.committed = number;
        self.landed_frame = self.landed_frame.max(frame);
        self.frames_since = 0;
        self.renewed = std::time::Instant::now();
        let queue = std::mem::take(&mut self.queue);
        for o in &queue.drops {
            self.epochs.remove(o);
        }
        self.epochs.extend(held);
        for p in queue.sends {
            self.in_flight.insert(p.owner, (p.epoch, p.receiver));
        }
        self.settle(sched, settled);
    }
}

/// The owners a commit writes that this node does not hold yet (registered to it in the
/// commit); refuses the commit when one of them is another node's.
fn check_owners<S: Store>(
    tx: &mut S::Tx<'_>,
    node: &str,
    q: &Queue,
    taken: &FxHashMap<OwnerId, u64>,
    epochs: &FxHashMap<OwnerId, u64>,
) -> Result<Vec<OwnerId>, StoreError> {
    // Only writes: a removal deletes a row of this node, which no other node's rows can be.
    let mut owners: Vec<OwnerId> = (q.changes.iter())
        .filter_map(|c| match c {
            DurableChange::Set(t) => Some(t.owner),
            DurableChange::Removed { .. } => None,
        })
        .chain(q.sends.iter().map(|p| p.owner))
        .filter(|o| o.get() != 0)
        .collect();
    owners.sort_unstable();
    owners.dedup();
    // Owners this node holds need no look: the registry moves one away only by this node's
    // own handover (which freezes it first) or by a takeover of the node, which goes through
    // the node's row that this commit holds from its start.
    owners.retain(|o| !taken.contains_key(o) && !epochs.contains_key(o));
    if owners.is_empty() {
        return Ok(owners);
    }
    let ids: Vec<i64> = owners.iter().map(|o| o.get() as i64).collect();
    let holders = holders_in::<S>(tx, &ids, false)?;
    for &o in &owners {
        match holders.get(&o) {
            None => {}
            // Registered to this node before it ever wrote the owner (a `register` of yours).
            Some(h) if h.node == node && h.epoch == 0 => {}
            holder => {
                return Err(StoreError::NotHeld {
                    owner: o,
                    node: node.to_string(),
                    epoch: 0,
                    holder: holder.cloned(),
                })
            }
        }
    }
    // Owners registered to this node already are not inserted again (the insert skips them).
    Ok(owners)
}
