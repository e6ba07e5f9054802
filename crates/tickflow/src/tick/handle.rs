//! [`TickHandle`], the name of one tick function in one scheduler.

crate::handle::handle_type! {
    /// Names one tick function in one scheduler. Generational: the handle of a removed function
    /// never reaches a newer one in the same slot, and a handle of another scheduler is
    /// answered like a stale one (see [`TimerHandle`](crate::timer::TimerHandle) for how
    /// certain that is). `Default` never names a function. 8 bytes, `Option` too.
    TickHandle
}
