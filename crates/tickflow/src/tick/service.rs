//! [`TickFunctions`] as a user reaches it: [`Scheduler::ticks`](crate::Scheduler::ticks).

use std::fmt;

use crate::tick::cx::{Deferred, TickCx};
use crate::tick::handle::TickHandle;
use crate::tick::run::TickFunctions;
use crate::tick::settings::{TickError, TickSettings};
use crate::timer::Callback;

impl<C: 'static> TickFunctions<C> {
    /// Registers a tick function.
    ///
    /// # Panics
    ///
    /// When the settings are invalid (`end_group` before `group`, a negative or non-finite
    /// `time_dilation`); [`try_add`](Self::try_add) returns the error instead.
    #[track_caller]
    pub fn add(
        &mut self,
        s: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> TickHandle {
        self.try_add(s, f).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Registers a tick function, or says why the settings are refused.
    pub fn try_add(
        &mut self,
        s: TickSettings,
        f: impl FnMut(&mut C, &mut TickCx<'_, C>) + Send + 'static,
    ) -> Result<TickHandle, TickError> {
        self.add_boxed(s, Callback::new(f))
    }

    /// Registers a parallel tick function: it owns `state`, sees the context as `&C`, and
    /// queues changes in a [`Deferred`] buffer applied at its group's end. Parallel functions
    /// of one group with no prerequisite between them run at the same time on rayon's pool
    /// (with the `rayon` feature, on by default; without it, one after the other).
    ///
    /// The state must be `Send`:
    ///
    /// ```compile_fail
    /// use std::rc::Rc;
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<u32>::new();
    /// // Rc is not Send: it cannot go to a worker thread.
    /// sched.ticks().add_parallel(TickSettings::default(), Rc::new(1), |_s, _ctx, _out| {});
    /// ```
    ///
    /// # Panics
    ///
    /// As [`add`](Self::add).
    #[track_caller]
    pub fn add_parallel<S: Send + 'static>(
        &mut self,
        s: TickSettings,
        mut state: S,
        f: impl Fn(&mut S, &C, &mut Deferred<C>) + Send + Sync + 'static,
    ) -> TickHandle
    where
        C: Sync,
    {
        let body = Box::new(move |ctx: &C, out: &mut Deferred<C>| f(&mut state, ctx, out));
        self.add_parallel_boxed(s, body)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Enables or disables a tick function; `false` for a stale handle. Disabling resets its
    /// interval: enabled again, it ticks on the next frame.
    pub fn set_enabled(&mut self, h: TickHandle, on: bool) -> bool {
        self.graph_mut().set_enabled(h, on)
    }

    /// `true` while `h` is registered and enabled.
    pub fn is_enabled(&self, h: TickHandle) -> bool {
        self.graph().get(h).is_some_and(|n| n.settings.enabled)
    }

    /// `true` while `h` is registered.
    pub fn contains(&self, h: TickHandle) -> bool {
        self.graph().get(h).is_some()
    }

    /// Changes a tick function's interval (zero: every frame) and restarts its cooldown from
    /// now; a function that has not ticked since it was enabled still ticks on the next frame.
    /// `false` for a stale handle.
    pub fn set_interval(&mut self, h: TickHandle, interval: crate::time::Span) -> bool {
        self.graph_mut().set_interval(h, interval)
    }

    /// Makes `tick` run after `before` in every frame where both run; `tick` is demoted to
    /// `before`'s group if that is later. Added while a frame runs, it shapes the order from
    /// the next frame.
    ///
    /// # Errors
    ///
    /// [`TickError::Cycle`] naming every function on the cycle, or [`TickError::UnknownTick`];
    /// nothing changes then.
    ///
    /// ```
    /// use tickflow::prelude::*;
    /// use tickflow::tick::TickError;
    ///
    /// let mut sched = Scheduler::<()>::new();
    /// let a = sched.ticks().add(TickSettings::named("a"), |_, _| {});
    /// let b = sched.ticks().add(TickSettings::named("b"), |_, _| {});
    /// sched.ticks().add_prerequisite(a, b).unwrap();
    /// let err = sched.ticks().add_prerequisite(b, a).unwrap_err();
    /// assert_eq!(err, TickError::Cycle { path: vec!["b".into(), "a".into()] });
    /// assert_eq!(err.to_string(), "prerequisite would form a cycle: `b` waits for `a` waits for `b`");
    /// ```
    pub fn add_prerequisite(
        &mut self,
        tick: TickHandle,
        before: TickHandle,
    ) -> Result<(), TickError> {
        self.graph_mut().add_prereq(tick, before)
    }

    /// Removes a prerequisite; `false` when there was none.
    pub fn remove_prerequisite(&mut self, tick: TickHandle, before: TickHandle) -> bool {
        self.graph_mut().remove_prereq(tick, before)
    }

    /// Registered tick functions.
    pub fn len(&self) -> usize {
        self.graph().len()
    }

    /// `true` when no tick function is registered.
    pub fn is_empty(&self) -> bool {
        self.graph().len() == 0
    }

    /// `false` runs parallel tick functions one by one on the calling thread (same results;
    /// for debugging and for comparing). Default `true`.
    pub fn set_parallel(&mut self, on: bool) {
        self.set_threads(on);
    }

    /// The tick graph in Graphviz DOT: a cluster per actual group, an edge from each
    /// prerequisite to the function waiting for it, disabled functions dashed.
    /// For a handful of functions; a game with thousands wants
    /// [`kinds_dot`](Self::kinds_dot).
    pub fn graph_dot(&self) -> String {
        self.with_plan(|plan, graph| plan.dot(graph))
    }

    /// The tick graph summarised by kind, in Graphviz DOT: one box per kind of enabled
    /// function in each group it runs in, with how many functions it has (and how many are on
    /// intervals), clusters in the order the groups run joined by `then` edges, and one edge
    /// per pair of kinds linked by prerequisites, labelled with the number of links. A
    /// function's kind is its name without a trailing number (`move 17` and `move 18` are
    /// kind `move`), so name per-entity functions `"<kind> <id>"`.
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut sched = Scheduler::<()>::new();
    /// let ticks = sched.ticks();
    /// let physics = ticks.add(TickSettings::named("physics").in_group(TickGroup::DuringPhysics), |_, _| {});
    /// for id in 0..500 {
    ///     let t = ticks.add(TickSettings::named(format!("ragdoll {id}")), |_, _| {});
    ///     ticks.add_prerequisite(t, physics).unwrap(); // demotes it to DuringPhysics
    /// }
    /// let dot = ticks.kinds_dot();
    /// assert!(dot.contains("label=\"ragdoll ×500\""));
    /// assert!(dot.contains("[label=\"×500\"]")); // physics -> ragdoll, 500 links
    /// assert_eq!(dot.matches(" -> ").count(), 1); // one group in use: no `then` edge
    /// ```
    pub fn kinds_dot(&self) -> String {
        self.with_plan(|plan, graph| plan.kinds_dot(graph))
    }
}

impl<C> fmt::Debug for TickFunctions<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TickFunctions")
            .field("len", &self.graph().len())
            .field("parallel", &self.threads())
            .finish_non_exhaustive()
    }
}
