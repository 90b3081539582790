//! `resetctl sync` against a real HTTP upstream on loopback (and nginx):
//! conditional GET, publishing only on change, every fault leaving the
//! last good data served, back-off, overlap, the daemon.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::upstream::{header, Behavior, Upstream};
use crate::util::{bundled_document as document, World};

const T1: &str = "2026-11-20T10:00:00.000Z";
const T2: &str = "2026-11-20T10:05:00.000Z";

fn sync(w: &World, upstream: &str, now: &str, extra: &[&str]) -> crate::util::Run {
    let mut args = vec![
        "--now",
        now,
        "sync",
        "--upstream",
        upstream,
        "--source-id",
        "peer",
        "--source-name",
        "Peer instance",
        "--page-url",
        "https://peer.example/",
        "--once",
    ];
    if !extra.contains(&"--interval-minutes") {
        // A peer instance of our own: the spec's minimum interval (the default is hourly).
        args.extend_from_slice(&["--interval-minutes", "5"]);
    }
    args.extend_from_slice(extra);
    w.run(&args)
}

fn state(w: &World) -> Value {
    serde_json::from_slice(&std::fs::read(w.data_dir().join("sync-state.json")).unwrap()).unwrap()
}

fn versions(w: &World) -> usize {
    w.run(&["snapshots", "list", "--json"])
        .success()
        .json()
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn etag_and_last_modified_revalidate_and_a_304_writes_nothing() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 16), "W/\"v1\"");
    let w = World::new();
    let first = sync(&w, &up.url("/records.json"), T1, &[]).success();
    assert_eq!(
        first.stdout,
        format!(
            "published snapshot 1 (16 records) from {}\n",
            up.url("/records.json")
        )
    );
    let ua = header(&up.last_request(), "user-agent").unwrap().to_owned();
    assert_eq!(
        ua,
        format!("resetctl/{}", env!("CARGO_PKG_VERSION")),
        "no contact unless the operator sets one"
    );
    assert!(header(&up.last_request(), "accept-encoding")
        .unwrap()
        .contains("gzip"));
    let snapshot_bytes = std::fs::read(w.data_dir().join("snapshots/000000000001.json")).unwrap();

    let second = sync(&w, &up.url("/records.json"), T2, &[]).success();
    assert_eq!(
        second.stdout,
        format!(
            "{} not modified (304); sync time updated\n",
            up.url("/records.json")
        )
    );
    let req = up.last_request();
    assert_eq!(header(&req, "if-none-match"), Some("W/\"v1\""));
    assert_eq!(
        header(&req, "if-modified-since"),
        Some("Fri, 20 Nov 2026 10:00:00 GMT")
    );
    assert_eq!(versions(&w), 1, "a 304 publishes nothing");
    assert_eq!(
        std::fs::read(w.data_dir().join("snapshots/000000000001.json")).unwrap(),
        snapshot_bytes
    );
    let st = state(&w);
    assert_eq!(st["syncedAt"], T2);
    assert_eq!(st["fetchedAt"], T1, "a 304 does not move fetchedAt");
    assert_eq!(st["status"], "ok");
}

