//! A stored callback: a closure of up to 8 bytes lives inside its owner's record (a timer's
//! entry, a tick function's body), a larger one in a box of its own.
//!
//! Why this module has unsafe code: most timer closures capture nothing, an id or a handle, and
//! at a million timers a `Box<dyn FnMut>` costs each of them a `malloc` when set, a `free` when
//! done, and a second cache miss on every call (the entry, then the box). Measured on the W1
//! benchmark (one million one-shots whose closures capture their id), the allocator took about
//! a fifth of the instructions and the box loads a fifth of the cache misses. Storing a small
//! closure in the entry itself needs type erasure without a box, which safe Rust cannot
//! express: this module is that one thing, with a `SAFETY:` comment on every block. Its tests
//! run under valgrind in CI (`.ci/valgrind`).
//!
//! Tick functions store their serial bodies the same way (`Callback<C, TickCall>`): S1 with
//! bodies that own a counter spent 45 % of its samples loading that counter through the box,
//! each call a jump to wherever the allocator had put the function's closure.
//!
//! Ground rules:
//!
//! - A [`Callback`] is 16 bytes: a pointer to a static table made for the closure's type (its
//!   call function, and its drop function unless it has nothing to drop), and one word that
//!   holds either the closure itself (when its size is at most 8 bytes and its alignment at
//!   most 8) or a pointer to its box.
//! - The word is only ever read through the table it was written with, so it is always read
//!   as the type that was written.
//! - A callback owns its closure: dropping the callback drops the closure exactly once. Moving
//!   a callback moves the closure's bytes, which is how Rust moves any value.
//! - Only `Send` closures go in, so a callback is `Send`; it is not `Sync`, like the
//!   `Box<dyn FnMut + Send>` it replaces.
//! - A boxed callback handed in whole (a [`TimerCallback`] from a restore's resolver) is 16
//!   bytes and does not fit: it is kept in a box of its own (one small allocation per restored
//!   timer that had a box anyway).

#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::mem::{align_of, size_of, MaybeUninit};

use crate::cx::Cx;
use crate::timer::call::{TimerCall, TimerCx};

