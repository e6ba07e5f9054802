//! [`Lend`]: the one piece of unsafe code in tickflow.
//!
//! A task's future is `'static`, but [`TaskCx::with`](super::TaskCx::with) must hand it the
//! `&mut C` that the scheduler borrows only for the length of a frame. No safe construct can
//! carry a borrow with a short lifetime into a `'static` future (scoped thread-locals need a
//! `'static` type; moving `C` out would need `C: Default`), so the executor *lends* it: while it
//! polls a task, a `Lend<C>` holds a raw pointer to the context, and `with` turns it back into a
//! `&mut C` for the length of one closure call.
//!
//! Aliasing is ruled out by construction:
//! - [`lend`](Lend::lend) takes `&mut T` for its whole call, so nothing else can reach the value
//!   while the pointer is stored, and it restores the previous state on return or unwind;
//! - [`with`](Lend::with) *takes* the pointer out of the cell for the length of the closure, so
//!   a nested `with` (or one from inside a `until` condition) finds nothing and returns `None`
//!   instead of making a second `&mut`;
//! - the cell is `!Send` and `!Sync` (a `Cell` of a `NonNull`), so no other thread sees it.
//!
//! Tested below and by the task integration tests. CI runs them under valgrind
//! (`bash .ci/valgrind`); miri needs a nightly toolchain, which CI does not have, but where one
//! is installed `cargo +nightly miri test -p tickflow --lib latent::lend --test task_basics
//! --test task_cancel` passes.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::fmt;
use std::ptr::NonNull;

/// A slot through which code called by the lender can borrow a `&mut T` for a moment.
pub(crate) struct Lend<T> {
    ptr: Cell<Option<NonNull<T>>>,
}

/// Puts the previous pointer back when a `lend` or `with` scope ends, also on unwind.
struct Restore<'a, T> {
    cell: &'a Cell<Option<NonNull<T>>>,
    prev: Option<NonNull<T>>,
}

impl<T> Drop for Restore<'_, T> {
    fn drop(&mut self) {
        self.cell.set(self.prev);
    }
}

impl<T> Lend<T> {
    pub(crate) const fn new() -> Self {
        Lend {
            ptr: Cell::new(None),
        }
    }

    /// Makes `value` reachable through [`with`](Self::with) while `f` runs.
    pub(crate) fn lend<R>(&self, value: &mut T, f: impl FnOnce() -> R) -> R {
        let prev = self.ptr.replace(Some(NonNull::from(value)));
        let _restore = Restore {
            cell: &self.ptr,
            prev,
        };
        f()
    }

    /// Calls `f` with the lent value; `None` when nothing is lent (outside a `lend`, or inside
    /// another `with` of the same slot).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let ptr = self.ptr.take()?;
        let _restore = Restore {
            cell: &self.ptr,
            prev: Some(ptr),
        };
        // SAFETY: `ptr` was made by `lend` from a `&mut T` that `lend` still holds (we are
        // inside its `f`: the pointer is cleared when `lend` returns or unwinds), so it is
        // valid and aligned, and nothing else uses that `&mut T` meanwhile. Taking the pointer
        // out of the cell means no second `with` can make another `&mut T` until this one
        // ends: the reference below is the only one, and it does not outlive `f`.
        let value = unsafe { &mut *ptr.as_ptr() };
        Some(f(value))
    }

    /// `true` while a value is lent and not taken by a `with`.
    pub(crate) fn is_lent(&self) -> bool {
        let p = self.ptr.get();
        p.is_some()
    }
}

impl<T> fmt::Debug for Lend<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lend")
            .field("lent", &self.is_lent())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::{self, AssertUnwindSafe};

    #[test]
    fn with_reaches_the_lent_value_only_inside_lend() {
        let slot = Lend::<Vec<u32>>::new();
        assert_eq!(slot.with(|v| v.len()), None);
        let mut v = vec![1];
        let n = slot.lend(&mut v, || {
            slot.with(|v| v.push(2)).unwrap();
            slot.with(|v| v.len()).unwrap()
        });
        assert_eq!(n, 2);
        assert_eq!(v, [1, 2]);
        assert_eq!(slot.with(|v| v.len()), None, "cleared after lend");
    }

    #[test]
    fn nested_with_finds_nothing() {
        let slot = Lend::<String>::new();
        let mut s = String::from("a");
        slot.lend(&mut s, || {
            slot.with(|s| {
                s.push('b');
                assert!(slot.with(|_| ()).is_none(), "no second &mut");
                assert!(!slot.is_lent());
            })
            .unwrap();
            assert!(slot.is_lent(), "given back after with");
        });
        assert_eq!(s, "ab");
    }

    #[test]
    fn nested_lend_restores_the_outer_value() {
        let slot = Lend::<u32>::new();
        let (mut a, mut b) = (1, 10);
        slot.lend(&mut a, || {
            slot.with(|a| {
                // A lend inside a with (another scheduler, say) gets its own value.
                slot.lend(&mut b, || slot.with(|b| *b += 1).unwrap());
                *a += 1;
            })
            .unwrap();
            slot.with(|a| *a += 1).unwrap();
        });
        assert_eq!((a, b), (3, 11));
    }

    #[test]
    fn unwinding_restores_the_slot() {
        let slot = Lend::<u32>::new();
        let mut a = 1;
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            slot.lend(&mut a, || {
                slot.with(|_| panic!("boom")).unwrap();
            })
        }));
        assert!(r.is_err());
        assert!(!slot.is_lent());
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            slot.lend(&mut a, || {
                let _ = panic::catch_unwind(AssertUnwindSafe(|| slot.with(|_| panic!("inner"))));
                assert!(slot.is_lent(), "with gave the pointer back while unwinding");
                slot.with(|a| *a = 5).unwrap();
            })
        }));
        assert!(r.is_ok());
        assert_eq!(a, 5);
    }
}