#[test]
fn a_changed_body_is_published_and_served_without_restart_with_data_source() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 10), "\"a\"");
    let w = World::new();
    sync(&w, &up.url("/r.json"), T1, &[]).success();
    let s = Server::start(&w, &["--no-rate-limit", "--now", T1], &[]);
    let body = s.get("/openapi/v1/records?kind=reset_scheduled").json();
    assert_eq!(
        body["meta"],
        json!({
            "generatedAt": "2026-11-20T09:00:00.000Z",
            "lastSuccessfulCheckAt": "2026-08-13T10:00:00.000Z",
            "dataSource": {
                "type": "upstream", "mode": "upstream", "sourceId": "peer", "name": "Peer instance",
                "url": up.url("/r.json"), "pageUrl": "https://peer.example/",
                "syncedAt": T1, "lastSyncedAt": T1, "fetchedAt": T1,
                "upstreamGeneratedAt": "2026-11-20T09:00:00.000Z",
                "status": "ok", "lastError": null, "nextAttemptAt": null, "intervalMinutes": 5,
                "cached": true, "translationStatus": "ok", "translationError": null
            }
        })
    );
    assert_eq!(s.get("/healthz").json()["syncStatus"], "ok");
    // Records are published as received (ids without seed markers, upstream states).
    assert_eq!(body["data"]["items"][0]["id"], "2087706104814023111");

    up.serve(&document("2026-11-20T09:30:00.000Z", 16), "\"b\"");
    let run = sync(&w, &up.url("/r.json"), T2, &[]).success();
    assert!(
        run.stdout.starts_with("published snapshot 2 (16 records)"),
        "{}",
        run.stdout
    );
    // The snapshot and the sync state are two files, reloaded one after the
    // other: wait until both are served.
    let body = s
        .wait_for("/openapi/v1/records", Duration::from_secs(5), |r| {
            let meta = &r.json()["meta"];
            meta["generatedAt"] == "2026-11-20T09:30:00.000Z"
                && meta["dataSource"]["syncedAt"] == T2
        })
        .json();
    assert_eq!(body["data"]["total"], 13);

    // The same content again (no validators this time): no new snapshot, times move.
    up.set(Behavior::Serve {
        body: document("2026-11-20T09:30:00.000Z", 16).into_bytes(),
        etag: None,
        last_modified: None,
    });
    let run = sync(&w, &up.url("/r.json"), "2026-11-20T10:10:00.000Z", &[]).success();
    assert_eq!(
        run.stdout,
        format!(
            "fetched {}: content unchanged, no new snapshot\n",
            up.url("/r.json")
        )
    );
    assert_eq!(versions(&w), 2);
    assert_eq!(s.get("/healthz").json()["sequence"], 2);
    let meta = s.wait_for("/openapi/v1/records/latest", Duration::from_secs(5), |r| {
        r.json()["meta"]["dataSource"]["fetchedAt"] == "2026-11-20T10:10:00.000Z"
    });
    assert_eq!(meta.json()["meta"]["dataSource"]["status"], "ok");
}

/// One fault: the sync fails with `code` and an error containing `needle`;
/// the last good snapshot stays served, status stale, back-off set.
fn assert_fault(behavior: Behavior, url_path: &str, extra: &[&str], code: i32, needle: &str) {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 16), "\"good\"");
    let w = World::new();
    sync(&w, &up.url("/r.json"), T1, &[]).success();
    let s = Server::start(&w, &["--no-rate-limit", "--now", T2], &[]);
    let served_before = s.get("/openapi/v1/records").json();
    let exported_before = w.run(&["export"]).success().stdout;
    up.set(behavior);
    let (_held, refused) = crate::util::refused_port();
    let url = if url_path == "refused" {
        format!("http://127.0.0.1:{refused}/r.json")
    } else {
        up.url(url_path)
    };
    let run = sync(&w, &url, T2, extra);
    assert_eq!(run.code, code, "{needle}: {}", run.stderr);
    assert!(
        run.stderr.contains(needle),
        "expected {needle:?} in: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("the last good data stays served (status stale"),
        "{}",
        run.stderr
    );
    assert_eq!(versions(&w), 1, "nothing published");
    let st = state(&w);
    assert_eq!(st["status"], "stale");
    assert_eq!(st["consecutiveFailures"], 1);
    // The whole text is the operator's (the state's detail, when the
    // published text says less); the API publishes `lastError`.
    let whole = st["lastErrorDetail"]
        .as_str()
        .or(st["lastError"].as_str())
        .unwrap();
    assert!(whole.contains(needle), "{st}");
    let next = resetctl::model::Timestamp::parse(st["nextAttemptAt"].as_str().unwrap())
        .unwrap()
        .as_millis();
    let t2 = resetctl::model::Timestamp::parse(T2).unwrap().as_millis();
    assert!(
        (t2 + 150_000..=t2 + 300_000).contains(&next),
        "first back-off is the 5 min interval with jitter"
    );
    assert_eq!(st["syncedAt"], T1, "a failure does not move syncedAt");
    // Served: the last good data, with the failure in dataSource.
    let body = s
        .wait_for("/openapi/v1/records", Duration::from_secs(5), |r| {
            r.json()["meta"]["dataSource"]["status"] == "stale"
        })
        .json();
    assert_eq!(body["data"]["total"], 13);
    assert_eq!(
        body["data"], served_before["data"],
        "the same records served"
    );
    assert_eq!(w.run(&["export"]).success().stdout, exported_before);
    // dataSource: only what says how the sync went changed (and the
    // address, to the one this sync was given).
    let mut source = body["meta"]["dataSource"].clone();
    let mut source_before = served_before["meta"]["dataSource"].clone();
    for changed in ["status", "lastError", "nextAttemptAt"] {
        source[changed] = Value::Null;
        source_before[changed] = Value::Null;
    }
    source_before["url"] = json!(url);
    assert_eq!(source, source_before, "the rest of dataSource is unchanged");
    assert_eq!(body["meta"]["dataSource"]["lastError"], st["lastError"]);
    assert_eq!(
        body["meta"]["dataSource"]["nextAttemptAt"],
        st["nextAttemptAt"]
    );
    assert_eq!(body["meta"]["dataSource"]["cached"], true);
    // Back-off: a plain --once before nextAttemptAt exits 75; --force tries.
    let early = sync(&w, &url, T2, extra).code(75);
    assert!(
        early
            .stderr
            .contains("backing off after 1 failed sync; the next attempt is allowed at"),
        "{}",
        early.stderr
    );
    let forced = sync(&w, &url, T2, &[extra, &["--force"]].concat());
    assert_eq!(forced.code, code);
    assert_eq!(state(&w)["consecutiveFailures"], 2);
}

