//! The rows of the store's other tables — a node, a registry entry, a parcel — as plain data,
//! with their checksums and the checks that turn columns read back into trusted values.
//! (A timer's row is `row.rs`.)

use tickflow::OwnerId;

use crate::backend::{NodeRead, NodeRow, OwnerRead, ParcelRead};
use crate::error::StoreError;
use crate::sum::Sum;
use crate::vocab::{Holder, Parcel, MAX_PARCEL};

impl NodeRow {
    /// The checksum of a node's row (the lease is not covered: see [`NodeRead`]). The offline
    /// shift is covered when it is not 0, so that the rows of a schema-2 database (which had no
    /// shift) still check after its upgrade.
    pub fn sum_for(&self, node: &str) -> i64 {
        let c = &self.clocks;
        let sum = Sum::of("tickflow_nodes")
            .bytes(node.as_bytes())
            .u64(c.game)
            .u64(c.real)
            .u64(c.frames)
            .u64(c.frame)
            .u64(c.wall_ns)
            .u64(self.committed)
            .u64(self.rows)
            .u64(self.xsum);
        match self.shift {
            0 => sum.finish(),
            s => sum.bytes(b"shift").u64(s).finish(),
        }
    }
}

impl NodeRead {
    /// Checks a node's row read back: its checksum and its values.
    pub(crate) fn checked(self, node: &str) -> Result<NodeRead, StoreError> {
        let bad = |field, reason: &str| {
            StoreError::bad_row("tickflow_nodes", format!("{node:?}"), field, reason)
        };
        if self.sum != self.row.sum_for(node) {
            return Err(bad("sum", "does not match the row: damaged or edited"));
        }
        let c = &self.row.clocks;
        for (field, v) in [
            ("game", c.game),
            ("real", c.real),
            ("frames", c.frames),
            ("frame", c.frame),
            ("committed", self.row.committed),
        ] {
            if v >= i64::MAX as u64 {
                return Err(bad(field, "is at the end of time"));
            }
        }
        Ok(self)
    }
}

/// The checksum of a registry row.
/// The registry move of `owner` from `(from, epoch)` to `(to, epoch + 1)`: a handover's
/// acceptance, or a takeover's adoption.
pub(crate) fn moved<'a>(
    owner: tickflow::OwnerId,
    epoch: u64,
    from: &'a str,
    to: &'a str,
) -> crate::backend::OwnerSwap<'a> {
    let (owner, next) = (owner.get() as i64, epoch as i64 + 1);
    crate::backend::OwnerSwap {
        owner,
        from_epoch: epoch as i64,
        from_node: from,
        epoch: next,
        node: to,
        sum: owner_sum(owner, next, to),
    }
}

pub(crate) fn owner_sum(owner: i64, epoch: i64, node: &str) -> i64 {
    Sum::of("tickflow_owners")
        .i64(owner)
        .i64(epoch)
        .bytes(node.as_bytes())
        .finish()
}

/// A registry row for `owner` at `node` and `epoch`, with its checksum.
pub(crate) fn owner_row(owner: OwnerId, node: &str, epoch: u64) -> OwnerRead {
    let (owner, epoch) = (owner.get() as i64, epoch as i64);
    OwnerRead {
        owner,
        epoch,
        node: node.to_string(),
        sum: owner_sum(owner, epoch, node),
    }
}

impl OwnerRead {
    /// Checks a registry row read back and makes it a holder.
    pub(crate) fn holder(self) -> Result<(OwnerId, Holder), StoreError> {
        let bad = |field, reason: String| {
            StoreError::bad_row(
                "tickflow_owners",
                format!("owner {}", self.owner as u64),
                field,
                reason,
            )
        };
        if self.sum != owner_sum(self.owner, self.epoch, &self.node) {
            return Err(bad(
                "sum",
                "does not match the row: damaged or edited".into(),
            ));
        }
        if self.epoch < 0 || self.epoch == i64::MAX {
            return Err(bad("epoch", format!("is {}", self.epoch)));
        }
        Ok((
            OwnerId::new(self.owner as u64),
            Holder {
                node: self.node,
                epoch: self.epoch as u64,
            },
        ))
    }
}

