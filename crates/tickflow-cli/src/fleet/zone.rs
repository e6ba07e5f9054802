//! One zone of a fleet (`tickflow zone`): a process on its own pacer, with no director and no
//! frame barrier. Its actors are owners with two durable timers each — `pulse`, a looping
//! call whose every call is an effect written once (`fleet_effects`), and `walk`, which sends
//! the actor to another zone — and it takes part in takeovers: it adopts the actors of zones
//! that were lost, and rejoins by itself when it was fenced.
//!
//! All it recovers after a crash comes from [`Durable::resume`]; all it writes is in its
//! frames' commits, effects included, so every call is stored once, with its frame.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_store::{Durable, Handover, Rendezvous, Store, StoreError};

use super::pace::AdoptPace;
use super::tables::{self, Buffer, Effect, Event, Load};
use crate::sql::Sql;

/// A zone's settings, as `tickflow fleet` passes them.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct ZoneArgs {
    /// `sqlite:PATH` or a `postgres://` URL.
    #[arg(long)]
    pub(crate) store: String,
    /// The PostgreSQL schema the fleet's tables are in.
    #[arg(long)]
    pub(crate) schema: Option<String>,
    /// This zone's index: its node is `zone-INDEX`.
    #[arg(long)]
    pub(crate) index: usize,
    /// Zones in the fleet (`zone-0` ...): where actors walk.
    #[arg(long)]
    pub(crate) zones: usize,
    /// What it runs, as every zone of the fleet does.
    #[command(flatten)]
    pub(crate) world: super::args::Workload,
    /// The zone stops (after a last commit, keeping its lease to run out) once this file
    /// exists.
    #[arg(long)]
    pub(crate) stop: std::path::PathBuf,
}

/// The zone's world, as its timers see it.
#[derive(Default)]
pub(crate) struct World {
    /// The frame running.
    frame: u64,
    /// What the next commits write.
    buf: Buffer,
    /// Actors whose walk timer fired this frame.
    walkers: Vec<OwnerId>,
    /// Actors adopted or resumed: what kind their calls in their first frame here are, and
    /// that frame.
    first: HashMap<OwnerId, (u8, u64)>,
}

impl World {
    /// Drops what is kept for `owner` (another node runs it now).
    fn forget(&mut self, owner: OwnerId) {
        self.buf.effects.retain(|e| e.owner != owner);
        self.buf.events.retain(|e| e.owner != owner);
        self.first.remove(&owner);
    }
}

/// Calls of an actor in its first frame after its adoption, or after its zone resumed.
pub(crate) const FIRST_ADOPTED: u8 = 1;
pub(crate) const FIRST_RESUMED: u8 = 2;

fn pulse(w: &mut World, cx: &mut TimerCx<World>) {
    let owner = cx.owner().unwrap_or(OwnerId::new(0));
    let kind = match w.first.get(&owner) {
        Some(&(kind, frame)) if frame == w.frame => kind,
        _ => 0,
    };
    w.buf.effects.push(Effect {
        owner,
        call: cx.call_index() + 1,
        frame: w.frame,
        late_us: u64::try_from(std::time::Duration::from(cx.lateness()).as_micros())
            .unwrap_or(u64::MAX),
        kind,
        at: Instant::now(),
    });
}

fn walk(w: &mut World, cx: &mut TimerCx<World>) {
    if let Some(o) = cx.owner() {
        w.walkers.push(o);
    }
}

fn registry() -> Registry<World> {
    Registry::new().timer("pulse", pulse).timer("walk", walk)
}

