//! [`Registry`]: a [`Resolver`] built from name tables, so that a save game, a rollback or an
//! owner moved between schedulers needs no hand-written resolver.

use std::collections::HashMap;
use std::fmt;

use super::{Resolver, Scheduler};
use crate::latent::BindLatent;
use crate::latent::{Completion, LatentAction, LatentInfo};
use crate::tick::BindTicks;
use crate::tick::{TickBody, TickCx, TickInfo};
use crate::tickable::BindTickables;
use crate::tickable::{Tickable, TickableInfo};
use crate::timer::BindTimers;
use crate::timer::{CancelHook, TimerCallback, TimerCx, TimerInfo};

type Make<I, T> = Box<dyn FnMut(&I) -> T + Send>;
type Other<I, T> = Option<Make<I, Option<T>>>;
type ActionMaker<C> = Make<[u8], Option<Box<dyn LatentAction<C>>>>;
type AfterRestore<C> = Box<dyn FnMut(&Scheduler<C>, &mut C) + Send>;

/// Callbacks by name: what a restore or an import binds each saved item to.
///
/// Each table maps a key to a callback that is cloned (or a maker that is called) once per
/// saved item with that key, so any number of timers may share a name. A saved item whose
/// key is in no table makes the restore fail with
/// [`RestoreError::Unbound`](crate::snapshot::RestoreError::Unbound) naming it; nothing is
/// changed then.
///
/// | saved item | key | add with |
/// |---|---|---|
/// | timer | its name | [`timer`](Self::timer), or [`timer_with`](Self::timer_with) to read its owner or tag |
/// | a timer's `on_cancel` hook | the timer's name | [`on_cancel`](Self::on_cancel) |
/// | tick function | its name | [`tick`](Self::tick), [`tick_with`](Self::tick_with) (parallel bodies too) |
/// | tickable | [`Tickable::name`] | [`tickable`](Self::tickable) |
/// | latent completion | its uuid | [`latent`](Self::latent), [`latent_with`](Self::latent_with) |
/// | custom latent action | its saved kind | [`latent_action`](Self::latent_action) |
///
/// Items whose key is in no table go to the fallback of their kind, when there is one:
/// [`other_timers`](Self::other_timers) (to bind by tag or owner), [`other_ticks`](Self::other_ticks),
/// [`other_tickables`](Self::other_tickables), [`other_latent`](Self::other_latent).
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::snapshot::Registry;
///
/// fn regen(hp: &mut u32, _: &mut TimerCx<u32>) {
///     *hp += 2;
/// }
/// let mut sched = Scheduler::<u32>::new();
/// sched.timers().every(millis(250)).name("regen").call(regen);
/// sched.ticks().add(TickSettings::named("decay"), |hp, _| *hp -= 1);
/// let mut hp = 10;
/// sched.tick(millis(250), &mut hp); // +2 - 1
/// let saved = sched.snapshot();
///
/// let mut names = Registry::new()
///     .timer("regen", regen)
///     .tick("decay", |hp: &mut u32, _: &mut TickCx<u32>| *hp -= 1);
/// let (mut restored, report) = Scheduler::restore(&saved, &mut names).unwrap();
/// assert!(report.is_complete());
/// let mut again = hp;
/// for _ in 0..2 {
///     sched.tick(millis(250), &mut hp); // +2 - 1
///     restored.tick(millis(250), &mut again);
/// }
/// assert_eq!((hp, again), (13, 13));
/// ```
pub struct Registry<C: 'static> {
    timers: HashMap<String, Make<TimerInfo, TimerCallback<C>>>,
    hooks: HashMap<String, Make<TimerInfo, CancelHook<C>>>,
    ticks: HashMap<String, Make<TickInfo, TickBody<C>>>,
    tickables: HashMap<String, Make<TickableInfo, Box<dyn Tickable<C>>>>,
    latent: HashMap<u64, Make<LatentInfo, Completion<C>>>,
    actions: HashMap<String, ActionMaker<C>>,
    other_timers: Other<TimerInfo, TimerCallback<C>>,
    other_ticks: Other<TickInfo, TickBody<C>>,
    other_tickables: Other<TickableInfo, Box<dyn Tickable<C>>>,
    other_latent: Other<LatentInfo, Completion<C>>,
    after_restore: Option<AfterRestore<C>>,
}

