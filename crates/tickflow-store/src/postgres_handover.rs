//! [`Handovers`] on PostgreSQL: the owner registry and the outbox as statements, one round
//! trip where a sender polls or sends, a fixed number of statements over arrays for a batch.

use std::collections::{HashMap, HashSet};

use postgres::GenericClient;
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::handover::{
    check_parcel, holder_of, holds, not_held, parcel_of, settled, Accepted, Handovers, Holder,
    Parcel, Settled,
};
use crate::postgres::Postgres;
use crate::store::wall_ns;

fn holder_in(
    c: &mut impl GenericClient,
    owner: OwnerId,
    lock: &str,
) -> Result<Option<Holder>, StoreError> {
    let row = c.query_opt(
        &format!("SELECT node, epoch FROM tickflow_owners WHERE owner = $1 {lock}"),
        &[&(owner.get() as i64)],
    )?;
    row.map(|r| holder_of(owner, r.try_get(0)?, r.try_get(1)?))
        .transpose()
}

/// The channel a send notifies (the payload: the receiver's node), for receivers that
/// `LISTEN` instead of polling their inbox.
pub const OUTBOX_CHANNEL: &str = "tickflow_outbox";

impl Handovers for Postgres {
    fn holder(&mut self, owner: OwnerId) -> Result<Option<Holder>, StoreError> {
        holder_in(self.client(), owner, "")
    }

