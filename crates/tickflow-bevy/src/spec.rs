//! A timer's settings: as `commands.tickflow()` takes them ([`Spec`]), and as its entity holds
//! them until the scheduler has the timer: [`Packed`] in 16 bytes on the timer's component,
//! and [`LaterOptions`] beside it for the options few timers take (`name`, `times`,
//! `first_delay`, `durable`, `payload`).
//!
//! Why packed: the timer's component is copied into the system's command queue and then into
//! its table, and in a new app each new page of those is a page fault, about a microsecond on
//! the machines we measure on. So the component's bytes are most of what setting the first
//! timers costs (`tickflow bench --only bevy`, cold); the options go in a component of their
//! own, which only the timers that take them carry.

use bevy_ecs::prelude::Component;
use tickflow::prelude::{CatchUp, Domain, Span, Time};
use tickflow::timer::Offline;

/// When a timer fires.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum When {
    After(Span),
    Every(Span),
    AfterFrames(u64),
    EveryFrames(u64),
    /// Once, when its clock reads this time.
    At(Time),
}

/// A timer's settings, as its builder gathers them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    pub(crate) when: When,
    /// Counts on the real clock (a time timer only).
    pub(crate) real: bool,
    pub(crate) catch_up: Option<CatchUp>,
    pub(crate) times: Option<u64>,
    /// Flicks, or frames for a frame timer.
    pub(crate) first_delay: Option<u64>,
}

impl Spec {
    /// A timer that fires `when`, with no options.
    pub(crate) fn new(when: When) -> Spec {
        Spec {
            when,
            real: false,
            catch_up: None,
            times: None,
            first_delay: None,
        }
    }
}

/// The options few timers take, on the timer's entity beside its [`Packed`] settings (spawned
/// with it). The name, durability and payload go to the scheduler when the timer is set
/// ([`Given`]); the rest stays.
#[derive(Component, Debug, Default)]
pub(crate) struct LaterOptions {
    pub(crate) given: Given,
    pub(crate) times: Option<u64>,
    /// Flicks, or frames for a frame timer.
    pub(crate) first_delay: Option<u64>,
}

/// What the scheduler keeps of a timer's options once it is set (taken from its entity then).
#[derive(Debug, Default)]
pub(crate) struct Given {
    pub(crate) name: Option<Box<str>>,
    pub(crate) durable: Option<Offline>,
    pub(crate) payload: Option<Box<[u8]>>,
}

impl Given {
    /// `true` when none is given.
    pub(crate) fn is_empty(&self) -> bool {
        self.name.is_none() && self.durable.is_none() && self.payload.is_none()
    }
}

impl LaterOptions {
    /// `true` when none is given (then the entity does not carry them).
    pub(crate) fn is_empty(&self) -> bool {
        self.given.is_empty() && self.times.is_none() && self.first_delay.is_none()
    }

    /// `true` for `times(0)`: a timer that never fires.
    pub(crate) fn never(&self) -> bool {
        self.times == Some(0)
    }
}

/// A [`Spec`] without its options, in 16 bytes, with two bits of its entity's state beside it.
#[derive(Debug)]
pub(crate) struct Packed {
    /// The delay or period: flicks, or frames; for `AT`, the time it is due at.
    amount: u64,
    /// `EVERY`, `FRAMES`, `REAL`, `AT`, `FIRE`, and the catch-up policy in two bits (0: none
    /// given, else 1 + the policy).
    bits: u8,
    /// Its entity's state: `CONTROLLED`, `ORPHAN`.
    state: u8,
}

const EVERY: u8 = 1;
const FRAMES: u8 = 1 << 1;
const REAL: u8 = 1 << 2;
const AT: u8 = 1 << 3;
const CATCH_UP_SHIFT: u32 = 4;
const CATCH_UP_MASK: u8 = 0b11 << CATCH_UP_SHIFT;
const FIRE: u8 = 1 << 6;

const CONTROLLED: u8 = 1;
const ORPHAN: u8 = 1 << 1;

const _: () = assert!(std::mem::size_of::<Packed>() == 16);