impl<C: 'static> Registry<C> {
    /// An empty registry: it binds nothing.
    pub fn new() -> Self {
        Registry {
            timers: HashMap::new(),
            hooks: HashMap::new(),
            ticks: HashMap::new(),
            tickables: HashMap::new(),
            latent: HashMap::new(),
            actions: HashMap::new(),
            other_timers: None,
            other_ticks: None,
            other_tickables: None,
            other_latent: None,
            after_restore: None,
        }
    }

    /// Timers named `name` call a clone of `f`.
    pub fn timer<F>(self, name: &str, f: F) -> Self
    where
        F: FnMut(&mut C, &mut TimerCx<'_, C>) + Clone + Send + 'static,
    {
        self.timer_with(name, move |_| Box::new(f.clone()))
    }

    /// Timers named `name` call what `make` returns for each (it reads the saved timer's
    /// owner, tag or period from the [`TimerInfo`]).
    pub fn timer_with(
        mut self,
        name: &str,
        make: impl FnMut(&TimerInfo) -> TimerCallback<C> + Send + 'static,
    ) -> Self {
        self.timers.insert(name.to_owned(), Box::new(make));
        self
    }

    /// Timers named `name` that had an `on_cancel` hook get a clone of `hook` again (without
    /// it they are restored with no hook, and the report counts them).
    pub fn on_cancel<F>(mut self, name: &str, hook: F) -> Self
    where
        F: FnOnce(&mut C) + Clone + Send + 'static,
    {
        let make = move |_: &TimerInfo| -> CancelHook<C> { Box::new(hook.clone()) };
        self.hooks.insert(name.to_owned(), Box::new(make));
        self
    }

    /// Serial tick functions named `name` run a clone of `f`.
    pub fn tick<F>(self, name: &str, f: F) -> Self
    where
        F: FnMut(&mut C, &mut TickCx<'_, C>) + Clone + Send + 'static,
    {
        self.tick_with(name, move |_| TickBody::serial(f.clone()))
    }

    /// Tick functions named `name` run the body `make` returns for each: a parallel one
    /// ([`TickBody::parallel`]) for a function saved parallel.
    pub fn tick_with(
        mut self,
        name: &str,
        make: impl FnMut(&TickInfo) -> TickBody<C> + Send + 'static,
    ) -> Self {
        self.ticks.insert(name.to_owned(), Box::new(make));
        self
    }

    /// Tickables whose [`name`](Tickable::name) is `name` are rebuilt by `make` (a
    /// tickable's own state is not in the snapshot: keep it in the game state, or rebuild it).
    pub fn tickable<T: Tickable<C> + 'static>(
        mut self,
        name: &str,
        mut make: impl FnMut(&TickableInfo) -> T + Send + 'static,
    ) -> Self {
        let make = move |info: &TickableInfo| -> Box<dyn Tickable<C>> { Box::new(make(info)) };
        self.tickables.insert(name.to_owned(), Box::new(make));
        self
    }

    /// Latent actions with key `uuid` (any owner) complete with a clone of `f`.
    pub fn latent<F>(self, uuid: u64, f: F) -> Self
    where
        F: FnMut(&mut C, &mut crate::latent::LatentCx<'_, C>) + Clone + Send + 'static,
    {
        self.latent_with(uuid, move |_| Box::new(f.clone()))
    }

    /// Latent actions with key `uuid` complete with what `make` returns for each (it reads
    /// the owner from the [`LatentInfo`]).
    pub fn latent_with(
        mut self,
        uuid: u64,
        make: impl FnMut(&LatentInfo) -> Completion<C> + Send + 'static,
    ) -> Self {
        self.latent.insert(uuid, Box::new(make));
        self
    }

    /// Custom latent actions saved as `kind` are rebuilt from their saved bytes by `make`
    /// (`None`: the bytes do not make one, and the restore fails naming it).
    pub fn latent_action(
        mut self,
        kind: &str,
        make: impl FnMut(&[u8]) -> Option<Box<dyn LatentAction<C>>> + Send + 'static,
    ) -> Self {
        self.actions.insert(kind.to_owned(), Box::new(make));
        self
    }

    /// Timers whose name is in no table (or that have none) call what `make` returns for
    /// each (bound by their tag or owner, say); `None` leaves one unbound.
    ///
    /// ```
    /// use tickflow::prelude::*;
    /// use tickflow::snapshot::Registry;
    /// use tickflow::timer::TimerCallback;
    ///
    /// fn heal(id: u64) -> TimerCallback<Vec<u64>> {
    ///     Box::new(move |log: &mut Vec<u64>, _: &mut TimerCx<Vec<u64>>| log.push(id))
    /// }
    /// let mut timers = TimerManager::<Vec<u64>>::new();
    /// for id in [7, 9] {
    ///     timers.every(secs(1.0)).tag(id).call(heal(id));
    /// }
    /// let mut by_tag = Registry::new().other_timers(|info| info.tag.map(heal));
    /// let mut restored = TimerManager::restore(&timers.snapshot(), &mut by_tag).unwrap();
    /// let mut log = Vec::new();
    /// restored.tick(secs(1.0), &mut log);
    /// assert_eq!(log, [7, 9]);
    /// ```
    pub fn other_timers(
        mut self,
        make: impl FnMut(&TimerInfo) -> Option<TimerCallback<C>> + Send + 'static,
    ) -> Self {
        self.other_timers = Some(Box::new(make));
        self
    }

    /// Tick functions whose name is in no table run what `make` returns for each; `None`
    /// leaves one unbound.
    pub fn other_ticks(
        mut self,
        make: impl FnMut(&TickInfo) -> Option<TickBody<C>> + Send + 'static,
    ) -> Self {
        self.other_ticks = Some(Box::new(make));
        self
    }

    /// Tickables whose name is in no table are rebuilt by `make`; `None` leaves one unbound.
    pub fn other_tickables(
        mut self,
        make: impl FnMut(&TickableInfo) -> Option<Box<dyn Tickable<C>>> + Send + 'static,
    ) -> Self {
        self.other_tickables = Some(Box::new(make));
        self
    }

    /// Latent actions whose uuid is in no table complete with what `make` returns for each
    /// (it reads the owner and uuid from the [`LatentInfo`]); `None` leaves one unbound.
    pub fn other_latent(
        mut self,
        make: impl FnMut(&LatentInfo) -> Option<Completion<C>> + Send + 'static,
    ) -> Self {
        self.other_latent = Some(Box::new(make));
        self
    }

    /// Runs `f` after each restore of [`sync_test`](crate::snapshot::sync_test) (see
    /// [`Resolver::after_restore`]).
    pub fn after_restore(mut self, f: impl FnMut(&Scheduler<C>, &mut C) + Send + 'static) -> Self {
        self.after_restore = Some(Box::new(f));
        self
    }
}

impl<C: 'static> Default for Registry<C> {
    fn default() -> Self {
        Registry::new()
    }
}

