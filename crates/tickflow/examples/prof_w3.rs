//! W3 steady alone: looping timers, periods 500..5,000 ms, 600 frames at 60 Hz.
use std::time::Instant;
use tickflow::prelude::*;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |s| s.parse().unwrap());
    let mut x: u64 = 7;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = TimerManager::<u64>::with_capacity(n);
    for i in 0..n {
        let id = i as u32;
        t.every(millis(500 + rnd() % 4500))
            .call(move |n: &mut u64, _: &mut TimerCx<'_, u64>| *n += u64::from(id & 1) + 1);
    }
    let mut c = 0;
    let mut calls = vec![];
    let mut times: Vec<f64> = (0..600)
        .map(|_| {
            let s = Instant::now();
            calls.push(t.tick(Span::frames(1, 60), &mut c));
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    if std::env::var_os("SLOW").is_some() {
        let mut idx: Vec<usize> = (0..600).collect();
        idx.sort_by(|&a, &b| times[b].total_cmp(&times[a]));
        for &i in &idx[..8] {
            println!("frame {i}: {:.3} ms, {} calls", times[i], calls[i]);
        }
    }
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    times.sort_by(f64::total_cmp);
    println!(
        "mean {mean:.3} ms, p99 {:.3}, max {:.3}, calls {c}",
        times[593], times[599]
    );
}
