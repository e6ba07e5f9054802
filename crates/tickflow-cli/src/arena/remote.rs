//! A shard as a process of its own (`tickflow shard`): it reads each frame's inputs from the
//! store, runs the frame, and commits its outputs, the actors it hands over and the ones it
//! takes in one transaction — a [`Durable`] commit that also keeps the shard's image (its
//! whole scheduler and game state). Started again after a crash, it asks `Durable::resume`
//! for that image and goes on from the frame after it: the library's resume is all its
//! recovery, with no replay of its own.
//!
//! An actor moves through the owner registry and the outbox (`tickflow-store`'s handover):
//! the sender freezes it and sends a parcel; the receiver imports it and takes it in the
//! registry (compare-and-set on the epoch) in its frame's commit; the sender commits the move
//! when the registry names the receiver, two frames later at most. (The shard writes these
//! steps itself, in the commit's transaction, rather than through `Durable::send`: a lockstep
//! shard takes an actor in the very frame its director routes it there, not when its parcel
//! lands.)

use std::collections::BTreeMap;

use tickflow::prelude::*;
use tickflow_store::{Durable, Handovers, Parcel, Settled, Store, StoreError};

use super::mailbox::{write_frame, FrameWrite, Mailbox, POLL};
use super::owner;
use super::shard::{rebind, Departure, Shard};
use super::wire::{End, FrameIn, FrameOut, ShardState};
use super::Arena;
use crate::sql::{err, Sql};

/// A shard's name in the registry.
pub(crate) fn node(shard: usize) -> String {
    format!("shard-{shard}")
}

/// Waits (polling) until `read` finds something.
pub(crate) fn wait<T>(mut read: impl FnMut() -> Result<Option<T>, String>) -> Result<T, String> {
    loop {
        if let Some(v) = read()? {
            return Ok(v);
        }
        std::thread::sleep(POLL);
    }
}

/// A shard process between frames.
struct State {
    index: usize,
    node: String,
    shard: Shard,
    /// The last frame it ran.
    frame: u64,
    held: BTreeMap<u32, u64>,
    /// Handed over, not settled: id -> (epoch sent at, frame sent in).
    sent: BTreeMap<u32, (u64, u64)>,
    recoveries: u64,
}

/// Runs shard `index` of `shards` until the director's finishing frame.
pub(crate) fn serve(
    index: usize,
    shards: usize,
    seed: u64,
    store: &str,
    schema: Option<&str>,
) -> Result<(), String> {
    let mb = Mailbox::open(store, schema)?;
    // A second connection for the shard's commits: its own store's, through the same opening.
    match Mailbox::open(store, schema)? {
        Mailbox::Sqlite(db) => serve_on(db, mb, index, shards, seed),
        Mailbox::Postgres(db) => serve_on(db, mb, index, shards, seed),
    }
}

fn serve_on<S: Store + Handovers>(
    db: S,
    mut mb: Mailbox,
    index: usize,
    shards: usize,
    seed: u64,
) -> Result<(), String>
where
    for<'t> S::Tx<'t>: Sql,
{
    let mut d = Durable::new(db, node(index));
    let mut st = recover(&mut d, index, shards, seed)?;
    loop {
        let f = st.frame + 1;
        let input = wait(|| {
            // Started by a director that is gone (this process was handed to init): stop.
            #[cfg(unix)]
            if std::os::unix::process::parent_id() == 1 {
                return Err("the director is gone".to_string());
            }
            mb.input(index, f)
        })?;
        let fin: FrameIn = postcard::from_bytes(&input).map_err(|e| e.to_string())?;
        if run_frame(&mut mb, &mut d, &mut st, fin)? {
            let _ = d.close();
            return Ok(());
        }
    }
}

/// The state after the last committed frame: the image `resume` gives back, or a new shard.
fn recover<S: Store>(
    d: &mut Durable<S>,
    index: usize,
    shards: usize,
    seed: u64,
) -> Result<State, String> {
    let (sched, resumed) = d.resume(&mut rebind()).map_err(err)?;
    let mut st = match resumed.state {
        Some(bytes) => {
            let s: ShardState = postcard::from_bytes(&bytes).map_err(|e| e.to_string())?;
            State {
                index,
                node: node(index),
                shard: Shard::from_parts(index, shards, seed, sched, s.arena),
                frame: s.frame,
                held: s.held,
                sent: s.sent,
                recoveries: s.recoveries + 1,
            }
        }
        None if resumed.resumed => {
            return Err(format!("{}: committed, but without an image", node(index)))
        }
        None => State {
            index,
            node: node(index),
            shard: Shard::new(index, shards, seed),
            frame: 0,
            held: BTreeMap::new(),
            sent: BTreeMap::new(),
            recoveries: 0,
        },
    };
    st.shard.two_phase = true;
    Ok(st)
}

