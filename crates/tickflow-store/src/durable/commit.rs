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

use rustc_hash::FxHashMap;

use tickflow::timer::DurableChange;
use tickflow::{OwnerId, Scheduler};

use super::{Commit, Durable, Queue};
use crate::backend::{NodeRow, Row};
use crate::error::StoreError;
use crate::handover::{holders_in, Accepted, Handovers, Settled};
use crate::row::check_sizes;
use crate::store::Store;
use crate::sum::Sum;
use crate::tables::{owner_row, NodeClocks};

/// A node's timer rows as landed: each row's checksum by its key's hash, their count and
/// XOR. About 20 bytes per durable timer.
#[derive(Default, Debug, Clone)]
pub(super) struct Rows {
    sums: FxHashMap<u64, i64>,
    pub(super) count: u64,
    pub(super) xsum: u64,
}

impl Rows {
    /// The hash a row's key is filed under.
    pub(super) fn key(owner: OwnerId, name: &str) -> u64 {
        Sum::of("key")
            .u64(owner.get())
            .bytes(name.as_bytes())
            .finish() as u64
    }

    /// Files a row that was loaded.
    pub(super) fn insert(&mut self, key: u64, sum: i64) {
        if let Some(old) = self.sums.insert(key, sum) {
            self.xsum ^= old as u64;
            self.count -= 1;
        }
        self.xsum ^= sum as u64;
        self.count += 1;
    }

    pub(super) fn reserve(&mut self, n: usize) {
        self.sums.reserve(n.min(1 << 24));
    }
}

/// What one commit does to the node's rows, over the rows as landed.
struct Tally<'a> {
    base: &'a Rows,
    /// Every row was deleted first (a full rewrite).
    cleared: bool,
    over: FxHashMap<u64, Option<i64>>,
    count: u64,
    xsum: u64,
}

impl<'a> Tally<'a> {
    fn new(base: &'a Rows) -> Tally<'a> {
        Tally {
            base,
            cleared: false,
            over: FxHashMap::default(),
            count: base.count,
            xsum: base.xsum,
        }
    }

    fn get(&self, key: u64) -> Option<i64> {
        match self.over.get(&key) {
            Some(&v) => v,
            None if self.cleared => None,
            None => self.base.sums.get(&key).copied(),
        }
    }

    fn set(&mut self, key: u64, sum: Option<i64>) {
        if let Some(old) = self.get(key) {
            self.xsum ^= old as u64;
            self.count -= 1;
        }
        if let Some(new) = sum {
            self.xsum ^= new as u64;
            self.count += 1;
        }
        self.over.insert(key, sum);
    }

    fn clear(&mut self) {
        self.cleared = true;
        self.over.clear();
        self.count = 0;
        self.xsum = 0;
    }

    fn done(self) -> Landing {
        Landing {
            cleared: self.cleared,
            over: self.over,
            count: self.count,
            xsum: self.xsum,
        }
    }
}

/// What a landed commit does to [`Rows`].
#[derive(Debug)]
struct Landing {
    cleared: bool,
    over: FxHashMap<u64, Option<i64>>,
    count: u64,
    xsum: u64,
}

/// A commit that may have landed: what it wrote, to count it done or put it back.
#[derive(Debug)]
pub(super) struct Attempt {
    number: u64,
    frame: u64,
    queue: Queue,
    done: Done,
}

impl Attempt {
    /// What it wrote.
    pub(super) fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Drops what it wrote for `owner` (it is another node's).
    pub(super) fn forget(&mut self, owner: OwnerId) {
        self.queue.forget(owner);
    }
}

/// What a commit's transaction did, applied when it is known to have landed.
#[derive(Debug)]
struct Done {
    landing: Landing,
    /// Owners registered to this node, and those taken from parcels, at their epochs.
    held: FxHashMap<OwnerId, u64>,
    settled: Vec<(OwnerId, Settled)>,
}

/// Why a transaction did not land.
enum Failed {
    /// Some parcels this node imported are stale: they leave, and the commit is tried again.
    Stale(Vec<OwnerId>),
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
                self.renew()?;
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

    fn write<C: 'static>(
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
        for change in &self.queue.changes {
            if let DurableChange::Set(t) = change {
                check_sizes(t.owner.get(), &t.name, t.payload.len())?;
            }
        }
        let frame = sched.clocks().frame();
        let commit = Commit {
            number: self.committed + 1,
            first: self.landed_frame + 1,
            last: frame,
        };
        let c = sched.clocks();
        let clocks = NodeClocks {
            game: c.now(tickflow::time::Domain::Game).flicks(),
            real: c.now(tickflow::time::Domain::Real).flicks(),
            frames: c.now(tickflow::time::Domain::Frames).flicks(),
            frame,
            wall_ns: (self.wall)(),
        };
        // Twice at most: a second try only after stale parcels were taken out of the first.
        for _ in 0..2 {
            match self.transact(&commit, clocks, replace, &mut effects) {
                Ok(done) => {
                    self.land(sched, commit.number, frame, done);
                    return Ok(commit);
                }
                Err(Failed::Stale(owners)) => self.drop_stale(sched, &owners),
                Err(Failed::Uncertain(e, done)) => {
                    self.attempt = Some(Attempt {
                        number: commit.number,
                        frame,
                        queue: std::mem::take(&mut self.queue),
                        done: *done,
                    });
                    return Err(e);
                }
                Err(Failed::Error(e)) => return Err(e),
            }
        }
        Err(StoreError::Setting(
            "a commit found stale parcels twice".into(),
        ))
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
        let mut tx = self.store.begin(true)?;
        let mut held: FxHashMap<OwnerId, u64> = FxHashMap::default();
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
                    let row = Row::of(t, prefix, epoch);
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
        let landing = tally.done();
        let row = NodeRow {
            clocks,
            committed: commit.number,
            rows: landing.count,
            xsum: landing.xsum,
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
        effects(&mut tx, commit)?;
        let done = Done {
            landing,
            held,
            settled,
        };
        match S::finish(tx) {
            Ok(()) => Ok(done),
            Err(e) if e.is_uncertain() => Err(Failed::Uncertain(e, Box::new(done))),
            Err(e) => Err(Failed::Error(e)),
        }
    }

