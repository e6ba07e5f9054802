//! The fleet's checker: what the database holds after a run, against the invariants free
//! zones promise in place of the one-shard checksum.
//!
//! - Every actor in exactly one zone: the registry names a zone for it, and exactly one node
//!   holds its pulse row at the registry's epoch (rows of older epochs are a sender's or a
//!   lost node's leftovers, fenced by their epoch).
//! - Every durable call made once: the effects of an actor's pulse are its calls 1..=N once
//!   each, N being the calls its row counts (a call missing is lost; one twice, a double).
//! - No call early: call k of a pulse of period P, born at B, ran no earlier than B + k·P on
//!   the database's clock, less two frames and 5 ms. The actor's own clock is the zones'
//!   game clocks it lived on, which this stands for to about a frame each way (a call runs in
//!   the frame its due time falls in; a zone's stamps are taken at the start of its commit).
//!   A fault that counts offline time wrong — a node trusting its own clock, shifted 5 s, or
//!   an adoption counting its own frame's work as offline — puts calls seconds or, adoption
//!   after adoption, hundreds of milliseconds early, and fails the run.

use std::collections::HashMap;

use crate::sql::{Cell, Sql};

/// What the checker found.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) actors: usize,
    /// Actors no zone holds a row of at the registry's epoch, or that the registry lacks.
    pub(crate) nowhere: usize,
    /// Actors two nodes hold rows of at the registry's epoch.
    pub(crate) twice_held: usize,
    pub(crate) calls: u64,
    pub(crate) lost: u64,
    pub(crate) doubled: u64,
    pub(crate) early: u64,
    /// The smallest margin of a call over its due time, µs (negative: before it).
    pub(crate) min_margin_us: i64,
    /// Lateness of calls on their own clocks, µs, by kind (steady, first after adoption,
    /// first after a resume).
    pub(crate) late: [Vec<u64>; 3],
    /// Events by kind.
    pub(crate) events: HashMap<String, u64>,
    /// Adoptions: (lost zone, time µs).
    pub(crate) adoptions: Vec<(String, i64)>,
    /// Lines of zones that stopped with an error.
    pub(crate) zone_errors: Vec<String>,
    /// When zones committed again after failed commits (µs).
    pub(crate) recovered: Vec<i64>,
    /// Per zone: its load each second.
    pub(crate) load: HashMap<String, Vec<Second>>,
}

/// A zone's second, as its load row says.
#[derive(Debug)]
pub(crate) struct Second {
    /// When it was stored: the commit after the second ended (µs since the Unix epoch, the
    /// database's clock).
    pub(crate) at_us: i64,
    pub(crate) actors: u64,
    pub(crate) p99_us: u64,
    pub(crate) calls: u64,
    pub(crate) frames: u64,
    /// Frames that took longer than the frame's period.
    pub(crate) slow: u64,
}

impl Report {
    /// Violations of the invariants.
    pub(crate) fn violations(&self) -> u64 {
        self.nowhere as u64
            + self.twice_held as u64
            + self.lost
            + self.doubled
            + self.early
            + self.zone_errors.len() as u64
    }
}

