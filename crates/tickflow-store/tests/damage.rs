//! Damage to a SQLite store's files: random bit flips and truncations of the database file and
//! of its write-ahead log. Whatever the damage, `resume` must refuse, or give back a state the
//! node really committed — the last one, or (the log's damage) an earlier one, whole. A state
//! that was never committed — different timers, a row lost or changed — is the failure this
//! test counts, and must be 0.
//!
//! 200 trials (`TICKFLOW_DAMAGE_TRIALS` for more).

use crate::common;

use std::path::Path;

use tickflow::timer::DurableTimer;
use tickflow_store::{Durable, Sqlite};

const FIXED_WALL: u64 = 1_900_000_000_000_000_000;

fn wall() -> u64 {
    FIXED_WALL
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x
}

/// A node's state as a resume gives it: its frame and its durable timers in set order.
type State = (u64, Vec<DurableTimer>);

/// Builds a store whose log holds several commits; returns the states after each commit (the
/// first is the state of a store whose log was lost whole) and keeps the writer open so that
/// the log stays a file of its own.
fn build(path: &Path) -> (Durable<Sqlite>, Vec<State>) {
    let mut d = Durable::new(Sqlite::create(path).unwrap(), "n");
    d.set_wall_clock(wall);
    d.store()
        .connection()
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    let (mut sched, _) = d.resume(&mut common::registry()).unwrap();
    common::populate(&mut sched, 400, 11);
    let mut states = vec![(0, Vec::new())];
    let mut log = common::Log::new();
    for frame in 1..=30u64 {
        sched.tick(common::DT, &mut log);
        if frame == 10 {
            // The database file holds the first commits, the log the rest.
            d.store()
                .connection()
                .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
                .unwrap();
        }
        if frame % 3 == 0 {
            d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
            states.push((frame, sched.timers().durable_timers()));
        }
    }
    (d, states)
}

#[test]
fn damaged_files_resume_a_committed_state_or_nothing() {
    let dir = std::env::temp_dir().join(format!("tickflow-damage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("base.db");
    let (writer, states) = build(&base);
    let db = std::fs::read(&base).unwrap();
    let wal = std::fs::read(dir.join("base.db-wal")).unwrap();
    assert!(
        wal.len() > 4096,
        "the log holds commits: {} bytes",
        wal.len()
    );
    let trials: u64 = std::env::var("TICKFLOW_DAMAGE_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let (mut refused, mut last, mut earlier, mut silent) = (0, 0, 0, 0);
    let mut rng = 0xda4a;
    for t in 0..trials {
        rng = mix(rng + t);
        let (mut d2, mut w2) = (db.clone(), wal.clone());
        let kind = rng % 4;
        let file = if kind % 2 == 0 { &mut d2 } else { &mut w2 };
        let at = (mix(rng) % file.len() as u64) as usize;
        match kind {
            0 | 1 => file[at] ^= 1 << (mix(rng ^ 7) % 8),
            _ => file.truncate(at),
        }
        let path = dir.join(format!("t{}.db", t % 4));
        std::fs::write(&path, &d2).unwrap();
        std::fs::write(dir.join(format!("t{}.db-wal", t % 4)), &w2).unwrap();
        let _ = std::fs::remove_file(dir.join(format!("t{}.db-shm", t % 4)));
        let got: Option<State> = Sqlite::open(&path).ok().and_then(|s| {
            let mut d = Durable::new(s, "n");
            d.set_wall_clock(wall);
            let (sched, r) = d.resume(&mut common::registry()).ok()?;
            let mut sched = sched;
            Some((r.frame, sched.timers().durable_timers()))
        });
        match got {
            None => refused += 1,
            Some(s) if s == *states.last().unwrap() => last += 1,
            Some(s) if states.contains(&s) => earlier += 1,
            Some((frame, timers)) => {
                silent += 1;
                eprintln!(
                    "trial {t} (kind {kind} at {at}): frame {frame}, {} timers: never committed",
                    timers.len()
                );
            }
        }
    }
    drop(writer);
    eprintln!(
        "{trials} trials: {refused} refused, {last} the last commit, {earlier} an earlier \
         commit (the log's damage), {silent} a state never committed"
    );
    assert_eq!(silent, 0);
    assert!(refused > 0 && last > 0, "the trials reached both outcomes");
    std::fs::remove_dir_all(&dir).unwrap();
}
