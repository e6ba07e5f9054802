//! The launcher's side of a fleet: the zones' processes, started and signalled, and the
//! faults it plays on them — kills (and restarts), pauses past the lease, cuts from the
//! database, a primary's failover. It takes no part in a frame.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::args::{Fault, FleetArgs};
use super::proxy;
use crate::sql::err;
use crate::CliError;

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// A zone's process and how to start it again.
pub(crate) struct Zone {
    pub(crate) child: Option<Child>,
    pub(crate) cmd: Vec<String>,
    /// Environment of its process (the clock shift's).
    pub(crate) env: Vec<(String, String)>,
    pub(crate) proxy: Option<proxy::Proxy>,
    pub(crate) log: PathBuf,
}

impl Zone {
    pub(crate) fn start(&mut self) -> Result<(), String> {
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

    pub(crate) fn signal(&self, sig: &str) {
        if let Some(c) = &self.child {
            let _ = Command::new("kill")
                .args([sig, &c.id().to_string()])
                .status();
        }
    }
}

/// Plays the faults until the run's end: kills (and restarts), pauses, cuts.
pub(crate) fn nemesis(
    a: &FleetArgs,
    zones: &mut [Zone],
    started: Instant,
) -> Result<Vec<Fault>, CliError> {
    let mut rng = Pcg64::seed_from_u64(a.world.seed);
    let mut faults = Vec::new();
    let end = started + Duration::from_secs_f64(a.seconds.max(1.0));
    let every = |s: f64| (s > 0.0).then(|| Duration::from_secs_f64(s));
    let (kill, stop, cut) = (every(a.kill_every), every(a.stop_every), every(a.cut_every));
    let hold = Duration::from_millis(a.world.lease_ms * 3);
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
    std::thread::sleep(Duration::from_millis(a.world.lease_ms * 4));
    Ok(faults)
}

/// The path of the multithreaded libfaketime, where the distribution's package puts it.
pub(crate) fn faketime_lib() -> Option<String> {
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
