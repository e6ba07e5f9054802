//! Model-based property test: random operation sequences run against `TimerManager` and a small
//! reference model that rescans every timer for every call (obviously correct, O(n) per call).
//! Every call (timer, handle, scheduled time, index, calls this tick, order) and every query
//! answer is compared after every step. The sequences include one-shots whose first delay
//! differs from their rate, `times(0)`, huge deltas against the catch-up cap, and handles of
//! another manager (which must be answered like stale ones and change nothing).

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use tickflow::prelude::*;
use tickflow::timer::TimerBuilder;

#[path = "timer_model/reference.rs"]
mod reference;

use reference::{MState, MTimer, Model, NEVER};

/// One logged call: (timer ordinal, handle, scheduled, call index, calls this tick).
type CallRec = (usize, TimerHandle, u64, u64, u64);
type Log = Arc<Mutex<Vec<CallRec>>>;

#[derive(Clone, Debug)]
enum Op {
    Set {
        domain: u8,
        delay: u64,
        period: Option<u64>,
        /// A one-shot set with `after(rate).first_delay(delay)`.
        rate: Option<u64>,
        catch_up: u8,
        times: Option<u64>,
        clear_at: Option<u64>,
    },
    Clear(usize),
    Pause(usize),
    Unpause(usize),
    FireNow(usize),
    BeginFrame,
    Budget(Option<usize>),
    Cap(u64),
    Restart(usize),
    SetRate(usize, u64),
    /// Clear, pause, unpause, fire and query with a handle of another manager.
    Foreign(usize),
    Tick(u64, u64),
}

fn unit() -> u64 {
    Span::frames(1, 100).flicks() // 10 ms
}

fn span_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => (0u64..40).prop_map(|k| k * unit()),
        2 => 0u64..(40 * unit()),
        1 => Just(0u64),
        1 => Just(1u64 << 52), // huge, but clocks stay far from u64::MAX
        1 => Just(NEVER),
    ]
}

/// Periods are zero or at least 10 ms, so that a huge tick makes a burst of hundreds of calls,
/// not billions.
fn period_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => (1u64..40).prop_map(|k| k * unit()),
        2 => unit()..(40 * unit()),
        1 => Just(0u64),
        1 => Just(1u64 << 52),
        1 => Just(NEVER),
    ]
}

/// Frame deltas, including hitches of seconds and huge ones (an eight-hour sleep, and 2^52
/// flicks: a 10 ms timer is then 900,000 periods late, which only the catch-up cap bounds).
fn delta_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![
        12 => 0u64..(30 * unit()),
        4 => Just(0u64),
        4 => Just(500 * unit()),
        1 => Just(8 * 3600 * 100 * unit()),
        1 => Just(1u64 << 52),
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (
            0u8..3,
            span_strategy(),
            proptest::option::of(period_strategy()),
            proptest::option::weighted(0.3, span_strategy()),
            0u8..3,
            proptest::option::weighted(0.3, 0u64..5),
            proptest::option::weighted(0.2, 0u64..4),
        )
            .prop_map(|(domain, delay, period, rate, catch_up, times, clear_at)| Op::Set {
                domain,
                delay,
                period,
                rate: if period.is_some() { None } else { rate },
                catch_up,
                times,
                clear_at
            }),
        2 => (0usize..24).prop_map(Op::Clear),
        2 => (0usize..24).prop_map(Op::Pause),
        2 => (0usize..24).prop_map(Op::Unpause),
        1 => (0usize..24).prop_map(Op::FireNow),
        2 => Just(Op::BeginFrame),
        1 => proptest::option::weighted(0.5, 0usize..4).prop_map(Op::Budget),
        1 => prop_oneof![Just(1u64), Just(2), Just(3), Just(1_000)].prop_map(Op::Cap),
        1 => (0usize..24).prop_map(Op::Foreign),
        1 => (0usize..24).prop_map(Op::Restart),
        1 => (0usize..24, period_strategy()).prop_map(|(k, r)| Op::SetRate(k, r)),
        8 => (delta_strategy(), delta_strategy()).prop_map(|(g, r)| Op::Tick(g, r)),
    ]
}

