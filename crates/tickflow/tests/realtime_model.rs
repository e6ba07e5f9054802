//! Model-based property test of the real-time service on a manual clock: random schedules
//! (one-shots and repeats, first delays and `times(n)` in either builder order, zero periods,
//! all three catch-up policies, the catch-up cap), cancels from outside and from inside
//! callbacks, and irregular ticks, run against a small reference model that rescans every timer
//! for every call. Every call (timer, due time, index, order), every `cancel` answer, every
//! `is_active`, every `on_cancel` run and every count is compared after every step.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use tickflow::realtime::{scheduled, Clock, ManualClock, RealtimeHandle, RealtimeTimers};
use tickflow::CatchUp;

/// Time unit of the generated schedules: 1 ms, in nanoseconds.
const UNIT: u64 = 1_000_000;

#[derive(Clone, Debug)]
enum Op {
    Set {
        repeating: bool,
        rate: u64,
        first: Option<u64>,
        /// `times` before `first_delay` in the builder (the order must not matter).
        times_first: bool,
        times: Option<u64>,
        catch_up: u8,
        /// The callback cancels its own timer in this call (0-based).
        cancel_in: Option<u64>,
    },
    Cancel(usize),
    Cap(u64),
    Tick(u64),
}

fn delay_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => (0u64..40).prop_map(|k| k * UNIT),
        2 => 0u64..(40 * UNIT),
        2 => Just(0u64),
        1 => Just(u64::MAX), // never (too far to represent)
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (
            any::<bool>(),
            delay_strategy(),
            proptest::option::weighted(0.4, delay_strategy()),
            any::<bool>(),
            proptest::option::weighted(0.4, 0u64..5),
            0u8..3,
            proptest::option::weighted(0.3, 0u64..4),
        )
            .prop_map(|(repeating, rate, first, times_first, times, catch_up, cancel_in)| {
                Op::Set { repeating, rate, first, times_first, times, catch_up, cancel_in }
            }),
        2 => (0usize..16).prop_map(Op::Cancel),
        1 => prop_oneof![Just(1u64), Just(2), Just(1_000)].prop_map(Op::Cap),
        8 => prop_oneof![
            6 => 0u64..(30 * UNIT),
            2 => Just(0u64),
            1 => Just(500 * UNIT),
            1 => Just(100_000 * UNIT),
        ]
        .prop_map(Op::Tick),
    ]
}

fn policy(k: u8) -> CatchUp {
    [CatchUp::Burst, CatchUp::Once, CatchUp::Delay][k as usize]
}

fn duration(ns: u64) -> Duration {
    if ns == u64::MAX {
        Duration::MAX
    } else {
        Duration::from_nanos(ns)
    }
}

/// One timer of the model. Times are nanoseconds since the start, `None` for never.
#[derive(Clone, Debug)]
struct MTimer {
    period: Option<u64>,
    catch_up: CatchUp,
    times_left: Option<u64>,
    cancel_in: Option<u64>,
    /// Due time of the next call.
    next: Option<u128>,
    /// Not called again before this pass (a zero period's once-per-pass rule).
    not_before: u64,
    calls: u64,
    /// Calls made in the pass numbered `pass` (for the cap).
    burst: u64,
    pass: u64,
    /// Has calls left and was not cancelled.
    active: bool,
    /// Scheduled calls are still collected (a timer whose last call was collected is not).
    stored: bool,
    hooks: u32,
}

#[derive(Default)]
struct Model {
    now: u128,
    pass: u64,
    cap: u64,
    dropped: u64,
    timers: Vec<MTimer>,
    calls: Vec<(usize, u128, u64)>,
    answers: Vec<(usize, bool)>,
}

impl Model {
    fn first_after(t: &MTimer, due: u128, now: u128) -> Option<u128> {
        let p = u128::from(t.period?);
        Some(due + ((now - due) / p + 1) * p)
    }

    /// One `tick`: collect every due call in order (rescheduling as it goes), then run them;
    /// a call of a timer cancelled meanwhile is skipped. Returns the calls that ran.
    fn tick(&mut self) -> usize {
        self.pass += 1;
        let (now, pass) = (self.now, self.pass);
        let mut collected: Vec<(usize, u128, bool)> = Vec::new();
        loop {
            let pick = (self.timers.iter().enumerate())
                .filter(|(_, t)| t.active && t.stored && t.not_before <= pass)
                .filter_map(|(id, t)| t.next.filter(|&due| due <= now).map(|due| (due, id)))
                .min();
            let Some((due, id)) = pick else { break };
            let cap = self.cap;
            let t = &mut self.timers[id];
            if t.pass != pass {
                (t.pass, t.burst) = (pass, 0);
            }
            t.burst += 1;
            let last = match t.times_left.as_mut() {
                Some(left) => {
                    *left -= 1;
                    *left == 0
                }
                None => t.period.is_none(),
            };
            collected.push((id, due, last));
            if last {
                t.stored = false;
                continue;
            }
            let p = t.period.expect("repeats");
            if p == 0 {
                t.next = Some(now);
                t.not_before = pass + 1;
                continue;
            }
            // `u64::MAX` stands for `Duration::MAX`: the next call is too far to represent.
            let grid = (p != u64::MAX).then(|| due + u128::from(p));
            t.next = match (grid, t.catch_up) {
                (Some(g), _) if g > now => Some(g),
                (None, _) => None,
                (Some(g), CatchUp::Burst) if t.burst < cap => Some(g),
                (Some(g), CatchUp::Burst) => {
                    let ahead = Self::first_after(t, due, now).unwrap();
                    self.dropped += ((ahead - g) / u128::from(p)) as u64;
                    Some(ahead)
                }
                (Some(_), CatchUp::Once) => Self::first_after(t, due, now),
                (Some(_), CatchUp::Delay) => Some(now + u128::from(p)),
            };
        }
        let mut ran = 0;
        for (id, due, last) in collected {
            let t = &mut self.timers[id];
            if !t.active {
                continue; // cancelled before this call started
            }
            ran += 1;
            let k = t.calls;
            t.calls += 1;
            self.calls.push((id, due, k));
            if t.cancel_in == Some(k) {
                // From inside the call: only a call that is not the last has calls left.
                self.answers.push((id, !last));
                if !last {
                    t.active = false;
                    t.hooks += 1;
                }
            }
            if last {
                t.active = false;
            }
        }
        ran
    }
}

