//! One owner's tick functions as plain data for a move to another scheduler (see
//! `Scheduler::export_owner`): settings, prerequisites and interval phase, with times
//! relative to the source's clocks.
//!
//! Prerequisites among the moved functions are kept by place in the moved list; one on
//! another owner's function is kept by that function's name, and re-linked at the
//! destination to its earliest-registered function of that name. Edges from other owners'
//! functions to the moved ones are left behind (those functions stop waiting, as after a
//! removal).

use rustc_hash::FxHashMap;

use super::save::TickInfo;
use super::TickGraph;
use crate::format::RestoreError;
use crate::owner::OwnerId;
use crate::tick::handle::TickHandle;
use crate::tick::settings::TickSettings;

/// One tick function of a moved owner.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct MovedTick {
    /// Its handle in the source, as `(index, tag)`: the key of the handle map.
    pub(crate) handle: (u32, u32),
    pub(crate) settings: TickSettings,
    pub(crate) parallel: bool,
    /// Prerequisites among the moved functions, by place in the moved list.
    pub(crate) prereqs: Vec<u32>,
    /// Prerequisites on other owners' functions, by name (empty: the function had none).
    pub(crate) external: Vec<String>,
    /// Time to the next interval tick on its clock, and how late it is when due.
    due_in: u64,
    late: u64,
    /// Clock time since its previous tick (`None`: it has not ticked since it was enabled).
    since_tick: Option<u64>,
    /// Frames since its last run (`None`: it never ran).
    frames_since_run: Option<u64>,
}

impl MovedTick {
    /// The source handle (`None` when the record was damaged).
    pub(crate) fn old_handle(&self) -> Option<TickHandle> {
        TickHandle::from_raw(self.handle)
    }

    /// What the resolver is told (`handle` is the source's until the import makes one).
    pub(crate) fn info(&self) -> TickInfo {
        TickInfo {
            handle: self.old_handle().unwrap_or_default(),
            settings: self.settings.clone(),
            parallel: self.parallel,
        }
    }

    /// Checks what an import relies on: valid settings of `owner`, prerequisites inside the
    /// list and without a cycle.
    pub(crate) fn check_all(list: &[MovedTick], owner: OwnerId) -> Result<(), RestoreError> {
        let n = list.len();
        for m in list {
            let name = &m.settings.name;
            if m.old_handle().is_none() || m.settings.owner != Some(owner) {
                return Err(RestoreError::corrupt(format!(
                    "moved tick function `{name}` has a zero handle tag or another owner"
                )));
            }
            (m.settings.validate()).map_err(|e| RestoreError::corrupt(e.to_string()))?;
            if m.prereqs.iter().any(|&p| p as usize >= n) {
                return Err(RestoreError::corrupt(format!(
                    "moved tick function `{name}` waits for a function that was not moved"
                )));
            }
            if super::save::listed_twice(&m.prereqs) {
                return Err(RestoreError::corrupt(format!(
                    "moved tick function `{name}` lists a prerequisite twice"
                )));
            }
        }
        let edges = (list.iter().enumerate())
            .flat_map(|(k, m)| m.prereqs.iter().map(move |&p| (p as usize, k)));
        if !super::save::acyclic(n, edges) {
            return Err(RestoreError::corrupt(
                "the moved tick prerequisites form a cycle",
            ));
        }
        Ok(())
    }
}

impl<C> TickGraph<C> {
    /// `owner`'s live functions in registration order.
    pub(crate) fn owned(&self, owner: OwnerId) -> Vec<TickHandle> {
        let mut list = self.owners.get(owner).to_vec();
        list.sort_unstable_by_key(|&h| self.get(h).map_or(u64::MAX, |n| n.seq));
        list
    }

    /// The records of `list` (one owner's functions, in registration order), as of frame
    /// `frame`. Between frames.
    pub(crate) fn moved_records(&self, list: &[TickHandle], frame: u64) -> Vec<MovedTick> {
        let place: FxHashMap<TickHandle, u32> = (list.iter().enumerate())
            .map(|(k, &h)| (h, k as u32))
            .collect();
        list.iter()
            .map(|&h| {
                let node = self.get(h).expect("live");
                let mut prereqs = Vec::new();
                let mut external = Vec::new();
                for &p in &node.prereqs {
                    match (place.get(&p), self.get(p)) {
                        (Some(&k), _) => prereqs.push(k),
                        (None, Some(other)) => external.push(other.settings.name.clone()),
                        (None, None) => {} // removed: ignored here too
                    }
                }
                let cool = &self.cool[h.index() as usize];
                let now = self.intervals.now(node.clock());
                let last_run = self.hot(h).expect("live").last_run;
                MovedTick {
                    handle: h.to_raw(),
                    settings: node.settings.clone(),
                    parallel: node.parallel,
                    prereqs,
                    external,
                    due_in: cool.due.saturating_sub(now),
                    late: now.saturating_sub(cool.due),
                    since_tick: cool.last_tick.map(|t| now.saturating_sub(t)),
                    frames_since_run: (last_run > 0).then(|| frame.saturating_sub(last_run)),
                }
            })
            .collect()
    }

    /// Restores the interval phase and last run of a moved function just registered as `h`,
    /// relative to the time this graph's calendars stand at and frame `frame`.
    pub(crate) fn put_moved_state(&mut self, h: TickHandle, m: &MovedTick, frame: u64) {
        let node = self.get(h).expect("just registered");
        let (clock, interval, enabled) = (node.clock(), node.has_interval(), node.settings.enabled);
        let now = self.intervals.now(clock);
        let cool = &mut self.cool[h.index() as usize];
        cool.last_tick = m.since_tick.map(|s| now.saturating_sub(s));
        let due = match m.late {
            0 => now.saturating_add(m.due_in),
            late => now.saturating_sub(late),
        };
        if interval && enabled {
            // Replaces the entry registration filed (its stamp goes stale).
            cool.restart(due);
            self.intervals.push(clock, h, cool);
        } else {
            cool.due = due;
        }
        if let Some(since) = m.frames_since_run {
            // Frame numbers start at 1: 0 means "never ran".
            self.hot_mut(h).expect("live").last_run = frame.saturating_sub(since).max(1);
        }
    }

    /// Fills `named` (names to look up) with the earliest-registered live function of each
    /// name: one pass over the graph, whatever the number of names.
    pub(crate) fn earliest_named(&self, named: &mut FxHashMap<&str, Option<TickHandle>>) {
        for (h, n) in self.iter() {
            let name = n.settings.name.as_str();
            if name.is_empty() {
                continue;
            }
            if let Some(slot) = named.get_mut(name) {
                if slot.is_none_or(|s| n.seq < self.get(s).expect("live").seq) {
                    *slot = Some(h);
                }
            }
        }
    }
}
