//! Heap bytes per timer before and after churn, as `TimerManager::heap_bytes` counts them.
use tickflow::prelude::*;
fn main() {
    let n = 1_000_000usize;
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
    let before = t.heap_bytes() as f64 / n as f64;
    for _ in 0..n {
        let k = (rnd() % n as u64) as usize;
        t.clear(hs[k]);
        hs[k] = t.after(millis(1 + rnd() % 9999)).call(|_, _| {});
    }
    let after = t.heap_bytes() as f64 / n as f64;
    println!(
        "before {before:.1} B/timer, after churn {after:.1} ({:.2}x)",
        after / before
    );
}
