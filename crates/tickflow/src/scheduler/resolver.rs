//! [`Resolver`] and [`RestoreReport`]: how a [`Scheduler::restore`] binds callbacks again,
//! and what it could not bring back.

use std::fmt;

use super::Scheduler;
use crate::format::RestoreError;
use crate::latent::{Completion, LatentAction, LatentInfo, SavedAction};
use crate::tick::{TickBody, TickInfo};
use crate::tickable::{Tickable, TickableInfo};
use crate::time::Span;
use crate::timer::{
    Callback, CancelHook, DurableLoad, DurableTimer, LoadReport, TimerCallback, TimerInfo,
    TimerManager, TimerSnapshot, Timers,
};

/// Binds callbacks again when a [`SchedulerSnapshot`](crate::snapshot::SchedulerSnapshot) is
/// restored.
///
/// Most games need no implementation of their own: a [`Registry`](crate::snapshot::Registry) of
/// callbacks by name is one. Implement it for keys a name table cannot hold (callbacks
/// made from a name's parts, say).
///
/// Every method has a default that binds nothing, so implement the ones your game uses; a
/// saved item the resolver cannot bind makes the restore fail with [`RestoreError::Unbound`]
/// naming it. Each method is asked once per saved item, in the order they run.
pub trait Resolver<C> {
    /// A timer's callback, by its name, tag or owner.
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<C>> {
        let _ = info;
        None
    }

    /// The `on_cancel` hook of a timer that had one; `None` (the default) restores the timer
    /// without it ([`RestoreReport::unbound_cancel_hooks`] counts those).
    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<C>> {
        let _ = info;
        None
    }

    /// A tick function's body, by its settings (usually the name). It must be parallel
    /// exactly when [`TickInfo::parallel`] says so.
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<C>> {
        let _ = info;
        None
    }

    /// A tickable object, by its [name](Tickable::name).
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<C>>> {
        let _ = info;
        None
    }

    /// The completion of a latent action, by its `(owner, uuid)` key.
    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<C>> {
        let _ = info;
        None
    }

    /// A custom latent action from the data its [`save`](LatentAction::save) returned as
    /// [`SavedAction::Custom`](crate::latent::SavedAction::Custom).
    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<C>>> {
        let _ = (kind, data);
        None
    }

    /// Called by [`sync_test`](crate::snapshot::sync_test) after each restore with the restored
    /// scheduler and the copy of the context it will run: a context that holds something of
    /// its scheduler's (a [`Commands`](crate::scheduler::Commands) it hands to other threads,
    /// say) points it at the restored one here; callbacks need nothing of the kind, their
    /// `cx.commands()` reaches the scheduler that runs them. Your own rollback loop does the
    /// same after [`Scheduler::restore`]. The default does nothing.
    fn after_restore(&mut self, sched: &Scheduler<C>, ctx: &mut C) {
        let _ = (sched, ctx);
    }
}

impl<C: 'static> TimerManager<C> {
    /// Builds a manager from a snapshot, asking `resolver` for each timer's callback (in set
    /// order, with the timer's [`TimerInfo`]: its name, tag, owner, ...) and for the
    /// `on_cancel` hook of each that had one, as [`Scheduler::restore`] does: a
    /// [`Registry`](crate::snapshot::Registry) of callbacks by name, or by tag with
    /// [`other_timers`](crate::snapshot::Registry::other_timers).
    ///
    /// The restored manager hands out the same handles and makes the same calls, in the same
    /// order, as the one the snapshot was taken from.
    ///
    /// # Errors
    ///
    /// All or nothing: [`RestoreError::Unbound`] naming the first timer the resolver cannot
    /// bind, [`RestoreError::Version`] for a snapshot of another format version, and
    /// [`RestoreError::Corrupt`] for records that contradict each other.
    pub fn restore(
        snap: &TimerSnapshot,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<TimerManager<C>, RestoreError> {
        let timers =
            Timers::restore_with(snap, &mut |info, hooked| bind_timer(resolver, info, hooked))?;
        Ok(TimerManager::from_timers(timers))
    }
}

// The durable loads take a resolver here, beside the restore, so that the timer layer below
// needs nothing of the scheduler's: it binds through the same closure a restore hands it.

impl<C: 'static> Timers<C> {
    /// Sets durable timers again from rows a store kept, binding each callback with
    /// `resolver` (as a restore does, by name: a [`Registry`](crate::snapshot::Registry)).
    ///
    /// `saved` is the reading of each clock (in [`Domain`](crate::time::Domain) order, raw
    /// units) when the rows were last written; `offline` is how long nothing ran since
    /// (wall-clock time; a store measures it). Each timer's countdown is moved from `saved` to
    /// this manager's clocks, so one with 2 s left has 2 s left here; then its
    /// [`Offline`](crate::timer::Offline) policy decides what `offline` does. Rows are set in
    /// `seq` order, after every timer this manager has (which win ties). A row whose key a live
    /// durable timer holds replaces it.
    ///
    /// All or nothing: every row is checked and every callback bound before any timer is set;
    /// an error names the row (its owner and name) and what is wrong with it. Between ticks.
    pub fn load_durable(
        &mut self,
        rows: Vec<DurableTimer>,
        saved: [u64; 3],
        offline: Span,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<LoadReport, RestoreError> {
        self.load_durable_with(rows, saved, offline, &mut |info, hooked| {
            bind_timer(resolver, info, hooked)
        })
    }
}

