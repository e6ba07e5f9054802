//! [`Durable`]: a node's durable timers and owners kept in a [`Store`], written at frames' ends,
//! moved between nodes, and recovered whole after a restart.
//!
//! Where the parts are: the commit protocol and its commit numbers in `commit.rs` (a commit
//! whose outcome a lost connection left unknown in `attempt.rs`, the node's whole image
//! written with it in `image.rs`), `resume` in `resume.rs`, the handover steps (`send`,
//! `receive` and the settling each commit does) in `moves.rs`, the node's lease in `lease.rs`,
//! and a fleet's takeover of a lost node's owners in `takeover.rs` (and the lost node's return
//! in `rejoin.rs`). Each of those files holds `Durable`'s verbs for its part, beside this one:
//! one type, a node's durable state, whose parts share its store connection and journal.

mod attempt;
mod commit;
mod image;
mod lease;
mod moves;
mod plan;
mod queue;
mod rejoin;
mod resume;
mod takeover;
mod tally;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use std::time::Duration;

use tickflow::timer::LoadReport;
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::store::Store;
use queue::Queue;

pub use lease::DEFAULT_LEASE;
pub use moves::{Arrival, Handover};
pub use takeover::{Rendezvous, TakeoverRule};

/// What [`Durable::resume`] found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resumed {
    /// The node had committed before: its clocks were resumed and its timers loaded.
    pub resumed: bool,
    /// The frame number the node had committed last (0 for a new node): the next frame is
    /// this plus one.
    pub frame: u64,
    /// Wall-clock time between that commit and the resume.
    pub offline: tickflow::time::Span,
    /// What the offline time did to each timer.
    pub timers: LoadReport,
    /// The owners the registry gives this node, now held again at their epochs.
    pub owners: usize,
    /// Owners this node had sent whose parcels are still on their way: loaded frozen, they
    /// settle by themselves in the commits to come ([`Handover::Moved`] or
    /// [`Handover::Kept`]).
    pub in_flight: Vec<OwnerId>,
    /// Your state from the node's image, when its last commit was
    /// [`commit_image`](Durable::commit_image): the scheduler is then the image's, exactly as
    /// it was committed (and `timers` is empty: no row was loaded into it).
    pub state: Option<Vec<u8>>,
}

/// One commit: its number and the frames it makes durable. Your effects hook gets it, so
/// that it writes the effects of exactly these frames (and can key them by the number), and
/// [`Durable::end_frame`] returns it, so that you drop the effects of these frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    number: u64,
    first: u64,
    last: u64,
    dropped: Vec<OwnerId>,
}

impl Commit {
    /// The node's commit number: 1 for its first commit, one more for each after, never
    /// reused (a commit that failed is tried again under the same number).
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The frames whose effects this commit stores: from the one after the last commit that
    /// landed to the current one. After a commit whose outcome was unknown turned out to have
    /// landed, this starts after it, so no frame's effects are written twice.
    pub fn frames(&self) -> std::ops::RangeInclusive<u64> {
        self.first..=self.last
    }

    /// Whether `frame`'s effects are in this commit.
    pub fn covers(&self, frame: u64) -> bool {
        self.frames().contains(&frame)
    }

    /// Owners whose arrival or adoption this commit found stale (another node took them
    /// first) and undid, before your hook ran: write no effect of theirs (their new holder
    /// makes those calls), and drop them ([`Handover::Dropped`] says so too).
    pub fn dropped(&self) -> &[OwnerId] {
        &self.dropped
    }
}

