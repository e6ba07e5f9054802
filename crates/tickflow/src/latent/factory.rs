//! Making tasks: what a spawn needs, shared with [`Commands`](crate::scheduler::Commands) so
//! that a task spawned from any thread gets its handle at once.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use super::exec::Exec;
use super::lend;
use super::slots::{BoxFuture, Core, Remote, TaskCell};
use super::task::{TaskCx, TaskHandle, TaskRef};
use crate::handle::HandleAlloc;
use crate::owner::OwnerId;

/// What a spawn needs and what can be shared with [`Commands`](crate::scheduler::Commands):
/// the executor's id, its task-handle allocator and its queue of wakes and cancels.
#[derive(Clone)]
pub(crate) struct TaskFactory {
    pub(crate) id: u64,
    pub(super) alloc: Arc<Mutex<HandleAlloc>>,
    pub(super) remote: Arc<Remote>,
}

/// A task made but not yet in the executor's slots.
pub(crate) struct NewTask {
    pub(super) index: u32,
    pub(super) core: Arc<Core>,
    pub(super) fut: BoxFuture,
    pub(super) owner: Option<OwnerId>,
}

impl TaskFactory {
    /// A factory of no executor, closed: a task made by it is cancelled at birth (what a
    /// spawn through commands that reach no scheduler gets).
    pub(crate) fn closed() -> Self {
        let factory = TaskFactory {
            id: lend::fresh_id(),
            alloc: Arc::default(),
            remote: Arc::default(),
        };
        factory.remote.close();
        factory
    }

    /// Makes a task: its handle is valid at once; the executor takes it with `insert`.
    ///
    /// Once the scheduler is being dropped the task could never run: `f` is dropped uncalled
    /// and the task is cancelled at birth (its handle says so). Without that, destructors that
    /// spawn tasks whose destructors spawn again would never let the drop end.
    pub(crate) fn make<C, F, T>(
        &self,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> (NewTask, TaskHandle<T>)
    where
        C: 'static,
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let (index, tag) = self.lock_alloc().alloc();
        let core = Arc::new(Core::new(index, tag, Arc::clone(&self.remote)));
        let fut: BoxFuture = if self.is_closed() {
            drop(f);
            core.cancel_remotely();
            TaskCell::boxed(std::future::pending::<T>())
        } else {
            TaskCell::boxed(f(TaskCx::new(self.id)))
        };
        let handle = TaskHandle::new(TaskRef::new(Arc::clone(&core), self.id));
        let task = NewTask {
            index,
            core,
            fut,
            owner,
        };
        (task, handle)
    }

    /// Spawns a task: into the executor at once when it runs on this thread (a callback, a
    /// task), else the task is returned for the caller to queue.
    pub(crate) fn spawn<C, F, T>(
        &self,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> (Option<NewTask>, TaskHandle<T>)
    where
        C: 'static,
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let (task, handle) = self.make(owner, f);
        let mut task = Some(task);
        lend::with_active(self.id, |exec: &Exec<C>| {
            exec.insert(task.take().expect("once"))
        });
        (task, handle)
    }

    /// The scheduler is being dropped (see [`make`](Self::make)).
    pub(crate) fn is_closed(&self) -> bool {
        self.remote.is_closed()
    }

    pub(super) fn lock_alloc(&self) -> std::sync::MutexGuard<'_, HandleAlloc> {
        self.alloc.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wake-ups that came through wakers (any thread) since the last call.
    pub(super) fn remote_wakes(&self) -> Vec<(u32, u32)> {
        self.remote.take_wakes()
    }
}
