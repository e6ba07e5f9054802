//! [`Tasks`]: the scheduler's owning handle on its executor, as a user reaches it.

use std::fmt;
use std::future::Future;
use std::panic;

use super::exec::Exec;
use super::lend;
use super::spawn;
use super::{TaskCx, TaskHandle};
use crate::owner::OwnerId;

/// A scheduler's async tasks: [`Scheduler::tasks`](crate::Scheduler::tasks). Dropping the
/// scheduler cancels every task (their destructors run, with the executor reachable).
pub struct Tasks<C: 'static> {
    exec: lend::Pinned<Exec<C>>,
}

impl<C: 'static> Tasks<C> {
    pub(crate) fn new() -> Self {
        Tasks {
            exec: lend::Pinned::new(Exec::new()),
        }
    }

    pub(crate) fn exec(&self) -> &Exec<C> {
        self.exec.get()
    }

    /// Spawns an async task: `f` gets the task's [`TaskCx`] and returns the future to run. It
    /// is first polled in the next latent stage (this frame's, when spawned before it). The
    /// returned [`TaskHandle`] cancels the task or awaits its output. See
    /// [`latent`](crate::latent) for the rules.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tickflow::prelude::*;
    ///
    /// struct Guard(&'static str, Arc<Mutex<Vec<&'static str>>>);
    /// impl Drop for Guard {
    ///     fn drop(&mut self) { self.1.lock().unwrap().push(self.0); }
    /// }
    ///
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let mut sched = Scheduler::<u32>::new();
    /// let l = log.clone();
    /// let waiter = sched.tasks().spawn(None, |cx| async move {
    ///     let _guard = Guard("cleaned up", l);
    ///     cx.delay(secs(10.0)).await;
    /// });
    /// let l = log.clone();
    /// sched.tasks().spawn(Some(OwnerId::from(1)), |cx| async move {
    ///     cx.delay(Frames(2)).await;
    ///     cx.with(|n| *n += 1);
    ///     waiter.cancel(); // runs the other task's destructors
    ///     l.lock().unwrap().push("cancelled it");
    /// });
    /// let mut n = 0;
    /// for _ in 0..3 {
    ///     sched.tick(secs(0.1), &mut n);
    /// }
    /// assert_eq!(n, 1);
    /// assert_eq!(*log.lock().unwrap(), ["cleaned up", "cancelled it"]);
    /// assert_eq!((sched.tasks().len(), sched.timers().len()), (0, 0));
    /// ```
    ///
    /// The future and what it captures must be `Send`, so that the scheduler can move between
    /// threads: keep state that is not `Send` (an `Rc`) in the context, which the task reaches
    /// with [`TaskCx::with`], not in the task.
    ///
    /// ```compile_fail
    /// use std::rc::Rc;
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<u32>::new();
    /// let shared = Rc::new(1);
    /// sched.tasks().spawn(None, |cx| async move {
    ///     cx.next_frame().await;
    ///     let _still_here = shared; // an Rc held across an await: not Send
    /// });
    /// ```
    pub fn spawn<F, T>(
        &mut self,
        owner: Option<OwnerId>,
        f: impl FnOnce(TaskCx<C>) -> F,
    ) -> TaskHandle<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let exec = self.exec();
        exec.activate(|| spawn::spawn_in(exec, owner, f))
    }

    /// Tasks that have not ended.
    pub fn len(&self) -> usize {
        self.exec().len()
    }

    /// `true` when every task has ended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<C: 'static> fmt::Debug for Tasks<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tasks").field("len", &self.len()).finish()
    }
}

impl<C: 'static> Drop for Tasks<C> {
    fn drop(&mut self) {
        if let Err(p) = self.exec().cancel_all() {
            // Every task is gone; a destructor's panic goes on unless one is already unwinding
            // (a second panic would abort the process).
            if !std::thread::panicking() {
                panic::resume_unwind(p);
            }
        }
    }
}
