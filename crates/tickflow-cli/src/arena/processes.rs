//! The director's side of shards as processes (`demo --shards N --processes`): it starts one
//! `tickflow shard` child per shard, writes each frame's inputs to the store, waits at the
//! frame barrier for every shard's outputs, and starts again a child that died (the others
//! wait at the barrier meanwhile). A fault run kills one shard with SIGKILL at a chosen frame
//! and puts damaged, stale and repeated parcels in the outbox.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tickflow::prelude::*;
use tickflow_store::Parcel;

use super::mailbox::{Mailbox, POLL};
use super::remote::node;
use super::shard::{placeholder_departure, Inbound, Outbound};
use super::wire::{End, FrameIn, FrameOut};

/// A fault run's plan: which shard dies when, and which frame gets bad parcels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fault {
    pub(crate) victim: usize,
    pub(crate) frame: u64,
    /// How long after the frame's inputs are written the victim is killed.
    pub(crate) after: Duration,
}

impl Fault {
    /// A plan drawn from `seed` for a run of `frames` frames over `shards` shards.
    pub(crate) fn from_seed(seed: u64, shards: usize, frames: u64) -> Fault {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        Fault {
            victim: (next() % shards as u64) as usize,
            frame: 1 + next() % frames.saturating_sub(1).max(1),
            after: Duration::from_micros(next() % 3_000),
        }
    }
}

/// The shard processes and what the director knows of them.
pub(crate) struct Processes {
    mb: Mailbox,
    args: Vec<String>,
    children: Vec<Child>,
    /// Actors handed over in the last frame, by receiving shard.
    arriving: Vec<Vec<u32>>,
    /// Each moved actor's shard and registry epoch (for the fault run's bad parcels).
    moved: HashMap<u32, (usize, u64)>,
    frame: u64,
    fault: Option<Fault>,
    pub(crate) restarts: u64,
    /// Actors handed over, and their parcels' bytes.
    pub(crate) handovers: u64,
    pub(crate) bytes: u64,
    /// Bad parcels put in the outbox: (damaged, stale, repeated).
    pub(crate) injected: (u64, u64, u64),
    /// Bad parcels the shards refused: (damaged, stale, delivered twice).
    pub(crate) refused: (u64, u64, u64),
    /// Per frame: wall time of the frame minus the slowest shard's own frame time.
    pub(crate) barrier: Vec<Duration>,
    pub(crate) ends: Vec<End>,
    /// After the run: registered live actors and parcels left in the outbox.
    pub(crate) registry: (usize, usize),
}

impl Processes {
    /// Starts `shards` shard processes on `store` (`sqlite:PATH` or a PostgreSQL URL, tables
    /// in `schema`).
    pub(crate) fn start(
        shards: usize,
        seed: u64,
        store: &str,
        schema: Option<&str>,
        fault: Option<Fault>,
        spawn: bool,
    ) -> Result<Processes, String> {
        let mut mb = Mailbox::open(store, schema)?;
        if !mb.is_fresh()? {
            return Err(format!(
                "{store} holds another run's rows: give the run a new file (or schema)"
            ));
        }
        let mut args = vec![
            "shard".to_string(),
            "--shards".into(),
            shards.to_string(),
            "--seed".into(),
            seed.to_string(),
            "--store".into(),
            store.into(),
        ];
        if let Some(schema) = schema {
            args.extend(["--schema".into(), schema.into()]);
        }
        let mut p = Processes {
            mb,
            args,
            children: Vec::new(),
            arriving: vec![Vec::new(); shards],
            moved: HashMap::new(),
            frame: 0,
            fault,
            restarts: 0,
            handovers: 0,
            bytes: 0,
            injected: (0, 0, 0),
            refused: (0, 0, 0),
            barrier: Vec::new(),
            ends: Vec::new(),
            registry: (0, 0),
        };
        if !spawn {
            eprintln!(
                "waiting for {shards} shards: start `tickflow {} --id K` for K in 0..{shards}",
                p.args.join(" ")
            );
            return Ok(p);
        }
        for k in 0..shards {
            let child = p.spawn(k)?;
            p.children.push(child);
        }
        Ok(p)
    }

