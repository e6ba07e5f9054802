//! [`Commands`]: structural changes queued from anywhere, applied between callbacks.

use std::cell::RefCell;
use std::fmt;
use std::mem;
use std::rc::Rc;

use std::future::Future;

use crate::latent::{Exec, LatentAction, LatentActions, TaskCx, TaskHandle};
use crate::tick::{Body, HandleAlloc, TickCx, TickError, TickFunctions, TickHandle, TickSettings};
use crate::tickable::{Tickable, TickableHandle, Tickables};
use crate::time::Span;
use crate::timer::{OwnerId, TimerManager};

pub(crate) enum Command<C> {
    AddTick(TickHandle, TickSettings, Body<C>),
    RemoveTick(TickHandle),
    SetEnabled(TickHandle, bool),
    SetInterval(TickHandle, Span),
    AddPrereq(TickHandle, TickHandle),
    RemovePrereq(TickHandle, TickHandle),
    AddTickable(TickableHandle, Box<dyn Tickable<C>>),
    RemoveTickable(TickableHandle),
    AddLatent(
        OwnerId,
        u64,
        Box<dyn LatentAction<C>>,
        Box<dyn FnMut(&mut C)>,
    ),
    RetriggerableDelay(OwnerId, u64, Span, Box<dyn FnMut(&mut C)>),
    RemoveLatent(OwnerId, u64),
    RemoveOwner(OwnerId),
}

/// State shared by a scheduler and its `Commands` handles.
pub(crate) struct Shared<C: 'static> {
    pub(crate) ticks: Rc<RefCell<HandleAlloc>>,
    pub(crate) tickables: Rc<RefCell<HandleAlloc>>,
    /// The task executor: spawning needs no queue.
    pub(crate) exec: Rc<Exec<C>>,
    queue: RefCell<Vec<Command<C>>>,
}

impl<C: 'static> Shared<C> {
    pub(crate) fn new(exec: Rc<Exec<C>>) -> Self {
        Shared {
            ticks: Rc::default(),
            tickables: Rc::default(),
            exec,
            queue: RefCell::new(Vec::new()),
        }
    }

    pub(crate) fn has_pending(&self) -> bool {
        !self.queue.borrow().is_empty()
    }

    pub(crate) fn pending(&self) -> usize {
        self.queue.borrow().len()
    }
}

/// A cloneable handle for changing the scheduler's tick functions, tickables, latent actions
/// and tasks from code that has no [`TickCx`]: timer callbacks, tickables, latent completions,
/// tasks, or anything that keeps it in the game context.
///
/// Commands are queued and applied at the next boundary: after the current tick function,
/// tickable, latent completion or task poll returns, after the timer stage, or at the start of the next frame when
/// queued between frames. A tick function added during a frame runs in that frame, in the
/// first group after the stage it was applied in. Handles are handed out at once, and
/// [`spawn`](Self::spawn) is not queued at all.
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
    shared: Rc<Shared<C>>,
}

impl<C: 'static> Clone for Commands<C> {
    fn clone(&self) -> Self {
        Commands {
            shared: Rc::clone(&self.shared),
        }
    }
}

impl<C: 'static> fmt::Debug for Commands<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Commands")
            .field("queued", &self.shared.queue.borrow().len())
            .finish()
    }
}

