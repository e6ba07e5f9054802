//! [`BindTimers`]: how timers get their callbacks back after their records were saved, in a
//! restore of a [`TimerManager`] and in a load of durable rows. The timer's own part of a
//! scheduler's resolver, so that the timer layer needs nothing of the scheduler's to restore.

use crate::timer::callback::{Callback, CancelHook, TimerCallback};

use crate::timer::info::TimerInfo;

use crate::timer::manager::durable::{DurableTimer, LoadReport};
use crate::timer::manager::durable_load::DurableLoad;
use crate::timer::manager::Timers;

use crate::timer::manager::snapshot::TimerSnapshot;

use crate::format::RestoreError;
use crate::time::Span;
use crate::timer::standalone::TimerManager;

/// Binds timers' callbacks again: in a [`TimerManager::restore`], a durable load
/// ([`Timers::load_durable`], [`DurableLoad::add`]), and as the timer part of a scheduler's
/// [`Resolver`](crate::snapshot::Resolver).
///
/// A [`Registry`](crate::snapshot::Registry) of callbacks by name is one. Both methods default
/// to binding nothing; a timer whose callback is not bound makes the restore or load fail,
/// naming it.
pub trait BindTimers<C> {
    /// A timer's callback, by its name, tag or owner.
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<C>> {
        let _ = info;
        None
    }

    /// The `on_cancel` hook of a timer that had one; `None` (the default) restores the timer
    /// without it
    /// ([`RestoreReport::unbound_cancel_hooks`](crate::snapshot::RestoreReport::unbound_cancel_hooks)
    /// counts those in a scheduler's restore).
    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<C>> {
        let _ = info;
        None
    }
}

impl<C: 'static> TimerManager<C> {
    /// Builds a manager from a snapshot, asking `resolver` for each timer's callback (in set
    /// order, with the timer's [`TimerInfo`]: its name, tag, owner, ...) and for the
    /// `on_cancel` hook of each that had one, as
    /// [`Scheduler::restore`](crate::scheduler::Scheduler::restore) does: a
    /// [`Registry`](crate::snapshot::Registry) of callbacks by name, or by tag with
    /// [`other_timers`](crate::snapshot::Registry::other_timers).
    ///
    /// The restored manager hands out the same handles and makes the same calls, in the same
    /// order, as the one the snapshot was taken from.
    ///
    /// # Errors
    ///
    /// All or nothing: [`RestoreError::Unbound`](crate::snapshot::RestoreError::Unbound) naming the
    /// first timer the resolver cannot bind,
    /// [`RestoreError::Version`](crate::snapshot::RestoreError::Version) for a snapshot of another
    /// format version, and [`RestoreError::Corrupt`](crate::snapshot::RestoreError::Corrupt) for
    /// records that contradict each other.
    pub fn restore<R: BindTimers<C> + ?Sized>(
        snap: &TimerSnapshot,
        resolver: &mut R,
    ) -> Result<TimerManager<C>, RestoreError> {
        let timers =
            Timers::restore_with(snap, &mut |info, hooked| bind_timer(resolver, info, hooked))?;
        Ok(TimerManager::from_timers(timers))
    }
}

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
    pub fn load_durable<R: BindTimers<C> + ?Sized>(
        &mut self,
        rows: Vec<DurableTimer>,
        saved: [u64; 3],
        offline: Span,
        resolver: &mut R,
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
    pub fn add<R: BindTimers<C> + ?Sized>(
        &mut self,
        rows: Vec<DurableTimer>,
        resolver: &mut R,
    ) -> Result<(), RestoreError> {
        self.add_with(rows, &mut |info, hooked| bind_timer(resolver, info, hooked))
    }
}

/// A timer's callback and, when it had one (`hooked`), its `on_cancel` hook if the resolver
/// offers it.
pub(crate) fn bind_timer<C: 'static, R: BindTimers<C> + ?Sized>(
    r: &mut R,
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
