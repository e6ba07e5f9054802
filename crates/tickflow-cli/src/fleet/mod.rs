//! `tickflow fleet`: zones that run free — each a process on its own pacer, with no director
//! and no frame barrier — their actors walking between them through handovers, while a
//! nemesis kills zones (SIGKILL), pauses them past their lease (SIGSTOP, SIGCONT), cuts them
//! off from PostgreSQL and shifts their clocks. The live zones adopt a lost zone's actors;
//! a paused one comes back fenced and rejoins. At the end the checker reads the database
//! back: every actor in exactly one zone, every durable call once, none early (`check.rs`).
//!
//! The launcher here only starts processes and plays the nemesis: it takes no part in a
//! frame, and the zones know nothing of it.

mod check;
mod plot;
mod proxy;
mod tables;
pub(crate) mod zone;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use tickflow_store::{Postgres, Sqlite};

use crate::sql::{err, Sql};
use crate::CliError;

/// A zone's node name.
pub(crate) fn zone_name(index: usize) -> String {
    format!("zone-{index}")
}

/// The fleet's database.
pub(crate) enum Db {
    Sqlite(Sqlite),
    Postgres(Postgres),
}

/// `sqlite:PATH` or a `postgres://` URL (tables in `schema`, when given), with the fleet's
/// tables made.
pub(crate) fn open(store: &str, schema: Option<&str>) -> Result<Db, String> {
    let mut db = if let Some(path) = store.strip_prefix("sqlite:") {
        Db::Sqlite(Sqlite::create(path).map_err(err)?)
    } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        let pg = match schema {
            Some(schema) => Postgres::create_in(store, schema),
            None => Postgres::create(store),
        };
        Db::Postgres(pg.map_err(err)?)
    } else {
        return Err(format!(
            "--store {store:?}: give sqlite:PATH or a postgres:// URL"
        ));
    };
    with_tx(&mut db, tables::create)?;
    Ok(db)
}

/// Runs `f` in a transaction of `db` and commits it.
fn with_tx<T>(db: &mut Db, f: impl FnOnce(&mut dyn Sql) -> Result<T, String>) -> Result<T, String> {
    match db {
        Db::Sqlite(s) => {
            let behavior = rusqlite::TransactionBehavior::Immediate;
            let mut tx = (s.connection().transaction_with_behavior(behavior)).map_err(err)?;
            let out = f(&mut tx)?;
            tx.commit().map_err(err)?;
            Ok(out)
        }
        Db::Postgres(p) => {
            let mut tx = p.client().map_err(err)?.transaction().map_err(err)?;
            let out = f(&mut tx)?;
            tx.commit().map_err(err)?;
            Ok(out)
        }
    }
}

/// `tickflow fleet`'s settings.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct FleetArgs {
    /// Zone processes.
    #[arg(long, default_value_t = 3)]
    zones: usize,
    /// Actors each zone creates at its first start.
    #[arg(long, default_value_t = 1000)]
    actors: u64,
    /// How long the fleet runs, seconds.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    #[arg(long, default_value_t = 30)]
    hz: u32,
    /// `sqlite:PATH` or a `postgres://` URL (default: `sqlite:OUT/fleet.db`, made anew).
    #[arg(long)]
    store: Option<String>,
    /// The PostgreSQL schema for the run's tables (a new one per run keeps runs apart).
    #[arg(long)]
    schema: Option<String>,
    /// Where the plots and the zones' logs go.
    #[arg(long, default_value = "tickflow-out/fleet")]
    out: PathBuf,
    /// Kill a zone with SIGKILL every this many seconds (0: never); it starts again after
    /// --down seconds.
    #[arg(long, default_value_t = 6.0)]
    kill_every: f64,
    #[arg(long, default_value_t = 2.0)]
    down: f64,
    /// Pause a zone (SIGSTOP) for three leases every this many seconds, then SIGCONT (0:
    /// never).
    #[arg(long, default_value_t = 9.0)]
    stop_every: f64,
    /// Cut a zone off from PostgreSQL for three leases every this many seconds (0: never;
    /// PostgreSQL with one host only: a proxy per zone on loopback).
    #[arg(long, default_value_t = 0.0)]
    cut_every: f64,
    /// Shift the clocks of every other zone by +MS and -MS (needs `faketime`, from the
    /// distribution's package of that name).
    #[arg(long, default_value_t = 0)]
    skew_ms: u64,
    /// Fail the PostgreSQL primary over this many seconds into the run (0: never), by running
    /// --failover-cmd (which kills the primary and promotes its standby; the zones find the
    /// new primary through a multi-host --store URL).
    #[arg(long, default_value_t = 0.0)]
    failover_at: f64,
    #[arg(long, default_value = "")]
    failover_cmd: String,
    /// Each actor's pulse period, ms: MIN and MAX.
    #[arg(long, default_value_t = 500)]
    pulse_min: u64,
    #[arg(long, default_value_t = 2000)]
    pulse_max: u64,
    /// Mean time between an actor's walks, ms.
    #[arg(long, default_value_t = 5000)]
    walk_ms: u64,
    /// The zones' lease, ms.
    #[arg(long, default_value_t = 500)]
    lease_ms: u64,
    /// Actors a zone adopts from lost zones per frame at most.
    #[arg(long, default_value_t = 2000)]
    adopt_limit: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// What the nemesis did, when (µs since the Unix epoch, this machine's clock).
