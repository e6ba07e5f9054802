//! The arena split by position over shards in lockstep: each frame, every shard runs its
//! frame (one thread each when there are several), then the director reads what they
//! report, runs its own frame and routes hits, new actors and actors that changed strips.
//!
//! Actors crossing a border are exported by their shard (`Scheduler::export_owner`), sent
//! as postcard bytes (the network in a real deployment) and imported by the next before its
//! frame. Nothing else crosses: a shard reads others only through the director's view.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tickflow::prelude::*;
use tickflow::snapshot::SchedulerSnapshot;
use tickflow::FrameReport;

use super::director::{rebind_director, Board, BossMode, Director};
use super::processes::{Fault, Processes};
use super::shard::{region, standing_in_transit, Inbound, Outbound, Shard};
use super::{rebind, Arena, Seen, Stats, View};

/// A shard, run here or on a thread of its own.
enum Worker {
    Here(Box<Shard>),
    Thread {
        jobs: Sender<(Inbound, Span)>,
        done: Receiver<Outbound>,
        handle: JoinHandle<Box<Shard>>,
    },
}

/// The arena: its shards and its director.
pub(crate) struct Cluster {
    workers: Vec<Worker>,
    shards: usize,
    /// The shards as processes of their own (then `workers` is empty).
    pub(crate) remote: Option<Box<Processes>>,
    pub(crate) director: Director,
    /// What each shard takes in before its next frame.
    pending: Vec<Inbound>,
    pub(crate) moved: Moved,
    /// Views no one holds any more, to fill again (a frame's view is 12 bytes per actor
    /// id: rebuilding it in fresh memory every frame was a large part of a 10,000-actor frame).
    spare: Vec<Arc<View>>,
}

/// Actors that crossed a border so far.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Moved {
    pub(crate) actors: u64,
    /// Time the shards spent exporting, encoding, decoding and importing them.
    pub(crate) time: Duration,
    /// Bytes sent.
    pub(crate) bytes: u64,
}

/// A cluster between two frames, as plain data and copies of the game states.
#[derive(Clone)]
pub(crate) struct Saved {
    shards: Vec<(SchedulerSnapshot, Arena)>,
    director: (SchedulerSnapshot, Board),
    pending: Vec<Inbound>,
    moved: Moved,
}

impl Cluster {
    /// An arena of `actors` actors (half per team) over `shards` shards, on threads of their
    /// own when `threads` (and there are several). Nothing has run yet.
    pub(crate) fn new(
        actors: usize,
        seed: u64,
        shards: usize,
        boss: BossMode,
        threads: bool,
    ) -> Cluster {
        let (director, pending) = Self::start(actors, seed, shards, boss);
        let workers = (0..shards)
            .map(|k| {
                let shard = Box::new(Shard::new(k, shards, seed));
                if threads && shards > 1 {
                    spawn_worker(shard)
                } else {
                    Worker::Here(shard)
                }
            })
            .collect();
        Cluster {
            workers,
            shards,
            remote: None,
            director,
            pending,
            moved: Moved::default(),
            spare: Vec::new(),
        }
    }

    /// The same arena with each shard a process of its own (`tickflow shard`), meeting in
    /// `store`; `fault` kills one at a chosen frame. Without `spawn` the shards are started by
    /// hand (on other machines, say).
    pub(crate) fn with_processes(
        actors: usize,
        seed: u64,
        shards: usize,
        store: &str,
        schema: Option<&str>,
        fault: Option<Fault>,
        spawn: bool,
    ) -> Result<Cluster, String> {
        let (director, pending) = Self::start(actors, seed, shards, BossMode::Task);
        let remote = Processes::start(shards, seed, store, schema, fault, spawn)?;
        Ok(Cluster {
            workers: Vec::new(),
            shards,
            remote: Some(Box::new(remote)),
            director,
            pending,
            moved: Moved::default(),
            spare: Vec::new(),
        })
    }

    /// The director and the first frame's inputs.
    fn start(actors: usize, seed: u64, shards: usize, boss: BossMode) -> (Director, Vec<Inbound>) {
        let mut director = Director::new(actors, seed, boss);
        let orders = std::mem::take(&mut director.board.orders);
        // The first frame sees the starting actors where they are placed.
        let seen = (orders.iter()).map(|s| (s.id, Seen::new(s.pos, s.team, true)));
        let view = Arc::new(View::new(orders.len(), seen));
        let mut pending = vec![Inbound::default(); shards];
        for p in &mut pending {
            p.view = Arc::clone(&view);
        }
        for s in orders {
            pending[region(s.pos, shards)].spawns.push(s);
        }
        (director, pending)
    }

    /// Runs one frame of `dt` on every shard, then the director's; returns the shards'
    /// reports summed (stage times: the slowest shard's, plus the director's).
    pub(crate) fn frame(&mut self, dt: Span) -> FrameReport {
        self.try_frame(dt).expect("shards on threads do not fail")
    }

