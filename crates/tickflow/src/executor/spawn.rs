//! Spawning a task: making it with its handle (valid at once, from any thread) and handing it
//! to its executor, at once when that runs on this thread.

use std::future::Future;
use std::sync::Arc;

use super::exec::Exec;
use super::factory::{NewTask, TaskFactory};
use super::lend;
use super::slots::{BoxFuture, Core, TaskCell};
use super::task::{TaskCx, TaskHandle, TaskRef};
use crate::owner::OwnerId;

/// Makes a task: its handle is valid at once; the executor takes it with `insert`.
///
/// Once the scheduler is being dropped the task could never run: `f` is dropped uncalled
/// and the task is cancelled at birth (its handle says so). Without that, destructors that
/// spawn tasks whose destructors spawn again would never let the drop end.
pub(crate) fn make<C, F, T>(
    factory: &TaskFactory,
    owner: Option<OwnerId>,
    f: impl FnOnce(TaskCx<C>) -> F,
) -> (NewTask, TaskHandle<T>)
where
    C: 'static,
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let (index, tag) = factory.lock_alloc().alloc();
    let core = Arc::new(Core::new(index, tag, Arc::clone(factory.remote())));
    let fut: BoxFuture = if factory.is_closed() {
        drop(f);
        core.cancel_remotely();
        TaskCell::boxed(std::future::pending::<T>())
    } else {
        TaskCell::boxed(f(TaskCx::new(factory.id)))
    };
    let handle = TaskHandle::new(TaskRef::new(Arc::clone(&core), factory.id));
    let task = NewTask {
        index,
        core,
        fut,
        owner,
    };
    (task, handle)
}

/// Spawns a task through `factory`: into the executor at once when it runs on this thread (a
/// callback, a task), else the task is returned for the caller to queue.
pub(crate) fn spawn_from<C, F, T>(
    factory: &TaskFactory,
    owner: Option<OwnerId>,
    f: impl FnOnce(TaskCx<C>) -> F,
) -> (Option<NewTask>, TaskHandle<T>)
where
    C: 'static,
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let (task, handle) = make(factory, owner, f);
    let mut task = Some(task);
    lend::with_active(factory.id, |exec: &Exec<C>| {
        exec.insert(task.take().expect("once"))
    });
    (task, handle)
}

/// Spawns a task into `exec`: first polled in the next latent stage.
pub(crate) fn spawn_in<C, F, T>(
    exec: &Exec<C>,
    owner: Option<OwnerId>,
    f: impl FnOnce(TaskCx<C>) -> F,
) -> TaskHandle<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let (task, handle) = make(&exec.factory, owner, f);
    exec.insert(task);
    handle
}
