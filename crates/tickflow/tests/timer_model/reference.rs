//! The reference model of `timer_model.rs`: every timer rescanned for every call, obviously
//! correct and O(n) per call.

use tickflow::prelude::*;

/// A due time that never comes.
pub const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MState {
    Pending(u64),
    Active(u64),
    Paused(u64),
}

#[derive(Clone, Debug)]
pub struct MTimer {
    pub domain: usize,
    pub period: u64,
    pub first: u64,
    /// The first delay differs from the period (else the countdown before the first call
    /// follows the period).
    pub has_first: bool,
    pub looping: bool,
    pub catch_up: CatchUp,
    pub times_left: Option<u64>,
    pub clear_at: Option<u64>,
    pub seq: usize,
    pub calls: u64,
    pub state: MState,
    /// Tick number before which it may not fire (set in the tick that is running).
    pub not_before: u64,
    pub burst: u64,
    pub burst_tick: u64,
}

pub struct Model {
    pub now: [u64; 3],
    pub prev: [u64; 3],
    pub tick_no: u64,
    pub frame_open: bool,
    pub budget: Option<usize>,
    pub cap: u64,
    pub dropped: u64,
    pub timers: Vec<Option<MTimer>>,
    pub log: Vec<(usize, u64, u64, u64)>,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            now: [0; 3],
            prev: [0; 3],
            tick_no: 0,
            frame_open: false,
            budget: None,
            cap: tickflow::time::DEFAULT_CATCH_UP_CAP,
            dropped: 0,
            timers: Vec::new(),
            log: Vec::new(),
        }
    }
}

impl Model {
    pub fn start(&mut self, id: usize, delay: u64) {
        let t = self.timers[id].as_mut().unwrap();
        t.state = if self.frame_open {
            MState::Pending(delay)
        } else {
            MState::Active(self.now[t.domain].checked_add(delay).unwrap_or(NEVER))
        };
        t.not_before = if self.frame_open { 0 } else { self.tick_no + 1 };
    }

    pub fn fraction(&self, d: usize, due: u64) -> (i128, i128) {
        let off = due as i128 - self.prev[d] as i128;
        let len = (self.now[d] - self.prev[d]) as i128;
        if len == 0 {
            (off + 1, 1)
        } else {
            (off, len)
        }
    }

    /// The timer with the earliest due call this tick: by place in the tick, then set order.
    pub fn next_call(&self) -> Option<usize> {
        let place = |a: &MTimer, due: u64, b: &MTimer, bdue: u64| {
            if a.domain == b.domain {
                due.cmp(&bdue)
            } else {
                let (fa, fb) = (self.fraction(a.domain, due), self.fraction(b.domain, bdue));
                (fa.0 * fb.1).cmp(&(fb.0 * fa.1))
            }
        };
        self.timers
            .iter()
            .enumerate()
            .filter_map(|(id, t)| {
                let t = t.as_ref()?;
                match t.state {
                    MState::Active(due)
                        if due != NEVER
                            && due <= self.now[t.domain]
                            && t.not_before <= self.tick_no =>
                    {
                        Some((id, t, due))
                    }
                    _ => None,
                }
            })
            .min_by(|(_, a, ad), (_, b, bd)| place(a, *ad, b, *bd).then(a.seq.cmp(&b.seq)))
            .map(|(id, _, _)| id)
    }

    /// Records one call and returns whether the timer is finished (removed).
    pub fn call(&mut self, id: usize, scheduled: u64, this_tick: u64) -> bool {
        let t = self.timers[id].as_mut().unwrap();
        self.log.push((id, scheduled, t.calls, this_tick));
        let cleared = t.clear_at == Some(t.calls);
        t.calls += 1;
        if let Some(left) = t.times_left.as_mut() {
            *left -= 1;
        }
        let done = cleared || !t.looping || t.times_left == Some(0);
        if done {
            self.timers[id] = None;
        }
        done
    }

