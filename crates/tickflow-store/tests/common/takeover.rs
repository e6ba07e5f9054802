//! A fleet without a director: live nodes adopt a lost node's owners (each once, whatever the
//! adopters' views), parcels addressed to a lost node find a receiver, and a node that was
//! paused past its lease comes back fenced and rejoins with what it kept.

use std::time::Duration;

use tickflow::prelude::*;
use tickflow::timer::Offline;
use tickflow_store::{
    Durable, Handover, Handovers, Holder, Inspect, Rendezvous, Store, StoreError, TakeoverRule,
};

use super::{node, registry, set, Log, DT};

/// A node that takes part in takeovers, resumed. Nodes named "a" have the tests' 30 ms
/// lease (they are the ones lost); the others a long one, so that a loaded machine does not
/// make them lost too.
fn member<S: Store>(
    open: &impl Fn() -> S,
    name: &str,
    rule: impl TakeoverRule + 'static,
) -> (Durable<S>, Scheduler<Log>) {
    let mut d = node(open, name);
    if name != "a" {
        d.set_lease(Duration::from_secs(30));
    }
    d.set_takeover(rule);
    let (sched, _) = d.resume(&mut registry()).unwrap();
    (d, sched)
}

fn frame<S: Store>(d: &mut Durable<S>, sched: &mut Scheduler<Log>, log: &mut Log) {
    sched.tick(DT, log);
    d.end_frame(sched, |_, _| Ok(())).unwrap();
}

/// Past the 30 ms lease of the tests' nodes.
fn outlive_lease() {
    std::thread::sleep(Duration::from_millis(60));
}

/// A rule under which every node believes it adopts every owner: what two adopters with
/// different views of the fleet do.
struct Greedy(&'static str);

impl TakeoverRule for Greedy {
    fn adopter(&self, _: OwnerId, _: &str, live: &[&str]) -> usize {
        live.iter().position(|&n| n == self.0).unwrap()
    }
}

/// Node "a" dies holding 20 owners, each with a timer due 10 + owner frames after it was set;
/// it committed 3 frames. "b" and "c" share them out by the rule, each owner once, and each
/// timer fires once, on the frame it has left: 7 + owner frames after its adoption.
pub fn a_lost_nodes_owners_are_adopted_once<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = member(&open, "a", Rendezvous);
    let (mut b, mut sb) = member(&open, "b", Rendezvous);
    let (mut c, mut sc) = member(&open, "c", Rendezvous);
    for o in 1..=20 {
        set(&mut sa, o, "due", 10 + o);
    }
    let mut log = Log::new();
    for _ in 0..3 {
        frame(&mut a, &mut sa, &mut log);
    }
    drop((a, sa)); // a crash
    outlive_lease();
    let mut adopted = [Vec::new(), Vec::new()];
    // b takes its share 3 at a time (its plan of a's owners is worked out once), c all at once.
    for (i, (d, s)) in [(&mut b, &mut sb), (&mut c, &mut sc)]
        .into_iter()
        .enumerate()
    {
        let limit = if i == 0 { 3 } else { 100 };
        loop {
            let arrivals = d.adopt(s, &mut registry(), limit).unwrap();
            assert!(arrivals.iter().all(|x| x.adopted && x.sender == "a"));
            assert!(arrivals.len() <= limit);
            adopted[i].extend(arrivals.iter().map(|x| x.owner.get()));
            if arrivals.is_empty() {
                break;
            }
        }
        frame(d, s, &mut log);
    }
    let (nb, nc) = (adopted[0].len(), adopted[1].len());
    assert_eq!(nb + nc, 20, "{adopted:?}");
    assert!(nb > 0 && nc > 0, "the rule spreads them: {adopted:?}");
    for o in 1..=20u64 {
        let at = if adopted[0].contains(&o) { "b" } else { "c" };
        let holder = open().holder(OwnerId::new(o)).unwrap();
        let want = Holder {
            node: at.into(),
            epoch: 1,
        };
        assert_eq!(holder, Some(want), "owner {o}");
    }
    let left = open().saved("a").unwrap();
    assert!(left.timers.is_empty(), "a's rows moved: {:?}", left.timers);
    // Adopted between frames 0 and 1: the timer of owner o has 7 + o frames left.
    log.clear();
    for _ in 0..40 {
        frame(&mut b, &mut sb, &mut log);
        frame(&mut c, &mut sc, &mut log);
    }
    let mut fired: Vec<(u64, u64)> = log.iter().map(|e| (e.1, e.0)).collect();
    fired.sort_unstable();
    let want: Vec<(u64, u64)> = (1..=20).map(|o| (o, 7 + o)).collect();
    assert_eq!(fired, want, "(owner, frame) of each call");
    // Both adopters resume whole: their rows and node rows agree.
    b.close().unwrap();
    c.close().unwrap();
    for n in ["b", "c"] {
        let mut d = node(&open, n);
        let (_, r) = d.resume(&mut registry()).unwrap();
        assert_eq!(r.owners, if n == "b" { nb } else { nc });
    }
}

