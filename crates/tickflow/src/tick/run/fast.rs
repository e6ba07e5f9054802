//! The fast path: serial functions without interval or dilation run one after another with
//! one `TickCx`, from a laid-out lane's consecutive positions or from a list; a function that
//! needs more leaves for the full path (`calls.rs`).

use std::num::NonZeroU32;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Env, TickFunctions};
use crate::tick::cx::{TickCall, TickCx};
use crate::tick::graph::{ENABLED, PARALLEL, SLOW, WHEN_PAUSED};
use crate::tick::handle::TickHandle;
use crate::tick::interval::IntervalClock;
use crate::tick::plan::Placed;
use crate::tick::settings::TickGroup;
use crate::time::{Clocks, Span};

/// Which functions the fast path runs: enabled, neither slow nor parallel, and
/// - `Running`: any of those;
/// - `Paused`: only those that tick when paused;
/// - `Apart` (the unpaused clock moved apart from the game clock): only those that do not,
///   the others taking the full path for their own delta.
///
/// Each is a constant `(mask, want)` on a function's flags, and each walk is compiled for one
/// of them, so it holds neither in a register across its calls (S1 trivial bodies at 1e3:
/// 1.93x -> 1.84x the plain loop).
#[derive(Copy, Clone)]
enum Check {
    Running,
    Paused,
    Apart,
}

const RUNNING: (u8, u8) = (ENABLED | SLOW | PARALLEL, ENABLED);
const PAUSED: (u8, u8) = (
    ENABLED | SLOW | PARALLEL | WHEN_PAUSED,
    ENABLED | WHEN_PAUSED,
);
const APART: (u8, u8) = (ENABLED | SLOW | PARALLEL | WHEN_PAUSED, ENABLED);

/// Where the fast path stopped.
enum Next {
    Done,
    /// A call changed the graph or queued commands: settle before the next call.
    Settle,
    /// This function needs the full path.
    Slow(Placed),
}

/// After a call: it changed the graph, or something waits for the commands hook (one flag
/// for both, see `TickFunctions::new`).
#[inline(always)]
pub(super) fn must_settle(wake: &AtomicBool) -> bool {
    wake.load(Ordering::Acquire)
}