impl<C: 'static> Commands<C> {
    pub(crate) fn new(shared: Rc<Shared<C>>) -> Self {
        Commands { shared }
    }

    fn push(&self, c: Command<C>) {
        self.shared.queue.borrow_mut().push(c);
    }

    fn tick_live(&self, h: TickHandle) -> bool {
        self.shared.ticks.borrow().is_live(h.index(), h.tag())
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
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + 'static,
    ) -> TickHandle {
        self.try_add_tick(settings, f)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Queues a new tick function, or says why its settings are refused.
    pub fn try_add_tick(
        &self,
        settings: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + 'static,
    ) -> Result<TickHandle, TickError> {
        settings.validate()?;
        let (index, gen) = self.shared.ticks.borrow_mut().alloc();
        let h = TickHandle::new(index, gen);
        self.push(Command::AddTick(h, settings, Body::Serial(Box::new(f))));
        Ok(h)
    }

    /// Queues the removal of a tick function. `false` when the handle names no function.
    pub fn remove_tick(&self, h: TickHandle) -> bool {
        let live = self.tick_live(h);
        if live {
            self.push(Command::RemoveTick(h));
        }
        live
    }

    /// Queues enabling or disabling a tick function. `false` when the handle names no function.
    pub fn set_tick_enabled(&self, h: TickHandle, on: bool) -> bool {
        let live = self.tick_live(h);
        if live {
            self.push(Command::SetEnabled(h, on));
        }
        live
    }

    /// Queues an interval change (the cooldown restarts). `false` when the handle names no
    /// function.
    pub fn set_tick_interval(&self, h: TickHandle, interval: Span) -> bool {
        let live = self.tick_live(h);
        if live {
            self.push(Command::SetInterval(h, interval));
        }
        live
    }

    /// Queues a prerequisite; a cycle found when it is applied is reported in the frame's
    /// [`FrameReport::errors`](super::FrameReport::errors).
    pub fn add_prerequisite(&self, tick: TickHandle, before: TickHandle) {
        self.push(Command::AddPrereq(tick, before));
    }

    /// Queues the removal of a prerequisite.
    pub fn remove_prerequisite(&self, tick: TickHandle, before: TickHandle) {
        self.push(Command::RemovePrereq(tick, before));
    }

    /// Queues a new tickable and returns its handle. Added while tickables tick, it starts
    /// next frame.
    pub fn add_tickable(&self, t: impl Tickable<C> + 'static) -> TickableHandle {
        let (index, gen) = self.shared.tickables.borrow_mut().alloc();
        let h = TickableHandle::new(index, gen);
        self.push(Command::AddTickable(h, Box::new(t)));
        h
    }

    /// Queues the removal of a tickable (skipped at once when applied mid-stage). `false` when
    /// the handle names no tickable.
    pub fn remove_tickable(&self, h: TickableHandle) -> bool {
        let live = h_live(&self.shared.tickables, h);
        if live {
            self.push(Command::RemoveTickable(h));
        }
        live
    }

    /// Queues a latent action (ignored if the key holds an unfinished action when applied).
    /// Queued from a completion, it is applied right after it, so a delay re-armed there
    /// counts from the finished delay's due time.
    pub fn add_latent(
        &self,
        owner: OwnerId,
        uuid: u64,
        action: impl LatentAction<C> + 'static,
        on_complete: impl FnMut(&mut C) + 'static,
    ) {
        self.push(Command::AddLatent(
            owner,
            uuid,
            Box::new(action),
            Box::new(on_complete),
        ));
    }

    /// Queues a [`LatentActions::delay`].
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
    pub fn delay(
        &self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C) + 'static,
    ) {
        self.add_latent(owner, uuid, crate::latent::Delay::new(d), on_complete);
    }

    /// Queues a [`LatentActions::retriggerable_delay`].
    pub fn retriggerable_delay(
        &self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C) + 'static,
    ) {
        self.push(Command::RetriggerableDelay(
            owner,
            uuid,
            d,
            Box::new(on_complete),
        ));
    }

    /// Queues [`LatentActions::remove`].
    pub fn remove_latent(&self, owner: OwnerId, uuid: u64) {
        self.push(Command::RemoveLatent(owner, uuid));
    }

    /// Spawns a task at once (see [`Scheduler::spawn`](super::Scheduler::spawn)).
    pub fn spawn<F: Future<Output = ()> + 'static>(
        &self,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> TaskHandle {
        self.shared.exec.spawn(owner, f)
    }

    /// Queues removing all of an owner's timers, tick functions, tickables, latent actions and
    /// tasks.
    pub fn remove_owner(&self, owner: OwnerId) {
        self.push(Command::RemoveOwner(owner));
    }
}