    pub fn tick(&mut self, g: u64, r: u64) {
        self.prev = self.now;
        // The clocks stop one flick short of "never".
        self.now[0] = self.now[0].saturating_add(g).min(NEVER - 1);
        self.now[1] = self.now[1].saturating_add(r).min(NEVER - 1);
        self.now[2] += 1;
        self.tick_no += 1;
        self.frame_open = false;
        for t in self.timers.iter_mut().flatten() {
            if let MState::Pending(delay) = t.state {
                t.state = MState::Active(self.now[t.domain].checked_add(delay).unwrap_or(NEVER));
            }
        }
        let mut made = 0;
        while self.budget.is_none_or(|b| made < b) {
            let Some(id) = self.next_call() else { break };
            made += 1;
            let t = self.timers[id].as_mut().unwrap();
            let MState::Active(due) = t.state else {
                unreachable!()
            };
            let now = self.now[t.domain];
            if t.burst_tick != self.tick_no {
                t.burst = 0;
            }
            let mut rest = if t.looping && t.catch_up == CatchUp::Burst && t.period > 0 {
                (now - due) / t.period + 1
            } else {
                1
            };
            if let Some(left) = t.times_left {
                rest = rest.min(left);
            }
            let this_tick = (t.burst + rest).min(self.cap);
            let burst = t.burst;
            if self.call(id, due, this_tick) {
                continue;
            }
            let cap = self.cap;
            let t = self.timers[id].as_mut().unwrap();
            let p = t.period;
            let grid = due.checked_add(p).unwrap_or(NEVER);
            // The first point of the grid after `now`.
            let ahead = || {
                let k = (now - due) / p + 1;
                due.checked_add(p.saturating_mul(k)).unwrap_or(NEVER)
            };
            let next = if p == 0 {
                t.not_before = self.tick_no + 1;
                now
            } else if grid > now {
                grid
            } else {
                match t.catch_up {
                    CatchUp::Burst if burst + 1 < cap => grid,
                    CatchUp::Burst => {
                        self.dropped += (now - grid) / p + 1;
                        ahead()
                    }
                    CatchUp::Once => ahead(),
                    CatchUp::Delay => now.checked_add(p).unwrap_or(NEVER),
                }
            };
            t.burst += 1;
            t.burst_tick = self.tick_no;
            t.state = MState::Active(next);
        }
    }

    pub fn countdown_len(t: &MTimer) -> u64 {
        if t.calls == 0 && t.has_first {
            t.first
        } else {
            t.period
        }
    }

    pub fn elapsed(&self, t: &MTimer) -> u64 {
        match self.remaining(t) {
            NEVER => 0,
            r => Self::countdown_len(t).saturating_sub(r),
        }
    }

    pub fn restart(&mut self, id: usize) -> bool {
        let Some(t) = self.timers[id].clone() else {
            return false;
        };
        let len = Self::countdown_len(&t);
        match t.state {
            MState::Pending(_) => self.timers[id].as_mut().unwrap().state = MState::Pending(len),
            MState::Paused(_) => self.timers[id].as_mut().unwrap().state = MState::Paused(len),
            MState::Active(_) => self.start(id, len),
        }
        true
    }

    pub fn set_rate(&mut self, id: usize, rate: u64) -> bool {
        let Some(t) = self.timers[id].clone() else {
            return false;
        };
        let in_first = t.calls == 0 && t.has_first;
        let elapsed = self.elapsed(&t);
        let now = self.now[t.domain];
        let m = self.timers[id].as_mut().unwrap();
        m.period = rate;
        if in_first {
            return true;
        }
        if m.calls == 0 {
            m.first = rate;
        }
        let left = rate.saturating_sub(elapsed);
        m.state = match m.state {
            MState::Pending(_) => MState::Pending(left),
            MState::Paused(_) => MState::Paused(left),
            MState::Active(NEVER) => MState::Active(NEVER),
            MState::Active(_) => MState::Active(now.saturating_add(left).min(NEVER - 1)),
        };
        true
    }

    pub fn remaining(&self, t: &MTimer) -> u64 {
        match t.state {
            MState::Pending(r) | MState::Paused(r) => r,
            MState::Active(NEVER) => NEVER,
            MState::Active(due) => due.saturating_sub(self.now[t.domain]),
        }
    }
}
