//! The demo's game: two teams in a square arena, using every part of tickflow the way a game
//! would, split by position over one or more shards (schedulers) that run in lockstep.
//!
//! The rules are written so that where an actor runs cannot change what happens, which is
//! what lets `--shards 4` print the checksum of the one-shard run:
//!
//! - An actor's callbacks change only its own state. What they read of others comes from the
//!   [`View`] of the frame's start; what they do to others (a hit) goes out as a message, and
//!   messages are applied between frames in a fixed order (`shard.rs`).
//! - Each actor has its own random generator, which moves with it.
//! - Events are folded into the checksum by addition, so their order across actors does not
//!   matter; each event's hash includes its frame.
//! - What concerns the whole arena (reinforcements, the scoreboard) is the director's, between
//!   the shards' frames (`director.rs`).
//!
//! This file holds an actor, a shard's game state and the rules; `shard.rs` wires them into
//! a scheduler, `cluster.rs` runs the shards and moves actors between them.

mod actor;
mod boss;
mod cluster;
mod director;
mod mailbox;
mod processes;
mod remote;
mod shard;
mod wire;

pub(crate) use cluster::{Cluster, Moved};
pub(crate) use director::BossMode;
pub(crate) use processes::{Fault, Processes};
pub(crate) use remote::serve;
pub(crate) use shard::rebind;

use actor::{Actor, Actors};
pub(crate) use actor::{Seen, View};
use boss::Boss;

use std::sync::Arc;

use tickflow::prelude::*;
use tickflow::FLICKS_PER_SECOND;

/// Half the side of the square arena, in millimetres (a 1 km square).
pub(crate) const HALF_SIDE: i64 = 500_000;
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

/// What happened, for the summary.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
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
    pub(crate) migrations: u64,
}

impl Stats {
    pub(crate) fn add(&mut self, o: &Stats) {
        self.spawned += o.spawned;
        self.deaths += o.deaths;
        self.shots += o.shots;
        self.hits += o.hits;
        self.misses += o.misses;
        self.poison_ticks += o.poison_ticks;
        self.recharges += o.recharges;
        self.waves += o.waves;
        self.lead_changes += o.lead_changes;
        self.migrations += o.migrations;
    }
}

/// Kinds of events in the checksum.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub(crate) enum Event {
    Spawn = 1,
    Fire,
    Hit,
    Miss,
    Poison,
    Death,
    Wave,
    Lead,
}

/// Adds one event to a checksum: FNV-1a over its words, summed (so the order of events does
/// not matter, and every shard can keep its own sum).
pub(crate) fn fold(sum: &mut u64, frame: u64, kind: Event, a: u64, b: u64) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for word in [frame, kind as u64, a, b] {
        for byte in word.to_le_bytes() {
            h = (h ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        }
    }
    *sum = sum.wrapping_add(h);
}

/// A hit landed by one shard's actor on another actor, wherever that one is.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub(crate) struct Hit {
    pub(crate) target: u32,
    pub(crate) shooter: u32,
    pub(crate) shot: u64,
    pub(crate) damage: i32,
    pub(crate) poison: bool,
}

/// A shard's game state (`C` of its scheduler). `Clone` so that a rollback can keep a copy.
///
/// Serialized in a shard process's image, between frames: the view and the hits to
/// deliver are a frame's inputs and outputs, not state, and are not kept.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Arena {
    /// The actors this shard runs, by id.
    pub(crate) actors: Actors,
    #[serde(skip)]
    pub(crate) view: Arc<View>,
    /// Hits to deliver after this frame.
    #[serde(skip)]
    pub(crate) outbox: Vec<Hit>,
    /// Actors that reached 0 hit points (the reap checks they are still here and dying).
    pub(crate) dying: Vec<u32>,
    /// The frame being run (callbacks stamp their events with it).
    pub(crate) frame: u64,
    pub(crate) stats: Stats,
    /// This shard's events (see [`fold`]).
    pub(crate) sum: u64,
}

/// The owner id of an actor: everything an actor owns goes when it dies, or moves with it.
pub(crate) fn owner(id: u32) -> OwnerId {
    OwnerId::new(u64::from(id))
}

impl Arena {
    pub(crate) fn new() -> Arena {
        Arena {
            actors: Actors::default(),
            view: Arc::default(),
            outbox: Vec::new(),
            dying: Vec::new(),
            frame: 0,
            stats: Stats::default(),
            sum: 0,
        }
    }

    fn event(&mut self, kind: Event, a: u64, b: u64) {
        fold(&mut self.sum, self.frame, kind, a, b);
    }

    /// The sum of where this shard's living actors stand and their hit points.
    pub(crate) fn standing(&self) -> u64 {
        (self.actors.iter()).fold(0, |sum, (id, a)| sum.wrapping_add(a.standing(id)))
    }

    /// PrePhysics, every frame: walk.
    fn step(&mut self, id: u32, dt: Span) {
        let Some(a) = self.actors.get_mut(id) else {
            return;
        };
        let dt = dt.flicks() as i64;
        let per_s = FLICKS_PER_SECOND as i64;
        a.pos[0] += a.vel[0] * dt / per_s;
        a.pos[1] += a.vel[1] * dt / per_s;
    }

