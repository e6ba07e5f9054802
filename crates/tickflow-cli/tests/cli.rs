//! The `tickflow` binary as a user runs it: every subcommand at a small size, the files the
//! demo writes, determinism of the checksum, and bad arguments.

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn tickflow() -> Command {
    Command::cargo_bin("tickflow").expect("the binary is built")
}

/// Runs a small demo into `out` and returns its stdout.
fn demo(out: &Path, extra: &[&str]) -> String {
    let mut cmd = tickflow();
    cmd.args(["demo", "--actors", "60", "--seconds", "2", "--out"])
        .arg(out)
        .args(extra);
    let output = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(output).expect("utf-8")
}

fn checksum(summary: &str) -> String {
    summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("checksum"))
        .expect("a checksum line")
        .trim()
        .to_string()
}

#[test]
fn the_demo_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let summary = demo(&out, &[]);
    for line in [
        "frames ",
        "tick functions run",
        "timers fired",
        "latent completions",
    ] {
        assert!(summary.contains(line), "no `{line}` in:\n{summary}");
    }
    assert!(summary.contains("120 (2.0 s of game time"), "{summary}");

    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "catch-up.svg",
            "frames.png",
            "frames.svg",
            "tick-graph.dot",
            "trace.json"
        ],
        "exactly the five files, no staging leftovers"
    );

    // The trace opens as Chrome trace JSON with one span per frame and the stages inside.
    let trace: Value = serde_json::from_slice(&fs::read(out.join("trace.json")).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let named = |name: &str| events.iter().filter(|e| e["name"] == name).count();
    // Each frame runs the shard's scheduler, then the director's: a span for each.
    assert_eq!(named("shard"), 120);
    assert_eq!(named("director"), 120);
    assert_eq!(named("frame"), 240);
    assert_eq!(named("PrePhysics"), 240);
    assert_eq!(named("Latent"), 240);
    let frame = events.iter().find(|e| e["name"] == "frame").unwrap();
    assert_eq!(frame["ph"], "X");
    assert!(frame["dur"].as_f64().unwrap() >= 0.0);
    assert_eq!(frame["args"]["frame"], 1);

    // The PNG decodes, and is not blank.
    let decoder = png::Decoder::new(std::io::BufReader::new(
        fs::File::open(out.join("frames.png")).unwrap(),
    ));
    let mut reader = decoder.read_info().expect("a valid PNG header");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("valid PNG data");
    assert_eq!((info.width, info.height), (1000, 620));
    assert!(buf.iter().any(|&b| b != 255), "not a blank image");

    // The SVGs parse as XML, and say what they show.
    for (svg, says) in [
        (
            "frames.svg",
            &["Frame time, each frame", "frame budget: 16.7 ms (60 Hz)"][..],
        ),
        ("catch-up.svg", &["0.45 s hitch", "Once:", "Delay:"][..]),
    ] {
        let text = fs::read_to_string(out.join(svg)).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{svg}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let words: String = doc
            .descendants()
            .filter(|n| n.is_text())
            .filter_map(|n| n.text())
            .collect::<Vec<_>>()
            .join("\n");
        for s in says {
            assert!(words.contains(s), "{svg} does not say {s:?}:\n{words}");
        }
        let shapes = doc
            .descendants()
            .filter(|n| ["rect", "polyline", "polygon", "path"].contains(&n.tag_name().name()))
            .count();
        assert!(shapes > 50, "{svg}: {shapes} shapes");
    }

    // The tick graph: one box per kind, in clusters, with edges between them.
    let dot = fs::read_to_string(out.join("tick-graph.dot")).unwrap();
    assert!(dot.starts_with("digraph tick_kinds {"), "{dot}");
    for kind in ["move ×", "think ×", "physics ×1", "reap ×1"] {
        assert!(dot.contains(kind), "no {kind} in {dot}");
    }
    assert!(dot.matches("subgraph cluster_").count() >= 3, "{dot}");
    assert!(dot.matches(" -> ").count() >= 3, "no edges: {dot}");
    assert!(
        dot.lines().count() < 40,
        "one box per kind, not per function: {dot}"
    );
}

#[test]
fn the_same_seed_gives_the_same_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let a = checksum(&demo(&dir.path().join("a"), &["--seed", "7"]));
    let b = checksum(&demo(&dir.path().join("b"), &["--seed", "7"]));
    let c = checksum(&demo(&dir.path().join("c"), &["--seed", "8"]));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 16, "{a}");
}

#[test]
fn four_shards_give_the_checksum_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let mut cmd = tickflow();
        cmd.args(["demo", "--actors", "400", "--seconds", "20", "--out"])
            .arg(dir.path().join(name))
            .args(extra);
        String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
    };
    let (one, four) = (run("one", &[]), run("four", &["--shards", "4"]));
    assert_eq!(checksum(&one), checksum(&four));
    assert!(four.contains("4 shards on 4 threads"), "{four}");
    let migrations = (four.lines())
        .find_map(|l| l.trim().strip_prefix("migrations"))
        .expect("a migrations line");
    assert!(!migrations.trim().starts_with("0 "), "{migrations}");
    assert!(!one.contains("migrations"), "{one}");
}

