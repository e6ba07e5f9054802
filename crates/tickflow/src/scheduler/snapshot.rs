//! [`Scheduler::snapshot`], [`Scheduler::restore`] and [`Scheduler::state_hash`]; the rules
//! are in the [`snapshot`](crate::snapshot) module docs.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};

use super::Scheduler;
use super::{Resolver, RestoreReport};
use crate::format::{stable_hash, RestoreError, FORMAT_VERSION};
use crate::latent::{LatentActions, LatentInfo, LatentSnapshot};
use crate::tick::TickSnapshot;
use crate::tickable::TickableSnapshot;
use crate::time::{Domain, Span, Time};
use crate::timer::{TimerSnapshot, Timers};

/// A [`Scheduler`] saved as plain data: clocks, frame number, pause (and whether it stops the
/// frame clock), dilation and `max_delta`, tick functions, tickables, timers and latent
/// actions, with every handle allocator. See the [`snapshot`](crate::snapshot) module for what
/// it leaves out.
///
/// `Clone + PartialEq`; with the `serde` feature `Serialize + Deserialize`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SchedulerSnapshot {
    version: u32,
    frame: u64,
    paused: bool,
    frame_clock_pauses: bool,
    dilation: f64,
    max_delta: Span,
    unpaused: u64,
    timers: TimerSnapshot,
    ticks: TickSnapshot,
    tickables: TickableSnapshot,
    latent: LatentSnapshot,
    tasks_not_saved: u64,
    commands_not_applied: u64,
}

impl Hash for SchedulerSnapshot {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (
            self.version,
            self.frame,
            self.paused,
            self.frame_clock_pauses,
            self.dilation.to_bits(),
        )
            .hash(h);
        (self.max_delta, self.unpaused, self.tasks_not_saved).hash(h);
        self.commands_not_applied.hash(h);
        self.timers.hash(h);
        self.ticks.hash(h);
        self.tickables.hash(h);
        self.latent.hash(h);
    }
}

impl SchedulerSnapshot {
    /// The checks of the scheduler's own fields: version, frame counter, dilation.
    fn check_header(&self) -> Result<(), RestoreError> {
        if self.version != FORMAT_VERSION {
            return Err(RestoreError::Version {
                found: self.version,
                supported: FORMAT_VERSION,
            });
        }
        if self.frame == u64::MAX {
            return Err(RestoreError::corrupt("the frame counter is at its end"));
        }
        if self.frame != self.timers.frame() {
            return Err(RestoreError::corrupt(format!(
                "the scheduler is at frame {} and its timers at frame {}",
                self.frame,
                self.timers.frame()
            )));
        }
        if self.max_delta == Span::ZERO {
            return Err(RestoreError::corrupt(
                "the longest frame delta is zero (the game clock could never move)",
            ));
        }
        if !crate::time::valid_dilation(self.dilation) {
            return Err(RestoreError::corrupt(format!(
                "time dilation {} is not a finite number from 0 to {}",
                self.dilation,
                crate::time::MAX_TIME_DILATION
            )));
        }
        Ok(())
    }

    /// Every tick function's body from the resolver, in the order saved.
    fn bind_ticks<C: 'static>(
        &self,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<Vec<crate::tick::TickBody<C>>, RestoreError> {
        (self.ticks.infos())
            .map(|info| crate::tick::bind_tick(resolver, &info))
            .collect()
    }

    /// Every tickable from the resolver, in the order saved.
    fn bind_tickables<C: 'static>(
        &self,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<Vec<Box<dyn crate::tickable::Tickable<C>>>, RestoreError> {
        (self.tickables.infos())
            .map(|info| crate::tickable::bind_tickable(resolver, &info))
            .collect()
    }

    /// The format version this snapshot was written with.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The frame number when it was taken.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The timer part.
    pub fn timers(&self) -> &TimerSnapshot {
        &self.timers
    }

    /// What a restore will report as not saved (the same as
    /// [`Scheduler::restore`]'s report when every `on_cancel` hook is bound).
    pub fn not_saved(&self) -> RestoreReport {
        RestoreReport {
            tasks_not_saved: self.tasks_not_saved,
            commands_not_applied: self.commands_not_applied,
            latent_not_saved: self.latent.not_saved.clone(),
            dropped_cancel_hooks: self.timers.dropped_hooks(),
            dropped_aborts: self.latent.dropped_aborts,
            unbound_cancel_hooks: 0,
        }
    }
}

