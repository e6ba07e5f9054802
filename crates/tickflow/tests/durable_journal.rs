//! Durable timers' journal against an obviously-correct model: after random sets, clears,
//! pauses, restarts, rate changes, fires and ticks (callbacks that set, clear and pause durable
//! timers included), the rows a store would hold — the journal's changes applied in order to
//! a map — equal every live durable timer read afresh. Then a second manager loaded from those
//! rows makes the same calls at the same times as the first one from then on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::{DurableChange, DurableTimer, Offline, TimerCallback};

type Log = Arc<Mutex<Vec<(String, u64, u64)>>>;

#[derive(Clone, Debug)]
enum Op {
    Set {
        owner: u64,
        name: u8,
        delay: u64,
        looping: bool,
        durable: bool,
        times: Option<u64>,
    },
    Clear(usize),
    Pause(usize),
    Unpause(usize),
    Restart(usize),
    SetRate(usize, u64),
    FireNow(usize),
    ClearOwner(u64),
    Tick(u64),
    /// Opens a frame: timers set before the next tick are pending until it.
    BeginFrame,
    Drain,
}

fn unit() -> u64 {
    Span::from_millis(10).flicks()
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..3, 0u8..3, 0u64..30, any::<bool>(), prop::bool::weighted(0.8),
              prop::option::weighted(0.2, 1u64..4))
            .prop_map(|(owner, name, d, looping, durable, times)| Op::Set {
                owner, name, delay: d * unit(), looping, durable, times }),
        1 => (0usize..64).prop_map(Op::Clear),
        1 => (0usize..64).prop_map(Op::Pause),
        1 => (0usize..64).prop_map(Op::Unpause),
        1 => (0usize..64).prop_map(Op::Restart),
        1 => (0usize..64, 0u64..20).prop_map(|(i, r)| Op::SetRate(i, r * unit())),
        1 => (0usize..64).prop_map(Op::FireNow),
        1 => (0u64..3).prop_map(Op::ClearOwner),
        4 => (0u64..25).prop_map(|k| Op::Tick(k * unit())),
        2 => Just(Op::Drain),
        1 => Just(Op::BeginFrame),
    ]
}

/// The callback every timer gets: logs its name, the clock and its call index; a timer named
/// "chain" sets a durable follow-up, one named "stop" pauses itself.
fn callback(name: String, log: Log) -> TimerCallback<()> {
    Box::new(move |_, cx| {
        let at = cx.scheduled().flicks();
        log.lock()
            .unwrap()
            .push((name.clone(), at, cx.call_index()));
        if name == "chain" && cx.call_index() < 3 {
            let log = log.clone();
            let owner = OwnerId::new(9);
            let cb = callback("chain".into(), log);
            cx.timers()
                .after(Span::from_millis(70))
                .owner(owner)
                .name("chain")
                .durable(Offline::Freeze)
                .call(cb);
        }
        if name == "stop" {
            let h = cx.handle();
            cx.timers().pause(h);
        }
    })
}

const NAMES: [&str; 3] = ["chain", "stop", "plain"];

fn apply(rows: &mut BTreeMap<(OwnerId, String), DurableTimer>, changes: Vec<DurableChange>) {
    for c in changes {
        match c {
            DurableChange::Set(t) => {
                rows.insert((t.owner, t.name.clone()), t);
            }
            DurableChange::Removed { owner, name } => {
                // A timer set and ended between two drains sends a removal of a row the
                // store never got: deleting nothing is what a store does with it.
                rows.remove(&(owner, name));
            }
        }
    }
}

fn live(timers: &TimerManager<()>) -> BTreeMap<(OwnerId, String), DurableTimer> {
    (timers.durable_timers().into_iter())
        .map(|t| ((t.owner, t.name.clone()), t))
        .collect()
}

fn registry(log: &Log) -> Registry<()> {
    let mut r = Registry::new();
    for name in NAMES {
        let log = log.clone();
        r = r.timer_with(name, move |_| callback(name.into(), log.clone()));
    }
    r
}

