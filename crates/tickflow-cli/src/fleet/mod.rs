//! `tickflow fleet`: zones that run free — each a process on its own pacer, with no director
//! and no frame barrier — their actors walking between them through handovers, while a
//! nemesis kills zones (SIGKILL), pauses them past their lease (SIGSTOP, SIGCONT), cuts them
//! off from PostgreSQL and shifts their clocks. The live zones adopt a lost zone's actors;
//! a paused one comes back fenced and rejoins. At the end the checker reads the database
//! back: every actor in exactly one zone, every durable call once, none early (`check.rs`).
//!
//! The launcher here only starts processes and plays the nemesis: it takes no part in a
//! frame, and the zones know nothing of it.

mod args;
mod check;
mod db;
mod nemesis;
mod pace;
mod plot;
mod proxy;
mod tables;
pub(crate) mod zone;

use std::time::{Duration, Instant};

pub(crate) use args::FleetArgs;
use db::{open, with_tx, Db};
use nemesis::{faketime_lib, nemesis, Zone};

use crate::CliError;

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
    if !pg && a.skew_ms > 0 {
        // On SQLite the store's clock (leases, stamps, offline time) is the machine's, which
        // every process of it shares: no namespace separates CLOCK_REALTIME, so zones that
        // disagree on it exist only under LD_PRELOAD, and would judge each other's leases by
        // clocks 2 x MS apart. On PostgreSQL the server's clock is the store's.
        return Err(usage(
            "--skew-ms: SQLite's zones are processes of one machine, which share its clock; \
             shift clocks on PostgreSQL, whose server's clock the store uses"
                .into(),
        ));
    }
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
                "--stop",
                &stop.display().to_string(),
            ]
            .map(String::from),
        );
        cmd.extend(a.world.args());
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
    let mut read = with_tx(&mut db, |tx| check::check(tx, a.world.hz));
    for _ in 0..20 {
        if read.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
        read = with_tx(&mut db, |tx| check::check(tx, a.world.hz));
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
    plot::draw(&a.out, &report, &faults, a.world.hz)?;
    if report.violations() > 0 {
        return Err(CliError::internal(format!(
            "the checker found {} violations (see above)",
            report.violations()
        )));
    }
    Ok(())
}