/// A lost node of 10,000 owners is read a page at a time: one `adopt` reads a bounded part of
/// its registry (4,096 rows), so it returns fewer owners than its limit allows while more are
/// left, and the next calls take the rest; each owner is adopted once, by the rule's pick.
pub fn a_large_lost_node_is_adopted_a_page_at_a_time<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = member(&open, "a", Rendezvous);
    let (mut b, mut sb) = member(&open, "b", Rendezvous);
    let (mut c, mut sc) = member(&open, "c", Rendezvous);
    const N: u64 = 10_000;
    for o in 1..=N {
        set(&mut sa, o, "due", 1_000);
    }
    let mut log = Log::new();
    frame(&mut a, &mut sa, &mut log);
    drop((a, sa));
    outlive_lease();
    let mut seen = std::collections::BTreeMap::new();
    for (name, d, s) in [("b", &mut b, &mut sb), ("c", &mut c, &mut sc)] {
        let first = d.adopt(s, &mut registry(), usize::MAX).unwrap();
        assert!(
            (1..=4_096).contains(&first.len()),
            "{name}: one call reads at most two pages of 2,048 rows: {}",
            first.len()
        );
        let mut calls = 1;
        let mut got = first;
        loop {
            for x in &got {
                assert!(
                    seen.insert(x.owner.get(), name).is_none(),
                    "{:?} twice",
                    x.owner
                );
            }
            got = d.adopt(s, &mut registry(), usize::MAX).unwrap();
            if got.is_empty() {
                break;
            }
            calls += 1;
        }
        assert!(calls >= 2, "{name}: its share took one call");
        frame(d, s, &mut log);
    }
    assert_eq!(seen.len() as u64, N, "every owner adopted");
    let live = ["b", "c"];
    for (&o, &at) in &seen {
        let pick = live[Rendezvous.adopter(OwnerId::new(o), "a", &live)];
        assert_eq!(at, pick, "owner {o}");
    }
    assert!(open().saved("a").unwrap().timers.is_empty());
}

/// Two adopters that both believe an owner is theirs import it both; the registry's
/// compare-and-set lets the first commit take it, and the second drops its copy.
pub fn two_adopters_of_one_owner_win_once<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = member(&open, "a", Rendezvous);
    let (mut b, mut sb) = member(&open, "b", Greedy("b"));
    let (mut c, mut sc) = member(&open, "c", Greedy("c"));
    for o in 1..=5 {
        set(&mut sa, o, "due", 4);
    }
    let mut log = Log::new();
    frame(&mut a, &mut sa, &mut log);
    drop((a, sa));
    outlive_lease();
    assert_eq!(b.adopt(&mut sb, &mut registry(), 100).unwrap().len(), 5);
    assert_eq!(c.adopt(&mut sc, &mut registry(), 100).unwrap().len(), 5);
    frame(&mut b, &mut sb, &mut log);
    sc.tick(DT, &mut log);
    let commit = c.end_frame(&mut sc, |_, _| Ok(())).unwrap().unwrap();
    assert_eq!(
        commit.dropped().len(),
        5,
        "the hook is told whose effects not to write"
    );
    let dropped = c.handovers();
    assert_eq!(dropped.len(), 5, "{dropped:?}");
    assert!(dropped
        .iter()
        .all(|h| matches!(h, Handover::Dropped { .. })));
    assert_eq!(c.owners(), vec![]);
    for _ in 0..6 {
        frame(&mut b, &mut sb, &mut log);
        frame(&mut c, &mut sc, &mut log);
    }
    assert_eq!(log.len(), 5, "each timer once: {log:?}");
    assert_eq!(open().saved("c").unwrap().timers.len(), 0);
}

