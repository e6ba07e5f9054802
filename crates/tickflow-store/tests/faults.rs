//! The fault harness: two node processes run a world of 11 owners that walk back and forth
//! between them (`faults/world.rs`), while this test kills them — with SIGKILL at random
//! moments, or by making one abort at a named step of a handover (after the freeze, after the
//! send's commit, after the import, after the acceptance's commit, before the settling commit)
//! — and restarts them, with nothing but `Durable::resume`. On PostgreSQL it also ends their
//! connections at random (`pg_terminate_backend`, mid-commit among them) and, where it may,
//! restarts the server; and it starts a second process for a node that is running. At the end
//! the checker (`faults/check.rs`) reads the whole history from the store: calls lost, made
//! twice or early, owners held by none or in two nodes. All must be 0.
//!
//! `TICKFLOW_FAULT_RUNS` sets the runs per scenario (default: a bounded set for CI) and
//! `TICKFLOW_FAULT_KILLS` the random kills per run; each run prints what it did.

#[path = "faults/check.rs"]
mod check;
#[path = "faults/effects.rs"]
mod effects;
#[path = "faults/world.rs"]
mod world;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use check::{check, Faults};
use effects::Effects;
use tickflow_store::Sqlite;
use world::{End, Point, POINTS};

/// The child: runs the node named by the environment and exits 0 (the run is over), 4
/// (another live process runs the node), 5 (another process took the node over: this one had
/// stalled past its lease) or 1 (an error, printed).
#[test]
#[ignore = "the fault harness's child process, started by it"]
fn child() {
    let Ok(target) = std::env::var("TF_FAULT_STORE") else {
        return;
    };
    let node = std::env::var("TF_FAULT_NODE").unwrap();
    let point = std::env::var("TF_FAULT_POINT").ok().and_then(|p| {
        let (name, n) = p.split_once(':')?;
        Some(Point {
            name: name.to_string(),
            n: n.parse().ok()?,
        })
    });
    let lease = Duration::from_millis(200);
    let end = if let Some(path) = target.strip_prefix("sqlite:") {
        world::run(Sqlite::open(path).unwrap(), &node, lease, point)
    } else {
        run_postgres(&target, &node, lease, point)
    };
    match end {
        Ok(End::Done) => std::process::exit(0),
        Ok(End::Held) => std::process::exit(4),
        Ok(End::Lost) => std::process::exit(5),
        Err(e) => {
            eprintln!("node {node}: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(feature = "postgres")]
/// The URL with this run's application name, so that the harness can end its connections.
fn app_url(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}application_name={schema}")
}

#[cfg(feature = "postgres")]
fn run_postgres(
    target: &str,
    node: &str,
    lease: Duration,
    point: Option<Point>,
) -> Result<End, tickflow_store::StoreError> {
    let schema = target.strip_prefix("postgres:").unwrap();
    let url = app_url(&std::env::var("TICKFLOW_PG_URL").unwrap(), schema);
    // The server may be restarting: connect as a restarted server would, until it answers.
    let started = Instant::now();
    let s = loop {
        match tickflow_store::Postgres::connect_in(&url, schema) {
            Ok(s) => break s,
            Err(_) if started.elapsed() < Duration::from_secs(30) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    };
    world::run(s, node, lease, point)
}

#[cfg(not(feature = "postgres"))]
fn run_postgres(
    _: &str,
    _: &str,
    _: Duration,
    _: Option<Point>,
) -> Result<End, tickflow_store::StoreError> {
    unreachable!("built without PostgreSQL")
}

fn spawn(target: &str, node: &str, point: Option<&str>) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child",
        "--ignored",
        "--test-threads=1",
        "--nocapture",
    ])
    .env("TF_FAULT_STORE", target)
    .env("TF_FAULT_NODE", node)
    .env_remove("TF_FAULT_POINT")
    .stdout(Stdio::null())
    .stderr(Stdio::inherit());
    if let Some(p) = point {
        cmd.env("TF_FAULT_POINT", p);
    }
    cmd.spawn().unwrap()
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x
}

/// What one run does besides the world itself.
#[derive(Clone, Copy, Debug, Default)]
struct Plan {
    /// Random SIGKILLs of either node.
    kills: u32,
    /// A node that aborts at a step of a handover: (node index, point index, nth time).
    point: Option<(usize, usize, u32)>,
    /// End the nodes' connections at random (PostgreSQL).
    terminate: u32,
    /// Restart the server once (PostgreSQL, where the environment says how).
    restart: bool,
    /// Start a second process for node a now and then.
    twins: u32,
}

/// What a run did.
#[derive(Debug, Default)]
struct Done {
    kills: u32,
    aborts: u32,
    twins_refused: u32,
    /// Processes that found their node taken over (they had stalled past their lease while a
    /// second one waited) and stopped.
    lost_leases: u32,
    terminated: u32,
}

/// Runs the world on `target` under `plan` until both nodes are done; the store is left for the
/// checker.
fn run(target: &str, plan: Plan, seed: u64, hooks: &mut dyn FnMut(&str)) -> Done {
    let mut rng = seed | 1;
    let mut next = move |n: u64| {
        rng = mix(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        rng % n.max(1)
    };
    let nodes = ["a", "b"];
    let point = plan
        .point
        .map(|(k, p, n)| (k, format!("{}:{n}", POINTS[p])));
    let mut procs: Vec<Vec<Child>> = (0..2)
        .map(|k| {
            let p = point
                .as_ref()
                .filter(|(pk, _)| *pk == k)
                .map(|(_, p)| p.as_str());
            vec![spawn(target, nodes[k], p)]
        })
        .collect();
    let mut done = [false; 2];
    let mut did = Done::default();
    let (mut kills, mut terminate, mut twins, mut restart) =
        (plan.kills, plan.terminate, plan.twins, plan.restart);
    let start = Instant::now();
    // Until both nodes are done and every process of theirs (second ones too) has ended.
    while !done.iter().all(|&d| d) || procs.iter().any(|p| !p.is_empty()) {
        assert!(
            start.elapsed() < Duration::from_secs(150),
            "the run never ended: {did:?}"
        );
        std::thread::sleep(Duration::from_millis(5 + next(40)));
        for k in 0..2 {
            let mut i = 0;
            while i < procs[k].len() {
                match procs[k][i].try_wait().unwrap() {
                    None => i += 1,
                    Some(status) => {
                        let _ = procs[k].remove(i).wait(); // reaped already
                        match status.code() {
                            Some(0) => done[k] = true,
                            Some(4) => did.twins_refused += 1,
                            Some(5) => did.lost_leases += 1,
                            None => did.aborts += 1, // a fault point (SIGABRT)
                            Some(c) => panic!("node {} failed with {c}", nodes[k]),
                        }
                    }
                }
            }
            if procs[k].is_empty() && !done[k] {
                std::thread::sleep(Duration::from_millis(next(20)));
                procs[k].push(spawn(target, nodes[k], None));
            }
        }
        if kills > 0 && next(2) == 0 {
            let k = next(2) as usize;
            if !procs[k].is_empty() && procs[k][0].try_wait().unwrap().is_none() {
                let mut c = procs[k].remove(0);
                let _ = c.kill(); // SIGKILL
                let _ = c.wait();
                did.kills += 1;
                kills -= 1;
            }
        }
        if terminate > 0 && next(4) == 0 {
            hooks("terminate");
            did.terminated += 1;
            terminate -= 1;
        }
        if twins > 0 && next(8) == 0 && !done[0] {
            procs[0].push(spawn(target, "a", None));
            twins -= 1;
        }
        if restart && start.elapsed() > Duration::from_millis(300) {
            hooks("restart");
            restart = false;
        }
    }
    did
}

fn runs(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The plans of a scenario set: each handover step on each node, then random kills.
fn plans(kills: u32, extra: impl Fn(u64) -> Plan) -> Vec<Plan> {
    let n = runs("TICKFLOW_FAULT_RUNS", 0);
    let mut out = Vec::new();
    for k in 0..2 {
        for p in 0..POINTS.len() {
            // No random kill: the process with the point must live to reach it.
            out.push(Plan {
                point: Some((k, p, 1 + (k + p) as u32 % 3)),
                ..Plan::default()
            });
        }
    }
    let random = if n == 0 { 6 } else { n };
    for r in 0..random {
        out.push(Plan { kills, ..extra(r) });
    }
    out
}

/// Runs every plan on fresh stores from `fresh(run)`, checks each, and reports.
fn harness<S: Effects>(
    db: &str,
    plans: Vec<Plan>,
    fresh: impl Fn(u64) -> (String, Box<dyn Fn() -> S>),
    mut hooks: impl FnMut(&str, &str),
) {
    let mut total = Faults::default();
    let (mut kills, mut aborts, mut twins, mut terminated, mut lost) = (0, 0, 0, 0, 0);
    let started = Instant::now();
    for (i, plan) in plans.iter().enumerate() {
        let (target, open) = fresh(i as u64);
        open().create(); // the store's tables and the effects table, before the nodes start
        let did = run(&target, *plan, 0x5eed ^ i as u64, &mut |what| {
            hooks(&target, what)
        });
        let f = check(&open);
        eprintln!("{db} run {i} {plan:?}: {did:?} -> {f:?}");
        assert!(
            plan.point.is_none() || did.aborts >= 1,
            "{db} run {i}: its point was reached"
        );
        total.add(f);
        kills += did.kills;
        aborts += did.aborts;
        twins += did.twins_refused;
        lost += did.lost_leases;
        terminated += did.terminated;
    }
    eprintln!(
        "{db}: {} runs in {:.0} s, {kills} SIGKILLs, {aborts} aborts at handover steps, \
         {terminated} connections ended, {twins} second processes refused, {lost} processes \
         stopped after their node was taken over: {total:?}",
        plans.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(total.is_clean(), "{db}: {total:?}");
}

#[test]
fn sqlite_handovers_survive_every_fault() {
    let dir = std::env::temp_dir().join(format!("tickflow-faults-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let kills = runs("TICKFLOW_FAULT_KILLS", 12) as u32;
    let plans = plans(kills, |r| Plan {
        twins: u32::from(r % 2 == 0) * 3,
        ..Plan::default()
    });
    let d = dir.clone();
    harness(
        "sqlite",
        plans,
        move |run| {
            let path = d.join(format!("run{run}.db"));
            let open = {
                let path = path.clone();
                Box::new(move || Sqlite::create(&path).unwrap()) as Box<dyn Fn() -> Sqlite>
            };
            (format!("sqlite:{}", path.display()), open)
        },
        |_, _| {},
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_handovers_survive_every_fault() {
    let Ok(url) = std::env::var("TICKFLOW_PG_URL") else {
        let note = "postgres_handovers_survive_every_fault: skipped (set TICKFLOW_PG_URL)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes());
        return;
    };
    let restart = std::env::var("TICKFLOW_PG_RESTART").ok();
    let kills = runs("TICKFLOW_FAULT_KILLS", 12) as u32;
    let plans = plans(kills, |r| Plan {
        terminate: if r % 2 == 1 { 6 } else { 0 },
        twins: u32::from(r % 3 == 0) * 3,
        restart: r == 2 && restart.is_some(),
        ..Plan::default()
    });
    let pid = std::process::id();
    let admin = || postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let drop_schema = |s: &str| {
        let _ = admin().batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE"));
    };
    let u = url.clone();
    harness(
        "postgres",
        plans.clone(),
        |run| {
            let schema = format!("tf_fault_{pid}_{run}");
            drop_schema(&schema);
            let (u, s) = (u.clone(), schema.clone());
            let open = Box::new(move || tickflow_store::Postgres::create_in(&u, &s).unwrap())
                as Box<dyn Fn() -> tickflow_store::Postgres>;
            (format!("postgres:{schema}"), open)
        },
        |target, what| match what {
            "terminate" => {
                let app = target.strip_prefix("postgres:").unwrap();
                let _ = (admin()).execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE application_name = $1",
                    &[&app],
                );
            }
            "restart" => {
                let cmd = restart.as_deref().unwrap();
                let ok = Command::new("sh")
                    .args(["-c", cmd])
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "{cmd} failed");
            }
            _ => {}
        },
    );
    for run in 0..plans.len() {
        drop_schema(&format!("tf_fault_{pid}_{run}"));
    }
}
