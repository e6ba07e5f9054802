//! Takeover: the live nodes of a fleet share out the owners of a node that was lost, with no
//! director.
//!
//! Ground rules:
//!
//! - A node is *lost* when its lease ended on the store's clock (its process died, stalled or
//!   was cut off for longer than its lease) or it was closed. The others are *live*.
//! - Only nodes that take part ([`Durable::set_takeover`]) adopt. Which live node adopts an
//!   owner is a [`TakeoverRule`]'s pure function of the owner, the lost node and the live
//!   nodes ([`Rendezvous`] by default), so adopters agree without talking; when their views of
//!   the fleet differ, the compare-and-set of the owner's registry row from `(lost, e)` to
//!   `(adopter, e + 1)` lets one win.
//! - [`Durable::adopt`] reads an owner's rows from the lost node, with that node's clocks at
//!   its last commit, and loads them into the adopter's scheduler: each timer keeps the time
//!   it had left, and the time since that commit (on the store's clock, so the nodes' own
//!   clocks do not matter) counts by its [`Offline`](tickflow::timer::Offline) policy, as it
//!   would for a restart of the lost node.
//! - The adopter's next commit takes them, in the same transaction as its own frame. It holds
//!   its own node's row from its start (as every commit does) and takes the lost node's row
//!   last, waiting for it briefly ([`Store::try_lock_nodes_in`]: a row held long is the
//!   node's own, back; its owners are then left alone for a lease). Under that row it checks
//!   that the node is still lost and has not committed since the read, moves the registry
//!   rows, deletes the lost node's rows of those owners (keeping its row's count and XOR of
//!   checksums right), *fences* it — its lease holder becomes 0, so a commit of its process
//!   fails — and writes the rows as its own. A crash before that commit leaves everything
//!   with the lost node, to be adopted again.
//! - An owner the lost node has a parcel in flight for is not adopted: the parcel's receiver
//!   takes it. Parcels addressed to a lost node are received by the live node the rule picks
//!   for their owner, as if they were addressed to it.
//! - A lost node's process that comes back finds itself fenced at its next commit and rejoins
//!   by itself (`rejoin.rs`). Timers of no owner (owner 0) are the node's own: they wait for
//!   it.
//!
//! Cost: one read of the node table per [`Durable::adopt`] while no node is lost. Per lost
//! node: its outbox once per change of the fleet, its registry rows a page at a time (4,096
//! rows a call at most, so a lost node of any size adds a bounded read to a frame), and the
//! adopted owners' rows.

use std::collections::BTreeMap;

use rustc_hash::FxHashSet;
use tickflow::snapshot::{HandleMap, Resolver};
use tickflow::time::Span;
use tickflow::timer::DurableTimer;
use tickflow::{OwnerId, Scheduler};

use super::plan::{Plans, PLAN_PAGES};
use super::{Arrival, Durable};
use crate::backend::{Lease, NodeRead, OwnerSwap};
use crate::error::StoreError;
use crate::handover::Parcel;
use crate::row::Row;
use crate::store::{in_tx, Store};
use crate::tables::moved;

/// Which live node adopts each owner of a lost node ([`Durable::set_takeover`]).
///
/// Every node of a fleet must use the same rule: adopters decide alone, and agree only because
/// they compute the same answer (when they do not, the registry's compare-and-set picks one,
/// and the other's import is dropped).
pub trait TakeoverRule: Send {
    /// The index in `live` of the node that adopts `owner` of the lost node `lost`. `live`
    /// holds the live nodes' names in name order, this node's among them, never empty. A
    /// pure function of its arguments.
    fn adopter(&self, owner: OwnerId, lost: &str, live: &[&str]) -> usize;
}