/// Runs the zone until its stop file appears.
pub(crate) fn run(a: &ZoneArgs) -> Result<(), String> {
    // A zone started while the database is out of reach waits for it, as a server would.
    let start = Instant::now();
    let db = loop {
        match super::db::open(&a.store, a.schema.as_deref()) {
            Ok(db) => break db,
            Err(e) if start.elapsed() > Duration::from_secs(60) => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    match db {
        super::db::Db::Sqlite(s) => run_on(s, a),
        super::db::Db::Postgres(p) => run_on(p, a),
    }
}

fn run_on<S: Store>(store: S, a: &ZoneArgs) -> Result<(), String>
where
    for<'t> S::Tx<'t>: Sql,
{
    let name = super::args::zone_name(a.index);
    let mut d = Durable::new(store, name.clone());
    d.set_lease(Duration::from_millis(a.world.lease_ms.max(1)));
    d.set_takeover(Rendezvous);
    let mut reg = registry();
    let began = Instant::now();
    let (mut sched, resumed) = resume(&mut d, &mut reg)?;
    eprintln!(
        "{name}: resumed {} timers, {} owners in {} ms",
        resumed.timers.loaded,
        resumed.owners,
        began.elapsed().as_millis()
    );
    let mut rng = Pcg64::seed_from_u64(a.world.seed ^ (a.index as u64) << 32 ^ resumed.frame);
    let mut w = World::default();
    let dt = Span::frames(1, a.world.hz.max(1));
    if resumed.resumed {
        for (o, _) in d.owners() {
            w.first.insert(o, (FIRST_RESUMED, resumed.frame + 1));
        }
    } else if d.owners().is_empty() && resumed.in_flight.is_empty() {
        let base = (a.index as u64 + 1) * 10_000_000;
        for i in 0..a.world.actors {
            let o = OwnerId::new(base + i);
            let period =
                rng.random_range(a.world.pulse_min..=a.world.pulse_max.max(a.world.pulse_min));
            (sched
                .timers()
                .every(Span::from_millis(period))
                .owner(o)
                .name("pulse"))
            .durable(Offline::CatchUp)
            .call(pulse);
            set_walk(&mut sched, o, a.world.walk_ms, &mut rng);
            w.buf.births.push((o, 1, Instant::now(), period * 1000));
        }
    }
    let mut pacer = tickflow::driver::Pacer::new(a.world.hz.max(1)).catch_up(CatchUp::Once);
    let mut times: Vec<u64> = Vec::new();
    let mut second = Instant::now();
    let mut changes = 0u64;
    let mut pace = AdoptPace::new(a.world.adopt_limit);
    let period = Duration::from(dt);
    let period_us = period.as_micros() as u64;
    loop {
        if a.stop.exists() {
            // A last commit; the lease is left to run out, so no zone adopts this one's
            // actors while the others stop too.
            let _ = commit(&mut d, &mut sched, &mut w, &mut changes);
            return Ok(());
        }
        let now = Instant::now();
        if pacer.due(now) == 0 {
            std::thread::sleep(pacer.next_deadline().saturating_duration_since(now));
            continue;
        }
        let t0 = Instant::now();
        // The frame boundary: everything that crosses between zones or into the database
        // happens here, before the tick, when the game clock reads the wall time it stands
        // for (a tick simulates the frame it ends: after it, the clock is up to a frame
        // ahead). So an actor that moves, or is adopted from this zone's last commit, takes
        // no frame of lead with it.
        let frame = sched.clocks().frame();
        for o in std::mem::take(&mut w.walkers) {
            set_walk(&mut sched, o, a.world.walk_ms, &mut rng);
            let mut to = rng.random_range(0..a.zones.max(2) - 1);
            if to >= a.index {
                to += 1;
            }
            if d.epoch(o).is_some() && to < a.zones {
                let _ = d.send(&mut sched, o, &super::args::zone_name(to), Vec::new());
            }
        }
        let sent_at = t0.elapsed();
        if frame > 0 {
            commit(&mut d, &mut sched, &mut w, &mut changes)?;
        }
        let committed_at = t0.elapsed();
        w.frame = frame + 1;
        if let Ok(arrivals) = d.receive(&mut sched, &mut reg, 5000) {
            for x in arrivals {
                w.buf
                    .events
                    .push(Event::new("arrive", x.owner, &x.sender, w.frame));
            }
        }
        let mut adopting = 0;
        if let Ok(adopted) = d.adopt(&mut sched, &mut reg, pace.limit()) {
            adopting = adopted.len();
            for x in adopted {
                let kind = if x.adopted { "adopt" } else { "arrive" };
                w.buf
                    .events
                    .push(Event::new(kind, x.owner, &x.sender, w.frame));
                if x.adopted {
                    w.first.insert(x.owner, (FIRST_ADOPTED, w.frame));
                }
            }
        }
        let adopted_at = t0.elapsed();
        sched.tick(dt, &mut w);
        let took = t0.elapsed();
        if took > 4 * period {
            // Where a long frame went, for the zone's log.
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            eprintln!(
                "{name}: frame {frame} took {:.0} ms: sends {:.0}, commit {:.0}, receive and \
                 adopt {:.0} ({adopting} adopted), tick {:.0}",
                ms(took),
                ms(sent_at),
                ms(committed_at - sent_at),
                ms(adopted_at - committed_at),
                ms(took - adopted_at)
            );
        }
        let ran = w.frame;
        w.first.retain(|_, f| f.1 > ran);
        pace.after_frame(adopting, took, period);
        times.push(took.as_micros() as u64);
        if second.elapsed() >= Duration::from_secs(1) {
            times.sort_unstable();
            let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
            w.buf.loads.push(Load {
                actors: d.owners().len() as u64,
                frames: times.len() as u64,
                p99_us: p99,
                max_us: *times.last().unwrap_or(&0),
                calls: std::mem::take(&mut changes),
                // (sorted above)
                slow: (times.len() - times.partition_point(|&t| t <= period_us)) as u64,
            });
            times.clear();
            second = Instant::now();
        }
    }
}

/// Resumes, waiting while another process of this node lives out its lease.
fn resume<S: Store>(
    d: &mut Durable<S>,
    reg: &mut Registry<World>,
) -> Result<(Scheduler<World>, tickflow_store::Resumed), String> {
    let start = Instant::now();
    loop {
        match d.resume(reg) {
            Ok(r) => return Ok(r),
            Err(e) if e.is_database() && start.elapsed() < Duration::from_secs(60) => {
                eprintln!("resume: {e} (trying again)");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(format!("resume: {e}")),
        }
    }
}

fn set_walk(sched: &mut Scheduler<World>, o: OwnerId, mean_ms: u64, rng: &mut Pcg64) {
    let ms = rng.random_range(mean_ms / 2..=mean_ms + mean_ms / 2).max(1);
    (sched
        .timers()
        .after(Span::from_millis(ms))
        .owner(o)
        .name("walk"))
    .durable(Offline::CatchUp)
    .call(walk);
}

/// Ends the frame: the commit with its effects, and what the handovers that ended say.
fn commit<S: Store>(
    d: &mut Durable<S>,
    sched: &mut Scheduler<World>,
    w: &mut World,
    changes: &mut u64,
) -> Result<(), String>
where
    for<'t> S::Tx<'t>: Sql,
{
    let zone = d.node().to_string();
    let out = d.end_frame(sched, |tx, c| {
        tables::write(tx, &zone, &w.buf, c).map_err(|e| StoreError::Effects(e.into()))
    });
    match out {
        Ok(Some(c)) => {
            *changes += w.buf.effects.iter().filter(|e| c.covers(e.frame)).count() as u64;
            w.buf.effects.retain(|e| e.frame > *c.frames().end());
            w.buf.events.retain(|e| e.frame > *c.frames().end());
            w.buf.births.retain(|b| b.1 > *c.frames().end());
            w.buf.loads.clear();
            w.buf.failing = false;
        }
        Ok(None) => {}
        Err(StoreError::Rejoined { taken, .. }) => {
            w.buf.events.push(Event::new(
                "rejoin",
                OwnerId::new(taken as u64),
                "",
                w.frame,
            ));
        }
        Err(e @ StoreError::NodeLost { .. }) => return Err(e.to_string()),
        Err(StoreError::Missing { what }) => return Err(what),
        Err(_) => w.buf.failing = true, // kept for the next commit
    }
    for h in d.handovers() {
        match h {
            Handover::TakenOver { owner, .. } | Handover::Dropped { owner } => w.forget(owner),
            _ => {}
        }
    }
    Ok(())
}
