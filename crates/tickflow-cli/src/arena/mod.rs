//! The demo's game: two teams in a square arena, using every part of tickflow the way a game
//! would. This file holds the state and the rules; `world.rs` wires them into a [`Scheduler`].
//!
//! Everything that happens in the game goes through [`Arena::event`], which folds it into a
//! checksum: two runs with the same seed make the same events in the same frames, so they
//! print the same checksum. Wall-clock things (the real-time autosave) stay out of it.

mod boss;
mod world;

pub(crate) use boss::Boss;
pub(crate) use world::{build, BossMode, Rebind};

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg32;
use tickflow::prelude::*;
use tickflow::FLICKS_PER_SECOND;

/// Half the side of the square arena, in millimetres (a 1 km square).
const HALF_SIDE: i64 = 500_000;
/// Walking speed, mm/s.
const SPEED: i64 = 12_000;
/// Firing range (Manhattan distance), mm.
const RANGE: i64 = 300_000;
/// Projectile speed, mm per ms (1 km/s).
const PROJECTILE_SPEED: i64 = 1_000;
/// Hit points of a new actor.
const HP: i32 = 100;
/// Ability charges an actor can hold.
const MAX_CHARGES: u8 = 3;

/// One actor. Dead actors keep their slot (ids are never reused), so an id in a queued
/// event or a projectile in flight can always be checked.
#[derive(Clone, Debug)]
pub(crate) struct Actor {
    pos: [i64; 2],
    vel: [i64; 2],
    hp: i32,
    team: u8,
    alive: bool,
    dying: bool,
    charges: u8,
    target: Option<u32>,
}

/// What happened, for the summary.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stats {
    pub(crate) spawned: u64,
    pub(crate) deaths: u64,
    pub(crate) shots: u64,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    pub(crate) poison_ticks: u64,
    pub(crate) recharges: u64,
    pub(crate) waves: u64,
    pub(crate) lead_changes: u64,
}

/// Kinds of events in the checksum.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
enum Event {
    Spawn = 1,
    Fire,
    Hit,
    Miss,
    Poison,
    Death,
    Wave,
    Lead,
}

/// The game state (`C` of the scheduler). `Clone` so that a rollback can keep a copy.
#[derive(Clone)]
pub(crate) struct Arena {
    actors: Vec<Actor>,
    /// Living actors per team, in spawn order (deterministic target picks).
    rosters: [Vec<u32>; 2],
    rng: Pcg32,
    /// Queues tick functions, timers and latent actions from inside callbacks.
    commands: Commands<Arena>,
    dying: Vec<u32>,
    next_shot: u64,
    /// Projectiles in flight: shot id (the latent action's uuid) → (shooter, target). Kept
    /// here, not in the completion closure, so a restored world can bind completions again
    /// from the key alone.
    shots: BTreeMap<u64, (u32, u32)>,
    /// The boss script, when it runs as a tick function (`BossMode::Ticks`).
    boss: Option<Boss>,
    leader: Option<u8>,
    /// The frame being run, set by the main loop (callbacks stamp their events with it).
    pub(crate) frame: u64,
    pub(crate) stats: Stats,
    checksum: u64,
}

/// The owner id of an actor: everything an actor owns goes when it dies.
pub(crate) fn owner(id: u32) -> OwnerId {
    OwnerId::new(u64::from(id))
}

impl Arena {
    pub(crate) fn new(seed: u64, commands: Commands<Arena>) -> Arena {
        Arena {
            actors: Vec::new(),
            rosters: [Vec::new(), Vec::new()],
            rng: Pcg32::seed_from_u64(seed),
            commands,
            dying: Vec::new(),
            next_shot: 0,
            shots: BTreeMap::new(),
            boss: None,
            leader: None,
            frame: 0,
            stats: Stats::default(),
            checksum: 0xcbf2_9ce4_8422_2325,
        }
    }

