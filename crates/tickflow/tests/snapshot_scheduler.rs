//! Scheduler snapshots: a rich world run 100 frames, snapshot at 50, restored and re-run
//! with the same inputs gives the same calls, hashes and handles; restore errors; what is
//! reported as not saved; `sync_test`.

use tickflow::latent::{DelayUntilNextTick, LatentAction, LatentInfo, LatentResponse, SavedAction};
use tickflow::prelude::*;
use tickflow::snapshot::{
    sync_test, Resolver, RestoreError, SchedulerSnapshot, SyncError, FORMAT_VERSION,
};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::tickable::TickableInfo;
use tickflow::timer::{TimerCallback, TimerInfo};

#[derive(Clone, Debug, Default, PartialEq, Hash)]
struct Game {
    log: Vec<String>,
    hp: i64,
}

const POISONED: OwnerId = OwnerId::new(5);
const DOOR: OwnerId = OwnerId::new(1);

type TickFn = Box<dyn FnMut(&mut Game, &mut TickCx<'_, Game>) + Send>;

/// Every tick function of the test world, by name (used to build it and by the resolver).
fn tick_fn(name: &str) -> Option<TickFn> {
    let name = name.to_owned();
    Some(match name.as_str() {
        "spawner" => Box::new(|g: &mut Game, cx: &mut TickCx<Game>| {
            if cx.frame() % 20 == 0 {
                let s = TickSettings::named("spawned").in_group(TickGroup::PostUpdateWork);
                cx.add_tick(s, tick_fn("spawned").unwrap());
            }
            g.log.push(format!("spawner {}", cx.frame()));
        }),
        "input" | "physics" | "ai" | "slow" | "off" | "spawned" | "late" | "x" => {
            Box::new(move |g: &mut Game, cx: &mut TickCx<Game>| {
                g.log.push(format!(
                    "{name} {} {:?} {}",
                    cx.frame(),
                    cx.group(),
                    cx.dt().flicks()
                ));
            })
        }
        _ => return None,
    })
}

/// The parallel tick function "par": reads the context on a worker, writes through
/// `Deferred` (its state is `()`: state that must survive a rollback lives in the context).
fn par(_: &mut (), g: &Game, out: &mut Deferred<Game>) {
    let (frame, seen) = (out.frame(), g.log.len());
    out.run(move |g| g.log.push(format!("par {frame} {seen}")));
}

fn timer_cb(name: &str) -> Option<TimerCallback<Game>> {
    let name = name.to_owned();
    Some(match name.as_str() {
        "wave" => Box::new(|g: &mut Game, cx: &mut TimerCx<Game>| {
            g.log.push(format!("wave {}", cx.call_index()));
            cx.timers()
                .after(millis(70))
                .name("boom")
                .call(timer_cb("boom").unwrap());
        }),
        "regen" | "poison" | "boom" | "frozen" | "late" => {
            Box::new(move |g: &mut Game, cx: &mut TimerCx<Game>| {
                g.hp += 1;
                g.log.push(format!(
                    "{name} {} {} {}",
                    cx.call_index(),
                    cx.scheduled().flicks(),
                    cx.calls_this_tick()
                ));
            })
        }
        _ => return None,
    })
}

/// The completion of the latent action under `(owner, uuid)`.
fn completion(owner: OwnerId, uuid: u64) -> impl FnMut(&mut Game) {
    move |g: &mut Game| g.log.push(format!("done {} {uuid}", owner.get()))
}

/// A custom latent action that saves itself: completes after `n` more updates.
struct Blink(u8);

impl LatentAction<Game> for Blink {
    fn update(&mut self, r: &mut LatentResponse, _: &mut Game) {
        self.0 = self.0.saturating_sub(1);
        r.finish_and_trigger_if(self.0 == 0);
    }
    fn describe(&self) -> String {
        format!("Blink {}", self.0)
    }
    fn save(&self) -> Option<SavedAction> {
        Some(SavedAction::Custom {
            kind: "blink".into(),
            data: vec![self.0],
        })
    }
}

struct Score;
impl Tickable<Game> for Score {
    fn tick(&mut self, dt: Span, g: &mut Game) {
        g.log.push(format!("score {}", dt.flicks()));
    }
    fn name(&self) -> &str {
        "score"
    }
}

/// Binds everything of the test world by name; `missing` names one thing it refuses.
#[derive(Default)]
struct World {
    missing: &'static str,
    asked: Vec<String>,
}

impl Resolver<Game> for World {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<Game>> {
        let name = info.name.as_deref()?;
        self.asked.push(format!("timer {name}"));
        (name != self.missing).then(|| timer_cb(name)).flatten()
    }
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Game>> {
        self.asked.push(format!("tick {}", info.settings.name));
        if info.settings.name == "par" {
            return Some(TickBody::parallel((), par));
        }
        let f = (info.settings.name != self.missing).then(|| tick_fn(&info.settings.name))??;
        Some(TickBody::serial(f))
    }
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<Game>>> {
        self.asked.push(format!("tickable {}", info.name));
        (info.name == "score").then(|| Box::new(Score) as Box<dyn Tickable<Game>>)
    }
    fn latent(&mut self, info: &LatentInfo) -> Option<Box<dyn FnMut(&mut Game) + Send>> {
        self.asked.push(format!("latent {}", info.uuid));
        Some(Box::new(completion(info.owner, info.uuid)))
    }
    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<Game>>> {
        (kind == "blink").then(|| Box::new(Blink(data[0])) as Box<dyn LatentAction<Game>>)
    }
}

fn build() -> (Scheduler<Game>, Game) {
    let mut s = Scheduler::<Game>::new();
    let add = |s: &mut Scheduler<Game>, settings: TickSettings| {
        let f = tick_fn(&settings.name).unwrap();
        s.add_tick(settings, f)
    };
    add(&mut s, TickSettings::named("input"));
    let physics = add(
        &mut s,
        TickSettings::named("physics").in_group(TickGroup::DuringPhysics),
    );
    let ai = add(
        &mut s,
        TickSettings {
            interval: secs(0.2),
            ..TickSettings::named("ai")
        },
    );
    s.add_prerequisite(ai, physics).unwrap();
    add(
        &mut s,
        TickSettings {
            time_dilation: 0.5,
            tick_when_paused: true,
            ..TickSettings::named("slow")
        },
    );
    add(
        &mut s,
        TickSettings {
            enabled: false,
            ..TickSettings::named("off")
        },
    );
    add(
        &mut s,
        TickSettings::named("spawner").in_group(TickGroup::PostPhysics),
    );
    s.add_tickable(Score);
    let t = s.timers();
    t.every(millis(100))
        .name("regen")
        .call(timer_cb("regen").unwrap());
    t.every(millis(250))
        .name("poison")
        .times(6)
        .owner(POISONED)
        .call(timer_cb("poison").unwrap());
    t.every_frames(30)
        .name("wave")
        .call(timer_cb("wave").unwrap());
    let frozen = t
        .after(millis(300))
        .name("frozen")
        .catch_up(CatchUp::Once)
        .call(timer_cb("frozen").unwrap());
    t.pause(frozen);
    s.latent().delay(DOOR, 1, secs(1.0), completion(DOOR, 1));
    s.latent()
        .retriggerable_delay(DOOR, 2, secs(0.5), completion(DOOR, 2));
    s.latent()
        .add(POISONED, 3, Blink(70), completion(POISONED, 3));
    s.latent()
        .add(DOOR, 4, DelayUntilNextTick, completion(DOOR, 4));
    (
        s,
        Game {
            hp: 100,
            ..Game::default()
        },
    )
}

fn dt(frame: u64) -> Span {
    Span::frames(1, 60) + millis(frame % 3)
}

/// The same inputs for every run: what the player does before frame `frame`.
fn input(s: &mut Scheduler<Game>, frame: u64) {
    match frame {
        55 => s.set_paused(true),
        60 => s.set_paused(false),
        65 => s.set_time_dilation(0.5),
        70 => {
            s.timers()
                .after(millis(90))
                .name("late")
                .call(timer_cb("late").unwrap());
        }
        75 => {
            s.latent()
                .retriggerable_delay(DOOR, 2, secs(0.3), completion(DOOR, 2));
            let late = TickSettings::named("late").in_group(TickGroup::EndPhysics);
            s.add_tick(late, tick_fn("late").unwrap());
        }
        80 => s.remove_owner(POISONED),
        _ => {}
    }
}

/// Runs frames `from..=to`; returns the log of those frames and the hash after each.
fn run(s: &mut Scheduler<Game>, g: &mut Game, from: u64, to: u64) -> (Vec<String>, Vec<u64>) {
    let start = g.log.len();
    let mut hashes = Vec::new();
    for frame in from..=to {
        input(s, frame);
        s.tick(dt(frame), g);
        hashes.push(s.state_hash());
    }
    (g.log[start..].to_vec(), hashes)
}

fn restore(snap: &SchedulerSnapshot) -> Scheduler<Game> {
    let (s, report) = Scheduler::restore(snap, &mut World::default()).unwrap();
    assert!(report.is_complete(), "{report}");
    s
}

#[test]
fn rollback_to_frame_50_replays_frames_51_to_100_exactly() {
    let (mut a, mut game) = build();
    run(&mut a, &mut game, 1, 50);
    let snap = a.snapshot();
    let saved_game = game.clone();
    assert_eq!(a.state_hash(), tickflow::snapshot::stable_hash(&snap));
    let (log_a, hashes_a) = run(&mut a, &mut game, 51, 100);

    let mut b = restore(&snap);
    assert_eq!(b.snapshot(), snap);
    let mut game_b = saved_game;
    let (log_b, hashes_b) = run(&mut b, &mut game_b, 51, 100);
    assert_eq!(log_a, log_b);
    assert_eq!(hashes_a, hashes_b);
    assert_eq!(game, game_b);
    for needle in [
        "spawned 60",
        "late 76",
        "wave 2",
        "done 1 1",
        "done 5 3",
        "boom",
        "score",
    ] {
        assert!(
            log_a.iter().any(|l| l.starts_with(needle)),
            "{needle} in {log_a:?}"
        );
    }
    // The same handles from here on.
    assert_eq!(
        a.add_tick(TickSettings::named("x"), |_, _| {}),
        b.add_tick(TickSettings::named("x"), |_, _| {})
    );
    assert_eq!(a.add_tickable(Score), b.add_tickable(Score));
    assert_eq!(
        a.timers().after(secs(1.0)).call(|_, _| {}),
        b.timers().after(secs(1.0)).call(|_, _| {})
    );
}

#[test]
fn the_hash_tells_states_apart_and_is_stable() {
    let (mut a, mut game) = build();
    let (b, _) = build();
    assert_eq!(a.state_hash(), b.state_hash());
    a.tick(dt(1), &mut game);
    assert_ne!(a.state_hash(), b.state_hash());
    let (mut c, _) = build();
    c.set_time_dilation(0.75);
    assert_ne!(c.state_hash(), b.state_hash());
    // The same on every platform: integers are hashed little-endian, usize as u64.
    assert_eq!(Scheduler::<()>::new().state_hash(), 0x3e6a_a4c6_d7fd_7e00);
}

#[test]
fn restore_failures_name_the_problem() {
    let (mut a, mut game) = build();
    run(&mut a, &mut game, 1, 10);
    let snap = a.snapshot();
    let before = a.state_hash();
    for (missing, kind) in [("ai", "tick function"), ("poison", "timer")] {
        let mut world = World {
            missing,
            ..World::default()
        };
        let err = Scheduler::restore(&snap, &mut world)
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(&err, RestoreError::Unbound { kind: k, name, .. } if *k == kind && name == missing),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(&format!("{kind} `{missing}`")),
            "{err}"
        );
    }
    // The resolver was asked in the order things run: ticks, tickables, timers, latent.
    let mut world = World::default();
    Scheduler::restore(&snap, &mut world).unwrap();
    let kinds: Vec<&str> = world
        .asked
        .iter()
        .map(|a| a.split(' ').next().unwrap())
        .collect();
    let mut sorted = kinds.clone();
    sorted.dedup();
    assert_eq!(sorted, ["tick", "tickable", "timer", "latent"]);
    assert_eq!(
        a.state_hash(),
        before,
        "restoring changes nothing in the original"
    );
    run(&mut a, &mut game, 11, 12);
}

