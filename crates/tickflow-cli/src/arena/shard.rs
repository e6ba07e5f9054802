//! One shard: a scheduler running the actors of one strip of the arena, what it does between
//! frames (take arrivals, spawns and hits in; let actors that walked out of its strip go),
//! and the resolver that binds an actor's callbacks again after a move or a restore.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tickflow::latent::{Completion, LatentInfo};
use tickflow::prelude::*;
use tickflow::snapshot::{OwnerSnapshot, Registry};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::timer::{TimerCallback, TimerInfo};
use tickflow::FrameReport;

use super::{
    fold, land_fn, move_fn, owner, poison_fn, recharge_fn, think_fn, Actor, Arena, Event, Hit,
    Seen, View, HALF_SIDE,
};

/// A new actor, placed by the director.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Spawn {
    pub(crate) id: u32,
    pub(crate) team: u8,
    pub(crate) pos: [i64; 2],
}

/// What a shard takes in before a frame.
#[derive(Clone, Debug, Default)]
pub(crate) struct Inbound {
    /// Actors walking in, as the bytes another shard sent (postcard).
    pub(crate) arrivals: Vec<Vec<u8>>,
    pub(crate) spawns: Vec<Spawn>,
    pub(crate) hits: Vec<Hit>,
    pub(crate) view: Arc<View>,
    /// The list the shard reported its actors in last time, emptied, to fill again.
    pub(crate) seen: Vec<(u32, Seen)>,
}

/// What a shard gives out after a frame.
#[derive(Debug, Default)]
pub(crate) struct Outbound {
    pub(crate) report: FrameReport,
    pub(crate) hits: Vec<Hit>,
    /// Where each of its actors stands after the frame (the leaving ones too).
    pub(crate) seen: Vec<(u32, Seen)>,
    /// Actors leaving: (destination shard, actor id, bytes).
    pub(crate) departures: Vec<(usize, u32, Vec<u8>)>,
    /// Time spent exporting and encoding the departures, and decoding and importing the
    /// arrivals taken in before this frame.
    pub(crate) moving: Duration,
}

/// An actor on the wire: its own state and everything it owns in the scheduler.
#[derive(Serialize, Deserialize)]
pub(crate) struct Departure {
    id: u32,
    actor: Actor,
    owned: OwnerSnapshot,
}

/// The bytes of a parcel that decodes but carries nothing of the actor: what a fault run
/// delivers a second time, or from a stale epoch, for the receiver to refuse.
pub(crate) fn placeholder_departure(id: u32) -> Vec<u8> {
    let d = Departure {
        id,
        actor: Actor::new(id, 0, [0, 0], 0),
        owned: Scheduler::<Arena>::new().export_owner(owner(id)),
    };
    postcard::to_stdvec(&d).expect("plain data encodes")
}

/// The standing (see `Actor::standing`) of an actor on its way between shards.
pub(crate) fn standing_in_transit(bytes: &[u8]) -> u64 {
    let d: Departure = postcard::from_bytes(bytes).expect("a shard's own encoding");
    d.actor.standing(d.id)
}

/// The shard whose strip holds `pos`: `shards` strips of equal width, west to east.
pub(crate) fn region(pos: [i64; 2], shards: usize) -> usize {
    let x = (pos[0].clamp(-HALF_SIDE, HALF_SIDE) + HALF_SIDE) as u128;
    ((x * shards as u128) / (2 * HALF_SIDE as u128 + 1)) as usize
}

