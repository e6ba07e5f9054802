//! [`Handovers`] on PostgreSQL: the owner registry and the outbox as statements, one round
//! trip where a sender polls or sends, a fixed number of statements over arrays for a batch.
//!
//! Every statement here goes with its parameter types (`query_typed`): the client then parses,
//! binds and runs it in one round trip, where an untyped statement costs two (the server is
//! asked for the types first). On loopback a round trip is a good part of a handover.

use std::collections::HashMap;

use postgres::types::Type;
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
    let row = c.query_typed_opt(
        &format!("SELECT node, epoch FROM tickflow_owners WHERE owner = $1 {lock}"),
        &[(&(owner.get() as i64), Type::INT8)],
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
        tx.execute_typed(
            "INSERT INTO tickflow_owners VALUES ($1, 0, $2) ON CONFLICT (owner) DO NOTHING",
            &[(&(owner.get() as i64), Type::INT8), (&node, Type::TEXT)],
        )?;
        Ok(holder_in(tx, owner, "")?.expect("registered in this transaction"))
    }

    fn send(&mut self, parcel: &Parcel) -> Result<(), StoreError> {
        send_one(self.client(), parcel, Flush::Later)
    }

    fn send_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<(), StoreError> {
        send_one(tx, parcel, Flush::AsTheCallerSays)
    }

    fn inbox(&mut self, node: &str, limit: usize) -> Result<Vec<Parcel>, StoreError> {
        let rows = self.client().query_typed(
            "SELECT owner, epoch, sender, receiver, bytes FROM tickflow_outbox \
             WHERE receiver = $1 ORDER BY sent, owner LIMIT $2",
            &[
                (&node, Type::TEXT),
                (&(limit.min(i64::MAX as usize) as i64), Type::INT8),
            ],
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
            tx.execute_typed(
                "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2",
                &[
                    (&(parcel.owner.get() as i64), Type::INT8),
                    (&(parcel.epoch as i64), Type::INT8),
                ],
            )?;
        } else {
            effects(&mut tx)?;
        }
        tx.commit()?;
        Ok(accepted)
    }

    fn accept_in(tx: &mut Self::Tx<'_>, parcel: &Parcel) -> Result<Accepted, StoreError> {
        let (owner, epoch) = (parcel.owner.get() as i64, parcel.epoch as i64);
        // The compare-and-set and the parcel's removal in one statement; the removal only
        // when the compare-and-set took the owner (a stale parcel is the caller's to remove).
        let taken = tx.query_typed_opt(
            "WITH t AS (UPDATE tickflow_owners SET node = $3, epoch = epoch + 1 \
                 WHERE owner = $1 AND epoch = $2 AND node = $4 RETURNING epoch), \
             d AS (DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2 \
                 AND EXISTS (SELECT 1 FROM t)) \
             SELECT epoch FROM t",
            &[
                (&owner, Type::INT8),
                (&epoch, Type::INT8),
                (&parcel.receiver, Type::TEXT),
                (&parcel.sender, Type::TEXT),
            ],
        )?;
        match taken {
            Some(row) => Ok(Accepted::Taken(row.try_get::<_, i64>(0)? as u64)),
            None => Ok(Accepted::Stale(holder_in(tx, parcel.owner, "")?)),
        }
    }

    fn refuse(&mut self, parcel: &Parcel) -> Result<bool, StoreError> {
        let gone = self.client().execute_typed(
            "DELETE FROM tickflow_outbox WHERE owner = $1 AND epoch = $2 AND receiver = $3",
            &[
                (&(parcel.owner.get() as i64), Type::INT8),
                (&(parcel.epoch as i64), Type::INT8),
                (&parcel.receiver, Type::TEXT),
            ],
        )?;
        Ok(gone > 0)
    }

    fn settle(&mut self, owner: OwnerId, sender: &str, epoch: u64) -> Result<Settled, StoreError> {
        // One statement, one snapshot, one round trip (a sender polls this).
        Ok(self
            .settle_all(&[(owner, epoch)], sender)?
            .pop()
            .expect("one answer per handover"))
    }

    // Each batch form is a fixed number of statements over arrays, whatever its size.
    fn send_all(&mut self, parcels: &[Parcel]) -> Result<(), StoreError> {
        parcels.iter().try_for_each(check_parcel)?;
        let mut tx = self.client().transaction()?;
        // Its own transaction: its commit need not wait for the disk (see `Flush::Later`).
        tx.batch_execute("SET LOCAL synchronous_commit = off")?;
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
        // One notification per receiver, in the same statement.
        tx.execute_typed(
            "WITH p AS (INSERT INTO tickflow_outbox SELECT o, e, s, r, b, $6 FROM \
                 UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BYTEA[]) \
                 AS p(o, e, s, r, b) ON CONFLICT (owner, epoch) DO NOTHING) \
             SELECT pg_notify($7, r) FROM (SELECT DISTINCT r FROM UNNEST($4::TEXT[]) AS q(r)) n",
            &[
                (&owners, Type::INT8_ARRAY),
                (&epochs, Type::INT8_ARRAY),
                (&senders, Type::TEXT_ARRAY),
                (&receivers, Type::TEXT_ARRAY),
                (&bytes, Type::BYTEA_ARRAY),
                (&(wall_ns() as i64), Type::INT8),
                (&OUTBOX_CHANNEL, Type::TEXT),
            ],
        )?;
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
        // Every listed parcel goes (taken or stale) and the registry moves where it matches:
        // one statement.
        let taken: HashMap<(i64, i64), i64> = tx
            .query_typed(
                "WITH d AS (DELETE FROM tickflow_outbox t \
                     USING UNNEST($1::BIGINT[], $2::BIGINT[]) AS p(o, e) \
                     WHERE t.owner = p.o AND t.epoch = p.e), \
                 u AS (UPDATE tickflow_owners o SET node = p.r, epoch = o.epoch + 1 \
                     FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[]) \
                     AS p(o, e, s, r) \
                     WHERE o.owner = p.o AND o.epoch = p.e AND o.node = p.s \
                     RETURNING o.owner, o.epoch) \
                 SELECT owner, epoch FROM u",
                &[
                    (&owners, Type::INT8_ARRAY),
                    (&epochs, Type::INT8_ARRAY),
                    (&senders, Type::TEXT_ARRAY),
                    (&receivers, Type::TEXT_ARRAY),
                ],
            )?
            .iter()
            .map(|r| Ok(((r.try_get(0)?, r.try_get::<_, i64>(1)? - 1), r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()?;
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
        // One statement, one snapshot, one round trip (a sender polls this).
        let owners: Vec<i64> = sent.iter().map(|(o, _)| o.get() as i64).collect();
        let epochs: Vec<i64> = sent.iter().map(|&(_, e)| e as i64).collect();
        let rows = self.client().query_typed(
            "SELECT EXISTS (SELECT 1 FROM tickflow_outbox t \
                 WHERE t.owner = p.o AND t.epoch = p.e AND t.sender = $3), w.node, w.epoch \
             FROM UNNEST($1::BIGINT[], $2::BIGINT[]) WITH ORDINALITY AS p(o, e, i) \
             LEFT JOIN tickflow_owners w ON w.owner = p.o ORDER BY p.i",
            &[
                (&owners, Type::INT8_ARRAY),
                (&epochs, Type::INT8_ARRAY),
                (&sender, Type::TEXT),
            ],
        )?;
        if rows.len() != sent.len() {
            return Err(StoreError::bad_row(
                "tickflow_owners",
                format!("{} handovers", sent.len()),
                "owner",
                format!("{} answers", rows.len()),
            ));
        }
        (sent.iter().zip(&rows))
            .map(|(&(owner, epoch), r)| {
                let (node, held): (Option<String>, Option<i64>) = (r.try_get(1)?, r.try_get(2)?);
                let holder = match (node, held) {
                    (Some(node), Some(e)) => Some(holder_of(owner, node, e)?),
                    _ => None,
                };
                Ok(settled(r.try_get(0)?, sender, epoch, holder))
            })
            .collect()
    }
}

/// When a send's commit reaches the disk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flush {
    /// A send on its own commits without waiting for the disk (`synchronous_commit = off`
    /// for its transaction alone): one disk flush per handover instead of two. Nothing can be
    /// lost by it: the parcel is a message, the registry is the truth. The receiver's
    /// acceptance waits for the disk, and the write-ahead log is flushed in order, so an
    /// acceptance that is stored has its parcel stored before it. A server crash before that
    /// flush loses the parcel and leaves the registry naming the sender:
    /// [`settle`](Handovers::settle) answers [`Settled::Kept`] and the sender keeps its owner,
    /// as for a refused parcel.
    Later,
    /// Inside the caller's transaction: its commit decides.
    AsTheCallerSays,
}

/// A send in one statement (one round trip; its own transaction outside one): the holder
/// locked and checked, the parcel put and the receiver notified only when the check passes.
fn send_one(c: &mut impl GenericClient, parcel: &Parcel, flush: Flush) -> Result<(), StoreError> {
    check_parcel(parcel)?;
    // `set_config(.., true)` lasts until this statement's own transaction ends, and its
    // commit reads it; the final SELECT names it so that it runs.
    let relax = match flush {
        Flush::Later => "set_config('synchronous_commit', 'off', true)",
        Flush::AsTheCallerSays => "''",
    };
    let row = c.query_typed_opt(
        &format!(
            "WITH r AS (SELECT {relax} AS v), \
             h AS (SELECT node, epoch FROM tickflow_owners WHERE owner = $1 FOR UPDATE), \
             ok AS (SELECT 1 FROM h WHERE node = $3 AND epoch = $2), \
             put AS (INSERT INTO tickflow_outbox SELECT $1, $2, $3, $4, $5, $6 FROM ok \
                 ON CONFLICT (owner, epoch) DO NOTHING), \
             n AS (SELECT pg_notify($7, $4) FROM ok) \
             SELECT node, epoch, (SELECT count(*) FROM n), (SELECT v FROM r) FROM h"
        ),
        &[
            (&(parcel.owner.get() as i64), Type::INT8),
            (&(parcel.epoch as i64), Type::INT8),
            (&parcel.sender, Type::TEXT),
            (&parcel.receiver, Type::TEXT),
            (&parcel.bytes, Type::BYTEA),
            (&(wall_ns() as i64), Type::INT8),
            (&OUTBOX_CHANNEL, Type::TEXT),
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
    let rows = c.query_typed(
        &format!("SELECT owner, node, epoch FROM tickflow_owners WHERE owner = ANY($1) {lock}"),
        &[(&owners, Type::INT8_ARRAY)],
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
