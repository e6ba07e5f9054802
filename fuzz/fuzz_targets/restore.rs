//! Save-file bytes → `Scheduler::restore` (and `TimerManager::restore`) → run →
//! `snapshot` → `restore` again.
//!
//! Holds: no panic or hang; what restores runs, and its snapshot restores to a scheduler
//! with the same state hash (when the report is complete), which then runs the same frames
//! the same way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tickflow::prelude::*;
use tickflow::snapshot::SchedulerSnapshot;
use tickflow::snapshot::TimerSnapshot;
use tickflow_fuzz::{frame, timer_cb, Anything, Game};

fuzz_target!(|data: &[u8]| {
    let (&which, data) = data.split_first().unwrap_or((&0, data));
    if which & 1 == 1 {
        let Ok(snap) = postcard::from_bytes::<TimerSnapshot>(data) else {
            return;
        };
        let Ok(mut timers) = TimerManager::restore(
            &snap,
            &mut tickflow::snapshot::Registry::new()
                .other_timers(|i| Some(timer_cb(i.name.as_deref()))),
        ) else {
            return;
        };
        let mut game = Game::default();
        timers.tick(frame(), &mut game);
        let again = TimerManager::<Game>::restore(
            &timers.snapshot(),
            &mut tickflow::snapshot::Registry::new()
                .other_timers(|i| Some(timer_cb(i.name.as_deref()))),
        )
        .expect("a restored manager's snapshot restores");
        assert_eq!(again.snapshot(), timers.snapshot());
        return;
    }
    let Ok(snap) = postcard::from_bytes::<SchedulerSnapshot>(data) else {
        return;
    };
    let Ok((mut first, _)) = Scheduler::restore(&snap, &mut Anything) else {
        return;
    };
    let mut game = Game::default();
    for _ in 0..3 {
        first.tick(frame(), &mut game);
    }
    let saved = first.snapshot();
    let (mut second, report) = Scheduler::restore(&saved, &mut Anything)
        .expect("a restored scheduler's snapshot restores");
    if !report.is_complete() {
        return; // queued hooks are closures: the states differ by what the report lists
    }
    assert_eq!(second.state_hash(), first.state_hash());
    let mut game2 = Game::default();
    for _ in 0..3 {
        first.tick(frame(), &mut game);
        second.tick(frame(), &mut game2);
    }
    assert_eq!(
        second.state_hash(),
        first.state_hash(),
        "a restore ran differently"
    );
});
