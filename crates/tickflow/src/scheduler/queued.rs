//! The per-service views of [`Commands`]: the scheduler's services by the same names, queued.
//! Each view borrows its `Commands`; without a scheduler every method does nothing and hands
//! out handles that name nothing.

use std::fmt;
use std::future::Future;
use std::num::NonZeroU32;

use super::apply::{Command, Shared};
use crate::commands::Commands;
use crate::executor::{make_task, spawn_from, TaskFactory};
use crate::handle::{lock_alloc, SharedAlloc};
use crate::latent::{Completion, LatentAction, LatentCx, LatentHandle, TaskCx, TaskHandle};
use crate::owner::OwnerId;
use crate::tick::{Body, TickCx, TickError, TickHandle, TickSettings};
use crate::tickable::{Tickable, TickableHandle};
use crate::time::Span;

/// Queues `c` if `key` (index, tag) is live in the allocator `alloc` picks; says whether it
/// was (a stale handle, or no scheduler, queues nothing).
fn push_if_live<C: 'static>(
    cmds: &Commands<C>,
    alloc: impl FnOnce(&Shared<C>) -> &SharedAlloc,
    (index, tag): (u32, NonZeroU32),
    c: Command<C>,
) -> bool {
    let Some(shared) = cmds.shared() else {
        return false;
    };
    let live = lock_alloc(alloc(&shared)).is_live(index, tag);
    if live {
        shared.push(c);
    }
    live
}

macro_rules! view {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name<'a, C: 'static> {
            cmds: &'a Commands<C>,
        }

        impl<'a, C: 'static> $name<'a, C> {
            pub(crate) fn new(cmds: &'a Commands<C>) -> Self {
                $name { cmds }
            }
        }

        impl<C: 'static> fmt::Debug for $name<'_, C> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($name)).field(self.cmds).finish()
            }
        }
    };
}

view! {
    /// Tick-function changes queued through [`Commands::ticks`]: the methods of
    /// [`TickFunctions`](crate::tick::TickFunctions), applied at the next boundary. A function
    /// added during a frame runs in that frame, in the first group after the current one.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<Vec<String>>::new();
    /// sched.ticks().add(TickSettings::named("spawner"), |log, cx| {
    ///     log.push(format!("spawner in {:?}", cx.group()));
    ///     if cx.clocks().frame() == 1 {
    ///         cx.commands().ticks().add(TickSettings::named("child"), |log, cx| {
    ///             log.push(format!("child in {:?}", cx.group()));
    ///         });
    ///     }
    /// });
    /// let mut log = Vec::new();
    /// sched.tick(secs(0.1), &mut log);
    /// assert_eq!(log, ["spawner in PrePhysics", "child in DuringPhysics"]);
    /// ```
    TickCommands
}

