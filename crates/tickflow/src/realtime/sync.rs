//! The synchronization primitives of the real-time service, in one place so that
//! `RUSTFLAGS="--cfg tickflow_loom"` swaps them for loom's model-checked ones (see
//! `tests/loom_realtime.rs`). A cfg of our own, not `loom`, so that dependencies keep their
//! normal code.

#[cfg(not(tickflow_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
#[cfg(not(tickflow_loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};

#[cfg(tickflow_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU8, Ordering};
#[cfg(tickflow_loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Locks, ignoring poisoning: a panicking callback never holds these locks (callbacks run
/// outside them, inside `catch_unwind`), so a poisoned lock only means a panic elsewhere in
/// this module, after which the data is still consistent.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}
