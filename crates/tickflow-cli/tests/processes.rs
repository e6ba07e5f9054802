//! `demo --shards 4 --processes`: shard processes meeting in a real store (SQLite; PostgreSQL
//! when `TICKFLOW_PG_URL` names a server) give the one-shard checksum, and so does every fault
//! run, in which one shard process is killed with SIGKILL at a frame drawn from the seed and
//! started again, and damaged, stale and repeated parcels are put in the outbox.

use std::path::Path;

use assert_cmd::Command;

const ARENA: [&str; 4] = ["--actors", "400", "--seconds", "6"];

fn run(out: &Path, extra: &[&str]) -> String {
    let mut cmd = Command::cargo_bin("tickflow").expect("the binary is built");
    cmd.arg("demo")
        .args(ARENA)
        .arg("--out")
        .arg(out)
        .args(extra);
    String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
}

fn line<'a>(summary: &'a str, key: &str) -> &'a str {
    (summary.lines())
        .find_map(|l| l.trim().strip_prefix(key))
        .unwrap_or_else(|| panic!("a {key} line in {summary}"))
        .trim()
}

/// The numbers in a line, in order.
fn numbers(s: &str) -> Vec<u64> {
    (s.split(|c: char| !c.is_ascii_digit() && c != ','))
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect()
}

fn runs(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The processes' run with `store` (none: the default SQLite file) gives `want`, and the
/// fault runs do too: 3 by default, as many as `TICKFLOW_ARENA_FAULT_RUNS` (SQLite) or
/// `TICKFLOW_ARENA_FAULT_PG_RUNS` says (CI runs 10 of each; by hand, hundreds).
fn check(dir: &Path, store: Option<&str>, faults: u64) {
    let want = line(&run(&dir.join("one"), &[]), "checksum").to_string();
    let mut base = vec!["--shards", "4", "--processes"];
    if let Some(url) = store {
        base.extend(["--store", url]);
    }
    let four = run(&dir.join("four"), &base);
    assert_eq!(line(&four, "checksum"), want, "{four}");
    assert!(four.contains("4 shards as processes"), "{four}");
    assert!(numbers(line(&four, "handovers"))[0] > 0, "{four}");
    let registry = numbers(line(&four, "registry"));
    assert!(registry[0] > 0 && registry[1] == 0, "{four}");

    for seed in 1..=faults {
        let seed = seed.to_string();
        let mut args = base.clone();
        args.extend(["--fault", &seed]);
        let out = run(&dir.join(format!("fault{seed}")), &args);
        assert_eq!(line(&out, "checksum"), want, "fault run {seed}: {out}");
        let restarts = numbers(line(&out, "shard processes"));
        assert_eq!(restarts[restarts.len() - 2], 1, "fault run {seed}: {out}");
        // A repeat can read as stale when its actor moved on before the receiver saw it: the
        // totals are what must agree.
        let h = numbers(line(&out, "handovers"));
        let (refused, injected) = (h[1..4].iter().sum::<u64>(), h[4..7].iter().sum::<u64>());
        assert_eq!(
            refused, injected,
            "fault run {seed}: refused what was injected: {out}"
        );
        assert!(injected >= 1, "fault run {seed}: {out}");
        let registry = numbers(line(&out, "registry"));
        assert_eq!(registry[1], 0, "fault run {seed}: no parcel is left: {out}");
    }
}

#[test]
fn shard_processes_on_sqlite_give_the_checksum_of_one() {
    let dir = tempfile::tempdir().unwrap();
    check(dir.path(), None, runs("TICKFLOW_ARENA_FAULT_RUNS", 3));
}

#[test]
fn shard_processes_on_postgres_give_the_checksum_of_one() {
    let Ok(url) = std::env::var("TICKFLOW_PG_URL") else {
        let note = "shard_processes_on_postgres: skipped (set TICKFLOW_PG_URL to run it)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes());
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    check(
        dir.path(),
        Some(&url),
        runs("TICKFLOW_ARENA_FAULT_PG_RUNS", 3),
    );
}

#[test]
fn shards_started_by_hand_serve_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let want = line(&run(&dir.path().join("one"), &[]), "checksum").to_string();
    let exe = assert_cmd::cargo::cargo_bin("tickflow");
    let out = dir.path().join("hand");
    let mut director = std::process::Command::new(&exe)
        .arg("demo")
        .args(ARENA)
        .args(["--shards", "2", "--processes", "--external-shards", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let store = format!("sqlite:{}", out.join("arena.db").display());
    // Started once the director says it waits: it makes the store afresh before that.
    let mut said = String::new();
    let mut stderr = std::io::BufReader::new(director.stderr.take().unwrap());
    std::io::BufRead::read_line(&mut stderr, &mut said).unwrap();
    assert!(said.contains(&store), "{said}");
    let shards: Vec<_> = (0..2)
        .map(|k| {
            std::process::Command::new(&exe)
                .args([
                    "shard",
                    "--shards",
                    "2",
                    "--store",
                    &store,
                    "--id",
                    &k.to_string(),
                ])
                .spawn()
                .unwrap()
        })
        .collect();
    // The shards first: a director waits for shards started by hand as long as it takes, so
    // one that failed must stop it here rather than leave the test waiting.
    for mut s in shards {
        let status = s.wait().unwrap();
        if !status.success() {
            let _ = director.kill();
            panic!("a shard failed: {status}");
        }
    }
    let summary = String::from_utf8(director.wait_with_output().unwrap().stdout).unwrap();
    drop(stderr); // read to here: the director never writes into a closed pipe
    assert_eq!(line(&summary, "checksum"), want, "{summary}");
}

#[test]
fn a_bad_store_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::cargo_bin("tickflow").expect("the binary is built");
    cmd.args([
        "demo",
        "--shards",
        "2",
        "--processes",
        "--store",
        "mysql://x",
        "--out",
    ])
    .arg(dir.path());
    let out = cmd.assert().failure().get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("sqlite:PATH or a postgres:// URL"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
