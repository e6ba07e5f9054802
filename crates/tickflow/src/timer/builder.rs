//! [`TimerBuilder`]: the options of a new timer.

use std::fmt;
use std::marker::PhantomData;

use super::spec::Spec;
use crate::owner::OwnerId;
use crate::time::CatchUp;
use crate::time::{Domain, Interval, Span, Time};
use crate::timer::call::TimerCx;
use crate::timer::callback::Callback;
use crate::timer::info::TimerHandle;
use crate::timer::manager::Timers;
use crate::timer::spec::Offline;

/// The doors to a new timer: each returns its builder.
impl<C: 'static> Timers<C> {
    /// Starts a one-shot timer that fires once, `delay` from now: on the game clock for a
    /// [`Span`] or `Duration` (unless [`real`](TimerBuilder::real) says otherwise), in the
    /// `n`-th tick from now for [`Frames(n)`](crate::time::Frames) (`Frames(0)`: the next).
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<u32>::new();
    /// let h = timers.after(secs(1.0)).call(|n, _| *n += 1);
    /// let mut n = 0;
    /// timers.tick(secs(0.5), &mut n);
    /// timers.tick(secs(0.5), &mut n); // inclusive: fires when the clock reaches 1.0
    /// assert_eq!(n, 1);
    /// assert!(!timers.exists(h));
    /// ```
    pub fn after<I: Interval>(&mut self, delay: I) -> TimerBuilder<'_, C, I::Unit> {
        let (clock, amount) = delay.clock_amount();
        TimerBuilder::new(self, Spec::one_shot(clock, amount))
    }

    /// Starts a one-shot timer due when the game clock reads `time` (or the real clock, with
    /// [`real`](TimerBuilder::real)): "at match time 60 s". A time already reached fires in
    /// the next tick. The delay is counted when the timer is stored, so
    /// [`remaining`](Timers::remaining) and [`fraction`](Timers::fraction) run from then, and
    /// the due time is exact even when it is set from inside a frame.
    ///
    /// ```
    /// # use tickflow::prelude::*;
    /// let mut timers = TimerManager::<Vec<&str>>::new();
    /// timers.tick(secs(10.0), &mut Vec::new());
    /// let overtime = timers.at(Time::ZERO + secs(60.0)).call(|log, _| log.push("overtime"));
    /// assert_eq!(timers.remaining(overtime), Some(secs(50.0)));
    /// let mut log = Vec::new();
    /// timers.tick(secs(49.0), &mut log);
    /// assert!(log.is_empty());
    /// timers.tick(secs(1.0), &mut log);
    /// assert_eq!(log, ["overtime"]);
    /// ```
    pub fn at(&mut self, time: Time) -> TimerBuilder<'_, C, Span> {
        // Its delay is counted when it is stored (`insert_absolute`), on its final clock.
        let spec = Spec {
            start: Some(time.flicks()),
            absolute: true,
            ..Spec::one_shot(Domain::Game, 0)
        };
        TimerBuilder::new(self, spec)
    }

    /// Starts a looping timer that fires every `period` (the first call one period from now
    /// unless [`first_delay`](TimerBuilder::first_delay) says otherwise). A zero period fires
    /// once every tick. In [`Frames`](crate::time::Frames), it counts frames:
    /// `every(Frames(1))` fires every tick.
    pub fn every<I: Interval>(&mut self, period: I) -> TimerBuilder<'_, C, I::Unit> {
        let (clock, amount) = period.clock_amount();
        TimerBuilder::new(self, Spec::looping(clock, amount))
    }
}

/// Options for a new timer, from [`Timers::after`] or [`every`](Timers::every). `U` is what
/// its delays are given in — [`Span`] for time, [`Frames`](crate::time::Frames) for frames —
/// so [`first_delay`](Self::first_delay) takes the timer's own unit and only a time timer
/// has [`real`](Self::real): nothing about frames versus time is checked at run time.
/// Nothing is stored until [`call`](TimerBuilder::call).
///
/// # Examples
///
/// ```
/// use tickflow::time::secs;
/// use tickflow::time::CatchUp;
/// use tickflow::timer::{TimerHandle, TimerManager};
/// use tickflow::OwnerId;
///
/// let mut timers = TimerManager::<u32>::new();
/// let mut cooldown = TimerHandle::default();
/// timers
///     .every(secs(0.5))
///     .first_delay(secs(0.0)) // first call in the next tick
///     .times(3)
///     .catch_up(CatchUp::Once)
///     .real()
///     .owner(OwnerId::from(7))
///     .name("regen")
///     .on_cancel(|hp| *hp = 0)
///     .replace(&mut cooldown)
///     .call(|hp, _| *hp += 10);
/// let mut hp = 0;
/// timers.tick(secs(0.1), &mut hp);
/// assert_eq!(hp, 10);
/// assert_eq!(timers.clear_owner(OwnerId::from(7)), 1);
/// timers.tick(secs(0.1), &mut hp); // on_cancel runs at the start of the next tick
/// assert_eq!(hp, 0);
/// ```
#[must_use = "a timer is stored only by .call(f)"]
pub struct TimerBuilder<'a, C, U = Span> {
    mgr: &'a mut Timers<C>,
    spec: Spec<C>,
    replace: Option<&'a mut TimerHandle>,
    /// What its delays are given in: [`Span`] or [`Frames`](crate::time::Frames).
    _unit: PhantomData<U>,
}

