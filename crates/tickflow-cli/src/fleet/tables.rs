//! The fleet's own tables beside the store's: every durable call as an effect, the actors'
//! births, what each zone saw (adoptions, arrivals, rejoins) and its load each second. A
//! zone writes them in its frames' commits, so each is stored once with the frame it
//! belongs to; the checker reads them back.

use std::time::Instant;

use tickflow::OwnerId;
use tickflow_store::Commit;

use crate::sql::{Sql, V};

pub(crate) const TABLES: &str = "
CREATE TABLE IF NOT EXISTS fleet_effects (
    owner BIGINT NOT NULL, call BIGINT NOT NULL, zone TEXT NOT NULL, frame BIGINT NOT NULL,
    late_us BIGINT NOT NULL, kind BIGINT NOT NULL, at_us BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS fleet_actors (
    owner BIGINT PRIMARY KEY, zone TEXT NOT NULL, born_us BIGINT NOT NULL,
    period_us BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS fleet_events (
    zone TEXT NOT NULL, kind TEXT NOT NULL, owner BIGINT NOT NULL, peer TEXT NOT NULL,
    at_us BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS fleet_load (
    zone TEXT NOT NULL, at_us BIGINT NOT NULL, actors BIGINT NOT NULL, frames BIGINT NOT NULL,
    p99_us BIGINT NOT NULL, max_us BIGINT NOT NULL, calls BIGINT NOT NULL,
    slow BIGINT NOT NULL)
";

/// One call of an actor's pulse.
pub(crate) struct Effect {
    pub(crate) owner: OwnerId,
    /// Its number: 1 for the timer's first call.
    pub(crate) call: u64,
    pub(crate) frame: u64,
    /// How late it ran on its own clock.
    pub(crate) late_us: u64,
    /// 0, or the first call after an adoption or a resume (`zone::FIRST_*`).
    pub(crate) kind: u8,
    /// When it ran (stored as the database's time of the commit, less the time since).
    pub(crate) at: Instant,
}

/// Something a zone saw happen to an actor.
pub(crate) struct Event {
    pub(crate) kind: &'static str,
    pub(crate) owner: OwnerId,
    pub(crate) peer: String,
    pub(crate) frame: u64,
    pub(crate) at: Instant,
}

impl Event {
    pub(crate) fn new(kind: &'static str, owner: OwnerId, peer: &str, frame: u64) -> Event {
        Event {
            kind,
            owner,
            peer: peer.to_string(),
            frame,
            at: Instant::now(),
        }
    }
}

/// A zone's second: its actors at the end of it, and its frames' times.
pub(crate) struct Load {
    pub(crate) actors: u64,
    pub(crate) frames: u64,
    pub(crate) p99_us: u64,
    pub(crate) max_us: u64,
    pub(crate) calls: u64,
    /// Frames that took longer than the frame's period.
    pub(crate) slow: u64,
}

/// What a zone keeps for its next commits: effects, events, births and load samples not yet
/// covered by a commit that landed.
#[derive(Default)]
pub(crate) struct Buffer {
    pub(crate) effects: Vec<Effect>,
    pub(crate) events: Vec<Event>,
    /// (actor, frame, when, pulse period µs).
    pub(crate) births: Vec<(OwnerId, u64, Instant, u64)>,
    pub(crate) loads: Vec<Load>,
    /// The last commit failed: the next one that lands says so (a "recovered" event).
    pub(crate) failing: bool,
}

/// Creates the tables (those that are not there).
pub(crate) fn create(tx: &mut dyn Sql) -> Result<(), String> {
    for stmt in TABLES.split(';').filter(|s| !s.trim().is_empty()) {
        tx.exec(stmt, &[])?;
    }
    Ok(())
}

/// Rows per statement: a few parameters each, well under SQLite's limit of 32,766.
const BATCH: usize = 500;

/// Inserts `rows` (each `width` values) into `table`, `BATCH` rows per statement.
fn insert(tx: &mut dyn Sql, head: &str, width: usize, rows: &[Vec<V<'_>>]) -> Result<(), String> {
    for chunk in rows.chunks(BATCH) {
        let mut sql = String::from(head);
        let mut vals = Vec::with_capacity(chunk.len() * width);
        for (r, row) in chunk.iter().enumerate() {
            sql.push_str(if r == 0 { " VALUES (" } else { ", (" });
            for c in 0..width {
                let n = r * width + c + 1;
                sql.push_str(&if c == 0 {
                    format!("?{n}")
                } else {
                    format!(", ?{n}")
                });
            }
            sql.push(')');
            vals.extend(row.iter().copied());
        }
        tx.exec(&sql, &vals)?;
    }
    Ok(())
}

/// What commit `c` of `zone` writes of `w`: the effects and events of its frames (not of the
/// owners it dropped), the births, the load samples.
pub(crate) fn write(tx: &mut dyn Sql, zone: &str, w: &Buffer, c: &Commit) -> Result<(), String> {
    let now = tx.now_us()?;
    let at = |i: Instant| now - i.elapsed().as_micros() as i64;
    let mine = |o: &OwnerId, frame: u64| c.covers(frame) && !c.dropped().contains(o);
    let effects: Vec<Vec<V<'_>>> = (w.effects.iter())
        .filter(|e| mine(&e.owner, e.frame))
        .map(|e| {
            vec![
                V::I(e.owner.get() as i64),
                V::I(e.call as i64),
                V::T(zone),
                V::I(e.frame as i64),
                V::I(e.late_us.min(i64::MAX as u64) as i64),
                V::I(i64::from(e.kind)),
                V::I(at(e.at)),
            ]
        })
        .collect();
    let head = "INSERT INTO fleet_effects (owner, call, zone, frame, late_us, kind, at_us)";
    insert(tx, head, 7, &effects)?;
    let births: Vec<Vec<V<'_>>> = (w.births.iter())
        .filter(|b| c.covers(b.1))
        .map(|b| {
            vec![
                V::I(b.0.get() as i64),
                V::T(zone),
                V::I(at(b.2)),
                V::I(b.3 as i64),
            ]
        })
        .collect();
    insert(
        tx,
        "INSERT INTO fleet_actors (owner, zone, born_us, period_us)",
        4,
        &births,
    )?;
    let events: Vec<Vec<V<'_>>> = (w.events.iter())
        .filter(|e| mine(&e.owner, e.frame) || e.kind == "rejoin" && c.covers(e.frame))
        .map(|e| {
            vec![
                V::T(zone),
                V::T(e.kind),
                V::I(e.owner.get() as i64),
                V::T(&e.peer),
                V::I(at(e.at)),
            ]
        })
        .collect();
    insert(
        tx,
        "INSERT INTO fleet_events (zone, kind, owner, peer, at_us)",
        5,
        &events,
    )?;
    if w.failing {
        tx.exec(
            "INSERT INTO fleet_events (zone, kind, owner, peer, at_us) VALUES (?1, ?2, 0, '', ?3)",
            &[V::T(zone), V::T("recovered"), V::I(now)],
        )?;
    }
    let loads: Vec<Vec<V<'_>>> = (w.loads.iter())
        .map(|l| {
            vec![
                V::T(zone),
                V::I(now),
                V::I(l.actors as i64),
                V::I(l.frames as i64),
                V::I(l.p99_us as i64),
                V::I(l.max_us as i64),
                V::I(l.calls as i64),
                V::I(l.slow as i64),
            ]
        })
        .collect();
    insert(
        tx,
        "INSERT INTO fleet_load (zone, at_us, actors, frames, p99_us, max_us, calls, slow)",
        8,
        &loads,
    )?;
    Ok(())
}
