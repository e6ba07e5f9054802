//! [`LatentHandle`]: one latent action, to ask about or cancel (Unity's coroutine handle).

use super::{LatentActions, LatentInfo};
use crate::owner::OwnerId;

/// Names one latent action: the one that held its `(owner, uuid)` key when the handle was
/// taken with [`LatentActions::handle`]. `Copy`; once that action has finished or was removed,
/// the handle answers `false`/`None`, even when a new action took the same key.
///
/// ```
/// use tickflow::latent::LatentActionManager;
/// use tickflow::prelude::*;
///
/// let door = OwnerId::new(3);
/// let mut latent = LatentActionManager::<Vec<&str>>::new();
/// latent.delay(door, 1, secs(0.5), |log, _| log.push("opened"));
/// let opening = latent.handle(door, 1).unwrap();
/// let mut log = Vec::new();
/// latent.tick(secs(0.25), &mut log);
/// assert!(latent.is_running(opening));
/// assert!(latent.cancel(opening)); // the door stays shut
/// latent.delay(door, 1, secs(0.5), |log, _| log.push("opened at last"));
/// assert!(!latent.is_running(opening), "a new action under the same key is another one");
/// for _ in 0..2 {
///     latent.tick(secs(0.25), &mut log);
/// }
/// assert_eq!(log, ["opened at last"]);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LatentHandle {
    owner: OwnerId,
    uuid: u64,
    seq: u64,
}

impl LatentHandle {
    /// The owner the action was added under.
    pub fn owner(&self) -> OwnerId {
        self.owner
    }

    /// Its key within the owner.
    pub fn uuid(&self) -> u64 {
        self.uuid
    }
}

impl<C: 'static> LatentActions<C> {
    /// The handle of the unfinished action under `(owner, uuid)`, if any.
    pub fn handle(&self, owner: OwnerId, uuid: u64) -> Option<LatentHandle> {
        let seq = *self.keys.get(&(owner, uuid))?;
        Some(LatentHandle { owner, uuid, seq })
    }

    /// Where the action of `h` is, while it has not finished.
    fn live_index(&self, h: LatentHandle) -> Option<usize> {
        (self.keys.get(&(h.owner, h.uuid)) == Some(&h.seq))
            .then(|| self.position(h.seq))
            .flatten()
    }

    /// `true` while the action of `h` has not finished and was not removed.
    pub fn is_running(&self, h: LatentHandle) -> bool {
        self.live_index(h).is_some()
    }

    /// Removes the action of `h`, as [`remove`](Self::remove) does (its abort hook runs at the
    /// next latent stage, its completion never). `false` when it finished or was removed.
    pub fn cancel(&mut self, h: LatentHandle) -> bool {
        match self.live_index(h) {
            Some(i) => {
                self.abort_at(i);
                true
            }
            None => false,
        }
    }

    /// The action of `h`, described, while it runs.
    pub fn info(&self, h: LatentHandle) -> Option<LatentInfo> {
        let e = &self.entries[self.live_index(h)?];
        Some(LatentInfo {
            owner: e.owner,
            uuid: e.uuid,
            description: e.action.as_ref().map_or_else(String::new, |a| a.describe()),
        })
    }
}