/// The default [`TakeoverRule`]: rendezvous (highest random weight) hashing. Each owner goes
/// to the live node whose hash with it is highest, so the owners of a lost node spread evenly
/// over the others, and a node that joins or leaves changes the adopter of only the owners it
/// gains or had. The hash is fixed (FNV-1a of the name, mixed with the owner by splitmix64):
/// the same on every machine and build.
///
/// ```
/// use tickflow::OwnerId;
/// use tickflow_store::{Rendezvous, TakeoverRule};
///
/// let live = ["zone-1", "zone-2", "zone-3"];
/// let picks: Vec<usize> = (1..=300)
///     .map(|o| Rendezvous.adopter(OwnerId::new(o), "zone-4", &live))
///     .collect();
/// for zone in 0..3 {
///     let n = picks.iter().filter(|&&p| p == zone).count();
///     assert!((70..130).contains(&n), "zone {zone} adopts {n} of 300");
/// }
/// // Without zone-3, only the owners it would have adopted go elsewhere.
/// let two = ["zone-1", "zone-2"];
/// for (o, &p) in (1..=300).zip(&picks) {
///     if p < 2 {
///         assert_eq!(Rendezvous.adopter(OwnerId::new(o), "zone-4", &two), p);
///     }
/// }
/// ```
#[derive(Copy, Clone, Debug, Default)]
pub struct Rendezvous;

impl TakeoverRule for Rendezvous {
    fn adopter(&self, owner: OwnerId, _lost: &str, live: &[&str]) -> usize {
        let weight = |i: usize| (weight(owner, live[i]), std::cmp::Reverse(i));
        (0..live.len()).max_by_key(|&i| weight(i)).unwrap_or(0)
    }
}

fn weight(owner: OwnerId, node: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64;
    for b in node.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    mix(h ^ mix(owner.get()))
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// An owner of a lost node, imported here and taken in the next commit.
#[derive(Clone, Debug)]
pub(super) struct Adopt {
    pub(super) owner: OwnerId,
    /// The lost node.
    pub(super) from: String,
    /// The epoch the registry gives it there.
    pub(super) epoch: u64,
    /// The lost node's commit number when its rows were read: the commit takes the owner only
    /// if the node has not committed since.
    pub(super) committed: u64,
}

/// What a scan found on one lost node for this one.
struct Found {
    node: String,
    read: NodeRead,
    owners: Vec<(OwnerId, u64)>,
    rows: Vec<DurableTimer>,
    parcels: Vec<Parcel>,
}

impl<S: Store> Durable<S> {
    /// Makes this node take part in takeovers, with `rule` saying which live node adopts which
    /// owner of a lost one ([`Rendezvous`] is the default to pass; every node of the fleet
    /// must use the same). Without it, [`adopt`](Self::adopt) does nothing: a lone server
    /// that restarts slowly keeps its owners.
    pub fn set_takeover(&mut self, rule: impl TakeoverRule + 'static) {
        self.takeover = Some(Box::new(rule));
    }

    /// Adopts up to `limit` owners of lost nodes that the rule gives this node (see the
    /// module docs of `takeover.rs`): imports their durable timers into `sched`, binding
    /// callbacks with `resolver`, and returns them, to set up your state of each from your
    /// own tables ([`Arrival::adopted`]; its `state` is empty). Parcels addressed to a lost
    /// node come back here too, as from [`receive`](Self::receive). The next commit takes all
    /// of them; one another node took first is dropped then ([`Handover::Dropped`](super::Handover::Dropped)).
    ///
    /// Call it between frames, every frame or every few: it costs one read of the node table
    /// while no node is lost. Nothing happens unless [`set_takeover`](Self::set_takeover)
    /// was called.
    ///
    /// # Errors
    ///
    /// A database error or a damaged row of a lost node (named): nothing is imported. A
    /// callback `resolver` cannot bind ([`StoreError::Restore`]): nothing of that lost node;
    /// owners of lost nodes imported before it stay, queued for the next commit.
    pub fn adopt<C: 'static, R: Resolver<C>>(
        &mut self,
        sched: &mut Scheduler<C>,
        resolver: &mut R,
        limit: usize,
    ) -> Result<Vec<Arrival>, StoreError> {
        let Some(rule) = self.takeover.as_deref() else {
            return Ok(Vec::new());
        };
        if !self.started {
            return Err(StoreError::Setting(format!(
                "node {:?}: call resume before adopt",
                self.node
            )));
        }
        let mut pending: FxHashSet<OwnerId> = self.epochs.keys().copied().collect();
        let queues = std::iter::once(&self.queue).chain(self.attempt.as_ref().map(|a| a.queue()));
        for q in queues {
            pending.extend(q.adopts.iter().map(|a| a.owner));
            pending.extend(q.accepts.iter().map(|p| p.owner));
            pending.extend(q.refuses.iter().map(|r| r.0));
        }
        let me = self.node.as_str();
        let plans = &mut self.plans;
        let (found, now_us) = in_tx(&mut self.store, false, |tx| {
            scan::<S>(tx, me, rule, &pending, limit, plans)
        })?;
        let now_ns = self.now_for_adoption(sched, now_us);
        let mut out = Vec::new();
        for f in found {
            if !f.owners.is_empty() {
                let offline = Span::from(std::time::Duration::from_nanos(
                    now_ns.saturating_sub(f.read.row.clocks.wall_ns),
                ));
                let saved = f.read.row.clocks.raw();
                sched
                    .timers()
                    .load_durable(f.rows, saved, offline, resolver)?;
            }
            for &(owner, epoch) in &f.owners {
                self.queue.adopts.push(Adopt {
                    owner,
                    from: f.node.clone(),
                    epoch,
                    committed: f.read.row.committed,
                });
                out.push(Arrival {
                    owner,
                    sender: f.node.clone(),
                    state: Vec::new(),
                    handles: HandleMap::default(),
                    adopted: true,
                });
            }
            for p in f.parcels {
                // The registry's compare-and-set in the commit checks the parcel is current.
                out.extend(self.take_in(sched, resolver, p, true));
            }
        }
        Ok(out)
    }
}

