//! Latent actions in a scheduler snapshot: each saved action's plain data, its key and its
//! place in the update order. Completions are closures, bound again by `(owner, uuid)`.

use super::{ActionEntry, ActionState, Completion, LatentActions, LatentInfo};
use crate::format::RestoreError;
use crate::latent::action::{LatentAction, SavedAction};
use crate::owner::OwnerId;
use crate::time::Domain;

/// The saved part of a [`LatentActions`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct LatentSnapshot {
    next_seq: u64,
    frame: u64,
    frame_open: bool,
    /// Deltas owed from frames a panic aborted before the latent stage.
    owed: [u64; 3],
    /// Saved actions in update order.
    actions: Vec<SavedLatent>,
    /// Actions whose [`LatentAction::save`] said `None`.
    pub(crate) not_saved: Vec<LatentInfo>,
    /// Removed actions whose abort hook runs at the next latent stage, in order.
    aborted: Vec<SavedAction>,
    /// Removed actions waiting for their abort hook that could not save themselves.
    pub(crate) dropped_aborts: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct SavedLatent {
    seq: u64,
    owner: OwnerId,
    uuid: u64,
    domain: Domain,
    fresh: bool,
    after_abort: bool,
    action: SavedAction,
}

/// Turns a saved action back into one (built-in kinds, or the resolver's custom ones).
impl LatentSnapshot {
    /// This snapshot at frame number `frame` (a resumed scheduler).
    pub(crate) fn at_frame(mut self, frame: u64) -> LatentSnapshot {
        self.frame = frame;
        self
    }
}

pub(crate) type MakeAction<'a, C> =
    &'a mut dyn FnMut(&SavedAction) -> Option<Box<dyn LatentAction<C>>>;
/// Finds the completion of an action.
pub(crate) type MakeCompletion<'a, C> = &'a mut dyn FnMut(&LatentInfo) -> Option<Completion<C>>;

impl<C: 'static> LatentActions<C> {
    /// Saves every unfinished action that can save itself. Taken between frames.
    pub(crate) fn save(&self) -> LatentSnapshot {
        let mut snap = LatentSnapshot {
            next_seq: self.next_seq,
            frame: self.frame,
            frame_open: self.frame_open,
            owed: self.owed,
            ..LatentSnapshot::default()
        };
        for a in &self.aborted {
            match a.save() {
                Some(saved) => snap.aborted.push(saved),
                None => snap.dropped_aborts += 1,
            }
        }
        for e in self
            .entries
            .iter()
            .filter(|e| e.state == ActionState::Alive)
        {
            let Some(action) = e.action.as_ref() else {
                continue;
            };
            match action.save() {
                Some(saved) => snap.actions.push(SavedLatent {
                    seq: e.seq,
                    owner: e.owner,
                    uuid: e.uuid,
                    domain: e.domain,
                    fresh: e.fresh,
                    after_abort: e.after_abort,
                    action: saved,
                }),
                None => snap.not_saved.push(LatentInfo {
                    owner: e.owner,
                    uuid: e.uuid,
                    description: action.describe(),
                }),
            }
        }
        snap
    }

    /// Builds the actions of a snapshot; every action and completion is bound before
    /// anything is returned.
    pub(crate) fn restore(
        snap: &LatentSnapshot,
        make_action: MakeAction<'_, C>,
        completion: MakeCompletion<'_, C>,
    ) -> Result<Self, RestoreError> {
        if snap.frame == u64::MAX || snap.next_seq == u64::MAX {
            return Err(RestoreError::corrupt(
                "a latent action counter is at its end",
            ));
        }
        let mut out = LatentActions::new();
        let mut last = None;
        for s in &snap.actions {
            if s.seq >= snap.next_seq || last.is_some_and(|l| l >= s.seq) {
                return Err(RestoreError::corrupt(format!(
                    "latent action ({:?}, {}) is out of update order",
                    s.owner, s.uuid
                )));
            }
            last = Some(s.seq);
            let unbound = |description: String| RestoreError::Unbound {
                kind: "latent action",
                name: format!("{:?}, uuid {}", s.owner, s.uuid),
                detail: description,
            };
            let Some(action) = make_action(&s.action) else {
                return Err(unbound(format!("no action for {:?}", s.action)));
            };
            let info = LatentInfo {
                owner: s.owner,
                uuid: s.uuid,
                description: action.describe(),
            };
            let Some(on_complete) = completion(&info) else {
                return Err(unbound(format!("no completion for {}", info.description)));
            };
            if out.keys.insert((s.owner, s.uuid), s.seq).is_some() {
                return Err(RestoreError::corrupt(format!(
                    "latent key ({:?}, {}) is saved twice",
                    s.owner, s.uuid
                )));
            }
            out.owners.add(s.owner, s.seq);
            out.entries.push(ActionEntry {
                seq: s.seq,
                owner: s.owner,
                uuid: s.uuid,
                domain: s.domain,
                state: ActionState::Alive,
                fresh: s.fresh,
                after_abort: s.after_abort,
                skip: false,
                trigger: false,
                late_by: None,
                action: Some(action),
                on_complete,
            });
            out.live += 1;
        }
        for saved in &snap.aborted {
            let Some(action) = make_action(saved) else {
                return Err(RestoreError::Unbound {
                    kind: "latent action",
                    name: "(removed, abort pending)".into(),
                    detail: format!("no action for {saved:?}"),
                });
            };
            out.aborted.push_back(action);
        }
        out.next_seq = snap.next_seq;
        out.frame = snap.frame;
        out.frame_open = snap.frame_open;
        out.owed = snap.owed;
        Ok(out)
    }
}
