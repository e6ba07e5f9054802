//! The store on PostgreSQL: the same behaviour as on SQLite, against a real server. Runs when
//! `TICKFLOW_PG_URL` names one (`.ci/run` starts one); says it was skipped otherwise. Each
//! test keeps its tables in a schema of its own, dropped at the end.

mod common;

use tickflow_store::{Postgres, StoreError};

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
        let name = format!("tf_{test}_{}", std::process::id());
        let s = Schema { url, name };
        s.drop_it();
        s
    }

    fn open(&self) -> Postgres {
        Postgres::connect_in(&self.url, Some(&self.name)).unwrap()
    }

    fn drop_it(&self) {
        let mut c = postgres::Client::connect(&self.url, postgres::NoTls).unwrap();
        c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name))
            .unwrap();
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        self.drop_it();
    }
}

#[test]
fn resumes_on_the_exact_frame() {
    let Some(url) = url("resumes_on_the_exact_frame") else {
        return;
    };
    let s = Schema::new(url, "exact");
    common::resumes_on_the_exact_frame(|| s.open());
}

#[test]
fn a_stale_epoch_is_fenced() {
    let Some(url) = url("a_stale_epoch_is_fenced") else {
        return;
    };
    let s = Schema::new(url, "fence");
    common::a_stale_epoch_is_fenced(|| s.open());
}

#[test]
fn failed_effects_roll_the_commit_back() {
    let Some(url) = url("failed_effects_roll_the_commit_back") else {
        return;
    };
    let s = Schema::new(url, "effects");
    common::failed_effects_roll_the_commit_back(|| s.open());
}

#[test]
fn oversized_rows_are_refused_before_writing() {
    let Some(url) = url("oversized_rows_are_refused_before_writing") else {
        return;
    };
    let s = Schema::new(url, "oversized");
    common::oversized_rows_are_refused_before_writing(|| s.open());
}

#[test]
fn a_resume_in_many_parts_is_whole() {
    let Some(url) = url("a_resume_in_many_parts_is_whole") else {
        return;
    };
    let s = Schema::new(url, "parts");
    common::a_resume_in_many_parts_is_whole(|| s.open());
}

#[test]
fn an_owner_moves_once() {
    let Some(url) = url("an_owner_moves_once") else {
        return;
    };
    let s = Schema::new(url, "handover");
    common::an_owner_moves_once(|| s.open());
}

#[test]
fn an_owner_moves_with_its_rows() {
    let Some(url) = url("an_owner_moves_with_its_rows") else {
        return;
    };
    let s = Schema::new(url, "handover_rows");
    common::an_owner_moves_with_its_rows(|| s.open());
}

#[test]
fn batches_move_many_owners_once() {
    let Some(url) = url("batches_move_many_owners_once") else {
        return;
    };
    let s = Schema::new(url, "handover_batch");
    common::batches_move_many_owners_once(|| s.open());
}

#[test]
fn damaged_rows_and_versions_are_refused() {
    let Some(url) = url("damaged_rows_and_versions_are_refused") else {
        return;
    };
    let s = Schema::new(url, "damage");
    let mut d = tickflow_store::Durable::new(s.open(), "n");
    let (mut sched, _) = d.resume(&mut common::registry()).unwrap();
    common::populate(&mut sched, 5, 3);
    d.end_frame(sched.timers(), |_| Ok(())).unwrap();
    let c = d.store().client();
    c.batch_execute("UPDATE tickflow_timers SET offline = 7 WHERE name = 'build0' OR seq = 2")
        .unwrap();
    let err = d
        .resume(&mut common::registry())
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(err.contains("offline") && err.contains("is 7"), "{err}");
    d.store()
        .client()
        .batch_execute("UPDATE tickflow_timers SET offline = 0")
        .unwrap();
    assert!(d.resume(&mut common::registry()).is_ok());
    d.store()
        .client()
        .batch_execute("UPDATE tickflow_schema SET version = 5")
        .unwrap();
    drop(d);
    assert!(matches!(
        Postgres::connect_in(&s.url, Some(&s.name)),
        Err(StoreError::Version { found: 5, .. })
    ));
    assert!(matches!(
        Postgres::connect_in(&s.url, Some("x; DROP TABLE y")),
        Err(StoreError::Setting(_))
    ));
}

/// A send commits without waiting for the disk, and only it: the setting must not outlive the
/// send's own transaction, nor reach into a caller's transaction through `send_in`.
#[test]
fn a_send_relaxes_only_its_own_commit() {
    use tickflow::OwnerId;
    use tickflow_store::{Handovers, Parcel};
    let Some(url) = url("a_send_relaxes_only_its_own_commit") else {
        return;
    };
    let s = Schema::new(url, "relax");
    let mut db = s.open();
    let parcel = |owner: u64| Parcel {
        owner: OwnerId::new(owner),
        epoch: 0,
        sender: "n1".into(),
        receiver: "n2".into(),
        bytes: vec![1, 2, 3],
    };
    for owner in [1, 2] {
        db.register(OwnerId::new(owner), "n1").unwrap();
    }
    db.send(&parcel(1)).unwrap();
    let show = |c: &mut postgres::Client| -> String {
        c.query_one("SHOW synchronous_commit", &[]).unwrap().get(0)
    };
    assert_eq!(show(db.client()), "on", "the send's setting outlived it");
    let mut tx = db.client().transaction().unwrap();
    Postgres::send_in(&mut tx, &parcel(2)).unwrap();
    let inside: String = tx.query_one("SHOW synchronous_commit", &[]).unwrap().get(0);
    assert_eq!(inside, "on", "send_in changed its caller's commit");
    tx.commit().unwrap();
    assert_eq!(db.inbox("n2", 10).unwrap().len(), 2);
}
