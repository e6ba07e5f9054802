//! An actor's own state, which moves with it, the shard's table of actors, and the
//! [`View`] every shard has of every actor at the start of a frame.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{HALF_SIDE, HP, SPEED};

/// One actor: all its state, which moves with it from shard to shard.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Actor {
    pub(super) pos: [i64; 2],
    pub(super) vel: [i64; 2],
    pub(super) hp: i32,
    pub(super) team: u8,
    pub(super) dying: bool,
    pub(super) charges: u8,
    pub(super) target: Option<u32>,
    /// Its random generator (SplitMix64 state).
    pub(super) rng: u64,
    pub(super) next_shot: u64,
    /// Projectiles in flight: shot number (the latent action's uuid) → target. Kept here, not
    /// in the completion closure, so an import binds completions again from the key alone.
    pub(super) shots: BTreeMap<u64, u32>,
}

impl Actor {
    /// A new actor at `pos`; its generator is seeded from the run's seed and its id.
    pub(crate) fn new(id: u32, team: u8, pos: [i64; 2], seed: u64) -> Actor {
        let mut rng = seed ^ u64::from(id).wrapping_mul(0xa076_1d64_78bd_642f);
        next(&mut rng);
        Actor {
            pos,
            vel: [0, 0],
            hp: HP,
            team,
            dying: false,
            charges: 1,
            target: None,
            rng,
            next_shot: 0,
            shots: BTreeMap::new(),
        }
    }

    /// A hash of where it stands and its hit points, for the checksum.
    pub(super) fn standing(&self, id: u32) -> u64 {
        let mut h = u64::from(id);
        for w in [self.pos[0], self.pos[1], i64::from(self.hp)] {
            h = (h ^ w as u64).wrapping_mul(0x100_0000_01b3);
        }
        h
    }

    /// A number in `0..n` from its generator.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(next(&mut self.rng)) * u128::from(n)) >> 64) as u64
    }
}

/// SplitMix64: small, fast, and its whole state is one `u64` that travels with the actor.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A shard's actors by id, packed in id order: the per-frame passes over them (physics, the
/// report to the director) read only the actors this shard has, and the movement functions,
/// which run in registration order (about id order), read them in memory order. A removal
/// leaves a hole, and the holes are squeezed out once they are a quarter of the table. No
/// rule depends on the order of a pass (each changes one actor, or sums).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Actors {
    list: Vec<(u32, Option<Actor>)>,
    /// Place in `list` by id (`NONE`: not here).
    at: Vec<u32>,
    holes: usize,
    /// `list` is in id order (an actor that arrived from another shard may break it until
    /// the next squeeze).
    sorted: bool,
}

const NONE: u32 = u32::MAX;

impl Actors {
    pub(crate) fn get_mut(&mut self, id: u32) -> Option<&mut Actor> {
        let k = *self.at.get(id as usize)?;
        self.list.get_mut(k as usize)?.1.as_mut()
    }

    pub(crate) fn contains(&self, id: u32) -> bool {
        self.at.get(id as usize).is_some_and(|&k| k != NONE)
    }

    pub(crate) fn insert(&mut self, id: u32, actor: Actor) {
        let i = id as usize;
        if self.at.len() <= i {
            self.at.resize(i + 1, NONE);
        }
        if self.at[i] != NONE {
            self.list[self.at[i] as usize].1 = Some(actor);
            return;
        }
        if self.list.last().is_some_and(|&(last, _)| last > id) {
            self.sorted = false;
        }
        self.at[i] = self.list.len() as u32;
        self.list.push((id, Some(actor)));
    }

    pub(crate) fn remove(&mut self, id: u32) -> Option<Actor> {
        let k = *self.at.get(id as usize)?;
        if k == NONE {
            return None;
        }
        self.at[id as usize] = NONE;
        let actor = self.list[k as usize].1.take();
        self.holes += 1;
        if self.holes * 4 > self.list.len() {
            self.squeeze();
        }
        actor
    }

    /// Drops the holes and puts the table back in id order.
    fn squeeze(&mut self) {
        self.list.retain(|(_, a)| a.is_some());
        if !self.sorted {
            self.list.sort_unstable_by_key(|&(id, _)| id);
            self.sorted = true;
        }
        for (k, &(id, _)) in self.list.iter().enumerate() {
            self.at[id as usize] = k as u32;
        }
        self.holes = 0;
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len() - self.holes
    }