type Shared<T> = Arc<Mutex<T>>;

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let t0: Instant = clock.now();
    let real = RealtimeTimers::manual(clock.clone());
    let mut model = Model {
        cap: tickflow::time::DEFAULT_CATCH_UP_CAP,
        ..Model::default()
    };
    let calls: Shared<Vec<(usize, u128, u64)>> = Arc::default();
    let answers: Shared<Vec<(usize, bool)>> = Arc::default();
    let handles: Shared<Vec<RealtimeHandle>> = Arc::default();
    let hooks: Shared<Vec<u32>> = Arc::default();
    for op in ops {
        match op {
            Op::Set {
                repeating,
                rate,
                first,
                times_first,
                times,
                catch_up,
                cancel_in,
            } => {
                let id = model.timers.len();
                let mut b = if repeating {
                    real.every(duration(rate))
                } else {
                    real.after(duration(rate))
                };
                if times_first {
                    if let Some(n) = times {
                        b = b.times(n);
                    }
                }
                if let Some(f) = first {
                    b = b.first_delay(duration(f));
                }
                if !times_first {
                    if let Some(n) = times {
                        b = b.times(n);
                    }
                }
                hooks.lock().unwrap().push(0);
                let hk = hooks.clone();
                b = b.catch_up(policy(catch_up)).on_cancel(move || {
                    hk.lock().unwrap()[id] += 1;
                });
                let (c, a, hs) = (calls.clone(), answers.clone(), handles.clone());
                let mut k = 0u64;
                let h = b.call(move || {
                    let due = scheduled()
                        .expect("in a call")
                        .duration_since(t0)
                        .as_nanos();
                    c.lock().unwrap().push((id, due, k));
                    if cancel_in == Some(k) {
                        let me = hs.lock().unwrap()[id].clone();
                        a.lock().unwrap().push((id, me.cancel()));
                    }
                    k += 1;
                });
                handles.lock().unwrap().push(h);
                let period = (repeating || times.is_some_and(|n| n > 1)).then_some(rate);
                let first = u128::from(first.unwrap_or(rate));
                let never = first == u128::from(u64::MAX);
                model.timers.push(MTimer {
                    period,
                    catch_up: policy(catch_up),
                    times_left: times,
                    cancel_in,
                    next: (!never).then_some(model.now + first),
                    not_before: 0,
                    calls: 0,
                    burst: 0,
                    pass: 0,
                    active: times != Some(0),
                    stored: times != Some(0),
                    hooks: 0,
                });
            }
            Op::Cancel(k) if k < model.timers.len() => {
                let t = &mut model.timers[k];
                let expect = t.active;
                if expect {
                    t.active = false;
                    t.hooks += 1;
                }
                let h = handles.lock().unwrap()[k].clone();
                prop_assert_eq!(h.cancel(), expect);
            }
            Op::Cap(n) => {
                model.cap = n;
                real.set_catch_up_cap(n);
            }
            Op::Tick(d) => {
                clock.advance(Duration::from_nanos(d));
                model.now += u128::from(d);
                let expect = model.tick();
                prop_assert_eq!(real.tick(), expect);
            }
            _ => {}
        }
        prop_assert_eq!(&*calls.lock().unwrap(), &model.calls);
        prop_assert_eq!(&*answers.lock().unwrap(), &model.answers);
        prop_assert_eq!(real.calls_dropped(), model.dropped);
        let hooks = hooks.lock().unwrap().clone();
        let handles = handles.lock().unwrap().clone();
        for (k, t) in model.timers.iter().enumerate() {
            prop_assert_eq!(handles[k].is_active(), t.active, "timer {}", k);
            prop_assert_eq!(hooks[k], t.hooks, "hooks of timer {}", k);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::cases(10_000))]

    #[test]
    fn realtime_service_matches_the_reference_model(ops in proptest::collection::vec(op_strategy(), 1..50)) {
        run(ops)?;
    }
}
