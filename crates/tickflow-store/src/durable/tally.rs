//! The node's row records the count and XOR of its timer rows' checksums, which a resume
//! checks the rows against (a row that vanished or appeared is found). Keeping it right needs
//! each row's checksum: [`Rows`] files them by key, and a commit's [`Tally`] works out what it
//! does to them before it is known to land.
//!
//! Cost: about 16 bytes per durable timer, and a hash lookup and a binary search per changed
//! row.

use rustc_hash::FxHashMap;
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::sum::Sum;

/// A node's timer rows as landed: each row's checksum by its key's hash, their count and
/// XOR. The rows a resume read are a sorted array (filled in read order and sorted once: a
/// hash table of a million keys cost a resume's reading thread a quarter of its time, in cache
/// misses); what commits changed since sits in a small table over it. About 16 bytes per
/// durable timer, and 40 per row changed since the resume.
#[derive(Default, Debug, Clone)]
pub(super) struct Rows {
    /// (key, checksum) of the rows read, sorted by key once [`seal`](Self::seal)ed.
    read: Vec<(u64, i64)>,
    /// A key's checksum since (`Some`), or its row's removal (`None`, kept only for a key in
    /// `read`).
    over: FxHashMap<u64, Option<i64>>,
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

    /// Files a row that was read; [`seal`](Self::seal) when all are.
    pub(super) fn push(&mut self, key: u64, sum: i64) {
        self.read.push((key, sum));
        self.xsum ^= sum as u64;
        self.count += 1;
    }

    /// Refuses rows that do not add up to what `node`'s row records (`row`): rows vanished or
    /// appeared.
    pub(super) fn check(
        &self,
        node: &str,
        row: &crate::backend::NodeRow,
    ) -> Result<(), StoreError> {
        if (self.count, self.xsum) == (row.rows, row.xsum) {
            return Ok(());
        }
        Err(StoreError::bad_row(
            "tickflow_timers",
            format!("of node {node:?}"),
            "(all rows)",
            format!(
                "are {} rows whose checksums do not add up to the {} the node's row records: \
                 rows vanished or appeared",
                self.count, row.rows
            ),
        ))
    }

    /// Sorts the rows read, so that they can be looked up.
    pub(super) fn seal(&mut self) {
        self.read.sort_unstable_by_key(|&(k, _)| k);
    }

    pub(super) fn reserve(&mut self, n: usize) {
        self.read.reserve(n.min(1 << 24));
    }

    /// The checksum of the row filed under `key`, if there is one.
    fn get(&self, key: u64) -> Option<i64> {
        match self.over.get(&key) {
            Some(&v) => v,
            None => self.in_read(key),
        }
    }

    fn in_read(&self, key: u64) -> Option<i64> {
        let i = self.read.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        Some(self.read[i].1)
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
            None => self.base.get(key),
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
            self.read.clear();
            self.over.clear();
        }
        for (key, sum) in landing.over {
            match sum {
                Some(_) => self.over.insert(key, sum),
                // A tombstone only where it hides a row read; elsewhere the key just goes,
                // so that rows set and removed since do not pile up.
                None if self.in_read(key).is_some() => self.over.insert(key, None),
                None => self.over.remove(&key),
            };
        }
        (self.count, self.xsum) = (landing.count, landing.xsum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count and XOR a set of (key, checksum) pairs should have.
    fn expect(rows: &[(u64, i64)]) -> (u64, u64) {
        let xsum = rows.iter().fold(0, |x, &(_, s)| x ^ s as u64);
        (rows.len() as u64, xsum)
    }

    #[test]
    fn commits_over_rows_read_keep_the_count_the_xor_and_each_checksum() {
        let mut rows = Rows::default();
        for k in [9u64, 3, 7, 1] {
            rows.push(k, k as i64 * 10);
        }
        rows.seal();
        assert_eq!(
            (rows.count, rows.xsum),
            expect(&[(9, 90), (3, 30), (7, 70), (1, 10)])
        );
        assert_eq!(rows.get(7), Some(70));
        assert_eq!(rows.get(4), None);

        // A changed row read, a removed row read, a new row, and a new row removed again.
        let mut t = Tally::new(&rows);
        t.set(7, Some(71));
        t.set(3, None);
        t.set(5, Some(50));
        t.set(6, Some(60));
        let landing = t.done();
        rows.absorb(landing);
        let mut t = Tally::new(&rows);
        t.set(6, None);
        rows.absorb(t.done());

        assert_eq!(
            (rows.count, rows.xsum),
            expect(&[(9, 90), (7, 71), (1, 10), (5, 50)])
        );
        assert_eq!(
            [1, 3, 5, 6, 7, 9].map(|k| rows.get(k)),
            [Some(10), None, Some(50), None, Some(71), Some(90)]
        );
        // The tombstone of a row read stays; that of a row set since does not.
        assert_eq!(rows.over.get(&3), Some(&None));
        assert!(!rows.over.contains_key(&6));
    }

    #[test]
    fn a_full_rewrite_forgets_the_rows_read() {
        let mut rows = Rows::default();
        rows.push(1, 10);
        rows.push(2, 20);
        rows.seal();
        let mut t = Tally::new(&rows);
        t.clear();
        t.set(2, Some(21));
        rows.absorb(t.done());
        assert_eq!((rows.count, rows.xsum), expect(&[(2, 21)]));
        assert_eq!([rows.get(1), rows.get(2)], [None, Some(21)]);
    }
}