    fn spawn(&self, k: usize) -> Result<Child, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        Command::new(exe)
            .args(&self.args)
            .args(["--id", &k.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting shard {k}: {e}"))
    }

    /// Runs a frame on every shard: writes the inputs, waits for the outputs.
    pub(crate) fn frame(
        &mut self,
        inbound: Vec<Inbound>,
        dt: Span,
    ) -> Result<Vec<Outbound>, String> {
        let (outs, _) = self.round(inbound, dt, false)?;
        Ok(outs)
    }

    /// The last step: shards take in the actors still arriving and report their end state;
    /// then the registry is read back.
    pub(crate) fn finish(&mut self, inbound: Vec<Inbound>) -> Result<(), String> {
        let (_, ends) = self.round(inbound, Span::ZERO, true)?;
        self.ends = ends;
        for (k, c) in self.children.iter_mut().enumerate() {
            let status = c.wait().map_err(|e| e.to_string())?;
            if !status.success() {
                return Err(format!("shard {k} ended with {status}"));
            }
        }
        let owners = self.mb.owners()?;
        let mut outbox = 0;
        for k in 0..self.ends.len() {
            outbox += self.mb.inbox(&node(k))?.len();
        }
        let live: HashMap<u32, usize> = (self.ends.iter().enumerate())
            .flat_map(|(k, e)| e.actors.iter().map(move |&id| (id, k)))
            .collect();
        for (id, k) in &live {
            let held = owners.iter().find(|(o, _)| o.get() == u64::from(*id));
            if held.map(|(_, h)| h.node.as_str()) != Some(node(*k).as_str()) {
                return Err(format!(
                    "actor {id} is in shard {k}, the registry says {held:?}"
                ));
            }
        }
        self.registry = (live.len(), outbox);
        Ok(())
    }

    fn round(
        &mut self,
        inbound: Vec<Inbound>,
        dt: Span,
        finish: bool,
    ) -> Result<(Vec<Outbound>, Vec<End>), String> {
        self.frame += 1;
        let f = self.frame;
        let inputs: Vec<(usize, Vec<u8>)> = (inbound.iter().enumerate())
            .map(|(k, i)| {
                let fin = FrameIn::of(i, std::mem::take(&mut self.arriving[k]), dt, finish);
                (k, postcard::to_stdvec(&fin).expect("plain data encodes"))
            })
            .collect();
        let start = Instant::now();
        self.mb.put_inputs(f, &inputs)?;
        if let Some(fault) = self
            .fault
            .filter(|x| x.frame == f && !self.children.is_empty())
        {
            self.inject()?;
            std::thread::sleep(fault.after);
            let c = &mut self.children[fault.victim];
            let _ = c.kill(); // SIGKILL on Unix
            let _ = c.wait();
        }
        let mut outs = Vec::with_capacity(inputs.len());
        // Shards started by hand are restarted by hand: the director only waits for them.
        let watch = !self.children.is_empty();
        let mut ends = Vec::new();
        let mut slowest = Duration::ZERO;
        for k in 0..inputs.len() {
            let bytes = loop {
                if let Some(b) = self.mb.output(k, f)? {
                    break b;
                }
                let exited = match watch {
                    true => self.children[k].try_wait().map_err(|e| e.to_string())?,
                    false => None,
                };
                if let Some(status) = exited {
                    if let Some(b) = self.mb.output(k, f)? {
                        break b; // it wrote its output, then ended (its last frame) or died
                    }
                    // Only a kill is survived: a shard that stopped on an error would again.
                    if status.code().is_some() {
                        return Err(format!("shard {k} stopped ({status}) in frame {f}"));
                    }
                    tracing::info!(shard = k, frame = f, %status, "restarting a shard");
                    self.children[k] = self.spawn(k)?;
                    self.restarts += 1;
                }
                std::thread::sleep(POLL);
            };
            let out: FrameOut = postcard::from_bytes(&bytes).map_err(|e| e.to_string())?;
            let (out, handed, refused, end) = out.outbound();
            self.refused.0 += refused.0;
            self.refused.1 += refused.1;
            self.refused.2 += refused.2;
            slowest = slowest.max(out.report.stage_times.iter().sum());
            for (to, id, len) in handed {
                self.handovers += 1;
                self.bytes += len;
                self.arriving[to].push(id);
                let e = self.moved.entry(id).or_insert((to, 0));
                *e = (to, e.1 + 1);
            }
            outs.push(out);
            ends.extend(end);
        }
        self.barrier.push(start.elapsed().saturating_sub(slowest));
        Ok((outs, ends))
    }

    /// Puts a damaged parcel, one from a stale epoch and one delivered a second time in the
    /// outbox: each receiver must refuse it and change nothing.
    fn inject(&mut self) -> Result<(), String> {
        let shards = self.children.len();
        // Not an actor on its way now: its parcel holds the key (owner, epoch) a repeat takes.
        let on_the_way: Vec<u32> = self.arriving.iter().flatten().copied().collect();
        let mut moved: Vec<(u32, (usize, u64))> = (self.moved.iter())
            .filter(|(id, _)| !on_the_way.contains(id))
            .map(|(&id, &at)| (id, at))
            .collect();
        moved.sort_unstable();
        let mut put = |p: Parcel| self.mb.inject(&p);
        let damaged = put(Parcel {
            owner: OwnerId::new(u64::from(u32::MAX) + 1),
            epoch: 0,
            sender: node(0),
            receiver: node(shards - 1),
            bytes: vec![0xff; 7],
        })?;
        self.injected.0 += u64::from(damaged);
        let mut it = moved.into_iter().filter(|(_, (_, e))| *e >= 1);
        if let Some((id, (at, epoch))) = it.next() {
            // Delivered twice: the parcel that brought it where it is, again.
            let put = put(Parcel {
                owner: OwnerId::new(u64::from(id)),
                epoch: epoch - 1,
                sender: node((at + 1) % shards),
                receiver: node(at),
                bytes: placeholder_departure(id),
            })?;
            self.injected.2 += u64::from(put);
        }
        if let Some((id, (at, epoch))) = it.next() {
            // From a stale epoch: to another shard than the one that holds it.
            let put = put(Parcel {
                owner: OwnerId::new(u64::from(id)),
                epoch: epoch - 1,
                sender: node(at),
                receiver: node((at + 1) % shards),
                bytes: placeholder_departure(id),
            })?;
            self.injected.1 += u64::from(put);
        }
        Ok(())
    }
}
