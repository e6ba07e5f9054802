//! Timer snapshots: random operations, a snapshot at a random point, and the original and a
//! restored copy continuing with the same operations must make the same calls and hand out
//! the same handles; plus the restore errors.

use proptest::prelude::*;
use tickflow::compat::UnrealTimers;
use tickflow::prelude::*;
use tickflow::snapshot::RestoreError;
use tickflow::timer::{TimerBuilder, TimerCallback, TimerInfo, TimerState};

/// Every call: (tag, call index, scheduled time, handle).
type Log = Vec<(u64, u64, u64, TimerHandle)>;

/// The callback of a timer with this tag: it logs the call, and tags divisible by 7 start a
/// one-shot follower (set from the callback) for their first three calls.
fn callback(tag: u64) -> TimerCallback<Log> {
    Box::new(move |log: &mut Log, cx: &mut TimerCx<Log>| {
        log.push((tag, cx.call_index(), cx.scheduled().flicks(), cx.handle()));
        if tag % 7 == 0 && cx.call_index() < 3 {
            let follower = tag + 1;
            cx.timers()
                .after(millis(30 + tag % 50))
                .tag(follower)
                .call(callback(follower));
        }
    })
}

/// The tag of the timers `set_timer_for_next_tick` sets (it takes no builder, so no tag).
const NEXT_TICK: u64 = 1;

fn resolve(info: &TimerInfo) -> Option<TimerCallback<Log>> {
    Some(callback(info.tag.unwrap_or(NEXT_TICK)))
}

/// Everything the manager answers about each handle ever handed out.
fn answers(t: &TimerManager<Log>, handles: &[TimerHandle]) -> Vec<String> {
    handles
        .iter()
        .map(|&h| format!("{:?} {:?}", t.info_of(h), t.elapsed(h)))
        .collect()
}

#[derive(Clone, Debug)]
enum Op {
    Add {
        tag: u64,
        ms: u64,
        looping: bool,
        catch_up: u8,
        times: Option<u64>,
        frames: bool,
        owner: Option<u64>,
        name: bool,
        first_delay: Option<u64>,
        real: bool,
    },
    NextTick,
    Clear(usize),
    ClearOwner(u64),
    ClearNamed(u64),
    Pause(usize),
    Unpause(usize),
    PauseOwner(u64, bool),
    BeginFrame,
    Tick(u64),
    /// Game time and real time apart (a dilated or paused game).
    TickStep(u64, u64),
    FireNow(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (
            (0..200u64, 0..400u64, any::<bool>(), 0..3u8, prop::option::of(1..5u64)),
            (prop::bool::weighted(0.2), prop::option::of(0..3u64), any::<bool>()),
            (prop::option::weighted(0.2, 0..300u64), prop::bool::weighted(0.2)),
        )
            .prop_map(|((tag, ms, looping, catch_up, times), (frames, owner, name), (first_delay, real))| Op::Add {
                tag: tag * 10, ms, looping, catch_up, times, frames, owner, name, first_delay, real,
            }),
        1 => Just(Op::NextTick),
        1 => any::<usize>().prop_map(Op::Clear),
        1 => (0..3u64).prop_map(Op::ClearOwner),
        1 => (0..200u64).prop_map(|tag| Op::ClearNamed(tag * 10)),
        1 => any::<usize>().prop_map(Op::Pause),
        1 => any::<usize>().prop_map(Op::Unpause),
        1 => (0..3u64, any::<bool>()).prop_map(|(o, on)| Op::PauseOwner(o, on)),
        1 => Just(Op::BeginFrame),
        5 => (0..250u64).prop_map(Op::Tick),
        1 => (0..250u64, 0..250u64).prop_map(|(game, real)| Op::TickStep(game, real)),
        1 => any::<usize>().prop_map(Op::FireNow),
    ]
}

