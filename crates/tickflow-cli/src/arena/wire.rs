//! What a shard process and the director say to each other through the store, as plain data
//! (postcard): a frame's inputs, a frame's outputs, and a shard's own state in its image.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tickflow::prelude::*;
use tickflow::FrameReport;

use super::shard::{Inbound, Outbound, Spawn};
use super::{Arena, Hit, Seen, Stats, View};

/// A frame's inputs for one shard.
#[derive(Serialize, Deserialize)]
pub(crate) struct FrameIn {
    /// Game time the frame runs (flicks).
    pub(crate) dt: u64,
    /// Take the arrivals in and report the end state instead of running a frame.
    pub(crate) finish: bool,
    pub(crate) view: View,
    pub(crate) spawns: Vec<Spawn>,
    pub(crate) hits: Vec<Hit>,
    /// Actors handed over to this shard in the last frame: their parcels are in the outbox.
    pub(crate) arriving: Vec<u32>,
}

impl FrameIn {
    /// The director's inputs for a shard (arrivals travel through the outbox, not here).
    /// The finishing step takes the arrivals only: spawns and hits ordered in the last frame
    /// would land in a frame that never runs, and a run on threads leaves them unapplied too.
    pub(crate) fn of(inbound: &Inbound, arriving: Vec<u32>, dt: Span, finish: bool) -> FrameIn {
        let (spawns, hits) = match finish {
            true => (Vec::new(), Vec::new()),
            false => (inbound.spawns.clone(), inbound.hits.clone()),
        };
        FrameIn {
            dt: dt.flicks(),
            finish,
            view: (*inbound.view).clone(),
            spawns,
            hits,
            arriving,
        }
    }

    /// The shard's inbound, with the arrivals' bytes it read from the outbox.
    pub(crate) fn inbound(self, arrivals: Vec<Vec<u8>>, seen: Vec<(u32, Seen)>) -> Inbound {
        Inbound {
            arrivals,
            spawns: self.spawns,
            hits: self.hits,
            view: Arc::new(self.view),
            seen,
        }
    }
}

/// A frame's outputs of one shard.
#[derive(Serialize, Deserialize)]
pub(crate) struct FrameOut {
    pub(crate) report: Report,
    pub(crate) hits: Vec<Hit>,
    pub(crate) seen: Vec<(u32, Seen)>,
    /// Actors handed over: (destination shard, id, bytes of the parcel).
    pub(crate) handed: Vec<(usize, u32, u64)>,
    pub(crate) moving_ns: u64,
    /// Parcels this frame refused: (damaged, stale, delivered twice).
    pub(crate) refused: (u64, u64, u64),
    /// Set on the finishing frame: the shard's end state.
    pub(crate) end: Option<End>,
}

impl FrameOut {
    pub(crate) fn of(out: &Outbound, end: Option<End>) -> FrameOut {
        FrameOut {
            report: Report::of(&out.report),
            hits: out.hits.clone(),
            seen: out.seen.clone(),
            handed: (out.departures.iter())
                .map(|(to, id, bytes)| (*to, *id, bytes.len() as u64))
                .collect(),
            moving_ns: out.moving.as_nanos() as u64,
            refused: (0, 0, 0),
            end,
        }
    }

    /// The outbound the director routes (departures carry no bytes: they are in the outbox).
    pub(crate) fn outbound(self) -> Routed {
        let out = Outbound {
            report: self.report.frame_report(),
            hits: self.hits,
            seen: self.seen,
            departures: Vec::new(),
            moving: Duration::from_nanos(self.moving_ns),
        };
        (out, self.handed, self.refused, self.end)
    }
}

/// A frame's outputs as the director routes them: the outbound, the actors handed over
/// (destination, id, bytes), the parcels refused (damaged, stale, delivered twice) and, on
/// the finishing frame, the end state.
pub(crate) type Routed = (
    Outbound,
    Vec<(usize, u32, u64)>,
    (u64, u64, u64),
    Option<End>,
);

/// A shard's state at the end of the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct End {
    pub(crate) sum: u64,
    pub(crate) standing: u64,
    pub(crate) stats: Stats,
    /// Its living actors, by id.
    pub(crate) actors: Vec<u32>,
    /// Tick functions, timers and latent actions.
    pub(crate) counts: (usize, usize, usize),
    /// Times this shard was started again and resumed from its image.
    pub(crate) recoveries: u64,
}

/// The parts of a [`FrameReport`] the director adds up.
#[derive(Serialize, Deserialize)]
pub(crate) struct Report {
    frame: u64,
    game_dt: u64,
    real_dt: u64,
    counts: [usize; 6],
    stage_ns: Vec<u64>,
}

impl Report {
    fn of(r: &FrameReport) -> Report {
        Report {
            frame: r.frame,
            game_dt: r.game_dt.flicks(),
            real_dt: r.real_dt.flicks(),
            counts: [
                r.ticks_run,
                r.timers_fired,
                r.tickables_ticked,
                r.latent_completed,
                r.tasks_polled,
                r.tasks_ended,
            ],
            stage_ns: (r.stage_times.iter())
                .map(|d| d.as_nanos() as u64)
                .collect(),
        }
    }

    fn frame_report(&self) -> FrameReport {
        let mut r = FrameReport::default();
        r.frame = self.frame;
        r.game_dt = Span::from_flicks(self.game_dt);
        r.real_dt = Span::from_flicks(self.real_dt);
        [
            r.ticks_run,
            r.timers_fired,
            r.tickables_ticked,
            r.latent_completed,
            r.tasks_polled,
            r.tasks_ended,
        ] = self.counts;
        for (t, ns) in r.stage_times.iter_mut().zip(&self.stage_ns) {
            *t = Duration::from_nanos(*ns);
        }
        r
    }
}

/// A shard process's own state after a frame, kept in its node's image beside its scheduler
/// ([`Durable::commit_image`](tickflow_store::Durable::commit_image)): with the scheduler,
/// all it needs to go on from there after a restart.
#[derive(Serialize, Deserialize)]
pub(crate) struct ShardState {
    pub(crate) frame: u64,
    pub(crate) arena: Arena,
    /// The registry epoch of each actor this shard holds.
    pub(crate) held: BTreeMap<u32, u64>,
    /// Actors handed over and not settled yet: id -> (epoch sent at, frame sent in).
    pub(crate) sent: BTreeMap<u32, (u64, u64)>,
    pub(crate) recoveries: u64,
}
