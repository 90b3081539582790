//! What operators watch and read: `status`'s exit code and `/healthz`'s
//! readiness mode for staleness, the JSON log format, and `--version`;
//! and what a replica syncing from a writer's `/export.json` serves.

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{repo_root, World};

const NOW: &str = "2026-11-24T12:00:00.000Z";

fn document() -> String {
    json!({
        "generatedAt": "2026-11-24T09:00:00.000Z",
        "lastSuccessfulCheckAt": "2026-11-24T09:00:00.000Z",
        "records": [],
    })
    .to_string()
}

/// An upstream serving [`document`] with the ETag `"v1"`.
pub(crate) fn upstream() -> Upstream {
    Upstream::start(Behavior::Serve {
        body: document().into_bytes(),
        etag: Some("\"v1\"".into()),
        last_modified: None,
    })
}

fn sync(w: &World, up: &Upstream, now: &str) -> crate::util::Run {
    w.run(&[
        "--now",
        now,
        "sync",
        "--upstream",
        &up.url("/r.json"),
        "--interval-minutes",
        "60",
        "--max-age-minutes",
        "90",
        "--once",
    ])
}

#[test]
fn status_exits_1_and_healthz_ready_fresh_answers_503_while_a_mirror_is_stale() {
    let up = upstream();
    let w = World::new();
    sync(&w, &up, "2026-11-24T11:30:00.000Z").success();

    // Fresh: exit 0, and both health checks are 200.
    let status = w.run(&["--now", NOW, "status", "--json"]).success();
    assert_eq!(status.json()["stale"], false);
    let s = Server::start(&w, &["--now", NOW], &[]);
    assert_eq!(s.get("/healthz").status, 200);
    let fresh = s.get("/healthz?ready=fresh");
    assert_eq!(fresh.status, 200);
    assert_eq!(fresh.json()["status"], "ready");
    assert_eq!(fresh.json()["syncStatus"], "ok");
    drop(s);

    // Past the maximum age without a sync: stale, though nothing failed.
    let later = "2026-11-24T13:01:00.000Z";
    let out = w.run(&["--now", later, "status", "--json"]).code(1);
    assert_eq!(out.json()["stale"], true);
    assert_eq!(out.json()["sync"]["status"], "stale");
    assert!(
        out.stderr.contains(
            "the served data is stale: no sync has succeeded since 2026-11-24T11:30:00.000Z, \
                 more than 90 minutes ago; is the sync timer or daemon running?"
        ),
        "{}",
        out.stderr
    );
    let s = Server::start(&w, &["--now", later], &[]);
    assert_eq!(s.get("/healthz").status, 200, "liveness is unchanged");
    let stale = s.get("/healthz?ready=fresh");
    assert_eq!(stale.status, 503);
    assert_eq!(
        stale.json(),
        json!({
            "ok": false, "status": "stale", "mode": "upstream",
            "sequence": s.get("/healthz").json()["sequence"],
            "generatedAt": "2026-11-24T09:00:00.000Z",
            "ageSeconds": 14460, "syncStatus": "stale",
        })
    );
    drop(s);

    // A failed sync with a cache to serve: stale at once, and still served.
    up.set(Behavior::Status(503));
    sync(&w, &up, "2026-11-24T11:45:00.000Z").code(69);
    let out = w.run(&["--now", NOW, "status"]).code(1);
    assert!(out.stdout.contains("upstream"), "{}", out.stdout);
    assert_eq!(
        out.stderr,
        "resetctl: the served data is stale: the last sync failed (upstream answered HTTP 503 \
         Service Unavailable); the last good one was at 2026-11-24T11:30:00.000Z\n"
    );
    let s = Server::start(&w, &["--now", NOW, "--admin-listen", "127.0.0.1:0"], &[]);
    let failing = s.get("/healthz?ready=fresh");
    assert_eq!(failing.status, 503);
    assert_eq!(failing.json()["syncStatus"], "stale");
    assert_eq!(s.get("/openapi/v1/records").status, 200);
    // The same state in the metrics, read as Prometheus would.
    let m = crate::metrics::parse("text", &s.admin_get("/metrics", &[]).body);
    let gauge = |name: &str, labels: &[(&str, &str)]| crate::metrics::value(&m, name, name, labels);
    for (status, one) in [
        ("ok", 0.0),
        ("stale", 1.0),
        ("error", 0.0),
        ("pending", 0.0),
    ] {
        assert_eq!(
            gauge("resetctl_sync_status", &[("status", status)]),
            Some(one),
            "{status}"
        );
    }
    assert_eq!(gauge("resetctl_sync_consecutive_failures", &[]), Some(1.0));
    // 2026-11-24T11:30:00Z, the last good sync.
    assert_eq!(
        gauge("resetctl_sync_synced_at_timestamp_seconds", &[]),
        Some(1_795_519_800.0)
    );
    assert_eq!(
        gauge("resetctl_sync_fetched_at_timestamp_seconds", &[]),
        Some(1_795_519_800.0)
    );
}

