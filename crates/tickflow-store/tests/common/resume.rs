//! A node's commits and its resume: the exact frame, effects with the commit, limits, large
//! nodes, offline catch-up, commits whose outcome is unknown, and damage.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_store::backend::{NodeRead, NodeRow, OwnerRead, OwnerSwap, ParcelRead, Row};
use tickflow_store::{Durable, Inspect, Store, StoreError};

use super::{populate, record, registry, resume, run, Log, DT};

/// A world that stops at frame 40 having committed only to frame 33, resumes, and must make
/// every call of the uncrashed run from frame 34 on, on the same frame.
pub fn resumes_on_the_exact_frame<S: Store>(open: impl Fn() -> S) {
    let mut reference = Log::new();
    {
        let mut sched = Scheduler::new();
        populate(&mut sched, 300, 42);
        for _ in 0..120 {
            sched.tick(DT, &mut reference);
        }
    }
    let (mut durable, mut sched) = resume(&open, "zone");
    populate(&mut sched, 300, 42);
    let mut log = Log::new();
    run(&mut durable, &mut sched, &mut log, 40, 33);
    assert_eq!(durable.committed(), 33);
    drop((sched, durable));

    let mut durable = super::node(&open, "zone");
    let (mut sched, resumed) = durable.resume(&mut registry()).unwrap();
    assert_eq!(
        (resumed.frame, durable.committed(), resumed.owners),
        (33, 33, 17)
    );
    assert!(resumed.timers.loaded > 0 && resumed.timers.loaded == resumed.timers.on_time);
    assert!(
        sched.timers().durable_changes().is_empty(),
        "a resume leaves the rows as they are: no rewrite of the world"
    );
    log.retain(|c| c.0 <= 33);
    run(&mut durable, &mut sched, &mut log, 120, 120);
    assert_eq!(log.len(), reference.len());
    assert_eq!(
        log, reference,
        "every call on its frame, none lost, none twice"
    );
}

/// The effects hook writes in the commit's transaction: when it fails, nothing is written, and
/// the next commit covers both frames.
pub fn failed_effects_roll_the_commit_back<S: Store>(open: impl Fn() -> S) {
    let (mut d, mut sched) = resume(&open, "n");
    super::set(&mut sched, 1, "a", 60);
    sched.tick(DT, &mut Log::new());
    let err = d
        .end_frame(&mut sched, |_, c| {
            assert_eq!(c.frames(), 1..=1);
            Err(StoreError::Effects("no room".into()))
        })
        .unwrap_err();
    assert!(err.to_string().contains("no room"));
    let saved = open().saved("n").unwrap();
    assert!(saved.timers.is_empty() && saved.clocks.is_none() && saved.committed == 0);
    // The changes stayed queued: the next commit writes them, for both frames.
    sched.tick(DT, &mut Log::new());
    let mut frames = None;
    let c = d
        .end_frame(&mut sched, |_, c| {
            frames = Some(c.frames());
            Ok(())
        })
        .unwrap()
        .unwrap();
    assert_eq!((c.number(), frames), (1, Some(1..=2)));
    assert_eq!(open().saved("n").unwrap().timers.len(), 1);
}

/// A node of several parts' worth of rows resumes as it was committed (every row's time and
/// place in set order), and one row the resolver cannot bind, in whichever part it comes,
/// fails the whole resume and leaves the store as it was.
pub fn a_resume_in_many_parts_is_whole<S: Store>(open: impl Fn() -> S) {
    let n = 3 * 4096 + 7;
    let (mut durable, mut sched) = resume(&open, "parts");
    populate(&mut sched, n, 9);
    sched.tick(DT, &mut Log::new());
    durable.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    let committed = sched.timers().durable_timers();
    drop((sched, durable));

    let last = committed.last().unwrap().name.clone();
    let mut refusing = Registry::new().other_timers(move |info: &tickflow::timer::TimerInfo| {
        (info.name.as_deref() != Some(last.as_str())).then(|| Box::new(record) as _)
    });
    let mut durable = super::node(&open, "parts");
    let err = durable.resume(&mut refusing).map(drop).unwrap_err();
    assert!(matches!(err, StoreError::Restore(_)), "{err}");

    let (mut sched, resumed) = durable.resume(&mut registry()).unwrap();
    assert_eq!(resumed.timers.loaded, committed.len());
    assert!(committed.len() > 2 * 4096);
    assert_eq!(sched.timers().durable_timers(), committed);
    assert!(sched.timers().durable_changes().is_empty());
}