/// A node's durable timers and owners in a store: the one way in to this crate.
///
/// - Mark the timers that must survive with
///   [`TimerBuilder::durable`](tickflow::timer::TimerBuilder::durable) (a building's
///   completion, energy regeneration); the rest of the scheduler stays in memory. A durable
///   timer is a row keyed by its node, owner and name, and its callback is bound again by
///   name after a restart (a [`Registry`](tickflow::snapshot::Registry)).
/// - At start, [`resume`](Self::resume) takes the node for this process and gives back all it
///   held at its last commit: the scheduler at that commit's clocks with its durable timers,
///   the owners the registry gives it, and its handovers in flight. It is all the recovery a
///   restart needs.
/// - Call [`end_frame`](Self::end_frame) after each frame: every
///   [`commit_every`](Self::commit_every) frames (1 by default) it writes the frame's changes,
///   the handovers begun with [`send`](Self::send) and [`receive`](Self::receive), and your
///   effects in one transaction, numbered, so that an effect and its timer's change are stored
///   together once, or not at all.
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
/// let mut durable = Durable::new(Sqlite::create(&path).unwrap(), "zone-1");
/// let mut registry = Registry::new().timer("built", built);
/// let (mut sched, _) = durable.resume(&mut registry).unwrap();
/// sched.timers().after(Frames(10)).owner(OwnerId::new(7)).name("built")
///     .durable(Offline::Freeze).call(built);
/// let mut log = Vec::new();
/// for _ in 0..4 {
///     sched.tick(millis(16), &mut log);
///     durable.end_frame(&mut sched, |_, _| Ok(())).unwrap();
/// }
/// drop((sched, durable));
///
/// // Second run: resumed at frame 4, the building completes on frame 10, as it would have.
/// let mut durable = Durable::new(Sqlite::open(&path).unwrap(), "zone-1");
/// let (mut sched, resumed) = durable.resume(&mut registry).unwrap();
/// assert_eq!((resumed.frame, resumed.timers.on_time, resumed.owners), (4, 1, 1));
/// while log.is_empty() {
///     sched.tick(millis(16), &mut log);
/// }
/// assert_eq!(log, [10]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct Durable<S: Store> {
    store: S,
    node: String,
    /// This process's token in the node's lease.
    token: u64,
    lease: Duration,
    /// `resume` took the node: commits may be made.
    started: bool,
    /// The number of the last commit known to have landed.
    committed: u64,
    /// The frame of the last commit known to have landed.
    landed_frame: u64,
    /// When the lease was last renewed (by a commit or on its own).
    renewed: std::time::Instant,
    every: u64,
    frames_since: u64,
    /// Owners the registry gives this node, at their epochs.
    epochs: FxHashMap<OwnerId, u64>,
    /// This node's timer rows as landed: each row's checksum by its key's hash, and their
    /// count and XOR (what the node's row records, and a load checks).
    rows: tally::Rows,
    /// What the next commit writes.
    queue: Queue,
    /// A commit whose outcome is unknown (its connection failed at `COMMIT`).
    attempt: Option<attempt::Attempt>,
    /// Parcels this node sent that landed and are not settled: owner -> (epoch, receiver).
    in_flight: BTreeMap<OwnerId, (u64, String)>,
    /// Handovers settled or refused since [`Durable::handovers`] was last called.
    events: Vec<Handover>,
    /// Which live node adopts which owner of a lost one; `None`: this node does not adopt.
    takeover: Option<Box<dyn TakeoverRule>>,
    /// The owners of lost nodes this node is to adopt, as worked out last.
    plans: plan::Plans,
    /// The wall clock set with [`Durable::set_wall_clock`]; `None`: the store's.
    wall: Option<fn() -> u64>,
    /// The last landed commit's wall-clock stamp (ns) and the real clock's reading (flicks)
    /// it stands for: how an adoption maps this node's clocks to the wall clock.
    stamp: Option<(u64, u64)>,
    /// The node's offline time over all its restarts (flicks), as its next commit writes it:
    /// the rows of timers this time moves (`DurableTimer::shifts_offline`) are stored this
    /// much later than they are due (see `Row::of`), so a restart moves them all by moving
    /// this alone.
    shift: u64,
    /// The image the commit under way writes ([`Durable::commit_image`]).
    image: Option<Vec<u8>>,
}

