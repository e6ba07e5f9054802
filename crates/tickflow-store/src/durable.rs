//! [`Durable`]: a scheduler's durable timers kept in a [`Store`], written at frames' ends and
//! resumed after a restart.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

use tickflow::snapshot::{Resolver, RestoreError};
use tickflow::time::{Domain, Span, Time};
use tickflow::timer::{DurableChange, LoadReport, Timers};
use tickflow::{OwnerId, Scheduler};

use crate::error::StoreError;
use crate::row::{check_sizes, NodeClocks};
use crate::store::{wall_ns, Batch, Part, Store};

/// What [`Durable::resume`] found and did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resumed {
    /// The node had committed before: its clocks were resumed and its timers loaded.
    pub resumed: bool,
    /// The frame number the node had committed last (0 for a new node): the next frame is
    /// this plus one.
    pub frame: u64,
    /// Wall-clock time between that commit and the resume.
    pub offline: Span,
    /// What the offline time did to each timer.
    pub timers: LoadReport,
}

/// A node's durable timers in a store: the one way in to this crate.
///
/// - Mark the timers that must survive with
///   [`TimerBuilder::durable`](tickflow::timer::TimerBuilder::durable) (a building's
///   completion, energy regeneration); the rest of the scheduler stays in memory. A durable
///   timer is a row keyed by its owner and name, and its callback is bound again by name
///   after a restart (a [`Registry`](tickflow::snapshot::Registry)).
/// - Call [`end_frame`](Self::end_frame) after each frame: every
///   [`commit_every`](Self::commit_every) frames (1 by default) it writes the frame's changes in
///   one transaction, with your effects in the same transaction, so an effect and its timer's
///   removal are stored together or not at all.
/// - At start, [`resume`](Self::resume) builds the scheduler at the clocks of the last commit
///   (the world's game time stood still; the real clock moved by the time offline) and loads
///   the timers: each fires on its exact frame, and timers that lapsed offline follow their
///   [`Offline`](tickflow::timer::Offline) policy in the first frame.
///
/// ```
/// use tickflow::prelude::*;
/// use tickflow::snapshot::Registry;
/// use tickflow::timer::Offline;
/// use tickflow_store::{Durable, Sqlite};
///
/// fn built(log: &mut Vec<u64>, cx: &mut TimerCx<Vec<u64>>) {
///     log.push(cx.clocks().frame());
/// }
/// let dir = std::env::temp_dir().join(format!("tickflow-durable-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("world.db");
///
/// // First run: a building that takes 10 frames, then the process stops after 4.
/// let mut durable = Durable::new(Sqlite::open(&path).unwrap(), "zone-1");
/// let mut registry = Registry::new().timer("built", built);
/// let (mut sched, _) = durable.resume(&mut registry).unwrap();
/// sched.timers().after(Frames(10)).owner(OwnerId::new(7)).name("built")
///     .durable(Offline::Freeze).call(built);
/// let mut log = Vec::new();
/// for _ in 0..4 {
///     sched.tick(millis(16), &mut log);
///     durable.end_frame(sched.timers(), |_| Ok(())).unwrap();
/// }
/// drop((sched, durable));
///
/// // Second run: resumed at frame 4, the building completes on frame 10, as it would have.
/// let mut durable = Durable::new(Sqlite::open(&path).unwrap(), "zone-1");
/// let (mut sched, resumed) = durable.resume(&mut registry).unwrap();
/// assert_eq!((resumed.frame, resumed.timers.on_time), (4, 1));
/// while log.is_empty() {
///     sched.tick(millis(16), &mut log);
/// }
/// assert_eq!(log, [10]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct Durable<S: Store> {
    store: S,
    node: String,
    /// Epochs this node holds (owners it claimed); others count as 0.
    epochs: HashMap<OwnerId, u64>,
    every: u64,
    frames_since: u64,
    /// Changes taken from the timers and not committed yet (kept across a failed commit).
    queued: Vec<DurableChange>,
    wall: fn() -> u64,
}

impl<S: Store> Durable<S> {
    /// The durable timers of node `node` (a process, zone or shard: the clocks its rows are
    /// on) in `store`.
    pub fn new(store: S, node: impl Into<String>) -> Durable<S> {
        Durable {
            store,
            node: node.into(),
            epochs: HashMap::new(),
            every: 1,
            frames_since: 0,
            queued: Vec::new(),
            wall: wall_ns,
        }
    }

    /// Commits every `frames` frames (at least 1): fewer transactions, and a crash loses up to
    /// `frames - 1` frames (then re-run from the last commit, with their effects).
    pub fn commit_every(&mut self, frames: u64) {
        self.every = frames.max(1);
    }

    /// The wall clock offline time is measured with (nanoseconds since the Unix epoch; the
    /// system clock by default): tests and tools that replay time set their own.
    pub fn set_wall_clock(&mut self, now_ns: fn() -> u64) {
        self.wall = now_ns;
    }

