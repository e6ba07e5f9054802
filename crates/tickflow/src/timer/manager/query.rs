//! [`Timers`] queries: state, times, counts, clocks and debug records. None of them
//! changes anything; every one answers `None`/`false` for an unknown or stale handle.

use super::extras::Extras;
use crate::time::{Clocks, Domain, Span};
use crate::timer::info::{TimerHandle, TimerInfo, TimerState};
use crate::timer::manager::Timers;
use crate::timer::slot::{SlotState, TimerEntry, NEVER};
use crate::timer::wheel::Wheel;

impl<C: 'static> Timers<C> {
    /// Whether the handle names a live timer (pending, active, paused or running).
    pub fn exists(&self, h: TimerHandle) -> bool {
        self.find(h).is_some()
    }

    /// Whether the timer exists and is not paused (a pending timer is active).
    pub fn is_active(&self, h: TimerHandle) -> bool {
        self.state(h)
            .is_some_and(|s| !matches!(s, TimerState::Paused))
    }

    /// Whether the timer exists and is paused (or will pause when its running call returns).
    pub fn is_paused(&self, h: TimerHandle) -> bool {
        self.state(h) == Some(TimerState::Paused)
    }

    /// Whether the timer was set in the open frame and waits for the timer tick to start.
    pub fn is_pending(&self, h: TimerHandle) -> bool {
        self.state(h) == Some(TimerState::Pending)
    }

    /// The timer's state, or `None` for an unknown handle.
    pub fn state(&self, h: TimerHandle) -> Option<TimerState> {
        let idx = self.find(h)?;
        Some(match self.slots.at(idx).state() {
            SlotState::Pending => TimerState::Pending,
            SlotState::Active | SlotState::Ready => TimerState::Active,
            SlotState::Executing => TimerState::Executing,
            SlotState::Paused | SlotState::ExecutingPaused => TimerState::Paused,
            SlotState::Free => unreachable!("find() skips free slots"),
        })
    }

    /// The clock the timer counts on: a `Span` it reads in counts frames on
    /// [`Domain::Frames`](crate::time::Domain::Frames).
    ///
    /// ```
    /// use tickflow::prelude::*;
    ///
    /// let mut timers = TimerManager::<()>::new();
    /// let h = timers.after(Frames(20)).call(|_, _| {});
    /// assert_eq!(timers.domain(h), Some(Domain::Frames));
    /// assert_eq!(timers.remaining(h), Some(Span::from_flicks(20))); // 20 frames
    /// ```
    pub fn domain(&self, h: TimerHandle) -> Option<Domain> {
        let idx = self.find(h)?;
        Some(self.slots.at(idx).flags().domain())
    }

    /// The timer's period (looping) or delay (one-shot); frames for a frame timer.
    pub fn rate(&self, h: TimerHandle) -> Option<Span> {
        let idx = self.find(h)?;
        Some(Span::from_flicks(self.slots.at(idx).period()))
    }

    /// Time left until the next call: never negative, zero while due or running, `Span::MAX`
    /// for a timer that never fires.
    pub fn remaining(&self, h: TimerHandle) -> Option<Span> {
        let idx = self.find(h)?;
        Some(Span::from_flicks(self.remaining_at(idx)))
    }

    pub(crate) fn remaining_at(&self, idx: u32) -> u64 {
        let e = self.slots.at(idx);
        match e.state() {
            SlotState::Pending | SlotState::Paused => e.due(),
            SlotState::Active if e.due() == NEVER => NEVER,
            _ => e.due().saturating_sub(self.span.now_of(e.flags().domain())),
        }
    }

    /// Time since the current period began (the first delay, for a timer that has not been
    /// called): never negative, never more than the period.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<()>::new();
    /// let h = timers.every(secs(1.0)).first_delay(secs(5.0)).call(|_, _| {});
    /// timers.tick(secs(1.0), &mut ());
    /// assert_eq!(timers.elapsed(h), Some(secs(1.0))); // Unreal says -4.0 here
    /// assert_eq!(timers.remaining(h), Some(secs(4.0)));
    ///
    /// // A one-shot whose first delay replaces its delay: nothing has elapsed when it is set.
    /// let once = timers.after(secs(5.0)).first_delay(secs(1.0)).call(|_, _| {});
    /// assert_eq!(timers.elapsed(once), Some(secs(0.0)));
    /// assert_eq!(timers.rate(once), Some(secs(5.0)));
    /// ```
    pub fn elapsed(&self, h: TimerHandle) -> Option<Span> {
        let idx = self.find(h)?;
        Some(Span::from_flicks(self.elapsed_at(idx)))
    }

    /// The length of the countdown in progress: the first delay until the first call, then the
    /// period (a one-shot's delay).
    pub(crate) fn countdown_len(&self, idx: u32) -> u64 {
        match self.extras_of(idx).and_then(|x| x.first_delay()) {
            Some(first) if self.calls_at(idx) == 0 => first,
            _ => self.slots.at(idx).period(),
        }
    }

    pub(crate) fn elapsed_at(&self, idx: u32) -> u64 {
        match self.remaining_at(idx) {
            NEVER => 0,
            remaining => self.countdown_len(idx).saturating_sub(remaining),
        }
    }

    /// How far the countdown in progress has come, from 0 (just started) to 1 (due): Bevy's
    /// `Timer::fraction`, for progress bars and cooldown icons. A zero-length countdown is 1;
    /// one that never ends is 0.
    ///
    /// ```
    /// # use tickflow::{time::secs, timer::TimerManager};
    /// let mut timers = TimerManager::<()>::new();
    /// let cooldown = timers.every(secs(2.0)).call(|_, _| {});
    /// timers.tick(secs(0.5), &mut ());
    /// assert_eq!(timers.fraction(cooldown), Some(0.25));
    /// ```
    pub fn fraction(&self, h: TimerHandle) -> Option<f64> {
        let idx = self.find(h)?;
        let len = self.countdown_len(idx);
        Some(match (len, self.remaining_at(idx)) {
            (_, NEVER) => 0.0,
            (0, _) => 1.0,
            (len, _) => self.elapsed_at(idx) as f64 / len as f64,
        })
    }

    /// Calls made so far.
    pub fn calls_made(&self, h: TimerHandle) -> Option<u64> {
        self.find(h).map(|idx| self.calls_at(idx))
    }

    /// The bytes given with [`payload`](crate::timer::TimerBuilder::payload) (empty when
    /// none).
    pub fn payload(&self, h: TimerHandle) -> Option<&[u8]> {
        self.find(h).map(|idx| self.payload_at(idx))
    }

    pub(crate) fn calls_at(&self, idx: u32) -> u64 {
        let hi = self.extras_of(idx).map_or(0, |x| x.calls_hi);
        u64::from(hi) << 32 | u64::from(self.slots.at(idx).calls())
    }

    /// Live timers.
    pub fn len(&self) -> usize {
        self.slots.live()
    }

    /// No live timers.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `true` once a clock has reached the end of representable time (about 829 years after
    /// it started; only a huge delta or time dilation gets there). The clock stops there, and
    /// timers on it that are not due yet never fire.
    ///
    /// ```
    /// # use tickflow::{time::Span, timer::TimerManager};
    /// let mut timers = TimerManager::<()>::new();
    /// timers.tick(Span::MAX, &mut ());
    /// assert!(timers.at_end_of_time());
    /// ```
    pub fn at_end_of_time(&self) -> bool {
        self.span.now().contains(&(NEVER - 1)) || self.span.frame() == NEVER - 1
    }

    /// Every clock, and how far each moved in the last tick.
    ///
    /// ```
    /// # use tickflow::prelude::*;
    /// let mut timers = TimerManager::<()>::new();
    /// timers.tick_step(secs(0.5), secs(1.0), &mut ());
    /// let c = timers.clocks();
    /// assert_eq!((c.now(Domain::Game), c.delta(Domain::Real)), (Time::ZERO + secs(0.5), secs(1.0)));
    /// assert_eq!(c.frame(), 1);
    /// ```
    pub fn clocks(&self) -> Clocks {
        let (now, prev) = self.span.ends();
        Clocks::new(now, [0, 1, 2].map(|d| now[d] - prev[d]), self.span.frame())
    }

    /// One plain record per live timer, in set order.
    pub fn list(&self) -> Vec<TimerInfo> {
        self.live_in_set_order()
            .into_iter()
            .map(|idx| self.info(idx))
            .collect()
    }

    /// The record of one timer, or `None` for an unknown handle.
    pub fn info_of(&self, h: TimerHandle) -> Option<TimerInfo> {
        self.find(h).map(|idx| self.info(idx))
    }

    pub(crate) fn info(&self, idx: u32) -> TimerInfo {
        let e: &TimerEntry<C> = self.slots.at(idx);
        let handle = self.handle_of(idx);
        let x = self.extras_of(idx);
        TimerInfo {
            handle,
            name: x.and_then(|x| x.name.as_deref().map(str::to_owned)),
            tag: self.tag_of(idx),
            owner: x.and_then(|x| x.owner),
            state: self.state(handle).expect("live"),
            domain: e.flags().domain(),
            looping: e.flags().looping(),
            catch_up: e.flags().catch_up(),
            remaining: Span::from_flicks(self.remaining_at(idx)),
            rate: Span::from_flicks(e.period()),
            calls_made: self.calls_at(idx),
            calls_left: x.and_then(|x| x.times_left()),
        }
    }

    /// Bytes this manager holds on the heap for its own tables (callback closures excluded).
    /// A hook for the memory figures of the benchmarks (`examples/prof.rs`), hidden from the
    /// documented API: its value follows the internal layout and may change with it.
    #[doc(hidden)]
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.slots.heap_bytes()
            + self.slots.free_bytes()
            + self.extras.capacity() * (size_of::<(u32, Extras<C>)>() + 1)
            + self.owners.heap_bytes()
            + self.ready.capacity_bytes()
            + self.pending.capacity() * size_of::<u32>()
            + self.tags.capacity() * size_of::<u64>()
            + self.wheels.iter().map(Wheel::heap_bytes).sum::<usize>()
    }
}