/// "a" stalls past its lease (a SIGSTOP, say) while "b" adopts its owners. Its next commit is
/// refused; it rejoins by itself without them, keeps its own owner-0 timer and the owners
/// nobody took, and its next commit lands; a later resume of it agrees.
pub fn a_fenced_node_rejoins_without_what_was_taken<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = member(&open, "a", Rendezvous);
    let (mut b, mut sb) = member(&open, "b", Rendezvous);
    for o in 1..=6 {
        set(&mut sa, o, "due", 50);
    }
    (sa.timers().after(Frames(50)).name("world"))
        .durable(Offline::Freeze)
        .call(super::record);
    let mut log = Log::new();
    frame(&mut a, &mut sa, &mut log);
    outlive_lease(); // a is paused
                     // b adopts 4 of the 6 (its limit), and leaves 2.
    let got = b.adopt(&mut sb, &mut registry(), 4).unwrap();
    let mut took: Vec<u64> = got.iter().map(|x| x.owner.get()).collect();
    took.sort_unstable();
    assert_eq!(took.len(), 4);
    frame(&mut b, &mut sb, &mut log);
    // a wakes up: one frame runs, its commit is refused, and it rejoins.
    sa.tick(DT, &mut log);
    let e = a.end_frame(&mut sa, |_, _| Ok(())).unwrap_err();
    assert!(matches!(e, StoreError::Rejoined { taken: 4, .. }), "{e}");
    let mut taken: Vec<_> = a.handovers();
    taken.sort_by_key(|h| format!("{h:?}"));
    let want: Vec<_> = (took.iter())
        .map(|&o| Handover::TakenOver {
            owner: OwnerId::new(o),
            by: "b".into(),
        })
        .collect();
    assert_eq!(taken, want);
    let kept: Vec<u64> = a.owners().iter().map(|(o, _)| o.get()).collect();
    let want: Vec<u64> = (1..=6).filter(|o| !took.contains(o)).collect();
    assert_eq!(kept, want);
    assert_eq!(
        sa.timers().durable_timers().len(),
        3,
        "the 2 kept and the node's own"
    );
    frame(&mut a, &mut sa, &mut log);
    drop((a, sa));
    let mut a = node(&open, "a");
    let (_, r) = a.resume(&mut registry()).unwrap();
    // Frame 2 ran while fenced and was committed with frame 3, for the owners kept.
    assert_eq!((r.owners, r.timers.loaded, r.frame), (2, 3, 3));
}

/// A parcel on its way to a node that is lost is received by the live node the rule picks
/// for it, and its sender sees the owner moved there.
pub fn a_parcel_to_a_lost_node_finds_a_receiver<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = member(&open, "a", Rendezvous);
    let (mut c, mut sc) = member(&open, "c", Rendezvous);
    // "b" dies before the parcel arrives: a node of the short lease.
    let mut b = node(&open, "b");
    b.resume(&mut registry()).unwrap();
    drop(b);
    set(&mut sa, 9, "due", 30);
    let mut log = Log::new();
    frame(&mut a, &mut sa, &mut log);
    a.send(&mut sa, OwnerId::new(9), "b", b"orc".to_vec())
        .unwrap();
    frame(&mut a, &mut sa, &mut log);
    outlive_lease();
    // a and c are live (a renews its lease with a frame); the parcel's sender is not a
    // candidate to receive it, so c does.
    frame(&mut a, &mut sa, &mut log);
    let mut got = a.adopt(&mut sa, &mut registry(), 10).unwrap();
    got.extend(c.adopt(&mut sc, &mut registry(), 10).unwrap());
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(!got[0].adopted && got[0].state == b"orc");
    frame(&mut c, &mut sc, &mut log);
    frame(&mut a, &mut sa, &mut log);
    frame(&mut a, &mut sa, &mut log);
    let holder = open().holder(OwnerId::new(9)).unwrap().unwrap();
    assert_eq!(
        holder,
        Holder {
            node: "c".into(),
            epoch: 1
        }
    );
    let moved = Handover::Moved {
        owner: OwnerId::new(9),
        to: "c".into(),
    };
    assert_eq!(a.handovers(), [moved]);
    assert_eq!(sc.timers().durable_timers().len(), 1);
}

