//! A persistent-world server whose timers survive a restart: buildings that take minutes of
//! game time, and energy that regenerates on the real clock — also while the server is down.
//!
//! The first run sets the timers and stops part-way (as a crash or a deploy would); the second
//! resumes from the store an hour of wall-clock time later. Buildings complete on the exact
//! frame they would have without the restart (the game clock stood still), and the hour offline
//! is paid out as energy in the first frame (`Offline::CatchUp`, capped by the catch-up cap).
//!
//! ```text
//! cargo run -p tickflow-store --example persistent_world                      # SQLite file
//! cargo run -p tickflow-store --features postgres --example persistent_world -- postgres://user:pw@host/db
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_store::{Durable, Sqlite, Store};

/// The game state: energy, and what was built when.
#[derive(Default, Debug)]
struct World {
    energy: u64,
    built: Vec<(u64, String)>,
}

fn built(w: &mut World, cx: &mut TimerCx<World>) {
    let kind = String::from_utf8_lossy(cx.payload()).into_owned();
    w.built.push((cx.clocks().frame(), kind));
}

fn regen(w: &mut World, _: &mut TimerCx<World>) {
    w.energy += 1;
}

fn registry() -> Registry<World> {
    Registry::new().timer("built", built).timer("regen", regen)
}

/// The wall clock the store measures offline time with: this example moves it by hand.
static WALL_NS: AtomicU64 = AtomicU64::new(1_800_000_000_000_000_000);

fn wall() -> u64 {
    WALL_NS.load(Ordering::Relaxed)
}

const DT: Span = Span::from_millis(50); // a 20 Hz server tick

/// Runs the server for `frames` frames, committing after each; returns the world.
fn serve<S: Store>(store: S, frames: u64, world: &mut World) -> (u64, u64) {
    let mut durable = Durable::new(store, "zone-1");
    durable.set_wall_clock(wall);
    let (mut sched, resumed) = durable.resume(&mut registry()).expect("resume");
    if resumed.resumed {
        println!(
            "resumed at frame {} after {:.0} s offline: {} timers loaded ({} caught up)",
            resumed.frame,
            resumed.offline.as_secs_f64(),
            resumed.timers.loaded,
            resumed.timers.caught_up,
        );
    } else {
        // A new world: three buildings and the player's energy regeneration.
        for (i, (kind, minutes)) in [("farm", 1.0), ("forge", 2.5), ("tower", 4.0)]
            .into_iter()
            .enumerate()
        {
            (sched.timers().after(secs(minutes * 60.0)))
                .owner(OwnerId::new(100 + i as u64))
                .name("built")
                .payload(kind)
                .durable(Offline::Freeze)
                .call(built);
        }
        (sched.timers().every(secs(30.0)).real())
            .owner(OwnerId::new(1))
            .name("regen")
            .durable(Offline::CatchUp)
            .call(regen);
    }
    let start = sched.clocks().frame();
    while sched.clocks().frame() < start + frames {
        sched.tick(DT, world);
        durable
            .end_frame(&mut sched, |_, _| Ok(()))
            .expect("commit");
    }
    // A clean stop hands the node back at once (a crash leaves it to the lease).
    durable.close().expect("close");
    (start, sched.clocks().frame())
}

fn play<S: Store>(open: impl Fn() -> S) {
    // Without a restart, for comparison: 6 minutes of frames.
    let mut reference = World::default();
    {
        let mut sched = Scheduler::new();
        for (i, (kind, minutes)) in [("farm", 1.0), ("forge", 2.5), ("tower", 4.0)]
            .into_iter()
            .enumerate()
        {
            (sched
                .timers()
                .after(secs(minutes * 60.0))
                .owner(OwnerId::new(100 + i as u64)))
            .payload(kind)
            .call(built);
        }
        for _ in 0..6 * 60 * 20 {
            sched.tick(DT, &mut reference);
        }
    }

    // Run 1: two minutes, then the server stops.
    let mut world = World::default();
    serve(open(), 2 * 60 * 20, &mut world);
    println!("run 1: built {:?}, energy {}", world.built, world.energy);
    assert_eq!(world.built, reference.built[..1], "the farm, on its frame");

    // An hour later: run 2, four more minutes.
    WALL_NS.fetch_add(3_600_000_000_000, Ordering::Relaxed);
    let energy_before = world.energy;
    let (from, to) = serve(open(), 4 * 60 * 20, &mut world);
    println!(
        "run 2 (frames {from}..{to}): built {:?}, energy {}",
        world.built, world.energy
    );
    assert_eq!(
        world.built, reference.built,
        "every building on the frame it would have had"
    );
    // 120 calls owed for the hour offline, 8 for the four minutes played.
    assert_eq!(
        world.energy - energy_before,
        120 + 8,
        "the hour offline was paid out"
    );
    println!("ok: buildings on their exact frames, energy caught up for the hour offline");
}

fn main() {
    match std::env::args().nth(1) {
        #[cfg(feature = "postgres")]
        Some(url) if url.starts_with("postgres") => {
            let schema = format!("persistent_world_{}", std::process::id());
            play(|| tickflow_store::Postgres::create_in(&url, &schema).expect("connect"));
            let mut store = tickflow_store::Postgres::connect_in(&url, &schema).expect("connect");
            let c = store.client().expect("connect");
            c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
                .expect("clean up");
        }
        #[cfg(not(feature = "postgres"))]
        Some(url) if url.starts_with("postgres") => {
            panic!("built without PostgreSQL: run with `--features postgres`")
        }
        _ => {
            let dir = std::env::temp_dir().join(format!("persistent-world-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            let path = dir.join("world.db");
            play(|| Sqlite::create(&path).expect("open"));
            std::fs::remove_dir_all(&dir).expect("clean up");
        }
    }
}
