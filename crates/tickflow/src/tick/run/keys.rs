//! Sorting a frame's due functions: `u64` keys, rank in the high half, ordered by a radix sort
//! on the bits of the rank that differ.
//!
//! The due functions come out of the calendar in no useful order, and a comparison sort of
//! random keys mispredicts about half of its comparisons: `sort_unstable` took about 5.5 ns
//! per key at 85 keys. A least-significant-digit radix sort makes no data-dependent branch.
//! A frame sorts by the position bits only (each group's functions go to a list of their own),
//! and its due functions share the high bits of their positions, so a typical frame needs two
//! narrow passes. The low half of a key (a slot) never decides the order: ranks are unique,
//! except for a stale duplicate of a function, which shares its slot too.

/// Below this many keys `sort_unstable` is as fast and needs no scratch.
const SMALL: usize = 32;

/// Sorts `keys` by the bits `mask` keeps of their high 32 bits (keys equal there in any
/// order); `scratch` is reused. The passes cover just the span of bits in which some keys
/// differ, in as few passes of at most 8 bits as it needs, each as narrow as it can be: a
/// frame's due functions differ in the low 10–12 bits of their positions, two passes of 5 or
/// 6 bits, counting into 32 or 64 buckets instead of 256.
pub(super) fn sort_by_rank(keys: &mut Vec<u64>, scratch: &mut Vec<u64>, mask: u32) {
    if keys.len() <= SMALL {
        keys.sort_unstable_by_key(|&k| (k >> 32) as u32 & mask);
        return;
    }
    // The bits in which some ranks differ: the others need no pass.
    let (mut all, mut any) = (u32::MAX, 0u32);
    for &k in keys.iter() {
        let rank = (k >> 32) as u32;
        all &= rank;
        any |= rank;
    }
    let differ = (all ^ any) & mask;
    if differ == 0 {
        return;
    }
    let (lo, hi) = (differ.trailing_zeros(), 32 - differ.leading_zeros());
    let passes = (hi - lo).div_ceil(8);
    let width = (hi - lo).div_ceil(passes);
    scratch.clear();
    scratch.resize(keys.len(), 0);
    let mut count = [0u32; 256];
    for pass in 0..passes {
        let shift = 32 + lo + pass * width;
        // The last pass may reach past `hi`: those bits are equal in every key.
        let digit = (1u64 << width) - 1;
        let count = &mut count[..1 << width];
        count.fill(0);
        for &k in keys.iter() {
            count[((k >> shift) & digit) as usize] += 1;
        }
        let mut at = 0;
        for c in count.iter_mut() {
            (*c, at) = (at, at + *c);
        }
        for &k in keys.iter() {
            let d = ((k >> shift) & digit) as usize;
            scratch[count[d] as usize] = k;
            count[d] += 1;
        }
        std::mem::swap(keys, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random ranks in ranges that need one to four passes, with duplicates, against
    /// `sort_by_key` on the rank.
    #[test]
    fn sorts_like_a_comparison_sort() {
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        let mut rand = move || rng.next();
        let mut scratch = Vec::new();
        for round in 0..400 {
            let n = (rand() % 600) as usize;
            let (base, span) = match round % 4 {
                0 => (3u64 << 28, 1u64 << 8),
                1 => (0, 10_000),
                2 => (5 << 28, 1 << 24),
                _ => (0, 1 << 32),
            };
            let mut keys: Vec<u64> = (0..n)
                .map(|i| {
                    let rank = (base + rand() % span).min(u32::MAX as u64);
                    // A duplicate now and then, as a stale queue entry makes.
                    let rank = if i % 17 == 3 { base } else { rank };
                    rank << 32 | (rand() & 0xffff_ffff)
                })
                .collect();
            // The whole rank, and the position bits only (as a frame sorts).
            let mask = if round % 3 == 0 {
                (1 << 28) - 1
            } else {
                u32::MAX
            };
            let mut want = keys.clone();
            want.sort_by_key(|k| (k >> 32) as u32 & mask);
            sort_by_rank(&mut keys, &mut scratch, mask);
            let ranks = |v: &[u64]| {
                v.iter()
                    .map(|k| (k >> 32) as u32 & mask)
                    .collect::<Vec<_>>()
            };
            assert_eq!(ranks(&keys), ranks(&want), "round {round}");
            let mut got_all = keys.clone();
            let mut want_all = want.clone();
            got_all.sort_unstable();
            want_all.sort_unstable();
            assert_eq!(got_all, want_all, "the same keys, round {round}");
        }
    }
}
