//! A node's image: its whole scheduler and your state, written with a commit, for a node that
//! must come back exactly as it was (a lockstep simulation's shard, whose every tick function,
//! latent action and plain timer counts, not only its durable timers).
//!
//! Ground rules:
//!
//! - The image is one row per node, tagged with the number of the commit that wrote it. It is
//!   written in that commit's transaction, so it and the commit's rows, handovers and effects
//!   land together or not at all.
//! - [`resume`](super::Durable::resume) builds the scheduler from the image only when the
//!   image's commit is the node's last: a later commit without one (or one whose outcome was
//!   unknown and that is tried again without an image) makes it stale, and the node resumes
//!   from its durable rows as any other node does.
//! - A resumed image is the scheduler as it was committed, clocks and all: no offline time
//!   counts for its timers (the node was paused while it was down, as a lockstep shard is
//!   while its director restarts it). The node's rows keep their offline shift unchanged.
//! - The image is untrusted bytes like every row: its checksum is checked, it decodes into
//!   plain data or is refused, and the snapshot's restore checks the rest.
//!
//! Cost: a snapshot of the whole scheduler and one row write per image commit — the arena's
//! shards, a few hundred actors each, write 70–145 KB a frame, which made the 4-shard demo
//! 37 s instead of 22 s on SQLite (BENCHMARKS.md).

use tickflow::snapshot::SchedulerSnapshot;
use tickflow::Scheduler;

use super::{Commit, Durable};
use crate::backend::ImageRead;
use crate::error::StoreError;
use crate::store::Store;
use crate::sum::Sum;

/// The checksum of a node's image row.
pub(super) fn image_sum(node: &str, committed: i64, bytes: &[u8]) -> i64 {
    Sum::of("tickflow_images")
        .bytes(node.as_bytes())
        .i64(committed)
        .bytes(bytes)
        .finish()
}

/// A node's image, checked and decoded: the scheduler's snapshot and your state.
pub(super) fn decode(
    node: &str,
    image: &ImageRead,
) -> Result<(SchedulerSnapshot, Vec<u8>), StoreError> {
    let bad = |field, reason: String| {
        StoreError::bad_row("tickflow_images", format!("{node:?}"), field, reason)
    };
    if image.sum != image_sum(node, image.committed, &image.bytes) {
        return Err(bad(
            "sum",
            "does not match the row: damaged or edited".into(),
        ));
    }
    postcard::from_bytes(&image.bytes).map_err(|e| bad("bytes", format!("do not decode: {e}")))
}

impl<S: Store> Durable<S> {
    /// Commits now, as [`commit`](Self::commit) does, and with it the node's **image**: the
    /// whole scheduler (every tick function, tickable, latent action and timer, not only the
    /// durable ones) and `state`, your own state of the node. After a restart,
    /// [`resume`](Self::resume) gives back that scheduler exactly as it was at this commit and
    /// `state` in [`Resumed::state`](super::Resumed::state): a deterministic simulation goes
    /// on as if it had never stopped, with no replay of its own.
    ///
    /// Commands queued through [`Commands`](tickflow::Commands) are applied first (a
    /// snapshot holds no queue). What an image does not hold: owners frozen for a handover
    /// (they are out of the scheduler until they settle: keep what you need of them in
    /// `state`), and async tasks. The image suits a node that its own director restarts; a
    /// fleet's takeover moves only durable timers.
    ///
    /// ```
    /// use tickflow::prelude::*;
    /// use tickflow::snapshot::Registry;
    /// use tickflow_store::{Durable, Sqlite};
    ///
    /// fn count(n: &mut u64, _: &mut TickCx<u64>) {
    ///     *n += 1;
    /// }
    /// let dir = std::env::temp_dir().join(format!("tickflow-image-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("shard.db");
    /// let mut registry = Registry::new().tick("count", count);
    ///
    /// // A tick function (not durable) counts frames; the count is the node's state.
    /// let mut durable = Durable::new(Sqlite::create(&path).unwrap(), "shard-0");
    /// let (mut sched, _) = durable.resume(&mut registry).unwrap();
    /// sched.ticks().add(TickSettings::named("count"), count);
    /// let mut n = 0u64;
    /// for _ in 0..5 {
    ///     sched.tick(millis(16), &mut n);
    ///     durable.commit_image(&mut sched, &n.to_le_bytes(), |_, _| Ok(())).unwrap();
    /// }
    /// let hash = sched.state_hash();
    /// drop((sched, durable));
    ///
    /// // Restarted: the tick function and the count are back as they were committed.
    /// let mut durable = Durable::new(Sqlite::open(&path).unwrap(), "shard-0");
    /// let (mut sched, resumed) = durable.resume(&mut registry).unwrap();
    /// let mut n = u64::from_le_bytes(resumed.state.unwrap().try_into().unwrap());
    /// assert_eq!((resumed.frame, n, sched.state_hash()), (5, 5, hash));
    /// sched.tick(millis(16), &mut n);
    /// assert_eq!(n, 6);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`commit`](Self::commit); a store that keeps no images refuses with
    /// [`StoreError::Setting`].
    pub fn commit_image<C: 'static>(
        &mut self,
        sched: &mut Scheduler<C>,
        state: &[u8],
        effects: impl FnMut(&mut S::Tx<'_>, &Commit) -> Result<(), StoreError>,
    ) -> Result<Commit, StoreError> {
        sched.apply_commands();
        let snap = sched.snapshot();
        let bytes = postcard::to_stdvec(&(&snap, state)).expect("plain data encodes");
        self.image = Some(bytes);
        let out = self.commit(sched, effects);
        self.image = None;
        out
    }
}

/// Writes `image`, the image the commit numbered `number` carries (if any), in its
/// transaction.
pub(super) fn put<S: Store>(
    tx: &mut S::Tx<'_>,
    node: &str,
    image: Option<&[u8]>,
    number: u64,
) -> Result<(), StoreError> {
    let Some(bytes) = image else {
        return Ok(());
    };
    let committed = number as i64;
    S::put_image_in(
        tx,
        node,
        committed,
        bytes,
        image_sum(node, committed, bytes),
    )
}
