//! A courier that walks between two server processes, either of which may be killed at any
//! moment, and makes each of its calls exactly once.
//!
//! The example starts itself twice, as the nodes `east` and `west`. The courier (an owner)
//! has a durable timer that takes a step every 2 frames, 120 steps in all, each step an effect
//! written in the frame's commit; every 10 steps it walks to the other node
//! ([`Durable::send`], [`Durable::receive`]). Meanwhile this process kills one node or the
//! other with SIGKILL and starts it again; the restarted node calls `resume` and nothing else.
//! At the end every step is in the effects table once.
//!
//! ```text
//! cargo run -p tickflow-store --example handover                                   # SQLite file
//! cargo run -p tickflow-store --features postgres --example handover -- postgres://user:pw@host/db
//! ```

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tickflow::prelude::*;
use tickflow::snapshot::Registry;
use tickflow::timer::Offline;
use tickflow_store::{Durable, Handover, Sqlite, Store, StoreError};

const COURIER: OwnerId = OwnerId::new(7);
const STEPS: u64 = 120;

/// The node's world: the courier's steps not committed yet, and whether it should walk on.
#[derive(Default)]
struct World {
    steps: Vec<(u64, u64)>, // (frame, step)
    walk: bool,
}

fn step(w: &mut World, cx: &mut TimerCx<World>) {
    let n = cx.call_index();
    w.steps.push((cx.clocks().frame(), n));
    w.walk |= n % 10 == 9;
}

/// Your effects, in the commit's transaction: the one thing a game writes itself.
trait Steps: Store + Sized {
    fn create(&mut self);
    fn write(tx: &mut Self::Tx<'_>, node: &str, steps: &[u64]) -> Result<(), StoreError>;
    fn steps(&mut self) -> Vec<u64>;
}

impl Steps for Sqlite {
    fn create(&mut self) {
        let sql = "CREATE TABLE IF NOT EXISTS steps (step INTEGER, node TEXT)";
        self.connection().execute_batch(sql).unwrap();
    }
    fn write(tx: &mut Self::Tx<'_>, node: &str, steps: &[u64]) -> Result<(), StoreError> {
        for s in steps {
            tx.execute(
                "INSERT INTO steps VALUES (?1, ?2)",
                rusqlite::params![*s as i64, node],
            )?;
        }
        Ok(())
    }
    fn steps(&mut self) -> Vec<u64> {
        let mut stmt = self
            .connection()
            .prepare("SELECT step FROM steps ORDER BY step")
            .unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0)).unwrap();
        rows.map(|s| s.unwrap() as u64).collect()
    }
}

#[cfg(feature = "postgres")]
impl Steps for tickflow_store::Postgres {
    fn create(&mut self) {
        let sql = "CREATE TABLE IF NOT EXISTS steps (step BIGINT, node TEXT)";
        self.client().unwrap().batch_execute(sql).unwrap();
    }
    fn write(tx: &mut Self::Tx<'_>, node: &str, steps: &[u64]) -> Result<(), StoreError> {
        for s in steps {
            tx.execute("INSERT INTO steps VALUES ($1, $2)", &[&(*s as i64), &node])?;
        }
        Ok(())
    }
    fn steps(&mut self) -> Vec<u64> {
        let rows = self
            .client()
            .unwrap()
            .query("SELECT step FROM steps ORDER BY step", &[]);
        rows.unwrap()
            .iter()
            .map(|r| r.get::<_, i64>(0) as u64)
            .collect()
    }
}