/// A table's keys, sorted (for `Debug`).
fn keys<K: Ord + Clone, V>(table: &HashMap<K, V>) -> Vec<K> {
    let mut k: Vec<K> = table.keys().cloned().collect();
    k.sort();
    k
}

impl<C: 'static> fmt::Debug for Registry<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("timers", &keys(&self.timers))
            .field("on_cancel", &keys(&self.hooks))
            .field("ticks", &keys(&self.ticks))
            .field("tickables", &keys(&self.tickables))
            .field("latent", &keys(&self.latent))
            .field("latent_actions", &keys(&self.actions))
            .finish_non_exhaustive()
    }
}

/// What `named` (the table's entry for the item's key, if any) makes for `info`, else what the
/// kind's fallback makes (if there is one).
fn bind<I: ?Sized, T>(
    named: Option<&mut Make<I, T>>,
    other: &mut Other<I, T>,
    info: &I,
) -> Option<T> {
    match named {
        Some(make) => Some(make(info)),
        None => other.as_mut()?(info),
    }
}

impl<C: 'static> BindTimers<C> for Registry<C> {
    fn timer(&mut self, info: &TimerInfo) -> Option<TimerCallback<C>> {
        let named = info.name.as_deref().and_then(|n| self.timers.get_mut(n));
        bind(named, &mut self.other_timers, info)
    }

    fn timer_on_cancel(&mut self, info: &TimerInfo) -> Option<CancelHook<C>> {
        let make = self.hooks.get_mut(info.name.as_deref()?)?;
        Some(make(info))
    }
}

impl<C: 'static> BindTicks<C> for Registry<C> {
    fn tick(&mut self, info: &TickInfo) -> Option<TickBody<C>> {
        let named = self.ticks.get_mut(info.settings.name.as_str());
        bind(named, &mut self.other_ticks, info)
    }
}

impl<C: 'static> BindTickables<C> for Registry<C> {
    fn tickable(&mut self, info: &TickableInfo) -> Option<Box<dyn Tickable<C>>> {
        let named = self.tickables.get_mut(info.name.as_str());
        bind(named, &mut self.other_tickables, info)
    }
}

impl<C: 'static> BindLatent<C> for Registry<C> {
    fn latent(&mut self, info: &LatentInfo) -> Option<Completion<C>> {
        bind(
            self.latent.get_mut(&info.uuid),
            &mut self.other_latent,
            info,
        )
    }

    fn latent_action(&mut self, kind: &str, data: &[u8]) -> Option<Box<dyn LatentAction<C>>> {
        self.actions.get_mut(kind)?(data)
    }
}

impl<C: 'static> Resolver<C> for Registry<C> {
    fn after_restore(&mut self, sched: &Scheduler<C>, ctx: &mut C) {
        if let Some(f) = &mut self.after_restore {
            f(sched, ctx);
        }
    }
}