#[test]
fn a_mirror_stays_a_mirror_without_its_sync_state() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 16), "\"good\"");
    let w = World::new();
    sync(&w, &up.url("/r.json"), T1, &[]).success();
    // The state file lost (deleted by hand, a restore without it): the
    // served snapshot still says where its records come from.
    std::fs::remove_file(w.data_dir().join("sync-state.json")).unwrap();
    let exported = w.run(&["export"]).success().stdout;
    let refused = w.run(&[
        "--now",
        T2,
        "record",
        "completion",
        "--operator",
        "--at",
        "2026-11-20 10:00 +00:00",
    ]);
    assert_eq!(refused.code, 64, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("is an upstream mirror"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        w.run(&["export"]).success().stdout,
        exported,
        "nothing published"
    );
}

#[test]
fn http_500_keeps_the_last_good_data() {
    assert_fault(
        Behavior::Status(500),
        "/r.json",
        &[],
        69,
        "upstream answered HTTP 500 Internal Server Error",
    );
}

#[test]
fn http_404_keeps_the_last_good_data() {
    assert_fault(
        Behavior::Status(404),
        "/r.json",
        &[],
        69,
        "upstream answered HTTP 404 Not Found",
    );
}

#[test]
fn connection_refused_keeps_the_last_good_data() {
    assert_fault(
        Behavior::Status(200),
        "refused",
        &[],
        69,
        "cannot connect to the upstream",
    );
}

#[test]
fn a_timeout_keeps_the_last_good_data() {
    assert_fault(
        Behavior::Hang(Duration::from_secs(5)),
        "/r.json",
        &["--timeout", "0.5"],
        69,
        "did not answer in time",
    );
}

#[test]
fn a_truncated_body_keeps_the_last_good_data() {
    let body = document("2026-11-20T09:30:00.000Z", 16);
    let half = body.as_bytes()[..body.len() / 2].to_vec();
    assert_fault(
        Behavior::Truncated {
            body: half,
            declared: body.len(),
        },
        "/r.json",
        &[],
        69,
        "the body could not be read completely",
    );
}

#[test]
fn invalid_json_keeps_the_last_good_data() {
    let behavior = Behavior::Serve {
        body: b"{\"generatedAt\": \"2026-11-20T09:30:00.000Z\", \"records\": [}".to_vec(),
        etag: None,
        last_modified: None,
    };
    assert_fault(
        behavior,
        "/r.json",
        &[],
        65,
        "invalid upstream document: not valid JSON",
    );
}

#[test]
fn a_schema_invalid_document_names_index_id_and_field() {
    let mut doc: Value = serde_json::from_str(&document("2026-11-20T09:30:00.000Z", 16)).unwrap();
    doc["records"][4]["scheduleState"] = json!("later");
    let id = doc["records"][4]["id"].as_str().unwrap().to_owned();
    let behavior = Behavior::Serve {
        body: doc.to_string().into_bytes(),
        etag: None,
        last_modified: None,
    };
    let needle = format!("record 4 (id \"{id}\"): scheduleState: unknown variant `later`");
    assert_fault(behavior, "/r.json", &[], 65, &needle);
}

#[test]
fn a_body_over_the_size_limit_is_refused_while_streaming() {
    assert_fault(
        Behavior::Huge {
            bytes: 64 * 1024 * 1024,
        },
        "/r.json",
        &["--max-body-bytes", "100000"],
        69,
        "the body exceeds the limit of 100000 bytes",
    );
}

#[test]
fn a_redirect_loop_keeps_the_last_good_data() {
    assert_fault(
        Behavior::RedirectLoop,
        "/loop",
        &[],
        69,
        "redirects: more than 5 or a loop",
    );
}