/// The checksum of an outbox row.
pub(crate) fn parcel_sum(p: &ParcelRead) -> i64 {
    Sum::of("tickflow_outbox")
        .i64(p.owner)
        .i64(p.epoch)
        .bytes(p.sender.as_bytes())
        .bytes(p.receiver.as_bytes())
        .bytes(&p.bytes)
        .i64(p.sent)
        .finish()
}

impl Parcel {
    /// The outbox row this parcel is written as when sent at `sent_ns`, with its checksum: for
    /// tools and tests that put a parcel in the outbox as it is
    /// ([`Store::put_parcels_in`](crate::Store::put_parcels_in), which checks nothing).
    pub fn to_row(&self, sent_ns: u64) -> ParcelRead {
        parcel_row(self, sent_ns)
    }
}

/// `parcel` as the outbox row it is written as, sent at `sent_ns`, with its checksum.
pub(crate) fn parcel_row(parcel: &Parcel, sent_ns: u64) -> ParcelRead {
    let mut p = ParcelRead {
        owner: parcel.owner.get() as i64,
        epoch: parcel.epoch as i64,
        sender: parcel.sender.clone(),
        receiver: parcel.receiver.clone(),
        bytes: parcel.bytes.clone(),
        sent: sent_ns as i64,
        sum: 0,
    };
    p.sum = parcel_sum(&p);
    p
}

impl ParcelRead {
    /// Checks an outbox row read back and makes it a parcel.
    pub(crate) fn parcel(self) -> Result<Parcel, StoreError> {
        let key = format!("(owner {}, epoch {})", self.owner as u64, self.epoch);
        let bad = |field, reason: String| {
            StoreError::bad_row("tickflow_outbox", key.clone(), field, reason)
        };
        if self.bytes.len() > MAX_PARCEL {
            let len = self.bytes.len();
            return Err(bad("bytes", format!("is {len} bytes, over {MAX_PARCEL}")));
        }
        if self.sum != parcel_sum(&self) {
            return Err(bad(
                "sum",
                "does not match the row: damaged or edited".into(),
            ));
        }
        if self.epoch < 0 || self.epoch == i64::MAX {
            return Err(bad("epoch", format!("is {}", self.epoch)));
        }
        Ok(Parcel {
            owner: OwnerId::new(self.owner as u64),
            epoch: self.epoch as u64,
            sender: self.sender,
            receiver: self.receiver,
            bytes: self.bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::NodeClocks;

    #[test]
    fn rows_of_every_table_refuse_a_flipped_bit() {
        let row = NodeRow {
            clocks: NodeClocks {
                game: 5,
                real: 6,
                frames: 7,
                frame: 8,
                wall_ns: 9,
            },
            committed: 3,
            rows: 2,
            xsum: 77,
            shift: 0,
        };
        let lease = crate::backend::Lease {
            holder: 1,
            until_us: 0,
            host: String::new(),
            pid: 0,
        };
        let read = |row: NodeRow, sum| NodeRead {
            row,
            lease: lease.clone(),
            sum,
        };
        let sum = row.sum_for("n");
        assert!(read(row.clone(), sum).checked("n").is_ok());
        let mut damaged = row.clone();
        damaged.rows ^= 1 << 40;
        let e = read(damaged, sum).checked("n").unwrap_err().to_string();
        assert!(e.contains("tickflow_nodes") && e.contains("sum"), "{e}");
        let mut shifted = row.clone();
        shifted.shift = 1 << 20;
        assert!(
            read(shifted.clone(), sum).checked("n").is_err(),
            "shift covered"
        );
        let sum = shifted.sum_for("n");
        assert!(read(shifted, sum).checked("n").is_ok());

        let mut o = owner_row(OwnerId::new(9), "n", 4);
        assert!(o.clone().holder().is_ok());
        o.epoch ^= 2;
        assert!(o.holder().unwrap_err().to_string().contains("owner 9"));

        let parcel = Parcel {
            owner: OwnerId::new(9),
            epoch: 4,
            sender: "a".into(),
            receiver: "b".into(),
            bytes: vec![1, 2, 3],
        };
        let mut p = parcel_row(&parcel, 10);
        assert_eq!(p.clone().parcel().unwrap(), parcel);
        p.bytes[1] ^= 8;
        assert!(p
            .parcel()
            .unwrap_err()
            .to_string()
            .contains("(owner 9, epoch 4)"));
    }
}
