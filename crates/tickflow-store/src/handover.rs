//! Moving an owner between nodes through the database: an owner registry (who holds each
//! owner, at which epoch) and an outbox of handovers in flight. [`Durable`](crate::Durable)
//! runs this protocol for you ([`send`](crate::Durable::send),
//! [`receive`](crate::Durable::receive), and the settling in each commit); the operations here
//! are its steps, for tools and for a transaction of your own.
//!
//! The protocol, with the scheduler's two-phase move on either side:
//!
//! 1. The sender freezes the owner and [`send`](Handovers::send)s a [`Parcel`]. The outbox takes
//!    it only while the registry names the sender at the parcel's epoch; the same parcel sent
//!    twice is kept once.
//! 2. The receiver reads its [`inbox`](Handovers::inbox), imports each parcel and
//!    [`accept`](Handovers::accept)s it: in one transaction the registry moves from
//!    `(sender, epoch)` to `(receiver, epoch + 1)` — a compare-and-set — and the parcel leaves
//!    the outbox. A parcel the registry no longer matches (stale, or delivered twice) leaves it
//!    too and changes nothing ([`Accepted::Stale`]), and so does one that is no longer in the
//!    outbox (refused, or taken by the node that received it in a lost node's place); one
//!    whose bytes do not import is [`refuse`](Handovers::refuse)d.
//! 3. The sender [`settle`](Handovers::settle)s: [`Settled::Moved`] once the registry names
//!    the receiver, [`Settled::Kept`] when the parcel is gone and the registry still names the
//!    sender, [`Settled::Waiting`] while it is in the outbox.
//!
//! An owner is never held by two nodes: the registry names one, and only it can send the owner
//! or commit its durable rows (the epoch fences them). Every operation is written once over
//! the [`Store`] primitives and checks each row it reads (its checksum included).

use tickflow::OwnerId;

use crate::backend::{OwnerRead, OwnerSwap, ParcelRead};
use crate::error::StoreError;
use crate::store::{in_tx, wall_ns, Store};
use crate::tables::{moved, owner_row, parcel_row};
pub use crate::vocab::{Holder, Parcel, MAX_PARCEL};

/// What [`Handovers::accept`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// The receiver holds the owner at this epoch; the parcel is gone.
    Taken(u64),
    /// The registry no longer matches the parcel (it moved since, or this parcel was
    /// accepted already): the parcel is gone, and the registry is untouched.
    Stale(Option<Holder>),
}

/// Where a handover the sender made stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The parcel is still in the outbox.
    Waiting,
    /// The receiver took the owner: drop it (`commit_owner`).
    Moved(Holder),
    /// The parcel is gone and the registry still names the sender: keep the owner
    /// (`abort_owner`).
    Kept,
}

/// The owner registry and the handover outbox, on any [`Store`]. Each method without `_in` is
/// one transaction; each `_in` form runs inside a transaction of yours (an effects hook, say),
/// so that it commits with the rest of it or not at all.
pub trait Handovers: Store + Sized {
    /// Who holds `owner` (`None`: never registered).
    fn holder(&mut self, owner: OwnerId) -> Result<Option<Holder>, StoreError> {
        in_tx(self, false, |tx| holder_in::<Self>(tx, owner))
    }

    /// Every registered owner and its holder, in owner order.
    fn owners(&mut self) -> Result<Vec<(OwnerId, Holder)>, StoreError> {
        in_tx(self, false, |tx| {
            let rows = Self::all_owners_in(tx)?;
            rows.into_iter().map(OwnerRead::holder).collect()
        })
    }

    /// Registers `owner` at `node` at epoch 0 if no one holds it yet (a new entity), and
    /// returns who holds it.
    fn register(&mut self, owner: OwnerId, node: &str) -> Result<Holder, StoreError> {
        in_tx(self, true, |tx| Self::register_in(tx, owner, node))
    }

    /// [`register`](Self::register) inside a transaction of yours.
    fn register_in(
        tx: &mut Self::Tx<'_>,
        owner: OwnerId,
        node: &str,
    ) -> Result<Holder, StoreError> {
        Self::insert_owners_in(tx, &[owner_row(owner, node, 0)])?;
        Ok(holder_in::<Self>(tx, owner)?.expect("registered in this transaction"))
    }

    /// Puts `parcel` in the outbox. Refused with [`StoreError::NotHeld`] unless the registry
    /// says its sender holds its owner at its epoch; a parcel for that owner and epoch that is
    /// there already is left as it is (a send repeated after a crash is one send).
    ///
    /// On its own a send commits without waiting for the disk (PostgreSQL's
    /// `synchronous_commit = off` for its transaction alone), which loses nothing: the parcel
    /// is a message and the registry the truth. The receiver's acceptance waits for the disk,
    /// and the log is flushed in order, so an acceptance that is stored has its parcel stored
    /// before it; a server crash before that flush loses the parcel and leaves the registry
    /// naming the sender, which then settles as [`Settled::Kept`]. (Inside a transaction of
    /// yours, [`send_in`](Self::send_in), your commit decides.)
    fn send(&mut self, parcel: &Parcel) -> Result<(), StoreError> {
        self.send_all(std::slice::from_ref(parcel))
    }

