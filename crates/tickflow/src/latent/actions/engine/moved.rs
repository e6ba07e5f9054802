//! One owner's latent actions for a move to another scheduler. An action's saved data is
//! already relative (time counted so far, not a clock reading), so it moves as it is saved;
//! actions that cannot save themselves cannot move and are reported by the export.

use super::{ActionState, Completion, LatentActions, LatentInfo};
use crate::latent::action::{LatentAction, SavedAction};
use crate::owner::OwnerId;

/// One latent action of a moved owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct MovedLatent {
    pub(crate) uuid: u64,
    pub(crate) action: SavedAction,
}

/// An action taken out: its record (`None` when it cannot save itself), the action and its
/// completion.
pub(crate) struct TakenLatent<C> {
    pub(crate) info: LatentInfo,
    pub(crate) saved: Option<SavedAction>,
    pub(crate) action: Box<dyn LatentAction<C>>,
    pub(crate) on_complete: Completion<C>,
}

impl<C: 'static> LatentActions<C> {
    /// Takes every unfinished action of `owner` out, in update order, without running its
    /// abort hook (it moved; it was not removed). Between frames.
    pub(crate) fn take_owner(&mut self, owner: OwnerId) -> Vec<TakenLatent<C>> {
        assert!(!self.in_stage, "latent actions are moved between frames");
        let seqs = self.owners.take(owner);
        let mut out = Vec::with_capacity(seqs.len());
        let mut keep = Vec::new();
        for seq in seqs {
            let Some(i) = self.position(seq) else {
                continue;
            };
            let e = &mut self.entries[i];
            if e.state != ActionState::Alive {
                keep.push(seq); // dropped by the next stage's compaction, as before
                continue;
            }
            // The entry stays (without its completion) until the next stage compacts it.
            let on_complete =
                std::mem::replace(&mut e.on_complete, Box::new(|_: &mut C, _: &mut _| {}));
            let uuid = e.uuid;
            let action = self.detach(i).expect("an unfinished action is in place");
            out.push(TakenLatent {
                info: LatentInfo {
                    owner,
                    uuid,
                    description: action.describe(),
                },
                saved: action.save(),
                action,
                on_complete,
            });
        }
        for seq in keep {
            self.owners.add(owner, seq);
        }
        out
    }
}
