//! The node's row records the count and XOR of its timer rows' checksums, which a resume
//! checks the rows against (a row that vanished or appeared is found). Keeping it right needs
//! each row's checksum: [`Rows`] files them by key, and a commit's [`Tally`] works out what it
//! does to them before it is known to land.
//!
//! Cost: about 20 bytes per durable timer, and a hash lookup per changed row.

use rustc_hash::FxHashMap;
use tickflow::OwnerId;

use crate::sum::Sum;

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
pub(super) struct Tally<'a> {
    base: &'a Rows,
    /// Every row was deleted first (a full rewrite).
    cleared: bool,
    over: FxHashMap<u64, Option<i64>>,
    count: u64,
    xsum: u64,
}

impl<'a> Tally<'a> {
    pub(super) fn new(base: &'a Rows) -> Tally<'a> {
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

    pub(super) fn set(&mut self, key: u64, sum: Option<i64>) {
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

    pub(super) fn clear(&mut self) {
        self.cleared = true;
        self.over.clear();
        self.count = 0;
        self.xsum = 0;
    }

    pub(super) fn done(self) -> Landing {
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
pub(super) struct Landing {
    cleared: bool,
    over: FxHashMap<u64, Option<i64>>,
    count: u64,
    xsum: u64,
}

impl Landing {
    /// How many rows the node holds after the commit.
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// The XOR of their checksums.
    pub(super) fn xsum(&self) -> u64 {
        self.xsum
    }
}

impl Rows {
    /// Takes in what a commit that landed did.
    pub(super) fn absorb(&mut self, landing: Landing) {
        if landing.cleared {
            self.sums.clear();
        }
        for (key, sum) in landing.over {
            match sum {
                Some(s) => self.sums.insert(key, s),
                None => self.sums.remove(&key),
            };
        }
        (self.count, self.xsum) = (landing.count, landing.xsum);
    }
}
