//! Wires the arena's rules into a scheduler: the systems, the scoreboard, the boss script.

use tickflow::prelude::*;

use super::Arena;

/// The owner of the boss script (actor ids never reach it).
const BOSS: OwnerId = OwnerId::new(u64::MAX);

/// A built arena: the scheduler and the game state it runs.
pub(crate) struct World {
    pub(crate) sched: Scheduler<Arena>,
    pub(crate) arena: Arena,
}

/// The scoreboard, a tickable (it wants `tick(dt)` every frame, nothing more).
struct Scoreboard;

impl Tickable<Arena> for Scoreboard {
    fn tick(&mut self, _dt: Span, arena: &mut Arena) {
        arena.score();
    }

    fn name(&self) -> &str {
        "scoreboard"
    }
}

/// Builds the arena with `actors` actors (half per team) and everything that runs them.
/// Nothing has run yet: the actors' tick functions and timers are queued for the first frame.
pub(crate) fn build(actors: usize, seed: u64) -> World {
    let mut sched = Scheduler::<Arena>::new();
    let mut arena = Arena::new(seed, sched.commands());

    let physics = sched.add_tick(
        TickSettings::named("physics").in_group(TickGroup::DuringPhysics),
        |a, _| a.physics(),
    );
    // PostPhysics work that must see where physics left everyone.
    let status = sched.add_tick(
        TickSettings::named("status").in_group(TickGroup::PostPhysics),
        |a, cx| a.status(cx.timers()),
    );
    let reap = sched.add_tick(
        TickSettings::named("reap").in_group(TickGroup::PostPhysics),
        |a, _| a.reap(),
    );
    for t in [status, reap] {
        sched
            .add_prerequisite(t, physics)
            .expect("no cycle: physics depends on nothing");
    }
    sched.add_tickable(Scoreboard);

    for k in 0..actors {
        arena.spawn_actor((k % 2) as u8);
    }

    // The boss script: when a tenth of the starting force has died, it sends a wave of
    // reinforcements to the weaker side, sixteen per frame, then rests.
    let wave_size = (actors / 10).max(1);
    let threshold = actors - actors / 10;
    sched.spawn(Some(BOSS), move |cx| async move {
        cx.delay(secs(2.0)).await;
        for wave in 1.. {
            cx.until(move |a: &Arena| a.alive() <= threshold).await;
            cx.with(|a| a.wave(wave, wave_size));
            for k in 0..wave_size {
                cx.with(|a| a.spawn_actor(a.weaker_team()));
                if k % 16 == 15 {
                    cx.frames(1).await;
                }
            }
            cx.delay(secs(3.0)).await;
        }
    });
    World { sched, arena }
}

impl World {
    /// Runs one frame of `dt`.
    pub(crate) fn frame(&mut self, dt: Span) -> FrameReport {
        self.arena.frame = self.sched.frame() + 1;
        self.sched.tick(dt, &mut self.arena)
    }
}
