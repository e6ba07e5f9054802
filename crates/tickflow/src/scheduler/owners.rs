//! Knowing the owners: every owner with items, and the owners that got their first item since
//! the host last asked ([`Scheduler::track_new_owners`]).

use super::Scheduler;
use crate::owner::{OwnerId, Owners};

impl<C: 'static> Scheduler<C> {
    /// From now on, records each owner that gets its first item — timer, tick function,
    /// tickable, latent action or task — for [`take_new_owners`](Self::take_new_owners): a
    /// host that must hear of each owner as it appears, to make sure it cleans up after
    /// itself (tickflow-bevy registers the entity). `false` stops and forgets the record. Off
    /// by default, and free when off; when on, an owner's first item in each part costs a push
    /// onto a list. Not saved in snapshots: a restored scheduler starts with it off.
    ///
    /// ```
    /// # use tickflow::prelude::*;
    /// let mut sched = Scheduler::<()>::new();
    /// sched.timers().after(secs(1.0)).owner(OwnerId::from(1)).call(|_, _| {});
    /// sched.track_new_owners(true);
    /// for id in [2, 2, 3] {
    ///     sched.timers().after(secs(1.0)).owner(OwnerId::from(id)).call(|_, _| {});
    /// }
    /// sched.ticks().add(TickSettings::named("ai").owned_by(OwnerId::from(3)), |_, _| {});
    /// let mut fresh = sched.take_new_owners();
    /// fresh.sort();
    /// assert_eq!(fresh, [OwnerId::from(2), OwnerId::from(3), OwnerId::from(3)]);
    /// assert!(sched.take_new_owners().is_empty());
    /// assert_eq!(sched.owners(), [OwnerId::from(1), OwnerId::from(2), OwnerId::from(3)]);
    /// ```
    pub fn track_new_owners(&mut self, on: bool) {
        self.each_part(&mut |part| part.track(on));
    }

    /// The owners that got their first item in a part (timers, tick functions, tickables,
    /// latent actions, tasks) since the last call, while tracking: an owner new to several
    /// parts appears once for each. Commands queued meanwhile are applied first.
    pub fn take_new_owners(&mut self) -> Vec<OwnerId> {
        self.flush();
        let mut out = Vec::new();
        self.each_part(&mut |part| part.take_fresh(&mut out));
        out
    }

    /// Every owner that has an item now, sorted, each once.
    pub fn owners(&self) -> Vec<OwnerId> {
        let mut out = Vec::new();
        let mut push = |o| out.push(o);
        self.timers.owners_ref().each(&mut push);
        self.ticks.graph().owners_ref().each(&mut push);
        self.tickables.each(&mut push);
        self.latent.owners_ref().each(&mut push);
        self.tasks.exec().with_owners(|o| o.each(&mut push));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Calls `f` with each part's owners.
    fn each_part(&mut self, f: &mut dyn FnMut(&mut dyn Owners)) {
        f(self.timers.owners_mut());
        f(self.ticks.graph_mut().owners_mut());
        f(&mut self.tickables);
        f(self.latent.owners_mut());
        self.tasks.exec().with_owners(|o| f(o));
    }
}
