//! Crash test: a child process runs a world of durable timers whose callbacks record effects,
//! committed with the timers at each frame's end; it is killed with SIGKILL at random points
//! and restarted until it finishes. The effects in the store must equal an uncrashed run's,
//! call by call: none lost, none twice.
//!
//! Runs on SQLite (40 runs by default, 200 in CI: `TICKFLOW_CRASH_RUNS`) and, when
//! `TICKFLOW_PG_URL` is set, on PostgreSQL (50 runs; `TICKFLOW_CRASH_PG_RUNS`).

use std::process::{Command, Stdio};
use std::time::Duration;

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
#[cfg(feature = "postgres")]
use tickflow_store::Postgres;
use tickflow_store::{Durable, Sqlite, Store, StoreError};

const FRAMES: u64 = 300;
const TIMERS: u64 = 120;
const DT: Span = Span::from_millis(16);

/// (frame, owner, name, call index, payload byte)
type Effect = (i64, i64, String, i64, i64);

#[derive(Default)]
struct World {
    /// Effects of the frames not committed yet (each carries its frame).
    pending: Vec<Effect>,
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x
}

/// Every durable timer's callback: records the call; a build starts the next build of its
/// owner (same key: it replaces itself), with a delay decided by what it knows.
fn on_call(w: &mut World, cx: &mut TimerCx<World>) {
    let frame = cx.clocks().frame();
    let h = cx.handle();
    let info = cx.timers().info_of(h).expect("running");
    let owner = info.owner.map_or(0, OwnerId::get);
    let name = info.name.unwrap_or_default();
    let byte = cx.payload().first().copied().unwrap_or(0);
    w.pending.push((
        frame as i64,
        owner as i64,
        name.clone(),
        cx.call_index() as i64,
        i64::from(byte),
    ));
    if name.starts_with("build") && info.owner.is_some() {
        let r = mix(owner ^ frame << 20);
        (cx.timers()
            .after(Frames(1 + r % 45))
            .owner(OwnerId::new(owner))
            .name(name))
        .durable(Offline::Freeze)
        .payload([byte.wrapping_add(1)])
        .call(on_call);
    }
}

fn populate(sched: &mut Scheduler<World>) {
    for i in 0..TIMERS {
        let r = mix(i + 1);
        let owner = OwnerId::new(1 + i % 23);
        let t = sched.timers();
        let _ = match i % 3 {
            0 => t
                .after(Frames(1 + r % 60))
                .owner(owner)
                .name(format!("build{i}"))
                .durable(Offline::Freeze)
                .payload([i as u8])
                .call(on_call),
            1 => t
                .every(Frames(1 + r % 25))
                .owner(owner)
                .name(format!("regen{i}"))
                .times(1 + r % 9)
                .durable(Offline::Freeze)
                .payload([i as u8])
                .call(on_call),
            _ => t
                .every(Span::from_millis(20 + r % 700))
                .owner(owner)
                .name(format!("tick{i}"))
                .durable(Offline::Freeze)
                .payload([i as u8])
                .call(on_call),
        };
    }
}

/// How a backend keeps the effects table, in the commit's transaction.
trait Effects: Store + Sized {
    fn create(&mut self);
    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError>;
    fn read(&mut self) -> Vec<Effect>;
}

impl Effects for Sqlite {
    fn create(&mut self) {
        self.connection()
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS effects (id INTEGER PRIMARY KEY AUTOINCREMENT, \
                 frame INTEGER, owner INTEGER, name TEXT, call INTEGER, byte INTEGER)",
            )
            .unwrap();
    }

    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError> {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO effects (frame, owner, name, call, byte) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for e in effects {
            stmt.execute(rusqlite::params![e.0, e.1, e.2, e.3, e.4])?;
        }
        Ok(())
    }

    fn read(&mut self) -> Vec<Effect> {
        let mut stmt = (self.connection())
            .prepare("SELECT frame, owner, name, call, byte FROM effects ORDER BY id")
            .unwrap();
        let rows = stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        });
        rows.unwrap().map(Result::unwrap).collect()
    }
}

#[cfg(feature = "postgres")]
impl Effects for Postgres {
    fn create(&mut self) {
        self.client()
            .unwrap()
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS effects (id BIGSERIAL PRIMARY KEY, frame BIGINT, \
                 owner BIGINT, name TEXT, call BIGINT, byte BIGINT)",
            )
            .unwrap();
    }

    fn write<'e>(
        tx: &mut Self::Tx<'_>,
        effects: impl Iterator<Item = &'e Effect>,
    ) -> Result<(), StoreError> {
        let effects: Vec<&Effect> = effects.collect();
        if effects.is_empty() {
            return Ok(());
        }
        let cols: [Vec<i64>; 4] =
            [0, 1, 3, 4].map(|c| effects.iter().map(|e| [e.0, e.1, 0, e.3, e.4][c]).collect());
        let names: Vec<&str> = effects.iter().map(|e| e.2.as_str()).collect();
        tx.execute(
            "INSERT INTO effects (frame, owner, name, call, byte) SELECT a, b, c, d, e FROM UNNEST($1::BIGINT[], \
             $2::BIGINT[], $3::TEXT[], $4::BIGINT[], $5::BIGINT[]) WITH ORDINALITY AS u(a, b, c, d, e, o) \
             ORDER BY o",
            &[&cols[0], &cols[1], &names, &cols[2], &cols[3]],
        )?;
        Ok(())
    }

    fn read(&mut self) -> Vec<Effect> {
        (self.client().unwrap())
            .query(
                "SELECT frame, owner, name, call, byte FROM effects ORDER BY id",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
            .collect()
    }
}