    /// The store, for what this type does not wrap.
    pub fn store(&mut self) -> &mut S {
        &mut self.store
    }

    /// Builds this node's scheduler at the clocks of its last commit and loads its durable
    /// timers, binding callbacks with `resolver`; a node that never committed gets
    /// [`Scheduler::new`]. The game and frame clocks resume where they were; the real clock
    /// moves by the wall-clock time offline, which then counts for each timer by its
    /// [`Offline`](tickflow::timer::Offline) policy.
    ///
    /// All or nothing: a damaged row, another schema version or a callback the resolver
    /// cannot bind is an error naming the row, and no scheduler is made.
    pub fn resume<C: 'static>(
        &mut self,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<(Scheduler<C>, Resumed), StoreError> {
        // Rows are read on a thread of their own and set here as each part arrives: reading a
        // large node takes about as long as setting it, and this way the two overlap.
        let (store, node, wall) = (&mut self.store, self.node.as_str(), self.wall);
        let (read, out) = std::thread::scope(|s| {
            let (tx, rx) = mpsc::sync_channel(4);
            let reader = s.spawn(move || store.load_parts(node, &mut |p| tx.send(p).is_ok()));
            let out = resume_from(rx, wall, resolver);
            let read = reader
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (read, out)
        });
        read?; // a failed read explains a short or missing stream better than its symptom
        let out = out?;
        self.frames_since = 0;
        Ok(out)
    }

