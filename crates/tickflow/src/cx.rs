//! [`Cx`], the one context every callback receives, whatever its kind.

use std::fmt;

use crate::commands::Commands;
use crate::time::Clocks;
use crate::timer::Timers;

// Where `Cx`'s verbs live: the three every kind shares here; what is particular to a kind
// beside that kind, in `timer/cx.rs`, `tick/cx.rs` and `tickable/cx.rs`, so that each part's
// context says what its callbacks can do without this file naming the parts.
/// The context every callback receives beside the user's `&mut C`: one type for every kind of
/// callback, as `bevy_time` has one `Time<T>` for every clock. `K` is the kind —
/// [`TimerCx`](crate::timer::TimerCx), [`TickCx`](crate::tick::TickCx),
/// [`TickableCx`](crate::tickable::TickableCx), [`LatentCx`](crate::latent::LatentCx) — and brings
/// what is particular to it (a timer's `scheduled()`, a tick function's `dt()`). Every kind reaches
/// the same three services by the same names:
///
/// - [`clocks`](Self::clocks): every clock as this frame sees it;
/// - [`timers`](Self::timers): set, clear, pause and query timers at once;
/// - [`commands`](Self::commands): every other change (tick functions, tickables, latent
///   actions, tasks, owners), applied as soon as the callback returns.
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::Cx;
///
/// // One helper serves every kind of callback.
/// fn arm<K>(log: &mut Vec<String>, cx: &mut Cx<'_, Vec<String>, K>) {
///     let frame = cx.clocks().frame();
///     log.push(format!("armed in frame {frame}"));
///     cx.timers().after(Frames(1)).call(|log, cx| {
///         log.push(format!("fired in frame {}", cx.clocks().frame()))
///     });
/// }
/// let mut sched = Scheduler::<Vec<String>>::new();
/// sched.ticks().add(TickSettings::named("arm"), |log, cx| {
///     if cx.clocks().frame() == 1 {
///         arm(log, cx);
///     }
/// });
/// sched.latent().delay(OwnerId::new(1), 0, secs(0.25), arm);
/// let mut log = vec![];
/// for _ in 0..4 {
///     sched.tick(secs(0.1), &mut log);
/// }
/// assert_eq!(log, ["armed in frame 1", "fired in frame 2", "armed in frame 3", "fired in frame 4"]);
/// ```
pub struct Cx<'a, C, K> {
    /// The frame's one value (a timer call's: its manager's, read when the call starts).
    clocks: &'a Clocks,
    timers: &'a mut Timers<C>,
    kind: K,
}

impl<'a, C: 'static, K> Cx<'a, C, K> {
    pub(crate) fn new(clocks: &'a Clocks, timers: &'a mut Timers<C>, kind: K) -> Self {
        Cx {
            clocks,
            timers,
            kind,
        }
    }

    /// What is particular to this kind of callback.
    pub(crate) fn kind(&self) -> &K {
        &self.kind
    }

    pub(crate) fn kind_mut(&mut self) -> &mut K {
        &mut self.kind
    }

    /// The timers through a shared borrow, for a kind's own queries.
    pub(crate) fn timers_ref(&self) -> &Timers<C> {
        self.timers
    }

    /// Every clock as this frame sees it (the time the frame reaches), and how far each moved
    /// in it (see [`Clocks`]): one value per frame, the same for every stage.
    pub fn clocks(&self) -> Clocks {
        *self.clocks
    }

    /// The timers: set, clear, pause or query any timer now. In a scheduler, a timer set
    /// before the frame's timer stage counts from the time that stage reaches; one set from a
    /// timer callback counts from that call's scheduled time and never fires in the same tick.
    pub fn timers(&mut self) -> &mut Timers<C> {
        self.timers
    }

    /// The scheduler's [`Commands`]: tick functions, tickables, latent actions, tasks and
    /// owners, changed as soon as this callback returns (for timer callbacks, when the timer
    /// stage ends). A standalone [`TimerManager`](crate::timer::TimerManager) or
    /// [`LatentActionManager`](crate::latent::LatentActionManager) has no scheduler: its
    /// commands do nothing.
    pub fn commands(&self) -> &Commands<C> {
        self.timers.commands()
    }
}

impl<C, K: fmt::Debug> fmt::Debug for Cx<'_, C, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cx")
            .field("frame", &self.clocks.frame())
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}
