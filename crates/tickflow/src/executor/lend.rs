//! One of tickflow's two modules of unsafe code (the other is `timer/callback.rs`): lending
//! the context to a task, and the executor's activation.
//!
//! **[`Lend`].** A task's future is `'static`, but [`TaskCx::with`](super::TaskCx::with) must
//! hand it the `&mut C` that the scheduler borrows only for the length of a frame. No safe
//! construct can carry a borrow with a short lifetime into a `'static` future (scoped
//! thread-locals need a `'static` type; moving `C` out would need `C: Default`), so the executor
//! *lends* it: while it polls a task, a `Lend<C>` holds a raw pointer to the context, and `with`
//! turns it back into a `&mut C` for the length of one closure call. Aliasing is ruled out by
//! construction:
//! - [`lend`](Lend::lend) takes `&mut T` for its whole call, so nothing else can reach the value
//!   while the pointer is stored, and it restores the previous state on return or unwind;
//! - [`with`](Lend::with) *takes* the pointer out of the cell for the length of the closure, so
//!   a nested `with` (or one from inside a `until` condition) finds nothing and returns `None`
//!   instead of making a second `&mut`;
//! - the cell is only reached from the thread the executor runs on (below).
//!
//! **[`Pinned`] and the activation.** Task futures are `Send` (a scheduler moves between
//! threads), so what they hold cannot be an `Rc` to the executor. They hold only the
//! executor's id, and reach the executor through a thread-local *activation* that the
//! scheduler sets while it runs on this thread ([`activate`]; tokio reaches its runtime the
//! same way). The executor lives in a [`Pinned`] heap cell that is only ever reached through
//! shared references (its state uses `Cell`/`RefCell`), so the pointer stored in the
//! activation stays valid while the activation's guard lives, whatever `&mut` borrows of the
//! scheduler struct come and go meanwhile. A lookup ([`with_active`]) succeeds only for the id
//! of an executor that is active *on this thread*, and only for the type it was activated
//! with: a future or `TaskCx` that travelled to another thread finds nothing there, and a
//! caller that names another executor type finds nothing either (the activation keeps the
//! type's id). This file imports nothing of the executor's: it defines the one trait
//! ([`Control`]) that it stores activations as.
//!
//! Tested below and by the task integration tests. CI runs them under valgrind
//! (`bash .ci/valgrind`); miri needs a nightly toolchain with the miri component, which CI
//! does not have.
#![allow(unsafe_code)]

use std::any::TypeId;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// What an active executor offers to callers that do not know its context type: cancelling
/// one of its tasks (for [`TaskRef`](super::TaskRef)).
pub(crate) trait Control {
    fn cancel(&self, index: u32, gen: u32) -> bool;
}

/// A slot through which code called by the lender can borrow a `&mut T` for a moment.
pub(crate) struct Lend<T> {
    ptr: Cell<Option<NonNull<T>>>,
}

// SAFETY: the pointer is `Some` only inside `lend`, which borrows the `Lend` for its whole
// call; moving the `Lend` (or what owns it) to another thread needs it unborrowed, so what
// moves is always `None`: no pointer ever crosses threads. (`Lend` stays `!Sync`.)
unsafe impl<T> Send for Lend<T> {}

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

/// A heap value reached only through shared references, owned like a `Box`. (A `Box` is a
/// unique pointer: taking `&mut` of the struct that holds it would invalidate the pointers an
/// activation handed out.)
pub(crate) struct Pinned<T> {
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

impl<T> Pinned<T> {
    pub(crate) fn new(value: T) -> Self {
        Pinned {
            ptr: NonNull::from(Box::leak(Box::new(value))),
            _owns: PhantomData,
        }
    }