/// One node: resume, then frames until every step is stored.
fn node<S: Steps>(store: S, me: &str, other: &str) {
    let registry = || Registry::new().timer("step", step);
    let mut durable = Durable::new(store, me);
    // All the recovery there is: this node's rows, owners and handovers in flight.
    let (mut sched, resumed) = durable.resume(&mut registry()).expect("resume");
    if !resumed.resumed && me == "east" {
        (sched
            .timers()
            .every(Frames(2))
            .times(STEPS)
            .owner(COURIER)
            .name("step"))
        .durable(Offline::Freeze)
        .call(step);
    }
    let mut world = World::default();
    loop {
        durable
            .receive(&mut sched, &mut registry(), 8)
            .expect("receive");
        sched.tick(Span::frames(1, 60), &mut world);
        if std::mem::take(&mut world.walk) && durable.epoch(COURIER).is_some() {
            durable
                .send(&mut sched, COURIER, other, Vec::new())
                .expect("send");
        }
        let pending = &world.steps;
        let commit = durable.end_frame(&mut sched, |tx, c| {
            let steps: Vec<u64> = pending
                .iter()
                .filter(|s| c.covers(s.0))
                .map(|s| s.1)
                .collect();
            S::write(tx, me, &steps)
        });
        match commit {
            Ok(Some(c)) => world.steps.retain(|s| !c.covers(s.0)),
            Ok(None) => {}
            Err(e) if e.is_database() => {} // the next commit writes it, or finds it landed
            Err(e) => panic!("{me}: {e}"),
        }
        for h in durable.handovers() {
            if let Handover::Moved { to, .. } = h {
                eprintln!("{me}: the courier walked to {to}");
            }
        }
        if durable.store().steps().len() as u64 >= STEPS {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A node process: `handover SPEC NODE`.
fn serve(spec: &str, me: &str) {
    let other = if me == "east" { "west" } else { "east" };
    match spec.split_once('#') {
        #[cfg(feature = "postgres")]
        Some((url, schema)) => {
            let store = tickflow_store::Postgres::connect_in(url, schema).expect("connect");
            node(store, me, other)
        }
        #[cfg(not(feature = "postgres"))]
        Some(_) => panic!("built without PostgreSQL: run with `--features postgres`"),
        None => node(Sqlite::open(spec).expect("open"), me, other),
    }
}

/// Makes the store and the steps table; what the steps table holds at the end.
fn open_store(spec: &str) -> Box<dyn FnMut() -> Vec<u64>> {
    match spec.split_once('#') {
        #[cfg(feature = "postgres")]
        Some((url, schema)) => {
            let (url, schema) = (url.to_string(), schema.to_string());
            tickflow_store::Postgres::create_in(&url, &schema)
                .expect("connect")
                .create();
            Box::new(move || {
                tickflow_store::Postgres::connect_in(&url, &schema)
                    .unwrap()
                    .steps()
            })
        }
        #[cfg(not(feature = "postgres"))]
        Some(_) => panic!("built without PostgreSQL: run with `--features postgres`"),
        None => {
            let path = spec.to_string();
            Sqlite::create(&path).expect("create").create();
            Box::new(move || Sqlite::open(&path).unwrap().steps())
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let given = args.next();
    if let (Some(spec), Some(me)) = (&given, args.next()) {
        return serve(spec, &me);
    }
    let dir = std::env::temp_dir().join(format!("handover-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let spec = match &given {
        Some(url) => format!("{url}#handover_{}", std::process::id()),
        None => dir.join("world.db").display().to_string(),
    };
    let mut steps = open_store(&spec);
    let start = |me: &str| {
        (Command::new(std::env::current_exe().unwrap()).args([spec.as_str(), me]))
            .stdout(Stdio::null())
            .spawn()
            .expect("start a node")
    };
    let mut nodes = [start("east"), start("west")];
    // Kill a node now and then, and start it again at once.
    let mut rng = std::process::id() as u64 | 1;
    let mut kills = 0;
    let began = Instant::now();
    while kills < 6 && nodes.iter_mut().all(|n| n.try_wait().unwrap().is_none()) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(Duration::from_millis(30 + rng % 150));
        let k = (rng >> 20) as usize % 2;
        if nodes[k].try_wait().unwrap().is_none() {
            nodes[k].kill().unwrap(); // SIGKILL
            nodes[k].wait().unwrap();
            nodes[k] = start(if k == 0 { "east" } else { "west" });
            kills += 1;
        }
    }
    for n in &mut nodes {
        assert!(n.wait().unwrap().success(), "a node failed");
    }
    let stored = steps();
    assert_eq!(stored, (0..STEPS).collect::<Vec<_>>(), "each step once");
    println!(
        "ok: the courier took its {STEPS} steps, each once, across two nodes killed {kills} times \
         ({:.1} s)",
        began.elapsed().as_secs_f64()
    );
    if let Some(url) = given {
        let schema = spec.split_once('#').unwrap().1;
        let mut c = postgres_admin(&url);
        c(&format!("DROP SCHEMA {schema} CASCADE"));
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[cfg(feature = "postgres")]
fn postgres_admin(url: &str) -> impl FnMut(&str) {
    let mut c = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    move |sql| c.batch_execute(sql).expect("clean up")
}

#[cfg(not(feature = "postgres"))]
fn postgres_admin(_: &str) -> impl FnMut(&str) {
    |_| {}
}
