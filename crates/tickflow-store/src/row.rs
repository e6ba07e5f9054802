//! One durable timer as the columns of a row, the same on both databases, and the checks that
//! turn untrusted columns back into a [`DurableTimer`].
//!
//! Every unsigned value is stored in a signed 64-bit column (`BIGINT`/`INTEGER`) bit for bit,
//! so `u64::MAX` (never) survives; enums are small integers. A row read back is checked column
//! by column before anything is built from it, and an error names the row's key and the column.

use tickflow::time::CatchUp;
use tickflow::time::Domain;
use tickflow::timer::{DurablePhase, DurableTimer, Offline};
use tickflow::OwnerId;

use crate::error::StoreError;
use crate::sum::Sum;

/// Longest name a row may hold (bytes): the core's limit for a durable timer
/// ([`MAX_DURABLE_NAME`](tickflow::timer::MAX_DURABLE_NAME)), checked again on each row read,
/// as rows come from a database another process may have written.
pub const MAX_NAME: usize = tickflow::timer::MAX_DURABLE_NAME;
/// Largest payload a row may hold (bytes): the core's
/// [`MAX_DURABLE_PAYLOAD`](tickflow::timer::MAX_DURABLE_PAYLOAD).
pub const MAX_PAYLOAD: usize = tickflow::timer::MAX_DURABLE_PAYLOAD;

/// The first of a name and a payload that is over its limit: the field, its size and the
/// limit. Checked for a row read (a bound on what untrusted rows allocate) and for one about to
/// be written (so that nothing is written that cannot be read).
pub(crate) fn over_limits(name: &str, payload: usize) -> Option<(&'static str, usize, usize)> {
    if name.len() > MAX_NAME {
        return Some(("name", name.len(), MAX_NAME));
    }
    (payload > MAX_PAYLOAD).then_some(("payload", payload, MAX_PAYLOAD))
}

/// Refuses a timer about to be written whose name or payload is over the limits.
pub(crate) fn check_sizes(owner: u64, name: &str, payload: usize) -> Result<(), StoreError> {
    match over_limits(name, payload) {
        Some((field, len, max)) => Err(StoreError::TooLarge {
            key: format!("(owner {owner}, name {})", short(name)),
            field,
            len,
            max,
        }),
        None => Ok(()),
    }
}

/// `name` quoted for an error, cut to its first 64 bytes (at a character's boundary): a name
/// comes from a row another process wrote, and an error should not carry a megabyte of it.
pub(crate) fn short(name: &str) -> String {
    let mut end = name.len().min(64);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    match end < name.len() {
        true => format!("{:?}… ({} bytes)", &name[..end], name.len()),
        false => format!("{name:?}"),
    }
}

/// A durable timer's row: its columns in the table's order, the epoch its owner was
/// held at when it was written, and its checksum (which also covers the node it belongs to,
/// so a row copied to another node does not check).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Its owner (0: none; the row is its node's).
    pub owner: i64,
    /// Its name.
    pub name: String,
    /// The epoch its node held the owner at when it wrote the row.
    pub epoch: i64,
    /// Its clock: 0 game, 1 real, 2 frames.
    pub domain: i16,
    /// 0 pending, 1 scheduled, 2 paused: what `time` is.
    pub phase: i16,
    /// Delay, due time or time left, by `phase`.
    pub time: i64,
    /// Period (looping) or delay (one-shot).
    pub period: i64,
    /// 1 if it repeats.
    pub looping: i16,
    /// Its catch-up policy: 0 burst, 1 once, 2 delay.
    pub catch_up: i16,
    /// Its offline policy: 0 freeze, 1 catch up, 2 once, 3 skip.
    pub offline: i16,
    /// Calls made.
    pub calls: i64,
    /// Calls left, for a timer limited with `times(n)`.
    pub times_left: Option<i64>,
    /// A first delay that differs from the period.
    pub first_delay: Option<i64>,
    /// Its tag.
    pub tag: Option<i64>,
    /// The user's bytes.
    pub payload: Vec<u8>,
    /// Its place in set order.
    pub seq: i64,
    /// The checksum ([`Row::sum_for`]).
    pub sum: i64,
}