impl<'a, C: 'static> TimerBuilder<'a, C, Span> {
    /// Counts on the real clock (unscaled, running while paused) instead of the game clock.
    pub fn real(mut self) -> Self {
        self.spec.domain = Domain::Real;
        self
    }
}

impl<'a, C: 'static, U> TimerBuilder<'a, C, U> {
    pub(crate) fn new(mgr: &'a mut Timers<C>, spec: Spec<C>) -> Self {
        TimerBuilder {
            mgr,
            spec,
            replace: None,
            _unit: PhantomData,
        }
    }

    /// Time (or frames, for a frame timer) to the first call, instead of the period (looping)
    /// or delay (one-shot). Zero means the next tick. It takes the unit the timer counts in.
    pub fn first_delay(mut self, delay: impl Interval<Unit = U>) -> Self {
        self.spec.delay = delay.clock_amount().1;
        self
    }

    /// Makes exactly `n` calls, then finishes. On a one-shot, `n > 1` makes it repeat with its
    /// delay as the period, whatever the order of the builder calls: `after(d).times(3)` is
    /// due at `first_delay`, then every `d`.
    ///
    /// `times(0)` makes no calls: [`call`](Self::call) stores nothing and returns a handle that
    /// names no timer (as the real-time service's [`times`](crate::realtime::RealtimeBuilder::times)
    /// does; a repeat count read from data may well be zero).
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<Vec<f64>>::new();
    /// timers.after(secs(0.5)).times(3).first_delay(secs(0.1)).call(|log, cx| {
    ///     log.push(cx.scheduled().as_secs_f64());
    /// });
    /// let none = timers.after(secs(0.5)).times(0).call(|_, _| unreachable!());
    /// assert!(!timers.exists(none) && timers.len() == 1);
    /// let mut log = Vec::new();
    /// timers.tick(secs(2.0), &mut log);
    /// assert_eq!(log, [0.1, 0.6, 1.1]);
    /// ```
    pub fn times(mut self, n: u64) -> Self {
        self.spec.times = Some(n);
        if n > 1 {
            self.spec.looping = true;
        }
        self
    }

    /// What to do when a tick finds this looping timer several periods late.
    pub fn catch_up(mut self, policy: CatchUp) -> Self {
        self.spec.catch_up = policy;
        self
    }

    /// The owner, for [`clear_owner`](Timers::clear_owner) and
    /// [`pause_owner`](Timers::pause_owner).
    pub fn owner(mut self, owner: OwnerId) -> Self {
        self.spec.owner = Some(owner);
        self
    }

    /// A name, for [`clear_named`](Timers::clear_named), debugging, and rebinding the
    /// callback after a snapshot.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.spec.name = Some(name.into().into_boxed_str());
        self
    }

    /// A user key, reported in [`TimerInfo`](super::TimerInfo): what a restore's resolver
    /// binds the callback by when a name would say too little (an entity id, an ability
    /// number). Costs 8 bytes per slot in a dense table, made when the first tag is set.
    ///
    /// ```
    /// use tickflow::prelude::*;
    /// use tickflow::timer::TimerCallback;
    ///
    /// fn heal(id: u64) -> TimerCallback<Vec<u64>> {
    ///     Box::new(move |log: &mut Vec<u64>, _: &mut TimerCx<Vec<u64>>| log.push(id))
    /// }
    /// let mut timers = TimerManager::<Vec<u64>>::new();
    /// for id in [7, 9] {
    ///     timers.every(secs(1.0)).tag(id).call(heal(id));
    /// }
    /// let mut restored = TimerManager::restore(&timers.snapshot(), &mut tickflow::snapshot::Registry::new().other_timers(|info| info.tag.map(heal))).unwrap();
    /// let mut log = Vec::new();
    /// restored.tick(secs(1.0), &mut log);
    /// assert_eq!(log, [7, 9]);
    /// ```
    pub fn tag(mut self, tag: u64) -> Self {
        self.spec.tag = Some(tag);
        self
    }

    /// A hook that runs, with the context, at the start of the next tick after this timer is
    /// cleared before it finished. It never runs when the timer completes.
    pub fn on_cancel(mut self, f: impl FnOnce(&mut C) + Send + 'static) -> Self {
        self.spec.on_cancel = Some(Box::new(f));
        self
    }

    /// Makes the timer durable: a store (the `tickflow-store` crate) keeps it as a row keyed
    /// by its [owner](Self::owner) and [name](Self::name), so it survives the process, and a
    /// restart treats the time that passed as `offline` says
    /// ([`Offline::default_for`] its clock is the usual choice). One durable timer per key:
    /// setting another with the same owner and name clears this one. See
    /// [`Timers::durable_changes`].
    ///
    /// # Panics
    ///
    /// In [`call`](Self::call), when the name is longer than
    /// [`MAX_DURABLE_NAME`](crate::timer::info::MAX_DURABLE_NAME) bytes or the payload larger than
    /// [`MAX_DURABLE_PAYLOAD`](crate::timer::info::MAX_DURABLE_PAYLOAD): a store could not keep the row, and
    /// a timer the game believes durable would not be.
    pub fn durable(mut self, offline: Offline) -> Self {
        self.spec.durable = Some(offline);
        self
    }

    /// Bytes of yours that travel with the timer — in snapshots, owner moves and a durable
    /// timer's row — for its callback to read with
    /// [`TimerCx::payload`](super::TimerCx::payload) (which item the auction sells, say).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut timers = TimerManager::<Vec<u8>>::new();
    /// timers.after(secs(1.0)).payload([7, 9]).call(|got, cx| got.extend(cx.payload()));
    /// let mut got = Vec::new();
    /// timers.tick(secs(1.0), &mut got);
    /// assert_eq!(got, [7, 9]);
    /// ```
    pub fn payload(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.spec.payload = Some(bytes.into().into_boxed_slice());
        self
    }

    /// Clears the timer `handle` names (if any) and writes the new timer's handle into it
    /// when [`call`](Self::call) stores it.
    pub fn replace(mut self, handle: &'a mut TimerHandle) -> Self {
        self.replace = Some(handle);
        self
    }

    /// Stores the timer with its callback and returns its handle.
    ///
    /// The callback must be `Send` (so is the manager, and a scheduler can move between
    /// threads): what it captures must be `Send`. State that is not (an `Rc`) belongs in the
    /// context `C`, which every call receives.
    ///
    /// ```compile_fail
    /// use std::rc::Rc;
    /// use tickflow::prelude::*;
    ///
    /// let mut timers = TimerManager::<u32>::new();
    /// let shared = Rc::new(5);
    /// timers.every(secs(1.0)).call(move |n, _| *n += *shared); // Rc is not Send
    /// ```
    #[inline]
    #[track_caller]
    pub fn call(self, f: impl FnMut(&mut C, &mut TimerCx<'_, C>) + Send + 'static) -> TimerHandle {
        let TimerBuilder {
            mgr, spec, replace, ..
        } = self;
        if spec.durable.is_some() {
            let (name, payload) = (spec.name.as_deref(), spec.payload.as_deref());
            check_durable(name.unwrap_or_default(), payload.unwrap_or_default());
        }
        let cb = Callback::new(f);
        if let Some(old) = replace.as_deref() {
            mgr.clear(*old);
        }
        let handle = if spec.times == Some(0) {
            TimerHandle::default() // no calls to make: nothing to store
        } else {
            mgr.insert(spec, cb)
        };
        if let Some(slot) = replace {
            *slot = handle;
        }
        handle
    }
}

