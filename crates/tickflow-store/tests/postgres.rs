//! The store on PostgreSQL: every shared behaviour (`common`) against a real server, and what
//! only a server can do: lose the connection, answer with errors of its own, stand among
//! several hosts. Runs when `TICKFLOW_PG_URL` names a server (`.ci/run` starts one); says it
//! was skipped otherwise. Each test keeps its tables in a schema of its own, dropped at the end.
#![cfg(feature = "postgres")]

use crate::common;

use tickflow::prelude::*;
use tickflow_store::{Durable, Postgres, StoreError};

/// The server's URL, or `None` (and a note on stderr) when the tests are skipped.
fn url(test: &str) -> Option<String> {
    match std::env::var("TICKFLOW_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            // Straight to the stream: the test harness captures `eprintln!` of passing tests.
            let note =
                format!("{test}: skipped (set TICKFLOW_PG_URL to run the PostgreSQL tests)\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes());
            None
        }
    }
}

/// A fresh schema for one test, dropped when the guard goes.
struct Schema {
    url: String,
    name: String,
}

impl Schema {
    fn new(url: String, test: &str) -> Schema {
        let short: String = test
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(40)
            .collect();
        let name = format!("tf_{short}_{}", std::process::id());
        let s = Schema { url, name };
        s.drop_it();
        s
    }

    fn open(&self) -> Postgres {
        Postgres::create_in(&self.url, &self.name).unwrap()
    }

    fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    fn drop_it(&self) {
        (self.admin())
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name))
            .unwrap();
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        self.drop_it();
    }
}

/// The shared tests' store: a schema per test.
fn fresh(test: &str) -> Option<(std::rc::Rc<Schema>, impl Fn() -> Postgres)> {
    let s = std::rc::Rc::new(Schema::new(url(test)?, test));
    let t = s.clone();
    Some((s, move || t.open()))
}

all_store_tests!(fresh);

#[test]
fn damaged_rows_and_versions_are_refused() {
    let Some((s, open)) = fresh("damaged_rows_and_versions_are_refused") else {
        return;
    };
    let (mut d, mut sched) = common::resume(&open, "n");
    common::populate(&mut sched, 5, 3);
    d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    drop((d, sched));
    let sql = |q: &str| {
        let mut c = s.admin();
        c.batch_execute(&format!("SET search_path TO {}; {q}", s.name))
            .unwrap();
    };
    let resume = || {
        let mut d = common::node(&open, "n");
        d.resume(&mut common::registry())
            .map(drop)
            .map_err(|e| e.to_string())
    };
    sql("UPDATE tickflow_timers SET calls = calls + 1 WHERE name = 'build0' OR seq = 2");
    let err = resume().unwrap_err();
    assert!(
        err.contains("column sum") && err.contains("tickflow_timers"),
        "{err}"
    );
    sql("UPDATE tickflow_timers SET calls = calls - 1 WHERE name = 'build0' OR seq = 2");
    resume().unwrap();
    sql("DELETE FROM tickflow_nodes");
    assert!(resume().unwrap_err().contains("tickflow_nodes is gone"));
    sql("UPDATE tickflow_schema SET version = 5");
    assert!(matches!(
        Postgres::connect_in(&s.url, &s.name),
        Err(StoreError::Version { found: 5, .. })
    ));
    assert!(matches!(
        Postgres::connect_in(&s.url, "x; DROP TABLE y"),
        Err(StoreError::Setting(_))
    ));
    let err = Postgres::connect_in(&s.url, "tf_no_such_schema")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not a store"),
        "a schema without the tables: {err}"
    );
}

/// A store of schema 2 (before the nodes' offline shift) or 3 (before images) is upgraded as it
/// is opened: its nodes resume as they were and commit on, with images too.
#[test]
fn older_stores_are_upgraded_in_place() {
    let Some((s, open)) = fresh("older_stores_are_upgraded_in_place") else {
        return;
    };
    let (mut d, mut sched) = common::resume(&open, "n");
    common::set(&mut sched, 3, "a", 60);
    d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    let want = sched.timers().durable_timers();
    drop((d, sched));
    for old in common::OLDER_SCHEMAS {
        (s.admin())
            .batch_execute(&format!("SET search_path TO {}; {old}", s.name))
            .unwrap();
        Postgres::connect_in(&s.url, &s.name).unwrap();
        let version: i64 = (s.admin())
            .query_one(
                &format!("SELECT version FROM {}.tickflow_schema", s.name),
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(version, tickflow_store::SCHEMA_VERSION);
        let (mut d, mut sched) = common::resume(&open, "n");
        assert_eq!(sched.timers().durable_timers(), want);
        d.commit_image(&mut sched, b"state", |_, _| Ok(())).unwrap();
        drop((d, sched));
        let mut d = common::node(&open, "n");
        let (_, resumed) = d.resume(&mut common::registry()).unwrap();
        assert_eq!(resumed.state.as_deref(), Some(&b"state"[..]));
    }
}

/// A connection that the server ends is made again by the next operation, the queued changes
/// are kept, and the server's own message and SQLSTATE reach the error text.
#[test]
fn a_lost_connection_is_made_again() {
    let Some((s, _)) = fresh("a_lost_connection_is_made_again") else {
        return;
    };
    // Its own application name, so that the kill below ends this test's connections only.
    let sep = if s.url.contains('?') { '&' } else { '?' };
    let url = format!("{}{sep}application_name={}", s.url, s.name);
    let open = || Postgres::create_in(&url, &s.name).unwrap();
    let (mut d, mut sched) = common::resume(&open, "n");
    let mut log = common::Log::new();
    common::set(&mut sched, 1, "a", 300);
    sched.tick(common::DT, &mut log);
    d.end_frame(&mut sched, |_, _| Ok(())).unwrap();
    let kill = |s: &Schema| {
        let n = (s.admin())
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE pid <> pg_backend_pid() AND application_name = $1",
                &[&s.name],
            )
            .unwrap();
        assert!(n >= 1);
    };
    kill(&s);
    common::set(&mut sched, 1, "b", 300);
    sched.tick(common::DT, &mut log);
    // The first commit after the kill may meet the dead connection (nothing written), the
    // next makes a new one; none of the changes is lost.
    let mut tries = 0;
    while d.end_frame(&mut sched, |_, _| Ok(())).is_err() {
        tries += 1;
        assert!(tries < 50, "never reconnected");
        std::thread::sleep(std::time::Duration::from_millis(20));
        sched.tick(common::DT, &mut log);
    }
    let names: Vec<String> = (tickflow_store::Inspect::saved(&mut open(), "n")
        .unwrap()
        .timers)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        names.contains(&"a".into()) && names.contains(&"b".into()),
        "{names:?}"
    );

    // The server's words in the error.
    let err = d
        .end_frame(&mut sched, |tx, _| {
            tx.batch_execute("SELECT * FROM no_such_table")?;
            Ok(())
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no_such_table") && err.contains("SQLSTATE 42P01"),
        "{err}"
    );
}

