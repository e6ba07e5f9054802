//! What the timer workloads (`timers.rs`, `churn.rs`) share: the seeded generator their
//! delays come from, the callbacks each peer stores, tokio's paused runtime with a
//! budget-free drain for the DelayQueue peer, and each queue's clock run at 60 Hz until
//! every timer has fired.

use std::future::poll_fn;
use std::task::Poll;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use tickflow::prelude::*;
use tokio_util::time::DelayQueue;

use crate::peers::unreal::{Callback, UnrealTimers};

/// One 60 Hz frame, for the peers that take a `Duration`.
pub(crate) fn frame_dur() -> Duration {
    Duration::from_nanos(16_666_667)
}

/// The generator every timer workload draws from: the same seed, so each run and each peer
/// gets the same delays.
pub(crate) fn rng() -> SmallRng {
    SmallRng::seed_from_u64(0x71c7_f10e)
}

/// A peer's boxed callback that captures its timer's id, as users write them.
pub(crate) fn cb(id: u32) -> Callback {
    Box::new(move |n: &mut u64| *n += u64::from(id & 1) + 1)
}

/// A peer's boxed callback that counts its calls (the churn workloads' timers).
pub(crate) fn counted() -> Callback {
    Box::new(|n: &mut u64| *n += 1)
}

/// tickflow's callback that counts its calls (stored inline: it captures nothing).
pub(crate) fn count(n: &mut u64, _: &mut TimerCx<'_, u64>) {
    *n += 1;
}

/// tickflow's callback of the same shape (stored inline: it captures 4 bytes).
pub(crate) fn tf_cb(id: u32) -> impl FnMut(&mut u64, &mut TimerCx<'_, u64>) + 'static {
    move |n, _| *n += u64::from(id & 1) + 1
}

/// A current-thread runtime whose clock moves only when told (`tokio::time::advance`).
pub(crate) fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// Drains every expired item of a DelayQueue without yielding to the runtime's budget.
pub(crate) async fn drain<T>(dq: &mut DelayQueue<T>, mut each: impl FnMut(T, &mut DelayQueue<T>)) {
    tokio::task::unconstrained(async {
        loop {
            let next = poll_fn(|cx| Poll::Ready(dq.poll_expired(cx))).await;
            match next {
                Poll::Ready(Some(exp)) => each(exp.into_inner(), dq),
                _ => break,
            }
        }
    })
    .await
}

/// Runs tickflow's clock at 60 Hz until every timer has fired; returns what the callbacks
/// added up.
pub(crate) fn run_out_tickflow(t: &mut TimerManager<u64>) -> u64 {
    let mut n = 0;
    let frame = Span::frames(1, 60);
    while !t.is_empty() {
        t.tick(frame, &mut n);
    }
    n
}

/// [`run_out_tickflow`] for the Unreal-style heap.
pub(crate) fn run_out_unreal(t: &mut UnrealTimers) -> u64 {
    let mut n = 0;
    while !t.is_empty() {
        t.tick(1.0 / 60.0, &mut n);
    }
    n
}

/// [`run_out_tickflow`] for a DelayQueue on a paused runtime: the runtime's clock moves a
/// frame at a time.
pub(crate) async fn run_out_delay_queue(dq: &mut DelayQueue<Callback>) -> u64 {
    let mut n = 0;
    while !dq.is_empty() {
        tokio::time::advance(frame_dur()).await;
        drain(dq, |mut f, _| f(&mut n)).await;
    }
    n
}
