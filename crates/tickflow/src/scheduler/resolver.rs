//! [`Resolver`] and [`RestoreReport`]: how a [`Scheduler::restore`] binds callbacks again,
//! and what it could not bring back.

use std::fmt;

use super::Scheduler;
use crate::latent::{BindLatent, LatentInfo};
use crate::tick::BindTicks;
use crate::tickable::BindTickables;
use crate::timer::BindTimers;

/// Binds callbacks again when a [`SchedulerSnapshot`](crate::snapshot::SchedulerSnapshot) is
/// restored.
///
/// Most games need no implementation of their own: a [`Registry`](crate::snapshot::Registry) of
/// callbacks by name is one. Implement it for keys a name table cannot hold (callbacks
/// made from a name's parts, say).
///
/// It is the union of each part's binding trait — [`BindTimers`], [`BindTicks`],
/// [`BindTickables`], [`BindLatent`] — whose methods all default to binding nothing: implement
/// the ones your game uses, then `Resolver` itself (its one method has a default too). A saved
/// item the resolver cannot bind makes the restore fail with
/// [`RestoreError::Unbound`](crate::snapshot::RestoreError::Unbound) naming it. Each method is
/// asked once per saved item, in the order they run.
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::snapshot::{BindLatent, BindTickables, BindTicks, BindTimers, Resolver};
/// use tickflow::timer::{TimerCallback, TimerInfo};
///
/// /// Binds every timer named `wave/<n>` to a callback that adds `n` waves.
/// struct Waves;
/// impl BindTimers<u32> for Waves {
///     fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<u32>> {
///         let n: u32 = info.name.as_deref()?.strip_prefix("wave/")?.parse().ok()?;
///         Some(Box::new(move |waves: &mut u32, _: &mut TimerCx<'_, u32>| *waves += n))
///     }
/// }
/// // No tick functions, tickables or latent actions in this game: their parts bind nothing.
/// impl BindTicks<u32> for Waves {}
/// impl BindTickables<u32> for Waves {}
/// impl BindLatent<u32> for Waves {}
/// impl Resolver<u32> for Waves {}
///
/// let mut sched = Scheduler::<u32>::new();
/// sched.timers().after(secs(1.0)).name("wave/3").call(|waves, _| *waves += 3);
/// let mut waves = 0;
/// sched.tick(secs(0.25), &mut waves);
/// let snap = sched.snapshot();
///
/// let (mut back, _) = Scheduler::restore(&snap, &mut Waves).unwrap();
/// for _ in 0..4 {
///     back.tick(secs(0.25), &mut waves);
/// }
/// assert_eq!(waves, 3, "bound by its name's number");
/// ```
pub trait Resolver<C>: BindTimers<C> + BindTicks<C> + BindTickables<C> + BindLatent<C> {
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