/// `sync --once` of `replica` from the `/export.json` of the admin listener at `writer`.
fn sync_from(replica: &World, writer: std::net::SocketAddr, now: &str) -> crate::util::Run {
    let export = format!("http://{writer}/export.json");
    replica.run(&[
        "--now",
        now,
        "sync",
        "--upstream",
        &export,
        "--interval-minutes",
        "5",
        "--once",
    ])
}

/// Waits until `server` serves a `meta` that `check` accepts; returns the reply.
fn served_when(server: &Server, check: impl Fn(&Value) -> bool) -> crate::util::server::Reply {
    server.wait_for(
        "/openapi/v1/records",
        std::time::Duration::from_secs(10),
        |r| r.status == 200 && check(&r.json()["meta"]),
    )
}

#[test]
fn a_replica_serves_its_writers_meta_byte_for_byte() {
    let up = upstream();
    let writer = World::new();
    sync(&writer, &up, "2026-11-24T11:30:00.000Z").success();
    let w = Server::start(
        &writer,
        &["--now", NOW, "--admin-listen", "127.0.0.1:0"],
        &[],
    );
    let replica = World::new();
    sync_from(&replica, w.admin.unwrap(), NOW).success();
    let r = Server::start(&replica, &["--now", NOW], &[]);

    // The writer's dataSource, its upstream's url and all: the same bytes
    // and so the same entity tag on both.
    let (at_writer, at_replica) = (w.get("/openapi/v1/records"), r.get("/openapi/v1/records"));
    assert_eq!(
        at_writer.json()["meta"]["dataSource"]["url"],
        up.url("/r.json")
    );
    assert_eq!(
        at_writer.json()["meta"]["dataSource"]["syncedAt"],
        "2026-11-24T11:30:00.000Z"
    );
    assert_eq!(at_replica.text(), at_writer.text());
    assert_eq!(at_replica.header("etag"), at_writer.header("etag"));
    assert!(at_writer.header("etag").is_some());
    let status = replica.run(&["--now", NOW, "status", "--json"]).success();
    assert_eq!(
        status.json()["sync"]["origin"]["dataSource"],
        at_writer.json()["meta"]["dataSource"]
    );

    // The writer's upstream fails: the writer says stale, and so, once
    // synced, does the replica, with the writer's error.
    up.set(Behavior::Status(503));
    sync(&writer, &up, "2026-11-24T11:45:00.000Z").code(69);
    let at_writer = served_when(&w, |meta| meta["dataSource"]["status"] == "stale");
    sync_from(&replica, w.admin.unwrap(), NOW).success();
    let at_replica = served_when(&r, |meta| meta["dataSource"]["status"] == "stale");
    assert_eq!(at_replica.text(), at_writer.text());
    assert_eq!(
        at_replica.json()["meta"]["dataSource"]["lastError"],
        "upstream answered HTTP 503 Service Unavailable"
    );

    // The writer cannot be reached: the replica serves the writer's last
    // dataSource, stale, with its own error and next attempt.
    let writers = at_writer.json()["meta"]["dataSource"].clone();
    let admin = w.admin.unwrap();
    drop(w);
    let failed = sync_from(&replica, admin, NOW).code(69);
    let own = replica
        .run(&["--now", NOW, "status", "--json"])
        .code(1)
        .json()["sync"]
        .clone();
    assert!(
        own["lastError"]
            .as_str()
            .unwrap()
            .starts_with("cannot connect to the upstream"),
        "{own}\n{}",
        failed.stderr
    );
    let at_replica = served_when(&r, |meta| {
        meta["dataSource"]["lastError"] != writers["lastError"]
    });
    let mut expected = writers;
    expected["lastError"] = own["lastError"].clone();
    expected["nextAttemptAt"] = own["nextAttemptAt"].clone();
    assert_eq!(at_replica.json()["meta"]["dataSource"], expected);
}