/// A boxed timer callback: what a restore's resolver returns. `Send`, so that a manager can
/// move between threads (and be a Bevy resource).
/// ([`TimerBuilder::call`](super::TimerBuilder::call) takes the closure itself, and stores one
/// that captures at most 8 bytes without a box.)
pub type TimerCallback<C> = Box<dyn FnMut(&mut C, &mut TimerCx<'_, C>) + Send>;

/// A boxed `on_cancel` hook ([`TimerBuilder::on_cancel`](super::TimerBuilder::on_cancel)).
pub type CancelHook<C> = Box<dyn FnOnce(&mut C) + Send>;

/// What a [`Callback`] of kind `K` stands for: a boxed `Send` closure called with the context
/// and a [`Cx`] of that kind.
type Boxed<C, K> = Box<dyn FnMut(&mut C, &mut Cx<'_, C, K>) + Send>;

/// The word a closure (or its box pointer) is stored in.
type Word = MaybeUninit<*mut ()>;

/// The two things done with a stored closure, made once per closure type. The context and
/// the [`Cx`] are passed as untyped pointers so that the table does not name `C` (a `'static`
/// table of a type that names `C` would require `C: 'static`).
struct ClosureOps {
    call: unsafe fn(*mut Word, *mut (), *mut ()),
    /// `None` for an inline closure with nothing to drop (most: they capture an id or a
    /// handle), so that dropping its callback calls nothing.
    drop: Option<unsafe fn(*mut Word)>,
}

/// A callback of kind `K` (a timer's by default; a tick function's is `Callback<C, TickCall>`),
/// stored without an allocation when the closure is small.
pub(crate) struct Callback<C, K = TimerCall> {
    table: &'static ClosureOps,
    word: Word,
    /// Owns a `Send` closure called with `&mut C`: the auto traits and variance of a box.
    _owns: PhantomData<Boxed<C, K>>,
}

// SAFETY: a `Callback` is only made from a `Send` closure (`new` requires it), and it owns the
// closure, so sending the callback sends the closure, which is allowed.
unsafe impl<C, K> Send for Callback<C, K> {}

/// Whether a closure of type `F` is stored in the word itself.
const fn fits<F>() -> bool {
    size_of::<F>() <= size_of::<Word>() && align_of::<F>() <= align_of::<Word>()
}

/// The table of closures of type `F` called with `C` and a `Cx` of kind `K`, stored in the
/// word itself (`BOXED == false`) or in a box whose pointer is in the word.
struct Stored<C, K, F, const BOXED: bool>(PhantomData<fn(&mut C, K, F)>);

impl<C, K, F: FnMut(&mut C, &mut Cx<'_, C, K>), const BOXED: bool> Stored<C, K, F, BOXED> {
    const TABLE: &'static ClosureOps = &ClosureOps {
        call: Self::call,
        drop: if BOXED || std::mem::needs_drop::<F>() {
            Some(Self::drop)
        } else {
            None
        },
    };

    /// Where the `F` is.
    ///
    /// # Safety
    /// `word` was written by `Callback::new` with this table: it holds an `F`, or (`BOXED`)
    /// a pointer from `Box::<F>::into_raw` that has not been freed.
    unsafe fn closure(word: *mut Word) -> *mut F {
        if BOXED {
            // SAFETY: the caller's contract above: the word was written, with a pointer.
            unsafe { (*word).assume_init().cast::<F>() }
        } else {
            word.cast::<F>()
        }
    }

    /// # Safety
    /// As for [`closure`](Self::closure); `ctx` points to a live `C` and `cx` to a live
    /// `Cx<C, K>`, none of the three aliased for the length of the call.
    unsafe fn call(word: *mut Word, ctx: *mut (), cx: *mut ()) {
        // SAFETY: the caller's contract above: the three pointers are valid and unaliased.
        let (f, ctx, cx) = unsafe {
            (
                &mut *Self::closure(word),
                &mut *ctx.cast::<C>(),
                &mut *cx.cast::<Cx<'_, C, K>>(),
            )
        };
        f(ctx, cx)
    }

    /// # Safety
    /// As for [`closure`](Self::closure); the `F` (and its box) is dropped here and never
    /// used again.
    unsafe fn drop(word: *mut Word) {
        // SAFETY: the caller's contract above; a boxed `F`'s pointer came from `Box::into_raw`.
        unsafe {
            let f = Self::closure(word);
            if BOXED {
                drop(Box::from_raw(f));
            } else {
                f.drop_in_place();
            }
        }
    }
}

impl<C, K> Callback<C, K> {
    /// Stores `f`: in the callback itself when it fits in 8 bytes, else in a box.
    #[inline]
    pub(crate) fn new<F>(f: F) -> Self
    where
        F: FnMut(&mut C, &mut Cx<'_, C, K>) + Send + 'static,
    {
        let mut word = Word::uninit();
        let table = if fits::<F>() {
            // SAFETY: `fits` checked that an `F` has the size and alignment room of a `Word`.
            unsafe { word.as_mut_ptr().cast::<F>().write(f) };
            Stored::<C, K, F, false>::TABLE
        } else {
            word.write(Box::into_raw(Box::new(f)).cast::<()>());
            Stored::<C, K, F, true>::TABLE
        };
        Callback {
            table,
            word,
            _owns: PhantomData,
        }
    }

    /// Calls the closure.
    #[inline]
    pub(crate) fn call(&mut self, ctx: &mut C, cx: &mut Cx<'_, C, K>) {
        let ctx: *mut C = ctx;
        let cx: *mut Cx<'_, C, K> = cx;
        // SAFETY: `word` was written by `new` with the closure type `table` was made for; the
        // two pointers come from live exclusive references held for the length of the call.
        unsafe { (self.table.call)(&mut self.word, ctx.cast(), cx.cast()) }
    }
}

impl<C: 'static> Callback<C> {
    /// Stores an already boxed timer callback (from a resolver).
    pub(crate) fn from_box(b: TimerCallback<C>) -> Self {
        Callback::new(b)
    }
}

impl<C, K> Drop for Callback<C, K> {
    fn drop(&mut self) {
        // No drop function: the closure has nothing to drop, so there is nothing to do.
        if let Some(drop) = self.table.drop {
            // SAFETY: the word holds the closure `table` was made for, and it is dropped only
            // here, once: a `Callback` is dropped once.
            unsafe { drop(&mut self.word) }
        }
    }
}

impl<C, K> std::fmt::Debug for Callback<C, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Callback")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer::standalone::TimerManager;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Calls `cb` once through a real `TimerCx` (made by a manager firing a timer).
    fn call_once(cb: &mut Callback<u64>, ctx: &mut u64) {
        let mut m = TimerManager::<u64>::new();
        let clocks = m.clocks();
        let mut cx = TimerCx::timer(&clocks, &mut m, Default::default(), 0, 0, 0, 1);
        cb.call(ctx, &mut cx);
    }

    #[test]
    fn small_closures_are_stored_inline_and_large_ones_boxed() {
        assert!(fits::<()>());
        assert!(fits::<u32>());
        assert!(fits::<Arc<u8>>());
        assert!(fits::<[u8; 8]>());
        assert!(!fits::<[u8; 9]>());
        assert!(!fits::<u128>()); // alignment 16
        assert!(!fits::<TimerCallback<u64>>());
    }

    #[test]
    fn inline_and_boxed_closures_are_called_with_their_captures() {
        let id = 7u32;
        let mut small = Callback::<u64>::new(move |n, _| *n += u64::from(id));
        let big = [1u64, 2, 3, 4];
        let mut large = Callback::<u64>::new(move |n, _| *n += big.iter().sum::<u64>());
        let mut boxed = Callback::<u64>::from_box(Box::new(|n, _| *n *= 2));
        let mut n = 0;
        call_once(&mut small, &mut n);
        call_once(&mut large, &mut n);
        call_once(&mut boxed, &mut n);
        call_once(&mut small, &mut n);
        assert_eq!(n, ((7 + 10) * 2) + 7);
    }

    #[test]
    fn only_closures_with_something_to_drop_have_a_drop_function() {
        let id = 3u32;
        let plain = Callback::<u64>::new(move |n, _| *n += u64::from(id));
        let shared = Arc::new(0u8);
        let owning = Callback::<u64>::new(move |_, _| {
            let _ = &shared;
        });
        let big = [1u64, 2, 3, 4];
        let boxed = Callback::<u64>::new(move |n, _| *n += big.iter().sum::<u64>());
        assert!(plain.table.drop.is_none());
        assert!(owning.table.drop.is_some());
        assert!(boxed.table.drop.is_some()); // its box is freed even when the closure is plain
    }

    #[test]
    fn each_closure_is_dropped_exactly_once_moved_or_not() {
        let drops = Arc::new(AtomicUsize::new(0));
        struct Count(Arc<AtomicUsize>);
        impl Drop for Count {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        {
            let small = Count(drops.clone()); // one pointer: inline
            let large = (Count(drops.clone()), [0u64; 4]); // boxed
            let a = Callback::<u64>::new(move |_, _| {
                let _ = &small;
            });
            let b = Callback::<u64>::new(move |_, _| {
                let _ = &large;
            });
            let moved = vec![a, b]; // moves both callbacks' bytes
            let mut again = moved;
            again.swap(0, 1);
            assert_eq!(drops.load(Ordering::SeqCst), 0);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_panicking_closure_stays_callable_and_droppable() {
        let mut cb = Callback::<u64>::new(|n, _| {
            *n += 1;
            if *n == 1 {
                panic!("first call");
            }
        });
        let mut n = 0;
        let first =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call_once(&mut cb, &mut n)));
        assert!(first.is_err());
        call_once(&mut cb, &mut n);
        assert_eq!(n, 2);
    }
}