impl Packed {
    /// `spec` without its options, and whether the timer triggers `TimerFired` on its entity.
    #[inline]
    pub(crate) fn new(spec: &Spec, fire: bool) -> Packed {
        let (amount, mut bits) = match spec.when {
            When::After(d) => (d.flicks(), 0),
            When::Every(p) => (p.flicks(), EVERY),
            When::AfterFrames(n) => (n, FRAMES),
            When::EveryFrames(n) => (n, EVERY | FRAMES),
            When::At(t) => (t.flicks(), AT),
        };
        bits |= (u8::from(spec.real) * REAL) | (u8::from(fire) * FIRE);
        if let Some(c) = spec.catch_up {
            bits |= (1 + c as u8) << CATCH_UP_SHIFT;
        }
        Packed {
            amount,
            bits,
            state: 0,
        }
    }

    /// The settings it was made from, with `options` (those its entity carries).
    #[inline]
    pub(crate) fn spec(&self, options: Option<&LaterOptions>) -> Spec {
        let amount = self.amount;
        let when = match (self.has(EVERY), self.has(FRAMES)) {
            _ if self.has(AT) => When::At(Time::from_flicks(amount)),
            (false, false) => When::After(Span::from_flicks(amount)),
            (true, false) => When::Every(Span::from_flicks(amount)),
            (false, true) => When::AfterFrames(amount),
            (true, true) => When::EveryFrames(amount),
        };
        let catch_up = match (self.bits & CATCH_UP_MASK) >> CATCH_UP_SHIFT {
            0 => None,
            1 => Some(CatchUp::Burst),
            2 => Some(CatchUp::Once),
            _ => Some(CatchUp::Delay),
        };
        Spec {
            when,
            real: self.has(REAL),
            catch_up,
            times: options.and_then(|o| o.times),
            first_delay: options.and_then(|o| o.first_delay),
        }
    }

    /// The delay or period, in flicks or frames.
    pub(crate) fn amount(&self) -> u64 {
        self.amount
    }

    /// `true` when it counts frames.
    pub(crate) fn counts_frames(&self) -> bool {
        self.has(FRAMES)
    }

    /// `true` when it triggers `TimerFired` on its entity.
    pub(crate) fn fire(&self) -> bool {
        self.has(FIRE)
    }

    /// `true` once a control waits for it to be set.
    pub(crate) fn controlled(&self) -> bool {
        self.state & CONTROLLED != 0
    }

    /// Marks that a control waits for it to be set.
    pub(crate) fn set_controlled(&mut self) {
        self.state |= CONTROLLED;
    }

    /// `true` once its owner was found despawned before the timer was set: it never will be.
    pub(crate) fn orphan(&self) -> bool {
        self.state & ORPHAN != 0
    }

    /// For a timer due at a time of its clock (`at`), that clock: its first countdown is that
    /// time less the clock's reading. `None` for the others.
    pub(crate) fn at_clock(&self) -> Option<Domain> {
        match (self.has(AT), self.has(REAL)) {
            (false, _) => None,
            (true, false) => Some(Domain::Game),
            (true, true) => Some(Domain::Real),
        }
    }

    /// Marks that its owner was despawned before the timer was set.
    pub(crate) fn set_orphan(&mut self) {
        self.state |= ORPHAN;
    }

    fn has(&self, bit: u8) -> bool {
        self.bits & bit != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_comes_back_as_it_went_in() {
        let whens = [
            When::After(Span::from_flicks(0)),
            When::Every(Span::from_flicks(u64::MAX)),
            When::AfterFrames(3),
            When::EveryFrames(u64::MAX),
            When::At(Time::from_flicks(7)),
        ];
        let catch_ups = [
            None,
            Some(CatchUp::Burst),
            Some(CatchUp::Once),
            Some(CatchUp::Delay),
        ];
        let counts = [None, Some(0), Some(u64::MAX)];
        for when in whens {
            for catch_up in catch_ups {
                for times in counts {
                    for first_delay in counts {
                        for bits in 0..4u8 {
                            let spec = Spec {
                                when,
                                real: bits & 1 != 0,
                                catch_up,
                                times,
                                first_delay,
                            };
                            let fire = bits & 2 != 0;
                            let options = LaterOptions {
                                given: Given::default(),
                                times,
                                first_delay,
                            };
                            let options = (!options.is_empty()).then_some(&options);
                            let mut p = Packed::new(&spec, fire);
                            assert_eq!(p.spec(options), spec);
                            assert_eq!(p.fire(), fire);
                            assert!(!p.controlled() && !p.orphan());
                            p.set_controlled();
                            p.set_orphan();
                            assert!(p.controlled() && p.orphan());
                            assert_eq!((p.spec(options), p.fire()), (spec, fire));
                            assert_eq!(options.is_some_and(|o| o.never()), times == Some(0));
                        }
                    }
                }
            }
        }
    }
}