impl<S: Store> Durable<S> {
    /// The wall-clock time this node's clocks stand for now, for an adoption's offline time.
    /// Not simply the store's clock at the scan: adopted timers are set on this node's clocks,
    /// which stand for the time of its last commit's stamp plus the real time they advanced
    /// since, and the time between (the rest of the commit, the receive, the scan) would count
    /// as offline too — a frame's worth of lead each adoption, which adds up for an owner
    /// adopted again and again. The lost node's stamp is taken the same way, at the start of
    /// its commit, so the two agree. Never past the store's clock `now_us`.
    fn now_for_adoption<C: 'static>(&self, sched: &Scheduler<C>, now_us: i64) -> u64 {
        let store_now = now_us.max(0) as u64 * 1000;
        match (self.wall, self.stamp) {
            (Some(f), _) => f(),
            (None, Some((stamp_ns, real_at))) => {
                let real = sched.clocks().now(tickflow::time::Domain::Real).flicks();
                let since = Span::from_flicks(real.saturating_sub(real_at));
                let since_ns = std::time::Duration::from(since).as_nanos() as u64;
                stamp_ns.saturating_add(since_ns).min(store_now)
            }
            (None, None) => store_now,
        }
    }
}

/// Reads, in one snapshot, what the lost nodes hold that `rule` gives `me`; and now on the
/// store's clock.
fn scan<S: Store>(
    tx: &mut S::Tx<'_>,
    me: &str,
    rule: &dyn TakeoverRule,
    pending: &FxHashSet<OwnerId>,
    limit: usize,
    plans: &mut Plans,
) -> Result<(Vec<Found>, i64), StoreError> {
    let now = S::now_us_in(tx)?;
    let nodes = S::nodes_in(tx)?;
    let lost = |l: &Lease| l.holder == 0 || l.until_us < now;
    let live: Vec<&str> = (nodes.iter())
        .filter(|(n, r)| n == me || !lost(&r.lease))
        .map(|(n, _)| n.as_str())
        .collect();
    let Some(mine) = live.iter().position(|&n| n == me) else {
        return Ok((Vec::new(), now)); // this node has no row: not resumed
    };
    let mut budget = limit;
    let mut pages = PLAN_PAGES;
    let mut out = Vec::new();
    plans.retain(|n| (nodes.iter()).any(|(name, r)| name == n && n != me && lost(&r.lease)));
    let is_mine =
        |owner: OwnerId, lost: &str, live: &[&str]| rule.adopter(owner, lost, live) == mine;
    for (name, read) in &nodes {
        if budget == 0 {
            break;
        }
        if name == me || !lost(&read.lease) {
            continue;
        }
        if plans.resting(name) {
            continue;
        }
        let plan = plans.plan_for::<S>(tx, name, read.row.committed, &live)?;
        let mut adopted = Vec::new();
        while budget > 0 {
            let Some((owner, epoch)) = plan.next::<S>(tx, name, &is_mine, (budget, &mut pages))?
            else {
                break;
            };
            if !pending.contains(&owner) {
                adopted.push((owner, epoch));
                budget -= 1;
            }
        }
        let inbox = S::parcels_of_in(tx, name, true, budget)?;
        if adopted.is_empty() && inbox.is_empty() {
            continue;
        }
        let mut parcels = Vec::new();
        for p in inbox {
            // A damaged parcel is its receiver's to refuse; the receiver is gone, so it waits.
            let Ok(p) = p.parcel() else { continue };
            // Its sender meant it to leave: the rule picks among the others.
            let others: Vec<&str> = live.iter().copied().filter(|&n| n != p.sender).collect();
            let picked = (!others.is_empty() && !pending.contains(&p.owner))
                .then(|| others[rule.adopter(p.owner, name, &others)]);
            if budget > 0 && picked == Some(me) {
                parcels.push(p);
                budget -= 1;
            }
        }
        if adopted.is_empty() && parcels.is_empty() {
            continue;
        }
        let read = read.clone().checked(name)?;
        let ids: Vec<i64> = adopted.iter().map(|(o, _)| o.get() as i64).collect();
        let mut rows = Vec::new();
        if !ids.is_empty() {
            let (prefix, shift) = (Row::prefix(name), read.row.shift);
            S::owner_rows_in(tx, name, &ids, &mut |row| {
                rows.push(row.timer_with(prefix, shift)?);
                Ok(true)
            })?;
        }
        out.push(Found {
            node: name.clone(),
            read,
            owners: adopted,
            rows,
            parcels,
        });
    }
    Ok((out, now))
}