    /// Counts a landed commit done.
    fn land<C: 'static>(&mut self, sched: &mut Scheduler<C>, number: u64, frame: u64, done: Done) {
        let Done {
            landing,
            held,
            settled,
        } = done;
        if landing.cleared {
            self.rows.sums.clear();
        }
        for (key, sum) in landing.over {
            match sum {
                Some(s) => self.rows.sums.insert(key, s),
                None => self.rows.sums.remove(&key),
            };
        }
        (self.rows.count, self.rows.xsum) = (landing.count, landing.xsum);
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

    /// Finds out whether the commit whose outcome is unknown landed, and counts it done or
    /// puts what it wrote back in front of the queue.
    fn resolve<C: 'static>(&mut self, sched: &mut Scheduler<C>) -> Result<(), StoreError> {
        let Some(attempt) = self.attempt.take() else {
            return Ok(());
        };
        let node = self.node.clone();
        let read = crate::store::in_tx(&mut self.store, false, |tx| S::node_in(tx, &node, false));
        let found = match read {
            Ok(Some(r)) if r.lease.holder != self.token => Err(StoreError::NodeLost { node }),
            Ok(Some(r)) if r.row.committed == attempt.number => Ok(true),
            Ok(Some(r)) if r.row.committed + 1 == attempt.number => Ok(false),
            Ok(Some(r)) => Err(StoreError::Missing {
                what: format!(
                    "node {node:?} is at commit {} where this process left it at {}",
                    r.row.committed,
                    attempt.number - 1
                ),
            }),
            Ok(None) => Err(StoreError::Missing {
                what: format!("node {node:?}: its row in tickflow_nodes is gone"),
            }),
            Err(e) => Err(e),
        };
        let landed = match found {
            Ok(landed) => landed,
            Err(e) => {
                self.attempt = Some(attempt);
                return Err(e);
            }
        };
        let newer = std::mem::take(&mut self.queue);
        self.queue = attempt.queue;
        if landed {
            self.land(sched, attempt.number, attempt.frame, attempt.done);
        }
        self.queue.append(newer);
        Ok(())
    }

    /// Renews this process's hold on the node without a commit.
    fn renew(&mut self) -> Result<(), StoreError> {
        let node = self.node.clone();
        let (token, committed) = (self.token, self.committed);
        let lease_us = self.lease.as_micros().min(i64::MAX as u128) as i64;
        let mut tx = self.store.begin(true)?;
        let Some(read) = S::node_in(&mut tx, &node, true)? else {
            return Err(StoreError::Missing {
                what: format!("node {node:?}: its row in tickflow_nodes is gone"),
            });
        };
        if read.lease.holder != token {
            return Err(StoreError::NodeLost { node });
        }
        if !S::advance_node_in(
            &mut tx, &node, token, committed, &read.row, read.sum, lease_us,
        )? {
            return Err(not_advanced::<S>(&mut tx, &node, token, committed)?);
        }
        S::finish(tx)?;
        self.renewed = std::time::Instant::now();
        Ok(())
    }
}

/// Why the node's row did not advance: another process took the node, or its row is gone.
fn not_advanced<S: Store>(
    tx: &mut S::Tx<'_>,
    node: &str,
    token: u64,
    committed: u64,
) -> Result<StoreError, StoreError> {
    let node = node.to_string();
    Ok(match S::node_in(tx, &node, false)? {
        Some(r) if r.lease.holder != token => StoreError::NodeLost { node },
        Some(r) => StoreError::Missing {
            what: format!(
                "node {node:?} is at commit {} where this process left it at {committed}: its \
                 row was changed by something other than this process",
                r.row.committed
            ),
        },
        None => StoreError::Missing {
            what: format!("node {node:?}: its row in tickflow_nodes is gone"),
        },
    })
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
    // the node's row that this commit advances last.
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

impl Queue {
    /// Adds a frame's changes: a later change of a key replaces an earlier one (a timer set
    /// and then cleared leaves only its removal).
    pub(super) fn add_changes(&mut self, changes: Vec<DurableChange>) {
        if self.changes.is_empty() {
            self.changes = changes;
        } else if !changes.is_empty() {
            self.changes.extend(changes);
            self.changes = latest_per_key(std::mem::take(&mut self.changes));
        }
    }

    /// Puts `later` after what this queue holds.
    fn append(&mut self, later: Queue) {
        self.add_changes(later.changes);
        self.sends.extend(later.sends);
        self.accepts.extend(later.accepts);
        self.refuses.extend(later.refuses);
        self.drops.extend(later.drops);
    }
}

/// The last change of each key, in the order of those last changes.
fn latest_per_key(changes: Vec<DurableChange>) -> Vec<DurableChange> {
    let key = |ch: &DurableChange| match ch {
        DurableChange::Set(t) => (t.owner, t.name.clone()),
        DurableChange::Removed { owner, name } => (*owner, name.clone()),
    };
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<_> = (changes.into_iter().rev())
        .filter(|ch| seen.insert(key(ch)))
        .collect();
    kept.reverse();
    kept
}