    pub(crate) fn get(&self) -> &T {
        // SAFETY: `ptr` came from `Box::leak` and is freed only in `drop`, which needs
        // `&mut self` and so cannot overlap this borrow; no `&mut T` is ever made from it
        // (the value is only used through `&T`), so shared references never alias a unique one.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> Drop for Pinned<T> {
    fn drop(&mut self) {
        // SAFETY: made by `Box::leak` in `new` and freed only here, once; `&mut self` means no
        // reference from `get` is alive, and an activation of this value (below) is a scope
        // that borrows it, so none is alive either.
        drop(unsafe { Box::from_raw(self.ptr.as_ptr()) });
    }
}

// SAFETY: a `Pinned<T>` owns its `T` as a `Box<T>` would; sending it sends the `T`.
unsafe impl<T: Send> Send for Pinned<T> {}

impl<T: fmt::Debug> fmt::Debug for Pinned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A unique id for an executor: never reused in the process.
pub(crate) fn fresh_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The executor that runs on this thread right now.
#[derive(Copy, Clone)]
struct Active {
    id: u64,
    /// The executor, type-erased.
    exec: NonNull<()>,
    /// Its type: a lookup that names another type finds nothing.
    ty: TypeId,
    /// The same executor, for callers that do not know its context type.
    control: NonNull<dyn Control>,
}

thread_local! {
    static ACTIVE: Cell<Option<Active>> = const { Cell::new(None) };
}

/// Puts the previous activation back, also on unwind.
struct Deactivate(Option<Active>);

impl Drop for Deactivate {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(self.0));
    }
}

/// Makes the executor `exec` (of id `id`) reachable from this thread through [`with_active`]
/// while `f` runs. Nested activations (a scheduler ticked from inside another's task) stack.
pub(crate) fn activate<E: Control + 'static, R>(id: u64, exec: &E, f: impl FnOnce() -> R) -> R {
    let control: &dyn Control = exec;
    let active = Active {
        id,
        exec: NonNull::from(exec).cast(),
        ty: TypeId::of::<E>(),
        control: NonNull::from(control),
    };
    let _restore = Deactivate(ACTIVE.with(|a| a.replace(Some(active))));
    f()
}

/// Calls `f` with the executor of id `id` if it is active on this thread and of type `E`;
/// `None` otherwise (a caller that names the wrong type finds nothing: one comparison of
/// type ids, so the function is safe whatever the caller names).
pub(crate) fn with_active<E: 'static, R>(id: u64, f: impl FnOnce(&E) -> R) -> Option<R> {
    let active = (ACTIVE.with(Cell::get)).filter(|a| a.id == id && a.ty == TypeId::of::<E>())?;
    // SAFETY: `activate` stored a pointer to a live executor whose type id is `E`'s (checked
    // above, so the pointer is to an `E`), and removes it before its borrow of that `E` ends;
    // we are called while that scope is on this thread's stack (the cell is thread-local), so
    // the `E` is alive, and it is only ever used through shared references.
    let exec = unsafe { active.exec.cast::<E>().as_ref() };
    Some(f(exec))
}

/// Calls `f` with the executor of id `id`, without knowing its type, if it is active on this
/// thread.
pub(crate) fn with_active_control<R>(id: u64, f: impl FnOnce(&dyn Control) -> R) -> Option<R> {
    let active = ACTIVE.with(Cell::get).filter(|a| a.id == id)?;
    // SAFETY: as in `with_active`; the vtable is the one `activate` coerced with.
    let control = unsafe { active.control.as_ref() };
    Some(f(control))
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

    struct ExecA(u32);
    struct ExecB(#[allow(dead_code)] String);

    impl Control for ExecA {
        fn cancel(&self, _: u32, _: u32) -> bool {
            true
        }
    }

    #[test]
    fn an_activation_answers_only_its_id_and_its_type() {
        let a = ExecA(7);
        let id = fresh_id();
        assert!(
            with_active::<ExecA, _>(id, |e| e.0).is_none(),
            "not active yet"
        );
        activate(id, &a, || {
            assert_eq!(with_active::<ExecA, _>(id, |e| e.0), Some(7));
            assert!(
                with_active::<ExecB, _>(id, |e| e.0.len()).is_none(),
                "another type"
            );
            assert!(
                with_active::<ExecA, _>(fresh_id(), |e| e.0).is_none(),
                "another id"
            );
            assert_eq!(with_active_control(id, |c| c.cancel(0, 0)), Some(true));
            // From another thread the activation is not there.
            std::thread::scope(|s| {
                s.spawn(|| assert!(with_active::<ExecA, _>(id, |e| e.0).is_none()));
            });
        });
        assert!(
            with_active::<ExecA, _>(id, |e| e.0).is_none(),
            "gone after the scope"
        );
    }
}