/// Runs the world to frame `FRAMES` from wherever the store left it.
fn run_world<S: Effects>(mut store: S) {
    store.create();
    let mut durable = Durable::new(store, "world");
    let mut registry = Registry::new().other_timers(|_| Some(Box::new(on_call)));
    let (mut sched, resumed) = durable.resume(&mut registry).unwrap();
    if !resumed.resumed {
        populate(&mut sched);
    }
    let mut w = World::default();
    while sched.clocks().frame() < FRAMES {
        sched.tick(DT, &mut w);
        let pending = &w.pending;
        let commit = durable.end_frame(&mut sched, |tx, c| {
            S::write(tx, pending.iter().filter(|e| c.covers(e.0 as u64)))
        });
        if let Some(c) = commit.unwrap() {
            w.pending.retain(|e| e.0 as u64 > *c.frames().end());
        }
        // The parent kills at a frame it picks, after this line (so every kill lands); it
        // stops reading then, and a write to a closed pipe is not this world's failure.
        let line = format!("committed {}\n", sched.clocks().frame());
        let _ = std::io::Write::write_all(&mut std::io::stdout(), line.as_bytes());
    }
}

/// The child: runs the world named by `TICKFLOW_CRASH_CHILD` (`sqlite:PATH` or
/// `postgres:SCHEMA`) and exits. Not a test of its own: the crash tests start it.
#[test]
#[ignore = "the crash tests' child process, started by them"]
fn child() {
    let Ok(target) = std::env::var("TICKFLOW_CRASH_CHILD") else {
        return;
    };
    if let Some(path) = target.strip_prefix("sqlite:") {
        run_world(Sqlite::create(path).unwrap());
    }
    #[cfg(feature = "postgres")]
    if let Some(schema) = target.strip_prefix("postgres:") {
        let url = std::env::var("TICKFLOW_PG_URL").unwrap();
        run_world(Postgres::create_in(&url, schema).unwrap());
    }
    std::process::exit(0);
}

fn spawn(target: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("TICKFLOW_CRASH_CHILD", target)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Runs `target` to the end, killing it `kills` times: each at a random frame (after the
/// child says it committed it, plus a random part of a frame's time, so the kill falls
/// anywhere in the next frame: mid-frame, mid-commit or between). Returns how many kills
/// landed (the child had not finished).
fn crash_and_finish(target: &str, kills: u32, rng: &mut u64) -> u32 {
    use std::io::BufRead;
    let mut landed = 0;
    for _ in 0..kills {
        let mut child = spawn(target);
        *rng = mix(*rng);
        let at = *rng % (FRAMES * 9 / 10);
        let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        for line in lines.map_while(Result::ok) {
            let frame = line
                .strip_prefix("committed ")
                .and_then(|f| f.parse::<u64>().ok());
            if frame.is_some_and(|f| f >= at) {
                break;
            }
        }
        *rng = mix(*rng);
        std::thread::sleep(Duration::from_micros(*rng % 2_000));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            landed += 1;
        }
        let status = child.wait().unwrap();
        assert!(
            status.success() || status.code().is_none(),
            "the child failed: {status}"
        );
    }
    let mut last = spawn(target);
    std::io::copy(&mut last.stdout.take().unwrap(), &mut std::io::sink()).unwrap();
    let status = last.wait().unwrap();
    assert!(status.success(), "the last run failed: {status}");
    landed
}

fn runs(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn check<S: Effects>(open: impl Fn(u32) -> (S, String), runs: u32) {
    // The reference: the same world, uncrashed, in a child of its own.
    let (store, target) = open(u32::MAX);
    drop(store);
    let mut first = spawn(&target);
    std::io::copy(&mut first.stdout.take().unwrap(), &mut std::io::sink()).unwrap();
    assert!(first.wait().unwrap().success());
    let reference = open(u32::MAX).0.read();
    assert!(
        reference.len() > 1000,
        "a world with work in it: {}",
        reference.len()
    );

    let mut rng = 0x5eed;
    let mut landed = 0;
    for run in 0..runs {
        let (store, target) = open(run);
        drop(store);
        landed += crash_and_finish(&target, 1 + run % 3, &mut rng);
        let got = open(run).0.read();
        assert_eq!(
            got.len(),
            reference.len(),
            "run {run}: calls lost or repeated"
        );
        assert!(
            got == reference,
            "run {run}: the effects differ from the uncrashed run"
        );
    }
    eprintln!("{runs} runs, {landed} SIGKILLs landed mid-run, effects equal the uncrashed run's");
    assert!(landed >= runs, "{landed} kills landed in {runs} runs");
}

#[test]
fn sqlite_survives_sigkill() {
    let dir = std::env::temp_dir().join(format!("tickflow-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let open = |run: u32| {
        let path = dir.join(format!("run{run}.db"));
        (
            Sqlite::create(&path).unwrap(),
            format!("sqlite:{}", path.display()),
        )
    };
    check(open, runs("TICKFLOW_CRASH_RUNS", 40));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_survives_sigkill() {
    let Ok(url) = std::env::var("TICKFLOW_PG_URL") else {
        // Straight to the stream: the test harness captures `eprintln!` of passing tests.
        let note = "postgres_survives_sigkill: skipped (set TICKFLOW_PG_URL to run it)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes());
        return;
    };
    let pid = std::process::id();
    let mut schemas = Vec::new();
    let open = |run: u32| {
        let schema = format!("tf_crash_{pid}_{run}");
        (
            Postgres::create_in(&url, &schema).unwrap(),
            format!("postgres:{schema}"),
        )
    };
    let n = runs("TICKFLOW_CRASH_PG_RUNS", 50);
    check(open, n);
    schemas.extend(
        (0..n)
            .chain([u32::MAX])
            .map(|r| format!("tf_crash_{pid}_{r}")),
    );
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for s in schemas {
        c.batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE"))
            .unwrap();
    }
}
