//! `resume`: everything a node held at its last commit, back in one call.
//!
//! Ground rules:
//!
//! - It takes the node for this process first (`lease.rs`), so nothing it reads changes under
//!   it but by other nodes' handovers.
//! - It reads in one snapshot: the node's row, the owners the registry gives the node, the
//!   parcels it sent that are still in the outbox, and its timer rows, each row checked (its
//!   checksum too), and the rows as a whole against the count and XOR of checksums the node's
//!   row records — a row that vanished or appeared is refused like a damaged one.
//! - The owners come back at the registry's epochs; rows of an owner that moved on while the
//!   node was down are not loaded (the next commit deletes them, and
//!   [`handovers`](super::Durable::handovers) reports the move); owners with a parcel in flight
//!   are loaded frozen and settle by themselves.
//! - Rows are read on a thread of their own and set here as each part arrives: reading a large
//!   node takes about as long as setting it, and this way the two overlap.

use std::sync::mpsc;
use std::time::Duration;

use rustc_hash::FxHashMap;
use tickflow::snapshot::{Resolver, RestoreError};
use tickflow::time::{Span, Time};
use tickflow::timer::DurableTimer;
use tickflow::{OwnerId, Scheduler};

use super::tally::Rows;
use super::{lease, Durable, Handover, Resumed};
use crate::backend::{ImageRead, NodeRead, OwnerRead, ParcelRead};
use crate::error::StoreError;
use crate::handover::{holders_in, Holder};
use crate::store::{in_tx, Store};

/// How many rows a part holds at most: enough that handing a part over costs little per row,
/// few enough that the first part is set while the rest are read.
pub const PART_ROWS: usize = 4096;

/// What the reader thread hands over.
enum Part {
    /// Always first: the registry rows naming the node, its parcels in the outbox, and how
    /// many timer rows follow.
    Head {
        owners: Vec<OwnerRead>,
        sent: Vec<ParcelRead>,
        rows: u64,
        /// The node's image, if it has one ([`Durable::commit_image`]).
        image: Option<ImageRead>,
    },
    /// Checked rows. (A row's epoch is not looked at: one of an older epoch of this node's
    /// is its all the same.)
    Rows(Vec<DurableTimer>),
}