    /// [`frame`](Self::frame), which fails only when shard processes cannot reach their store.
    pub(crate) fn try_frame(&mut self, dt: Span) -> Result<FrameReport, String> {
        let inbound = std::mem::take(&mut self.pending);
        if let Some(remote) = &mut self.remote {
            let outs = remote.frame(inbound, dt)?;
            for o in &outs {
                self.moved.time += o.moving;
            }
            (self.moved.actors, self.moved.bytes) = (remote.handovers, remote.bytes);
            return Ok(self.exchange(outs, dt));
        }
        let mut outs = Vec::with_capacity(self.workers.len());
        for (w, i) in self.workers.iter_mut().zip(inbound) {
            match w {
                Worker::Here(shard) => {
                    let _span = tracing::info_span!("shard", index = shard.index).entered();
                    outs.push(shard.round(i, dt))
                }
                Worker::Thread { jobs, .. } => jobs.send((i, dt)).expect("the shard runs"),
            }
        }
        for w in &self.workers {
            if let Worker::Thread { done, .. } = w {
                outs.push(done.recv().expect("the shard runs"));
            }
        }
        Ok(self.exchange(outs, dt))
    }

    /// The director's part: the view, its frame, and the routing of what the shards sent.
    fn exchange(&mut self, outs: Vec<Outbound>, dt: Span) -> FrameReport {
        let shards = self.shards;
        let frame = outs[0].report.frame;
        let seen = outs.iter().flat_map(|o| o.seen.iter().copied());
        let ids = self.director.board.ids();
        // A view no one holds any more is filled again in place.
        let view = match self.spare.iter().position(|v| Arc::strong_count(v) == 1) {
            Some(k) => {
                let mut v = self.spare.swap_remove(k);
                Arc::get_mut(&mut v)
                    .expect("no one else holds it")
                    .refill(ids, seen);
                v
            }
            None => Arc::new(View::new(ids, seen)),
        };
        self.spare.push(Arc::clone(&self.director.board.view));
        if self.spare.len() > 4 {
            // Views held elsewhere for long (a rollback's saved state) are not waited for.
            self.spare.remove(0);
        }
        let board = &mut self.director.board;
        board.see(Arc::clone(&view), frame);
        let director = {
            let _span = tracing::info_span!("director").entered();
            self.director.sched.tick(dt, board)
        };
        let mut pending = vec![Inbound::default(); shards];
        for p in &mut pending {
            p.view = Arc::clone(&view);
        }
        let mut report = FrameReport::default();
        for (k, mut o) in outs.into_iter().enumerate() {
            o.seen.clear();
            pending[k].seen = o.seen;
            for (to, _, bytes) in o.departures {
                self.moved.actors += 1;
                self.moved.bytes += bytes.len() as u64;
                pending[to].arrivals.push(bytes);
            }
            self.moved.time += o.moving;
            for h in o.hits {
                // Hits go to where the target stands now: the shard it is in, or moving to.
                if let Some(pos) = view.pos_of(h.target) {
                    pending[region(pos, shards)].hits.push(h);
                }
            }
            add(&mut report, &o.report, true);
        }
        for s in self.director.board.orders.drain(..) {
            pending[region(s.pos, shards)].spawns.push(s);
        }
        self.pending = pending;
        add(&mut report, &director, false);
        report
    }

    /// Brings every shard back to this thread (ends their threads); the accessors below
    /// need it.
    pub(crate) fn finish(&mut self) -> Result<(), String> {
        if let Some(remote) = &mut self.remote {
            let inbound = std::mem::take(&mut self.pending);
            return remote.finish(inbound);
        }
        let workers = std::mem::take(&mut self.workers);
        self.workers = (workers.into_iter())
            .map(|w| match w {
                Worker::Thread { jobs, handle, .. } => {
                    drop(jobs); // ends its loop
                    Worker::Here(handle.join().expect("a shard thread does not panic"))
                }
                here => here,
            })
            .collect();
        Ok(())
    }

    /// The shards (after [`finish`](Self::finish)).
    pub(crate) fn shards(&self) -> impl Iterator<Item = &Shard> {
        self.workers.iter().map(|w| match w {
            Worker::Here(s) => &**s,
            Worker::Thread { .. } => panic!("Cluster::finish first"),
        })
    }

    /// The checksum of every event so far, in any shard or the director, and of where the
    /// living actors stand, those on their way to another shard too (sums: the same for any
    /// number of shards).
    pub(crate) fn checksum(&self) -> u64 {
        let mut sum = self.director.board.sum;
        for e in self.remote.iter().flat_map(|r| &r.ends) {
            sum = sum.wrapping_add(e.sum).wrapping_add(e.standing);
        }
        for s in self.shards() {
            sum = sum
                .wrapping_add(s.arena.sum)
                .wrapping_add(s.arena.standing());
        }
        for bytes in self.pending.iter().flat_map(|p| &p.arrivals) {
            sum = sum.wrapping_add(standing_in_transit(bytes));
        }
        sum
    }

