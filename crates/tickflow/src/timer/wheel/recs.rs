//! A wheel slot's records, stored in blocks so that a big slot never copies them to grow.
//!
//! A level-5 slot can gather a third of a million timers while the clock approaches it. In one
//! vector, each growth copied everything gathered so far: at 0.4–0.7 million records that was a
//! 1.3–2.1 ms stall in whatever frame did the push (measured in `prof w3` after the W1 and W2
//! workloads had run in the same process, when the allocator no longer moved big buffers by
//! remapping them). Here the first block grows like a vector up to [`BLOCK`] records, and every
//! later block is allocated at [`BLOCK`] and never grows, so a push copies at most one block.
//!
//! Ground rules:
//!
//! - Every block but the one `len` ends in is full, and the first block holds at most [`BLOCK`]
//!   records, so record `i` is in block `i / BLOCK` at `i % BLOCK` (block 0 is `first`, block
//!   `k` is `more[k - 1]`).
//! - `clear` keeps every block's buffer: an emptied slot's blocks serve the next slot that
//!   fills (see `Level::give_back` in `level.rs`).

use crate::timer::slot::PREFETCH_AHEAD;

/// A waiting timer: its index and the low 32 bits of its due time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Rec {
    pub(super) idx: u32,
    pub(super) due_lo: u32,
}

impl Rec {
    /// The whole due time of a record of a level-0..=5 slot that starts at `start`.
    #[inline]
    pub(super) fn blind_due(self, start: u64) -> u64 {
        (start & !u64::from(u32::MAX)) | u64::from(self.due_lo)
    }
}

/// Records a slot's first buffer holds. With few timers a slot gathers a couple of dozen
/// records, and growing from 4 took four allocations to get there (W1 at 1e4 made about 340
/// a run, 7 % of its instructions). 19 is a step of the growth below (4, 10, 19, 32, ...), so a
/// slot that grows past it ends at the same capacity as before: at 1e6 timers the bytes per
/// timer stay the same (a first buffer of 16 shifted every later step and moved W4 after churn
/// from 1.09× to 1.11×).
const FIRST: usize = 19;

/// log2 of the block size. Small under test, so that unit and model tests cross blocks.
const SHIFT: u32 = if cfg!(test) { 6 } else { 14 };
/// Records per block (16,384: 128 KiB).
pub(super) const BLOCK: usize = 1 << SHIFT;
const MASK: usize = BLOCK - 1;

#[derive(Debug, Default)]
pub(super) struct Recs {
    /// Block 0, held inline: most slots never need a second block, nor an allocation for a
    /// list of blocks (one more `malloc` per slot filled cost 20 % of W1 at 1e4 timers).
    first: Vec<Rec>,
    /// Blocks 1 and up, each of capacity `BLOCK`.
    more: Vec<Vec<Rec>>,
    len: usize,
}

impl Recs {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether no buffer is held at all.
    pub(super) fn is_unallocated(&self) -> bool {
        self.first.capacity() == 0 && self.more.is_empty()
    }

    fn block_mut(&mut self, k: usize) -> Option<&mut Vec<Rec>> {
        match k {
            0 => Some(&mut self.first),
            _ => self.more.get_mut(k - 1),
        }
    }

    /// Appends a record; a block it needs comes from `pool` (a level's free blocks) when
    /// there is one.
    #[inline]
    pub(super) fn push(&mut self, rec: Rec, pool: &mut Vec<Vec<Rec>>) {
        // The block `len` falls in takes the push, unless it is the first block at its
        // capacity or a block not yet allocated (`push_slow`): a push into any block takes the
        // fast path, however many records the slot holds.
        let k = self.len >> SHIFT;
        let tail = match k {
            0 if self.first.len() < self.first.capacity() => Some(&mut self.first),
            0 => None,
            _ => self.more.get_mut(k - 1),
        };
        match tail {
            Some(b) => {
                b.push(rec);
                self.len += 1;
            }
            None => self.push_slow(rec, pool),
        }
    }

