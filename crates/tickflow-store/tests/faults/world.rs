//! The fault harness's world, run by each node process: owners with durable timers on the
//! frame clock that record their calls as effects, and walk to the other node every few calls.
//!
//! Every owner `o` has three durable timers: `age` (every frame: its call count is the frames
//! the owner has run), `regen` (every 3 frames, 80 calls) and `pulse` (every 5 frames, 48
//! calls). `regen` and `pulse` record each call as an effect — owner, timer, call index and the
//! owner's age then — written in the commit that covers its frame. On pulse calls 1, 5, 9, 13
//! and 17 the owner walks to the other node. Nothing in the world depends on which node runs an
//! owner or when, so the effects of a run are known: each (owner, timer, call) once.

use std::time::{Duration, Instant};

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_store::{Durable, StoreError};

use super::effects::{Effect, Effects};

/// Owners in the world.
pub const OWNERS: u64 = 11;
/// Calls of `regen` and of `pulse` per owner.
pub const REGEN: u64 = 80;
pub const PULSE: u64 = 48;
/// Frames between calls of `regen` and of `pulse`.
pub const REGEN_EVERY: u64 = 3;
pub const PULSE_EVERY: u64 = 5;

/// A fault point: where the process aborts itself, the `n`-th time it gets there.
#[derive(Clone, Debug)]
pub struct Point {
    pub name: String,
    pub n: u32,
}

/// The points a run can abort at, one step of the handover each.
pub const POINTS: [&str; 5] = ["freeze", "sent", "import", "accepted", "settle"];

impl Point {
    fn hit(&mut self, at: &str) {
        if self.name == at {
            self.n = self.n.saturating_sub(1);
            if self.n == 0 {
                std::process::abort();
            }
        }
    }
}

#[derive(Default)]
pub struct World {
    node: String,
    /// Effects of the frames not committed yet.
    pending: Vec<Effect>,
    /// Owners whose pulse asked them to walk this frame.
    walkers: Vec<OwnerId>,
}

fn age_of(cx: &mut TimerCx<World>, owner: OwnerId) -> u64 {
    let ages = cx.timers().list();
    (ages.iter())
        .find(|t| t.owner == Some(owner) && t.name.as_deref() == Some("age"))
        .map_or(0, |t| t.calls_made)
}

fn on_call(w: &mut World, cx: &mut TimerCx<World>) {
    let h = cx.handle();
    let info = cx.timers().info_of(h).expect("running");
    let (owner, name) = (info.owner.expect("owned"), info.name.unwrap_or_default());
    let call = cx.call_index();
    let age = age_of(cx, owner);
    w.pending.push(Effect {
        frame: cx.clocks().frame(),
        node: w.node.clone(),
        owner: owner.get(),
        name: name.clone(),
        call,
        age,
        commit: 0,
    });
    if name == "pulse" && call % 4 == 1 {
        w.walkers.push(owner);
    }
}

fn tick_age(_: &mut World, _: &mut TimerCx<World>) {}

fn registry() -> Registry<World> {
    Registry::new()
        .timer("age", tick_age)
        .other_timers(|_| Some(Box::new(on_call)))
}

fn populate(sched: &mut Scheduler<World>, first: u64) {
    for o in (first..=OWNERS).step_by(2) {
        let owner = OwnerId::new(o);
        for (name, n, times) in [
            ("age", 1, 10_000),
            ("regen", REGEN_EVERY, REGEN),
            ("pulse", PULSE_EVERY, PULSE),
        ] {
            let b = (sched
                .timers()
                .every(Frames(n))
                .owner(owner)
                .name(name)
                .times(times))
            .durable(Offline::Freeze);
            match name {
                "age" => b.call(tick_age),
                _ => b.call(on_call),
            };
        }
    }
}

/// How a node process ended.
pub enum End {
    /// Every effect is stored and nothing is on its way: the run is over.
    Done,
    /// Another live process runs this node.
    Held,
    /// Another process took the node over (this one stalled past its lease): it stopped.
    Lost,
}

