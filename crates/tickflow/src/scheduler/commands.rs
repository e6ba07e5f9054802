//! [`Commands`]: structural changes queued from anywhere, applied between callbacks.

use std::cell::RefCell;
use std::fmt;
use std::mem;
use std::num::NonZeroU32;
use std::rc::Rc;

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
    RemoveOwner(OwnerId),
}

/// State shared by a scheduler and its `Commands` handles.
pub(crate) struct Shared<C> {
    pub(crate) ticks: Rc<RefCell<HandleAlloc>>,
    pub(crate) tickables: Rc<RefCell<HandleAlloc>>,
    queue: RefCell<Vec<Command<C>>>,
}

impl<C> Shared<C> {
    pub(crate) fn new() -> Self {
        Shared {
            ticks: Rc::default(),
            tickables: Rc::default(),
            queue: RefCell::new(Vec::new()),
        }
    }

    pub(crate) fn has_pending(&self) -> bool {
        !self.queue.borrow().is_empty()
    }
}

/// A cloneable handle for changing the scheduler's tick functions and tickables from code that
/// has no [`TickCx`]: timer callbacks, tickables, tasks, or anything that keeps it in the game
/// context.
///
/// Commands are queued and applied at the next boundary: after the current tick function,
/// tickable or task returns, after the timer stage, or at the start of the next frame when
/// queued between frames. A tick function added during a frame runs in that frame, in the
/// first group after the stage it was applied in. Handles are handed out at once.
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
pub struct Commands<C> {
    shared: Rc<Shared<C>>,
}

impl<C> Clone for Commands<C> {
    fn clone(&self) -> Self {
        Commands {
            shared: Rc::clone(&self.shared),
        }
    }
}

impl<C> fmt::Debug for Commands<C> {
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
        self.shared.ticks.borrow().is_live(h.index(), h.gen())
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

    /// Queues removing all of an owner's timers, tick functions and tickables.
    pub fn remove_owner(&self, owner: OwnerId) {
        self.push(Command::RemoveOwner(owner));
    }
}

fn h_live(alloc: &RefCell<HandleAlloc>, h: TickableHandle) -> bool {
    let (index, gen): (u32, NonZeroU32) = h.parts();
    alloc.borrow().is_live(index, gen)
}

/// Applies every queued command (including ones queued while applying, by destructors).
pub(crate) fn apply<C: 'static>(
    shared: &Shared<C>,
    ticks: &mut TickFunctions<C>,
    tickables: &mut Tickables<C>,
    timers: &mut TimerManager<C>,
    errors: &mut Vec<TickError>,
) {
    loop {
        let queue = mem::take(&mut *shared.queue.borrow_mut());
        if queue.is_empty() {
            return;
        }
        for c in queue {
            match c {
                Command::AddTick(h, s, body) => ticks.graph.insert_reserved(h, s, body),
                Command::RemoveTick(h) => {
                    ticks.remove(h);
                }
                Command::SetEnabled(h, on) => {
                    ticks.graph.set_enabled(h, on);
                }
                Command::SetInterval(h, i) => {
                    ticks.graph.set_interval(h, i);
                }
                Command::AddPrereq(t, b) => {
                    if let Err(e) = ticks.graph.add_prereq(t, b) {
                        errors.push(e);
                    }
                }
                Command::RemovePrereq(t, b) => {
                    ticks.graph.remove_prereq(t, b);
                }
                Command::AddTickable(h, t) => tickables.add_reserved(h, t),
                Command::RemoveTickable(h) => {
                    tickables.remove(h);
                }
                Command::RemoveOwner(owner) => {
                    ticks.remove_owner(owner);
                    tickables.remove_owner(owner);
                    timers.clear_owner(owner);
                }
            }
            ticks.settle();
        }
    }
}