/// Checks a durable timer's name and payload against what a store keeps
/// ([`MAX_DURABLE_NAME`](crate::timer::info::MAX_DURABLE_NAME),
/// [`MAX_DURABLE_PAYLOAD`](crate::timer::info::MAX_DURABLE_PAYLOAD)), as [`TimerBuilder::call`] does for a
/// timer made [`durable`](TimerBuilder::durable): for a builder of yours that gathers a
/// durable timer's settings and sets it later, so that it refuses them where they are given.
///
/// # Panics
///
/// When either is too long.
///
/// ```should_panic
/// tickflow::timer::check_durable(&"x".repeat(tickflow::timer::MAX_DURABLE_NAME + 1), &[]);
/// ```
#[track_caller]
pub fn check_durable(name: &str, payload: &[u8]) {
    let (name, payload) = (name.len(), payload.len());
    assert!(
        name <= crate::timer::info::MAX_DURABLE_NAME,
        "a durable timer's name must be at most {} bytes, got {name}",
        crate::timer::info::MAX_DURABLE_NAME
    );
    assert!(
        payload <= crate::timer::info::MAX_DURABLE_PAYLOAD,
        "a durable timer's payload must be at most {} bytes, got {payload}",
        crate::timer::info::MAX_DURABLE_PAYLOAD
    );
}

impl<C, U> fmt::Debug for TimerBuilder<'_, C, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerBuilder")
            .field("domain", &self.spec.domain)
            .field("delay", &self.spec.delay)
            .field("period", &self.spec.period)
            .field("looping", &self.spec.looping)
            .field("catch_up", &self.spec.catch_up)
            .field("times", &self.spec.times)
            .finish_non_exhaustive()
    }
}