    /// In id order, mostly.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &Actor)> {
        (self.list.iter()).filter_map(|(id, a)| Some((*id, a.as_ref()?)))
    }

    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut Actor> {
        self.list.iter_mut().filter_map(|(_, a)| a.as_mut())
    }
}

/// What every shard knows of every actor at the start of a frame. Rebuilt every frame from
/// what the shards report, so it is kept in flat arrays by id: clearing it is a `memset` of
/// one byte per id, filling it two stores per actor.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct View {
    /// By actor id: where it stands (read only when `flags` says it is there).
    pos: Vec<[i32; 2]>,
    /// By actor id: `HERE`, `ALIVE` (not dying) and `TEAM_1` bits; 0 for an actor not in
    /// the game.
    flags: Vec<u8>,
    /// Living actors per team, by id.
    pub(super) rosters: [Vec<u32>; 2],
}

const HERE: u8 = 1;
const ALIVE: u8 = 2;
const TEAM_1: u8 = 4;

/// How an actor looks to the other shards.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Seen {
    /// Millimetres (the arena fits in `i32`).
    pos: [i32; 2],
    flags: u8,
}

impl Seen {
    pub(crate) fn new(pos: [i64; 2], team: u8, alive: bool) -> Seen {
        let mm = |v: i64| v.clamp(-(HALF_SIDE + SPEED), HALF_SIDE + SPEED) as i32;
        Seen {
            pos: [mm(pos[0]), mm(pos[1])],
            flags: HERE | if alive { ALIVE } else { 0 } | if team == 1 { TEAM_1 } else { 0 },
        }
    }

    pub(crate) fn of(a: &Actor) -> Seen {
        Seen::new(a.pos, a.team, !a.dying)
    }

    pub(crate) fn pos(&self) -> [i64; 2] {
        [i64::from(self.pos[0]), i64::from(self.pos[1])]
    }

    pub(crate) fn alive(&self) -> bool {
        self.flags & ALIVE != 0
    }

    fn team(&self) -> u8 {
        u8::from(self.flags & TEAM_1 != 0)
    }
}

impl View {
    /// The view of these actors (any order); `ids` is how many ids were handed out.
    pub(crate) fn new(ids: usize, actors: impl IntoIterator<Item = (u32, Seen)>) -> View {
        let mut view = View::default();
        view.refill(ids, actors);
        view
    }

    /// Makes this the view of `actors`, in the memory it has.
    pub(crate) fn refill(&mut self, ids: usize, actors: impl IntoIterator<Item = (u32, Seen)>) {
        self.flags.clear();
        self.flags.resize(ids, 0);
        self.pos.resize(ids, [0, 0]);
        self.rosters.iter_mut().for_each(Vec::clear);
        for (id, s) in actors {
            let i = id as usize;
            if self.flags.len() <= i {
                self.flags.resize(i + 1, 0);
                self.pos.resize(i + 1, [0, 0]);
            }
            self.pos[i] = s.pos;
            self.flags[i] = s.flags;
            if s.alive() {
                self.rosters[usize::from(s.team())].push(id);
            }
        }
        // Shards report in id order (mostly): usually there is nothing to sort.
        for roster in &mut self.rosters {
            if !roster.is_sorted() {
                roster.sort_unstable();
            }
        }
    }

    pub(super) fn get(&self, id: u32) -> Option<Seen> {
        let i = id as usize;
        let flags = *self.flags.get(i)?;
        (flags & HERE != 0).then(|| Seen {
            pos: self.pos[i],
            flags,
        })
    }

    pub(crate) fn alive(&self) -> usize {
        self.rosters[0].len() + self.rosters[1].len()
    }

    pub(crate) fn team_sizes(&self) -> [usize; 2] {
        [self.rosters[0].len(), self.rosters[1].len()]
    }

    /// FNV-1a over every actor's id, position and flags.
    pub(crate) fn hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for (id, s) in (0..self.flags.len() as u32).filter_map(|id| Some((id, self.get(id)?))) {
            let words: [i64; 4] = [id.into(), s.pos[0].into(), s.pos[1].into(), s.flags.into()];
            for w in words {
                h = (h ^ w as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        h
    }

    /// Where actor `id` is, if it has not left the game.
    pub(crate) fn pos_of(&self, id: u32) -> Option<[i64; 2]> {
        self.get(id).map(|s| s.pos())
    }
}