#[test]
fn restored_parallel_functions_still_run_on_the_workers() {
    // Each body notes whether it ran on a rayon worker. Called from outside the pool, a
    // parallel batch always runs there, so this does not depend on timing.
    fn on_worker(_: &mut (), _: &Vec<bool>, out: &mut Deferred<Vec<bool>>) {
        let worker = rayon::current_thread_index().is_some();
        out.run(move |seen| seen.push(worker));
    }
    struct Workers;
    impl Resolver<Vec<bool>> for Workers {
        fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Vec<bool>>> {
            (info.settings.name == "worker").then(|| TickBody::parallel((), on_worker))
        }
    }
    let mut s = Scheduler::<Vec<bool>>::new();
    for _ in 0..2 {
        s.add_parallel_tick(TickSettings::named("worker"), (), on_worker);
    }
    let (mut restored, _) = Scheduler::restore(&s.snapshot(), &mut Workers).unwrap();
    let (mut seen, mut seen_restored) = (Vec::new(), Vec::new());
    s.tick(millis(16), &mut seen);
    restored.tick(millis(16), &mut seen_restored);
    assert_eq!(seen, [true, true]);
    assert_eq!(seen_restored, seen);
}

#[test]
fn tasks_and_unsaveable_actions_are_reported() {
    let (mut a, mut game) = build();
    a.spawn(None, |cx| async move { cx.delay(secs(10.0)).await });
    a.latent()
        .wait_until(DOOR, 9, |g: &Game| g.hp > 1000, |_| {});
    a.tick(dt(1), &mut game);
    let timers_with_task = a.timers().len();
    let snap = a.snapshot();
    assert_eq!(
        snap.timers().len(),
        timers_with_task - 1,
        "the task's delay timer is left out"
    );
    let (b, report) = Scheduler::restore(&snap, &mut World::default()).unwrap();
    assert_eq!(report.tasks_not_saved, 1);
    assert_eq!(report.latent_not_saved.len(), 1);
    assert_eq!(report.latent_not_saved[0].uuid, 9);
    assert_eq!(
        report.to_string(),
        "1 async task(s) not saved, 1 latent action(s) not saved"
    );
    assert_eq!(b.task_count(), 0);

    let err = sync_test(
        &mut a,
        &mut game,
        &mut World::default(),
        10,
        5,
        dt(0),
        |_| 0,
    )
    .unwrap_err();
    assert!(matches!(err, SyncError::Incomplete { .. }), "{err}");
}