proptest! {
    #![proptest_config(crate::cases(300))]
    #[test]
    fn rows_follow_the_timers(ops in prop::collection::vec(op(), 1..60), tail in prop::collection::vec(0u64..25, 1..20)) {
        let log: Log = Arc::default();
        let mut timers = TimerManager::<()>::new();
        let mut handles = Vec::new();
        let mut plain = Vec::new();
        let mut rows = BTreeMap::new();
        for op in ops {
            match op {
                Op::Set { owner, name, delay, looping, durable, times } => {
                    let name = NAMES[name as usize];
                    let b = if looping { timers.every(Span::from_flicks(delay)) } else { timers.after(Span::from_flicks(delay)) };
                    let mut b = b.owner(OwnerId::new(owner)).name(name).payload([owner as u8]);
                    if durable { b = b.durable(Offline::Freeze); }
                    if let Some(n) = times { b = b.times(n); }
                    let h = b.call(callback(name.into(), log.clone()));
                    if !durable { plain.push(h); }
                    handles.push(h);
                }
                Op::Clear(i) => { if let Some(&h) = handles.get(i) { timers.clear(h); } }
                Op::Pause(i) => { if let Some(&h) = handles.get(i) { timers.pause(h); } }
                Op::Unpause(i) => { if let Some(&h) = handles.get(i) { timers.unpause(h); } }
                Op::Restart(i) => { if let Some(&h) = handles.get(i) { timers.restart(h); } }
                Op::SetRate(i, r) => { if let Some(&h) = handles.get(i) { timers.set_rate(h, Span::from_flicks(r)); } }
                Op::FireNow(i) => { if let Some(&h) = handles.get(i) { timers.fire_now(h, &mut ()); } }
                Op::ClearOwner(o) => { timers.clear_owner(OwnerId::new(o)); }
                Op::Tick(dt) => { timers.tick(Span::from_flicks(dt), &mut ()); }
                Op::BeginFrame => timers.begin_frame(),
                Op::Drain => {
                    apply(&mut rows, timers.durable_changes());
                    prop_assert_eq!(&rows, &live(&timers));
                }
            }
        }
        apply(&mut rows, timers.durable_changes());
        prop_assert_eq!(&rows, &live(&timers));
        // Stores commit between frames: a frame left open is closed first (a pending row
        // counts from the next tick where a frame is open, from its load elsewhere).
        timers.tick(Span::ZERO, &mut ());
        apply(&mut rows, timers.durable_changes());
        prop_assert_eq!(&rows, &live(&timers));

        // A manager loaded from the rows runs on like the original, durable timers only.
        let saved = [0, 1, 2].map(|d| timers.clocks().now(Domain::ALL[d]).flicks());
        let only: Vec<_> = rows.into_values().collect();
        let log2: Log = Arc::default();
        let mut loaded = TimerManager::<()>::new();
        // Another clock reading, past the lateness of any saved timer (a late timer keeps its
        // lateness only as far back as the clock's start): past the original's reading, the
        // most any timer can lag (a chain of follow-ups set from their due times falls
        // behind the clock by each tick's length less 70 ms).
        let ahead = timers.clocks().now(Domain::Game).since_start();
        loaded.tick(ahead + Span::from_millis(1003), &mut ());
        let report = loaded.load_durable(only.clone(), saved, Span::ZERO, &mut registry(&log2)).unwrap();
        prop_assert_eq!(report.loaded, only.len());
        // Each row comes back whole (its times moved to the new clocks, its set order renumbered).
        let whole = |rows: Vec<DurableTimer>| rows.into_iter()
            .map(|t| ((t.owner, t.name.clone()), DurableTimer { time: 0, seq: 0, ..t }))
            .collect::<BTreeMap<_, _>>();
        prop_assert_eq!(whole(loaded.durable_timers()), whole(only.clone()));
        // The original's non-durable timers would log too: drop them first.
        for h in plain {
            timers.clear(h);
        }
        log.lock().unwrap().clear();
        let (t0, t1) = (timers.clocks().now(Domain::Game).flicks(), loaded.clocks().now(Domain::Game).flicks());
        for dt in tail {
            timers.tick(Span::from_flicks(dt * unit()), &mut ());
            loaded.tick(Span::from_flicks(dt * unit()), &mut ());
        }
        let rel = |l: &Log, t0: u64| l.lock().unwrap().iter().map(|(n, at, i)| (n.clone(), at.saturating_sub(t0), *i)).collect::<Vec<_>>();
        prop_assert_eq!(rel(&log, t0), rel(&log2, t1));
    }
}