#[test]
fn a_failing_first_sync_is_error_and_503() {
    let up = Upstream::start(Behavior::Status(503));
    let w = World::new();
    let run = sync(&w, &up.url("/r.json"), T1, &[]).code(69);
    assert!(
        run.stderr.contains("(status error, next attempt at"),
        "{}",
        run.stderr
    );
    let st = state(&w);
    assert_eq!(st["status"], "error");
    assert_eq!(
        st["lastError"],
        "upstream answered HTTP 503 Service Unavailable"
    );
    let s = Server::start(&w, &[], &[]);
    let reply = s.get("/openapi/v1/records");
    assert_eq!(reply.status, 503);
    assert_eq!(reply.json()["error"], "data_unavailable");
    let status = w.run(&["--now", T1, "status"]).code(69);
    assert!(
        status
            .stdout
            .contains("sync:      error (no usable cache and the last sync failed)"),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("  last error:      upstream answered HTTP 503 Service Unavailable\n"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_cache_older_than_its_maximum_age_is_stale() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 3), "\"a\"");
    let w = World::new();
    sync(
        &w,
        &up.url("/r.json"),
        T1,
        &["--interval-minutes", "10", "--max-age-minutes", "30"],
    )
    .success();
    let fresh = Server::start(&w, &["--now", "2026-11-20T10:30:00.000Z"], &[]);
    assert_eq!(
        fresh.get("/openapi/v1/records").json()["meta"]["dataSource"]["status"],
        "ok"
    );
    let old = Server::start(&w, &["--now", "2026-11-20T10:30:00.001Z"], &[]);
    assert_eq!(
        old.get("/openapi/v1/records").json()["meta"]["dataSource"]["status"],
        "stale"
    );
    assert_eq!(
        old.get("/openapi/v1/records").json()["meta"]["dataSource"]["intervalMinutes"],
        10
    );
    let json = w
        .run(&["--now", "2026-11-20T10:31:00.000Z", "status", "--json"])
        .code(1)
        .json();
    assert_eq!(json["sync"]["status"], "stale");
    assert_eq!(json["stale"], true);
    assert_eq!(json["sync"]["consecutiveFailures"], 0);
}

#[test]
fn settings_are_checked() {
    let w = World::new();
    let short = w
        .run(&[
            "sync",
            "--upstream",
            "http://127.0.0.1:1/x",
            "--interval-minutes",
            "4",
            "--once",
        ])
        .code(64);
    assert!(
        short
            .stderr
            .contains("--interval-minutes must be at least 5"),
        "{}",
        short.stderr
    );
    let scheme = w
        .run(&["sync", "--upstream", "ftp://example.org/x", "--once"])
        .code(64);
    assert!(
        scheme.stderr.contains("must be an http:// or https:// URL"),
        "{}",
        scheme.stderr
    );
    let none = w.run(&["sync", "--once"]).code(64);
    assert!(
        none.stderr.contains("no upstream: pass --upstream URL"),
        "{}",
        none.stderr
    );
    let mode = w
        .run(&["sync", "--upstream", "http://127.0.0.1:1/x"])
        .code(64);
    assert!(
        mode.stderr.contains("--once") && mode.stderr.contains("--daemon"),
        "{}",
        mode.stderr
    );
    // Settings also come from the config file.
    let config = w.path("c.toml");
    std::fs::write(
        &config,
        "upstream = \"http://127.0.0.1:1/x\"\ninterval-minutes = 3\n",
    )
    .unwrap();
    let from_file = w
        .run(&["--config", config.to_str().unwrap(), "sync", "--once"])
        .code(64);
    assert!(
        from_file
            .stderr
            .contains("--interval-minutes must be at least 5 (the spec's minimum), got 3"),
        "{}",
        from_file.stderr
    );
}

#[test]
fn a_second_sync_waits_for_the_lock_then_exits_75_naming_the_holder() {
    let w = World::new();
    std::fs::create_dir_all(w.data_dir()).unwrap();
    let lock_path = w.data_dir().join("sync.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap();
    file.try_lock().unwrap();
    std::fs::write(&lock_path, "pid 777 (resetctl sync)").unwrap();
    let started = std::time::Instant::now();
    let run = w
        .run(&[
            "--lock-timeout",
            "0.3",
            "sync",
            "--upstream",
            "http://127.0.0.1:1/x",
            "--once",
        ])
        .code(75);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "it waited for the lock"
    );
    assert!(
        run.stderr.contains("another sync is running:")
            && run.stderr.contains("is locked by pid 777 (resetctl sync)"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_daemon_syncs_at_once_and_stops_on_sigterm() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 5), "\"d\"");
    let w = World::new();
    let daemon = w
        .cmd()
        .args(["sync", "--upstream", &up.url("/r.json"), "--daemon"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !w.data_dir().join("sync-state.json").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon did not sync"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    crate::util::wait_until(Duration::from_secs(10), "the sync state turns ok", || {
        state(&w)["status"] == "ok"
    });
    std::process::Command::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status()
        .unwrap();
    let out = daemon.wait_with_output().unwrap();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("published snapshot 1 (5 records)") && log.contains("sync daemon stopped"),
        "{log}"
    );
    assert_eq!(
        up.request_count(),
        1,
        "one sync, then waiting for the interval"
    );
}