    /// PrePhysics, every 0.15..0.25 s: pick a target, walk towards it, maybe fire.
    fn think(&mut self, id: u32, cmds: &Commands<Arena>) {
        // The view and the actors are separate fields: no reference count changes per call.
        let view = &*self.view;
        let Some(me) = self.actors.get_mut(id) else {
            return;
        };
        let enemies = &view.rosters[usize::from(1 - me.team)];
        if enemies.is_empty() {
            me.vel = [0, 0];
            return;
        }
        let target = match me.target {
            Some(t) if view.get(t).is_some_and(|s| s.alive()) => t,
            _ => enemies[me.below(enemies.len() as u64) as usize],
        };
        let there = view.get(target).expect("on the roster").pos();
        me.target = Some(target);
        let d = [there[0] - me.pos[0], there[1] - me.pos[1]];
        let dist = d[0].abs() + d[1].abs();
        if dist > 0 {
            me.vel = [d[0] * SPEED / dist, d[1] * SPEED / dist];
        }
        if me.charges > 0 && dist < RANGE && me.below(2) == 0 {
            me.charges -= 1;
            self.fire(id, target, dist, cmds);
        }
    }

    /// A projectile is a latent Delay owned by the shooter: if the shooter dies first, its
    /// projectiles vanish with it; if it moves to another shard, they move with it.
    fn fire(&mut self, id: u32, target: u32, dist: i64, cmds: &Commands<Arena>) {
        let me = self.actors.get_mut(id).expect("the shooter is here");
        let shot = me.next_shot;
        me.next_shot += 1;
        me.shots.insert(shot, target);
        self.stats.shots += 1;
        self.event(Event::Fire, id.into(), target.into());
        let flight = Span::from_millis(50 + (dist / PROJECTILE_SPEED) as u64);
        cmds.latent()
            .delay(owner(id), shot, flight, land_fn(id, shot));
    }

    /// A projectile lands (the completion of the shooter's latent action `shot`): a hit if
    /// the target was alive at the frame's start, delivered after the frame.
    fn land(&mut self, id: u32, shot: u64) {
        let Some(me) = self.actors.get_mut(id) else {
            return;
        };
        let Some(target) = me.shots.remove(&shot) else {
            return;
        };
        if !self.view.get(target).is_some_and(|s| s.alive()) {
            self.stats.misses += 1;
            self.event(Event::Miss, target.into(), 0);
            return;
        }
        let damage = 10 + me.below(11) as i32;
        let poison = me.below(4) == 0;
        self.stats.hits += 1;
        self.event(Event::Hit, target.into(), damage as u64);
        self.outbox.push(Hit {
            target,
            shooter: id,
            shot,
            damage,
            poison,
        });
    }

    /// Takes hit points; an actor at 0 is dying and leaves at the next reap.
    pub(crate) fn damage(&mut self, id: u32, amount: i32) {
        if let Some(a) = self.actors.get_mut(id) {
            a.hp -= amount;
            if a.hp <= 0 && !a.dying {
                a.dying = true;
                self.dying.push(id);
            }
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
        if let Some(a) = self.actors.get_mut(id) {
            if a.charges < MAX_CHARGES {
                a.charges += 1;
                self.stats.recharges += 1;
            }
        }
    }

    /// DuringPhysics, every frame: keep everyone inside the walls.
    fn physics(&mut self) {
        for a in self.actors.values_mut() {
            for k in 0..2 {
                if a.pos[k].abs() > HALF_SIDE {
                    a.pos[k] = a.pos[k].clamp(-HALF_SIDE, HALF_SIDE);
                    a.vel[k] = -a.vel[k];
                }
            }
        }
    }

    /// PostPhysics, after physics: the dead leave, with everything they own
    /// (`remove_owner`: tick functions, timers, projectiles in flight).
    fn reap(&mut self, cmds: &Commands<Arena>) {
        let mut dead = std::mem::take(&mut self.dying);
        // Deaths are summed into the checksum: their order does not matter, but each once.
        dead.sort_unstable();
        dead.dedup();
        dead.retain(|&id| self.actors.get_mut(id).is_some_and(|a| a.dying));
        for id in dead {
            let a = self.actors.remove(id).expect("listed");
            cmds.remove_owner(owner(id));
            self.stats.deaths += 1;
            self.event(Event::Death, id.into(), a.team.into());
        }
    }
}

// The callbacks of actors, timers and projectiles. Each is made from its key alone (an actor
// id, a shot number), so an import or a restore binds them again by name and owner (see
// `rebind`).

/// An actor's movement tick function ("move {id}").
pub(crate) fn move_fn(id: u32) -> impl FnMut(&mut Arena, &mut TickCx<'_, Arena>) {
    move |a, cx| a.step(id, cx.dt())
}

/// An actor's think tick function ("think {id}").
pub(crate) fn think_fn(id: u32) -> impl FnMut(&mut Arena, &mut TickCx<'_, Arena>) {
    move |a, cx| a.think(id, cx.commands())
}

/// An actor's ability recharge timer ("recharge").
pub(crate) fn recharge_fn(id: u32) -> impl FnMut(&mut Arena, &mut TimerCx<'_, Arena>) {
    move |a, _| a.recharge(id)
}

/// A poison timer on an actor ("poison").
pub(crate) fn poison_fn(id: u32) -> impl FnMut(&mut Arena, &mut TimerCx<'_, Arena>) {
    move |a, _| a.poison_tick(id)
}

/// A projectile's landing (the completion of the shooter's latent action `shot`).
pub(crate) fn land_fn(id: u32, shot: u64) -> impl FnMut(&mut Arena, &mut LatentCx<'_, Arena>) {
    move |a, _| a.land(id, shot)
}
