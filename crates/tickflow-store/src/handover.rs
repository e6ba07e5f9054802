//! Moving an owner between processes through the database: an owner registry (who holds each
//! owner, at which epoch) and an outbox of handovers in flight.
//!
//! The protocol, with the scheduler's two-phase move on either side:
//!
//! 1. The sender freezes the owner ([`Scheduler::freeze_owner`](tickflow::Scheduler)),
//!    encodes what moves (the owner's snapshot and the game's own state of it) and
//!    [`send`](Handovers::send)s a [`Parcel`]. The outbox takes it only while the registry says
//!    the sender holds the owner at the parcel's epoch; the same parcel sent twice is kept once.
//! 2. The receiver reads its [`inbox`](Handovers::inbox), imports each parcel
//!    (`import_owner`) and [`accept`](Handovers::accept)s it: in one transaction the registry
//!    moves from `(sender, epoch)` to `(receiver, epoch + 1)` — a compare-and-set — and the
//!    parcel leaves the outbox, with the receiver's own writes (`effects`) in the same
//!    transaction. A parcel whose bytes do not import, or that the registry no longer
//!    matches (stale, or delivered twice), is [`refuse`](Handovers::refuse)d: removed, and
//!    nothing else changes.
//! 3. The sender [`settle`](Handovers::settle)s: [`Settled::Moved`] once the registry names
//!    the receiver (`commit_owner`), [`Settled::Kept`] when the parcel was refused and the
//!    registry still names the sender (`abort_owner`), [`Settled::Waiting`] while it is in
//!    the outbox.
//!
//! An owner is never held by two processes: the registry names one, and only its holder can
//! send it or commit its durable rows (the epoch fences them).

use tickflow::OwnerId;

use crate::error::StoreError;
use crate::store::Store;

/// Largest parcel (bytes): parcels are read from a database another process wrote.
pub const MAX_PARCEL: usize = 16 << 20;

/// Who holds an owner, by the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The node (process, shard) that holds it.
    pub node: String,
    /// How many times it moved (or was claimed): a parcel or a commit from an older epoch is
    /// refused.
    pub epoch: u64,
}

/// An owner on its way from one node to another: a row of the outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parcel {
    /// The owner that moves.
    pub owner: OwnerId,
    /// The epoch its sender holds it at (the receiver will hold `epoch + 1`).
    pub epoch: u64,
    /// The node that sends it.
    pub sender: String,
    /// The node it goes to.
    pub receiver: String,
    /// What moves, encoded by the sender (at most [`MAX_PARCEL`] bytes).
    pub bytes: Vec<u8>,
}

/// What [`Handovers::accept`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// The receiver holds the owner at this epoch; the parcel is gone.
    Taken(u64),
    /// The registry no longer matches the parcel (it moved since, or this parcel was
    /// accepted already): the parcel is gone, the registry and your effects are untouched.
    Stale(Option<Holder>),
}

/// Where a handover the sender made stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The parcel is still in the outbox.
    Waiting,
    /// The receiver took the owner: drop it (`commit_owner`).
    Moved(Holder),
    /// The parcel was refused and the registry still names the sender: keep the owner
    /// (`abort_owner`).
    Kept,
}

/// The owner registry and the handover outbox: [`Sqlite`](crate::Sqlite) and
/// [`Postgres`](crate::Postgres) implement it on the tables of the durable timers. Each
/// method is one transaction.
pub trait Handovers: Store {
    /// Who holds `owner` (`None`: never registered).
    fn holder(&mut self, owner: OwnerId) -> Result<Option<Holder>, StoreError>;

    /// Registers `owner` at `node` at epoch 0 if no one holds it yet (a new entity), and
    /// returns who holds it.
    fn register(&mut self, owner: OwnerId, node: &str) -> Result<Holder, StoreError>;