impl<C: 'static> Scheduler<C> {
    /// Saves all scheduling state as plain data (see [`SchedulerSnapshot`]). Commands queued
    /// through [`Commands`](super::Commands) and not applied yet are not saved (the report
    /// counts them): call [`apply_commands`](Self::apply_commands) first.
    ///
    /// # Panics
    ///
    /// When called from inside a timer callback (snapshots are taken between frames).
    pub fn snapshot(&self) -> SchedulerSnapshot {
        SchedulerSnapshot {
            version: FORMAT_VERSION,
            frame: self.clocks.frame(),
            paused: self.paused,
            frame_clock_pauses: self.frame_clock_pauses,
            dilation: self.dilation,
            max_delta: self.max_delta,
            unpaused: self.clocks.unpaused().flicks(),
            timers: self.timers.snapshot(),
            ticks: self.ticks.graph().save(),
            tickables: self.tickables.save(),
            latent: self.latent.save(),
            tasks_not_saved: self.tasks.exec().len() as u64,
            commands_not_applied: self.shared.pending() as u64,
        }
    }

    /// Builds a scheduler from a snapshot, binding every callback again through `resolver`
    /// (tick functions, then tickables, timers and latent completions, each in the order
    /// they run). The restored scheduler hands out the same handles and, for everything the
    /// report does not list, makes the same calls in the same order as the original.
    ///
    /// Callbacks of the restored scheduler reach it through their `cx.commands()`. A
    /// [`Commands`](super::Commands) taken from the original with
    /// [`commands()`](Scheduler::commands) (for another thread, say) keeps reaching the
    /// original while it lives, and does nothing once it is dropped: take a new one from the
    /// restored scheduler.
    ///
    /// # Untrusted bytes
    ///
    /// A save file may be damaged or forged; the restore holds against any value. It never
    /// panics or hangs, allocates in proportion to the snapshot (the handle tables it
    /// describes), costs O(n log n) in its items, and refuses data a running scheduler
    /// cannot reach (a prerequisite on a handle the scheduler never made, a clock at its
    /// end, a zero `max_delta`). What it accepts runs, and snapshots and restores again to
    /// the same [`state_hash`](Self::state_hash).
    ///
    /// # Errors
    ///
    /// All or nothing, as [`TimerManager::restore`](crate::timer::TimerManager::restore): the
    /// first item the resolver cannot bind, a version mismatch or contradictory data.
    pub fn restore(
        snap: &SchedulerSnapshot,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<(Scheduler<C>, RestoreReport), RestoreError> {
        snap.check_header()?;
        let tick_alloc = snap.ticks.check(snap.frame)?;
        let tickable_alloc = snap.tickables.check()?;
        let bodies = snap.bind_ticks(resolver)?;
        let objects = snap.bind_tickables(resolver)?;
        let resolver = RefCell::new(resolver);
        let mut unbound_hooks = 0;
        let timers = Timers::restore_with(&snap.timers, &mut |info, hooked| {
            let bound = crate::timer::bind_timer(*resolver.borrow_mut(), info, hooked)?;
            unbound_hooks += u64::from(hooked && bound.1.is_none());
            Some(bound)
        })?;
        let latent = LatentActions::restore(
            &snap.latent,
            &mut |saved| crate::latent::bind_action(*resolver.borrow_mut(), saved),
            &mut |info: &LatentInfo| resolver.borrow_mut().latent(info),
        )?;

        // The one clocks value, rebuilt from the saved clocks. The unpaused clock's delta is
        // not saved: the last frame's is derived from the saved pause state.
        let saved = timers.clocks();
        let unpaused_delta = if snap.paused {
            saved.delta(Domain::Real).min(snap.max_delta)
        } else {
            saved.delta(Domain::Game)
        };
        let clocks = saved.with_unpaused(snap.unpaused, unpaused_delta.flicks());
        if !snap.ticks.agrees_with(&clocks) {
            return Err(RestoreError::corrupt(
                "the tick functions' clocks are not the scheduler's",
            ));
        }
        let mut sched = Scheduler::new();
        sched.clocks = clocks;
        let runner =
            sched
                .ticks
                .graph_mut()
                .restore(&snap.ticks, tick_alloc, bodies, &sched.clocks);
        sched.ticks.set_runner(runner);
        sched
            .tickables
            .restore(&snap.tickables, tickable_alloc, objects);
        let commands = sched.commands();
        sched.timers = timers;
        sched.timers.set_commands(commands);
        sched.latent = latent;
        sched.paused = snap.paused;
        sched.frame_clock_pauses = snap.frame_clock_pauses;
        sched.dilation = snap.dilation;
        sched.max_delta = snap.max_delta;
        sched.tasks.exec().set_clocks(&sched.clocks);
        sched.shared.set_clocks(sched.clocks);
        let report = RestoreReport {
            unbound_cancel_hooks: unbound_hooks,
            ..snap.not_saved()
        };
        Ok((sched, report))
    }

    /// A new scheduler whose clocks read `game` and `real` and whose last frame was number
    /// `frame` (its frame clock too): a server that restarts resumes its world's time where it
    /// stopped, so saved due times (a store's durable timers) need no rebasing and late ones
    /// keep all their lateness. Everything else is as [`new`](Self::new) makes it.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<()>::resumed(Time::ZERO + secs(60.0), Time::ZERO + secs(90.0), 3600);
    /// assert_eq!(sched.clocks().now(Domain::Game), Time::ZERO + secs(60.0));
    /// sched.tick(secs(0.5), &mut ());
    /// assert_eq!(sched.clocks().frame(), 3601);
    /// assert_eq!(sched.clocks().now(Domain::Real), Time::ZERO + secs(90.5));
    /// ```
    pub fn resumed(game: Time, real: Time, frame: u64) -> Scheduler<C> {
        let cap = |t: u64| t.min(u64::MAX - 1); // a running clock stops one short of never
        let (game, real, frame) = (cap(game.flicks()), cap(real.flicks()), cap(frame));
        let mut snap = Scheduler::<C>::new().snapshot();
        snap.frame = frame;
        snap.unpaused = game;
        snap.timers = snap.timers.at_clocks([game, real, frame], frame);
        snap.ticks = snap.ticks.at_clock(game);
        snap.latent = snap.latent.at_frame(frame);
        let (sched, _) = Scheduler::restore(&snap, &mut super::registry::Registry::new())
            .expect("an empty scheduler at valid clocks restores");
        sched
    }

    /// A hash of all scheduling state (the snapshot's contents), equal for equal states on
    /// every platform: compare it between peers, or between a run and its replay, to detect
    /// a desync. Costs a [`snapshot`](Self::snapshot).
    pub fn state_hash(&self) -> u64 {
        stable_hash(&self.snapshot())
    }
}