/// Applies one operation; returns what it answered (for comparing the two managers).
fn apply(
    t: &mut TimerManager<Log>,
    handles: &mut Vec<TimerHandle>,
    log: &mut Log,
    op: &Op,
) -> String {
    let pick =
        |handles: &Vec<TimerHandle>, k: usize| handles.get(k % handles.len().max(1)).copied();
    match *op {
        Op::Add {
            tag,
            ms,
            looping,
            catch_up,
            times,
            frames,
            owner,
            ref name,
            first_delay,
            real,
        } => {
            // The options every timer takes, whatever it counts in.
            fn common<U>(
                mut b: TimerBuilder<'_, Log, U>,
                tag: u64,
                catch_up: u8,
                times: Option<u64>,
                owner: Option<u64>,
                name: bool,
            ) -> TimerBuilder<'_, Log, U> {
                b = b
                    .tag(tag)
                    .catch_up([CatchUp::Burst, CatchUp::Once, CatchUp::Delay][catch_up as usize]);
                if let Some(n) = times {
                    b = b.times(n);
                }
                if let Some(o) = owner {
                    b = b.owner(OwnerId::from(o));
                }
                if name {
                    b = b.name(format!("timer {tag}"));
                }
                b
            }
            let opts = (tag, catch_up, times, owner, *name);
            let h = if frames {
                let b = if looping {
                    t.every(Frames(ms % 5))
                } else {
                    t.after(Frames(ms % 5))
                };
                let mut b = common(b, opts.0, opts.1, opts.2, opts.3, opts.4);
                if let Some(ms) = first_delay {
                    b = b.first_delay(Frames(ms % 5));
                }
                b.call(callback(tag))
            } else {
                let b = if looping {
                    t.every(millis(ms))
                } else {
                    t.after(millis(ms))
                };
                let mut b = common(b, opts.0, opts.1, opts.2, opts.3, opts.4);
                if let Some(ms) = first_delay {
                    b = b.first_delay(millis(ms));
                }
                if real {
                    b = b.real();
                }
                b.call(callback(tag))
            };
            handles.push(h);
            format!("{h:?}")
        }
        Op::NextTick => {
            let h = t.set_timer_for_next_tick(callback(NEXT_TICK));
            handles.push(h);
            format!("{h:?}")
        }
        Op::Clear(k) => format!("{:?}", pick(handles, k).map(|h| t.clear(h))),
        Op::ClearOwner(o) => format!("{}", t.clear_owner(OwnerId::from(o))),
        Op::ClearNamed(tag) => format!("{}", t.clear_named(&format!("timer {tag}"))),
        Op::PauseOwner(o, true) => format!("{}", t.pause_owner(OwnerId::from(o))),
        Op::PauseOwner(o, false) => format!("{}", t.unpause_owner(OwnerId::from(o))),
        Op::Pause(k) => format!("{:?}", pick(handles, k).map(|h| t.pause(h))),
        Op::Unpause(k) => format!("{:?}", pick(handles, k).map(|h| t.unpause(h))),
        Op::BeginFrame => {
            t.begin_frame();
            String::new()
        }
        Op::Tick(ms) => format!("{}", t.tick(millis(ms), log)),
        Op::TickStep(game, real) => format!("{}", t.tick_step(millis(game), millis(real), log)),
        Op::FireNow(k) => format!("{:?}", pick(handles, k).map(|h| t.fire_now(h, log))),
    }
}

proptest! {
    #![proptest_config(crate::cases(1000))]

    #[test]
    fn a_restored_manager_continues_exactly(
        ops in prop::collection::vec(op(), 1..120),
        cut in any::<prop::sample::Index>(),
        budget in prop::option::of(1..6usize),
    ) {
        let cut = cut.index(ops.len());
        let mut a = TimerManager::<Log>::new();
        a.set_fire_budget(budget);
        let (mut handles_a, mut log_a) = (Vec::new(), Log::new());
        for op in &ops[..cut] {
            apply(&mut a, &mut handles_a, &mut log_a, op);
        }
        let snap = a.snapshot();
        let mut b = TimerManager::restore(&snap, &mut tickflow::snapshot::Registry::new().other_timers(resolve)).unwrap();
        prop_assert_eq!(b.snapshot(), snap);
        prop_assert_eq!(b.list(), a.list());
        let (mut handles_b, mut log_b) = (handles_a.clone(), Log::new());
        log_a.clear();
        for op in &ops[cut..] {
            let ra = apply(&mut a, &mut handles_a, &mut log_a, op);
            let rb = apply(&mut b, &mut handles_b, &mut log_b, op);
            prop_assert_eq!(ra, rb, "answers to {:?}", op);
            prop_assert_eq!(answers(&a, &handles_a), answers(&b, &handles_b), "after {:?}", op);
        }
        // Drain everything that is left, so later calls are compared too.
        for _ in 0..40 {
            a.tick(millis(100), &mut log_a);
            b.tick(millis(100), &mut log_b);
        }
        prop_assert_eq!(&log_a, &log_b);
        prop_assert_eq!(a.list(), b.list());
        prop_assert_eq!(a.snapshot(), b.snapshot());
        prop_assert_eq!(a.after(secs(1.0)).call(|_, _| {}), b.after(secs(1.0)).call(|_, _| {}));
    }
}

fn sample() -> TimerManager<Log> {
    let mut t = TimerManager::new();
    t.every(millis(100))
        .tag(10)
        .name("regen")
        .call(callback(10));
    t.after(millis(250))
        .tag(20)
        .name("bomb")
        .owner(OwnerId::from(3))
        .call(callback(20));
    t.every(Frames(2)).tag(30).times(5).call(callback(30));
    let paused = t.after(secs(3.0)).tag(40).call(callback(40));
    t.pause(paused);
    let mut log = Log::new();
    t.tick(millis(120), &mut log);
    t
}