    fn register(&mut self, owner: OwnerId, node: &str) -> Result<Holder, StoreError> {
        let mut tx = self.client().transaction()?;
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
            "INSERT INTO tickflow_owners VALUES ($1, 0, $2) ON CONFLICT (owner) DO NOTHING",
            &[&(owner.get() as i64), &node],
        )?;
        Ok(holder_in(tx, owner, "")?.expect("registered in this transaction"))
    }

    fn send(&mut self, parcel: &Parcel) -> Result<(), StoreError> {
        send_one(self.client(), parcel)
    }

    fn send_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<(), StoreError> {
        send_one(tx, parcel)
    }

    fn inbox(&mut self, node: &str, limit: usize) -> Result<Vec<Parcel>, StoreError> {
        let rows = self.client().query(
            "SELECT owner, epoch, sender, receiver, bytes FROM tickflow_outbox \
             WHERE receiver = $1 ORDER BY sent, owner LIMIT $2",
            &[&node, &(limit.min(i64::MAX as usize) as i64)],
        )?;
        (rows.iter())
            .map(|r| {
                parcel_of(
                    r.try_get(0)?,
                    r.try_get(1)?,
                    r.try_get(2)?,
                    r.try_get(3)?,
                    r.try_get(4)?,
                )
            })
            .collect()
    }

    fn accept(
        &mut self,
        parcel: &Parcel,
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Accepted, StoreError> {
        let mut effects = effects;
        let mut tx = self.client().transaction()?;
        let accepted = Self::accept_in(&mut tx, parcel)?;
        if let Accepted::Stale(_) = accepted {
            // The stale parcel goes; the caller's effects are for a taken owner only.
            tx.execute(
                "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2",
                &[&(parcel.owner.get() as i64), &(parcel.epoch as i64)],
            )?;
        } else {
            effects(&mut tx)?;
        }
        tx.commit()?;
        Ok(accepted)
    }

    fn accept_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<Accepted, StoreError> {
        let (owner, epoch) = (parcel.owner.get() as i64, parcel.epoch as i64);
        let taken = tx.query_opt(
            "UPDATE tickflow_owners SET node = $3, epoch = epoch + 1 \
             WHERE owner = $1 AND epoch = $2 AND node = $4 RETURNING epoch",
            &[&owner, &epoch, &parcel.receiver, &parcel.sender],
        )?;
        let Some(row) = taken else {
            return Ok(Accepted::Stale(holder_in(tx, parcel.owner, "")?));
        };
        tx.execute(
            "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2",
            &[&owner, &epoch],
        )?;
        Ok(Accepted::Taken(row.try_get::<_, i64>(0)? as u64))
    }

    fn refuse(&mut self, parcel: &Parcel) -> Result<bool, StoreError> {
        let gone = self.client().execute(
            "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2 AND receiver = $3",
            &[
                &(parcel.owner.get() as i64),
                &(parcel.epoch as i64),
                &parcel.receiver,
            ],
        )?;
        Ok(gone > 0)
    }

    fn settle(&mut self, owner: OwnerId, sender: &str, epoch: u64) -> Result<Settled, StoreError> {
        // One statement, one snapshot, one round trip (a sender polls this).
        let r = self.client().query_one(
            "SELECT EXISTS (SELECT 1 FROM tickflow_outbox \
                 WHERE owner = $1 AND epoch = $2 AND sender = $3), \
             (SELECT node FROM tickflow_owners WHERE owner = $1), \
             (SELECT epoch FROM tickflow_owners WHERE owner = $1)",
            &[&(owner.get() as i64), &(epoch as i64), &sender],
        )?;
        let (node, held): (Option<String>, Option<i64>) = (r.try_get(1)?, r.try_get(2)?);
        let holder = match (node, held) {
            (Some(node), Some(e)) => Some(holder_of(owner, node, e)?),
            _ => None,
        };
        Ok(settled(r.try_get(0)?, sender, epoch, holder))
    }

    // Each batch form is a fixed number of statements over arrays, whatever its size.
    fn send_all(&mut self, parcels: &[Parcel]) -> Result<(), StoreError> {
        parcels.iter().try_for_each(check_parcel)?;
        let mut tx = self.client().transaction()?;
        let owners: Vec<i64> = parcels.iter().map(|p| p.owner.get() as i64).collect();
        let holders = holders_in(&mut tx, &owners, "FOR UPDATE")?;
        for p in parcels {
            let holder = holders.get(&(p.owner.get() as i64)).cloned();
            if !holds(&holder, &p.sender, p.epoch) {
                return Err(not_held(p, holder));
            }
        }
        let epochs: Vec<i64> = parcels.iter().map(|p| p.epoch as i64).collect();
        let senders: Vec<&str> = parcels.iter().map(|p| p.sender.as_str()).collect();
        let receivers: Vec<&str> = parcels.iter().map(|p| p.receiver.as_str()).collect();
        let bytes: Vec<&[u8]> = parcels.iter().map(|p| p.bytes.as_slice()).collect();
        tx.execute(
            "INSERT INTO tickflow_outbox SELECT o, e, s, r, b, $6 FROM \
             UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BYTEA[]) AS p(o, e, s, r, b) \
             ON CONFLICT (owner, epoch) DO NOTHING",
            &[&owners, &epochs, &senders, &receivers, &bytes, &(wall_ns() as i64)],
        )?;
        let mut notified: Vec<&str> = receivers.clone();
        notified.sort_unstable();
        notified.dedup();
        for r in notified {
            tx.execute("SELECT pg_notify($1, $2)", &[&OUTBOX_CHANNEL, &r])?;
        }
        Ok(tx.commit()?)
    }

    fn accept_all(
        &mut self,
        parcels: &[Parcel],
        effects: impl FnMut(&mut Self::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<Vec<Accepted>, StoreError> {
        let mut effects = effects;
        let mut tx = self.client().transaction()?;
        let owners: Vec<i64> = parcels.iter().map(|p| p.owner.get() as i64).collect();
        let epochs: Vec<i64> = parcels.iter().map(|p| p.epoch as i64).collect();
        let senders: Vec<&str> = parcels.iter().map(|p| p.sender.as_str()).collect();
        let receivers: Vec<&str> = parcels.iter().map(|p| p.receiver.as_str()).collect();
        let taken: HashMap<(i64, i64), i64> = tx
            .query(
                "UPDATE tickflow_owners o SET node = p.r, epoch = o.epoch + 1 \
                 FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[]) AS p(o, e, s, r) \
                 WHERE o.owner = p.o AND o.epoch = p.e AND o.node = p.s \
                 RETURNING o.owner, o.epoch",
                &[&owners, &epochs, &senders, &receivers],
            )?
            .iter()
            .map(|r| Ok(((r.try_get(0)?, r.try_get::<_, i64>(1)? - 1), r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()?;
        tx.execute(
            "DELETE FROM tickflow_outbox t USING UNNEST($1::BIGINT[], $2::BIGINT[]) AS p(o, e) \
             WHERE t.owner = p.o AND t.epoch = p.e",
            &[&owners, &epochs],
        )?;
        let stale: Vec<i64> = (parcels.iter())
            .filter(|p| !taken.contains_key(&(p.owner.get() as i64, p.epoch as i64)))
            .map(|p| p.owner.get() as i64)
            .collect();
        let holders = holders_in(&mut tx, &stale, "")?;
        let out = (parcels.iter())
            .map(|p| {
                let (o, e) = (p.owner.get() as i64, p.epoch as i64);
                match taken.get(&(o, e)) {
                    Some(&epoch) => Accepted::Taken(epoch as u64),
                    None => Accepted::Stale(holders.get(&o).cloned()),
                }
            })
            .collect();
        effects(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn settle_all(
        &mut self,
        sent: &[(OwnerId, u64)],
        sender: &str,
    ) -> Result<Vec<Settled>, StoreError> {
        let mut tx = self.client().build_transaction().read_only(true).start()?;
        let owners: Vec<i64> = sent.iter().map(|(o, _)| o.get() as i64).collect();
        let waiting: HashSet<(i64, i64)> = tx
            .query(
                "SELECT owner, epoch FROM tickflow_outbox WHERE owner = ANY($1) AND sender = $2",
                &[&owners, &sender],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()?;
        let holders = holders_in(&mut tx, &owners, "")?;
        tx.commit()?;
        Ok((sent.iter())
            .map(|&(o, e)| {
                let key = (o.get() as i64, e as i64);
                settled(
                    waiting.contains(&key),
                    sender,
                    e,
                    holders.get(&key.0).cloned(),
                )
            })
            .collect())
    }
}

/// A send in one statement (one round trip; its own transaction outside one): the holder
/// locked and checked, the parcel put and the receiver notified only when the check passes.
fn send_one(c: &mut impl GenericClient, parcel: &Parcel) -> Result<(), StoreError> {
    check_parcel(parcel)?;
    let row = c.query_opt(
        "WITH h AS (SELECT node, epoch FROM tickflow_owners WHERE owner = $1::BIGINT FOR UPDATE), \
         ok AS (SELECT 1 FROM h WHERE node = $3::TEXT AND epoch = $2::BIGINT), \
         put AS (INSERT INTO tickflow_outbox \
             SELECT $1::BIGINT, $2::BIGINT, $3::TEXT, $4::TEXT, $5::BYTEA, $6::BIGINT FROM ok \
             ON CONFLICT (owner, epoch) DO NOTHING), \
         n AS (SELECT pg_notify($7::TEXT, $4::TEXT) FROM ok) \
         SELECT node, epoch, (SELECT count(*) FROM n) FROM h",
        &[
            &(parcel.owner.get() as i64),
            &(parcel.epoch as i64),
            &parcel.sender,
            &parcel.receiver,
            &parcel.bytes,
            &(wall_ns() as i64),
            &OUTBOX_CHANNEL,
        ],
    )?;
    let holder = row
        .map(|r| holder_of(parcel.owner, r.try_get(0)?, r.try_get(1)?))
        .transpose()?;
    match holds(&holder, &parcel.sender, parcel.epoch) {
        true => Ok(()),
        false => Err(not_held(parcel, holder)),
    }
}

/// The holders of `owners`, by owner.
fn holders_in(
    c: &mut impl GenericClient,
    owners: &[i64],
    lock: &str,
) -> Result<HashMap<i64, Holder>, StoreError> {
    if owners.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = c.query(
        &format!("SELECT owner, node, epoch FROM tickflow_owners WHERE owner = ANY($1) {lock}"),
        &[&owners],
    )?;
    (rows.iter())
        .map(|r| {
            let owner: i64 = r.try_get(0)?;
            Ok((
                owner,
                holder_of(OwnerId::new(owner as u64), r.try_get(1)?, r.try_get(2)?)?,
            ))
        })
        .collect()
}