    /// [`send`](Self::send) inside a transaction of yours.
    fn send_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<(), StoreError> {
        Self::send_all_in(tx, std::slice::from_ref(parcel))
    }

    /// [`send`](Self::send) of many parcels in one transaction: all are sent, or none (the
    /// first whose sender does not hold its owner is the error).
    fn send_all(&mut self, parcels: &[Parcel]) -> Result<(), StoreError> {
        let rows = parcel_rows(parcels)?;
        sent(parcels, self.send_parcels(&rows)?)
    }

    /// [`send_all`](Self::send_all) inside a transaction of yours.
    fn send_all_in(tx: &mut Self::Tx<'_>, parcels: &[Parcel]) -> Result<(), StoreError> {
        let rows = parcel_rows(parcels)?;
        sent(parcels, Self::send_parcels_in(tx, &rows)?)
    }

    /// Up to `limit` parcels addressed to `node`, in the order they were sent. A row that
    /// fails its checks (damaged or edited) can never be delivered: it is removed, and its
    /// sender keeps the owner ([`Settled::Kept`]).
    fn inbox(&mut self, node: &str, limit: usize) -> Result<Vec<Parcel>, StoreError> {
        let rows = self.read_parcels(node, true, limit)?;
        let mut out = Vec::with_capacity(rows.len());
        let mut damaged = Vec::new();
        for row in rows {
            let key = (row.owner, row.epoch);
            match row.parcel() {
                Ok(p) => out.push(p),
                Err(_) => damaged.push(key),
            }
        }
        if !damaged.is_empty() {
            in_tx(self, true, |tx| Self::remove_parcels_in(tx, &damaged))?;
        }
        Ok(out)
    }

