//! Wires the arena's rules into a scheduler: the systems, the scoreboard, the boss script.

use tickflow::latent::{Completion, LatentInfo};
use tickflow::prelude::*;
use tickflow::snapshot::Resolver;
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::{TimerCallback, TimerInfo};

use super::{land_fn, move_fn, poison_fn, recharge_fn, think_fn, Arena, Boss};

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

/// How the boss script runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BossMode {
    /// As an async task (the demo).
    Task,
    /// As a tick function with its state in the arena (`--rollback-test`: tasks cannot be
    /// snapshotted).
    Ticks,
}

type SystemFn = Box<dyn FnMut(&mut Arena, &mut TickCx<'_, Arena>) + Send>;

/// The world's system tick functions by name (boxed: four calls a frame). The build and the
/// restore resolver both take them from here.
fn system(name: &str) -> Option<SystemFn> {
    Some(match name {
        // Stamps the frame number on the arena's events before anything else runs.
        "clock" => Box::new(|a: &mut Arena, cx: &mut TickCx<Arena>| a.frame = cx.frame()),
        "physics" => Box::new(|a: &mut Arena, _: &mut TickCx<Arena>| a.physics()),
        "reap" => Box::new(|a: &mut Arena, _: &mut TickCx<Arena>| a.reap()),
        "boss" => Box::new(|a: &mut Arena, cx: &mut TickCx<Arena>| {
            let now = cx.timers().now();
            a.boss_step(now)
        }),
        _ => return None,
    })
}

/// Builds the arena with `actors` actors (half per team) and everything that runs them.
/// Nothing has run yet: the actors' tick functions and timers are queued for the first frame.
pub(crate) fn build(actors: usize, seed: u64, boss: BossMode) -> World {
    let mut sched = Scheduler::<Arena>::new();
    let mut arena = Arena::new(seed, sched.commands());
    let mut add = |settings: TickSettings| {
        let f = system(&settings.name).expect("a system of the arena");
        sched.add_tick(settings, f)
    };
    add(TickSettings {
        high_priority: true,
        ..TickSettings::named("clock")
    });
    let physics = add(TickSettings::named("physics").in_group(TickGroup::DuringPhysics));
    // PostPhysics work that must see where physics left everyone.
    let reap = add(TickSettings::named("reap").in_group(TickGroup::PostPhysics));
    if boss == BossMode::Ticks {
        add(TickSettings::named("boss").in_group(TickGroup::PostUpdateWork));
    }
    sched
        .add_prerequisite(reap, physics)
        .expect("no cycle: physics depends on nothing");
    sched.add_tickable(Scoreboard);

    for k in 0..actors {
        arena.spawn_actor((k % 2) as u8);
    }

    match boss {
        BossMode::Ticks => arena.boss = Some(Boss::new(actors)),
        BossMode::Task => spawn_boss(&mut sched, actors),
    }
    World { sched, arena }
}

/// The boss script: when a tenth of the starting force has died, it sends a wave of
/// reinforcements to the weaker side, sixteen per frame, then rests.
fn spawn_boss(sched: &mut Scheduler<Arena>, actors: usize) {
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
}

/// Binds a restored arena's callbacks again: systems and actor functions by name, timers by
/// name and owner, projectiles by their shot id.
pub(crate) struct Rebind;

impl Resolver<Arena> for Rebind {
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Arena>> {
        let name = info.settings.name.as_str();
        let actor = |prefix: &str| name.strip_prefix(prefix)?.parse::<u32>().ok();
        if let Some(id) = actor("move ") {
            Some(TickBody::serial(move_fn(id)))
        } else if let Some(id) = actor("think ") {
            Some(TickBody::serial(think_fn(id)))
        } else {
            system(name).map(TickBody::serial)
        }
    }

    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<Arena>> {
        let id = u32::try_from(info.owner?.get()).ok()?;
        match info.name.as_deref()? {
            "recharge" => Some(Box::new(recharge_fn(id))),
            "poison" => Some(Box::new(poison_fn(id))),
            _ => None,
        }
    }

    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<Arena>>> {
        (info.name == "scoreboard").then(|| Box::new(Scoreboard) as Box<dyn Tickable<Arena>>)
    }

    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<Arena>> {
        Some(Box::new(land_fn(info.uuid)))
    }

    fn after_restore(&mut self, sched: &Scheduler<Arena>, arena: &mut Arena) {
        arena.commands = sched.commands();
    }
}

impl World {
    /// Runs one frame of `dt`.
    pub(crate) fn frame(&mut self, dt: Span) -> FrameReport {
        self.sched.tick(dt, &mut self.arena)
    }
}