/// Several hosts with `target_session_attrs=read-write`: the store finds the one that takes
/// writes (a host that is down is passed over).
#[test]
fn several_hosts_find_the_one_that_writes() {
    let Some((s, _open)) = fresh("several_hosts_find_the_one_that_writes") else {
        return;
    };
    let cfg: postgres::Config = s.url.parse().unwrap();
    let (host, port) = match (&cfg.get_hosts()[0], cfg.get_ports().first()) {
        (postgres::config::Host::Tcp(h), p) => (h.clone(), p.copied().unwrap_or(5432)),
        _ => return,
    };
    let (user, db) = (
        cfg.get_user().unwrap_or("postgres"),
        cfg.get_dbname().unwrap_or("postgres"),
    );
    let pw = cfg
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .unwrap_or_default();
    // 127.0.0.1:1 refuses connections: the client goes on to the next host.
    let url = format!(
        "postgres://{user}:{pw}@127.0.0.1:1,{host}:{port}/{db}?target_session_attrs=read-write"
    );
    let mut d = Durable::new(Postgres::create_in(&url, &s.name).unwrap(), "multi");
    let (mut sched, _) = d.resume(&mut common::registry()).unwrap();
    sched.tick(common::DT, &mut common::Log::new());
    assert_eq!(
        d.end_frame(&mut sched, |_, _| Ok(()))
            .unwrap()
            .unwrap()
            .number(),
        1
    );
    let _ = OwnerId::new(1);
}

/// A node that comes back while another adopts from it: its commit holds its own row, and the
/// adopter's commit, run meanwhile (here: from inside the node's commit), waits for that row
/// only briefly (50 ms) — it leaves those owners with their node and lands. Waiting would be a deadlock
/// between two commits (the adopter waiting for the node's row, the node for the adopter's
/// rows), which the server breaks only after its `deadlock_timeout`, and which turned every
/// frame of a large fleet into a second's wait.
#[test]
fn an_adopter_does_not_wait_for_a_node_that_came_back() {
    let Some((_s, open)) = fresh("an_adopter_does_not_wait_for_a_node_that_came_back") else {
        return;
    };
    let (mut a, mut sa) = common::resume(&open, "a");
    let mut b = common::node(&open, "b");
    b.set_lease(std::time::Duration::from_secs(30));
    b.set_takeover(tickflow_store::Rendezvous);
    let (mut sb, _) = b.resume(&mut common::registry()).unwrap();
    for o in 1..=10 {
        common::set(&mut sa, o, "due", 100);
    }
    let mut log = common::Log::new();
    sa.tick(common::DT, &mut log);
    a.end_frame(&mut sa, |_, _| Ok(())).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(60)); // past a's lease: a paused
    let adopted = b.adopt(&mut sb, &mut common::registry(), 100).unwrap();
    assert_eq!(adopted.len(), 10);
    // a wakes and commits; b commits while a's transaction is open.
    sa.tick(common::DT, &mut log);
    let (tx, rx) = std::sync::mpsc::channel();
    let mut b_done = None;
    std::thread::scope(|scope| {
        let mut b_side = Some((&mut b, &mut sb, tx));
        a.end_frame(&mut sa, |_, _| {
            if let Some((b, sb, tx)) = b_side.take() {
                scope.spawn(move || {
                    let mut log = common::Log::new();
                    sb.tick(common::DT, &mut log);
                    let _ = tx.send(
                        b.end_frame(sb, |_, _| Ok(()))
                            .map(|c| c.map(|c| c.dropped().len())),
                    );
                });
                b_done = Some(rx.recv_timeout(std::time::Duration::from_secs(5)));
            }
            Ok(())
        })
        .unwrap();
    });
    let b_done = b_done.expect("the hook ran");
    let dropped = b_done
        .expect("the adopter's commit waited for the returning node's row")
        .unwrap();
    assert_eq!(dropped, Some(10), "the owners stay with a");
    for o in 1..=10 {
        let holder = tickflow_store::Handovers::holder(&mut open(), OwnerId::new(o)).unwrap();
        let holder = holder.unwrap();
        assert_eq!(holder.node, "a", "owner {o}");
    }
}