impl<S: Store> Durable<S> {
    /// Takes this node for this process and builds its scheduler as its last commit left it:
    /// the clocks (the game clock and the frame number continue; the real clock moves by the
    /// wall-clock time offline, which then counts for each timer by its
    /// [`Offline`](tickflow::timer::Offline) policy), its durable timers with callbacks bound by
    /// `resolver`, the owners the registry gives it, and its handovers in flight (frozen; they
    /// settle in later commits). A node that never committed gets [`Scheduler::new`].
    ///
    /// It is all a restarted process needs to call. Parcels addressed to the node are in its
    /// inbox still: [`receive`](Self::receive) takes them as always.
    ///
    /// # Errors
    ///
    /// All or nothing: no scheduler is made on an error.
    /// - [`StoreError::NodeHeld`]: another live process runs this node. A process that died
    ///   holds it no longer than its lease ([`set_lease`](Self::set_lease)), and not at all
    ///   when it ran on this machine: the call waits that long at most.
    /// - [`StoreError::BadRow`], [`StoreError::Missing`]: a damaged, edited, vanished or
    ///   foreign row, named.
    /// - [`StoreError::Restore`]: a callback the resolver cannot bind.
    pub fn resume<C: 'static>(
        &mut self,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<(Scheduler<C>, Resumed), StoreError> {
        let (found, now_us) = lease::take(&mut self.store, &self.node, self.token, self.lease)?;
        let now_ns = self.wall.map_or(now_us.max(0) as u64 * 1000, |f| f());
        self.renewed = std::time::Instant::now();
        let (store, node) = (&mut self.store, self.node.as_str());
        let shift = found.as_ref().map_or(0, |r| r.row.shift);
        let (read, out) = std::thread::scope(|s| {
            let (tx, rx) = mpsc::sync_channel(4);
            let reader = s.spawn(move || read_node(store, node, shift, &tx));
            let out = load(rx, node, found.as_ref(), now_ns, resolver);
            let read = reader
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (read, out)
        });
        // A failed read explains a short or missing stream better than its symptom.
        let rows = read?;
        let Loaded {
            mut sched,
            mut resumed,
            held,
            outsiders,
            sent,
        } = out?;
        if let Some(row) = found.as_ref().map(|r| &r.row) {
            rows.check(&self.node, row)?;
        }
        // Rows of owners the registry gives another node: they moved on while this node was
        // down (it had not settled them). A row of an owner nobody holds is damage.
        let ids: Vec<i64> = outsiders.iter().map(|o| o.get() as i64).collect();
        let holders = in_tx(&mut self.store, false, |tx| {
            holders_in::<S>(tx, &ids, false)
        })?;
        let mut moved = Vec::new();
        for owner in outsiders {
            match holders.get(&owner) {
                Some(h) if h.node != self.node => moved.push((owner, h.node.clone())),
                holder => {
                    return Err(StoreError::Missing {
                        what: format!(
                            "node {:?} has timer rows of {owner:?}, which the registry gives \
                             {holder:?}: the registry or the rows are damaged",
                            self.node
                        ),
                    })
                }
            }
        }
        self.started = true;
        self.rows = rows;
        self.epochs = held.into_iter().map(|(o, h)| (o, h.epoch)).collect();
        self.committed = found.as_ref().map_or(0, |r| r.row.committed);
        // The offline time moved every game-clock timer that counts it; their rows stay as
        // they are, and the next commit writes the node's new shift.
        // (An image is the scheduler as committed: no offline time moved anything.)
        self.shift = match resumed.state {
            Some(_) => shift,
            None => shift.saturating_add(resumed.offline.flicks()),
        };
        self.landed_frame = resumed.frame;
        self.frames_since = 0;
        self.queue = Default::default();
        self.attempt = None;
        self.in_flight.clear();
        for (owner, to) in moved {
            if resumed.state.is_some() {
                sched.remove_owner(owner); // (an image holds every owner it had)
            }
            self.queue.drops.push(owner);
            self.events.push(Handover::Moved { owner, to });
        }
        for (owner, epoch, receiver) in sent {
            sched.freeze_owner(owner);
            self.in_flight.insert(owner, (epoch, receiver));
            resumed.in_flight.push(owner);
        }
        resumed.owners = self.epochs.len();
        // The lease ran from before the read (with a grace for it). The first commit may
        // rewrite every row (each timer moved by its offline policy): it gets the same grace
        // again. Should this fail, the first commit says why (or rejoins).
        let _ = self.renew(lease::grace_us(self.rows.count));
        Ok((sched, resumed))
    }
}

