//! [`Handovers`] on SQLite: the owner registry and the outbox. A statement is a call into the
//! library, not a round trip, so the batch forms run the single ones in one transaction.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::handover::{
    check_parcel, holder_of, holds, not_held, parcel_of, settled, Accepted, Handovers, Holder,
    Parcel, Settled,
};
use crate::sqlite::Sqlite;
use crate::store::wall_ns;

fn holder_in(tx: &Connection, owner: OwnerId) -> Result<Option<Holder>, StoreError> {
    let row = tx
        .query_row(
            "SELECT node, epoch FROM tickflow_owners WHERE owner = ?1",
            [owner.get() as i64],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
        )
        .optional()?;
    row.map(|(node, epoch)| holder_of(owner, node, epoch))
        .transpose()
}

impl Handovers for Sqlite {
    fn holder(&mut self, owner: OwnerId) -> Result<Option<Holder>, StoreError> {
        holder_in(self.connection(), owner)
    }

    fn register(&mut self, owner: OwnerId, node: &str) -> Result<Holder, StoreError> {
        let mut tx = self
            .connection()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let holder = Self::register_in(&mut tx, owner, node)?;
        tx.commit()?;
        Ok(holder)
    }

    fn register_in(
        tx: &mut Self::Tx<'_>,
        owner: OwnerId,
        node: &str,
    ) -> Result<Holder, StoreError> {
        tx.execute(
            "INSERT INTO tickflow_owners VALUES (?1, 0, ?2) ON CONFLICT (owner) DO NOTHING",
            params![owner.get() as i64, node],
        )?;
        Ok(holder_in(tx, owner)?.expect("registered in this transaction"))
    }

    fn send(&mut self, parcel: &Parcel) -> Result<(), StoreError> {
        let mut tx = self
            .connection()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        Self::send_in(&mut tx, parcel)?;
        Ok(tx.commit()?)
    }

    fn send_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<(), StoreError> {
        check_parcel(parcel)?;
        let holder = holder_in(tx, parcel.owner)?;
        if !holds(&holder, &parcel.sender, parcel.epoch) {
            return Err(not_held(parcel, holder));
        }
        tx.execute(
            "INSERT INTO tickflow_outbox VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (owner, epoch) DO NOTHING",
            params![
                parcel.owner.get() as i64,
                parcel.epoch as i64,
                parcel.sender,
                parcel.receiver,
                parcel.bytes,
                wall_ns() as i64
            ],
        )?;
        Ok(())
    }

    fn inbox(&mut self, node: &str, limit: usize) -> Result<Vec<Parcel>, StoreError> {
        let mut stmt = self.connection().prepare_cached(
            "SELECT owner, epoch, sender, receiver, bytes FROM tickflow_outbox \
             WHERE receiver = ?1 ORDER BY sent, owner LIMIT ?2",
        )?;
        let mut rows = stmt.query(params![node, limit.min(i64::MAX as usize) as i64])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(parcel_of(
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
            )?);
        }
        Ok(out)
    }

    fn accept(
        &mut self,
        parcel: &Parcel,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Accepted, StoreError> {
        let mut effects = effects;
        let mut tx = self
            .connection()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let accepted = Self::accept_in(&mut tx, parcel)?;
        if let Accepted::Stale(_) = accepted {
            // The stale parcel goes; the caller's effects are for a taken owner only.
            remove_parcel(&tx, parcel)?;
        } else {
            effects(&mut tx)?;
        }
        tx.commit()?;
        Ok(accepted)
    }

    fn accept_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<Accepted, StoreError> {
        let taken: Option<i64> = tx
            .query_row(
                "UPDATE tickflow_owners SET node = ?3, epoch = epoch + 1 \
                 WHERE owner = ?1 AND epoch = ?2 AND node = ?4 RETURNING epoch",
                params![
                    parcel.owner.get() as i64,
                    parcel.epoch as i64,
                    parcel.receiver,
                    parcel.sender
                ],
                |r| r.get(0),
            )
            .optional()?;
        let Some(epoch) = taken else {
            return Ok(Accepted::Stale(holder_in(tx, parcel.owner)?));
        };
        tx.execute(
            "DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2",
            params![parcel.owner.get() as i64, parcel.epoch as i64],
        )?;
        Ok(Accepted::Taken(epoch as u64))
    }

    fn refuse(&mut self, parcel: &Parcel) -> Result<bool, StoreError> {
        let gone = self.connection().execute(
            "DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2 AND receiver = ?3",
            params![
                parcel.owner.get() as i64,
                parcel.epoch as i64,
                parcel.receiver
            ],
        )?;
        Ok(gone > 0)
    }

    fn settle(&mut self, owner: OwnerId, sender: &str, epoch: u64) -> Result<Settled, StoreError> {
        let tx = self.connection().transaction()?;
        let in_outbox = tx
            .query_row(
                "SELECT 1 FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2 AND sender = ?3",
                params![owner.get() as i64, epoch as i64, sender],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        let holder = holder_in(&tx, owner)?;
        tx.commit()?;
        Ok(settled(in_outbox, sender, epoch, holder))
    }

    // SQLite statements are calls into the library, not round trips: the batch forms run the
    // single forms in one transaction.
    fn send_all(&mut self, parcels: &[Parcel]) -> Result<(), StoreError> {
        let mut tx = self
            .connection()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for p in parcels {
            Self::send_in(&mut tx, p)?;
        }
        Ok(tx.commit()?)
    }

    fn accept_all(
        &mut self,
        parcels: &[Parcel],
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Vec<Accepted>, StoreError> {
        let mut effects = effects;
        let mut tx = self
            .connection()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut out = Vec::with_capacity(parcels.len());
        for p in parcels {
            let a = Self::accept_in(&mut tx, p)?;
            if let Accepted::Stale(_) = a {
                remove_parcel(&tx, p)?;
            }
            out.push(a);
        }
        effects(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn settle_all(
        &mut self,
        sent: &[(OwnerId, u64)],
        sender: &str,
    ) -> Result<Vec<Settled>, StoreError> {
        let tx = self.connection().transaction()?;
        let mut out = Vec::with_capacity(sent.len());
        for &(owner, epoch) in sent {
            let in_outbox = tx
                .prepare_cached(
                    "SELECT 1 FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2 AND sender = ?3",
                )?
                .query_row(
                    params![owner.get() as i64, epoch as i64, sender],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            out.push(settled(in_outbox, sender, epoch, holder_in(&tx, owner)?));
        }
        tx.commit()?;
        Ok(out)
    }
}

/// Removes `parcel` from the outbox (a stale one, which `accept_in` leaves to its caller).
fn remove_parcel(tx: &rusqlite::Transaction<'_>, parcel: &Parcel) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM tickflow_outbox WHERE owner = ?1 AND epoch = ?2",
        params![parcel.owner.get() as i64, parcel.epoch as i64],
    )?;
    Ok(())
}
