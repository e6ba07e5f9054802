//! Where each function's check record sits: positions in `TickGraph::hot`, kept in a slot's
//! cooldown record, and laid out in plan order when the plan is rebuilt (the runner moves the
//! callbacks alike, so that a frame reads both in memory order).

use std::num::NonZeroU32;
use std::ops::Range;

use super::{Hot, TickGraph};
use crate::tick::handle::TickHandle;

impl<C> TickGraph<C> {
    /// The position of a live handle's check record and callback.
    pub(crate) fn pos_of(&self, h: TickHandle) -> Option<u32> {
        let p = self.cool.get(h.index() as usize)?.pos;
        (self.hot.get(p as usize)?.gen == h.tag().get()).then_some(p)
    }

    /// The frame data of a live handle.
    pub(crate) fn hot(&self, h: TickHandle) -> Option<&Hot> {
        self.hot.get(self.pos_of(h)? as usize)
    }

    /// The frame data of a live handle, to change.
    pub(crate) fn hot_mut(&mut self, h: TickHandle) -> Option<&mut Hot> {
        let p = self.pos_of(h)?;
        self.hot.get_mut(p as usize)
    }

    /// The check records at positions `r` and the slots of their functions: a laid-out
    /// lane's part, for the frame to walk (`None` past the end).
    pub(crate) fn laid_mut(&mut self, r: Range<usize>) -> Option<(&mut [Hot], &[u32])> {
        Some((self.hot.get_mut(r.clone())?, self.slot_at.get(r)?))
    }

    /// The live function at position `p`, with `p`.
    pub(crate) fn placed_at(&self, p: u32) -> Option<(TickHandle, u32)> {
        let i = p as usize;
        let tag = NonZeroU32::new(self.hot.get(i)?.gen)?;
        Some((TickHandle::new(*self.slot_at.get(i)?, tag), p))
    }

    /// Puts the check records in the order of `order` (live slots; others are skipped), then
    /// every other live function in slot order. Returns, for each new position, the old one,
    /// for the runner to move the callbacks alike.
    pub(crate) fn reorder(&mut self, order: impl Iterator<Item = u32>) -> Vec<u32> {
        let mut from = Vec::with_capacity(self.live);
        let mut hot = Vec::with_capacity(self.live);
        let mut slots = Vec::with_capacity(self.live);
        let mut placed = vec![false; self.nodes.len()];
        for slot in order.chain(0..self.nodes.len() as u32) {
            let i = slot as usize;
            if self.nodes.get(i).is_some_and(Option::is_some) && !placed[i] {
                placed[i] = true;
                let cool = &mut self.cool[i];
                from.push(cool.pos);
                hot.push(self.hot[cool.pos as usize]);
                slots.push(slot);
                cool.pos = (hot.len() - 1) as u32;
            }
        }
        self.hot = hot;
        self.slot_at = slots;
        from
    }
}