    /// [`register`](Self::register) inside a transaction of yours.
    fn register_in(tx: &mut Self::Tx<'_>, owner: OwnerId, node: &str)
        -> Result<Holder, StoreError>;

    /// [`send`](Self::send) inside a transaction of yours (a frame's commit, so that the
    /// parcel and the frame's other writes are stored together or not at all).
    fn send_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<(), StoreError>;

    /// Puts `parcel` in the outbox. Refused with [`StoreError::Fenced`] unless the registry
    /// says its sender holds its owner at its epoch; a parcel for that owner and epoch that is
    /// there already is left as it is (a send repeated after a crash is one send).
    fn send(&mut self, parcel: &Parcel) -> Result<(), StoreError>;

    /// Up to `limit` parcels addressed to `node`, in the order they were sent.
    fn inbox(&mut self, node: &str, limit: usize) -> Result<Vec<Parcel>, StoreError>;

    /// Takes the parcel's owner for its receiver: registry compare-and-set from
    /// `(sender, epoch)` to `(receiver, epoch + 1)`, removal of the parcel and `effects`, in one
    /// transaction. An error from `effects` rolls all of it back.
    fn accept(
        &mut self,
        parcel: &Parcel,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Accepted, StoreError>;

    /// [`accept`](Self::accept) inside a transaction of yours: a
    /// [`Durable::end_frame`](crate::Durable::end_frame)'s effects hook, so that the imported
    /// owner's durable rows, the registry and the outbox change in one commit (a receiver that
    /// crashes before it loses nothing: the parcel is still there). On
    /// [`Accepted::Stale`] nothing was changed; return an error from the hook to roll the
    /// commit back, take the owner out of the scheduler again and
    /// [`refuse`](Self::refuse) the parcel.
    fn accept_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<Accepted, StoreError>;

    /// Removes a parcel the receiver cannot take (its bytes do not import): `false` if it
    /// was not there.
    fn refuse(&mut self, parcel: &Parcel) -> Result<bool, StoreError>;

    /// Where the handover of `owner` that `sender` made at `epoch` stands.
    fn settle(&mut self, owner: OwnerId, sender: &str, epoch: u64) -> Result<Settled, StoreError>;

    /// [`send`](Self::send) of many parcels in one transaction: all are sent, or none (the
    /// first whose sender does not hold its owner is the error).
    fn send_all(&mut self, parcels: &[Parcel]) -> Result<(), StoreError>;

    /// [`accept`](Self::accept) of many parcels in one transaction, with `effects` once:
    /// what became of each, in order. Stale parcels are removed as `accept` removes them.
    fn accept_all(
        &mut self,
        parcels: &[Parcel],
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Vec<Accepted>, StoreError>;

    /// [`settle`](Self::settle) of many handovers `sender` made (owner and epoch), read in one
    /// transaction, in order.
    fn settle_all(
        &mut self,
        sent: &[(OwnerId, u64)],
        sender: &str,
    ) -> Result<Vec<Settled>, StoreError>;
}

/// What a node holding `held` makes of a parcel of its own still in the outbox or not.
pub(crate) fn settled(in_outbox: bool, sender: &str, epoch: u64, held: Option<Holder>) -> Settled {
    match held {
        _ if in_outbox => Settled::Waiting,
        Some(h) if h.node == sender && h.epoch == epoch => Settled::Kept,
        Some(h) => Settled::Moved(h),
        None => Settled::Kept,
    }
}

/// A registry row read back.
pub(crate) fn holder_of(owner: OwnerId, node: String, epoch: i64) -> Result<Holder, StoreError> {
    if epoch < 0 {
        return Err(StoreError::bad_row(
            "tickflow_owners",
            format!("owner {}", owner.get()),
            "epoch",
            format!("is {epoch}"),
        ));
    }
    Ok(Holder {
        node,
        epoch: epoch as u64,
    })
}

/// Whether the registry's `holder` is `node` at `epoch`.
pub(crate) fn holds(holder: &Option<Holder>, node: &str, epoch: u64) -> bool {
    holder
        .as_ref()
        .is_some_and(|h| h.node == node && h.epoch == epoch)
}

/// The refusal of a parcel its sender does not hold.
pub(crate) fn not_held(parcel: &Parcel, holder: Option<Holder>) -> StoreError {
    StoreError::NotHeld {
        owner: parcel.owner,
        node: parcel.sender.clone(),
        epoch: parcel.epoch,
        holder,
    }
}

/// Checks a parcel's columns read back from the outbox.
pub(crate) fn parcel_of(
    owner: i64,
    epoch: i64,
    sender: String,
    receiver: String,
    bytes: Vec<u8>,
) -> Result<Parcel, StoreError> {
    let bad = |field, reason: String| {
        StoreError::bad_row(
            "tickflow_outbox",
            format!("(owner {owner}, epoch {epoch})"),
            field,
            reason,
        )
    };
    if epoch < 0 {
        return Err(bad("epoch", format!("is {epoch}")));
    }
    if bytes.len() > MAX_PARCEL {
        return Err(bad(
            "bytes",
            format!("is {} bytes, over {MAX_PARCEL}", bytes.len()),
        ));
    }
    Ok(Parcel {
        owner: OwnerId::new(owner as u64),
        epoch: epoch as u64,
        sender,
        receiver,
        bytes,
    })
}

/// Refuses a parcel that could not be read back.
pub(crate) fn check_parcel(parcel: &Parcel) -> Result<(), StoreError> {
    if parcel.bytes.len() > MAX_PARCEL || parcel.epoch >= i64::MAX as u64 {
        return Err(StoreError::bad_row(
            "tickflow_outbox",
            format!("(owner {}, epoch {})", parcel.owner.get(), parcel.epoch),
            "bytes",
            format!(
                "{} bytes at epoch {}: over {MAX_PARCEL} bytes or the last epoch",
                parcel.bytes.len(),
                parcel.epoch
            ),
        ));
    }
    Ok(())
}