    fn push_slow(&mut self, rec: Rec, pool: &mut Vec<Vec<Rec>>) {
        let k = self.len >> SHIFT;
        if k == 0 {
            // Only the first block grows, by half (at a million timers the slack is bytes per
            // timer), and never past one block.
            let more = match self.first.len() {
                0 => FIRST,
                len => len / 2 + 4,
            };
            let more = more.min(BLOCK - self.first.len());
            self.first.reserve_exact(more);
        } else if k > self.more.len() {
            let block = pool.pop().unwrap_or_else(|| Vec::with_capacity(BLOCK));
            self.more.push(block);
        }
        self.block_mut(k).expect("made above").push(rec);
        self.len += 1;
    }

    #[cfg(test)]
    fn get(&self, i: usize) -> Rec {
        debug_assert!(i < self.len);
        match i >> SHIFT {
            0 => self.first[i],
            k => self.more[k - 1][i & MASK],
        }
    }

    /// The records in order, a block at a time.
    pub(super) fn blocks(&self) -> impl Iterator<Item = &[Rec]> + '_ {
        std::iter::once(self.first.as_slice()).chain(self.more.iter().map(Vec::as_slice))
    }

    /// Shows `f` the records in order, a block at a time: `blocks` without an iterator to
    /// set up, which cost more than the one or two records of a small slot.
    #[inline]
    pub(super) fn each_block(&self, mut f: impl FnMut(&[Rec])) {
        f(&self.first);
        for block in &self.more {
            f(block);
        }
    }

    /// The records `start..end` in order, a block at a time.
    pub(super) fn range(&self, start: usize, end: usize) -> impl Iterator<Item = &[Rec]> + '_ {
        debug_assert!(start <= end && end <= self.len);
        self.blocks().enumerate().filter_map(move |(k, b)| {
            let base = k << SHIFT;
            let (from, to) = (start.max(base), end.min(base + b.len()));
            (from < to).then(|| &b[from - base..to - base])
        })
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = Rec> + '_ {
        self.blocks().flatten().copied()
    }

    /// Keeps only the records `keep` accepts, in order, and frees blocks no longer needed.
    /// `ahead` is told of each record `PREFETCH_AHEAD` records before `keep` is asked about
    /// it, so that what `keep` reads can be fetched meanwhile.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(Rec) -> bool, ahead: impl Fn(Rec)) {
        let mut kept = 0;
        for k in 0..=self.more.len() {
            let block = self.block_mut(k).expect("k <= more.len()");
            let n = retain_in(block, &mut keep, &ahead);
            self.close_gap(k, n, kept);
            kept += n;
        }
        self.truncate(kept);
        if self.more.is_empty() && self.first.capacity() > 4 * self.first.len() {
            self.first.shrink_to(self.first.len() * 2);
        }
    }

    /// Moves the first `n` records of block `k` to position `to` (`to <= k * BLOCK`), which
    /// spans at most two blocks: an earlier one, then this one.
    fn close_gap(&mut self, k: usize, n: usize, to: usize) {
        if to == k << SHIFT {
            return; // no gap: already in place
        }
        let mut done = 0;
        while done < n {
            let (tk, ti) = ((to + done) >> SHIFT, (to + done) & MASK);
            let len = (n - done).min(BLOCK - ti);
            if tk == k {
                // The rest moves down within this block.
                self.more[k - 1].copy_within(done..n, ti);
                return;
            }
            // Block `tk` is before block `k`, so it is full and has room at `ti..ti + len`.
            let (dst, src) = match tk {
                0 => (&mut self.first, &self.more[k - 1]),
                _ => {
                    let (lo, hi) = self.more.split_at_mut(k - 1);
                    (&mut lo[tk - 1], &hi[0])
                }
            };
            dst[ti..ti + len].copy_from_slice(&src[done..done + len]);
            done += len;
        }
    }

    fn truncate(&mut self, n: usize) {
        let (full, rest) = (n >> SHIFT, n & MASK);
        let blocks = full + usize::from(rest > 0);
        self.more.truncate(blocks.saturating_sub(1));
        if let Some(b) = self.block_mut(full) {
            b.truncate(rest);
        }
        self.len = n;
    }

    /// Empties it, keeping every block's buffer.
    pub(super) fn clear(&mut self) {
        self.first.clear();
        for b in &mut self.more {
            b.clear();
        }
        self.len = 0;
    }

    /// Empties it into `pool`: every whole block, cleared (the first too, when it grew to a
    /// whole block). Freeing them instead returned megabytes to the system in the frame that
    /// entered a level-5 slot (each 128 KiB block is its own mapping): a fifth of that frame.
    pub(super) fn release(self, pool: &mut Vec<Vec<Rec>>) {
        let Recs { first, more, .. } = self;
        let whole = (first.capacity() == BLOCK).then_some(first);
        pool.extend(whole.into_iter().chain(more).map(|mut b| {
            b.clear();
            b
        }));
    }

    /// Makes room for `n` more records (a restore fills a slot at once).
    pub(super) fn reserve(&mut self, n: usize) {
        let want = self.len + n;
        let first_want = want.min(BLOCK);
        if self.first.capacity() < first_want {
            self.first.reserve_exact(first_want - self.first.len());
        }
        while 1 + self.more.len() < want.div_ceil(BLOCK) {
            self.more.push(Vec::with_capacity(BLOCK));
        }
    }

    /// Records the buffers can hold.
    pub(super) fn capacity(&self) -> usize {
        self.first.capacity() + self.more.iter().map(Vec::capacity).sum::<usize>()
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<Rec>()
            + self.more.capacity() * std::mem::size_of::<Vec<Rec>>()
    }
}