#[test]
fn nginx_as_the_upstream_revalidates_with_its_own_etag() {
    let nginx = crate::util::nginx::Nginx::serve_file(
        "records.json",
        document("2026-11-20T09:00:00.000Z", 16).as_bytes(),
    );
    let w = World::new();
    let url = nginx.url("/records.json");
    sync(&w, &url, T1, &[]).success();
    let st = state(&w);
    assert!(
        st["etag"].as_str().is_some_and(|e| e.starts_with('"')),
        "nginx sent an ETag: {st}"
    );
    assert!(st["lastModified"].as_str().is_some());
    let again = sync(&w, &url, T2, &[]).success();
    assert_eq!(
        again.stdout,
        format!("{url} not modified (304); sync time updated\n")
    );
    assert_eq!(versions(&w), 1);
}

#[test]
fn every_standalone_command_refuses_a_mirror_alike() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 16), "\"good\"");
    let w = World::new();
    sync(&w, &up.url("/r.json"), T1, &[]).success();
    let expected = w.run(&["--now", T2, "mark-checked"]);
    assert_eq!(expected.code, 64, "{}", expected.stderr);
    assert!(
        expected.stderr.contains("is an upstream mirror"),
        "{}",
        expected.stderr
    );
    for args in [
        &["record", "list"][..],
        &["record", "list", "--json"],
        &["record", "show", "x"],
        &["record", "log"],
        &["publish"],
    ] {
        let run = w.run(&[&["--now", T2][..], args].concat());
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (64, "", expected.stderr.as_str()),
            "{args:?}"
        );
    }
}

/// Issue 39, item 11: failures and their back-off belong to the upstream
/// they happened at. A first sync that could not reach its upstream says
/// nothing is served (not that the last good data stays), and `status`
/// does not offer `resetctl seed` to a mirror; pointed at a working
/// upstream, the next sync runs at once, and `status` names the upstream
/// configured now.
#[test]
fn a_changed_upstream_starts_afresh_and_messages_fit_the_state() {
    let w = World::new();
    let config = w.path("config.toml");
    let dead = "http://127.0.0.1:1/api/status.json";
    std::fs::write(&config, format!("upstream = {dead:?}\n")).unwrap();
    let conf = config.to_str().unwrap();
    let failed = w
        .run(&["--config", conf, "--now", T1, "sync", "--once"])
        .code(69);
    assert!(
        failed
            .stderr
            .contains("nothing from this upstream is served until a sync succeeds")
            && !failed.stderr.contains("the last good data stays served"),
        "{}",
        failed.stderr
    );
    let status = w.run(&["--config", conf, "--now", T1, "status"]).code(69);
    assert!(
        status.stderr.contains("no sync has succeeded yet")
            && status.stderr.contains("resetctl sync --once")
            && !status.stderr.contains("resetctl seed"),
        "{}",
        status.stderr
    );
    // The operator points the config at an upstream that answers: the
    // back-off of the dead one does not hold it back.
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document(T1, 5), "\"a\"");
    let good = up.url("/r.json");
    std::fs::write(&config, format!("upstream = {good:?}\n")).unwrap();
    let status = w.run(&["--config", conf, "--now", T1, "status"]).code(69);
    assert!(
        status
            .stderr
            .contains(&format!("it is set to mirror {good}")),
        "{}",
        status.stderr
    );
    w.run(&["--config", conf, "--now", T1, "sync", "--once"])
        .success();
    let status = w.run(&["--config", conf, "--now", T1, "status"]).success();
    assert!(
        status
            .stdout
            .contains(&format!("  upstream:        {good} (")),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("  failures:        0 in a row"),
        "{}",
        status.stdout
    );
    // A later failure of this upstream says the last good data stays.
    up.set(Behavior::Status(500));
    let stale = w
        .run(&["--config", conf, "--now", T2, "sync", "--once", "--force"])
        .code(69);
    assert!(
        stale.stderr.contains("the last good data stays served"),
        "{}",
        stale.stderr
    );
}