#[test]
fn a_second_durable_timer_with_the_same_key_replaces_the_first() {
    let mut timers = TimerManager::<u32>::new();
    let owner = OwnerId::new(5);
    let first = (timers.after(secs(1.0)).owner(owner).name("build"))
        .durable(Offline::Freeze)
        .call(|n, _| *n += 1);
    let second = (timers.after(secs(2.0)).owner(owner).name("build"))
        .durable(Offline::Freeze)
        .call(|n, _| *n += 10);
    assert!(!timers.exists(first) && timers.exists(second));
    let changes = timers.durable_changes();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(matches!(&changes[0], DurableChange::Set(t) if t.time == secs(2.0).flicks()));
}

#[test]
fn a_timer_that_moves_away_leaves_no_removal() {
    let mut a = Scheduler::<()>::new();
    let owner = OwnerId::new(3);
    (a.timers().after(secs(1.0)).owner(owner).name("x"))
        .durable(Offline::Freeze)
        .call(|_, _| {});
    a.timers().durable_changes();
    let snap = a.export_owner(owner);
    assert!(a.timers().durable_changes().is_empty(), "moved, not ended");
    let mut b = Scheduler::<()>::new();
    b.import_owner(
        &snap,
        &mut Registry::new().timer("x", |_: &mut (), _: &mut TimerCx<()>| {}),
    )
    .unwrap();
    let changes = b.timers().durable_changes();
    assert!(
        matches!(&changes[..], [DurableChange::Set(t)] if t.name == "x"),
        "{changes:?}"
    );
}

/// One durable timer on the real clock, saved 0.25 s after it was set and loaded after
/// `offline` into a scheduler that resumes the saved clocks (the real one moved by `offline`,
/// as a store resumes it).
fn reload_after(
    offline: Span,
    policy: Offline,
    looping: bool,
) -> (Scheduler<Vec<u64>>, usize, tickflow::timer::LoadReport) {
    let mut timers = TimerManager::<Vec<u64>>::new();
    let b = if looping {
        timers.every(secs(1.0))
    } else {
        timers.after(secs(1.0))
    };
    b.real()
        .owner(OwnerId::new(1))
        .name("regen")
        .durable(policy)
        .call(|_, _| {});
    timers.tick(secs(0.25), &mut Vec::new());
    let rows = timers.durable_timers();
    let c = timers.clocks();
    let saved = [0, 1, 2].map(|d| c.now(Domain::ALL[d]).flicks());
    let mut loaded = Scheduler::resumed(
        c.now(Domain::Game),
        c.now(Domain::Real) + offline,
        c.frame(),
    );
    let mut registry = Registry::new()
        .timer("regen", |log: &mut Vec<u64>, cx: &mut TimerCx<Vec<u64>>| {
            log.push(cx.calls_this_tick())
        });
    let report = loaded
        .timers()
        .load_durable(rows, saved, offline, &mut registry)
        .unwrap();
    let n = loaded.timers().len();
    (loaded, n, report)
}

#[test]
fn offline_policies_decide_what_lapsed_timers_do() {
    // Not lapsed: 0.75 s left, minus 0.5 s offline.
    let (mut m, _, report) = reload_after(secs(0.5), Offline::CatchUp, true);
    assert_eq!(report.on_time, 1);
    let mut log = Vec::new();
    m.tick(secs(0.2), &mut log);
    assert!(log.is_empty());
    m.tick(secs(0.05), &mut log);
    assert_eq!(log, [1], "due exactly 0.25 s after the reload");

    // Lapsed by 3.25 s: the missed calls in the first frame.
    let (mut m, _, report) = reload_after(secs(4.0), Offline::CatchUp, true);
    assert_eq!(report.caught_up, 1);
    let mut log = Vec::new();
    m.tick(Span::ZERO, &mut log);
    assert_eq!(
        log, [4; 4],
        "due at 0.75 s, 1.75, 2.75 and 3.75 after the save: {log:?}"
    );

    let (mut m, _, report) = reload_after(secs(4.0), Offline::Once, true);
    assert_eq!(report.fired_once, 1);
    let mut log = Vec::new();
    m.tick(Span::ZERO, &mut log);
    assert_eq!(log, [1]);
    m.tick(secs(0.99), &mut log);
    assert_eq!(log, [1], "the next period counts from the reload");

    let (mut m, _, report) = reload_after(secs(4.0), Offline::Skip, true);
    assert_eq!(report.skipped, 1);
    let mut log = Vec::new();
    m.tick(secs(0.74), &mut log);
    assert!(log.is_empty(), "no call for the missed periods");
    m.tick(secs(0.01), &mut log);
    assert_eq!(
        log,
        [1],
        "back on its grid: 0.75 s + k periods after the save"
    );

    let (_, n, report) = reload_after(secs(4.0), Offline::Skip, false);
    assert_eq!(
        (n, report.dropped, report.loaded),
        (0, 1, 0),
        "a lapsed one-shot is dropped"
    );

    let (mut m, _, report) = reload_after(secs(4.0), Offline::Freeze, false);
    assert_eq!(report.on_time, 1, "offline time does not count");
    let mut log = Vec::new();
    m.tick(secs(0.74), &mut log);
    assert!(log.is_empty());
    m.tick(secs(0.01), &mut log);
    assert_eq!(log, [1]);
}