impl<C: 'static> TickCommands<'_, C> {
    /// Queues a new tick function and returns its handle.
    ///
    /// # Panics
    ///
    /// When the settings are invalid; [`try_add`](Self::try_add) returns the error.
    #[track_caller]
    pub fn add(
        &self,
        settings: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> TickHandle {
        self.try_add(settings, f).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Queues a new tick function, or says why its settings are refused.
    pub fn try_add(
        &self,
        settings: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> Result<TickHandle, TickError> {
        settings.validate()?;
        let Some(shared) = self.cmds.shared() else {
            return Ok(TickHandle::default());
        };
        let (index, gen) = lock_alloc(&shared.ticks).alloc();
        let h = TickHandle::new(index, gen);
        shared.push(Command::AddTick(
            h,
            settings,
            Body::Serial(crate::timer::Callback::new(f)),
        ));
        Ok(h)
    }

    /// Queues `c` if `h` names a live function; says whether it did.
    fn if_live(&self, h: TickHandle, c: Command<C>) -> bool {
        push_if_live(self.cmds, |s| &s.ticks, (h.index(), h.tag()), c)
    }

    /// Queues the removal of a tick function. `false` when the handle names no function.
    pub fn remove(&self, h: TickHandle) -> bool {
        self.if_live(h, Command::RemoveTick(h))
    }

    /// Queues enabling or disabling a tick function. `false` when the handle names no
    /// function.
    pub fn set_enabled(&self, h: TickHandle, on: bool) -> bool {
        self.if_live(h, Command::SetEnabled(h, on))
    }

    /// Queues an interval change (the cooldown restarts). `false` when the handle names no
    /// function.
    pub fn set_interval(&self, h: TickHandle, interval: Span) -> bool {
        self.if_live(h, Command::SetInterval(h, interval))
    }

    /// Queues a prerequisite; it shapes the order from the next frame. A cycle found when it
    /// is applied is reported in the frame's [`FrameReport::errors`](super::FrameReport::errors).
    pub fn add_prerequisite(&self, tick: TickHandle, before: TickHandle) {
        self.cmds.push(Command::AddPrereq(tick, before));
    }

    /// Queues the removal of a prerequisite.
    pub fn remove_prerequisite(&self, tick: TickHandle, before: TickHandle) {
        self.cmds.push(Command::RemovePrereq(tick, before));
    }
}

view! {
    /// Tickable changes queued through [`Commands::tickables`]: the methods of
    /// [`Tickables`](crate::tickable::Tickables), applied at the next boundary.
    TickableCommands
}

impl<C: 'static> TickableCommands<'_, C> {
    /// Queues a new tickable and returns its handle. Added while tickables tick, it starts
    /// next frame.
    pub fn add(&self, t: impl Tickable<C> + 'static) -> TickableHandle {
        let Some(shared) = self.cmds.shared() else {
            return TickableHandle::default();
        };
        let (index, gen) = lock_alloc(&shared.tickables).alloc();
        let h = TickableHandle::new(index, gen);
        shared.push(Command::AddTickable(h, Box::new(t)));
        h
    }

    /// Queues the removal of a tickable (skipped at once when applied mid-stage). `false` when
    /// the handle names no tickable.
    pub fn remove(&self, h: TickableHandle) -> bool {
        let key = (h.index(), h.tag());
        push_if_live(self.cmds, |s| &s.tickables, key, Command::RemoveTickable(h))
    }
}

view! {
    /// Latent actions queued through [`Commands::latent`]: the methods of
    /// [`LatentActions`](crate::latent::LatentActions), applied at the next boundary. Queued
    /// from a completion, they are applied right after it, so a delay re-armed there counts
    /// from the finished delay's due time.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// fn lap(laps: &mut u32, cx: &mut LatentCx<'_, u32>) {
    ///     *laps += 1;
    ///     cx.commands().latent().delay(OwnerId::from(1), 0, secs(0.1), lap); // loop
    /// }
    ///
    /// let mut sched = Scheduler::<u32>::new();
    /// sched.latent().delay(OwnerId::from(1), 0, secs(0.1), lap);
    /// let mut laps = 0;
    /// for _ in 0..100 {
    ///     sched.tick(secs(0.03), &mut laps);
    /// }
    /// // 3 s of 0.03 s frames: 30 laps of exactly 0.1 s (a Blueprint loop manages 25).
    /// assert_eq!(laps, 30);
    /// ```
    LatentCommands
}

impl<C: 'static> LatentCommands<'_, C> {
    /// Queues [`LatentActions::add`](crate::latent::LatentActions::add) (ignored if the key
    /// holds an unfinished action when applied).
    pub fn add(
        &self,
        owner: OwnerId,
        uuid: u64,
        action: impl LatentAction<C> + 'static,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) {
        let f: Completion<C> = Box::new(on_complete);
        self.cmds
            .push(Command::AddLatent(owner, uuid, Box::new(action), f));
    }

    /// Queues [`LatentActions::delay`](crate::latent::LatentActions::delay).
    pub fn delay(
        &self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) {
        self.add(owner, uuid, crate::latent::Delay::new(d), on_complete);
    }

    /// Queues [`LatentActions::retriggerable_delay`](crate::latent::LatentActions::retriggerable_delay).
    pub fn retriggerable_delay(
        &self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) {
        let f: Completion<C> = Box::new(on_complete);
        self.cmds
            .push(Command::RetriggerableDelay(owner, uuid, d, f));
    }

    /// Queues [`LatentActions::cancel`](crate::latent::LatentActions::cancel): removes the
    /// action of `h` if it still runs.
    pub fn cancel(&self, h: LatentHandle) {
        self.cmds.push(Command::CancelLatent(h));
    }

    /// Queues [`LatentActions::remove`](crate::latent::LatentActions::remove).
    pub fn remove(&self, owner: OwnerId, uuid: u64) {
        self.cmds.push(Command::RemoveLatent(owner, uuid));
    }
}

view! {
    /// Tasks spawned through [`Commands::tasks`]: [`Tasks::spawn`](crate::latent::Tasks::spawn)
    /// from anywhere.
    TaskCommands
}

impl<C: 'static> TaskCommands<'_, C> {
    /// Spawns a task; its handle is valid at once. From code the scheduler runs on this
    /// thread (a task, any callback) the task joins at once; from elsewhere (between frames,
    /// another thread) it joins at the next boundary. Either way it is first polled in the
    /// next latent stage. Without a scheduler it is cancelled at birth.
    pub fn spawn<F, T>(
        &self,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> TaskHandle<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let Some(shared) = self.cmds.shared() else {
            return make_task(&TaskFactory::closed(), owner, f).1;
        };
        let (task, handle) = spawn_from(&shared.tasks, owner, f);
        if let Some(task) = task {
            shared.push(Command::Spawn(task));
        }
        handle
    }
}
