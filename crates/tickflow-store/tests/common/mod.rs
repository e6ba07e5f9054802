//! The behaviour every store must have, written once and run on SQLite and on PostgreSQL
//! (`store_tests!` makes one test per function for a backend).
#![allow(dead_code)]

pub mod image;
pub mod moves;
pub mod nodes;
pub mod resume;
pub mod takeover;

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_store::{Durable, Store};

/// What the test worlds record: (frame, owner, name, call index).
pub type Log = Vec<(u64, u64, String, u64)>;

pub fn record(log: &mut Log, cx: &mut TimerCx<Log>) {
    let frame = cx.clocks().frame();
    let h = cx.handle();
    let info = cx.timers().info_of(h).expect("running");
    let owner = info.owner.map_or(0, OwnerId::get);
    log.push((frame, owner, info.name.unwrap_or_default(), cx.call_index()));
}

pub fn registry() -> Registry<Log> {
    Registry::new().other_timers(|_| Some(Box::new(record)))
}

pub const DT: Span = Span::from_millis(16);

/// Sets `n` durable timers of a few kinds on `sched`, deterministic in `seed`, for owners
/// `1 + i % 17`.
pub fn populate(sched: &mut Scheduler<Log>, n: u64, seed: u64) {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..n {
        let owner = OwnerId::new(1 + i % 17);
        let t = sched.timers();
        let r = next();
        let bytes = i.to_le_bytes();
        let _ = match r % 4 {
            0 => t
                .after(Frames(1 + r % 90))
                .owner(owner)
                .name(format!("build{i}"))
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
            1 => t
                .every(Frames(1 + r % 40))
                .owner(owner)
                .name(format!("regen{i}"))
                .times(1 + r % 5)
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
            2 => t
                .after(Span::from_millis(10 + r % 1500))
                .owner(owner)
                .name(format!("buff{i}"))
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
            _ => t
                .every(Span::from_millis(30 + r % 500))
                .owner(owner)
                .name(format!("tick{i}"))
                .durable(Offline::Freeze)
                .payload(bytes)
                .call(record),
        };
    }
}

/// Runs frames up to `to`, committing after each frame up to `commit_until` (frames after it
/// run but are not committed: what a crash loses).
pub fn run<S: Store>(
    durable: &mut Durable<S>,
    sched: &mut Scheduler<Log>,
    log: &mut Log,
    to: u64,
    commit_until: u64,
) {
    while sched.clocks().frame() < to {
        sched.tick(DT, log);
        if sched.clocks().frame() <= commit_until {
            durable.end_frame(sched, |_, _| Ok(())).unwrap();
        }
    }
}

/// A durable one-shot of `owner` named `name`, due in `frames` frames.
pub fn set(sched: &mut Scheduler<Log>, owner: u64, name: &str, frames: u64) -> TimerHandle {
    (sched
        .timers()
        .after(Frames(frames))
        .owner(OwnerId::new(owner))
        .name(name))
    .durable(Offline::Freeze)
    .call(record)
}

/// What builds of older schemas left, to upgrade from: schema 2 (no offline shift, no images),
/// then schema 3 (no images). Each statement takes a store of this build back to that schema.
pub const OLDER_SCHEMAS: [&str; 2] = [
    "ALTER TABLE tickflow_nodes DROP COLUMN shift; DROP TABLE tickflow_images; \
     UPDATE tickflow_schema SET version = 2",
    "DROP TABLE tickflow_images; UPDATE tickflow_schema SET version = 3",
];

/// A node on a store from `open`, with a short lease: these tests stop a node by dropping it
/// (as a crash would) and start it again at once in the same process, which waits for the
/// lease (a process on the same machine that is gone is seen at once; this one is not gone).
pub fn node<S: Store>(open: &impl Fn() -> S, node: &str) -> Durable<S> {
    let mut d = Durable::new(open(), node);
    d.set_lease(std::time::Duration::from_millis(30));
    d
}

/// Opens node `node` on a store from `open` and resumes it.
pub fn resume<S: Store>(open: &impl Fn() -> S, name: &str) -> (Durable<S>, Scheduler<Log>) {
    let mut d = node(open, name);
    let (sched, _) = d.resume(&mut registry()).unwrap();
    (d, sched)
}

/// One test per shared behaviour for a backend: `$fresh(name)` gives `Some((guard, open))`,
/// where `open()` opens a new connection to that test's own store (creating it), or `None`
/// when the backend's tests are skipped.
#[macro_export]
macro_rules! store_tests {
    ($fresh:ident: $($module:ident::$test:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                if let Some((_guard, open)) = $fresh(stringify!($test)) {
                    common::$module::$test(open);
                }
            }
        )*
    };
}

/// Every shared test, for `store_tests!`.
#[macro_export]
macro_rules! all_store_tests {
    ($fresh:ident) => {
        $crate::store_tests!($fresh:
            resume::resumes_on_the_exact_frame,
            resume::failed_effects_roll_the_commit_back,
            resume::a_resume_in_many_parts_is_whole,
            resume::lapsed_catch_up_timers_make_every_missed_call,
            resume::a_restart_moves_timers_without_rewriting_them,
            resume::a_commit_whose_outcome_is_unknown_is_never_written_twice,
            resume::vanished_rows_and_nodes_are_refused,
            image::an_image_resumes_the_whole_scheduler,
            image::a_later_plain_commit_outdates_the_image,
            nodes::a_restarted_node_keeps_its_owners,
            nodes::unowned_timers_belong_to_their_node,
            nodes::a_node_writes_only_owners_it_holds,
            nodes::one_process_runs_a_node,
            moves::an_owner_moves_once,
            moves::batches_move_many_owners_once,
            moves::an_owner_walks_between_durable_nodes,
            moves::a_sender_restarted_mid_handover_runs_the_owner_once,
            moves::a_resume_reads_one_snapshot,
            moves::a_refused_parcel_leaves_the_owner_with_its_sender,
            moves::a_receiver_restarted_before_its_commit_takes_the_parcel_again,
            moves::an_owner_sent_as_it_fired_resumes_from_its_freeze,
            takeover::a_lost_nodes_owners_are_adopted_once,
            takeover::a_large_lost_node_is_adopted_a_page_at_a_time,
            takeover::two_adopters_of_one_owner_win_once,
            takeover::a_fenced_node_rejoins_without_what_was_taken,
            takeover::a_parcel_to_a_lost_node_finds_a_receiver,
            takeover::adopted_timers_count_the_time_their_node_was_lost,
            takeover::a_refused_parcel_cannot_be_taken_elsewhere,
        );
    };
}
