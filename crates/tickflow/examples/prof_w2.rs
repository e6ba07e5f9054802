//! W2 churn alone: ns per (cancel a random timer + insert a new one).
use std::time::Instant;
use tickflow::prelude::*;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |s| s.parse().unwrap());
    let mut x: u64 = 99;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = TimerManager::<u64>::with_capacity(n);
    let mut hs: Vec<TimerHandle> = (0..n)
        .map(|_| t.after(millis(1 + rnd() % 9999)).call(|_, _| {}))
        .collect();
    let ops = 1_000_000;
    let s = Instant::now();
    for _ in 0..ops {
        let k = (rnd() % n as u64) as usize;
        t.clear(hs[k]);
        hs[k] = t.after(millis(1 + rnd() % 9999)).call(|_, _| {});
    }
    println!(
        "{:.0} ns per pair at {n}",
        s.elapsed().as_nanos() as f64 / ops as f64
    );
}
