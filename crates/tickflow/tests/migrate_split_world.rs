//! Property test: a world split over two schedulers in lockstep, with owners moving between
//! them at random frames (and sometimes out of and back into the same one), makes the same
//! calls with the same arguments in the same per-owner order as the same world on one
//! scheduler. Both worlds get the same random operations: timers of every kind set, cleared,
//! paused and resumed, tick functions (with intervals, dilation, groups and prerequisites on
//! the owner's own functions) added, removed, enabled, disabled and given new intervals, tickables and latent delays added, and
//! frames of random length, hitches included. Handles held by the game are fixed up
//! through each import's `HandleMap`, so stale mappings show as missing calls.

use std::collections::HashMap;

use proptest::prelude::*;
use tickflow::latent::{Completion, LatentInfo};
use tickflow::prelude::*;
use tickflow::snapshot::{HandleMap, OwnerSnapshot, Registry};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::{TimerBuilder, TimerCallback, TimerInfo};
use tickflow::{Tickable, TickableCx};

const OWNERS: u64 = 4;

#[derive(Clone, Debug)]
enum Op {
    Timer {
        owner: u64,
        delay: u64,
        period: Option<u64>,
        domain: u8,
        catch_up: u8,
        times: Option<u64>,
    },
    ClearTimer(u64, usize),
    PauseTimer(u64, usize),
    Tick {
        owner: u64,
        interval: u64,
        group: u8,
        dilated: bool,
        after_last: bool,
    },
    RemoveTick(u64, usize),
    /// A new interval (0: every frame) for one of the owner's functions.
    SetInterval(u64, usize, u64),
    Enable(u64, usize, bool),
    Tickable(u64),
    Latent(u64, u64),
    /// Export the owner and import it into the other scheduler (or the same one).
    Move(u64, bool),
    /// A frame of this many milliseconds of game time (real time runs at 1.5×).
    Frame(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let owner = 1..=OWNERS;
    prop_oneof![
        3 => (owner.clone(), 0..900u64, prop::option::weighted(0.5, 0..500u64), 0..3u8, 0..3u8, prop::option::weighted(0.2, 1..4u64))
            .prop_map(|(owner, delay, period, domain, catch_up, times)| Op::Timer { owner, delay, period, domain, catch_up, times }),
        1 => (owner.clone(), 0..8usize).prop_map(|(o, k)| Op::ClearTimer(o, k)),
        1 => (owner.clone(), 0..8usize).prop_map(|(o, k)| Op::PauseTimer(o, k)),
        2 => (owner.clone(), prop_oneof![Just(0u64), 20..400u64], 0..3u8, prop::bool::weighted(0.2), prop::bool::weighted(0.4))
            .prop_map(|(owner, interval, group, dilated, after_last)| Op::Tick { owner, interval, group, dilated, after_last }),
        1 => (owner.clone(), 0..6usize).prop_map(|(o, k)| Op::RemoveTick(o, k)),
        1 => (owner.clone(), 0..6usize, prop_oneof![Just(0u64), 20..400u64]).prop_map(|(o, k, ms)| Op::SetInterval(o, k, ms)),
        1 => (owner.clone(), 0..6usize, any::<bool>()).prop_map(|(o, k, on)| Op::Enable(o, k, on)),
        1 => owner.clone().prop_map(Op::Tickable),
        1 => (owner.clone(), 0..700u64).prop_map(|(o, ms)| Op::Latent(o, ms)),
        2 => (owner.clone(), prop::bool::weighted(0.2)).prop_map(|(o, same)| Op::Move(o, same)),
        6 => prop_oneof![Just(16u64), 1..60u64, Just(300u64)].prop_map(Op::Frame),
    ]
}

#[derive(Default)]
struct Game {
    frame: u64,
    log: HashMap<u64, Vec<String>>,
}

impl Game {
    fn push(&mut self, owner: u64, line: String) {
        let frame = self.frame;
        self.log
            .entry(owner)
            .or_default()
            .push(format!("f{frame} {line}"));
    }
}

/// Every item is named "{owner}:{id}" (the id is the game's, the same in both worlds).
fn key(name: &str) -> Option<(u64, u64)> {
    let (o, id) = name.split_once(':')?;
    Some((o.parse().ok()?, id.parse().ok()?))
}

fn timer_cb(owner: u64, id: u64) -> TimerCallback<Game> {
    Box::new(move |g: &mut Game, cx: &mut TimerCx<Game>| {
        let line = format!(
            "timer {id} at {} #{}",
            cx.scheduled().flicks(),
            cx.call_index()
        );
        g.push(owner, line);
    })
}

fn tick_cb(owner: u64, id: u64) -> impl FnMut(&mut Game, &mut TickCx<'_, Game>) + Send + 'static {
    move |g: &mut Game, cx: &mut TickCx<Game>| {
        g.push(
            owner,
            format!("tick {id} {:?} dt {}", cx.group(), cx.dt().flicks()),
        )
    }
}

struct Watch(u64, u64);
impl Tickable<Game> for Watch {
    fn tick(&mut self, g: &mut Game, cx: &mut TickableCx<'_, Game>) {
        let dt = cx.dt();
        g.push(self.0, format!("tickable {} dt {}", self.1, dt.flicks()));
    }
    fn name(&self) -> &str {
        "watch"
    }
    fn owner(&self) -> Option<OwnerId> {
        Some(OwnerId::new(self.0))
    }
}

/// Binds callbacks by name; the tickables' ids are kept in the game's table (`ids`).
fn bind(mut ids: HashMap<u64, Vec<u64>>) -> Registry<Game> {
    Registry::new()
        .other_timers(|info: &TimerInfo| {
            let (o, id) = key(info.name.as_deref()?)?;
            Some(timer_cb(o, id))
        })
        .other_ticks(|info: &TickInfo| {
            let (o, id) = key(&info.settings.name)?;
            Some(TickBody::serial(tick_cb(o, id)))
        })
        .other_tickables(move |info: &TickableInfo| {
            let o = info.owner?.get();
            // Tickables of an owner move in registration order: hand their ids out in turn.
            let id = ids.get_mut(&o)?.remove(0);
            Some(Box::new(Watch(o, id)) as Box<dyn Tickable<Game>>)
        })
        .other_latent(|info: &LatentInfo| {
            let (o, uuid) = (info.owner.get(), info.uuid);
            Some(Box::new(move |g: &mut Game, _: &mut LatentCx<Game>| {
                g.push(o, format!("latent {uuid}"))
            }) as Completion<Game>)
        })
}

/// One world: its schedulers, where each owner is, and the handles the game holds.
struct World {
    scheds: Vec<Scheduler<Game>>,
    at: HashMap<u64, usize>,
    timers: HashMap<u64, Vec<(u64, TimerHandle)>>,
    ticks: HashMap<u64, Vec<(u64, TickHandle)>>,
    tickables: HashMap<u64, Vec<u64>>,
    game: Game,
}

impl World {
    fn new(split: bool) -> World {
        let n = if split { 2 } else { 1 };
        World {
            scheds: (0..n).map(|_| Scheduler::new()).collect(),
            at: (1..=OWNERS)
                .map(|o| (o, if split { (o % 2) as usize } else { 0 }))
                .collect(),
            timers: HashMap::new(),
            ticks: HashMap::new(),
            tickables: HashMap::new(),
            game: Game::default(),
        }
    }

    fn sched(&mut self, owner: u64) -> &mut Scheduler<Game> {
        &mut self.scheds[self.at[&owner]]
    }

    fn apply(&mut self, op: &Op, id: u64) {
        match *op {
            Op::Timer {
                owner,
                delay,
                period,
                domain,
                catch_up,
                times,
            } => {
                let domain = [Domain::Game, Domain::Real, Domain::Frames][domain as usize];
                let policy = [CatchUp::Burst, CatchUp::Once, CatchUp::Delay][catch_up as usize];
                let t = self.sched(owner).timers();
                // What every timer takes, whatever it counts in.
                fn finish<U>(
                    b: TimerBuilder<'_, Game, U>,
                    (policy, owner, id, times): (CatchUp, u64, u64, Option<u64>),
                ) -> TimerHandle {
                    let mut b = b
                        .catch_up(policy)
                        .owner(OwnerId::new(owner))
                        .name(format!("{owner}:{id}"));
                    if let Some(n) = times {
                        b = b.times(n);
                    }
                    b.call(timer_cb(owner, id))
                }
                let opts = (policy, owner, id, times);
                let h = match (domain, period) {
                    // Frame timers count frames: a fiftieth of the milliseconds.
                    (Domain::Frames, Some(p)) => finish(
                        t.every(Frames(p / 50)).first_delay(Frames(delay / 50)),
                        opts,
                    ),
                    (Domain::Frames, None) => finish(t.after(Frames(delay / 50)), opts),
                    (_, Some(p)) => {
                        let b = t.every(millis(p)).first_delay(millis(delay));
                        finish(if domain == Domain::Real { b.real() } else { b }, opts)
                    }
                    (_, None) => {
                        let b = t.after(millis(delay));
                        finish(if domain == Domain::Real { b.real() } else { b }, opts)
                    }
                };
                self.timers.entry(owner).or_default().push((id, h));
            }
            Op::ClearTimer(owner, k) => {
                if let Some(&(_, h)) = self.timers.get(&owner).and_then(|l| l.get(k)) {
                    self.sched(owner).timers().clear(h);
                }
            }
            Op::PauseTimer(owner, k) => {
                if let Some(&(_, h)) = self.timers.get(&owner).and_then(|l| l.get(k)) {
                    let t = self.sched(owner).timers();
                    if !t.pause(h) {
                        t.unpause(h);
                    }
                }
            }
            Op::Tick {
                owner,
                interval,
                group,
                dilated,
                after_last,
            } => {
                let settings = TickSettings {
                    group: [
                        TickGroup::PrePhysics,
                        TickGroup::DuringPhysics,
                        TickGroup::PostPhysics,
                    ][group as usize],
                    interval: millis(interval),
                    time_dilation: if dilated { 2.0 } else { 1.0 },
                    ..TickSettings::named(format!("{owner}:{id}")).owned_by(OwnerId::new(owner))
                };
                let last = self
                    .ticks
                    .get(&owner)
                    .and_then(|l| l.last())
                    .map(|&(_, h)| h);
                let s = self.sched(owner);
                let h = s.ticks().add(settings, tick_cb(owner, id));
                if let (true, Some(before)) = (after_last, last) {
                    let _ = s.ticks().add_prerequisite(h, before); // a removed one is refused alike
                }
                self.ticks.entry(owner).or_default().push((id, h));
            }
            Op::RemoveTick(owner, k) => {
                if let Some(&(_, h)) = self.ticks.get(&owner).and_then(|l| l.get(k)) {
                    self.sched(owner).ticks().remove(h);
                }
            }
            Op::SetInterval(owner, k, ms) => {
                if let Some(&(_, h)) = self.ticks.get(&owner).and_then(|l| l.get(k)) {
                    self.sched(owner).ticks().set_interval(h, millis(ms));
                }
            }
            Op::Enable(owner, k, on) => {
                if let Some(&(_, h)) = self.ticks.get(&owner).and_then(|l| l.get(k)) {
                    self.sched(owner).ticks().set_enabled(h, on);
                }
            }
            Op::Tickable(owner) => {
                self.sched(owner).tickables().add(Watch(owner, id));
                self.tickables.entry(owner).or_default().push(id);
            }
            Op::Latent(owner, ms) => {
                let done = move |g: &mut Game, _: &mut LatentCx<'_, Game>| {
                    g.push(owner, format!("latent {id}"))
                };
                self.sched(owner)
                    .latent()
                    .delay(OwnerId::new(owner), id, millis(ms), done);
            }
            Op::Move(owner, same) => {
                if self.scheds.len() == 1 {
                    return; // the reference stays on one scheduler
                }
                let from = self.at[&owner];
                let to = if same { from } else { 1 - from };
                let snap = self.scheds[from].export_owner(OwnerId::new(owner));
                #[cfg(feature = "serde")]
                let snap: OwnerSnapshot =
                    postcard::from_bytes(&postcard::to_stdvec(&snap).unwrap()).unwrap();
                let map = self.scheds[to]
                    .import_owner(&snap, &mut bind(self.tickables.clone()))
                    .expect("imports");
                self.at.insert(owner, to);
                self.fix_up(owner, &map, &snap);
            }
            Op::Frame(ms) => {
                self.game.frame += 1;
                for s in &mut self.scheds {
                    s.tick_split(millis(ms), millis(ms * 3 / 2), &mut self.game);
                }
            }
        }
    }

    /// The game's handles of a moved owner, through the import's map (a handle of an item
    /// that ended before the move maps to nothing and stays stale).
    fn fix_up(&mut self, owner: u64, map: &HandleMap, snap: &OwnerSnapshot) {
        assert_eq!(map.timers().len(), snap.timer_count());
        for (_, h) in self.timers.entry(owner).or_default() {
            *h = map.timer(*h).unwrap_or_default();
        }
        for (_, h) in self.ticks.entry(owner).or_default() {
            *h = map.tick(*h).unwrap_or_default();
        }
        assert!(map.unlinked_prerequisites().is_empty());
    }
}

proptest! {
    #![proptest_config(crate::cases(200))]

    #[test]
    fn a_split_world_makes_the_calls_of_one_world(ops in prop::collection::vec(op(), 1..120)) {
        let (mut one, mut split) = (World::new(false), World::new(true));
        for (id, op) in ops.iter().enumerate() {
            one.apply(op, id as u64);
            split.apply(op, id as u64);
        }
        for _ in 0..20 {
            one.apply(&Op::Frame(50), 0);
            split.apply(&Op::Frame(50), 0);
        }
        for owner in 1..=OWNERS {
            let (a, b) = (one.game.log.get(&owner), split.game.log.get(&owner));
            prop_assert_eq!(a, b, "owner {}", owner);
        }
    }
}