pub(crate) struct Fault {
    pub(crate) at_us: i64,
    pub(crate) kind: &'static str,
    pub(crate) zone: usize,
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// A zone's process and how to start it again.
struct Zone {
    child: Option<Child>,
    cmd: Vec<String>,
    /// Environment of its process (the clock shift's).
    env: Vec<(String, String)>,
    proxy: Option<proxy::Proxy>,
    log: PathBuf,
}

impl Zone {
    fn start(&mut self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(err)?;
        let child = Command::new(&self.cmd[0])
            .args(&self.cmd[1..])
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.cmd[0]))?;
        self.child = Some(child);
        Ok(())
    }

    fn signal(&self, sig: &str) {
        if let Some(c) = &self.child {
            let _ = Command::new("kill")
                .args([sig, &c.id().to_string()])
                .status();
        }
    }
}

/// Runs the fleet and its nemesis, then the checker; an error when an invariant broke.
pub(crate) fn run(a: &FleetArgs) -> Result<(), CliError> {
    let usage = |m: String| CliError::usage(m);
    if a.zones == 0 {
        return Err(usage("--zones: a fleet has at least 1".into()));
    }
    std::fs::create_dir_all(&a.out).map_err(|e| CliError::io(a.out.display(), e))?;
    let store = match &a.store {
        Some(s) => s.clone(),
        None => {
            let path = a.out.join("fleet.db");
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
            }
            format!("sqlite:{}", path.display())
        }
    };
    let mut db = open(&store, a.schema.as_deref()).map_err(usage)?;
    let fresh = with_tx(&mut db, |tx| {
        tx.rows("SELECT node FROM tickflow_nodes", &[])
    });
    if !fresh.map_err(usage)?.is_empty() {
        return Err(usage(format!(
            "{store} holds another run's rows: give the run a new file (or --schema)"
        )));
    }
    let pg = matches!(db, Db::Postgres(_));
    let stop = a.out.join("stop");
    let _ = std::fs::remove_file(&stop);
    let exe = std::env::current_exe().map_err(|e| CliError::io("the tool's path", e))?;
    // libfaketime, preloaded: the zone's own process reads a shifted clock (the wrapper
    // program would stand between the nemesis's signals and the zone).
    let faketime = (a.skew_ms > 0).then(faketime_lib).flatten();
    let mut zones = Vec::new();
    for i in 0..a.zones {
        let mut url = store.clone();
        let mut proxy = None;
        if pg && a.cut_every > 0.0 {
            if let Some((_, target)) = proxy::through(&store, 0) {
                let p = proxy::Proxy::start(target).map_err(usage)?;
                url = proxy::through(&store, p.port).expect("parsed above").0;
                proxy = Some(p);
            }
        }
        let mut env = Vec::new();
        if let Some(lib) = &faketime {
            let sign = if i % 2 == 0 { '+' } else { '-' };
            let shift = format!("{sign}{}s", a.skew_ms as f64 / 1000.0);
            env.push(("LD_PRELOAD".to_string(), lib.clone()));
            env.push(("FAKETIME".to_string(), shift));
        }
        let mut cmd = vec![exe.display().to_string()];
        cmd.extend(
            [
                "zone",
                "--store",
                &url,
                "--index",
                &i.to_string(),
                "--zones",
                &a.zones.to_string(),
                "--actors",
                &a.actors.to_string(),
                "--hz",
                &a.hz.to_string(),
                "--pulse-min",
                &a.pulse_min.to_string(),
                "--pulse-max",
                &a.pulse_max.to_string(),
                "--walk-ms",
                &a.walk_ms.to_string(),
                "--lease-ms",
                &a.lease_ms.to_string(),
                "--seed",
                &a.seed.to_string(),
                "--stop",
                &stop.display().to_string(),
            ]
            .map(String::from),
        );
        if let Some(s) = &a.schema {
            cmd.extend(["--schema".to_string(), s.clone()]);
        }
        let log = a.out.join(format!("zone-{i}.log"));
        let _ = std::fs::remove_file(&log);
        zones.push(Zone {
            child: None,
            cmd,
            env,
            proxy,
            log,
        });
    }
    let started = Instant::now();
    for z in &mut zones {
        z.start().map_err(usage)?;
    }
    let faults = nemesis(a, &mut zones, started)?;
    std::fs::write(&stop, b"stop").map_err(|e| CliError::io(stop.display(), e))?;
    let deadline = Instant::now() + Duration::from_secs(20);
    for z in &mut zones {
        z.signal("-CONT");
        if let Some(p) = &z.proxy {
            p.heal();
        }
        if let Some(mut c) = z.child.take() {
            while c.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    // The launcher's connection may be to a primary that failed over: a few tries.
    let mut read = with_tx(&mut db, |tx| check::check(tx, a.hz));
    for _ in 0..20 {
        if read.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
        read = with_tx(&mut db, |tx| check::check(tx, a.hz));
    }
    let mut report = read.map_err(CliError::internal)?;
    // A zone that stopped by itself (an acknowledged commit the database lost, say) says why.
    for z in &zones {
        let log = std::fs::read_to_string(&z.log).unwrap_or_default();
        report.zone_errors.extend(
            log.lines()
                .filter(|l| l.starts_with("error"))
                .map(String::from),
        );
    }
    let mut csv = String::from("at_us,fault,zone\n");
    for f in &faults {
        csv.push_str(&format!("{},{},zone-{}\n", f.at_us, f.kind, f.zone));
    }
    std::fs::write(a.out.join("faults.csv"), csv).map_err(|e| CliError::io(a.out.display(), e))?;
    let summary = plot::summary(a, &store, &report, &faults, faketime.is_some());
    print!("{summary}");
    std::fs::write(a.out.join("summary.txt"), &summary)
        .map_err(|e| CliError::io(a.out.display(), e))?;
    plot::draw(&a.out, &report, &faults, a.hz)?;
    if report.violations() > 0 {
        return Err(CliError::internal(format!(
            "the checker found {} violations (see above)",
            report.violations()
        )));
    }
    Ok(())
}

/// Plays the faults until the run's end: kills (and restarts), pauses, cuts.
fn nemesis(a: &FleetArgs, zones: &mut [Zone], started: Instant) -> Result<Vec<Fault>, CliError> {
    let mut rng = Pcg64::seed_from_u64(a.seed);
    let mut faults = Vec::new();
    let end = started + Duration::from_secs_f64(a.seconds.max(1.0));
    let every = |s: f64| (s > 0.0).then(|| Duration::from_secs_f64(s));
    let (kill, stop, cut) = (every(a.kill_every), every(a.stop_every), every(a.cut_every));
    let hold = Duration::from_millis(a.lease_ms * 3);
    let down = Duration::from_secs_f64(a.down.max(0.0));
    let mut next = [kill, stop, cut].map(|d| d.map(|d| started + d));
    let mut failover = (a.failover_at > 0.0 && !a.failover_cmd.is_empty())
        .then(|| started + Duration::from_secs_f64(a.failover_at));
    // Pending ends of faults: (when, what, zone).
    let mut ends: Vec<(Instant, &'static str, usize)> = Vec::new();
    let mut record = |kind, zone| {
        faults.push(Fault {
            at_us: now_us(),
            kind,
            zone,
        })
    };
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if failover.is_some_and(|at| now >= at) {
            failover = None;
            record("failover", 0);
            let ok = Command::new("sh")
                .args(["-c", &a.failover_cmd])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err(CliError::internal(format!(
                    "--failover-cmd {:?} failed",
                    a.failover_cmd
                )));
            }
            record("promoted", 0);
        }
        ends.sort_by_key(|e| e.0);
        while ends.first().is_some_and(|e| e.0 <= now) {
            let (_, what, z) = ends.remove(0);
            match what {
                "start" => zones[z].start().map_err(CliError::internal)?,
                "cont" => zones[z].signal("-CONT"),
                _ => {
                    if let Some(p) = &zones[z].proxy {
                        p.heal();
                    }
                }
            }
            record(what, z);
        }
        let busy = |z: usize, ends: &[(Instant, &str, usize)]| ends.iter().any(|e| e.2 == z);
        for (k, what) in ["kill", "stop", "cut"].into_iter().enumerate() {
            let Some(at) = next[k] else { continue };
            if now < at {
                continue;
            }
            next[k] = Some(at + [kill, stop, cut][k].expect("scheduled"));
            let z = rng.random_range(0..zones.len());
            if busy(z, &ends) || (what == "cut" && zones[z].proxy.is_none()) {
                continue;
            }
            match what {
                "kill" => {
                    zones[z].signal("-KILL");
                    if let Some(mut c) = zones[z].child.take() {
                        let _ = c.wait();
                    }
                    ends.push((now + down, "start", z));
                }
                "stop" => {
                    zones[z].signal("-STOP");
                    ends.push((now + hold, "cont", z));
                }
                _ => {
                    if let Some(p) = &zones[z].proxy {
                        p.cut();
                    }
                    ends.push((now + hold, "heal", z));
                }
            }
            record(what, z);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Zones down at the end start again, so that the run ends with every zone up.
    for (_, what, z) in ends {
        match what {
            "start" => zones[z].start().map_err(CliError::internal)?,
            "cont" => zones[z].signal("-CONT"),
            _ => zones[z].proxy.as_ref().map_or((), |p| p.heal()),
        }
        record(what, z);
    }
    std::thread::sleep(Duration::from_millis(a.lease_ms * 4));
    Ok(faults)
}

/// The path of the multithreaded libfaketime, where the distribution's package puts it.
fn faketime_lib() -> Option<String> {
    let dirs = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib",
        "/usr/lib64",
    ];
    (dirs.iter())
        .map(|d| format!("{d}/faketime/libfaketimeMT.so.1"))
        .find(|p| std::path::Path::new(p).exists())
}