static WALL: AtomicU64 = AtomicU64::new(1_900_000_000_000_000_000);

fn wall() -> u64 {
    WALL.load(Ordering::Relaxed)
}

/// A game-clock timer with `Offline::CatchUp` whose offline time is longer than the game
/// clock's reading makes one call per missed period (capped by the catch-up cap), not only as
/// many as fit between time zero and now.
pub fn lapsed_catch_up_timers_make_every_missed_call<S: Store>(open: impl Fn() -> S) {
    // Due at 1 s with 0.992 s on the clock: after `s` seconds offline and one 16 ms frame, its
    // calls due at 1, 2, .., s + 1 s of its own time are late: s + 1 of them, 1,000 at most.
    for (offline_s, want) in [(5, 6), (9, 10), (30, 31), (100, 101), (5000, 1000)] {
        let node = format!("n{offline_s}");
        let mut d = super::node(&open, node.as_str());
        d.set_wall_clock(wall);
        let (mut sched, _) = d.resume(&mut registry()).unwrap();
        (sched
            .timers()
            .every(secs(1.0))
            .owner(OwnerId::new(offline_s))
            .name("regen"))
        .durable(Offline::CatchUp)
        .call(record);
        let mut log = Log::new();
        for _ in 0..62 {
            sched.tick(DT, &mut log); // 0.992 s: the first call is 8 ms away
        }
        d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
        assert!(log.is_empty());
        drop((sched, d));

        WALL.fetch_add(offline_s * 1_000_000_000, Ordering::Relaxed);
        let mut d = super::node(&open, node.as_str());
        d.set_wall_clock(wall);
        let (mut sched, resumed) = d.resume(&mut registry()).unwrap();
        assert_eq!(resumed.timers.caught_up, 1);
        sched.tick(DT, &mut log);
        assert_eq!(log.len(), want, "{offline_s} s offline");
    }
}

static SHIFT_WALL: AtomicU64 = AtomicU64::new(1_900_000_000_000_000_000);

fn shift_wall() -> u64 {
    SHIFT_WALL.load(Ordering::Relaxed)
}

/// Timers that count offline time and are still on time after a restart are moved without
/// being rewritten: the node keeps its offline time once, in its row, and its rows read back
/// with it are due where the restarts moved them (here over two restarts); frozen timers do not
/// move, nor do real-clock ones (the clock moved). Without the node's shift, the first commit
/// after a restart rewrote every game-clock timer that counts offline time.
pub fn a_restart_moves_timers_without_rewriting_them<S: Store>(open: impl Fn() -> S) {
    let mut d = super::node(&open, "shift");
    d.set_wall_clock(shift_wall);
    let (mut sched, _) = d.resume(&mut registry()).unwrap();
    for o in 1..=50 {
        for (name, offline) in [("catch", Offline::CatchUp), ("freeze", Offline::Freeze)] {
            (sched
                .timers()
                .every(secs(100.0))
                .owner(OwnerId::new(o))
                .name(name))
            .durable(offline)
            .call(record);
        }
        // On the real clock, which itself moves by the time offline: due when it was.
        (sched.timers().every(secs(100.0)).real())
            .owner(OwnerId::new(o))
            .name("real")
            .durable(Offline::CatchUp)
            .call(record);
    }
    let mut log = Log::new();
    sched.tick(DT, &mut log);
    d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    let by_seq = |mut v: Vec<tickflow::timer::DurableTimer>| {
        v.sort_by_key(|t| t.seq);
        v
    };
    let before = by_seq(sched.timers().durable_timers());
    drop((sched, d));
    let mut total = 0.0;
    for offline_s in [3u64, 7] {
        SHIFT_WALL.fetch_add(offline_s * 1_000_000_000, Ordering::Relaxed);
        total += offline_s as f64;
        let mut d = super::node(&open, "shift");
        d.set_wall_clock(shift_wall);
        let (mut sched, resumed) = d.resume(&mut registry()).unwrap();
        assert_eq!(resumed.timers.on_time, 150);
        assert!(
            sched.timers().durable_changes().is_empty(),
            "nothing for the first commit to rewrite"
        );
        let now = by_seq(sched.timers().durable_timers());
        for (b, n) in before.iter().zip(&now) {
            let moved = if b.name == "catch" {
                secs(total).flicks()
            } else {
                0
            };
            assert_eq!(n.time + moved, b.time, "{} of {:?}", b.name, b.owner);
        }
        sched.tick(DT, &mut log);
        d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
        let saved = by_seq(d.store().saved("shift").unwrap().timers);
        assert_eq!(
            saved,
            by_seq(sched.timers().durable_timers()),
            "rows read back"
        );
    }
    assert!(log.is_empty());
}

