//! The boss script as a tick function, for `--rollback-test`: the demo's usual boss is an
//! async task, and futures cannot be snapshotted, so a world that is rolled back runs the
//! same script as a state machine whose state lives in the director's board (and is saved with it).

use tickflow::prelude::*;

use super::director::Board;

/// The boss script's state: wait 2 s, then for every wave: wait until a tenth of the force
/// has died, spawn reinforcements sixteen per frame, rest 3 s.
#[derive(Clone, Debug)]
pub(crate) struct Boss {
    wave_size: usize,
    threshold: usize,
    wave: u64,
    phase: Phase,
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Resting until this game time.
    Until(Time),
    /// Waiting for losses.
    Watch,
    /// Spawning; this many already came.
    Spawn(usize),
}

impl Boss {
    pub(crate) fn new(actors: usize) -> Boss {
        Boss {
            wave_size: (actors / 10).max(1),
            threshold: actors - actors / 10,
            wave: 0,
            phase: Phase::Until(Time::ZERO + secs(2.0)),
        }
    }
}

impl Board {
    /// One frame of the boss script (a PostUpdateWork tick function, "boss").
    pub(crate) fn boss_step(&mut self, now: Time) {
        let Some(mut boss) = self.boss.take() else {
            return;
        };
        loop {
            match boss.phase {
                Phase::Until(t) if now < t => break,
                Phase::Until(_) => boss.phase = Phase::Watch,
                Phase::Watch if self.alive() > boss.threshold => break,
                Phase::Watch => {
                    boss.wave += 1;
                    self.wave(boss.wave, boss.wave_size);
                    boss.phase = Phase::Spawn(0);
                }
                Phase::Spawn(done) => {
                    let end = (done + 16).min(boss.wave_size);
                    for _ in done..end {
                        self.spawn_actor(self.weaker_team());
                    }
                    boss.phase = if end == boss.wave_size {
                        Phase::Until(now + secs(3.0))
                    } else {
                        Phase::Spawn(end)
                    };
                    break;
                }
            }
        }
        self.boss = Some(boss);
    }
}