/// Runs node `node` (`a` or `b`) until the whole run is over, aborting at `point`.
pub fn run<S: Effects>(
    store: S,
    node: &str,
    lease: Duration,
    mut point: Option<Point>,
) -> Result<End, StoreError> {
    let peer = if node == "a" { "b" } else { "a" };
    let mut durable = Durable::new(store, node);
    durable.set_lease(lease);
    let started = Instant::now();
    let (mut sched, resumed) = loop {
        match durable.resume(&mut registry()) {
            Ok(r) => break r,
            Err(StoreError::NodeHeld { .. }) => return Ok(End::Held),
            // The server may be restarting: try again, as a restarted process would.
            Err(e) if e.is_database() && started.elapsed() < Duration::from_secs(30) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    };
    if !resumed.resumed && durable.committed() == 0 {
        // A new world: node a sets the odd owners, b the even ones.
        populate(&mut sched, if node == "a" { 1 } else { 2 });
    }
    let mut w = World {
        node: node.to_string(),
        ..World::default()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut hit = |p: &str| {
        if let Some(point) = point.as_mut() {
            point.hit(p);
        }
    };
    let mut idle = 0u32;
    loop {
        if Instant::now() > deadline {
            return Err(StoreError::Setting(format!(
                "node {node}: the run never ended"
            )));
        }
        let arrived = match durable.receive(&mut sched, &mut registry(), 64) {
            Ok(a) => a,
            Err(e) if e.is_database() => Vec::new(),
            Err(e) => return Err(e),
        };
        if !arrived.is_empty() {
            hit("import");
        }
        sched.tick(Span::frames(1, 60), &mut w);
        let mut sent = false;
        for o in std::mem::take(&mut w.walkers) {
            if durable.epoch(o).is_some() && !durable.in_flight().contains(&o) {
                match durable.send(&mut sched, o, peer, Vec::new()) {
                    Ok(()) => sent = true,
                    Err(StoreError::Setting(_)) => {} // frozen already (its walk is on)
                    // Its registry row could not be read (the connection ended): nothing
                    // changed, so it walks on a later frame.
                    Err(e) if e.is_database() => w.walkers.push(o),
                    Err(e) => return Err(e),
                }
            }
        }
        if sent {
            hit("freeze");
        }
        if !durable.in_flight().is_empty() {
            hit("settle");
        }
        let pending = &w.pending;
        match durable.end_frame(&mut sched, |tx, c| {
            S::write(tx, c.number(), pending.iter().filter(|e| c.covers(e.frame)))
        }) {
            Ok(Some(c)) => {
                w.pending.retain(|e| e.frame > *c.frames().end());
                if sent {
                    hit("sent");
                }
                if !arrived.is_empty() {
                    hit("accepted");
                }
            }
            Ok(None) => {}
            // A commit that may have landed, or a database out of reach: the next finds out.
            Err(e) if e.is_database() => std::thread::sleep(Duration::from_millis(5)),
            Err(StoreError::NodeLost { .. }) => return Ok(End::Lost),
            Err(e) => return Err(e),
        }
        durable.handovers();
        // Every 50 frames, look whether the run is over: all effects stored, nothing moving.
        idle += 1;
        if idle % 50 == 0 && durable.in_flight().is_empty() && !durable.is_uncertain() {
            let store = durable.store();
            let total = store.effects_total().unwrap_or(0);
            let done = total >= OWNERS * (REGEN + PULSE) && store.outbox_empty().unwrap_or(false);
            if done {
                // One more commit: the rows of owners that settled as moved in the last one go.
                let pending = &w.pending;
                let last = durable.commit(&mut sched, |tx, c| {
                    S::write(tx, c.number(), pending.iter().filter(|e| c.covers(e.frame)))
                });
                match last {
                    Ok(_) => {
                        // A handback lost with its connection costs only the lease's wait.
                        match durable.close() {
                            Err(e) if !e.is_database() => return Err(e),
                            _ => return Ok(End::Done),
                        }
                    }
                    Err(e) if e.is_database() => {}
                    Err(e) => return Err(e),
                }
            }
        }
        // About 500 frames a second: a run lasts a few seconds, for the faults to land in.
        std::thread::sleep(Duration::from_millis(1));
    }
}