#[test]
fn a_replica_of_a_standalone_writer_serves_no_data_source() {
    let writer = World::new();
    writer.seed_bundled();
    let w = Server::start(
        &writer,
        &["--now", NOW, "--admin-listen", "127.0.0.1:0"],
        &[],
    );
    let export = w.admin_get("/export.json", &[]);
    assert_eq!(export.json()["dataSource"], Value::Null);
    assert!(export
        .json()
        .as_object()
        .unwrap()
        .contains_key("dataSource"));
    let replica = World::new();
    sync_from(&replica, w.admin.unwrap(), NOW).success();
    let r = Server::start(&replica, &["--now", NOW], &[]);
    let (at_writer, at_replica) = (w.get("/openapi/v1/records"), r.get("/openapi/v1/records"));
    assert!(!at_writer.json()["meta"]
        .as_object()
        .unwrap()
        .contains_key("dataSource"));
    assert_eq!(at_replica.text(), at_writer.text());
    assert_eq!(at_replica.header("etag"), at_writer.header("etag"));
    let status = replica.run(&["--now", NOW, "status"]).success();
    assert!(
        status
            .stdout
            .contains("origin:          a standalone instance (no dataSource is served)"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_standalone_instance_is_never_stale_and_healthz_takes_only_ready_fresh() {
    let w = World::new();
    w.seed_bundled();
    // Seeded history is years old: its age alone never makes it stale.
    let status = w.run(&["--now", NOW, "status", "--json"]).success();
    assert_eq!(status.json()["stale"], false);
    let s = Server::start(&w, &["--now", NOW], &[]);
    assert_eq!(s.get("/healthz?ready=fresh").status, 200);
    for bad in [
        "/healthz?ready=stale",
        "/healthz?x=1",
        "/healthz?ready=fresh&ready=fresh",
    ] {
        let reply = s.get(bad);
        assert_eq!(reply.status, 422, "{bad}");
        assert_eq!(reply.json()["error"], "invalid_query", "{bad}");
    }
    // Nothing published: 69, as before.
    let empty = World::new();
    empty.run(&["status"]).code(69);
}

#[test]
fn json_logs_carry_the_access_log_fields_one_object_per_line() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--now", NOW], &[("RESETCTL_LOG_FORMAT", "json")]);
    assert_eq!(s.get("/openapi/v1/records?page=1").status, 200);
    let mut line = String::new();
    crate::util::wait_until(
        std::time::Duration::from_secs(10),
        "an access log line",
        || {
            line = s
                .log_text()
                .lines()
                .find(|l| l.contains("resetctl::access"))
                .unwrap_or_default()
                .to_owned();
            !line.is_empty()
        },
    );
    let lines = s.log_text();
    for line in lines.lines() {
        serde_json::from_str::<Value>(line)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"));
    }
    let access: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(access["target"], "resetctl::access");
    assert_eq!(access["level"], "INFO");
    assert_eq!(access["fields"]["method"], "GET");
    assert_eq!(access["fields"]["path"], "/openapi/v1/records");
    assert_eq!(access["fields"]["status"], 200);
    assert_eq!(access["fields"]["client"], "127.0.0.1");
    assert!(access["fields"]["latency_us"].is_u64(), "{access}");
    assert!(access["timestamp"].is_string(), "{access}");

    // A bad value is a usage error that names the choices.
    let bad = w.run(&["--log-format", "xml", "status"]).code(64);
    assert!(
        bad.stderr.contains("text") && bad.stderr.contains("json"),
        "{}",
        bad.stderr
    );
    let file = w.path("bad.toml");
    std::fs::write(&file, "log-format = \"xml\"\n").unwrap();
    let bad = w
        .run(&["--config", file.to_str().unwrap(), "status"])
        .code(64);
    assert!(
        bad.stderr.contains(&format!(
            "config file {}: log-format = \"xml\" is not text or json",
            file.display()
        )),
        "{}",
        bad.stderr
    );
}

#[test]
fn version_names_the_commit_and_the_features() {
    let w = World::new();
    let out = w.run(&["--version"]).success().stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("resetctl {}", env!("CARGO_PKG_VERSION")));
    let commit = lines[1].strip_prefix("commit: ").expect(&out);
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(repo_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    match head {
        // Built from this checkout: its commit, marked when files differ.
        Some(head) => assert!(
            commit == head || commit == format!("{head}-dirty"),
            "{commit} vs {head}"
        ),
        None => assert_eq!(commit, "unknown"),
    }
    let features = lines[2].strip_prefix("features: ").expect(&out);
    for feature in [
        "quota-redis",
        "stream-sse",
        "webhooks",
        "metrics-prometheus",
    ] {
        assert!(features.split(", ").any(|f| f == feature), "{features}");
    }
    // -V stays one line (scripts parse it).
    let short = w.run(&["-V"]).success().stdout;
    assert_eq!(
        short.trim(),
        format!("resetctl {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Every file of the relative paths under `dir`, sorted.
fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(
                    path.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out.sort();
    out
}

/// The manual's list of a data dir's files (operations.md, "Data dir")
/// names every file a data dir in use holds, so what its backup keeps and
/// leaves out (backup-and-upgrade.md names them from that list) is true.
#[test]
fn every_file_of_a_data_dir_in_use_is_one_the_manual_lists() {
    let manual = std::fs::read_to_string(repo_root().join("docs/manual/operations.md")).unwrap();
    let listed = manual
        .split_once("\n## Data dir\n")
        .and_then(|(_, rest)| rest.split("\n## ").next())
        .expect("operations.md has a Data dir section")
        .to_owned();
    // A standalone instance with a webhook endpoint that was delivered to.
    let standalone = World::new();
    standalone.seed_bundled();
    let r = crate::util::receiver::Receiver::start();
    crate::webhooks::add(&standalone, &r.url("/hook"), &[]);
    crate::webhooks::schedule(&standalone, NOW, "2090000000000000001", "pro");
    crate::webhooks::deliver_at(&standalone, NOW).success();
    // A mirror.
    let mirror = World::new();
    let up = upstream();
    sync(&mirror, &up, NOW).success();
    for w in [&standalone, &mirror] {
        for file in files_under(&w.data_dir()) {
            let name = std::path::Path::new(&file);
            let shown = match name.parent().and_then(|p| p.to_str()) {
                Some("snapshots") if file.ends_with(".json") => {
                    "snapshots/000000000042.json".to_owned()
                }
                Some("webhooks/state") => "webhooks/state/ID.json".to_owned(),
                _ => file.clone(),
            };
            assert!(
                listed.contains(&format!(" {shown} ")),
                "{file} is in a data dir in use, but the manual's Data dir list does not name it"
            );
        }
    }
    let delivered = files_under(&standalone.data_dir().join("webhooks"));
    assert!(
        delivered.iter().any(|f| f == "deliveries.jsonl"),
        "{delivered:?}"
    );
}
