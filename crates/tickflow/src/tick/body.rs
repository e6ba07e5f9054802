//! A tick function's callback: serial on the game thread, or parallel with its state inside,
//! run in batches on rayon's pool.

use std::panic::{self, AssertUnwindSafe};

use crate::tick::cx::{Deferred, TickCall};
use crate::tick::handle::TickHandle;
use crate::timer::Callback;
use crate::unwind::Payload;

/// A serial tick function: stored like a timer's callback, a closure of up to 8 bytes inside
/// the function's body record (see `timer/callback.rs`).
pub(crate) type SerialFn<C> = Callback<C, TickCall>;
/// A parallel tick function with its state inside.
pub(crate) type ParallelFn<C> = Box<dyn FnMut(&C, &mut Deferred<C>) + Send>;

/// A tick function's callback.
pub(crate) enum Body<C> {
    Serial(SerialFn<C>),
    Parallel(ParallelFn<C>),
}

/// One parallel function taken out for a batch.
pub(crate) struct ParJob<C> {
    pub(super) handle: TickHandle,
    pub(super) seq: u64,
    pub(super) body: ParallelFn<C>,
    pub(super) out: Deferred<C>,
    /// The function panicked (the others of the batch still run).
    pub(super) panic: Option<Payload>,
}

impl<C> ParJob<C> {
    pub(super) fn run(&mut self, ctx: &C) {
        let (body, out) = (&mut self.body, &mut self.out);
        if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| body(ctx, out))) {
            self.panic = Some(p);
        }
    }
}

/// Runs a batch of parallel functions; made where `C: Sync` is known.
pub(crate) type Runner<C> = fn(&C, &mut [ParJob<C>]);

/// On rayon's pool; without the `rayon` feature one after the other, on this thread (each
/// job's writes are deferred either way, so the results are the same).
pub(crate) fn run_batch<C: Sync>(ctx: &C, jobs: &mut [ParJob<C>]) {
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        jobs.par_iter_mut().for_each(|j| j.run(ctx));
    }
    #[cfg(not(feature = "rayon"))]
    jobs.iter_mut().for_each(|j| j.run(ctx));
}
