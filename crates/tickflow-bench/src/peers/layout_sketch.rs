//! A layout sketch for S2's game shape, written for the benchmark: not a scheduler (no handles,
//! no removal or enabling, no panics, no commands, no parallel functions, one clock), only the
//! memory layout that a frame of due functions in a fixed order needs at least. It shows how
//! near to the due-calls floor any scheduler of this shape can come.
//!
//! - The every-frame functions sit in run order in two arrays (a last-run stamp, a callback),
//!   walked in stretches as the plain loop walks its callbacks.
//! - The interval functions sit in run order too, each with a 4-byte key (its due time in
//!   buckets of 2^23 flicks, about 12 ms), its record (exact due time, interval, last run), its
//!   callback, and where it cuts into the every-frame functions. A frame compares 64 keys at a
//!   time without a branch, and runs each due one after the stretch of every-frame functions
//!   before it. No calendar, no sort: a due function is found in run order.

use super::unreal_tick::TickFn;

/// Bucket width of a key: 2^23 flicks.
const SHIFT: u32 = 23;
/// Keys compared together.
const CHUNK: usize = 64;

struct Interval {
    due: u64,
    interval: u64,
    last_run: u64,
}

/// The sketch: see the module's text.
pub struct LayoutSketch {
    every_last: Vec<u64>,
    every: Vec<TickFn>,
    keys: Vec<u32>,
    recs: Vec<Interval>,
    bodies: Vec<TickFn>,
    cut: Vec<u32>,
    frame: u64,
    now: u64,
}

impl LayoutSketch {
    /// Functions in run order, each with its interval in flicks (0: every frame).
    pub fn new(intervals_in_order: impl IntoIterator<Item = u64>) -> Self {
        let mut s = LayoutSketch {
            every_last: Vec::new(),
            every: Vec::new(),
            keys: Vec::new(),
            recs: Vec::new(),
            bodies: Vec::new(),
            cut: Vec::new(),
            frame: 0,
            now: 0,
        };
        for interval in intervals_in_order {
            let f: TickFn = Box::new(|n: &mut u64| *n += 1);
            if interval == 0 {
                s.every_last.push(0);
                s.every.push(f);
            } else {
                s.keys.push(0);
                s.recs.push(Interval {
                    due: 0,
                    interval,
                    last_run: 0,
                });
                s.bodies.push(f);
                s.cut.push(s.every.len() as u32);
            }
        }
        s
    }

    fn run_every(&mut self, from: usize, to: usize, n: &mut u64) {
        let frame = self.frame;
        for (last, f) in self.every_last[from..to]
            .iter_mut()
            .zip(&mut self.every[from..to])
        {
            if *last != frame {
                *last = frame;
                f(n);
            }
        }
    }

    /// One frame of `dt` flicks.
    #[inline(never)]
    pub fn tick(&mut self, dt: u64, n: &mut u64) {
        self.frame += 1;
        self.now += dt;
        let (now, frame) = (self.now, self.frame);
        let bound = u32::try_from(now >> SHIFT).unwrap_or(u32::MAX);
        let mut cursor = 0;
        for c in 0..self.keys.len().div_ceil(CHUNK) {
            let base = c * CHUNK;
            let mut mask = candidates(&self.keys[base..(base + CHUNK).min(self.keys.len())], bound);
            while mask != 0 {
                let i = base + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let cut = self.cut[i] as usize;
                if cut > cursor {
                    self.run_every(cursor, cut, n);
                    cursor = cut;
                }
                let r = &mut self.recs[i];
                if r.last_run == frame || r.due > now {
                    continue;
                }
                r.due = match r.due + r.interval {
                    next if next > now => next,
                    _ => now + r.interval,
                };
                r.last_run = frame;
                self.keys[i] = u32::try_from(r.due >> SHIFT).unwrap_or(u32::MAX);
                (self.bodies[i])(n);
            }
        }
        let end = self.every.len();
        self.run_every(cursor, end, n);
    }
}

/// Bit `j` set where `keys[j] <= bound`: the comparisons fill bytes side by side, and a
/// multiplication gathers each 8 bytes' low bits into one byte (byte j lands on bit 56 + j).
fn candidates(keys: &[u32], bound: u32) -> u64 {
    let mut bytes = [0u8; CHUNK];
    for (b, &k) in bytes.iter_mut().zip(keys) {
        *b = u8::from(k <= bound);
    }
    let mut mask = 0u64;
    for (q, eight) in bytes.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
        mask |= (w.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * q);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sketch makes the calls of a list of due times, frame by frame: one interval after
    /// the last due time (overrun credited, as tickflow's), or after now when a whole interval
    /// behind.
    #[test]
    fn calls_what_a_list_of_due_times_calls() {
        let dt = 705_600_000 / 60;
        let intervals: Vec<u64> = (0..300u64).map(|i| (i % 7) * dt * 3 / 2).collect();
        let mut sketch = LayoutSketch::new(intervals.iter().copied());
        let mut due = vec![0u64; intervals.len()];
        let mut now = 0;
        for _ in 0..200 {
            now += dt;
            let mut want = 0;
            for (d, &iv) in due.iter_mut().zip(&intervals) {
                if *d <= now {
                    want += 1;
                    *d = if *d + iv > now { *d + iv } else { now + iv };
                }
            }
            let mut got = 0;
            sketch.tick(dt, &mut got);
            assert_eq!(got, want);
        }
    }

    #[test]
    fn candidates_are_the_keys_at_or_below_the_bound() {
        let keys: Vec<u32> = (0..64).map(|j| (j * 37) % 11).collect();
        let mask = candidates(&keys, 4);
        for (j, &k) in keys.iter().enumerate() {
            assert_eq!(mask >> j & 1 == 1, k <= 4, "key {j}");
        }
        assert_eq!(candidates(&keys[..3], u32::MAX), 0b111);
    }
}