    /// Folds one event into the checksum (FNV-1a over its words).
    fn event(&mut self, kind: Event, a: u64, b: u64) {
        for word in [self.frame, kind as u64, a, b] {
            for byte in word.to_le_bytes() {
                self.checksum = (self.checksum ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
            }
        }
    }

    /// The checksum of every event so far and of where the living actors stand now.
    pub(crate) fn checksum(&self) -> u64 {
        let mut h = self.checksum;
        for a in self.actors.iter().filter(|a| a.alive) {
            for w in [a.pos[0], a.pos[1], i64::from(a.hp)] {
                h = (h ^ w as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        h
    }

    pub(crate) fn alive(&self) -> usize {
        self.rosters[0].len() + self.rosters[1].len()
    }

    /// The team with fewer living actors (reinforcements go there).
    fn weaker_team(&self) -> u8 {
        u8::from(self.rosters[1].len() < self.rosters[0].len())
    }

    /// Adds an actor and queues its tick functions and timers; works between frames and from
    /// any callback (spawned mid-frame, its functions run later in the same frame).
    pub(crate) fn spawn_actor(&mut self, team: u8) {
        let id = self.actors.len() as u32;
        let pos = [
            self.rng.random_range(-HALF_SIDE..HALF_SIDE),
            self.rng.random_range(-HALF_SIDE..HALF_SIDE),
        ];
        self.actors.push(Actor {
            pos,
            vel: [0, 0],
            hp: HP,
            team,
            alive: true,
            dying: false,
            charges: 1,
            target: None,
        });
        self.rosters[usize::from(team)].push(id);
        let owner = Some(owner(id));
        self.commands.add_tick(
            TickSettings {
                owner,
                name: format!("move {id}"),
                ..TickSettings::default()
            },
            move_fn(id),
        );
        // Think intervals of 0.15..0.25 s spread the actors' thinking over the frames.
        let interval = Span::from_millis(150 + 10 * u64::from(self.rng.random_range(0..=10u32)));
        self.commands.add_tick(
            TickSettings {
                owner,
                interval,
                name: format!("think {id}"),
                ..TickSettings::default()
            },
            think_fn(id),
        );
        // The ability recharge (a looping timer with `CatchUp::Once`: after a hitch an actor
        // gets one charge back, not a burst of them), armed at the next boundary.
        let period = Span::from_millis(1_500 + 100 * (u64::from(id) % 16));
        self.commands.timers(move |timers| {
            timers
                .every(period)
                .catch_up(CatchUp::Once)
                .owner(self::owner(id))
                .name("recharge")
                .call(recharge_fn(id));
        });
        self.stats.spawned += 1;
        self.event(Event::Spawn, id.into(), team.into());
    }

    /// PrePhysics, every frame: walk.
    fn step(&mut self, id: u32, dt: Span) {
        let a = &mut self.actors[id as usize];
        let dt = dt.flicks() as i64;
        let per_s = FLICKS_PER_SECOND as i64;
        a.pos[0] += a.vel[0] * dt / per_s;
        a.pos[1] += a.vel[1] * dt / per_s;
    }

    /// PrePhysics, every 0.15..0.25 s: pick a target, walk towards it, maybe fire.
    fn think(&mut self, id: u32) {
        let me = &self.actors[id as usize];
        let enemies = &self.rosters[usize::from(1 - me.team)];
        if enemies.is_empty() {
            self.actors[id as usize].vel = [0, 0];
            return;
        }
        let target = match me.target {
            Some(t) if self.actors[t as usize].alive => t,
            _ => enemies[self.rng.random_range(0..enemies.len() as u32) as usize],
        };
        let there = self.actors[target as usize].pos;
        let me = &mut self.actors[id as usize];
        me.target = Some(target);
        let d = [there[0] - me.pos[0], there[1] - me.pos[1]];
        let dist = d[0].abs() + d[1].abs();
        if dist > 0 {
            me.vel = [d[0] * SPEED / dist, d[1] * SPEED / dist];
        }
        if me.charges > 0 && dist < RANGE && self.rng.random_ratio(1, 2) {
            self.actors[id as usize].charges -= 1;
            self.fire(id, target, dist);
        }
    }

    /// A projectile is a latent Delay owned by the shooter: if the shooter dies first, its
    /// projectiles vanish with it.
    fn fire(&mut self, id: u32, target: u32, dist: i64) {
        let shot = self.next_shot;
        self.next_shot += 1;
        self.stats.shots += 1;
        self.event(Event::Fire, id.into(), target.into());
        let flight = Span::from_millis(50 + (dist / PROJECTILE_SPEED) as u64);
        self.shots.insert(shot, (id, target));
        self.commands.delay(owner(id), shot, flight, land_fn(shot));
    }

    fn land(&mut self, shot: u64) {
        let Some((_, target)) = self.shots.remove(&shot) else {
            return;
        };
        if !self.actors[target as usize].alive || self.actors[target as usize].dying {
            self.stats.misses += 1;
            self.event(Event::Miss, target.into(), 0);
            return;
        }
        self.stats.hits += 1;
        let damage = self.rng.random_range(10..=20);
        self.event(Event::Hit, target.into(), damage as u64);
        if self.rng.random_ratio(1, 4) {
            // Damage over time: a looping timer with `times(4)`, owned by the victim (it goes
            // with the victim if the victim dies first).
            self.commands.timers(move |timers| {
                timers
                    .every(secs(0.5))
                    .times(4)
                    .owner(owner(target))
                    .name("poison")
                    .call(poison_fn(target));
            });
        }
        self.damage(target, damage);
    }

    fn damage(&mut self, id: u32, amount: i32) {
        let a = &mut self.actors[id as usize];
        a.hp -= amount;
        if a.hp <= 0 && !a.dying {
            a.dying = true;
            self.dying.push(id);
        }
    }

    /// A damage-over-time tick (a looping timer with `times(4)`, owned by the victim).
    fn poison_tick(&mut self, id: u32) {
        self.stats.poison_ticks += 1;
        self.event(Event::Poison, id.into(), 0);
        self.damage(id, 3);
    }

    /// The ability cooldown (a looping timer with `CatchUp::Once`: after a hitch an actor gets
    /// one charge back, not a burst of them).
    fn recharge(&mut self, id: u32) {
        let a = &mut self.actors[id as usize];
        if a.charges < MAX_CHARGES {
            a.charges += 1;
            self.stats.recharges += 1;
        }
    }

    /// DuringPhysics, every frame: keep everyone inside the walls.
    fn physics(&mut self) {
        for a in self.actors.iter_mut().filter(|a| a.alive) {
            for k in 0..2 {
                if a.pos[k].abs() > HALF_SIDE {
                    a.pos[k] = a.pos[k].clamp(-HALF_SIDE, HALF_SIDE);
                    a.vel[k] = -a.vel[k];
                }
            }
        }
    }

    /// PostPhysics, after physics: the dead leave, with everything they own.
    fn reap(&mut self) {
        for id in std::mem::take(&mut self.dying) {
            let a = &mut self.actors[id as usize];
            a.alive = false;
            let team = usize::from(a.team);
            self.rosters[team].retain(|&x| x != id);
            // Its projectiles vanish with it (remove_owner drops their latent actions).
            self.shots.retain(|_, &mut (shooter, _)| shooter != id);
            self.commands.remove_owner(owner(id));
            self.stats.deaths += 1;
            self.event(Event::Death, id.into(), team as u64);
        }
    }

    /// The boss script's reinforcements.
    fn wave(&mut self, wave: u64, size: usize) {
        self.stats.waves += 1;
        self.event(Event::Wave, wave, size as u64);
    }

    /// The scoreboard: which team leads.
    fn score(&mut self) {
        let [a, b] = [self.rosters[0].len(), self.rosters[1].len()];
        let leader = (a != b).then_some(u8::from(b > a));
        if leader != self.leader {
            self.leader = leader;
            self.stats.lead_changes += 1;
            self.event(
                Event::Lead,
                leader.map_or(2, u64::from),
                (a as u64) << 32 | b as u64,
            );
        }
    }
}

// The callbacks of actors, timers and projectiles. Each is made from its key alone (an actor
// id, a shot id), so a restored world binds them again by name and owner (see `Rebind`).

/// An actor's movement tick function ("move {id}").
pub(crate) fn move_fn(id: u32) -> impl FnMut(&mut Arena, &mut TickCx<'_, Arena>) {
    move |a, cx| a.step(id, cx.dt())
}

/// An actor's think tick function ("think {id}").
pub(crate) fn think_fn(id: u32) -> impl FnMut(&mut Arena, &mut TickCx<'_, Arena>) {
    move |a, _| a.think(id)
}

/// An actor's ability recharge timer ("recharge").
pub(crate) fn recharge_fn(id: u32) -> impl FnMut(&mut Arena, &mut TimerCx<'_, Arena>) {
    move |a, _| a.recharge(id)
}

/// A poison timer on an actor ("poison").
pub(crate) fn poison_fn(id: u32) -> impl FnMut(&mut Arena, &mut TimerCx<'_, Arena>) {
    move |a, _| a.poison_tick(id)
}

/// A projectile's landing (the completion of latent action `shot`).
pub(crate) fn land_fn(shot: u64) -> impl FnMut(&mut Arena) {
    move |a| a.land(shot)
}
