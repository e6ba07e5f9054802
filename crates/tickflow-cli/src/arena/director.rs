//! The director: what concerns the whole arena, run between the shards' frames on a
//! scheduler of its own. The boss script sends reinforcements to the weaker team; the
//! scoreboard watches who leads. Both read the [`View`] the shards reported.
//!
//! In a deployment this is the service that places new entities (a spawner, a world
//! director); here it runs on the main thread.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg32;
use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::tick::TickBody;
use tickflow::{Tickable, TickableCx};

use super::shard::Spawn;
use super::{fold, Boss, Event, Stats, View, HALF_SIDE};

/// The owner of the boss script (actor ids never reach it).
const BOSS: OwnerId = OwnerId::new(u64::MAX);

/// The director's game state (`C` of its scheduler). `Clone` so that a rollback can keep a
/// copy.
#[derive(Clone)]
pub(crate) struct Board {
    pub(crate) view: Arc<View>,
    rng: Pcg32,
    next_id: u32,
    /// New actors ordered this frame, for the shards.
    pub(crate) orders: Vec<Spawn>,
    /// Team sizes as of the view, plus the actors ordered since.
    counts: [usize; 2],
    leader: Option<u8>,
    pub(crate) frame: u64,
    pub(crate) sum: u64,
    pub(crate) stats: Stats,
    /// The boss script, when it runs as a tick function (`BossMode::Ticks`).
    pub(crate) boss: Option<Boss>,
}

impl Board {
    fn new(seed: u64) -> Board {
        Board {
            view: Arc::default(),
            rng: Pcg32::seed_from_u64(seed),
            next_id: 0,
            orders: Vec::new(),
            counts: [0, 0],
            leader: None,
            frame: 0,
            sum: 0,
            stats: Stats::default(),
            boss: None,
        }
    }

    /// Takes the shards' report of the frame that just ran.
    pub(crate) fn see(&mut self, view: Arc<View>, frame: u64) {
        self.counts = view.team_sizes();
        self.view = view;
        self.frame = frame;
    }

    pub(crate) fn alive(&self) -> usize {
        self.view.alive()
    }

    /// Ids handed out so far.
    pub(crate) fn ids(&self) -> usize {
        self.next_id as usize
    }

    /// The team with fewer actors (reinforcements go there).
    pub(crate) fn weaker_team(&self) -> u8 {
        u8::from(self.counts[1] < self.counts[0])
    }

    /// Orders a new actor for `team` at a random place.
    pub(crate) fn spawn_actor(&mut self, team: u8) {
        let pos = [
            self.rng.random_range(-HALF_SIDE..HALF_SIDE),
            self.rng.random_range(-HALF_SIDE..HALF_SIDE),
        ];
        let id = self.next_id;
        self.next_id += 1;
        self.counts[usize::from(team)] += 1;
        self.orders.push(Spawn { id, team, pos });
    }

    /// The boss script's reinforcements.
    pub(crate) fn wave(&mut self, wave: u64, size: usize) {
        self.stats.waves += 1;
        fold(&mut self.sum, self.frame, Event::Wave, wave, size as u64);
    }

    /// The scoreboard: which team leads.
    fn score(&mut self) {
        let [a, b] = self.view.team_sizes();
        let leader = (a != b).then_some(u8::from(b > a));
        if leader != self.leader {
            self.leader = leader;
            self.stats.lead_changes += 1;
            let sizes = (a as u64) << 32 | b as u64;
            fold(
                &mut self.sum,
                self.frame,
                Event::Lead,
                leader.map_or(2, u64::from),
                sizes,
            );
        }
    }
}

/// The scoreboard, a tickable (it wants `tick(dt)` every frame, nothing more).
struct Scoreboard;

impl Tickable<Board> for Scoreboard {
    fn tick(&mut self, board: &mut Board, _cx: &mut TickableCx<'_, Board>) {
        board.score();
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
    /// As a tick function with its state in the board (`--rollback-test`: tasks cannot be
    /// snapshotted).
    Ticks,
}

/// The boss script as a tick function ("boss").
fn boss_fn() -> impl FnMut(&mut Board, &mut TickCx<'_, Board>) + Send {
    |b: &mut Board, cx: &mut TickCx<Board>| {
        let now = cx.timers().clocks().now(Domain::Game);
        b.boss_step(now)
    }
}

/// The director: its scheduler and board.
pub(crate) struct Director {
    pub(crate) sched: Scheduler<Board>,
    pub(crate) board: Board,
}

impl Director {
    /// A director that orders `actors` actors (half per team) for the first frame.
    pub(crate) fn new(actors: usize, seed: u64, boss: BossMode) -> Director {
        let mut sched = Scheduler::<Board>::new();
        let mut board = Board::new(seed);
        sched.tickables().add(Scoreboard);
        for k in 0..actors {
            board.spawn_actor((k % 2) as u8);
        }
        match boss {
            BossMode::Ticks => {
                board.boss = Some(Boss::new(actors));
                let settings = TickSettings::named("boss").in_group(TickGroup::PostUpdateWork);
                sched.ticks().add(settings, boss_fn());
            }
            BossMode::Task => spawn_boss(&mut sched, actors),
        }
        Director::from_parts(sched, board)
    }

    /// A director from its parts (a new or restored scheduler and board); its frames time
    /// their stages, which the demo's report shows.
    pub(crate) fn from_parts(mut sched: Scheduler<Board>, board: Board) -> Director {
        sched.set_stage_timing(true);
        Director { sched, board }
    }
}

/// The boss script: when a tenth of the starting force has died, it sends a wave of
/// reinforcements to the weaker side, sixteen per frame, then rests.
fn spawn_boss(sched: &mut Scheduler<Board>, actors: usize) {
    let wave_size = (actors / 10).max(1);
    let threshold = actors - actors / 10;
    sched.tasks().spawn(Some(BOSS), move |cx| async move {
        cx.delay(secs(2.0)).await;
        for wave in 1.. {
            cx.until(move |b: &Board| b.alive() <= threshold).await;
            cx.with(|b| b.wave(wave, wave_size));
            for k in 0..wave_size {
                cx.with(|b| b.spawn_actor(b.weaker_team()));
                if k % 16 == 15 {
                    cx.delay(Frames(1)).await;
                }
            }
            cx.delay(secs(3.0)).await;
        }
    });
}

/// Binds the director's callbacks again after a rollback (the boss script starts afresh:
/// its state lives in the board).
pub(crate) fn rebind_director() -> Registry<Board> {
    Registry::new()
        .tick_with("boss", |_| TickBody::serial(boss_fn()))
        .tickable("scoreboard", |_| Scoreboard)
}