impl<S: Store> Durable<S> {
    /// The durable timers of node `node` (a process, zone or shard: the clocks its rows are
    /// on) in `store`. Nothing is read or written until [`resume`](Self::resume).
    pub fn new(store: S, node: impl Into<String>) -> Durable<S> {
        Durable {
            store,
            node: node.into(),
            token: lease::token(),
            lease: DEFAULT_LEASE,
            started: false,
            committed: 0,
            landed_frame: 0,
            renewed: std::time::Instant::now(),
            every: 1,
            frames_since: 0,
            epochs: FxHashMap::default(),
            rows: tally::Rows::default(),
            queue: Queue::default(),
            attempt: None,
            in_flight: BTreeMap::new(),
            events: Vec::new(),
            takeover: None,
            plans: Default::default(),
            wall: None,
            stamp: None,
            shift: 0,
            image: None,
        }
    }

    /// Commits every `frames` frames (at least 1): fewer transactions, and a crash loses up to
    /// `frames - 1` frames (then re-run from the last commit, with their effects).
    pub fn commit_every(&mut self, frames: u64) {
        self.every = frames.max(1);
    }

    /// How long this process's hold on the node lasts without a commit ([`DEFAULT_LEASE`]):
    /// another process that wants the node waits that long for a sign of life before it
    /// takes over. `end_frame` renews it on frames that do not commit, too.
    pub fn set_lease(&mut self, lease: Duration) {
        self.lease = lease.max(Duration::from_millis(1));
    }

    /// The wall clock offline time is measured with (nanoseconds since the Unix epoch): tests
    /// and tools that replay time set their own. By default it is the store's clock — the
    /// PostgreSQL server's, or this machine's for SQLite — read in each commit's transaction,
    /// so that nodes whose own clocks disagree still agree on how long a node was down (a
    /// node that adopts another's owners measures their offline time from that node's last
    /// commit).
    pub fn set_wall_clock(&mut self, now_ns: fn() -> u64) {
        self.wall = Some(now_ns);
    }

    /// The node's name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The store, for what this type does not wrap (your own tables outside a commit).
    pub fn store(&mut self) -> &mut S {
        &mut self.store
    }

    /// The number of the last commit known to have landed (0 before the first).
    pub fn committed(&self) -> u64 {
        self.committed
    }

    /// The epoch this node holds `owner` at (`None`: the registry gives it another node, or
    /// nobody yet).
    pub fn epoch(&self, owner: OwnerId) -> Option<u64> {
        self.epochs.get(&owner).copied()
    }

    /// The owners this node holds, with their epochs, in owner order.
    pub fn owners(&self) -> Vec<(OwnerId, u64)> {
        let mut v: Vec<_> = self.epochs.iter().map(|(&o, &e)| (o, e)).collect();
        v.sort_unstable();
        v
    }

    /// Stops running the node: gives it up, so that the next process takes it at once instead
    /// of waiting out this one's lease. What was not committed is not written (commit first).
    ///
    /// # Errors
    ///
    /// A database error: the node was not handed back, and the next process to resume it
    /// waits out this one's lease instead (nothing else is lost).
    pub fn close(mut self) -> Result<(), StoreError> {
        if !self.started {
            return Ok(());
        }
        lease::release(&mut self.store, &self.node, self.token)
    }

    /// Whether a commit's outcome is unknown (its connection failed at `COMMIT`): the next
    /// commit finds out first.
    pub fn is_uncertain(&self) -> bool {
        self.attempt.is_some()
    }
}

impl<S: Store> std::fmt::Debug for Durable<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durable")
            .field("node", &self.node)
            .field("committed", &self.committed)
            .field("owners", &self.epochs.len())
            .field("in_flight", &self.in_flight.len())
            .field("uncertain", &self.attempt.is_some())
            .finish_non_exhaustive()
    }
}
