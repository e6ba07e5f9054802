//! Snapshot benchmark SN2: what moving one
//! owner costs, and its size on the wire.
//!
//! The owner is shaped like an actor of the demo's arena: a movement tick function every
//! frame, a "think" function on a 0.2 s interval that waits for it, a looping recharge timer,
//! a poison timer with `times(4)`, and one latent delay (a projectile). The source world
//! holds 9,000 such owners (3,000 with `quick`) and has run 30 frames; each round moves 1,000 of them, one at a
//! time, into a second world that holds the owners moved before: `export_owner`, postcard encoding, decoding, `import_owner`
//! (binding every callback again by name). Figures are per owner, medians of the rounds.
//! Timers alone: 1,000 owners of one named, looping timer each, for bytes per timer.

use std::time::Instant;

use tickflow::latent::{Completion, LatentInfo};
use tickflow::prelude::*;
use tickflow::snapshot::{OwnerSnapshot, Registry};
use tickflow::tick::{TickBody, TickInfo};
use tickflow::timer::{TimerCallback, TimerInfo};

use crate::{median, Options};

fn timer_cb(id: u64) -> TimerCallback<u64> {
    Box::new(move |n: &mut u64, _: &mut TimerCx<u64>| *n += id & 7)
}

fn tick_cb(id: u64) -> impl FnMut(&mut u64, &mut TickCx<'_, u64>) + Send + 'static {
    move |n: &mut u64, _: &mut TickCx<u64>| *n += id & 3
}

/// Binds an actor's callbacks by their owner, as a game's resolver would.
fn bind() -> Registry<u64> {
    Registry::new()
        .other_timers(|info: &TimerInfo| {
            Some(Box::new(timer_cb(info.owner?.get())) as TimerCallback<u64>)
        })
        .other_ticks(|info: &TickInfo| Some(TickBody::serial(tick_cb(info.settings.owner?.get()))))
        .other_latent(|info: &LatentInfo| {
            let id = info.owner.get();
            Some(Box::new(move |n: &mut u64, _: &mut LatentCx<u64>| *n += id) as Completion<u64>)
        })
}

fn actor(s: &mut Scheduler<u64>, id: u64) {
    let owner = OwnerId::new(id);
    let settings = TickSettings::named(format!("move {id}")).owned_by(owner);
    let mv = s.ticks().add(settings, tick_cb(id));
    let settings = (TickSettings::named(format!("think {id}")).owned_by(owner)).every(millis(200));
    let think = s.ticks().add(settings, tick_cb(id));
    s.ticks().add_prerequisite(think, mv).expect("no cycle");
    let t = s.timers();
    t.every(millis(1_500))
        .owner(owner)
        .name("recharge")
        .call(timer_cb(id));
    t.every(millis(500))
        .times(4)
        .owner(owner)
        .name("poison")
        .call(timer_cb(id));
    s.latent()
        .delay(owner, 1, millis(400), move |n: &mut u64, _| *n += id);
}

fn world(owners: u64) -> Scheduler<u64> {
    let mut s = Scheduler::new();
    for id in 0..owners {
        actor(&mut s, id);
    }
    let mut n = 0;
    for _ in 0..30 {
        s.tick(Span::frames(1, 60), &mut n);
    }
    s
}

fn us_per(start: Instant, n: u64) -> f64 {
    start.elapsed().as_secs_f64() * 1e6 / n as f64
}

/// Prints the SN2 table.
pub fn run(opts: &Options) {
    let rounds = if opts.quick { 3 } else { 9 };
    const MOVED: u64 = 1_000;
    let mut from = world(rounds * MOVED);
    let mut to = world(0);
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut bytes = 0;
    for round in 0..rounds {
        // Each round moves owners that are still in the source (at most 10 rounds).
        let ids: Vec<u64> = (0..MOVED).map(|k| round * MOVED + k).collect();
        let start = Instant::now();
        let snaps: Vec<OwnerSnapshot> = (ids.iter())
            .map(|&id| from.export_owner(OwnerId::new(id)))
            .collect();
        times[0].push(us_per(start, MOVED));
        let start = Instant::now();
        let wire: Vec<Vec<u8>> = (snaps.iter())
            .map(|s| postcard::to_stdvec(s).expect("postcard"))
            .collect();
        times[1].push(us_per(start, MOVED));
        bytes = wire.iter().map(Vec::len).sum::<usize>();
        let start = Instant::now();
        let back: Vec<OwnerSnapshot> = (wire.iter())
            .map(|b| postcard::from_bytes(b).expect("postcard"))
            .collect();
        times[2].push(us_per(start, MOVED));
        let start = Instant::now();
        for s in &back {
            to.import_owner(s, &mut bind()).expect("imports");
        }
        times[3].push(us_per(start, MOVED));
        assert!(back
            .iter()
            .all(|s| s.tick_count() == 2 && s.timer_count() == 2));
    }
    let [export, encode, decode, import] = times.map(median);
    println!(
        "\nSN2 moving an owner between schedulers (medians of {rounds} rounds of {MOVED} owners; an owner: 2 tick functions, 2 timers, 1 latent delay)"
    );
    println!(
        "{:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "export µs", "encode µs", "decode µs", "import µs", "total µs", "B/owner"
    );
    println!(
        "{export:>10.2} {encode:>10.2} {decode:>10.2} {import:>10.2} {:>10.2} {:>10.0}",
        export + encode + decode + import,
        bytes as f64 / MOVED as f64
    );
    let mut t = Scheduler::<u64>::new();
    for id in 0..MOVED {
        let owner = OwnerId::new(id);
        (t.timers()
            .every(millis(100 + id))
            .owner(owner)
            .name("regen"))
        .call(timer_cb(id));
    }
    let timers: usize = (0..MOVED)
        .map(|id| postcard::to_stdvec(&t.export_owner(OwnerId::new(id))).expect("postcard"))
        .map(|b| b.len())
        .sum();
    println!(
        "timers alone: {:.1} bytes per named, owned, looping timer",
        timers as f64 / MOVED as f64
    );
}