#[test]
fn an_unknown_callback_is_named_and_nothing_is_built() {
    let t = sample();
    let err = TimerManager::restore(
        &t.snapshot(),
        &mut tickflow::snapshot::Registry::new().other_timers(|info| {
            (info.name.as_deref() != Some("bomb")).then(|| callback(info.tag.unwrap()))
        }),
    )
    .unwrap_err();
    assert!(
        matches!(&err, RestoreError::Unbound { kind: "timer", name, .. } if name == "bomb"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("timer `bomb`") && text.contains("tag 20") && text.contains("owner#3"),
        "{text}"
    );
}

#[test]
fn the_resolver_sees_each_timer_once_in_set_order() {
    let t = sample();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut registry = tickflow::snapshot::Registry::new().other_timers(move |info| {
        log.lock()
            .unwrap()
            .push((info.tag, info.state, info.remaining));
        resolve(info)
    });
    TimerManager::restore(&t.snapshot(), &mut registry).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (Some(10), TimerState::Active, millis(80)),
            (Some(20), TimerState::Active, millis(130)),
            (Some(30), TimerState::Active, Span::from_flicks(1)),
            (Some(40), TimerState::Paused, secs(3.0)),
        ]
    );
}

#[cfg(feature = "serde")]
mod serde_round_trip {
    use super::*;
    use tickflow::snapshot::{TimerSnapshot, FORMAT_VERSION};

    fn run(mut t: TimerManager<Log>) -> Log {
        let mut log = Log::new();
        for _ in 0..50 {
            t.tick(millis(45), &mut log);
        }
        log
    }

    #[test]
    fn json_and_postcard_restore_to_the_same_behaviour() {
        let t = sample();
        let snap = t.snapshot();
        let json = serde_json::to_string(&snap).unwrap();
        let bytes = postcard::to_stdvec(&snap).unwrap();
        let from_json: TimerSnapshot = serde_json::from_str(&json).unwrap();
        let from_bytes: TimerSnapshot = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(from_json, snap);
        assert_eq!(from_bytes, snap);
        let expected = run(TimerManager::restore(
            &snap,
            &mut tickflow::snapshot::Registry::new().other_timers(resolve),
        )
        .unwrap());
        assert!(
            expected.len() > 20,
            "the sample keeps firing: {}",
            expected.len()
        );
        assert_eq!(
            run(TimerManager::restore(
                &from_json,
                &mut tickflow::snapshot::Registry::new().other_timers(resolve)
            )
            .unwrap()),
            expected
        );
        assert_eq!(
            run(TimerManager::restore(
                &from_bytes,
                &mut tickflow::snapshot::Registry::new().other_timers(resolve)
            )
            .unwrap()),
            expected
        );
        assert_eq!(run(t), expected);
    }

    #[test]
    fn corrupted_and_foreign_snapshots_are_refused() {
        let snap = sample().snapshot();
        let json = serde_json::to_string(&snap).unwrap();

        // Version 1 had no container ids: its handles cannot be told apart from another
        // manager's, so it is refused rather than guessed at.
        let current = format!("\"version\":{FORMAT_VERSION}");
        let older = json.replacen(&current, "\"version\":1", 1);
        let older: TimerSnapshot = serde_json::from_str(&older).unwrap();
        let err = TimerManager::restore(
            &older,
            &mut tickflow::snapshot::Registry::new().other_timers(resolve),
        )
        .unwrap_err();
        assert_eq!(
            err,
            RestoreError::Version {
                found: 1,
                supported: FORMAT_VERSION
            }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "snapshot format version 1 cannot be read (this build reads version {FORMAT_VERSION})"
            )
        );

        // A container id no manager is given.
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        value["container"] = 0.into();
        let zero: TimerSnapshot = serde_json::from_value(value).unwrap();
        let err = TimerManager::restore(
            &zero,
            &mut tickflow::snapshot::Registry::new().other_timers(resolve),
        )
        .unwrap_err();
        assert!(err.to_string().contains("container id"), "{err}");

        // Two timers claiming the same slot.
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        value["timers"][1]["slot"] = value["timers"][0]["slot"].clone();
        let twice: TimerSnapshot = serde_json::from_value(value).unwrap();
        let err = TimerManager::restore(
            &twice,
            &mut tickflow::snapshot::Registry::new().other_timers(resolve),
        )
        .unwrap_err();
        assert!(err.to_string().contains("holds two timers"), "{err}");

        // Truncated bytes do not even deserialize.
        let bytes = postcard::to_stdvec(&snap).unwrap();
        assert!(postcard::from_bytes::<TimerSnapshot>(&bytes[..bytes.len() / 2]).is_err());
    }
}
