//! Model test of the wheel's internals (`wheel/`) against a sorted list.
//!
//! Random inserts, removals (pause-like: the entry stays in its slot; free-like: the slot is
//! reused by a new timer, possibly of the other clock), re-inserts at the same or another due
//! time, and advances of two wheels (two clocks sharing one slot vector, as the manager's do).
//! Every advance must hand out exactly the timers the reference says are due, each once, and
//! no record may ever be handed out for a timer that is not `Active` in that clock at that due.
//! Removals are concentrated on a few slots so that compaction runs often, and big batches of
//! far timers make the staged (incremental) cascades run.

use super::slot::{Flags, SlotState, TimerSlots};
use super::wheel::Wheel;
use crate::handle::ContainerId;
use crate::test_rng::Rng;
use crate::time::CatchUp;
use crate::time::Domain;

/// The manager's side of the contract: set the entry, then insert; remove, then change it.
struct World {
    slots: TimerSlots<()>,
    wheels: [Wheel; 2],
    /// The reference: live `(idx, clock, due)`.
    live: Vec<(u32, usize, u64)>,
    now: [u64; 2],
}

impl World {
    fn place(&mut self, idx: u32, clock: usize, due: u64) {
        let e = self.slots.at_mut(idx);
        e.restore(
            0,
            0,
            0,
            Flags::new(Domain::ALL[clock], CatchUp::Burst, false),
        );
        e.set_due(due);
        self.wheels[clock].insert(idx, due);
        self.live.push((idx, clock, due));
    }

    /// Takes live timer `k` out of its wheel, as a pause (`free == false`) or a clear.
    fn take(&mut self, k: usize, free: bool) -> (u32, usize, u64) {
        let (idx, clock, due) = self.live.swap_remove(k);
        self.wheels[clock].remove(&self.slots, idx);
        if free {
            self.slots.free(idx);
        } else {
            let left = self.slots.at(idx).due();
            self.slots.at_mut(idx).wait(SlotState::Paused, left);
        }
        (idx, clock, due)
    }

    fn advance(&mut self, clock: usize, now: u64) {
        self.now[clock] = now;
        let mut got = vec![];
        self.wheels[clock].advance(&mut self.slots, now, |s, idx, due| {
            let e = s.at_mut(idx);
            if e.state() == SlotState::Active
                && e.due() == due
                && e.flags().domain().index() == clock
            {
                e.make_ready();
                got.push((idx, due));
            }
        });
        got.sort_unstable();
        let mut want: Vec<(u32, u64)> = (self.live.iter())
            .filter(|l| l.1 == clock && l.2 <= now)
            .map(|l| (l.0, l.2))
            .collect();
        want.sort_unstable();
        assert_eq!(got, want, "clock {clock} at {now}");
        self.live.retain(|l| !(l.1 == clock && l.2 <= now));
        for (idx, _) in got {
            self.slots.free(idx);
        }
    }
}

fn run(seed: u64, steps: usize) {
    let mut rng = Rng(seed);
    let mut w = World {
        slots: TimerSlots::new(ContainerId::fresh()),
        wheels: [Wheel::new(0), Wheel::new(1)],
        live: vec![],
        now: [0, 0],
    };
    let frame = [11_760_000u64, 1]; // flicks at 60 Hz, and frames
    for _ in 0..steps {
        let clock = rng.below(2) as usize;
        match rng.below(10) {
            // a batch of new timers: near, far (staged cascades), or on a few dues (compaction)
            0..=2 => {
                let n = 1 + rng.below(300);
                let spread = [1u64 << 12, 1 << 33, 1 << 40][rng.below(3) as usize];
                let few = rng.below(2) == 0;
                for _ in 0..n {
                    let delay = if few {
                        1 + rng.below(4) * (spread / 4)
                    } else {
                        1 + rng.below(spread)
                    };
                    let idx = w.slots.alloc();
                    w.place(idx, clock, w.now[clock] + delay);
                }
            }
            // remove some: clear (the slot is reused) or pause (it is not)
            3..=5 if !w.live.is_empty() => {
                for _ in 0..rng.below(200) {
                    if w.live.is_empty() {
                        break;
                    }
                    let k = rng.below(w.live.len() as u64) as usize;
                    w.take(k, rng.below(2) == 0);
                }
            }
            // re-set some at the same due (a look-alike stale record) or another one, in
            // either clock
            6..=7 if !w.live.is_empty() => {
                for _ in 0..rng.below(50) {
                    if w.live.is_empty() {
                        break;
                    }
                    let k = rng.below(w.live.len() as u64) as usize;
                    let (idx, c, due) = w.take(k, false);
                    match rng.below(3) {
                        0 => w.place(idx, c, due),
                        1 => w.place(idx, c, w.now[c] + 1 + rng.below(1 << 34)),
                        _ => {
                            let other = 1 - c;
                            w.place(idx, other, w.now[other].max(due.min(u64::MAX / 2)) + 1)
                        }
                    }
                }
            }
            _ => {
                let long = rng.below(20) == 0;
                let frames = 1 + rng.below(if long { 5_000 } else { 3 });
                let now = w.now[clock] + frame[clock] * frames;
                w.advance(clock, now);
            }
        }
    }
    // Everything left comes out, each once, at the end of time.
    w.advance(0, u64::MAX - 1);
    w.advance(1, u64::MAX - 1);
    assert!(w.live.is_empty());
}

#[test]
fn lazy_removal_and_staged_cascades_match_a_sorted_list() {
    for seed in 1..=24u64 {
        run(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1, 1_500);
    }
}