/// Runs frame `st.frame + 1` and commits it. Returns `true` after the finishing frame.
fn run_frame<S: Store + Handovers>(
    mb: &mut Mailbox,
    d: &mut Durable<S>,
    st: &mut State,
    fin: FrameIn,
) -> Result<bool, String>
where
    for<'t> S::Tx<'t>: Sql,
{
    let f = st.frame + 1;
    settle(mb, st, f, fin.finish)?;
    let mut refused = Refused::default();
    let mut taken: Vec<Parcel> = take(mb, st, &fin.arriving, &mut refused)?;
    for p in &taken {
        st.held.insert(p.owner.get() as u32, p.epoch + 1);
    }
    let spawned: Vec<OwnerId> = fin.spawns.iter().map(|s| owner(s.id)).collect();
    for s in &fin.spawns {
        st.held.insert(s.id, 0);
    }
    let (finish, dt) = (fin.finish, Span::from_flicks(fin.dt));
    let bytes = taken.iter_mut().map(|p| std::mem::take(&mut p.bytes));
    let inbound = fin.inbound(bytes.collect(), Vec::new());
    let (out, end) = if finish {
        st.shard.take_in_only(inbound);
        (Default::default(), Some(end(st)))
    } else {
        (st.shard.round(inbound, dt), None)
    };
    let mut sends = Vec::with_capacity(out.departures.len());
    for (to, id, bytes) in &out.departures {
        let epoch = st.held.remove(id).ok_or("a leaving actor was held")?;
        st.sent.insert(*id, (epoch, f));
        sends.push(parcel(
            u64::from(*id),
            epoch,
            &st.node,
            &node(*to),
            bytes.clone(),
        ));
    }
    st.frame = f;
    let mut wire = FrameOut::of(&out, end);
    wire.refused = refused.counts;
    let output = postcard::to_stdvec(&wire).map_err(|e| e.to_string())?;
    let image = image(st)?;
    let w = FrameWrite {
        shard: st.index,
        frame: f,
        node: &st.node,
        output: &output,
        spawned: &spawned,
        sends: &sends,
        accepts: &taken,
        refuses: &refused.parcels,
    };
    d.commit_image(&mut st.shard.sched, &image, |tx, _| {
        write_frame::<S>(tx, &w).map_err(|e| StoreError::Effects(e.into()))
    })
    .map_err(err)?;
    Ok(finish)
}

/// The shard's own state as its image keeps it (its scheduler goes in beside it).
fn image(st: &mut State) -> Result<Vec<u8>, String> {
    let s = ShardState {
        frame: st.frame,
        arena: std::mem::replace(&mut st.shard.arena, Arena::new()),
        held: std::mem::take(&mut st.held),
        sent: std::mem::take(&mut st.sent),
        recoveries: st.recoveries,
    };
    let bytes = postcard::to_stdvec(&s).map_err(|e| e.to_string());
    (st.shard.arena, st.held, st.sent) = (s.arena, s.held, s.sent);
    bytes
}

fn parcel(owner: u64, epoch: u64, sender: &str, receiver: &str, bytes: Vec<u8>) -> Parcel {
    Parcel {
        owner: OwnerId::new(owner),
        epoch,
        sender: sender.into(),
        receiver: receiver.into(),
        bytes,
    }
}

/// Commits the moves the registry confirms (sent two or more frames ago; all of them when
/// `all`, waiting for each).
fn settle(mb: &mut Mailbox, st: &mut State, f: u64, all: bool) -> Result<(), String> {
    let due: Vec<(u32, u64)> = (st.sent.iter())
        .filter(|(_, &(_, sent_in))| all || sent_in + 2 <= f)
        .map(|(&id, &(epoch, _))| (id, epoch))
        .collect();
    for (id, epoch) in due {
        let settled = wait(|| match mb.settle(owner(id), &st.node, epoch)? {
            Settled::Waiting => Ok(None),
            s => Ok(Some(s)),
        })?;
        match settled {
            Settled::Moved(_) => {
                st.shard.sched.commit_owner(owner(id));
                st.sent.remove(&id);
            }
            _ => return Err(format!("actor {id}: its handover was refused")),
        }
    }
    Ok(())
}

/// The parcels of the actors arriving this frame, read and decoded; parcels that are damaged,
/// stale or delivered twice are refused (and counted) on the way.
/// Parcels a frame refuses: removed in its commit, and counted in its output with them.
#[derive(Default)]
struct Refused {
    parcels: Vec<Parcel>,
    /// (damaged, stale, delivered twice).
    counts: (u64, u64, u64),
}

fn take(
    mb: &mut Mailbox,
    st: &mut State,
    arriving: &[u32],
    refused: &mut Refused,
) -> Result<Vec<Parcel>, String> {
    let mut inbox = mb.inbox(&st.node)?;
    // The newest parcel of an owner first: an older one is stale whatever it says.
    inbox.sort_by_key(|p| (p.owner, std::cmp::Reverse(p.epoch)));
    let mut out: Vec<Parcel> = Vec::with_capacity(arriving.len());
    for p in inbox {
        let decodes = postcard::from_bytes::<Departure>(&p.bytes).is_ok();
        let expected = arriving.iter().any(|&id| u64::from(id) == p.owner.get());
        let taken = out.iter().any(|q| q.owner == p.owner);
        if expected && decodes && !taken {
            out.push(p);
            continue;
        }
        if !decodes {
            refused.counts.0 += 1;
            refused.parcels.push(p);
            continue;
        }
        match mb.holder(p.owner)? {
            Some(h) if h.node == st.node && h.epoch == p.epoch + 1 => refused.counts.2 += 1,
            Some(h) if h.epoch > p.epoch || taken => refused.counts.1 += 1,
            None => refused.counts.1 += 1,
            // A parcel for a later frame (its sender is ahead): it waits.
            Some(_) => continue,
        }
        refused.parcels.push(p);
    }
    if out.len() != arriving.len() {
        return Err(format!(
            "{}: {} actors arrive but {} parcels were found",
            st.node,
            arriving.len(),
            out.len()
        ));
    }
    Ok(out)
}

fn end(st: &mut State) -> End {
    let sched = &mut st.shard.sched;
    let counts = (
        sched.ticks().len(),
        sched.timers().len(),
        sched.latent().len(),
    );
    let arena = &st.shard.arena;
    End {
        sum: arena.sum,
        standing: arena.standing(),
        stats: arena.stats.clone(),
        actors: arena.actors.iter().map(|(id, _)| id).collect(),
        counts,
        recoveries: st.recoveries,
    }
}
