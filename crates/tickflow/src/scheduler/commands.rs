//! [`Commands`]: changes queued from anywhere (any callback, any thread), applied at the
//! scheduler's next boundary.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Weak};

use super::apply::{Command, Shared};
use crate::handle::{lock_alloc, SharedAlloc};
use crate::latent::{LatentAction, LatentHandle, TaskCx, TaskHandle};
use crate::owner::OwnerId;
use crate::tick::{Body, TickCx, TickError, TickHandle, TickSettings};
use crate::tickable::{Tickable, TickableHandle};
use crate::time::{Clocks, Span};
use crate::timer::{TimerHandle, Timers};

/// A cloneable handle for changing the scheduler from code that does not hold it: tick
/// functions, timer callbacks, tickables, latent completions, tasks, other threads, or
/// anything that keeps it in the game context. It adds and removes tick functions, tickables,
/// latent actions and tasks, reaches the timers, and removes owners.
///
/// Commands are queued and applied at the next boundary: after the current tick function,
/// timer callback, tickable, latent completion or task poll returns, or at the start of
/// the next frame (or the next direct call on the scheduler) when queued between frames or
/// from another thread. A tick function added during a frame runs in that frame, in the
/// first group after the stage it was applied in. Handles are handed out at once; a
/// [`spawn`](Self::spawn) from code the scheduler runs is not queued at all.
///
/// `Send + Sync + Clone`. A `Commands` belongs to one scheduler: once that scheduler is dropped
/// (a [restore](super::Scheduler::restore) makes a new one, and the old one is usually dropped
/// with it), every method panics with a message that says so, instead of queuing work that
/// would never run. Point the context's `Commands` at the restored scheduler in
/// [`Resolver::after_restore`](crate::snapshot::Resolver::after_restore);
/// [`is_connected`](Self::is_connected) tells whether it still reaches its scheduler. While
/// the old scheduler is alive (kept to compare against, say), its `Commands` keep feeding it
/// and `is_connected` stays `true`: they never reach the restored one.
///
/// Errors found when a command is applied (a prerequisite that would form a cycle) are
/// reported in [`FrameReport::errors`](super::FrameReport::errors); a stale handle is not an
/// error and does nothing.
///
/// ```
/// use tickflow::prelude::*;
///
/// struct Game { cmds: Commands<Game>, log: Vec<&'static str> }
///
/// let mut sched = Scheduler::<Game>::new();
/// let mut game = Game { cmds: sched.commands(), log: vec![] };
/// sched.timers().after(secs(0.1)).call(|game: &mut Game, _| {
///     // Timers run after PostPhysics: the new function runs in PostUpdateWork this frame.
///     game.cmds.add_tick(TickSettings::named("late"), |game: &mut Game, cx| {
///         game.log.push(if cx.group() == TickGroup::PostUpdateWork { "same frame" } else { "?" });
///     });
/// });
/// sched.tick(secs(0.1), &mut game);
/// assert_eq!(game.log, ["same frame"]);
/// ```
pub struct Commands<C: 'static> {
    shared: Weak<Shared<C>>,
}

impl<C: 'static> Clone for Commands<C> {
    fn clone(&self) -> Self {
        Commands {
            shared: Weak::clone(&self.shared),
        }
    }
}

impl<C: 'static> fmt::Debug for Commands<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shared.upgrade() {
            Some(s) => f
                .debug_struct("Commands")
                .field("queued", &s.pending())
                .finish(),
            None => f.write_str("Commands(scheduler dropped)"),
        }
    }
}