#[test]
fn sync_test_passes_a_deterministic_world_and_catches_hidden_state() {
    let (mut a, mut game) = build();
    let checksum = |g: &Game| tickflow::snapshot::stable_hash(g);
    let report = sync_test(
        &mut a,
        &mut game,
        &mut World::default(),
        150,
        60,
        dt(0),
        checksum,
    )
    .unwrap();
    assert_eq!(
        (report.frames, report.rollbacks, report.resimulated),
        (150, 3, 150)
    );
    assert_eq!(a.frame(), 150);
    assert_eq!(report.final_hash, a.state_hash());

    // A callback that keeps state of its own (not in the context) cannot be rolled back:
    // its restored copy starts again from zero.
    let (mut b, mut game) = build();
    let mut count = 0;
    b.timers()
        .every(millis(100))
        .name("hidden")
        .call(move |g, _| {
            count += 1;
            g.hp += count;
        });
    struct Hidden(World);
    impl Resolver<Game> for Hidden {
        fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<Game>> {
            if info.name.as_deref() == Some("hidden") {
                let mut count = 0;
                return Some(Box::new(move |g: &mut Game, _: &mut TimerCx<Game>| {
                    count += 1;
                    g.hp += count;
                }));
            }
            self.0.timer(info)
        }
        fn tick(&mut self, info: &TickInfo) -> Option<TickBody<Game>> {
            self.0.tick(info)
        }
        fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<Game>>> {
            self.0.tickable(info)
        }
        fn latent(&mut self, info: &LatentInfo) -> Option<Box<dyn FnMut(&mut Game) + Send>> {
            self.0.latent(info)
        }
        fn latent_action(
            &mut self,
            kind: &str,
            data: &[u8],
        ) -> Option<Box<dyn LatentAction<Game>>> {
            self.0.latent_action(kind, data)
        }
    }
    let err = sync_test(
        &mut b,
        &mut game,
        &mut Hidden(World::default()),
        120,
        30,
        dt(0),
        checksum,
    )
    .unwrap_err();
    match err {
        SyncError::Desync { frame, what, .. } => {
            assert_eq!(what, "context checksum");
            assert!(frame > 30 && frame <= 60, "first rollback window: {frame}");
        }
        e => panic!("{e}"),
    }
}