/// How the flaky store's next commit (a transaction that advanced a node) ends: 0 as it
/// should, 1 committed but reported uncertain, 2 rolled back and reported uncertain.
static FLAKE: AtomicU8 = AtomicU8::new(0);
static ADVANCED: AtomicBool = AtomicBool::new(false);

/// What the flaky store does once right after its next read of a node's registry rows (inside
/// that read's transaction): another connection's commit landing between two reads.
pub static AFTER_OWNERS: Mutex<Option<Box<dyn FnOnce() + Send>>> = Mutex::new(None);

/// A real store whose `COMMIT` answer can be lost on purpose: what a connection that dies at
/// `COMMIT` does to its caller.
pub struct Flaky<S>(pub S);

fn uncertain() -> StoreError {
    StoreError::Uncertain(Box::new(StoreError::Setting(
        "the connection died at COMMIT".into(),
    )))
}

macro_rules! pass {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(tx: &mut Self::Tx<'_>, $($arg: $ty),*) -> Result<$ret, StoreError> {
            S::$name(tx, $($arg),*)
        })*
    };
}

impl<S: Store> Store for Flaky<S> {
    type Tx<'t> = S::Tx<'t>;
    fn begin(&mut self, write: bool) -> Result<Self::Tx<'_>, StoreError> {
        self.0.begin(write)
    }
    fn finish(tx: Self::Tx<'_>) -> Result<(), StoreError> {
        if !ADVANCED.swap(false, Ordering::Relaxed) {
            return S::finish(tx);
        }
        match FLAKE.swap(0, Ordering::Relaxed) {
            1 => S::finish(tx).and(Err(uncertain())),
            2 => {
                drop(tx);
                Err(uncertain())
            }
            _ => S::finish(tx),
        }
    }
    pass! {
        now_us_in() -> i64;
        node_in(node: &str, lock: bool) -> Option<NodeRead>;
        put_node_in(node: &str, row: &NodeRead) -> ();
        owners_in(owners: &[i64], lock: bool) -> Vec<OwnerRead>;
        all_owners_in() -> Vec<OwnerRead>;
        insert_owners_in(rows: &[OwnerRead]) -> Vec<bool>;
        take_parcels_in(swaps: &[OwnerSwap<'_>]) -> Vec<bool>;
        send_parcels_in(parcels: &[ParcelRead]) -> Vec<Option<OwnerRead>>;
        count_rows_in(node: &str) -> u64;
        write_rows_in(node: &str, rows: &[Row]) -> ();
        delete_rows_in(node: &str, keys: &[(i64, &str)]) -> ();
        clear_rows_in(node: &str) -> ();
        delete_owner_rows_in(node: &str, owners: &[i64]) -> Vec<(i64, String, i64)>;
        put_parcels_in(parcels: &[ParcelRead]) -> Vec<bool>;
        remove_parcels_in(keys: &[(i64, i64)]) -> Vec<bool>;
        parcels_in(keys: &[(i64, i64)]) -> Vec<Option<ParcelRead>>;
        parcels_of_in(node: &str, to: bool, limit: usize) -> Vec<ParcelRead>;
    }
    fn owners_of_in(tx: &mut Self::Tx<'_>, node: &str) -> Result<Vec<OwnerRead>, StoreError> {
        let read = S::owners_of_in(tx, node)?;
        let hook = AFTER_OWNERS.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        Ok(read)
    }
    fn advance_node_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        holder: u64,
        committed: u64,
        row: &NodeRow,
        sum: i64,
        lease_us: i64,
    ) -> Result<bool, StoreError> {
        ADVANCED.store(true, Ordering::Relaxed);
        S::advance_node_in(tx, node, holder, committed, row, sum, lease_us)
    }
    fn rows_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        sink: &mut dyn FnMut(Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        S::rows_in(tx, node, sink)
    }
    fn swap_owners_in(
        tx: &mut Self::Tx<'_>,
        swaps: &[OwnerSwap<'_>],
    ) -> Result<Vec<bool>, StoreError> {
        S::swap_owners_in(tx, swaps)
    }
    fn nodes_in(tx: &mut Self::Tx<'_>) -> Result<Vec<(String, NodeRead)>, StoreError> {
        S::nodes_in(tx)
    }
    fn owner_rows_in(
        tx: &mut Self::Tx<'_>,
        node: &str,
        owners: &[i64],
        sink: &mut dyn FnMut(Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        S::owner_rows_in(tx, node, owners, sink)
    }
}

/// Commits whose answer is lost, landed or not: the next commit finds out from the node's
/// commit number, the frames each landed commit covers are each frame once, and the rows end
/// as an untroubled run's.
pub fn a_commit_whose_outcome_is_unknown_is_never_written_twice<S: Store>(open: impl Fn() -> S) {
    let mut reference = Scheduler::new();
    populate(&mut reference, 60, 4);
    let mut d = Durable::new(Flaky(open()), "flaky");
    let (mut sched, _) = d.resume(&mut registry()).unwrap();
    populate(&mut sched, 60, 4);
    let mut covered: Vec<u64> = Vec::new();
    let (mut log, mut ref_log) = (Log::new(), Log::new());
    for frame in 1..=90u64 {
        sched.tick(DT, &mut log);
        reference.tick(DT, &mut ref_log);
        // Frames 10-12 and 40: the answer lost after landing; 20-21 and 50: lost, not landed.
        let flake = match frame {
            10..=12 | 40 => 1,
            20 | 21 | 50 => 2,
            _ => 0,
        };
        FLAKE.store(flake, Ordering::Relaxed);
        let mut frames = None;
        let r = d.end_frame(&mut sched, |_, c| {
            frames = Some(c.frames());
            Ok(())
        });
        match r {
            Ok(Some(c)) => {
                assert_eq!(Some(c.frames()), frames);
                covered.extend(c.frames());
            }
            Err(e) => {
                assert!(e.is_uncertain() && flake != 0, "frame {frame}: {e}");
                assert!(d.is_uncertain());
                if flake == 1 {
                    // It landed: the next commit learns so and covers only the frames after.
                    covered.extend(frames.unwrap());
                }
            }
            Ok(None) => unreachable!("commits every frame"),
        }
    }
    assert_eq!(
        covered,
        (1..=90).collect::<Vec<_>>(),
        "each frame once, none lost"
    );
    assert_eq!(
        d.committed(),
        90 - 3,
        "three commits did not land, and were made again"
    );
    let saved = d.store().0.saved("flaky").unwrap();
    let mut rows = saved.timers;
    rows.sort_by_key(|t| t.seq);
    assert_eq!(
        rows,
        reference.timers().durable_timers(),
        "the rows of an untroubled run"
    );
    assert_eq!(log, ref_log);
}

/// Rows that vanished or appeared behind the node's back are refused, naming the node: the
/// node's row records their count and checksums.
pub fn vanished_rows_and_nodes_are_refused<S: Store>(open: impl Fn() -> S) {
    let (mut d, mut sched) = resume(&open, "n");
    populate(&mut sched, 20, 8);
    sched.tick(DT, &mut Log::new());
    d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    drop((d, sched));
    let victim = open().saved("n").unwrap().timers[3].clone();
    let mut store = open();
    let mut tx = store.begin(true).unwrap();
    S::delete_rows_in(
        &mut tx,
        "n",
        &[(victim.owner.get() as i64, victim.name.as_str())],
    )
    .unwrap();
    S::finish(tx).unwrap();
    let mut d = super::node(&open, "n");
    let err = d.resume(&mut registry()).map(drop).unwrap_err().to_string();
    assert!(
        err.contains("vanished or appeared") && err.contains("\"n\""),
        "{err}"
    );
}