impl<C: 'static> Commands<C> {
    pub(crate) fn new(shared: &Arc<Shared<C>>) -> Self {
        Commands {
            shared: Arc::downgrade(shared),
        }
    }

    /// The clocks of the frame the scheduler runs (or ran last): what a callback that has no
    /// other way to them reads (a tickable, a latent completion, another thread).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// struct Game { cmds: Commands<Game>, seen: Vec<u64> }
    ///
    /// let mut sched = Scheduler::<Game>::new();
    /// let mut game = Game { cmds: sched.commands(), seen: vec![] };
    /// sched.latent().delay(OwnerId::new(1), 0, secs(0.2), |g: &mut Game| {
    ///     let frame = g.cmds.clocks().frame();
    ///     g.seen.push(frame);
    /// });
    /// for _ in 0..3 {
    ///     sched.tick(secs(0.1), &mut game);
    /// }
    /// assert_eq!(game.seen, [2]);
    /// ```
    #[track_caller]
    pub fn clocks(&self) -> Clocks {
        self.shared().clocks()
    }

    /// `true` while the scheduler these commands go to exists.
    pub fn is_connected(&self) -> bool {
        self.shared.strong_count() > 0
    }

    /// The scheduler's shared state.
    ///
    /// # Panics
    ///
    /// When the scheduler was dropped.
    #[track_caller]
    fn shared(&self) -> Arc<Shared<C>> {
        self.shared.upgrade().unwrap_or_else(|| {
            panic!(
                "Commands: the scheduler these commands belong to was dropped (a restore makes \
                 a new scheduler: point the context's Commands at it with Scheduler::commands() \
                 in Resolver::after_restore)"
            )
        })
    }

    #[track_caller]
    fn push(&self, c: Command<C>) {
        self.shared().push(c);
    }

    #[track_caller]
    fn tick_live(&self, h: TickHandle) -> bool {
        live(&self.shared().ticks, h.index(), h.tag())
    }

    /// Queues a new tick function and returns its handle.
    ///
    /// # Panics
    ///
    /// When the settings are invalid; [`try_add_tick`](Self::try_add_tick) returns the error.
    #[track_caller]
    pub fn add_tick(
        &self,
        settings: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> TickHandle {
        self.try_add_tick(settings, f)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Queues a new tick function, or says why its settings are refused.
    #[track_caller]
    pub fn try_add_tick(
        &self,
        settings: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> Result<TickHandle, TickError> {
        settings.validate()?;
        let shared = self.shared();
        let (index, gen) = lock_alloc(&shared.ticks).alloc();
        let h = TickHandle::new(index, gen);
        shared.push(Command::AddTick(h, settings, Body::Serial(Box::new(f))));
        Ok(h)
    }

    /// Queues the removal of a tick function. `false` when the handle names no function.
    #[track_caller]
    pub fn remove_tick(&self, h: TickHandle) -> bool {
        let live = self.tick_live(h);
        if live {
            self.push(Command::RemoveTick(h));
        }
        live
    }

    /// Queues enabling or disabling a tick function. `false` when the handle names no function.
    #[track_caller]
    pub fn set_tick_enabled(&self, h: TickHandle, on: bool) -> bool {
        let live = self.tick_live(h);
        if live {
            self.push(Command::SetEnabled(h, on));
        }
        live
    }

    /// Queues an interval change (the cooldown restarts). `false` when the handle names no
    /// function.
    #[track_caller]
    pub fn set_tick_interval(&self, h: TickHandle, interval: Span) -> bool {
        let live = self.tick_live(h);
        if live {
            self.push(Command::SetInterval(h, interval));
        }
        live
    }

    /// Queues a prerequisite; a cycle found when it is applied is reported in the frame's
    /// [`FrameReport::errors`](super::FrameReport::errors).
    #[track_caller]
    pub fn add_prerequisite(&self, tick: TickHandle, before: TickHandle) {
        self.push(Command::AddPrereq(tick, before));
    }

    /// Queues the removal of a prerequisite.
    #[track_caller]
    pub fn remove_prerequisite(&self, tick: TickHandle, before: TickHandle) {
        self.push(Command::RemovePrereq(tick, before));
    }

    /// Queues a new tickable and returns its handle. Added while tickables tick, it starts
    /// next frame.
    #[track_caller]
    pub fn add_tickable(&self, t: impl Tickable<C> + 'static) -> TickableHandle {
        let shared = self.shared();
        let (index, gen) = lock_alloc(&shared.tickables).alloc();
        let h = TickableHandle::new(index, gen);
        shared.push(Command::AddTickable(h, Box::new(t)));
        h
    }

    /// Queues the removal of a tickable (skipped at once when applied mid-stage). `false` when
    /// the handle names no tickable.
    #[track_caller]
    pub fn remove_tickable(&self, h: TickableHandle) -> bool {
        let live = live(&self.shared().tickables, h.index(), h.tag());
        if live {
            self.push(Command::RemoveTickable(h));
        }
        live
    }

    /// Queues a latent action (ignored if the key holds an unfinished action when applied).
    /// Queued from a completion, it is applied right after it, so a delay re-armed there
    /// counts from the finished delay's due time.
    #[track_caller]
    pub fn add_latent(
        &self,
        owner: OwnerId,
        uuid: u64,
        action: impl LatentAction<C> + 'static,
        on_complete: impl FnMut(&mut C) + Send + 'static,
    ) {
        self.push(Command::AddLatent(
            owner,
            uuid,
            Box::new(action),
            Box::new(on_complete),
        ));
    }

    /// Queues a [`LatentActions::delay`](crate::latent::LatentActions::delay).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// struct Game { cmds: Commands<Game>, laps: Vec<u64> }
    ///
    /// fn lap(game: &mut Game) {
    ///     game.laps.push(0);
    ///     game.cmds.delay(OwnerId::from(1), 0, secs(0.1), lap); // loop with a delay
    /// }
    ///
    /// let mut sched = Scheduler::<Game>::new();
    /// let mut game = Game { cmds: sched.commands(), laps: vec![] };
    /// sched.latent().delay(OwnerId::from(1), 0, secs(0.1), lap);
    /// for _ in 0..100 {
    ///     sched.tick(secs(0.03), &mut game);
    /// }
    /// // 3 s of 0.03 s frames: 30 laps of exactly 0.1 s (a Blueprint loop manages 25).
    /// assert_eq!(game.laps.len(), 30);
    /// ```
    #[track_caller]
    pub fn delay(
        &self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C) + Send + 'static,
    ) {
        self.add_latent(owner, uuid, crate::latent::Delay::new(d), on_complete);
    }

    /// Queues a [`LatentActions::retriggerable_delay`](crate::latent::LatentActions::retriggerable_delay).
    #[track_caller]
    pub fn retriggerable_delay(
        &self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C) + Send + 'static,
    ) {
        self.push(Command::RetriggerableDelay(
            owner,
            uuid,
            d,
            Box::new(on_complete),
        ));
    }

    /// Queues [`LatentActions::cancel`](crate::latent::LatentActions::cancel): removes the action of `h` if it still runs.
    #[track_caller]
    pub fn cancel_latent(&self, h: LatentHandle) {
        self.push(Command::CancelLatent(h));
    }

    /// Queues [`LatentActions::remove`](crate::latent::LatentActions::remove).
    #[track_caller]
    pub fn remove_latent(&self, owner: OwnerId, uuid: u64) {
        self.push(Command::RemoveLatent(owner, uuid));
    }

    /// Spawns a task (see [`Tasks::spawn`](crate::latent::Tasks::spawn)); its handle is valid
    /// at once. From code the scheduler runs on this thread (a task, any callback) the task
    /// joins at once; from elsewhere (between frames, another thread) it joins at the next
    /// boundary. Either way it is first polled in the next latent stage.
    #[track_caller]
    pub fn spawn<F, T>(
        &self,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> TaskHandle<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let shared = self.shared();
        let (task, handle) = shared.tasks.spawn(owner, f);
        if let Some(task) = task {
            shared.push(Command::Spawn(task));
        }
        handle
    }

    /// Queues work on the scheduler's timer manager: `op` runs at the next boundary with
    /// `&mut` access to it (set, clear, pause or query timers). For code that has no
    /// `timers()` of its own (another thread, say); every callback does.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<u32>::new();
    /// let cmds = sched.commands();
    /// let handle = Arc::new(Mutex::new(TimerHandle::default()));
    /// let h = handle.clone();
    /// std::thread::spawn(move || {
    ///     cmds.timers(move |t| *h.lock().unwrap() = t.every(secs(0.1)).call(|n, _| *n += 1));
    /// })
    /// .join()
    /// .unwrap();
    /// let mut n = 0;
    /// sched.tick(secs(0.1), &mut n); // applied at the start of the frame
    /// sched.tick(secs(0.1), &mut n);
    /// assert_eq!(n, 2);
    /// assert!(sched.timers().exists(*handle.lock().unwrap()));
    /// ```
    #[track_caller]
    pub fn timers(&self, op: impl FnOnce(&mut Timers<C>) + Send + 'static) {
        self.push(Command::Timers(Box::new(op)));
    }

    /// Queues [`Timers::clear`].
    #[track_caller]
    pub fn clear_timer(&self, h: TimerHandle) {
        self.timers(move |t| {
            t.clear(h);
        });
    }

    /// Queues [`Timers::pause`] (`on: true`) or [`unpause`](Timers::unpause).
    #[track_caller]
    pub fn pause_timer(&self, h: TimerHandle, on: bool) {
        self.timers(move |t| {
            if on {
                t.pause(h);
            } else {
                t.unpause(h);
            }
        });
    }

    /// Queues removing all of an owner's timers, tick functions, tickables, latent actions and
    /// tasks.
    #[track_caller]
    pub fn remove_owner(&self, owner: OwnerId) {
        self.push(Command::RemoveOwner(owner));
    }
}

fn live(alloc: &SharedAlloc, index: u32, tag: std::num::NonZeroU32) -> bool {
    lock_alloc(alloc).is_live(index, tag)
}
