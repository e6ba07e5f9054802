//! [`LatentActions`]: Unreal's `FLatentActionManager`, keyed by `(owner, uuid)`.

pub(super) mod handle;
pub(super) mod moved;
pub(super) mod save;

use std::collections::VecDeque;
use std::fmt;

use rustc_hash::FxHashMap;

use crate::latent::action::{
    Delay, DelayUntilNextTick, LatentAction, LatentResponse, RetriggerableDelay, WaitUntil,
};
use crate::latent::actions::cx::{LatentCall, LatentCx};
use crate::owner::{OwnerId, OwnerIndex, Owners};
use crate::time::{Clocks, Domain, Span};
use crate::timer::Timers;

/// A latent action's completion callback.
pub type Completion<C> = Box<dyn FnMut(&mut C, &mut LatentCx<'_, C>) + Send>;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum ActionState {
    Alive,
    /// Finished; kept until its completion (if triggered) has run.
    Finished,
    /// Removed from outside; its abort hook is queued.
    Removed,
}

struct ActionEntry<C> {
    seq: u64,
    owner: OwnerId,
    uuid: u64,
    domain: Domain,
    state: ActionState,
    /// Added in an open frame before the latent stage: the first update gets a zero delta.
    fresh: bool,
    /// Added in a frame that a panic aborted before the latent stage: its first update gets the
    /// next frame's delta without the time owed for the aborted one.
    after_abort: bool,
    /// Added during the latent stage: first updated next frame.
    skip: bool,
    /// The completion runs in this frame's completion pass.
    trigger: bool,
    late_by: Option<Span>,
    action: Option<Box<dyn LatentAction<C>>>,
    on_complete: Completion<C>,
}

/// One row of [`LatentActions::list`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LatentInfo {
    /// The owner the action was added under.
    pub owner: OwnerId,
    /// Its key within the owner (Unreal: the Blueprint node's UUID).
    pub uuid: u64,
    /// [`LatentAction::describe`].
    pub description: String,
}

// Where `LatentActions`' verbs live: adding, running and cancelling here, handles in
// `handle.rs`, snapshots in `save.rs`, moving an owner's actions in `moved.rs`; the three are
// this module's children because they read its entries and keys, which no other file sees.
/// Latent actions keyed by `(owner, uuid)`, updated once per frame.
///
/// The [`Scheduler`](crate::scheduler::Scheduler) runs them in its latent stage (after the
/// tickables; [`Scheduler::latent`](crate::Scheduler::latent) hands them out); on their own,
/// a [`LatentActionManager`](crate::latent::LatentActionManager) holds them and runs the stage
/// with [`tick`](crate::latent::LatentActionManager::tick). See the [module
/// docs](crate::latent) for the rules.
///
/// ```
/// use tickflow::latent::LatentActionManager;
/// use tickflow::prelude::*;
///
/// let door = OwnerId::from(7);
/// let mut latent = LatentActionManager::<Vec<&str>>::new();
/// assert!(latent.delay(door, 1, secs(0.3), |log, _| log.push("open")));
/// assert!(!latent.delay(door, 1, secs(0.1), |log, _| log.push("never")), "re-entry ignored");
/// assert_eq!(latent.count_for_owner(door), 1);
///
/// let mut log = Vec::new();
/// for _ in 0..3 {
///     latent.tick(secs(0.1), &mut log);
/// }
/// assert_eq!(log, ["open"]); // inclusive: 0.3 s reached in the third frame
/// assert_eq!(latent.count_for_owner(door), 0);
/// ```
pub struct LatentActions<C> {
    /// In insertion order (= update and completion order); compacted every run.
    entries: Vec<ActionEntry<C>>,
    keys: FxHashMap<(OwnerId, u64), u64>,
    owners: OwnerIndex<u64>,
    next_seq: u64,
    live: usize,
    frame: u64,
    frame_open: bool,
    in_stage: bool,
    /// The clock and overshoot of the completion that is running.
    carry: Option<(Domain, Span)>,
    aborted: VecDeque<Box<dyn LatentAction<C>>>,
    /// Deltas of frames aborted by a panic before the latent stage, added to the next update.
    owed: [u64; 3],
}