fn catch_up_of(k: u8) -> CatchUp {
    [CatchUp::Burst, CatchUp::Once, CatchUp::Delay][k as usize]
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut real = TimerManager::<()>::new();
    let mut model = Model::default();
    let log: Log = Arc::default();
    let mut handles: Vec<TimerHandle> = vec![];
    // Another manager's handles: the same slots and generations as `real`'s first timers.
    let mut other = TimerManager::<()>::new();
    let foreign: Vec<TimerHandle> = (0..24)
        .map(|_| other.after(Span::from_secs(1)).call(|_, _| {}))
        .collect();
    for op in ops {
        match op {
            Op::Set {
                domain,
                delay,
                period,
                rate,
                catch_up,
                times,
                clear_at,
            } => {
                let id = handles.len();
                let l = log.clone();
                let cb = move |_: &mut (), cx: &mut TimerCx<'_, ()>| {
                    l.lock().unwrap().push((
                        id,
                        cx.handle(),
                        cx.scheduled().flicks(),
                        cx.call_index(),
                        cx.calls_this_tick(),
                    ));
                    if clear_at == Some(cx.call_index()) {
                        cx.clear_self();
                    }
                };
                let frames = domain == 2;
                // Frame timers count small numbers of frames.
                let scale = |v: u64| {
                    if frames && v != NEVER {
                        v / unit() % 5
                    } else {
                        v
                    }
                };
                let (delay, period, rate) = (scale(delay), period.map(scale), rate.map(scale));
                // What every timer takes, whatever it counts in.
                fn finish<U>(
                    mut b: TimerBuilder<'_, (), U>,
                    catch_up: CatchUp,
                    times: Option<u64>,
                    cb: impl FnMut(&mut (), &mut TimerCx<'_, ()>) + Send + 'static,
                ) -> TimerHandle {
                    b = b.catch_up(catch_up);
                    if let Some(n) = times {
                        b = b.times(n);
                    }
                    b.call(cb)
                }
                let policy = catch_up_of(catch_up);
                let h = if frames {
                    let b = match (period, rate) {
                        (None, None) => real.after(Frames(delay)),
                        (None, Some(r)) => real.after(Frames(r)).first_delay(Frames(delay)),
                        (Some(p), _) => real.every(Frames(p)).first_delay(Frames(delay)),
                    };
                    finish(b, policy, times, cb)
                } else {
                    let mut b = match (period, rate) {
                        (None, None) => real.after(Span::from_flicks(delay)),
                        (None, Some(r)) => real
                            .after(Span::from_flicks(r))
                            .first_delay(Span::from_flicks(delay)),
                        (Some(p), _) => real
                            .every(Span::from_flicks(p))
                            .first_delay(Span::from_flicks(delay)),
                    };
                    if domain == 1 {
                        b = b.real();
                    }
                    finish(b, policy, times, cb)
                };
                handles.push(h);
                if times == Some(0) {
                    // No calls: nothing is stored, and the handle names no timer.
                    prop_assert_eq!(h, TimerHandle::default());
                    model.timers.push(None);
                    continue;
                }
                let looping = period.is_some() || times.is_some_and(|n| n > 1);
                let p = period.or(rate).unwrap_or(delay);
                model.timers.push(Some(MTimer {
                    domain: domain as usize,
                    period: p,
                    first: delay,
                    has_first: delay != p,
                    looping,
                    catch_up: catch_up_of(catch_up),
                    times_left: times,
                    clear_at,
                    seq: id,
                    calls: 0,
                    state: MState::Active(0),
                    not_before: 0,
                    burst: 0,
                    burst_tick: 0,
                }));
                model.start(id, delay);
            }
            Op::Clear(k) if k < handles.len() => {
                let expect = model.timers[k].take().is_some();
                prop_assert_eq!(real.clear(handles[k]), expect);
            }
            Op::Pause(k) if k < handles.len() => {
                let mut expect = false;
                if let Some(t) = model.timers[k].clone() {
                    if !matches!(t.state, MState::Paused(_)) {
                        let rem = model.remaining(&t);
                        model.timers[k].as_mut().unwrap().state = MState::Paused(rem);
                        expect = true;
                    }
                }
                prop_assert_eq!(real.pause(handles[k]), expect);
            }
            Op::Unpause(k) if k < handles.len() => {
                let mut expect = false;
                if let Some(MState::Paused(rem)) = model.timers[k].as_ref().map(|t| t.state) {
                    model.start(k, rem);
                    expect = true;
                }
                prop_assert_eq!(real.unpause(handles[k]), expect);
            }
            Op::FireNow(k) if k < handles.len() => {
                let expect = model.timers[k].is_some();
                if expect {
                    let d = model.timers[k].as_ref().unwrap().domain;
                    let now = model.now[d];
                    model.call(k, now, 1);
                }
                prop_assert_eq!(real.fire_now(handles[k], &mut ()), expect);
            }
            Op::BeginFrame => {
                model.frame_open = true;
                real.begin_frame();
            }
            Op::Budget(b) => {
                model.budget = b;
                real.set_fire_budget(b);
            }
            Op::Cap(n) => {
                model.cap = n;
                real.set_catch_up_cap(n);
            }
            Op::Restart(k) if k < handles.len() => {
                let expect = model.restart(k);
                prop_assert_eq!(real.restart(handles[k]), expect);
            }
            Op::SetRate(k, r) if k < handles.len() => {
                let frames = model.timers[k].as_ref().is_some_and(|t| t.domain == 2);
                let r = if frames && r != NEVER {
                    r / unit() % 5
                } else {
                    r
                };
                let expect = model.set_rate(k, r);
                prop_assert_eq!(real.set_rate(handles[k], Span::from_flicks(r)), expect);
            }
            Op::Foreign(k) => {
                let h = foreign[k];
                prop_assert!(!real.exists(h) && real.remaining(h).is_none());
                prop_assert!(real.calls_made(h).is_none() && real.info_of(h).is_none());
                prop_assert!(!real.pause(h) && !real.unpause(h));
                prop_assert!(!real.fire_now(h, &mut ()) && !real.clear(h));
            }
            Op::Tick(g, r) => {
                model.tick(g, r);
                real.tick_step(Span::from_flicks(g), Span::from_flicks(r), &mut ());
            }
            _ => {}
        }
        // every call, in order
        let got: Vec<(usize, u64, u64, u64)> = log
            .lock()
            .unwrap()
            .iter()
            .map(|&(id, h, s, i, n)| {
                assert_eq!(h, handles[id], "the call sees its own handle");
                (id, s, i, n)
            })
            .collect();
        prop_assert_eq!(&got, &model.log);
        // every query
        prop_assert_eq!(real.len(), model.timers.iter().flatten().count());
        prop_assert_eq!(real.calls_dropped(), model.dropped);
        for (k, &h) in handles.iter().enumerate() {
            let m = model.timers[k].as_ref();
            prop_assert_eq!(real.exists(h), m.is_some());
            let paused = m.is_some_and(|t| matches!(t.state, MState::Paused(_)));
            let pending = m.is_some_and(|t| matches!(t.state, MState::Pending(_)));
            prop_assert_eq!(real.is_paused(h), paused);
            prop_assert_eq!(real.is_active(h), m.is_some() && !paused);
            prop_assert_eq!(real.is_pending(h), pending);
            prop_assert_eq!(real.rate(h).map(Span::flicks), m.map(|t| t.period));
            prop_assert_eq!(real.calls_made(h), m.map(|t| t.calls));
            let rem = m.map(|t| model.remaining(t));
            prop_assert_eq!(real.remaining(h).map(Span::flicks), rem);
            let elapsed = m.map(|t| model.elapsed(t));
            prop_assert_eq!(real.elapsed(h).map(Span::flicks), elapsed);
            let fraction = m.map(|t| match (Model::countdown_len(t), model.remaining(t)) {
                (_, NEVER) => 0.0,
                (0, _) => 1.0,
                (len, _) => model.elapsed(t) as f64 / len as f64,
            });
            prop_assert_eq!(real.fraction(h), fraction);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::cases(10_000))]

    #[test]
    fn timer_manager_matches_the_reference_model(ops in proptest::collection::vec(op_strategy(), 1..60)) {
        run(ops)?;
    }
}
