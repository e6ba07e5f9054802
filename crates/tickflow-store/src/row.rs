//! One durable timer as the columns of a row, the same on both databases, and the checks that
//! turn untrusted columns back into a [`DurableTimer`].
//!
//! Every unsigned value is stored in a signed 64-bit column (`BIGINT`/`INTEGER`) bit for bit,
//! so `u64::MAX` (never) survives; enums are small integers. A row read back is checked column
//! by column before anything is built from it, and an error names the row's key and the column.

use tickflow::time::Domain;
use tickflow::timer::{CatchUp, DurablePhase, DurableTimer, Offline};
use tickflow::OwnerId;

use crate::error::StoreError;

/// Longest name a row may hold (bytes): rows come from a database another process may have
/// written, and a name is copied into every timer.
pub const MAX_NAME: usize = 1024;
/// Largest payload a row may hold (bytes).
pub const MAX_PAYLOAD: usize = 1 << 20;

/// Refuses a name or payload over the limits, for a row read (a bound on what untrusted rows
/// allocate) and for one about to be written (so that nothing is written that cannot be read).
pub(crate) fn check_sizes(owner: u64, name: &str, payload: usize) -> Result<(), StoreError> {
    let too_big = |field, len: usize, max: usize| {
        StoreError::bad_row(
            "tickflow_timers",
            format!("(owner {owner}, name {:?})", name.get(..64).unwrap_or(name)),
            field,
            format!("is {len} bytes, over {max}"),
        )
    };
    if name.len() > MAX_NAME {
        return Err(too_big("name", name.len(), MAX_NAME));
    }
    if payload > MAX_PAYLOAD {
        return Err(too_big("payload", payload, MAX_PAYLOAD));
    }
    Ok(())
}

/// A durable timer's columns, in the order of [`COLUMNS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) owner: i64,
    pub(crate) name: String,
    pub(crate) domain: i16,
    pub(crate) phase: i16,
    pub(crate) time: i64,
    pub(crate) period: i64,
    pub(crate) looping: i16,
    pub(crate) catch_up: i16,
    pub(crate) offline: i16,
    pub(crate) calls: i64,
    pub(crate) times_left: Option<i64>,
    pub(crate) first_delay: Option<i64>,
    pub(crate) tag: Option<i64>,
    pub(crate) payload: Vec<u8>,
    pub(crate) seq: i64,
}

/// The timer columns after `node` and `epoch`, in order.
pub(crate) const COLUMNS: &str = "owner, name, domain, phase, time, period, looping, catch_up, \
     offline, calls, times_left, first_delay, tag, payload, seq";

/// The same columns one by one, for errors that name the column.
pub(crate) const NAMES: [&str; 15] = [
    "owner",
    "name",
    "domain",
    "phase",
    "time",
    "period",
    "looping",
    "catch_up",
    "offline",
    "calls",
    "times_left",
    "first_delay",
    "tag",
    "payload",
    "seq",
];

/// Reads the columns of one row from anything with a typed `get(index)` (a SQLite or
/// PostgreSQL row), naming the row and column when a value has the wrong type.
macro_rules! read_row {
    ($r:expr, $get:ident) => {{
        let r = $r;
        // The key only for an error: formatting it for every row would cost more than the row.
        let key = || {
            format!(
                "(owner {}, name {:?})",
                r.$get::<_, i64>(0)
                    .map_or_else(|_| "?".to_string(), |o| (o as u64).to_string()),
                r.$get::<_, String>(1).unwrap_or_default()
            )
        };
        macro_rules! col {
            ($i:expr) => {
                r.$get($i).map_err(|e| {
                    $crate::error::StoreError::bad_row(
                        "tickflow_timers",
                        key(),
                        $crate::row::NAMES[$i],
                        format!("cannot be read: {e}"),
                    )
                })?
            };
        }
        $crate::row::Row {
            owner: col!(0),
            name: col!(1),
            domain: col!(2),
            phase: col!(3),
            time: col!(4),
            period: col!(5),
            looping: col!(6),
            catch_up: col!(7),
            offline: col!(8),
            calls: col!(9),
            times_left: col!(10),
            first_delay: col!(11),
            tag: col!(12),
            payload: col!(13),
            seq: col!(14),
        }
    }};
}
pub(crate) use read_row;

const fn bits(v: u64) -> i64 {
    v as i64
}

const fn unbits(v: i64) -> u64 {
    v as u64
}

impl Row {
    pub(crate) fn of(t: &DurableTimer) -> Row {
        Row {
            owner: bits(t.owner.get()),
            name: t.name.clone(),
            domain: t.domain as i16,
            phase: match t.phase {
                DurablePhase::Pending => 0,
                DurablePhase::Scheduled => 1,
                DurablePhase::Paused => 2,
            },
            time: bits(t.time),
            period: bits(t.period),
            looping: i16::from(t.looping),
            catch_up: t.catch_up as i16,
            offline: t.offline as i16,
            calls: bits(t.calls),
            times_left: t.times_left.map(bits),
            first_delay: t.first_delay.map(bits),
            tag: t.tag.map(bits),
            payload: t.payload.clone(),
            seq: bits(t.seq),
        }
    }

