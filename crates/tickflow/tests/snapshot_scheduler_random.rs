//! Random inputs, a snapshot at a random frame: the original and the restored copy,
//! given the same inputs afterwards, make the same calls, answer the same and end in the
//! same state.
use crate::snapshot_world;
use tickflow::TickableHandle;

use proptest::prelude::*;
use snapshot_world::*;

const NAMES: [&str; 5] = ["input", "physics", "ai", "slow", "late"];
const TIMERS: [&str; 4] = ["regen", "poison", "boom", "late"];

#[derive(Clone, Debug)]
enum Op {
    AddTick {
        name: usize,
        group: usize,
        interval: u64,
        high: bool,
        paused: bool,
    },
    RemoveTick(usize),
    Enable(usize, bool),
    SetInterval(usize, u64),
    Prereq(usize, usize),
    AddTimer {
        name: usize,
        ms: u64,
        looping: bool,
        owner: u64,
    },
    ClearTimer(usize),
    PauseTimer(usize, bool),
    Delay {
        owner: u64,
        uuid: u64,
        ms: u64,
        retrigger: bool,
    },
    RemoveOwner(u64),
    Pause(bool),
    Dilation(u8),
    Frame(u64),
    AddParallel(usize),
    AddTickable,
    RemoveTickable(usize),
    MaxDelta(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0..5usize, 0..7usize, prop_oneof![Just(0u64), 50..400u64], any::<bool>(), prop::bool::weighted(0.2))
            .prop_map(|(name, group, interval, high, paused)| Op::AddTick { name, group, interval, high, paused }),
        1 => any::<usize>().prop_map(Op::RemoveTick),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(k, on)| Op::Enable(k, on)),
        1 => (any::<usize>(), 0..300u64).prop_map(|(k, ms)| Op::SetInterval(k, ms)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Prereq(a, b)),
        2 => (0..4usize, 0..500u64, any::<bool>(), 0..3u64)
            .prop_map(|(name, ms, looping, owner)| Op::AddTimer { name, ms, looping, owner }),
        1 => any::<usize>().prop_map(Op::ClearTimer),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(k, on)| Op::PauseTimer(k, on)),
        1 => (0..3u64, 0..4u64, 0..600u64, any::<bool>())
            .prop_map(|(owner, uuid, ms, retrigger)| Op::Delay { owner, uuid, ms, retrigger }),
        1 => (0..3u64).prop_map(Op::RemoveOwner),
        1 => any::<bool>().prop_map(Op::Pause),
        1 => (0..3u8).prop_map(Op::Dilation),
        6 => (1..60u64).prop_map(Op::Frame),
        1 => (0..7usize).prop_map(Op::AddParallel),
        1 => Just(Op::AddTickable),
        1 => any::<usize>().prop_map(Op::RemoveTickable),
        1 => (20..200u64).prop_map(Op::MaxDelta),
    ]
}

#[derive(Default, Clone)]
struct Handles {
    ticks: Vec<TickHandle>,
    timers: Vec<TimerHandle>,
    tickables: Vec<TickableHandle>,
}