    /// Takes the parcel's owner for its receiver: registry compare-and-set from
    /// `(sender, epoch)` to `(receiver, epoch + 1)`, removal of the parcel and `effects`, in one
    /// transaction. An error from `effects` rolls all of it back; `effects` does not run for a
    /// stale parcel (which is removed all the same).
    fn accept(
        &mut self,
        parcel: &Parcel,
        mut effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Accepted, StoreError> {
        in_tx(self, true, |tx| {
            let accepted = Self::accept_in(tx, parcel)?;
            if let Accepted::Taken(_) = accepted {
                effects(tx)?;
            }
            Ok(accepted)
        })
    }

    /// [`accept`](Self::accept) inside a transaction of yours.
    fn accept_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<Accepted, StoreError> {
        let mut out = Self::accept_all_in(tx, std::slice::from_ref(parcel))?;
        Ok(out.pop().expect("one answer per parcel"))
    }

    /// [`accept`](Self::accept) of many parcels in one transaction, with `effects` once:
    /// what became of each, in order.
    fn accept_all(
        &mut self,
        parcels: &[Parcel],
        mut effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Vec<Accepted>, StoreError> {
        in_tx(self, true, |tx| {
            let out = Self::accept_all_in(tx, parcels)?;
            effects(tx)?;
            Ok(out)
        })
    }

    /// [`accept_all`](Self::accept_all) inside a transaction of yours.
    fn accept_all_in(
        tx: &mut Self::Tx<'_>,
        parcels: &[Parcel],
    ) -> Result<Vec<Accepted>, StoreError> {
        for p in parcels {
            check_parcel(p)?;
        }
        let swaps: Vec<OwnerSwap<'_>> = (parcels.iter())
            .map(|p| moved(p.owner, p.epoch, &p.sender, &p.receiver))
            .collect();
        let taken = Self::take_parcels_in(tx, &swaps)?;
        let stale: Vec<i64> = (parcels.iter().zip(&taken))
            .filter(|(_, &t)| !t)
            .map(|(p, _)| p.owner.get() as i64)
            .collect();
        let holders = holders_in::<Self>(tx, &stale, false)?;
        Ok((parcels.iter().zip(taken))
            .map(|(p, t)| match t {
                true => Accepted::Taken(p.epoch + 1),
                false => Accepted::Stale(holders.get(&p.owner).cloned()),
            })
            .collect())
    }

    /// Removes a parcel the receiver cannot take (its bytes do not import): `false` if it
    /// was not there.
    fn refuse(&mut self, parcel: &Parcel) -> Result<bool, StoreError> {
        in_tx(self, true, |tx| Self::refuse_in(tx, parcel))
    }

    /// [`refuse`](Self::refuse) inside a transaction of yours.
    fn refuse_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<bool, StoreError> {
        let key = (parcel.owner.get() as i64, parcel.epoch as i64);
        let found = Self::parcels_in(tx, &[key])?.pop().flatten();
        if found.is_none_or(|p| p.receiver != parcel.receiver) {
            return Ok(false);
        }
        Ok(Self::remove_parcels_in(tx, &[key])?[0])
    }

    /// Where the handover of `owner` that `sender` made at `epoch` stands.
    fn settle(&mut self, owner: OwnerId, sender: &str, epoch: u64) -> Result<Settled, StoreError> {
        let mut out = self.settle_all(&[(owner, epoch)], sender)?;
        Ok(out.pop().expect("one answer per handover"))
    }

    /// [`settle`](Self::settle) of many handovers `sender` made (owner and epoch), read in one
    /// transaction, in order.
    fn settle_all(
        &mut self,
        sent: &[(OwnerId, u64)],
        sender: &str,
    ) -> Result<Vec<Settled>, StoreError> {
        let keys: Vec<(i64, i64)> = (sent.iter())
            .map(|&(o, e)| (o.get() as i64, e as i64))
            .collect();
        let read = self.read_sent(&keys)?;
        (sent.iter().zip(read))
            .map(|(&(_, epoch), (from, w))| {
                let holder = w.map(OwnerRead::holder).transpose()?.map(|(_, h)| h);
                let in_outbox = from.is_some_and(|from| from == sender);
                Ok(settled(in_outbox, sender, epoch, holder))
            })
            .collect()
    }

    /// [`settle_all`](Self::settle_all) inside a transaction of yours.
    fn settle_all_in(
        tx: &mut Self::Tx<'_>,
        sent: &[(OwnerId, u64)],
        sender: &str,
    ) -> Result<Vec<Settled>, StoreError> {
        let keys: Vec<(i64, i64)> = sent
            .iter()
            .map(|&(o, e)| (o.get() as i64, e as i64))
            .collect();
        let found = Self::parcels_in(tx, &keys)?;
        let owners: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let holders = holders_in::<Self>(tx, &owners, false)?;
        Ok((sent.iter().zip(found))
            .map(|(&(owner, epoch), p)| {
                let in_outbox = p.is_some_and(|p| p.sender == sender);
                let holder = holders.get(&owner).cloned();
                settled(in_outbox, sender, epoch, holder)
            })
            .collect())
    }
}

impl<S: Store> Handovers for S {}

/// The checked holder of `owner`.
pub(crate) fn holder_in<S: Store>(
    tx: &mut S::Tx<'_>,
    owner: OwnerId,
) -> Result<Option<Holder>, StoreError> {
    let mut rows = holders_in::<S>(tx, &[owner.get() as i64], false)?;
    Ok(rows.remove(&owner))
}

/// The checked holders of those of `owners` that are registered.
pub(crate) fn holders_in<S: Store>(
    tx: &mut S::Tx<'_>,
    owners: &[i64],
    lock: bool,
) -> Result<Holders, StoreError> {
    if owners.is_empty() {
        return Ok(Holders::default());
    }
    let rows = S::owners_in(tx, owners, lock)?;
    rows.into_iter().map(OwnerRead::holder).collect()
}

/// Holders by owner.
pub(crate) type Holders = rustc_hash::FxHashMap<OwnerId, Holder>;

/// Parcels as the rows a send writes, checked, sent now.
fn parcel_rows(parcels: &[Parcel]) -> Result<Vec<ParcelRead>, StoreError> {
    let now = wall_ns();
    (parcels.iter())
        .map(|p| {
            check_parcel(p)?;
            Ok(parcel_row(p, now))
        })
        .collect()
}

/// A send's outcome from the registry rows it read: refused with the first parcel whose sender
/// does not hold its owner (then nothing was put).
fn sent(parcels: &[Parcel], holders: Vec<Option<OwnerRead>>) -> Result<(), StoreError> {
    for (p, row) in parcels.iter().zip(holders) {
        let holder = row.map(OwnerRead::holder).transpose()?.map(|(_, h)| h);
        if !holds(&holder, &p.sender, p.epoch) {
            return Err(not_held(p, holder));
        }
    }
    Ok(())
}

/// What a node holding `held` makes of a parcel of its own still in the outbox or not.
fn settled(in_outbox: bool, sender: &str, epoch: u64, held: Option<Holder>) -> Settled {
    match held {
        _ if in_outbox => Settled::Waiting,
        Some(h) if h.node == sender && h.epoch == epoch => Settled::Kept,
        Some(h) => Settled::Moved(h),
        None => Settled::Kept,
    }
}

/// Whether the registry's `holder` is `node` at `epoch`.
fn holds(holder: &Option<Holder>, node: &str, epoch: u64) -> bool {
    holder
        .as_ref()
        .is_some_and(|h| h.node == node && h.epoch == epoch)
}

/// The refusal of a parcel its sender does not hold.
fn not_held(parcel: &Parcel, holder: Option<Holder>) -> StoreError {
    StoreError::NotHeld {
        owner: parcel.owner,
        node: parcel.sender.clone(),
        epoch: parcel.epoch,
        holder,
    }
}

/// Refuses a parcel that could not be read back.
fn check_parcel(parcel: &Parcel) -> Result<(), StoreError> {
    if parcel.bytes.len() > MAX_PARCEL || parcel.epoch >= i64::MAX as u64 - 1 {
        return Err(StoreError::TooLarge {
            key: format!("(owner {}, epoch {})", parcel.owner.get(), parcel.epoch),
            field: "bytes",
            len: parcel.bytes.len(),
            max: MAX_PARCEL,
        });
    }
    Ok(())
}
