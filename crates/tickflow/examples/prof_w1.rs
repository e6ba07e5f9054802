//! W1 fire-all alone: one-shots with delays 1..10,000 ms at 60 Hz until all fired, for `perf record`.
use std::time::Instant;
use tickflow::prelude::*;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    let mut x: u64 = 12345;
    let delays: Vec<u64> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1 + x % 9999
        })
        .collect();
    let s = Instant::now();
    let mut t = TimerManager::<u64>::new();
    for (i, &ms) in delays.iter().enumerate() {
        let id = i as u32;
        t.after(millis(ms))
            .call(move |n: &mut u64, _: &mut TimerCx<'_, u64>| *n += u64::from(id & 1) + 1);
    }
    let ins = s.elapsed();
    let mut c = 0;
    let f = Span::frames(1, 60);
    while !t.is_empty() {
        t.tick(f, &mut c);
    }
    println!(
        "insert {:.0} ns/timer, total {:.0} ns/timer",
        ins.as_nanos() as f64 / n as f64,
        s.elapsed().as_nanos() as f64 / n as f64
    );
}