#[cfg(feature = "serde")]
#[test]
fn json_and_postcard_round_trips_behave_the_same() {
    let (mut a, mut game) = build();
    run(&mut a, &mut game, 1, 50);
    let snap = a.snapshot();
    let json = serde_json::to_string_pretty(&snap).unwrap();
    let bytes = postcard::to_stdvec(&snap).unwrap();
    let from_json: SchedulerSnapshot = serde_json::from_str(&json).unwrap();
    let from_bytes: SchedulerSnapshot = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(from_json, snap);
    assert_eq!(from_bytes, snap);
    let (expected, hashes) = run(&mut a, &mut game.clone(), 51, 100);
    for s in [from_json, from_bytes] {
        let mut b = restore(&s);
        assert_eq!(
            run(&mut b, &mut game.clone(), 51, 100),
            (expected.clone(), hashes.clone())
        );
    }

    // A version from the future, and a prerequisite cycle edited into the save file.
    let newer: SchedulerSnapshot = serde_json::from_str(&json.replacen(
        &format!("\"version\": {FORMAT_VERSION}"),
        "\"version\": 7",
        1,
    ))
    .unwrap();
    let err = Scheduler::restore(&newer, &mut World::default())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err,
        RestoreError::Version {
            found: 7,
            supported: FORMAT_VERSION
        }
    );
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let functions = value["ticks"]["functions"].as_array_mut().unwrap();
    let find = |fs: &[serde_json::Value], n: &str| {
        fs.iter().position(|f| f["settings"]["name"] == n).unwrap()
    };
    let (ai, physics) = (find(functions, "ai"), find(functions, "physics"));
    let ai_handle = serde_json::json!([functions[ai]["index"], functions[ai]["gen"]]);
    functions[physics]["prereqs"] = serde_json::json!([ai_handle]);
    let cyclic: SchedulerSnapshot = serde_json::from_value(value).unwrap();
    let err = Scheduler::restore(&cyclic, &mut World::default())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "corrupted snapshot: the tick prerequisites form a cycle"
    );
}