fn apply(s: &mut Scheduler<Game>, g: &mut Game, h: &mut Handles, op: &Op) -> String {
    let tick = |h: &Handles, k: usize| h.ticks.get(k % h.ticks.len().max(1)).copied();
    let timer = |h: &Handles, k: usize| h.timers.get(k % h.timers.len().max(1)).copied();
    match *op {
        Op::AddTick {
            name,
            group,
            interval,
            high,
            paused,
        } => {
            let settings = TickSettings {
                group: TickGroup::ALL[group],
                interval: millis(interval),
                high_priority: high,
                tick_when_paused: paused,
                ..TickSettings::named(NAMES[name])
            };
            let t = s.ticks().add(settings, tick_fn(NAMES[name]).unwrap());
            h.ticks.push(t);
            format!("{t:?}")
        }
        Op::RemoveTick(k) => format!("{:?}", tick(h, k).map(|t| s.ticks().remove(t))),
        Op::Enable(k, on) => format!("{:?}", tick(h, k).map(|t| s.ticks().set_enabled(t, on))),
        Op::SetInterval(k, ms) => {
            format!(
                "{:?}",
                tick(h, k).map(|t| s.ticks().set_interval(t, millis(ms)))
            )
        }
        Op::Prereq(a, b) => match (tick(h, a), tick(h, b)) {
            (Some(a), Some(b)) => format!("{:?}", s.ticks().add_prerequisite(a, b).is_ok()),
            _ => String::new(),
        },
        Op::AddTimer {
            name,
            ms,
            looping,
            owner,
        } => {
            let timers = s.timers();
            let b = if looping {
                timers.every(millis(ms))
            } else {
                timers.after(millis(ms))
            };
            let t = b
                .name(TIMERS[name])
                .owner(OwnerId::new(owner))
                .call(timer_cb(TIMERS[name]).unwrap());
            h.timers.push(t);
            format!("{t:?}")
        }
        Op::ClearTimer(k) => format!("{:?}", timer(h, k).map(|t| s.timers().clear(t))),
        Op::PauseTimer(k, on) => format!(
            "{:?}",
            timer(h, k).map(|t| if on {
                s.timers().pause(t)
            } else {
                s.timers().unpause(t)
            })
        ),
        Op::Delay {
            owner,
            uuid,
            ms,
            retrigger,
        } => {
            let o = OwnerId::new(owner);
            let done = completion(o, uuid);
            let added = if retrigger {
                s.latent().retriggerable_delay(o, uuid, millis(ms), done)
            } else {
                s.latent().delay(o, uuid, millis(ms), done)
            };
            format!("{added}")
        }
        Op::RemoveOwner(o) => {
            s.remove_owner(OwnerId::new(o));
            String::new()
        }
        Op::Pause(on) => {
            s.set_paused(on);
            String::new()
        }
        Op::Dilation(k) => {
            s.set_time_dilation([0.5, 1.0, 2.0][k as usize]);
            String::new()
        }
        Op::Frame(ms) => format!("{:?}", s.tick(millis(ms), g).ticks_run),
        Op::AddParallel(group) => {
            let settings = TickSettings::named("par").in_group(TickGroup::ALL[group]);
            let t = s.ticks().add_parallel(settings, (), par);
            h.ticks.push(t);
            format!("{t:?}")
        }
        Op::AddTickable => {
            let t = s.tickables().add(Score);
            h.tickables.push(t);
            format!("{t:?}")
        }
        Op::RemoveTickable(k) => {
            let t = h.tickables.get(k % h.tickables.len().max(1)).copied();
            format!("{:?}", t.map(|t| s.tickables().remove(t)))
        }
        Op::MaxDelta(ms) => {
            s.set_max_delta(millis(ms));
            String::new()
        }
    }
}

proptest! {
    #![proptest_config(crate::cases(1000))]

    #[test]
    fn a_restored_scheduler_continues_exactly(
        ops in prop::collection::vec(op(), 1..80),
        cut in any::<prop::sample::Index>(),
    ) {
        let cut = cut.index(ops.len());
        let (mut a, mut game) = build();
        let mut handles = Handles::default();
        for op in &ops[..cut] {
            apply(&mut a, &mut game, &mut handles, op);
        }
        let snap = a.snapshot();
        let (mut b, report) = Scheduler::restore(&snap, &mut World::default()).unwrap();
        prop_assert!(report.is_complete(), "{}", report);
        prop_assert_eq!(b.state_hash(), a.state_hash());
        let (mut game_b, mut handles_b) = (game.clone(), handles.clone());
        for op in &ops[cut..] {
            let ra = apply(&mut a, &mut game, &mut handles, op);
            let rb = apply(&mut b, &mut game_b, &mut handles_b, op);
            prop_assert_eq!(ra, rb, "answers to {:?}", op);
        }
        for _ in 0..30 {
            a.tick(millis(50), &mut game);
            b.tick(millis(50), &mut game_b);
        }
        prop_assert_eq!(&game.log, &game_b.log);
        prop_assert_eq!(game.hp, game_b.hp);
        prop_assert_eq!(a.state_hash(), b.state_hash());
    }
}