fn h_live(alloc: &RefCell<HandleAlloc>, h: TickableHandle) -> bool {
    alloc.borrow().is_live(h.index(), h.tag())
}

/// The parts of a scheduler that commands change.
pub(crate) struct Parts<'a, C: 'static> {
    pub(crate) ticks: &'a mut TickFunctions<C>,
    pub(crate) tickables: &'a mut Tickables<C>,
    pub(crate) timers: &'a mut TimerManager<C>,
    pub(crate) latent: &'a mut LatentActions<C>,
}

/// Removes everything of `owner` (tasks are cancelled: their destructors run here). A
/// destructor that panics stops none of it: the first panic goes on once all is removed.
pub(crate) fn remove_owner<C: 'static>(shared: &Shared<C>, p: &mut Parts<'_, C>, owner: OwnerId) {
    let steps: [&mut dyn FnMut(); 5] = [
        &mut || {
            p.ticks.remove_owner(owner);
        },
        &mut || {
            p.tickables.remove_owner(owner);
        },
        &mut || {
            p.timers.clear_owner(owner);
        },
        &mut || {
            p.latent.remove_owner(owner);
        },
        &mut || {
            shared.exec.cancel_owner(owner);
        },
    ];
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::unwind::each_then_raise(steps, |step| {
            step();
            true
        })
    }));
    shared.exec.clear_dropped(p.timers);
    if let Err(payload) = result {
        std::panic::resume_unwind(payload);
    }
}

/// Applies every queued command (including ones queued while applying, by destructors).
pub(crate) fn apply<C: 'static>(
    shared: &Shared<C>,
    p: &mut Parts<'_, C>,
    errors: &mut Vec<TickError>,
) {
    if shared.exec.has_dropped() {
        shared.exec.clear_dropped(p.timers);
    }
    loop {
        let queue = mem::take(&mut *shared.queue.borrow_mut());
        if queue.is_empty() {
            return;
        }
        let mut queue = queue.into_iter();
        let applied = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            apply_each(shared, p, errors, &mut queue)
        }));
        if let Err(payload) = applied {
            // A destructor panicked (a removed closure's, a cancelled task's): the commands
            // after it stay queued, ahead of any queued since, for the next boundary.
            let mut q = shared.queue.borrow_mut();
            let later = mem::take(&mut *q);
            q.extend(queue);
            q.extend(later);
            drop(q);
            std::panic::resume_unwind(payload);
        }
    }
}

fn apply_each<C: 'static>(
    shared: &Shared<C>,
    p: &mut Parts<'_, C>,
    errors: &mut Vec<TickError>,
    queue: &mut impl Iterator<Item = Command<C>>,
) {
    {
        for c in queue {
            match c {
                Command::AddTick(h, s, body) => p.ticks.graph.insert_reserved(h, s, body),
                Command::RemoveTick(h) => {
                    p.ticks.remove(h);
                }
                Command::SetEnabled(h, on) => {
                    p.ticks.graph.set_enabled(h, on);
                }
                Command::SetInterval(h, i) => {
                    p.ticks.graph.set_interval(h, i);
                }
                Command::AddPrereq(t, b) => {
                    if let Err(e) = p.ticks.graph.add_prereq(t, b) {
                        errors.push(e);
                    }
                }
                Command::RemovePrereq(t, b) => {
                    p.ticks.graph.remove_prereq(t, b);
                }
                Command::AddTickable(h, t) => p.tickables.add_reserved(h, t),
                Command::RemoveTickable(h) => {
                    p.tickables.remove(h);
                }
                Command::AddLatent(owner, uuid, action, f) => {
                    p.latent.add_boxed(owner, uuid, action, f);
                }
                Command::RetriggerableDelay(owner, uuid, d, f) => {
                    p.latent.retrigger_boxed(owner, uuid, d, f);
                }
                Command::RemoveLatent(owner, uuid) => {
                    p.latent.remove(owner, uuid);
                }
                Command::RemoveOwner(owner) => remove_owner(shared, p, owner),
            }
            p.ticks.settle();
        }
    }
}
