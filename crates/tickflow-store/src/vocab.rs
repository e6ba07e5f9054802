//! The plain data the store's parts share: a node's clocks, who holds an owner, a parcel.

use tickflow::OwnerId;

/// A node's clocks when it last committed, and the wall-clock time of that commit.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeClocks {
    /// Game clock (flicks).
    pub game: u64,
    /// Real clock (flicks).
    pub real: u64,
    /// Frame clock (frames).
    pub frames: u64,
    /// The frame number of the last frame committed.
    pub frame: u64,
    /// Wall-clock time of the commit, nanoseconds since the Unix epoch.
    pub wall_ns: u64,
}

impl NodeClocks {
    /// The raw clock readings in [`Domain`](tickflow::time::Domain) order.
    pub fn raw(&self) -> [u64; 3] {
        [self.game, self.real, self.frames]
    }
}

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