/// The reader thread: one read transaction, parts sent as they are read, and the node's rows'
/// checksums filed by key (the table a commit finds a changed row's old checksum in), which it
/// returns. Returning drops `out`, which ends the loader's stream.
fn read_node<S: Store>(
    store: &mut S,
    node: &str,
    shift: u64,
    out: &mpsc::SyncSender<Part>,
) -> Result<Rows, StoreError> {
    let mut sums = Rows::default();
    let mut tx = store.begin(false)?;
    let owners = S::owners_of_in(&mut tx, node)?;
    let sent = S::parcels_of_in(&mut tx, node, false, usize::MAX)?;
    let rows = S::count_rows_in(&mut tx, node)?;
    let image = S::image_in(&mut tx, node)?;
    let head = Part::Head {
        owners,
        sent,
        rows,
        image,
    };
    if out.send(head).is_err() {
        return Ok(sums);
    }
    sums.reserve(rows as usize);
    let mut part = Vec::with_capacity(PART_ROWS);
    let mut failed = None;
    let prefix = crate::row::Row::prefix(node);
    S::rows_in(&mut tx, node, &mut |row| {
        let sum = row.sum;
        match row.timer_with(prefix, shift) {
            Ok(t) => {
                sums.push(Rows::key(t.owner, &t.name), sum);
                part.push(t);
            }
            Err(e) => {
                failed = Some(e);
                return Ok(false);
            }
        }
        if part.len() == PART_ROWS {
            let full = std::mem::replace(&mut part, Vec::with_capacity(PART_ROWS));
            return Ok(out.send(Part::Rows(full)).is_ok());
        }
        Ok(true)
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    if !part.is_empty() {
        let _ = out.send(Part::Rows(part));
    }
    drop(tx); // read only: nothing to commit
              // Sorted here, while the loader sets the last parts.
    sums.seal();
    Ok(sums)
}

/// What the loader built.
struct Loaded<C: 'static> {
    sched: Scheduler<C>,
    resumed: Resumed,
    held: Vec<(OwnerId, Holder)>,
    /// Owners whose rows are here but whom the registry does not give this node.
    outsiders: Vec<OwnerId>,
    /// Parcels in flight: owner, epoch, receiver.
    sent: Vec<(OwnerId, u64, String)>,
}

/// Builds the scheduler at the node's clocks and sets the rows as they arrive.
fn load<C: 'static>(
    parts: mpsc::Receiver<Part>,
    node: &str,
    found: Option<&NodeRead>,
    now_ns: u64,
    resolver: &mut dyn Resolver<C>,
) -> Result<Loaded<C>, StoreError> {
    let Ok(Part::Head {
        owners,
        sent,
        rows: count,
        image,
    }) = parts.recv()
    else {
        return Err(out_of_order());
    };
    let held: Vec<(OwnerId, Holder)> = (owners.into_iter())
        .map(OwnerRead::holder)
        .collect::<Result<_, _>>()?;
    let epoch_of: FxHashMap<OwnerId, u64> = held.iter().map(|(o, h)| (*o, h.epoch)).collect();
    let mut sent_ok = Vec::new();
    for p in sent {
        let p = p.parcel()?;
        if epoch_of.get(&p.owner) == Some(&p.epoch) {
            sent_ok.push((p.owner, p.epoch, p.receiver));
        }
    }
    let committed = found.map(|r| &r.row).filter(|r| r.committed > 0);
    let Some(row) = committed else {
        if count > 0 {
            return Err(StoreError::Missing {
                what: format!("node {node:?} never committed but has {count} timer rows: damaged"),
            });
        }
        let resumed = Resumed::default();
        return Ok(Loaded {
            sched: Scheduler::new(),
            resumed,
            held,
            outsiders: Vec::new(),
            sent: sent_ok,
        });
    };
    let clocks = row.clocks;
    let offline = Span::from(Duration::from_nanos(now_ns.saturating_sub(clocks.wall_ns)));
    // An image that is the last commit's is the scheduler; the rows are then only looked
    // through for owners that moved on while the node was down.
    let (mut sched, state) = match image.filter(|i| i.committed == row.committed as i64) {
        Some(image) => {
            let (snap, state) = super::image::decode(node, &image)?;
            (Scheduler::restore(&snap, resolver)?.0, Some(state))
        }
        None => {
            let real = Time::from_flicks(clocks.real).checked_add(offline);
            let real = real.unwrap_or(Time::from_flicks(u64::MAX - 1));
            let game = Time::from_flicks(clocks.game);
            (Scheduler::resumed(game, real, clocks.frame), None)
        }
    };
    let mut outsiders: Vec<OwnerId> = Vec::new();
    let mut keep_held = |part: &mut Vec<DurableTimer>| {
        part.retain(|t| {
            let held = t.owner.get() == 0 || epoch_of.contains_key(&t.owner);
            if !held {
                outsiders.push(t.owner);
            }
            held
        })
    };
    let mut loader = match state {
        Some(_) => None,
        None => Some(sched.timers().durable_loader(clocks.raw(), offline)?),
    };
    if let Some(loader) = loader.as_mut() {
        loader.keep_shift();
        loader.reserve(count.min(1 << 24) as usize);
    }
    for part in parts {
        let Part::Rows(mut part) = part else {
            return Err(out_of_order());
        };
        keep_held(&mut part);
        if let Some(loader) = loader.as_mut() {
            loader.add(part, resolver)?;
        }
    }
    let report = loader.map(|l| l.finish()).unwrap_or_default();
    outsiders.sort_unstable();
    outsiders.dedup();
    let resumed = Resumed {
        resumed: true,
        frame: clocks.frame,
        offline,
        timers: report,
        owners: 0,
        in_flight: Vec::new(),
        state,
    };
    Ok(Loaded {
        sched,
        resumed,
        held,
        outsiders,
        sent: sent_ok,
    })
}

/// A store that did not give the node's head first, once.
fn out_of_order() -> StoreError {
    StoreError::Restore(RestoreError::Corrupt {
        reason: "the store did not read the node's head first, and once".into(),
    })
}