/// The commit's step for the owners it adopts: see the module docs. Which owners cannot be
/// taken (another node took them first, or their node is live again or committed since);
/// when there are any, the caller rolls the transaction back.
pub(super) fn adopt_in<S: Store>(
    tx: &mut S::Tx<'_>,
    me: &str,
    adopts: &[Adopt],
) -> Result<Vec<OwnerId>, StoreError> {
    let now = S::now_us_in(tx)?;
    let mut by_node: BTreeMap<&str, Vec<&Adopt>> = BTreeMap::new();
    for a in adopts {
        by_node.entry(a.from.as_str()).or_default().push(a);
    }
    let mut stale = Vec::new();
    for (from, list) in by_node {
        let read = S::node_in(tx, from, true)?;
        let still = read.as_ref().is_some_and(|r| {
            let lost = r.lease.holder == 0 || r.lease.until_us < now;
            lost && list.iter().all(|a| a.committed == r.row.committed)
        });
        let (true, Some(read)) = (still, read) else {
            stale.extend(list.iter().map(|a| a.owner));
            continue;
        };
        let read = read.checked(from)?;
        let swaps: Vec<OwnerSwap<'_>> = (list.iter())
            .map(|a| moved(a.owner, a.epoch, from, me))
            .collect();
        // A registry compare-and-set each (owners with a parcel in flight are not adopted).
        let moved = S::swap_owners_in(tx, &swaps)?;
        stale.extend(
            (list.iter().zip(&moved))
                .filter(|(_, &m)| !m)
                .map(|(a, _)| a.owner),
        );
        if !stale.is_empty() {
            continue; // rolled back by the caller
        }
        let ids: Vec<i64> = list.iter().map(|a| a.owner.get() as i64).collect();
        let mut row = read.row.clone();
        for (_, _, sum) in S::delete_owner_rows_in(tx, from, &ids)? {
            row.rows = row.rows.saturating_sub(1);
            row.xsum ^= sum as u64;
        }
        let sum = row.sum_for(from);
        S::put_node_in(
            tx,
            from,
            &NodeRead {
                row,
                lease: Lease::none(),
                sum,
            },
        )?;
    }
    Ok(stale)
}
