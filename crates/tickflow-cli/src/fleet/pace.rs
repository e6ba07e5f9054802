//! How many actors a zone adopts in a frame.
//!
//! An adopted actor costs its adopter twice: in the frame that adopts it (its rows read and
//! loaded) and in the next frame's commit (written under the adopter, deleted under the lost
//! zone, its registry row moved) — about 0.12 ms in all on PostgreSQL with a loaded fleet, less
//! on an idle one. A fixed number is either slow for a small zone or a long frame for a large
//! one, and a number that reacts to the last frame grows past the budget before the cost shows
//! (it lands a frame late, in the commit).
//!
//! So the pace predicts: it keeps the zone's own frame time (frames with no adoption work in
//! them) and the cost of an adopted actor (a frame's time over the zone's own, per actor it
//! adopted or committed), each a moving average, and adopts as many as fit in the room the
//! frame has left under [`TARGET`] of its period, counting each twice — between [`MIN`] and
//! the zone's `--adopt-limit`.

use std::time::Duration;

/// The share of a frame's period a frame with adoptions aims to stay under.
const TARGET: f64 = 0.6;
/// The fewest a frame adopts while a takeover lasts: a takeover always moves on.
const MIN: usize = 8;
/// The cost of an actor assumed before one was measured (µs).
const FIRST_COST_US: f64 = 120.0;

/// The pace of a zone's adoptions.
#[derive(Debug)]
pub(crate) struct AdoptPace {
    limit: usize,
    max: usize,
    /// The zone's own frame time (µs), frames with no adoption work.
    base_us: f64,
    /// An adopted actor's cost (µs) in each of its two frames.
    cost_us: f64,
    /// Actors adopted last frame, whose writes this frame's commit made.
    last: usize,
}

impl AdoptPace {
    /// A pace of at most `max` a frame.
    pub(crate) fn new(max: usize) -> AdoptPace {
        let max = max.max(1);
        AdoptPace {
            limit: MIN.min(max),
            max,
            base_us: 0.0,
            cost_us: FIRST_COST_US,
            last: 0,
        }
    }

    /// How many the next frame may adopt.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Learns from a frame that adopted `adopted` actors and took `took`, and sets the next
    /// frame's limit for a frame period of `period`.
    pub(crate) fn after_frame(&mut self, adopted: usize, took: Duration, period: Duration) {
        let took_us = took.as_secs_f64() * 1e6;
        let work = adopted + self.last;
        self.last = adopted;
        if work == 0 {
            // A long frame of the zone's own (a resume's first commit) is not its usual cost.
            let sample = took_us.min(period.as_secs_f64() * 1e6);
            self.base_us = if self.base_us == 0.0 {
                sample
            } else {
                0.9 * self.base_us + 0.1 * sample
            };
        } else if work >= MIN {
            let per = ((took_us - self.base_us) / work as f64).max(1.0);
            self.cost_us = 0.7 * self.cost_us + 0.3 * per;
        }
        let room = TARGET * period.as_secs_f64() * 1e6 - self.base_us;
        let fits = (room.max(0.0) / (2.0 * self.cost_us)) as usize;
        self.limit = fits.clamp(MIN.min(self.max), self.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: Duration = Duration::from_micros(33_333);

    /// A zone whose own frames take `base_us` and each adopted actor `cost_us` in each of
    /// its two frames: the frame times of `frames` frames of a takeover of `lost` actors.
    fn takeover(base_us: f64, cost_us: f64, lost: usize, frames: usize) -> (Vec<f64>, usize) {
        let mut pace = AdoptPace::new(2000);
        for _ in 0..60 {
            pace.after_frame(0, Duration::from_secs_f64(base_us / 1e6), PERIOD);
        }
        let (mut left, mut last, mut times) = (lost, 0, Vec::new());
        for _ in 0..frames {
            let n = pace.limit().min(left);
            left -= n;
            let t = base_us + cost_us * (n + last) as f64;
            last = n;
            times.push(t);
            pace.after_frame(n, Duration::from_secs_f64(t / 1e6), PERIOD);
        }
        (times, left)
    }

    #[test]
    fn a_loaded_zone_adopts_within_its_frame() {
        // The scale run's adopters: 12 ms frames of their own, 0.12 ms an actor: 33 a
        // frame (a zone of 50,000 is three adopters' 17 s).
        let (times, left) = takeover(12_000.0, 120.0, 50_000, 1_600);
        assert!(times.iter().all(|&t| t < 33_333.0), "{times:?}");
        assert_eq!(left, 0, "and the takeover ends");
    }

    #[test]
    fn a_light_zone_adopts_fast_and_a_cheaper_actor_raises_the_pace() {
        let (times, left) = takeover(1_000.0, 30.0, 1_000, 8);
        assert_eq!(left, 0, "1,000 actors in 8 frames");
        assert!(times.iter().all(|&t| t < 33_333.0), "{times:?}");
    }

    #[test]
    fn the_pace_stays_within_its_bounds() {
        let mut pace = AdoptPace::new(100);
        pace.after_frame(8, Duration::from_millis(500), PERIOD);
        assert_eq!(pace.limit(), MIN, "an overloaded frame still adopts a few");
        for _ in 0..50 {
            pace.after_frame(pace.limit(), Duration::from_micros(10), PERIOD);
        }
        assert_eq!(pace.limit(), 100, "never past --adopt-limit");
    }
}
