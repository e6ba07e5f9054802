//! Sorting a tick's due calls by `(due, seq)` as packed integers.
//!
//! A busy tick hands out a few hundred to a few thousand calls in no order. Sorted by
//! comparison of their `(due, seq)` keys, a fifth of such a tick went to the sort (W3, 1e5
//! looping timers: about 600 calls a frame; each comparison an unpredictable branch over
//! 32-byte records). Within one tick the due times lie in a narrow range and the set-order
//! numbers in a known one, so `(due - min, seq, position)` packs into one `u64` for almost every
//! tick: the packed integers are sorted (the standard library's sort of primitive integers is
//! branch-free where it matters) and the calls gathered in their order into the run. That
//! measured a fifth faster for the whole tick than the comparison sort, and faster than a radix
//! sort of the same keys (a tick's keys span about 40 bits: six passes). A tick whose keys do
//! not fit is sorted by comparison, as is a small one.

/// Below this many calls the comparison sort is as fast, and packing costs a pass.
const PACK_MIN: usize = 32;

/// Sorts `items` by `key` (`(due, seq)`, ascending) into `out` (emptied first; `packed` is the
/// sort's scratch, kept by the caller between ticks so that sorting allocates nothing once it
/// has grown). The result is the comparison sort's whenever `(due, seq)` is unique, as it is
/// among a clock's due calls.
pub(super) fn sort_by_due<T: Copy>(
    items: &[T],
    out: &mut Vec<T>,
    packed: &mut Vec<u64>,
    key: impl Fn(&T) -> (u64, u32),
) {
    out.clear();
    let Some((min, seq_bits, pos_bits)) = packing(items, &key) else {
        out.extend_from_slice(items);
        out.sort_unstable_by_key(key);
        return;
    };
    packed.clear();
    packed.extend(items.iter().enumerate().map(|(i, it)| {
        let (due, seq) = key(it);
        // The three fields fit their bits (checked above): no shift loses any.
        ((((due - min) << seq_bits) | u64::from(seq)) << pos_bits) | i as u64
    }));
    packed.sort_unstable();
    let mask = (1u64 << pos_bits) - 1;
    out.extend(packed.iter().map(|&k| items[(k & mask) as usize]));
}

/// How `items`' keys pack: the smallest due time and the bits of the set-order number and of
/// the position; `None` when the batch is small or its keys need more than 64 bits.
fn packing<T>(items: &[T], key: &impl Fn(&T) -> (u64, u32)) -> Option<(u64, u32, u32)> {
    if items.len() < PACK_MIN {
        return None;
    }
    let (mut min, mut max, mut seqs) = (u64::MAX, 0u64, 0u32);
    for it in items {
        let (due, seq) = key(it);
        min = min.min(due);
        max = max.max(due);
        seqs |= seq;
    }
    let seq_bits = u32::BITS - seqs.leading_zeros();
    let pos_bits = usize::BITS - (items.len() - 1).leading_zeros();
    let due_bits = u64::BITS - (max - min).leading_zeros();
    (seq_bits + pos_bits + due_bits <= u64::BITS).then_some((min, seq_bits, pos_bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(items: Vec<(u64, u32)>) {
        let mut want = items.clone();
        want.sort_unstable();
        let mut got = vec![(0, 0)]; // emptied first
        sort_by_due(&items, &mut got, &mut Vec::new(), |&x| x);
        assert_eq!(got, want);
    }

    #[test]
    fn sorts_like_a_comparison_sort() {
        let mut rng = crate::test_rng::Rng(0x9e37_79b9_7f4a_7c15);
        for n in [0, 1, 5, 31, 32, 33, 64, 300, 2_000] {
            // Narrow due ranges with many ties (a busy tick), and wide ones.
            for range in [1u64, 17, 1 << 24, 1 << 40] {
                let items = (0..n)
                    .map(|i| (1_000 + rng.below(range), i as u32 * 7))
                    .collect();
                check(items);
            }
        }
    }

    #[test]
    fn keys_too_wide_to_pack_are_sorted_by_comparison() {
        let items = (0..200u32)
            .map(|i| (u64::from(i % 3) << 50, u32::MAX - i))
            .collect();
        check(items);
        let items = (0..200u32).map(|i| (u64::MAX - u64::from(i), i)).collect();
        check(items);
    }

    #[test]
    fn keys_that_fill_all_64_bits_still_sort() {
        // 8 position bits (200 calls), 24 set-order bits and 32 due bits: exactly 64.
        let items: Vec<(u64, u32)> = (0..200u32)
            .map(|i| (u64::from(i.wrapping_mul(2_654_435_761)), (1 << 23) + i))
            .collect();
        let (_, seq_bits, pos_bits) = packing(&items, &|&x| x).expect("packs");
        assert_eq!((seq_bits, pos_bits), (24, 8));
        check(items);
    }
}
