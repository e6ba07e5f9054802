//! Writes the seed corpus of the fuzz targets (`fuzz/seeds/<target>/`): real snapshots of the
//! fuzz world in postcard, so the fuzzer starts from bytes that decode and restore, and
//! mutates from there. `cargo run --bin seeds` from `fuzz/`; the files are small and kept in
//! the repository.

use std::fs;
use std::path::Path;

use tickflow::prelude::*;
use tickflow_fuzz::{busy_world, frame, populate, Game, MOVER};

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    fs::create_dir_all(&dir).expect("seed folder");
    fs::write(dir.join(name), bytes).expect("seed file");
    println!("{target}/{name}: {} bytes", bytes.len());
}

fn main() {
    // An owner with one of everything, exported after a few frames (and once more, later).
    let mut src = Scheduler::<Game>::new();
    let mut g = Game::default();
    populate(&mut src, MOVER, OwnerId::new(8));
    for frames in [4, 20] {
        for _ in 0..frames {
            src.tick(frame(), &mut g);
        }
        let mut copy = Scheduler::restore(&src.snapshot(), &mut tickflow_fuzz::Anything)
            .expect("restores")
            .0;
        let moved = copy.export_owner(MOVER);
        let bytes = postcard::to_stdvec(&moved).expect("encodes");
        write("import_owner", &format!("owner-{frames}"), &bytes);
    }
    // A scheduler snapshot of the busy world, and of the timers alone (first byte odd).
    let (mut world, mut g2) = busy_world();
    let snap = postcard::to_stdvec(&world.snapshot()).expect("encodes");
    write("restore", "scheduler", &[&[0u8][..], &snap].concat());
    // The same after paused frames that the frame clock did not count.
    world.set_frame_clock_pauses(true);
    world.set_paused(true);
    for _ in 0..3 {
        world.tick(frame(), &mut g2);
    }
    let snap = postcard::to_stdvec(&world.snapshot()).expect("encodes");
    write("restore", "scheduler-paused", &[&[0u8][..], &snap].concat());
    let mut timers = TimerManager::<Game>::new();
    timers.every(millis(40)).name("chain").call(|_, _| {});
    timers.after(secs(2.0)).tag(9).call(|_, _| {});
    timers.tick(millis(50), &mut g);
    let bytes = postcard::to_stdvec(&timers.snapshot()).expect("encodes");
    write("restore", "timers", &[&[1u8][..], &bytes].concat());
    // Operation sequences: arbitrary's bytes, a few shapes.
    write("ops", "mixed", &(0u8..=255).collect::<Vec<_>>());
    write(
        "ops",
        "ticks",
        &[3u8, 27, 1, 0, 0, 1, 27, 5, 0, 0, 12, 1, 2, 0, 13, 0, 1][..],
    );
}