impl<C> fmt::Debug for LatentActions<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatentActions")
            .field("len", &self.live)
            .field("frame", &self.frame)
            .finish_non_exhaustive()
    }
}

impl<C: 'static> LatentActions<C> {
    /// Its owners, for tracking new ones.
    pub(crate) fn owners_mut(&mut self) -> &mut dyn Owners {
        &mut self.owners
    }

    /// Its owners, to read.
    pub(crate) fn owners_ref(&self) -> &dyn Owners {
        &self.owners
    }

    /// No actions.
    pub(crate) fn new() -> Self {
        LatentActions {
            entries: Vec::new(),
            keys: FxHashMap::default(),
            owners: OwnerIndex::default(),
            next_seq: 0,
            live: 0,
            frame: 0,
            frame_open: false,
            in_stage: false,
            carry: None,
            aborted: VecDeque::new(),
            owed: [0; 3],
        }
    }

    /// Adds `action` under `(owner, uuid)`; when it completes, `on_complete` runs. Returns
    /// `false`, and changes nothing, when the key is taken by an action that has not finished.
    pub fn add(
        &mut self,
        owner: OwnerId,
        uuid: u64,
        action: impl LatentAction<C> + 'static,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) -> bool {
        self.add_boxed(owner, uuid, Box::new(action), Box::new(on_complete))
    }

    pub(crate) fn add_boxed(
        &mut self,
        owner: OwnerId,
        uuid: u64,
        mut action: Box<dyn LatentAction<C>>,
        on_complete: Completion<C>,
    ) -> bool {
        if self.keys.contains_key(&(owner, uuid)) {
            return false;
        }
        let domain = action.domain();
        if let Some((d, by)) = self.carry {
            if d == domain {
                action.started_late(by);
            }
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.keys.insert((owner, uuid), seq);
        self.owners.add(owner, seq);
        self.entries.push(ActionEntry {
            seq,
            owner,
            uuid,
            domain,
            state: ActionState::Alive,
            fresh: self.frame_open,
            // Added after an aborted frame: the time owed for it is not this action's.
            after_abort: self.owed != [0; 3],
            skip: self.in_stage,
            trigger: false,
            late_by: None,
            action: Some(action),
            on_complete,
        });
        self.live += 1;
        true
    }

    /// A [`Delay`] of `d` on the game clock; `false` (ignored) while the key counts down.
    pub fn delay(
        &mut self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) -> bool {
        self.add(owner, uuid, Delay::new(d), on_complete)
    }

    /// A [`RetriggerableDelay`] of `d`: if the key holds one that is counting down, it
    /// restarts with `d` and keeps its first completion (`on_complete` is dropped). `false`
    /// when the key holds an action that cannot restart.
    pub fn retriggerable_delay(
        &mut self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) -> bool {
        self.retrigger_boxed(owner, uuid, d, Box::new(on_complete))
    }

    pub(crate) fn retrigger_boxed(
        &mut self,
        owner: OwnerId,
        uuid: u64,
        d: Span,
        on_complete: Completion<C>,
    ) -> bool {
        let Some(i) = self.alive_at(owner, uuid) else {
            return self.add_boxed(
                owner,
                uuid,
                Box::new(RetriggerableDelay::new(d)),
                on_complete,
            );
        };
        let (fresh, skip, owes) = (self.frame_open, self.in_stage, self.owed != [0; 3]);
        let e = &mut self.entries[i];
        let restarted = e.action.as_mut().is_some_and(|a| a.restart(d));
        if restarted {
            // Restarted, it counts like a new action: not this frame's delta.
            e.fresh = fresh;
            e.skip = skip;
            e.after_abort = owes;
        }
        restarted
    }

    /// A [`DelayUntilNextTick`]: completes in the next frame's latent stage.
    pub fn delay_until_next_tick(
        &mut self,
        owner: OwnerId,
        uuid: u64,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) -> bool {
        self.add(owner, uuid, DelayUntilNextTick, on_complete)
    }

    /// A [`WaitUntil`]: completes in the first latent stage where `cond` holds.
    pub fn wait_until(
        &mut self,
        owner: OwnerId,
        uuid: u64,
        cond: impl FnMut(&C) -> bool + Send + 'static,
        on_complete: impl FnMut(&mut C, &mut LatentCx<'_, C>) + Send + 'static,
    ) -> bool {
        self.add(owner, uuid, WaitUntil(cond), on_complete)
    }

    fn position(&self, seq: u64) -> Option<usize> {
        self.entries.binary_search_by_key(&seq, |e| e.seq).ok()
    }

    fn alive_at(&self, owner: OwnerId, uuid: u64) -> Option<usize> {
        let seq = *self.keys.get(&(owner, uuid))?;
        self.position(seq)
            .filter(|&i| self.entries[i].state == ActionState::Alive)
    }

    /// The action under `(owner, uuid)` that has not finished.
    pub fn find(&self, owner: OwnerId, uuid: u64) -> Option<&dyn LatentAction<C>> {
        let i = self.alive_at(owner, uuid)?;
        self.entries[i].action.as_deref()
    }

    /// The action under `(owner, uuid)` that has not finished, to change it.
    pub fn find_mut(
        &mut self,
        owner: OwnerId,
        uuid: u64,
    ) -> Option<&mut (dyn LatentAction<C> + 'static)> {
        let i = self.alive_at(owner, uuid)?;
        self.entries[i].action.as_deref_mut()
    }

    /// Removes one action: its abort hook runs at the next latent stage, its completion
    /// never. `false` when the key holds nothing (or an action that already finished).
    pub fn remove(&mut self, owner: OwnerId, uuid: u64) -> bool {
        match self.alive_at(owner, uuid) {
            Some(i) => {
                self.abort_at(i);
                true
            }
            None => false,
        }
    }

    /// Removes every unfinished action of `owner` (abort hooks queued, completions never run,
    /// also a completion already due later in the frame being run). Returns how many.
    pub fn remove_owner(&mut self, owner: OwnerId) -> usize {
        let found: Vec<usize> = self
            .owners
            .get(owner)
            .iter()
            .filter_map(|&s| self.position(s))
            .filter(|&i| self.entries[i].state != ActionState::Removed)
            .collect();
        let mut n = 0;
        for i in found {
            let e = &mut self.entries[i];
            match e.state {
                ActionState::Alive => self.abort_at(i),
                // Finished this frame with its completion still due: aborted instead.
                ActionState::Finished if e.trigger => {
                    e.state = ActionState::Removed;
                    e.trigger = false;
                    self.aborted.extend(e.action.take());
                }
                _ => continue,
            }
            n += 1;
        }
        n
    }

    fn abort_at(&mut self, i: usize) {
        if let Some(a) = self.detach(i) {
            self.aborted.push_back(a);
        }
    }

    /// Ends the unfinished action at `i` without its completion (the entry stays until the
    /// next compaction) and hands the action over: to the abort queue, or to a move.
    fn detach(&mut self, i: usize) -> Option<Box<dyn LatentAction<C>>> {
        let e = &mut self.entries[i];
        e.state = ActionState::Removed;
        e.trigger = false;
        self.keys.remove(&(e.owner, e.uuid));
        self.live -= 1;
        e.action.take()
    }

    /// Unfinished actions of `owner`.
    pub fn count_for_owner(&self, owner: OwnerId) -> usize {
        self.owners
            .get(owner)
            .iter()
            .filter_map(|&s| self.position(s))
            .filter(|&i| self.entries[i].state == ActionState::Alive)
            .count()
    }

    /// Unfinished actions.
    pub fn len(&self) -> usize {
        self.live
    }

    /// `true` when no action is waiting.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Every unfinished action in update order, described.
    pub fn list(&self) -> Vec<LatentInfo> {
        self.entries
            .iter()
            .filter(|e| e.state == ActionState::Alive)
            .map(|e| LatentInfo {
                owner: e.owner,
                uuid: e.uuid,
                description: e.action.as_ref().map_or_else(String::new, |a| a.describe()),
            })
            .collect()
    }

    pub(crate) fn open_frame(&mut self) {
        self.frame_open = true;
    }

    /// The scheduler's frame was aborted by a panic: if this frame's latent stage had not run,
    /// its deltas are owed to the actions (their next update gets them too, so a latent delay
    /// ends in the same frame as a timer of the same length) and the frame is closed, so that
    /// actions added from now on count as added between frames.
    pub(crate) fn abort_frame(&mut self, clocks: &crate::time::Clocks) {
        let dts = clocks.raw_deltas();
        if !self.frame_open {
            return;
        }
        self.frame_open = false;
        self.frame += 1;
        for (owed, dt) in self.owed.iter_mut().zip(dts) {
            *owed = owed.saturating_add(dt);
        }
        for e in &mut self.entries {
            if e.fresh {
                e.fresh = false;
                e.after_abort = true;
            }
        }
    }

    /// The latent stage: abort hooks, updates, completions. `after_call` runs after each
    /// callback that may have queued commands.
    pub(crate) fn run(
        &mut self,
        dts: [u64; 3],
        (ctx, clocks, timers): (&mut C, &Clocks, &mut Timers<C>),
        after_call: &mut dyn FnMut(&mut Self, &mut Timers<C>),
    ) -> usize {
        self.settle();
        self.frame += 1;
        self.frame_open = false;
        while let Some(mut a) = self.aborted.pop_front() {
            a.aborted(ctx);
            drop(a);
            after_call(self, timers);
        }
        self.in_stage = true;
        let frame = self.frame;
        let owed = std::mem::take(&mut self.owed);
        for e in &mut self.entries {
            if e.state != ActionState::Alive || e.skip {
                continue;
            }
            let Some(action) = e.action.as_mut() else {
                continue;
            };
            let d = e.domain.index();
            let dt = match (e.fresh, e.after_abort) {
                (true, _) => 0,
                (false, true) => dts[d],
                (false, false) => dts[d].saturating_add(owed[d]),
            };
            let mut r = LatentResponse::new(Span::from_flicks(dt), frame, e.fresh);
            e.fresh = false;
            e.after_abort = false;
            action.update(&mut r, ctx);
            if r.triggered {
                e.trigger = true;
                e.late_by = r.late_by;
            }
            if r.finished {
                e.state = ActionState::Finished;
                // The key is free for the completion to add the same action again.
                self.keys.remove(&(e.owner, e.uuid));
                self.live -= 1;
            }
        }
        after_call(self, timers);
        let mut completed = 0;
        let mut i = 0;
        while i < self.entries.len() {
            let e = &mut self.entries[i];
            if e.trigger {
                e.trigger = false;
                self.carry = e.late_by.take().map(|by| (e.domain, by));
                (e.on_complete)(ctx, &mut LatentCx::new(clocks, timers, LatentCall));
                completed += 1;
                after_call(self, timers);
                self.carry = None;
            }
            i += 1;
        }
        self.in_stage = false;
        self.settle();
        completed
    }

    /// Drops finished and removed entries whose completion is not due, and lets actions added
    /// during the stage be updated from the next one.
    fn settle(&mut self) {
        self.carry = None;
        self.in_stage = false;
        let owners = &mut self.owners;
        self.entries.retain_mut(|e| {
            e.skip = false;
            let keep = e.state == ActionState::Alive || e.trigger;
            if !keep {
                owners.forget(e.owner, e.seq);
            }
            keep
        });
    }
}
