//! What a frame asks of the graph, as narrow verbs: whether the plan must be rebuilt, what was
//! added since, the plan published into the cooldown records, the frame's open and closed
//! states, the queued callbacks and spawned functions, a function's run recorded, and the
//! interval calendar drained or fed. The runner (`run/`) holds no field of the graph, so the
//! rules in `mod.rs` (`dirty` is set by every change; `added` and `removed` are what the plan
//! has not seen) are kept here and in the graph's own changes alone.

use std::mem;

use super::{BodyEvent, Hot, TickGraph};
use crate::tick::handle::TickHandle;
use crate::tick::interval::{next_due, Cooldown, IntervalClock, QueuedCooldown};
use crate::time::{Clocks, Span};

impl<C> TickGraph<C> {
    /// Whether the plan (of `planned` functions) must be rebuilt rather than patched: the
    /// graph changed in a way a patch cannot follow, or stale entries and positions have
    /// piled up enough to be compacted away.
    pub(crate) fn needs_rebuild(&self, planned: usize) -> bool {
        self.dirty || self.removed > planned / 4 + 1024 || self.hot.len() > 2 * self.live + 1024
    }

    /// Whether a plan made before now is out of date (for callers that resolve one of their
    /// own rather than rebuild the cached one).
    pub(crate) fn plan_is_stale(&self) -> bool {
        self.dirty || !self.added.is_empty() || self.removed > 0
    }

    /// The serial functions registered since the plan was made, for it to patch in; the list
    /// is the caller's now (hand the buffer back with [`keep_added`](Self::keep_added)).
    pub(crate) fn take_added(&mut self) -> Vec<TickHandle> {
        mem::take(&mut self.added)
    }

    /// Gives back the buffer `take_added` lent, emptied, for its capacity.
    pub(crate) fn keep_added(&mut self, mut list: Vec<TickHandle>) {
        if self.added.is_empty() {
            list.clear();
            self.added = list;
        }
    }

    /// Lets a new plan write each function's place into the cooldown records (`publish`
    /// gets them by argument), and marks the plan current.
    pub(crate) fn publish(&mut self, publish: impl FnOnce(&mut [Cooldown])) {
        publish(&mut self.cool);
        self.dirty = false;
        self.removed = 0;
    }

    /// Lets a patched plan write one function's place into the cooldown records.
    pub(crate) fn publish_one(&mut self, publish: impl FnOnce(&mut [Cooldown])) {
        publish(&mut self.cool);
    }

    /// The frame begins: functions that become runnable from now on are listed as spawned.
    pub(crate) fn open_frame(&mut self) {
        self.in_frame = true;
    }

    /// The frame ended: nothing spawned is left to place.
    pub(crate) fn close_frame(&mut self) {
        self.in_frame = false;
        self.spawned.clear();
    }

    /// Whether a frame is running.
    pub(crate) fn in_frame(&self) -> bool {
        self.in_frame
    }

    /// Functions that became runnable during the frame, for the runner to place.
    pub(crate) fn take_spawned(&mut self) -> Vec<TickHandle> {
        mem::take(&mut self.spawned)
    }

    /// Whether any function became runnable during the frame since the runner last looked.
    pub(crate) fn has_spawned(&self) -> bool {
        !self.spawned.is_empty()
    }

    /// The callbacks that arrived or left, in order, for the runner to take in or drop.
    pub(crate) fn take_events(&mut self) -> Vec<BodyEvent<C>> {
        mem::take(&mut self.events)
    }

    /// Whether a callback waits for the runner.
    pub(crate) fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Every check record, by position: the fast walk over a list reads them in place.
    pub(crate) fn hots_mut(&mut self) -> &mut [Hot] {
        &mut self.hot
    }

    /// The check record at position `p`.
    pub(crate) fn hot_at(&self, p: u32) -> Option<&Hot> {
        self.hot.get(p as usize)
    }

    /// The check record at position `p`, to change.
    pub(crate) fn hot_at_mut(&mut self, p: u32) -> Option<&mut Hot> {
        self.hot.get_mut(p as usize)
    }

    /// The cooldown records, by slot (read by the due-list check).
    pub(crate) fn cooldowns(&self) -> &[Cooldown] {
        &self.cool
    }

    /// Takes the calendar entries of `clock` due at `now` into `out`. Drops the calendars'
    /// stale entries first once they hold more than twice as many entries as there are
    /// functions, so that frequent interval changes cannot grow them without bound.
    pub(crate) fn drain_due(
        &mut self,
        clock: IntervalClock,
        now: u64,
        out: &mut Vec<QueuedCooldown>,
    ) {
        if self.intervals.len() > 2 * self.live + 64 {
            let cool = &self.cool;
            (self.intervals).retain(|e| cool.get(e.slot as usize).is_some_and(|c| c.holds(e)));
        }
        self.intervals.drain_due(clock, now, out);
    }

    /// The interval bookkeeping of function `h` (at position `pos`) about to run on `clock`
    /// in frame `frame`: its delta (its own since its last run for an interval function,
    /// dilated), its next due time in the calendar, and the run recorded. `None` when it is
    /// not due after all (it gained an interval during this frame, or a stale calendar entry
    /// brought it).
    pub(crate) fn start_run(
        &mut self,
        h: TickHandle,
        pos: u32,
        clock: IntervalClock,
        clocks: &Clocks,
        frame: u64,
    ) -> Option<Span> {
        let (now, delta) = (clock.now(clocks), clock.delta(clocks));
        let cool = &mut self.cool[h.index() as usize];
        let interval = cool.interval;
        let first = cool.last_tick.is_none();
        if interval > 0 && !first && cool.due > now {
            return None;
        }
        let raw = match cool.last_tick {
            // Never below `last_tick` while running; a restore checks `last_tick` against the
            // saved calendar time only, and an edited snapshot can move both past this clock.
            Some(t) if interval > 0 => now.saturating_sub(t),
            _ => delta,
        };
        cool.last_tick = Some(now);
        let d = cool.dilation;
        if interval > 0 {
            cool.restart(next_due(cool.due, now, interval, first));
            self.intervals.push(clock, h, cool);
        }
        self.hot[pos as usize].last_run = frame;
        Some(Span::from_flicks(if d == 1.0 {
            raw
        } else {
            (raw as f64 * d).round() as u64
        }))
    }

    /// The frame stopped early (a panic): every enabled interval function that did not run
    /// in frame `frame` stays due, queued again, and the plan is rebuilt at the next look.
    pub(crate) fn requeue_unrun(&mut self, frame: u64) {
        let waiting: Vec<_> = (self.iter())
            .filter(|(h, n)| {
                n.settings.enabled
                    && n.has_interval()
                    && self.hot(*h).is_some_and(|x| x.last_run != frame)
            })
            .map(|(h, n)| (n.clock(), h))
            .collect();
        for (clock, h) in waiting {
            // May duplicate a queued entry; the copy goes stale at the function's next tick.
            let cool = &self.cool[h.index() as usize];
            self.intervals.push(clock, h, cool);
        }
        self.dirty = true;
    }
}