mod random {
    //! Random inputs, a snapshot at a random frame: the original and the restored copy,
    //! given the same inputs afterwards, make the same calls, answer the same and end in the
    //! same state.
    use super::*;
    use proptest::prelude::*;

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
                let t = s.add_tick(settings, tick_fn(NAMES[name]).unwrap());
                h.ticks.push(t);
                format!("{t:?}")
            }
            Op::RemoveTick(k) => format!("{:?}", tick(h, k).map(|t| s.remove_tick(t))),
            Op::Enable(k, on) => format!("{:?}", tick(h, k).map(|t| s.set_tick_enabled(t, on))),
            Op::SetInterval(k, ms) => {
                format!(
                    "{:?}",
                    tick(h, k).map(|t| s.set_tick_interval(t, millis(ms)))
                )
            }
            Op::Prereq(a, b) => match (tick(h, a), tick(h, b)) {
                (Some(a), Some(b)) => format!("{:?}", s.add_prerequisite(a, b).is_ok()),
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
                let t = s.add_parallel_tick(settings, (), par);
                h.ticks.push(t);
                format!("{t:?}")
            }
            Op::AddTickable => {
                let t = s.add_tickable(Score);
                h.tickables.push(t);
                format!("{t:?}")
            }
            Op::RemoveTickable(k) => {
                let t = h.tickables.get(k % h.tickables.len().max(1)).copied();
                format!("{:?}", t.map(|t| s.remove_tickable(t)))
            }
            Op::MaxDelta(ms) => {
                s.set_max_delta(millis(ms));
                String::new()
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

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
}
