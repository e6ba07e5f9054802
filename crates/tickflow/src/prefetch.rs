//! A hint that asks the processor to bring a value's cache line in ahead of its use.
//!
//! Why this module has unsafe code: a tick of 1e6 looping timers makes about 12,000 calls a
//! frame, and every call's timer entry is a cache miss, met when the wheel hands the record
//! out and again when the call is made; both places know the next records in advance. A
//! plain read of an entry issued calls ahead still holds the processor back (a load cannot
//! retire before its data arrives, and the reorder window is about two calls deep): on W3 it
//! took 3 % off the frame. The prefetch instruction retires at once: a quarter off (1.435 to
//! 1.054 ms; BENCHMARKS.md, "W3's worst frame, and prefetching the calls to come"). Safe Rust
//! cannot issue it: `core::arch`'s intrinsic is an `unsafe fn`, with nothing to uphold beyond
//! the target having the instruction.
//!
//! The other places that know what they will read next ask for it here too: a wheel slot's
//! compaction (each record's entry), a frame's due interval functions (their cooldown records
//! at the frame's check, their check records and callbacks as the lanes run) and the
//! real-time service's pass (each due timer's shared state, ahead of the reference its call
//! takes). BENCHMARKS.md, the eighth and thirteenth sessions' sections.

#![allow(unsafe_code)]

/// Starts loading the cache line that holds `value`, and returns at once. It changes nothing
/// the program can observe; on targets other than `x86_64` it does nothing.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is a hint: it never faults, whatever the address, and reads
    // nothing the program sees (here the address is a live reference besides). It needs SSE,
    // which every `x86_64` target has.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_nothing() {
        let v: Vec<u64> = (0..1024).collect();
        for x in &v {
            prefetch(x);
        }
        prefetch(&());
        assert_eq!(v.iter().sum::<u64>(), 1023 * 1024 / 2);
    }
}