impl<C: 'static> TickFunctions<C> {
    /// Runs functions at consecutive positions (a laid-out lane's part).
    pub(super) fn run_laid(
        &mut self,
        mut laid: Range<u32>,
        group: TickGroup,
        env: &mut Env<'_, C>,
        ran: &mut usize,
    ) {
        loop {
            let next = if self.jobs.is_empty() {
                self.run_fast_laid(&mut laid, group, env, ran)
            } else {
                self.next_placed(&mut laid)
            };
            match next {
                Next::Done => break,
                Next::Settle => self.after_call(env),
                Next::Slow(e) => self.run_one(e, group, env, ran),
            }
        }
    }

    /// The next live function of `laid`, for the full path (a position freed since the plan
    /// was made is passed over). Out of line: inlined into the fast walk's fallback, it cost
    /// that walk's loop 8 % on S1 at 1e3.
    #[inline(never)]
    fn next_placed(&self, laid: &mut Range<u32>) -> Next {
        let next = laid.by_ref().find_map(|p| self.graph.placed_at(p));
        next.map_or(Next::Done, Next::Slow)
    }

    /// Runs a list of functions with their positions. (The same loop as `run_laid`'s: one
    /// `drive` taking the fast walk as a closure measured 8 % slower on S1 at 1e3.)
    pub(super) fn run_list(
        &mut self,
        list: &[Placed],
        group: TickGroup,
        env: &mut Env<'_, C>,
        ran: &mut usize,
    ) {
        let mut list = list.iter();
        loop {
            let next = if self.jobs.is_empty() {
                self.run_fast(&mut list, group, env, ran)
            } else {
                list.next().map_or(Next::Done, |&e| Next::Slow(e))
            };
            match next {
                Next::Done => break,
                Next::Settle => self.after_call(env),
                Next::Slow(h) => self.run_one(h, group, env, ran),
            }
        }
    }

    /// What the fast path runs (see [`Check`]) and the call its functions share.
    #[inline]
    fn fast_path(&self, group: TickGroup, clocks: &Clocks) -> (Check, TickCall) {
        let (game, unpaused) = (
            IntervalClock::Game.delta(clocks),
            IntervalClock::Unpaused.delta(clocks),
        );
        let check = if self.paused {
            Check::Paused
        } else if game != unpaused {
            // Not reached while `Clocks::advanced` moves the unpaused clock with the game
            // clock; kept as a guard.
            Check::Apart
        } else {
            Check::Running
        };
        let call = TickCall {
            dt: Span::from_flicks(if self.paused { unpaused } else { game }),
            group,
            handle: TickHandle::default(),
        };
        (check, call)
    }

    /// [`run_fast`](Self::run_fast) over consecutive positions: each function's check record,
    /// slot and callback are read in memory order, with no list entry and no bounds check per
    /// function. A free position (a function removed since the plan was made) and a disabled
    /// function are skipped here, as the full path would skip them.
    #[inline]
    fn run_fast_laid(
        &mut self,
        laid: &mut Range<u32>,
        group: TickGroup,
        env: &mut Env<'_, C>,
        ran: &mut usize,
    ) -> Next {
        let (check, call) = self.fast_path(group, env.clocks);
        match check {
            Check::Running => self.walk_laid::<{ RUNNING.0 }, { RUNNING.1 }>(laid, call, env, ran),
            Check::Paused => self.walk_laid::<{ PAUSED.0 }, { PAUSED.1 }>(laid, call, env, ran),
            Check::Apart => self.walk_laid::<{ APART.0 }, { APART.1 }>(laid, call, env, ran),
        }
    }

    /// The walk of `run_fast_laid`, for one [`Check`].
    #[inline]
    fn walk_laid<const MASK: u8, const WANT: u8>(
        &mut self,
        laid: &mut Range<u32>,
        call: TickCall,
        env: &mut Env<'_, C>,
        ran: &mut usize,
    ) -> Next {
        let frame = self.frame;
        let (a, b) = (laid.start as usize, laid.end as usize);
        let wake = env.wake;
        let mut cx = TickCx::new(env.clocks, &mut *env.timers, call);
        let (Some((hots, slots)), Some(bodies)) =
            (self.graph.laid_mut(a..b), self.bodies.serial_range(a..b))
        else {
            // Not reached: a lane is laid out over positions that exist, and none is taken
            // away before the next layout. Were one missing, the next function there takes
            // the full path, which checks everything.
            return self.next_placed(laid);
        };
        let mut skipped = 0;
        let records = hots.iter_mut().zip(slots).zip(bodies.iter_mut());
        for (k, ((hot, &slot), body)) in records.enumerate() {
            if hot.last_run == frame {
                skipped += 1;
                continue;
            }
            let tag = NonZeroU32::new(hot.gen);
            if hot.flags & MASK != WANT {
                if let (Some(tag), true) = (tag, hot.flags & ENABLED != 0) {
                    laid.start = (a + k + 1) as u32;
                    *ran += k - skipped;
                    return Next::Slow((TickHandle::new(slot, tag), (a + k) as u32));
                }
                skipped += 1;
                continue;
            }
            hot.last_run = frame;
            let (Some(f), Some(tag)) = (body, tag) else {
                continue;
            };
            cx.kind_mut().handle = TickHandle::new(slot, tag);
            f.call(env.ctx, &mut cx);
            if must_settle(wake) {
                laid.start = (a + k + 1) as u32;
                *ran += k + 1 - skipped;
                return Next::Settle;
            }
        }
        *laid = b as u32..b as u32;
        *ran += (b - a) - skipped;
        Next::Done
    }

    /// Runs serial functions without interval or dilation, one `TickCx` for all, until the
    /// list ends, a call changed something (`Settle`), or a function needs the full path.
    /// No parallel batch is queued meanwhile (the caller checks), so none needs flushing.
    #[inline]
    fn run_fast(
        &mut self,
        list: &mut std::slice::Iter<'_, Placed>,
        group: TickGroup,
        env: &mut Env<'_, C>,
        ran: &mut usize,
    ) -> Next {
        let (check, call) = self.fast_path(group, env.clocks);
        match check {
            Check::Running => self.walk_list::<{ RUNNING.0 }, { RUNNING.1 }>(list, call, env, ran),
            Check::Paused => self.walk_list::<{ PAUSED.0 }, { PAUSED.1 }>(list, call, env, ran),
            Check::Apart => self.walk_list::<{ APART.0 }, { APART.1 }>(list, call, env, ran),
        }
    }

    /// The walk of `run_fast`, for one [`Check`]. Functions run are counted from how far the
    /// list moved less those skipped, so the loop keeps no counter across the call.
    #[inline]
    fn walk_list<const MASK: u8, const WANT: u8>(
        &mut self,
        list: &mut std::slice::Iter<'_, Placed>,
        call: TickCall,
        env: &mut Env<'_, C>,
        ran: &mut usize,
    ) -> Next {
        let frame = self.frame;
        let bodies = &mut self.bodies;
        let wake = env.wake;
        let start = list.len();
        let mut skipped = 0;
        let mut cx = TickCx::new(env.clocks, &mut *env.timers, call);
        let hot_list = self.graph.hots_mut();
        while let Some(&(h, p)) = list.next() {
            let i = p as usize;
            let Some(hot) = hot_list.get_mut(i) else {
                skipped += 1;
                continue;
            };
            if hot.gen != h.tag().get() || hot.last_run == frame {
                skipped += 1;
                continue;
            }
            if hot.flags & MASK != WANT {
                *ran += start - list.len() - skipped - 1;
                return Next::Slow((h, p));
            }
            hot.last_run = frame;
            let Some(f) = bodies.serial_at(i) else {
                continue;
            };
            cx.kind_mut().handle = h;
            f.call(env.ctx, &mut cx);
            if must_settle(wake) {
                *ran += start - list.len() - skipped;
                return Next::Settle;
            }
        }
        *ran += start - skipped;
        Next::Done
    }
}
