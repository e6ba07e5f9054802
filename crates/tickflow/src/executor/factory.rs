//! What a spawn needs, shared with [`Commands`](crate::scheduler::Commands) so that a task
//! spawned from any thread gets its handle at once ([`TaskFactory`]), and a task made but not
//! yet in the executor ([`NewTask`]). Making one is `spawn.rs`.

use std::sync::{Arc, Mutex, PoisonError};

use super::lend;
use super::slots::{BoxFuture, Core, Remote};
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

    /// The scheduler is being dropped (a task made now is cancelled at birth).
    pub(crate) fn is_closed(&self) -> bool {
        self.remote.is_closed()
    }

    /// The queue of wakes and cancels a new task's shared part reports to.
    pub(super) fn remote(&self) -> &Arc<Remote> {
        &self.remote
    }

    pub(super) fn lock_alloc(&self) -> std::sync::MutexGuard<'_, HandleAlloc> {
        self.alloc.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wake-ups that came through wakers (any thread) since the last call.
    pub(super) fn remote_wakes(&self) -> Vec<(u32, u32)> {
        self.remote.take_wakes()
    }
}
