//! The nemesis test: `tickflow fleet` — zone processes running free, no director — under
//! SIGKILL of a zone, SIGSTOP past its lease then SIGCONT, and on PostgreSQL (when
//! `TICKFLOW_PG_URL` names a server) a zone cut off from the database and healed, and clocks
//! shifted by +/-5 s (when the distribution's `faketime` is installed). The fleet's checker
//! reads the database back: no actor lost or in two zones, no durable call lost, made twice or
//! early. Bounded here (`TICKFLOW_FLEET_SECONDS`, 10 by default); longer runs go by hand.

use std::path::Path;

use assert_cmd::Command;

fn seconds() -> String {
    std::env::var("TICKFLOW_FLEET_SECONDS").unwrap_or_else(|_| "10".into())
}

/// Runs the fleet; its summary. The run fails (exit 1) when the checker finds a violation.
fn fleet(out: &Path, extra: &[&str]) -> String {
    let mut cmd = Command::cargo_bin("tickflow").expect("the binary is built");
    cmd.args([
        "fleet",
        "--zones",
        "3",
        "--actors",
        "200",
        "--seconds",
        &seconds(),
    ])
    .arg("--out")
    .arg(out)
    .args(extra)
    .timeout(std::time::Duration::from_secs(600));
    let done = cmd.assert();
    let out = done.get_output();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The first number after `key` in the summary.
fn after(summary: &str, key: &str) -> u64 {
    let at = summary
        .find(key)
        .unwrap_or_else(|| panic!("{key:?} in {summary}"))
        + key.len();
    let digits: String = (summary[at..].chars())
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().unwrap()
}

fn check(summary: &str) {
    print!("{summary}");
    for key in [
        "in no zone",
        "in two zones",
        "; lost",
        "made twice",
        "early ",
    ] {
        assert_eq!(after(summary, key), 0, "{key}: {summary}");
    }
    assert_eq!(after(summary, "checker:"), 0);
    assert!(
        after(summary, "faults:") >= 1,
        "a zone was killed: {summary}"
    );
    assert!(after(summary, "durable calls:") > 1000, "{summary}");
    // The killed zone's actors were adopted by the others, with no director.
    let adopted = summary.split("arrivals by handover,").nth(1).unwrap_or("");
    assert!(after(adopted, "") > 0, "adoptions: {summary}");
}

#[test]
fn a_fleet_on_sqlite_survives_kills_and_pauses() {
    let dir = tempfile::tempdir().unwrap();
    let summary = fleet(
        dir.path(),
        &["--kill-every", "3", "--stop-every", "4", "--seed", "3"],
    );
    check(&summary);
    for file in ["fleet.svg", "fleet.png", "summary.txt", "faults.csv"] {
        assert!(dir.path().join(file).exists(), "{file}");
    }
}

#[test]
fn a_fleet_on_postgres_survives_every_fault() {
    let Ok(url) = std::env::var("TICKFLOW_PG_URL") else {
        let note = "a_fleet_on_postgres: skipped (set TICKFLOW_PG_URL to run it)\n";
        std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes()).unwrap();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let schema = format!("fleet_{}_{}", std::process::id(), rand_tag());
    let summary = fleet(
        dir.path(),
        &[
            "--store",
            &url,
            "--schema",
            &schema,
            "--kill-every",
            "3",
            "--stop-every",
            "4",
            "--cut-every",
            "3.5",
            "--skew-ms",
            "5000",
            "--seed",
            "5",
        ],
    );
    check(&summary);
    assert!(summary.contains("cut off from the database"), "{summary}");
}

/// A tag that keeps the schemas of runs apart.
fn rand_tag() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// The PostgreSQL primary dies (killed as a crash would) and its synchronous standby is
/// promoted with the standard tool while the fleet runs, under the other faults too; the
/// zones find the new primary through the multi-host URL. `TICKFLOW_PG_PAIR` names a script
/// that makes a fresh pair and prints that URL and the failover command (CI's
/// `.ci/pg-pair`); without it the test says it was skipped.
#[test]
fn a_fleet_survives_a_primary_failover() {
    let Ok(script) = std::env::var("TICKFLOW_PG_PAIR") else {
        let note =
            "a_fleet_survives_a_primary_failover: skipped (set TICKFLOW_PG_PAIR to run it)\n";
        std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes()).unwrap();
        return;
    };
    let made = std::process::Command::new("bash")
        .arg(&script)
        .stderr(std::process::Stdio::null())
        .output()
        .expect("the pair's script runs");
    assert!(made.status.success(), "{script} failed");
    let text = String::from_utf8(made.stdout).unwrap();
    let mut lines = text.lines();
    let (url, failover) = (lines.next().unwrap(), lines.next().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let summary = fleet(
        dir.path(),
        &[
            "--store",
            url,
            "--kill-every",
            "3",
            "--stop-every",
            "4",
            "--failover-at",
            "4",
            "--failover-cmd",
            failover,
            "--seed",
            "7",
        ],
    );
    check(&summary);
    let ms = after(
        summary
            .split("first commit on the new primary")
            .nth(1)
            .unwrap_or(""),
        "",
    );
    println!("failover: first commit {ms} ms after the primary's death");
}

/// Shifted clocks are a PostgreSQL fault: SQLite's zones share their machine's clock, and the
/// flag is refused with a reason (exit 2) before any zone starts.
#[test]
fn clock_skew_on_sqlite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::cargo_bin("tickflow").unwrap();
    cmd.args(["fleet", "--skew-ms", "5000", "--out"])
        .arg(dir.path());
    let out = cmd.assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("share its clock"), "{err}");
    assert!(!dir.path().join("zone-0.log").exists());
}