    pub(crate) fn stats(&self) -> Stats {
        let mut stats = self.director.board.stats.clone();
        for e in self.remote.iter().flat_map(|r| &r.ends) {
            stats.add(&e.stats);
        }
        for s in self.shards() {
            stats.add(&s.arena.stats);
        }
        stats
    }

    /// Tick functions, timers and latent actions of all shards (after
    /// [`finish`](Self::finish)).
    pub(crate) fn counts(&mut self) -> (usize, usize, usize) {
        let (mut ticks, mut timers, mut latent) = (0, 0, 0);
        for e in self.remote.iter().flat_map(|r| &r.ends) {
            ticks += e.counts.0;
            timers += e.counts.1;
            latent += e.counts.2;
        }
        for s in self.shards_mut() {
            ticks += s.sched.ticks().len();
            timers += s.sched.timers().len();
            latent += s.sched.latent().len();
        }
        (ticks, timers, latent)
    }

    /// A hash of the director's view of every actor (readable while shards run on threads).
    pub(crate) fn view_hash(&self) -> u64 {
        self.director.board.view.hash()
    }

    /// Actors in the game (the dying, and those on their way to another shard, too).
    pub(crate) fn alive(&self) -> usize {
        let moving: usize = self.pending.iter().map(|p| p.arrivals.len()).sum();
        let remote: usize = self
            .remote
            .iter()
            .flat_map(|r| &r.ends)
            .map(|e| e.actors.len())
            .sum();
        let moving = moving + remote;
        moving + self.shards().map(|s| s.arena.actors.len()).sum::<usize>()
    }

    /// The cluster between frames (shards here).
    pub(crate) fn save(&mut self) -> Saved {
        for s in self.shards_mut() {
            s.sched.apply_commands();
        }
        self.director.sched.apply_commands();
        Saved {
            shards: (self.shards())
                .map(|s| (s.sched.snapshot(), s.arena.clone()))
                .collect(),
            director: (self.director.sched.snapshot(), self.director.board.clone()),
            pending: self.pending.clone(),
            moved: self.moved,
        }
    }

    /// A cluster (shards here) from a saved one, its callbacks bound again by name.
    pub(crate) fn restore(saved: &Saved, seed: u64) -> Result<Cluster, String> {
        let n = saved.shards.len();
        let mut workers = Vec::with_capacity(n);
        for (k, (snap, arena)) in saved.shards.iter().enumerate() {
            let (sched, report) =
                Scheduler::restore(snap, &mut rebind()).map_err(|e| e.to_string())?;
            if !report.is_complete() {
                return Err(format!("shard {k}: {report}"));
            }
            let arena = arena.clone();
            workers.push(Worker::Here(Box::new(Shard::from_parts(
                k, n, seed, sched, arena,
            ))));
        }
        let (snap, board) = &saved.director;
        let (sched, report) =
            Scheduler::restore(snap, &mut rebind_director()).map_err(|e| e.to_string())?;
        if !report.is_complete() {
            return Err(format!("director: {report}"));
        }
        Ok(Cluster {
            workers,
            shards: n,
            remote: None,
            director: Director::from_parts(sched, board.clone()),
            pending: saved.pending.clone(),
            moved: saved.moved,
            spare: Vec::new(),
        })
    }

    pub(crate) fn shards_mut(&mut self) -> impl Iterator<Item = &mut Shard> {
        self.workers.iter_mut().map(|w| match w {
            Worker::Here(s) => &mut **s,
            Worker::Thread { .. } => panic!("Cluster::finish first"),
        })
    }
}

/// Adds a frame's counts to `sum`; stage times add for the director (it runs after the
/// shards) and take the slowest shard's otherwise.
fn add(sum: &mut FrameReport, r: &FrameReport, shard: bool) {
    sum.frame = r.frame;
    sum.game_dt = r.game_dt;
    sum.real_dt = r.real_dt;
    sum.ticks_run += r.ticks_run;
    sum.timers_fired += r.timers_fired;
    sum.tickables_ticked += r.tickables_ticked;
    sum.latent_completed += r.latent_completed;
    sum.tasks_polled += r.tasks_polled;
    sum.tasks_ended += r.tasks_ended;
    for (s, t) in sum.stage_times.iter_mut().zip(r.stage_times) {
        *s = if shard { (*s).max(t) } else { *s + t };
    }
}

/// Runs a shard on a thread of its own, under the caller's tracing subscriber.
fn spawn_worker(mut shard: Box<Shard>) -> Worker {
    let (jobs, inbox) = mpsc::channel::<(Inbound, Span)>();
    let (outbox, done) = mpsc::channel();
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    let handle = std::thread::Builder::new()
        .name(format!("shard {}", shard.index))
        .spawn(move || {
            tracing::dispatcher::with_default(&dispatch, || {
                while let Ok((inbound, dt)) = inbox.recv() {
                    let span = tracing::info_span!("shard", index = shard.index).entered();
                    let out = shard.round(inbound, dt);
                    drop(span);
                    if outbox.send(out).is_err() {
                        break;
                    }
                }
            });
            shard
        })
        .expect("a thread for the shard");
    Worker::Thread { jobs, done, handle }
}
