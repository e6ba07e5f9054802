//! Property test: interval and every-frame functions under random registrations, removals,
//! enables and interval changes, with random frame lengths. Every frame, the functions that
//! ran, their order and the delta each received must equal a naive reference that checks
//! every function's cooldown every frame (the rules of `tick_interval.rs`: due when the time
//! since the previous due time reaches the interval, overrun credited, a hitch is one tick).
//! Some functions have a time dilation of 2 (so every-frame ones take the full path from
//! their lane too), and the game pauses at times (nothing runs, the game clock stops).

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use tickflow::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Interval in tenths of a second (0: every frame).
    Add {
        tenths: u64,
        enabled: bool,
        dilated: bool,
    },
    Pause(bool),
    Enable(usize, bool),
    SetInterval(usize, u64),
    Remove(usize),
    /// A frame of this many hundredths of a second.
    Frame(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (prop_oneof![Just(0u64), 1..30u64], prop::bool::weighted(0.9), prop::bool::weighted(0.2))
            .prop_map(|(tenths, enabled, dilated)| Op::Add { tenths, enabled, dilated }),
        1 => prop::bool::weighted(0.3).prop_map(Op::Pause),
        1 => (0..24usize, any::<bool>()).prop_map(|(a, on)| Op::Enable(a, on)),
        1 => (0..24usize, prop_oneof![Just(0u64), 1..30u64]).prop_map(|(a, t)| Op::SetInterval(a, t)),
        1 => (0..24usize).prop_map(Op::Remove),
        6 => prop_oneof![Just(10u64), 1..40u64, Just(150u64)].prop_map(Op::Frame),
    ]
}

/// One function of the reference.
struct Func {
    interval: u64,
    enabled: bool,
    dilation: u64,
    due: u64,
    last_tick: Option<u64>,
    ever_ran: bool,
}

/// The due time after a tick at `now` that was due at `due` (the documented rule).
fn next_due(due: u64, now: u64, interval: u64, first: bool) -> u64 {
    let base = if first { now } else { due };
    match base.saturating_add(interval) {
        next if next > now => next,
        _ => now.saturating_add(interval),
    }
}

type Log = Arc<Mutex<Vec<(usize, u64)>>>;

proptest! {
    #![proptest_config(crate::cases(256))]

    #[test]
    fn intervals_match_a_scan_of_every_function(ops in prop::collection::vec(op(), 1..120)) {
        let tenth = secs(0.1).flicks();
        let hundredth = secs(0.01).flicks();
        let mut sched = Scheduler::<()>::new();
        let log: Log = Arc::default();
        let mut handles: Vec<Option<TickHandle>> = Vec::new();
        let mut model: Vec<Option<Func>> = Vec::new();
        let mut now = 0u64;
        let mut paused = false;
        for op in ops {
            match op {
                Op::Pause(on) => {
                    sched.set_paused(on);
                    paused = on;
                }
                Op::Add { tenths, enabled, dilated } => {
                    let id = handles.len();
                    let log = log.clone();
                    let settings = TickSettings {
                        interval: Span::from_flicks(tenths * tenth),
                        enabled,
                        time_dilation: if dilated { 2.0 } else { 1.0 },
                        ..TickSettings::default()
                    };
                    let h = sched.ticks().add(settings, move |_, cx| {
                        log.lock().unwrap().push((id, cx.dt().flicks()));
                    });
                    handles.push(Some(h));
                    model.push(Some(Func {
                        interval: tenths * tenth,
                        enabled,
                        dilation: if dilated { 2 } else { 1 },
                        due: now,
                        last_tick: None,
                        ever_ran: false,
                    }));
                }
                Op::Enable(a, on) => {
                    let Some(Some(h)) = handles.get(a) else { continue };
                    prop_assert!(sched.ticks().set_enabled(*h, on));
                    let f = model[a].as_mut().unwrap();
                    if f.enabled != on {
                        f.enabled = on;
                        f.last_tick = None;
                        f.due = now;
                    }
                }
                Op::SetInterval(a, tenths) => {
                    let Some(Some(h)) = handles.get(a) else { continue };
                    let interval = tenths * tenth;
                    prop_assert!(sched.ticks().set_interval(*h, Span::from_flicks(interval)));
                    let f = model[a].as_mut().unwrap();
                    let had = f.interval > 0;
                    f.interval = interval;
                    if interval > 0 && f.enabled {
                        if !had && f.ever_ran {
                            f.last_tick = Some(now);
                        }
                        f.due = if f.last_tick.is_some() { now + interval } else { now };
                    }
                }
                Op::Remove(a) => {
                    let Some(slot) = handles.get_mut(a) else { continue };
                    if let Some(h) = slot.take() {
                        prop_assert!(sched.ticks().remove(h));
                        model[a] = None;
                    }
                }
                Op::Frame(hundredths) => {
                    sched.tick(Span::from_flicks(hundredths * hundredth), &mut ());
                    // The game delta is clamped to max_delta (0.25 s by default): a 1.5 s
                    // frame is a hitch.
                    let dt = hundredths.min(25) * hundredth;
                    let mut want = Vec::new();
                    if paused {
                        let got = std::mem::take(&mut *log.lock().unwrap());
                        prop_assert_eq!(got, want, "paused at {} flicks", now);
                        continue;
                    }
                    now += dt;
                    for (id, f) in model.iter_mut().enumerate() {
                        let Some(f) = f.as_mut().filter(|f| f.enabled) else { continue };
                        let first = f.last_tick.is_none();
                        if f.interval > 0 && !first && f.due > now {
                            continue;
                        }
                        let given = match f.last_tick {
                            Some(t) if f.interval > 0 => now - t,
                            _ => dt,
                        };
                        if f.interval > 0 {
                            f.due = next_due(f.due, now, f.interval, first);
                        }
                        f.last_tick = Some(now);
                        f.ever_ran = true;
                        want.push((id, given * f.dilation));
                    }
                    let got = std::mem::take(&mut *log.lock().unwrap());
                    prop_assert_eq!(got, want, "frame at {} flicks", now);
                }
            }
        }
    }
}