    /// The key as an error names it.
    pub(crate) fn key(&self) -> String {
        format!("(owner {}, name {:?})", unbits(self.owner), self.name)
    }

    /// Checks every column and builds the timer.
    pub(crate) fn timer(self) -> Result<DurableTimer, StoreError> {
        // The key only for an error: formatting it for every row would cost more than the row.
        let bad = |field, reason: String| {
            StoreError::bad_row("tickflow_timers", self.key(), field, reason)
        };
        let pick = |field, v: i16, n: usize| {
            usize::try_from(v)
                .ok()
                .filter(|&i| i < n)
                .ok_or_else(|| bad(field, format!("is {v}, not one of 0..{n}")))
        };
        check_sizes(self.owner as u64, &self.name, self.payload.len())?;
        let domain = Domain::ALL[pick("domain", self.domain, 3)?];
        let phase = [
            DurablePhase::Pending,
            DurablePhase::Scheduled,
            DurablePhase::Paused,
        ][pick("phase", self.phase, 3)?];
        let looping = [false, true][pick("looping", self.looping, 2)?];
        let catch_up =
            [CatchUp::Burst, CatchUp::Once, CatchUp::Delay][pick("catch_up", self.catch_up, 3)?];
        let offline = [
            Offline::Freeze,
            Offline::CatchUp,
            Offline::Once,
            Offline::Skip,
        ][pick("offline", self.offline, 4)?];
        if self.times_left == Some(0) {
            return Err(bad("times_left", "is 0 (no calls left)".into()));
        }
        if self.seq < 0 || self.seq > i64::from(u32::MAX) {
            return Err(bad("seq", format!("is {}, outside 0..=2^32-1", self.seq)));
        }
        Ok(DurableTimer {
            owner: OwnerId::new(unbits(self.owner)),
            name: self.name,
            domain,
            phase,
            time: unbits(self.time),
            period: unbits(self.period),
            looping,
            catch_up,
            offline,
            calls: unbits(self.calls),
            times_left: self.times_left.map(unbits),
            first_delay: self.first_delay.map(unbits),
            tag: self.tag.map(unbits),
            payload: self.payload,
            seq: unbits(self.seq),
        })
    }
}

/// A node's clocks when it last committed, and the wall-clock time of that commit.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeClocks {
    /// Game clock (flicks).
    pub game: u64,
    /// Real clock (flicks).
    pub real: u64,
    /// Frame clock (frames).
    pub frames: u64,
    /// The frame number of the last frame committed.
    pub frame: u64,
    /// Wall-clock time of the commit, nanoseconds since the Unix epoch.
    pub wall_ns: u64,
}

impl NodeClocks {
    /// The raw clock readings in [`Domain`] order.
    pub fn raw(&self) -> [u64; 3] {
        [self.game, self.real, self.frames]
    }

    pub(crate) fn columns(&self) -> [i64; 5] {
        [self.game, self.real, self.frames, self.frame, self.wall_ns].map(bits)
    }

    pub(crate) fn from_columns(node: &str, c: [i64; 5]) -> Result<NodeClocks, StoreError> {
        let [game, real, frames, frame, wall_ns] = c.map(unbits);
        for (field, v) in [
            ("game", game),
            ("real", real),
            ("frames", frames),
            ("frame", frame),
        ] {
            if v == u64::MAX {
                return Err(StoreError::bad_row(
                    "tickflow_nodes",
                    format!("{node:?}"),
                    field,
                    "is at the end of time",
                ));
            }
        }
        Ok(NodeClocks {
            game,
            real,
            frames,
            frame,
            wall_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timer() -> DurableTimer {
        DurableTimer {
            owner: OwnerId::new(u64::MAX - 3),
            name: "build".into(),
            domain: Domain::Real,
            phase: DurablePhase::Scheduled,
            time: u64::MAX,
            period: 7,
            looping: true,
            catch_up: CatchUp::Delay,
            offline: Offline::Skip,
            calls: 1 << 63,
            times_left: Some(2),
            first_delay: None,
            tag: Some(u64::MAX),
            payload: vec![1, 2, 3],
            seq: 9,
        }
    }

    #[test]
    fn a_row_round_trips_every_value() {
        assert_eq!(Row::of(&timer()).timer().unwrap(), timer());
    }

    #[test]
    fn a_damaged_column_is_named() {
        let mut row = Row::of(&timer());
        row.offline = 9;
        let e = row.timer().unwrap_err().to_string();
        assert!(e.contains("offline") && e.contains("\"build\""), "{e}");
        let mut row = Row::of(&timer());
        row.times_left = Some(0);
        assert!(row.timer().unwrap_err().to_string().contains("times_left"));
        let mut row = Row::of(&timer());
        row.payload = vec![0; MAX_PAYLOAD + 1];
        assert!(row.timer().unwrap_err().to_string().contains("payload"));
    }
}