#[test]
fn pacing_in_real_time_changes_nothing_in_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let mut args = vec!["--seconds", "0.5"];
        args.extend_from_slice(extra);
        let mut cmd = tickflow();
        cmd.args(["demo", "--actors", "30", "--out"])
            .arg(dir.path().join(name))
            .args(&args);
        let out = cmd.assert().success().get_output().stdout.clone();
        checksum(&String::from_utf8(out).unwrap())
    };
    assert_eq!(run("fast", &[]), run("paced", &["--realtime"]));
}

#[test]
fn a_bare_tickflow_runs_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bare");
    tickflow()
        .args(["--actors", "10", "--seconds", "0.5", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("tickflow demo: 10 actors"));
    assert!(out.join("trace.json").exists());
}

#[test]
fn explain_prints_the_order_and_the_graph() {
    let text = tickflow()
        .arg("explain")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("PrePhysics"), "{text}");
    assert!(text.contains("move 0"), "{text}");
    assert!(text.contains("think 0"), "{text}");
    assert!(text.contains("reap"), "{text}");
    assert!(text.contains("director"), "{text}");
    assert!(
        text.contains("tickables (after the timers): scoreboard"),
        "{text}"
    );
    tickflow()
        .args(["explain", "--dot"])
        .assert()
        .success()
        .stdout(predicates::str::starts_with("digraph ticks {"));
    tickflow()
        .args(["explain", "--actors", "300", "--dot-kinds"])
        .assert()
        .success()
        .stdout(predicates::str::starts_with("digraph tick_kinds {"))
        .stdout(predicates::str::contains("move ×300"));
}

#[test]
#[cfg(feature = "bench")]
fn bench_prints_its_tables() {
    tickflow()
        .args(["bench", "--quick", "--only", "scheduler"])
        .assert()
        .success()
        .stdout(predicates::str::contains("tickflow/unreal ="))
        .stdout(predicates::str::contains("speed-up"));
}

/// The default build leaves the benchmarks' peers out, and says how to get them.
#[test]
#[cfg(not(feature = "bench"))]
fn bench_says_how_to_build_it() {
    tickflow()
        .args(["bench", "--quick"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--features bench"));
}

#[test]
fn tour_prints_every_part() {
    tickflow()
        .arg("tour")
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Latent actions and an async task",
        ))
        .stdout(predicates::str::contains("Real-time service"))
        .stdout(predicates::str::contains(
            "played the same second again: 7 of 7 lines equal, hp 79 and 79, state hash equal",
        ))
        .stdout(predicates::str::contains(
            "at 1.6 s: hp 79 with the poison, 99 without; the door open in both",
        ));
}

/// A bad argument: exit code 2, one line on stderr that names the problem, nothing on stdout.
fn refused(args: &[&str], needle: &str) {
    let out = tickflow().args(args).assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(needle), "`{needle}` not in {err:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    refused(&["demo", "--hz", "0"], "--hz");
    refused(&["demo", "--actors", "-3"], "--actors");
    refused(&["demo", "--actors", "lots"], "--actors");
    refused(&["demo", "--seconds", "nan"], "--seconds");
    refused(&["demo", "--seconds", "-1"], "--seconds");
    refused(&["demo", "--bogus"], "--bogus");
    refused(&["bench", "--only", "everything"], "everything");
    refused(
        &["bench", "--only", "everything"],
        "valid: timers, scheduler, latent",
    );
}

#[test]
fn an_unwritable_out_exits_2_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    fs::write(&file, "keep me").unwrap();
    // Inside a regular file (no directory can be made there, whoever runs the test), and the
    // file itself.
    for out in [file.join("run"), file.clone()] {
        let out = out.to_str().unwrap();
        let args = ["demo", "--actors", "5", "--seconds", "0.1", "--out", out];
        refused(&args, "cannot write to --out");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep me");
    let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the file we made");
}

#[test]
fn the_rollback_test_rolls_back_and_matches_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("unused");
    let mut cmd = tickflow();
    cmd.args([
        "demo",
        "--rollback-test",
        "--actors",
        "60",
        "--seconds",
        "2",
        "--out",
    ])
    .arg(&out);
    let summary = String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap();
    assert!(
        summary.contains("rollbacks           2 (every 60 frames), 120 frames re-simulated"),
        "{summary}"
    );
    assert!(summary.contains("all equal"), "{summary}");
    assert!(!out.exists(), "the rollback test writes no files");
    // The same world as the demo (its boss script runs as a tick function instead of a task):
    // the same events, so the same checksum.
    let demo = demo(&dir.path().join("demo"), &[]);
    assert_eq!(checksum(&summary), checksum(&demo));
}