/// The timer columns after `node`, in order.
pub(crate) const COLUMNS: &str = "owner, name, epoch, domain, phase, time, period, looping, \
     catch_up, offline, calls, times_left, first_delay, tag, payload, seq, sum";

/// The same columns one by one, for errors that name the column.
pub(crate) const NAMES: [&str; 17] = [
    "owner",
    "name",
    "epoch",
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
    "sum",
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
            epoch: col!(2),
            domain: col!(3),
            phase: col!(4),
            time: col!(5),
            period: col!(6),
            looping: col!(7),
            catch_up: col!(8),
            offline: col!(9),
            calls: col!(10),
            times_left: col!(11),
            first_delay: col!(12),
            tag: col!(13),
            payload: col!(14),
            seq: col!(15),
            sum: col!(16),
        }
    }};
}
pub(crate) use read_row;

/// A row's key as an error names it.
fn key_of(owner: u64, name: &str) -> String {
    format!("(owner {owner}, name {})", short(name))
}

const fn bits(v: u64) -> i64 {
    v as i64
}

const fn unbits(v: i64) -> u64 {
    v as u64
}

impl Row {
    /// The row of `t` in the node whose [`prefix`](Row::prefix) is `node`, written at owner
    /// epoch `epoch`, with its checksum. `shift` is the node's offline time so far (flicks):
    /// a timer that [moves by it](DurableTimer::shifts_offline) is stored that much later than
    /// it is due, so that a restart moves it by moving the node's shift alone. (A due time
    /// within `shift` of the end of time is stored at its last flick before never.)
    pub(crate) fn of(t: &DurableTimer, node: Sum, epoch: u64, shift: u64) -> Row {
        let time = match t.shifts_offline() {
            true => t.time.saturating_add(shift).min(u64::MAX - 1),
            false => t.time,
        };
        let mut r = Row {
            owner: bits(t.owner.get()),
            name: t.name.clone(),
            epoch: bits(epoch),
            domain: t.domain as i16,
            phase: match t.phase {
                DurablePhase::Pending => 0,
                DurablePhase::Scheduled => 1,
                DurablePhase::Paused => 2,
            },
            time: bits(time),
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
            sum: 0,
        };
        r.sum = r.sum_with(node);
        r
    }

    /// The start of the checksum of every row of `node` (the table and the node), folded once
    /// per node rather than once per row.
    pub(crate) fn prefix(node: &str) -> Sum {
        Sum::of("tickflow_timers").bytes(node.as_bytes())
    }

    /// The checksum of this row's columns (all but `sum`) as a row of `node`.
    pub fn sum_for(&self, node: &str) -> i64 {
        self.sum_with(Row::prefix(node))
    }

    fn sum_with(&self, prefix: Sum) -> i64 {
        prefix
            .i64(self.owner)
            .bytes(self.name.as_bytes())
            .i64(self.epoch)
            .i64(i64::from(self.domain))
            .i64(i64::from(self.phase))
            .i64(self.time)
            .i64(self.period)
            .i64(i64::from(self.looping))
            .i64(i64::from(self.catch_up))
            .i64(i64::from(self.offline))
            .i64(self.calls)
            .opt(self.times_left)
            .opt(self.first_delay)
            .opt(self.tag)
            .bytes(&self.payload)
            .i64(self.seq)
            .finish()
    }

    /// The key as an error names it.
    pub(crate) fn key(&self) -> String {
        key_of(unbits(self.owner), &self.name)
    }

    /// Checks every column and the checksum (as a row of `node`, whose offline time so far is
    /// `shift`: see [`of`](Self::of)) and builds the timer.
    pub(crate) fn timer(self, node: &str, shift: u64) -> Result<DurableTimer, StoreError> {
        self.timer_with(Row::prefix(node), shift)
    }