/// Keeps the records of `block` that `keep` accepts, in order, at its front; returns how many.
fn retain_in(block: &mut [Rec], keep: &mut impl FnMut(Rec) -> bool, ahead: &impl Fn(Rec)) -> usize {
    let mut kept = 0;
    for i in 0..block.len() {
        if let Some(&next) = block.get(i + PREFETCH_AHEAD) {
            ahead(next);
        }
        let rec = block[i];
        // Written whether kept or not, and counted without a branch: half the records of a
        // compacted slot are stale, and a branch on each would mispredict half the time and
        // throw away the entry loads the CPU had started for the records after it.
        block[kept] = rec;
        kept += usize::from(keep(rec));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u32) -> Rec {
        Rec { idx: i, due_lo: !i }
    }

    /// Random pushes, retains, clears, releases and reserves across block edges, against a
    /// `Vec`; released blocks come back empty, whole, and are used again.
    #[test]
    fn blocks_behave_like_one_vector() {
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut rnd = move |n: u64| rng.below(n);
        let (mut r, mut v) = (Recs::default(), Vec::new());
        let mut pool = Vec::new();
        let mut reused = 0;
        let mut next = 0u32;
        for _ in 0..3_000 {
            match rnd(10) {
                0..=5 => {
                    for _ in 0..rnd(3 * BLOCK as u64) {
                        reused += usize::from(r.len() & MASK == 0 && !pool.is_empty());
                        r.push(rec(next), &mut pool);
                        v.push(rec(next));
                        next += 1;
                    }
                }
                6 | 7 => {
                    let m = 1 + rnd(4) as u32;
                    r.retain(|x| x.idx % m != 0, |_| {});
                    v.retain(|x| x.idx % m != 0);
                }
                8 if next % 2 == 0 => {
                    r.clear();
                    v.clear();
                }
                8 => {
                    std::mem::take(&mut r).release(&mut pool);
                    v.clear();
                    assert!(pool.iter().all(|b| b.is_empty() && b.capacity() == BLOCK));
                }
                _ => r.reserve(rnd(3 * BLOCK as u64) as usize),
            }
            assert_eq!(r.len(), v.len());
            assert!(r.iter().eq(v.iter().copied()));
            if !v.is_empty() {
                let i = rnd(v.len() as u64) as usize;
                assert_eq!(r.get(i), v[i]);
                let j = i + rnd((v.len() - i) as u64 + 1) as usize;
                let part: Vec<Rec> = r.range(i, j).flatten().copied().collect();
                assert_eq!(part, v[i..j]);
            }
            assert!(r.more.iter().all(|b| b.capacity() == BLOCK));
            assert!(r.first.len() <= BLOCK);
        }
        assert!(reused > 0, "released blocks were pushed into again");
    }
}