/// An adopted timer counts the time since its lost node's last commit by its offline policy:
/// a catch-up timer that lapsed meanwhile fires on the adopter's first frame; a frozen one
/// keeps its time.
pub fn adopted_timers_count_the_time_their_node_was_lost<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = member(&open, "a", Rendezvous);
    let (mut b, mut sb) = member(&open, "b", Rendezvous);
    let o = OwnerId::new(4);
    (sa.timers()
        .after(Span::from_millis(40))
        .owner(o)
        .name("lapses"))
    .durable(Offline::CatchUp)
    .call(super::record);
    (sa.timers()
        .after(Span::from_millis(40))
        .owner(o)
        .name("frozen"))
    .durable(Offline::Freeze)
    .call(super::record);
    let mut log = Log::new();
    frame(&mut a, &mut sa, &mut log); // 16 ms of 40 gone
    drop((a, sa));
    outlive_lease();
    let got = b.adopt(&mut sb, &mut registry(), 10).unwrap();
    assert_eq!(got.len(), 1);
    frame(&mut b, &mut sb, &mut log);
    let names: Vec<&str> = log.iter().map(|e| e.2.as_str()).collect();
    assert_eq!(names, ["lapses"], "caught up in the first frame");
    frame(&mut b, &mut sb, &mut log);
    assert_eq!(log.len(), 2);
    assert_eq!(log[1].2, "frozen", "24 ms left: the second frame");
}

/// A parcel to a node that was lost is received in its place by another; the lost node comes
/// back and refuses the same parcel (it cannot import it) first. The refusal ends the
/// handover — the sender keeps the owner — and the other node's acceptance of a parcel that is
/// gone moves nothing: the owner is never in two places.
pub fn a_refused_parcel_cannot_be_taken_elsewhere<S: Store>(open: impl Fn() -> S) {
    let (mut a, mut sa) = member(&open, "a", Rendezvous); // the short lease: it is lost
    let (mut s, mut ss) = member(&open, "s", Rendezvous);
    let (mut b, mut sb) = member(&open, "b", Rendezvous);
    let orc = OwnerId::new(21);
    set(&mut ss, 21, "due", 40);
    let mut log = Log::new();
    frame(&mut s, &mut ss, &mut log);
    s.send(&mut ss, orc, "a", b"orc".to_vec()).unwrap();
    frame(&mut s, &mut ss, &mut log);
    frame(&mut a, &mut sa, &mut log);
    outlive_lease(); // a is paused
                     // b or s may be the rule's pick among the live nodes; the sender is never a candidate.
    let got = b.adopt(&mut sb, &mut registry(), 10).unwrap();
    assert_eq!(got.len(), 1, "b receives the parcel in a's place");
    // a wakes up and cannot import the parcel (no callback of that name): it refuses it.
    assert!(a
        .receive(&mut sa, &mut tickflow::snapshot::Registry::new(), 10)
        .unwrap()
        .is_empty());
    frame(&mut a, &mut sa, &mut log);
    frame(&mut s, &mut ss, &mut log);
    assert_eq!(s.handovers(), [Handover::Kept { owner: orc }]);
    frame(&mut b, &mut sb, &mut log);
    assert_eq!(b.handovers(), [Handover::Dropped { owner: orc }]);
    let holder = open().holder(orc).unwrap().unwrap();
    assert_eq!((holder.node.as_str(), holder.epoch), ("s", 0));
    for _ in 0..45 {
        frame(&mut s, &mut ss, &mut log);
        frame(&mut b, &mut sb, &mut log);
    }
    assert_eq!(log.len(), 1, "the timer fires once, at the sender: {log:?}");
}
