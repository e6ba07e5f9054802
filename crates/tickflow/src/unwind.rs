//! Panics that must not leave work half done: one item's panicking destructor or callback may
//! not stop the cleanup of the others (the "Panics" section of the
//! [scheduler docs](crate::scheduler): a panic anywhere leaves every part consistent and
//! nothing lost).

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// A caught panic, carried to the caller.
pub(crate) type Payload = Box<dyn Any + Send>;

/// Calls `f` on every item, in order, even when some of the calls panic; then raises the first
/// panic. Returns how many calls returned `true` (a panicking call counts as `true`: the item
/// was dealt with before its destructor or hook panicked).
pub(crate) fn each_then_raise<T>(
    items: impl IntoIterator<Item = T>,
    mut f: impl FnMut(T) -> bool,
) -> usize {
    let mut first = None;
    let mut n = 0;
    for item in items {
        match panic::catch_unwind(AssertUnwindSafe(|| f(item))) {
            Ok(done) => n += usize::from(done),
            Err(p) => {
                n += 1;
                first.get_or_insert(p);
            }
        }
    }
    if let Some(p) = first {
        panic::resume_unwind(p);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_handled_before_the_first_panic_goes_on() {
        let mut seen = vec![];
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            each_then_raise(1..=4, |i| {
                seen.push(i);
                if i % 2 == 0 {
                    panic!("item {i}");
                }
                true
            })
        }))
        .unwrap_err();
        assert_eq!(seen, [1, 2, 3, 4]);
        assert_eq!(caught.downcast_ref::<String>().unwrap(), "item 2");
    }
}
