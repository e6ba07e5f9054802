//! Owner-snapshot bytes from a peer → `import_owner` on a busy scheduler.
//!
//! Holds: no panic or hang; a refused import changes nothing (the state hash is the one
//! before); an accepted one runs, moves on again (export → import elsewhere), and the
//! destination still snapshots and restores to the same state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tickflow::prelude::*;
use tickflow::snapshot::OwnerSnapshot;
use tickflow_fuzz::{busy_world, frame, Anything, Game};

fuzz_target!(|data: &[u8]| {
    let Ok(snap) = postcard::from_bytes::<OwnerSnapshot>(data) else {
        return;
    };
    let (mut dest, mut game) = busy_world();
    let before = dest.state_hash();
    let Ok(_map) = dest.import_owner(&snap, &mut Anything) else {
        assert_eq!(
            dest.state_hash(),
            before,
            "a refused import changed the scheduler"
        );
        return;
    };
    assert!(
        dest.import_owner(&snap, &mut Anything).is_err(),
        "a second delivery was accepted"
    );
    for _ in 0..3 {
        dest.tick(frame(), &mut game);
    }
    let saved = dest.snapshot();
    let (again, report) = Scheduler::restore(&saved, &mut Anything)
        .expect("a scheduler that accepted an import snapshots and restores");
    if report.is_complete() {
        // Queued on_cancel hooks are closures: the report lists them, and the states differ
        // by exactly those.
        assert_eq!(again.state_hash(), dest.state_hash());
    }

    let onward = dest.export_owner(snap.owner());
    let mut next = Scheduler::<Game>::new();
    let moved_on = next.import_owner(&onward, &mut Anything);
    // Only an owner at the last epoch (i64::MAX) cannot move again: refused, never wrapped.
    if snap.epoch() < i64::MAX as u64 {
        moved_on.expect("an owner that was imported moves on");
    } else {
        assert!(moved_on.is_err() && onward.epoch() > snap.epoch());
    }
    next.tick(frame(), &mut Game::default());
});