    /// Loads this node's rows into timers that already run (a scheduler of your own, a
    /// [`TimerManager`](tickflow::timer::TimerManager)), moved to their clocks: a timer with
    /// 2 s left has 2 s left. Prefer [`resume`](Self::resume): here a timer late by more than
    /// its clock's reading keeps only that much of its lateness.
    pub fn load_into<C: 'static>(
        &mut self,
        timers: &mut Timers<C>,
        resolver: &mut dyn Resolver<C>,
    ) -> Result<LoadReport, StoreError> {
        let saved = self.store.load(&self.node)?;
        let clocks = saved.clocks.unwrap_or_default();
        let offline = saved
            .clocks
            .map_or(Span::ZERO, |c| offline_since(self.wall, &c));
        Ok(timers.load_durable(saved.timers, clocks.raw(), offline, resolver)?)
    }

    /// Ends a frame: every [`commit_every`](Self::commit_every) frames, writes the durable
    /// changes since the last commit and runs `effects` in the same transaction (write your
    /// game's outcome of the frame there, from a buffer you clear when this returns
    /// `Ok(true)`). Returns whether it committed.
    ///
    /// On an error nothing was written and the changes stay queued for the next commit; a
    /// [`StoreError::Fenced`] owner moved to another process: drop it here
    /// ([`forget_owner`](Self::forget_owner)) and in the scheduler. A durable timer whose name
    /// or payload is over [`MAX_NAME`](crate::MAX_NAME) or [`MAX_PAYLOAD`](crate::MAX_PAYLOAD)
    /// is refused the same way ([`StoreError::BadRow`]): clear it, and the next commit goes
    /// through.
    pub fn end_frame<C: 'static>(
        &mut self,
        timers: &mut Timers<C>,
        effects: impl FnMut(&mut S::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<bool, StoreError> {
        self.frames_since += 1;
        if self.frames_since < self.every {
            return Ok(false);
        }
        self.commit(timers, effects)?;
        Ok(true)
    }

    /// Writes the durable changes now (see [`end_frame`](Self::end_frame)); returns how many
    /// rows were written or deleted.
    pub fn commit<C: 'static>(
        &mut self,
        timers: &mut Timers<C>,
        effects: impl FnMut(&mut S::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<usize, StoreError> {
        let changes = timers.durable_changes();
        if self.queued.is_empty() {
            self.queued = changes;
        } else {
            // Left by a failed commit: a later change of a key replaces an earlier one (a
            // timer set and then cleared leaves only its removal).
            self.queued.extend(changes);
            self.queued = latest_per_key(std::mem::take(&mut self.queued));
        }
        self.write(timers, false, effects)
    }

    /// Rewrites every row of this node from the timers (after a snapshot restore or a
    /// rollback, which journal nothing).
    pub fn save_all<C: 'static>(
        &mut self,
        timers: &mut Timers<C>,
        effects: impl FnMut(&mut S::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<usize, StoreError> {
        timers.durable_changes(); // superseded
        self.queued = timers
            .durable_timers()
            .into_iter()
            .map(DurableChange::Set)
            .collect();
        self.write(timers, true, effects)
    }

    fn write<C: 'static>(
        &mut self,
        timers: &Timers<C>,
        replace: bool,
        mut effects: impl FnMut(&mut S::Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<usize, StoreError> {
        for change in &self.queued {
            if let DurableChange::Set(t) = change {
                check_sizes(t.owner.get(), &t.name, t.payload.len())?;
            }
        }
        let c = timers.clocks();
        let clocks = NodeClocks {
            game: c.now(Domain::Game).flicks(),
            real: c.now(Domain::Real).flicks(),
            frames: c.now(Domain::Frames).flicks(),
            frame: c.frame(),
            wall_ns: (self.wall)(),
        };
        let mut fences: Vec<(OwnerId, u64)> = (self.queued.iter())
            .map(|ch| match ch {
                DurableChange::Set(t) => t.owner,
                DurableChange::Removed { owner, .. } => *owner,
            })
            .filter(|o| o.get() != 0)
            .map(|o| (o, self.epochs.get(&o).copied().unwrap_or(0)))
            .collect();
        fences.sort_unstable();
        fences.dedup();
        let batch = Batch {
            node: &self.node,
            clocks,
            changes: &self.queued,
            replace,
            fences: &fences,
        };
        self.store.commit(&batch, &mut effects)?;
        self.frames_since = 0;
        let n = self.queued.len();
        self.queued.clear();
        Ok(n)
    }

    /// Takes `owner` for this node (its epoch in the store goes up): from now on a commit by
    /// a process that held it before is refused ([`StoreError::Fenced`]). Call it when an
    /// owner arrives from another process.
    pub fn claim(&mut self, owner: OwnerId) -> Result<u64, StoreError> {
        let epoch = self.store.claim(owner, &self.node)?;
        self.epochs.insert(owner, epoch);
        Ok(epoch)
    }

    /// Records that this node holds `owner` at `epoch`: what
    /// [`Handovers::accept_in`](crate::Handovers::accept_in) or `accept` returned for an owner
    /// that arrived. Its rows are written at that epoch, and the commits pass its fence.
    pub fn hold(&mut self, owner: OwnerId, epoch: u64) {
        self.epochs.insert(owner, epoch);
    }

    /// The epoch this node holds `owner` at (0 when it never claimed or took it): what a
    /// [`Parcel`](crate::Parcel) it sends carries.
    pub fn epoch(&self, owner: OwnerId) -> u64 {
        self.epochs.get(&owner).copied().unwrap_or(0)
    }

    /// Drops what this node queued for `owner` and the epoch it held: the owner is another
    /// process's now.
    pub fn forget_owner(&mut self, owner: OwnerId) {
        self.epochs.remove(&owner);
        self.queued.retain(|ch| match ch {
            DurableChange::Set(t) => t.owner != owner,
            DurableChange::Removed { owner: o, .. } => *o != owner,
        });
    }
}

/// The last change of each key, in the order of those last changes.
fn latest_per_key(changes: Vec<DurableChange>) -> Vec<DurableChange> {
    let key = |ch: &DurableChange| match ch {
        DurableChange::Set(t) => (t.owner, t.name.clone()),
        DurableChange::Removed { owner, name } => (*owner, name.clone()),
    };
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<_> = (changes.into_iter().rev())
        .filter(|ch| seen.insert(key(ch)))
        .collect();
    kept.reverse();
    kept
}

/// Wall-clock time since the commit that left `clocks`.
fn offline_since(wall: fn() -> u64, clocks: &NodeClocks) -> Span {
    Span::from(Duration::from_nanos(wall().saturating_sub(clocks.wall_ns)))
}

/// Builds the scheduler at the clocks of the first part and sets the rows of the others as
/// they arrive. Returning drops `parts`, which stops the reader.
fn resume_from<C: 'static>(
    parts: mpsc::Receiver<Part>,
    wall: fn() -> u64,
    resolver: &mut dyn Resolver<C>,
) -> Result<(Scheduler<C>, Resumed), StoreError> {
    let (clocks, rows) = match parts.recv() {
        Ok(Part::Clocks {
            clocks: Some(clocks),
            rows,
        }) => (clocks, rows),
        Ok(Part::Clocks { clocks: None, .. }) => return Ok((Scheduler::new(), Resumed::default())),
        Ok(Part::Timers(_)) | Err(_) => return Err(out_of_order()),
    };
    let offline = offline_since(wall, &clocks);
    let real = Time::from_flicks(clocks.real).checked_add(offline);
    let real = real.unwrap_or(Time::from_flicks(u64::MAX - 1));
    let mut sched = Scheduler::resumed(Time::from_flicks(clocks.game), real, clocks.frame);
    let mut load = sched.timers().durable_loader(clocks.raw(), offline)?;
    load.reserve(rows);
    for part in parts {
        match part {
            Part::Timers(rows) => load.add(rows, resolver)?,
            Part::Clocks { .. } => return Err(out_of_order()),
        }
    }
    let timers = load.finish();
    Ok((
        sched,
        Resumed {
            resumed: true,
            frame: clocks.frame,
            offline,
            timers,
        },
    ))
}

/// A store that did not give its clocks first, once.
fn out_of_order() -> StoreError {
    StoreError::Restore(RestoreError::Corrupt {
        reason: "the store did not read the node's clocks first, and once".into(),
    })
}
