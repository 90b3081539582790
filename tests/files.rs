//! Damaged files under a running server and at start-up: a well-formed but
//! schema-invalid snapshot, a corrupt current snapshot when the server
//! starts, a corrupt `sync-state.json`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{wait_until, World};

const NOW: &str = "2026-11-20T10:00:00.000Z";

#[test]
fn a_schema_invalid_snapshot_is_logged_and_never_served() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    let s = Server::start(&w, &[], &[]);
    assert_eq!(s.get("/healthz").json()["sequence"], 1);
    // Version 2: valid JSON, a record breaking a schema rule.
    let dir = w.data_dir().join("snapshots");
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("000000000001.json")).unwrap()).unwrap();
    doc["sequence"] = json!(2);
    doc["records"][3]["confidence"] = json!(7);
    let id = doc["records"][3]["id"].as_str().unwrap().to_owned();
    let path = dir.join("000000000002.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    std::fs::write(dir.join("CURRENT"), b"2\n").unwrap();
    let expected = format!(
        "not serving snapshot 2, keeping the current one: snapshot {} is unusable: record 3 (id {id:?}): confidence",
        path.display()
    );
    wait_until(Duration::from_secs(5), "the refusal in the log", || {
        s.log_text().contains(&expected)
    });
    assert_eq!(s.get("/healthz").json()["sequence"], 1);
    let reply = s.get("/openapi/v1/records?pageSize=10");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["data"]["total"], 13);
}

#[test]
fn a_corrupt_current_snapshot_at_start_up_is_logged_and_the_newest_good_one_served() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    w.run(&["--now", NOW, "publish"]).success();
    let path = w.data_dir().join("snapshots/000000000002.json");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let s = Server::start(&w, &[], &[]);
    wait_until(Duration::from_secs(5), "the refusal in the log", || {
        s.log_text().contains(&format!(
            "the pointer cannot be followed (snapshot {} is unusable",
            path.display()
        ))
    });
    // The server runs on the newest version that loads, and says so.
    let health = s.get("/healthz");
    assert_eq!(health.status, 200);
    let health = health.json();
    assert_eq!(health["sequence"], 1);
    assert!(health["warning"]
        .as_str()
        .unwrap()
        .contains("resetctl snapshots rollback 1"));
    assert_eq!(s.get("/openapi/v1/records").status, 200);
    assert_eq!(s.get("/openapi/v1/docs").status, 200);
    // The next good publish is served without a restart, and the warning goes.
    w.run(&["--now", NOW, "publish"]).success();
    s.wait_for("/healthz", Duration::from_secs(5), |r| {
        r.json()["sequence"] == 3 && r.json().get("warning").is_none()
    });
    assert_eq!(s.get("/openapi/v1/records").json()["data"]["total"], 13);
}

#[test]
fn a_corrupt_sync_state_keeps_the_served_data_source() {
    let mut doc: Value = serde_json::from_slice(resetctl::BUNDLED_SEED_HISTORY).unwrap();
    doc["generatedAt"] = json!("2026-11-20T09:00:00.000Z");
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&doc.to_string(), "\"a\"");
    let w = World::new();
    w.run(&[
        "--now",
        NOW,
        "sync",
        "--upstream",
        &up.url("/r.json"),
        "--once",
    ])
    .success();
    let s = Server::start(&w, &["--no-rate-limit", "--now", NOW], &[]);
    let before = s.get("/openapi/v1/records/latest").json()["meta"].clone();
    assert_eq!(before["dataSource"]["status"], "ok");
    assert_eq!(before["dataSource"]["syncedAt"], NOW);
    let path = w.data_dir().join("sync-state.json");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    wait_until(Duration::from_secs(10), "the warning in the log", || {
        s.log_text().contains("keeping the served sync state")
    });
    let after = s.get("/openapi/v1/records/latest");
    assert_eq!(after.status, 200);
    assert_eq!(after.json()["meta"], before);
    // The operator is told which file is broken, and a sync refuses to run
    // on it rather than guess (the snapshot stays as it was).
    let named = format!("{} is corrupt", path.display());
    // The carried state says stale: status exits 1 (served, but stale).
    let status = w.run(&["status"]).code(1);
    assert!(status.stderr.contains(&named), "{}", status.stderr);
    let sync = w.run(&[
        "--now",
        NOW,
        "sync",
        "--upstream",
        &up.url("/r.json"),
        "--once",
    ]);
    assert_ne!(sync.code, 0);
    assert!(sync.stderr.contains(&named), "{}", sync.stderr);
    assert_eq!(
        w.run(&["status", "--json"]).code(1).json()["snapshot"]["sequence"],
        1
    );
}