type SystemFn = Box<dyn FnMut(&mut Arena, &mut TickCx<'_, Arena>) + Send>;

/// The shard's system tick functions by name; the build and the resolver take them here.
fn system(name: &str) -> Option<SystemFn> {
    Some(match name {
        // Stamps the frame number on the shard's events before anything else runs.
        "clock" => Box::new(|a: &mut Arena, cx: &mut TickCx<Arena>| a.frame = cx.clocks().frame()),
        "physics" => Box::new(|a: &mut Arena, _: &mut TickCx<Arena>| a.physics()),
        "reap" => Box::new(|a: &mut Arena, cx: &mut TickCx<Arena>| a.reap(cx.commands())),
        _ => return None,
    })
}

/// One shard: its scheduler and the game state it runs.
pub(crate) struct Shard {
    pub(crate) index: usize,
    pub(crate) shards: usize,
    /// The run's seed (new actors' generators start from it).
    seed: u64,
    pub(crate) sched: Scheduler<Arena>,
    pub(crate) arena: Arena,
    /// Leaving actors are frozen (`freeze_owner`), not exported: a shard process commits or
    /// aborts each once the registry says where it went.
    pub(crate) two_phase: bool,
}

impl Shard {
    /// Shard `index` of `shards`, with its systems and no actors.
    pub(crate) fn new(index: usize, shards: usize, seed: u64) -> Shard {
        let mut sched = Scheduler::<Arena>::new();
        let arena = Arena::new();
        let mut add = |settings: TickSettings| {
            let f = system(&settings.name).expect("a system of the shard");
            sched.ticks().add(settings, f)
        };
        add(TickSettings::named("clock").first_in_group());
        let physics = add(TickSettings::named("physics").in_group(TickGroup::DuringPhysics));
        // PostPhysics work that must see where physics left everyone.
        let reap = add(TickSettings::named("reap").in_group(TickGroup::PostPhysics));
        sched
            .ticks()
            .add_prerequisite(reap, physics)
            .expect("no cycle: physics depends on nothing");
        Shard::from_parts(index, shards, seed, sched, arena)
    }

    /// A shard from its parts (a restored scheduler and game state).
    pub(crate) fn from_parts(
        index: usize,
        shards: usize,
        seed: u64,
        mut sched: Scheduler<Arena>,
        arena: Arena,
    ) -> Shard {
        // The demo's report shows where each frame's time went, stage by stage.
        sched.set_stage_timing(true);
        Shard {
            index,
            shards,
            seed,
            sched,
            arena,
            two_phase: false,
        }
    }

    /// Takes in what the director routed here, runs one frame of `dt`, and gives out what
    /// it produced.
    pub(crate) fn round(&mut self, mut inbound: Inbound, dt: Span) -> Outbound {
        let mut seen = std::mem::take(&mut inbound.seen);
        let mut moving = self.take_in(inbound);
        let report = self.sched.tick(dt, &mut self.arena);
        seen.clear();
        let start = Instant::now();
        let departures = self.let_go(&mut seen);
        if !departures.is_empty() {
            moving += start.elapsed();
        }
        seen.extend((self.arena.actors.iter()).map(|(id, a)| (id, Seen::of(a))));
        Outbound {
            report,
            hits: std::mem::take(&mut self.arena.outbox),
            seen,
            departures,
            moving,
        }
    }

    /// Takes in what the director routed here without running a frame (a shard process's
    /// last step: actors still arriving are in the game).
    pub(crate) fn take_in_only(&mut self, inbound: Inbound) {
        self.take_in(inbound);
    }

    /// Arrivals, then spawns, then hits, each in a fixed order; returns the time the
    /// arrivals took.
    fn take_in(&mut self, inbound: Inbound) -> Duration {
        self.arena.view = inbound.view;
        let start = Instant::now();
        let mut arrivals: Vec<Departure> = (inbound.arrivals.iter())
            .map(|bytes| postcard::from_bytes(bytes).expect("a shard's own encoding"))
            .collect();
        arrivals.sort_by_key(|d| d.id);
        let arrived = !arrivals.is_empty();
        for d in arrivals {
            let map = (self.sched.import_owner(&d.owned, &mut rebind()))
                .expect("an actor's callbacks are bound by name");
            debug_assert!(map.unlinked_prerequisites().is_empty());
            if d.actor.dying {
                self.arena.dying.push(d.id);
            }
            self.arena.actors.insert(d.id, d.actor);
        }
        let moving = if arrived {
            start.elapsed()
        } else {
            Duration::ZERO
        };
        let mut spawns = inbound.spawns;
        spawns.sort_by_key(|s| s.id);
        for s in spawns {
            self.spawn(s);
        }
        let mut hits = inbound.hits;
        hits.sort_unstable();
        for h in hits {
            self.hit(h);
        }
        moving
    }

    /// Adds an actor and its tick functions and timers (between frames).
    fn spawn(&mut self, s: Spawn) {
        let mut actor = Actor::new(s.id, s.team, s.pos, self.seed);
        // Think intervals of 0.15..0.25 s spread the actors' thinking over the frames.
        let interval = Span::from_millis(150 + 10 * actor.below(11));
        self.arena.actors.insert(s.id, actor);
        let (id, owner) = (s.id, Some(owner(s.id)));
        let settings = TickSettings {
            owner,
            name: format!("move {id}"),
            ..TickSettings::default()
        };
        self.sched.ticks().add(settings, move_fn(id));
        let settings = TickSettings {
            owner,
            interval,
            name: format!("think {id}"),
            ..TickSettings::default()
        };
        self.sched.ticks().add(settings, think_fn(id));
        // The ability recharge: a looping timer with `CatchUp::Once` (after a hitch an actor
        // gets one charge back, not a burst of them).
        let period = Span::from_millis(1_500 + 100 * (u64::from(id) % 16));
        (self.sched.timers().every(period))
            .catch_up(CatchUp::Once)
            .owner(super::owner(id))
            .name("recharge")
            .call(recharge_fn(id));
        self.arena.stats.spawned += 1;
        let frame = self.arena.frame;
        fold(
            &mut self.arena.sum,
            frame,
            Event::Spawn,
            id.into(),
            s.team.into(),
        );
    }

    /// A hit from anywhere lands on one of this shard's actors.
    fn hit(&mut self, h: Hit) {
        if !self.arena.actors.contains(h.target) {
            return; // left the game in the meantime
        }
        if h.poison {
            // Damage over time: a looping timer with `times(4)`, owned by the victim (it goes
            // with the victim wherever it goes, and leaves when it dies).
            (self.sched.timers().every(secs(0.5)))
                .times(4)
                .owner(owner(h.target))
                .name("poison")
                .call(poison_fn(h.target));
        }
        self.arena.damage(h.target, h.damage);
    }

    /// Exports every actor that walked out of this shard's strip, as (destination, bytes),
    /// and adds where each stood to `seen`.
    fn let_go(&mut self, seen: &mut Vec<(u32, Seen)>) -> Vec<(usize, u32, Vec<u8>)> {
        if self.shards == 1 {
            return Vec::new();
        }
        let leaving: Vec<(u32, usize)> = (self.arena.actors.iter())
            .map(|(id, a)| (id, region(a.pos, self.shards)))
            .filter(|&(_, to)| to != self.index)
            .collect();
        let mut out = Vec::with_capacity(leaving.len());
        for (id, to) in leaving {
            let actor = self.arena.actors.remove(id).expect("listed");
            let owned = if self.two_phase {
                (self.sched.freeze_owner(owner(id))).expect("an actor leaves once")
            } else {
                self.sched.export_owner(owner(id))
            };
            debug_assert!(owned.is_complete(), "an actor has no tasks");
            seen.push((id, Seen::of(&actor)));
            let d = Departure { id, actor, owned };
            let bytes = postcard::to_stdvec(&d).expect("plain data encodes");
            self.arena.stats.migrations += 1;
            out.push((to, id, bytes));
        }
        out
    }
}

/// Binds a shard's callbacks again (after an actor moved in, or a rollback): systems and
/// actor functions by name, timers by name and owner, projectiles by their key.
pub(crate) fn rebind() -> Registry<Arena> {
    Registry::new()
        .other_ticks(|info: &TickInfo| {
            let name = info.settings.name.as_str();
            let actor = |prefix: &str| name.strip_prefix(prefix)?.parse::<u32>().ok();
            if let Some(id) = actor("move ") {
                Some(TickBody::serial(move_fn(id)))
            } else if let Some(id) = actor("think ") {
                Some(TickBody::serial(think_fn(id)))
            } else {
                system(name).map(TickBody::serial)
            }
        })
        .other_timers(|info: &TimerInfo| -> Option<TimerCallback<Arena>> {
            let id = u32::try_from(info.owner?.get()).ok()?;
            match info.name.as_deref()? {
                "recharge" => Some(Box::new(recharge_fn(id))),
                "poison" => Some(Box::new(poison_fn(id))),
                _ => None,
            }
        })
        .other_latent(|info: &LatentInfo| -> Option<Completion<Arena>> {
            let id = u32::try_from(info.owner.get()).ok()?;
            Some(Box::new(land_fn(id, info.uuid)))
        })
}