    /// [`timer`](Self::timer) with the node's [`prefix`](Self::prefix).
    pub(crate) fn timer_with(self, node: Sum, shift: u64) -> Result<DurableTimer, StoreError> {
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
        if let Some((field, len, max)) = over_limits(&self.name, self.payload.len()) {
            return Err(bad(field, format!("is {len} bytes, over {max}")));
        }
        if self.sum != self.sum_with(node) {
            return Err(bad(
                "sum",
                "does not match the row: damaged or edited".into(),
            ));
        }
        if self.epoch < 0 {
            return Err(bad("epoch", format!("is {}", self.epoch)));
        }
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
        if self.seq < 0 || self.seq >= i64::from(u32::MAX) {
            return Err(bad("seq", format!("is {}, outside 0..2^32-1", self.seq)));
        }
        let mut t = DurableTimer {
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
        };
        if t.shifts_offline() {
            let Some(time) = t.time.checked_sub(shift) else {
                let key = key_of(t.owner.get(), &t.name);
                let why = format!("is before the node's offline time {shift}: damaged or edited");
                return Err(StoreError::bad_row("tickflow_timers", key, "time", why));
            };
            t.time = time;
        }
        Ok(t)
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
        assert_eq!(
            Row::of(&timer(), Row::prefix("n"), 3, 0)
                .timer("n", 0)
                .unwrap(),
            timer()
        );
        let e = Row::of(&timer(), Row::prefix("n"), 3, 0)
            .timer("m", 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sum"), "a row of another node: {e}");
    }

    /// A game-clock timer that counts offline time is stored later by the node's shift and
    /// read back as it was; others are stored as they are; a stored time before the shift is
    /// damage.
    #[test]
    fn the_offline_shift_is_kept_in_game_clock_rows_that_count_it_only() {
        let mut t = timer();
        t.time = 1_000;
        t.domain = Domain::Game;
        let row = Row::of(&t, Row::prefix("n"), 0, 250);
        assert_eq!(row.time, 1_250);
        assert_eq!(row.clone().timer("n", 250).unwrap(), t);
        let e = row.timer("n", 2_000).unwrap_err().to_string();
        assert!(e.contains("time") && e.contains("offline"), "{e}");
        for (phase, offline, domain) in [
            (DurablePhase::Paused, Offline::Skip, Domain::Game),
            (DurablePhase::Scheduled, Offline::Freeze, Domain::Game),
            (DurablePhase::Scheduled, Offline::Skip, Domain::Frames),
            (DurablePhase::Scheduled, Offline::Skip, Domain::Real),
        ] {
            let u = DurableTimer {
                phase,
                offline,
                domain,
                ..t.clone()
            };
            let row = Row::of(&u, Row::prefix("n"), 0, 250);
            assert_eq!(row.time, 1_000, "{phase:?} {offline:?} {domain:?}");
            assert_eq!(row.timer("n", 250).unwrap(), u);
        }
        // Never stays never.
        let row = Row::of(&timer(), Row::prefix("n"), 0, 250);
        assert_eq!(row.timer("n", 250).unwrap(), timer());
    }

    #[test]
    fn a_damaged_column_is_named() {
        let mut row = Row::of(&timer(), Row::prefix("n"), 0, 0);
        row.offline = 9;
        row.sum = row.sum_for("n");
        let e = row.timer("n", 0).unwrap_err().to_string();
        assert!(e.contains("offline") && e.contains("\"build\""), "{e}");
        let mut row = Row::of(&timer(), Row::prefix("n"), 0, 0);
        row.times_left = Some(0);
        row.sum = row.sum_for("n");
        assert!(row
            .timer("n", 0)
            .unwrap_err()
            .to_string()
            .contains("times_left"));
        let mut row = Row::of(&timer(), Row::prefix("n"), 0, 0);
        row.payload = vec![0; MAX_PAYLOAD + 1];
        assert!(row
            .timer("n", 0)
            .unwrap_err()
            .to_string()
            .contains("payload"));
        // A long name with a character across byte 64: the error quotes its start only.
        let mut row = Row::of(&timer(), Row::prefix("n"), 0, 0);
        row.name = format!("{}é{}", "x".repeat(63), "y".repeat(1 << 20));
        let e = row.timer("n", 0).unwrap_err().to_string();
        assert!(
            e.len() < 300 && e.contains("column name is 1048641 bytes"),
            "{e}"
        );
    }
}