impl<C: 'static> DurableLoad<'_, C> {
    /// Checks, binds and sets `rows` (in any order; each keeps its place in set order).
    ///
    /// # Errors
    ///
    /// A damaged or unbound row, or a key that an earlier row of the load had: the manager is
    /// empty again (as it was before the load), and every later `add` fails too.
    pub fn add(
        &mut self,
        rows: Vec<DurableTimer>,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<(), RestoreError> {
        self.add_with(rows, &mut |info, hooked| bind_timer(resolver, info, hooked))
    }
}

// How a restore and an import bind one saved item: the same rules and the same errors.

/// A timer's callback and, when it had one (`hooked`), its `on_cancel` hook if the resolver
/// offers it.
pub(crate) fn bind_timer<C: 'static>(
    r: &mut dyn Resolver<C>,
    info: &TimerInfo,
    hooked: bool,
) -> Option<(Callback<C>, Option<CancelHook<C>>)> {
    let cb = Callback::from_box(r.timer(info)?);
    let hook = if hooked {
        r.timer_on_cancel(info)
    } else {
        None
    };
    Some((cb, hook))
}

/// A tick function's body, parallel exactly when the saved function was.
pub(crate) fn bind_tick<C: 'static>(
    r: &mut dyn Resolver<C>,
    info: &TickInfo,
) -> Result<TickBody<C>, RestoreError> {
    let unbound = |detail: &str| RestoreError::Unbound {
        kind: "tick function",
        name: info.settings.name.clone(),
        detail: format!("{:?}{detail}", info.handle),
    };
    match r.tick(info) {
        Some(b) if b.is_parallel() == info.parallel => Ok(b),
        Some(_) if info.parallel => Err(unbound(", saved parallel, bound serial")),
        Some(_) => Err(unbound(", saved serial, bound parallel")),
        None => Err(unbound("")),
    }
}

/// A tickable object.
pub(crate) fn bind_tickable<C>(
    r: &mut dyn Resolver<C>,
    info: &TickableInfo,
) -> Result<Box<dyn Tickable<C>>, RestoreError> {
    r.tickable(info).ok_or_else(|| RestoreError::Unbound {
        kind: "tickable",
        name: info.name.clone(),
        detail: format!("{:?}", info.handle),
    })
}

/// A saved latent action again: the built-in kinds by themselves, custom ones by the
/// resolver.
pub(crate) fn bind_action<C: 'static>(
    r: &mut dyn Resolver<C>,
    saved: &SavedAction,
) -> Option<Box<dyn LatentAction<C>>> {
    match saved {
        SavedAction::Custom { kind, data } => r.latent_action(kind, data),
        builtin => builtin.builtin(),
    }
}

/// What [`Scheduler::restore`] could not bring back (everything else is exact).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreReport {
    /// Async tasks that were running when the snapshot was taken: futures cannot be saved.
    pub tasks_not_saved: u64,
    /// Commands queued through [`Commands`](crate::scheduler::Commands) and not applied when
    /// the snapshot was taken ([`Scheduler::apply_commands`] before a snapshot avoids them).
    pub commands_not_applied: u64,
    /// Latent actions that could not save themselves.
    pub latent_not_saved: Vec<LatentInfo>,
    /// `on_cancel` hooks of cleared timers that were waiting for the next frame.
    pub dropped_cancel_hooks: u64,
    /// Removed latent actions waiting for their abort hook at the next frame that could not
    /// save themselves (the others are saved, and their hooks run in the restored world).
    pub dropped_aborts: u64,
    /// Live timers restored without their `on_cancel` hook (the resolver had none).
    pub unbound_cancel_hooks: u64,
}

impl RestoreReport {
    /// `true` when nothing was left out: the restored scheduler behaves exactly as the
    /// original.
    pub fn is_complete(&self) -> bool {
        *self == RestoreReport::default()
    }
}

impl fmt::Display for RestoreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_complete() {
            return f.write_str("everything restored");
        }
        let mut parts = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        };
        say(self.tasks_not_saved, "async task(s) not saved");
        say(self.commands_not_applied, "queued command(s) not applied");
        say(
            self.latent_not_saved.len() as u64,
            "latent action(s) not saved",
        );
        say(
            self.dropped_cancel_hooks,
            "queued on_cancel hook(s) dropped",
        );
        say(self.dropped_aborts, "queued latent abort hook(s) dropped");
        say(self.unbound_cancel_hooks, "on_cancel hook(s) not bound");
        f.write_str(&parts.join(", "))
    }
}