#[test]
fn a_bad_or_unbound_row_loads_nothing() {
    let mut timers = TimerManager::<()>::new();
    for name in ["a", "b"] {
        (timers.after(secs(1.0)).owner(OwnerId::new(2)).name(name))
            .durable(Offline::Freeze)
            .call(|_, _| {});
    }
    let rows = timers.durable_timers();
    let both = || {
        Registry::new()
            .timer("a", |_: &mut (), _: &mut TimerCx<()>| {})
            .timer("b", |_: &mut (), _: &mut TimerCx<()>| {})
    };

    let mut bad = rows.clone();
    bad[1].times_left = Some(0);
    let mut m = TimerManager::<()>::new();
    let err = m
        .load_durable(bad, [0; 3], Span::ZERO, &mut both())
        .unwrap_err();
    assert!(
        err.to_string().contains("\"b\"") && err.to_string().contains("times_left"),
        "{err}"
    );
    assert!(m.is_empty(), "nothing half-loaded");

    let only_a = Registry::new().timer("a", |_: &mut (), _: &mut TimerCx<()>| {});
    let err = m
        .load_durable(rows.clone(), [0; 3], Span::ZERO, &mut { only_a })
        .unwrap_err();
    assert!(err.to_string().contains('b'), "{err}");
    assert!(m.is_empty() && m.durable_changes().is_empty());

    let mut twice = rows.clone();
    twice[1].name = "a".into();
    let err = m
        .load_durable(twice, [0; 3], Span::ZERO, &mut both())
        .unwrap_err();
    assert!(err.to_string().contains("twice"), "{err}");

    let report = m
        .load_durable(rows.clone(), [0; 3], Span::ZERO, &mut both())
        .unwrap();
    assert_eq!(report.loaded, 2);
    assert!(
        m.durable_changes().is_empty(),
        "the same clocks: the rows stand as they are"
    );

    let mut later = TimerManager::<()>::new();
    later.tick(secs(0.5), &mut ());
    later
        .load_durable(rows, [0; 3], Span::ZERO, &mut both())
        .unwrap();
    assert_eq!(
        later.durable_changes().len(),
        2,
        "other clocks: the rows are written again"
    );
    assert_eq!(later.remaining(later.list()[0].handle), Some(secs(1.0)));
}

/// A durable timer a store could not keep is refused where it is set, not at a commit that
/// would then refuse every later frame.
#[test]
fn a_durable_timer_over_the_limits_is_refused_when_set() {
    use tickflow::timer::{MAX_DURABLE_NAME, MAX_DURABLE_PAYLOAD};
    let set = |name: usize, payload: usize| {
        std::panic::catch_unwind(move || {
            let mut m = TimerManager::<()>::new();
            (m.after(secs(1.0))
                .name("n".repeat(name))
                .payload(vec![0; payload]))
            .durable(Offline::Freeze)
            .call(|_, _| {});
        })
    };
    assert!(set(MAX_DURABLE_NAME, MAX_DURABLE_PAYLOAD).is_ok());
    let e = set(MAX_DURABLE_NAME + 1, 0).unwrap_err();
    let text = e.downcast_ref::<String>().unwrap();
    assert!(text.contains("name must be at most 1024 bytes"), "{text}");
    assert!(set(0, MAX_DURABLE_PAYLOAD + 1).is_err());
    // Not durable: no limit of the store's applies.
    let mut m = TimerManager::<()>::new();
    m.after(secs(1.0))
        .payload(vec![0; MAX_DURABLE_PAYLOAD + 1])
        .call(|_, _| {});
}