/// Reads the run back from `tx` (`hz`: the zones' frame rate).
pub(crate) fn check(tx: &mut dyn Sql, hz: u32) -> Result<Report, String> {
    let mut r = Report {
        min_margin_us: i64::MAX,
        ..Report::default()
    };
    let actors = tx.rows("SELECT owner, born_us, period_us FROM fleet_actors", &[])?;
    r.actors = actors.len();
    let registry: HashMap<i64, (i64, String)> = (tx
        .rows("SELECT owner, epoch, node FROM tickflow_owners", &[])?)
    .into_iter()
    .map(|c| (c[0].i(), (c[1].i(), c[2].t().to_string())))
    .collect();
    // Pulse rows at the registry's epoch: (nodes holding one, calls of the holder's).
    let mut held: HashMap<i64, (usize, i64)> = HashMap::new();
    let rows = tx.rows(
        "SELECT owner, epoch, node, calls FROM tickflow_timers WHERE name = 'pulse'",
        &[],
    )?;
    for c in rows {
        let Some((epoch, node)) = registry.get(&c[0].i()) else {
            continue;
        };
        if c[1].i() == *epoch {
            let e = held.entry(c[0].i()).or_default();
            e.0 += 1;
            if c[2].t() == node {
                e.1 = c[3].i();
            }
        }
    }
    let mut calls_of: HashMap<i64, i64> = HashMap::new();
    for a in &actors {
        let o = a[0].i();
        match (registry.get(&o), held.get(&o)) {
            (Some((_, node)), Some(&(1, calls))) if node.starts_with("zone-") => {
                calls_of.insert(o, calls);
            }
            (_, Some(&(n, _))) if n > 1 => r.twice_held += 1,
            _ => r.nowhere += 1,
        }
    }
    let frame_us = 1_000_000 / i64::from(hz.max(1));
    let born: HashMap<i64, (i64, i64)> = (actors.iter())
        .map(|a| (a[0].i(), (a[1].i(), a[2].i())))
        .collect();
    let effects = tx.rows(
        "SELECT owner, call, late_us, kind, at_us FROM fleet_effects ORDER BY owner, call",
        &[],
    )?;
    let mut seen: HashMap<i64, Vec<i64>> = HashMap::new();
    for c in &effects {
        let (o, call, at) = (c[0].i(), c[1].i(), c[4].i());
        seen.entry(o).or_default().push(call);
        let kind = (c[3].i() as usize).min(2);
        r.late[kind].push(c[2].i().max(0) as u64);
        if let Some(&(b, p)) = born.get(&o) {
            let margin = at - (b + call * p);
            r.min_margin_us = r.min_margin_us.min(margin);
            if margin < -(2 * frame_us + 5_000) {
                r.early += 1;
            }
        }
    }
    r.calls = effects.len() as u64;
    for (o, calls) in &calls_of {
        let got = seen.remove(o).unwrap_or_default();
        let mut distinct = got.clone();
        distinct.dedup();
        r.doubled += (got.len() - distinct.len()) as u64;
        let within = distinct.iter().filter(|&&c| c >= 1 && c <= *calls).count() as i64;
        r.lost += (calls - within).max(0) as u64;
        // A call past the row's count: the row lost progress that a later call repeats.
        r.doubled += (distinct.len() as i64 - within) as u64;
    }
    for got in seen.values() {
        let mut distinct = got.clone();
        distinct.dedup();
        r.doubled += (got.len() - distinct.len()) as u64;
    }
    for c in tx.rows("SELECT kind, peer, at_us FROM fleet_events", &[])? {
        *r.events.entry(c[0].t().to_string()).or_default() += 1;
        match c[0].t() {
            "adopt" => r.adoptions.push((c[1].t().to_string(), c[2].i())),
            "recovered" => r.recovered.push(c[2].i()),
            _ => {}
        }
    }
    let load = tx.rows(
        "SELECT zone, at_us, actors, p99_us, calls, frames, slow FROM fleet_load ORDER BY at_us",
        &[],
    )?;
    for c in load {
        let v: Vec<u64> = c[2..].iter().map(|x: &Cell| x.i().max(0) as u64).collect();
        (r.load.entry(c[0].t().to_string()).or_default()).push(Second {
            at_us: c[1].i(),
            actors: v[0],
            p99_us: v[1],
            calls: v[2],
            frames: v[3],
            slow: v[4],
        });
    }
    if r.min_margin_us == i64::MAX {
        r.min_margin_us = 0;
    }
    Ok(r)
}

/// The `q` quantile of `v` (sorted here), or 0.
pub(crate) fn quantile(v: &mut [u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    v[i.min(v.len() - 1)]
}
