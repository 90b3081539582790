//! Sync never publishes, prints or keeps what it must not: secrets in the
//! upstream URL, a body that cannot be published, a 304 that revalidates
//! nothing, a timestamp that cannot be read back, a snapshot without its
//! sync outcome, leftover temp files, or a standalone instance's records.

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::upstream::{header, Behavior, Upstream};
use crate::util::{bundled_document as document, World};

const T1: &str = "2026-11-20T10:00:00.000Z";

/// A public-feed document (V1e shape) with these events and manual completions.
fn feed(events: Value, manual: Value) -> String {
    json!({
        "schemaVersion": 1,
        "generatedAt": "2026-11-20T09:00:00.000Z",
        "lastSuccessfulCheckAt": "2026-11-20T08:59:00.000Z",
        "monitor": {"status": "ok", "errorCode": null},
        "events": events,
        "resetTimeline": {"manualCompletions": manual}
    })
    .to_string()
}

fn schedule_event(post_id: &str, effective_at: &str, precision: &str) -> Value {
    json!({
        "kind": "reset_scheduled",
        "announcedAt": "2026-11-19T10:00:00.000Z",
        "effectiveAt": effective_at,
        "scope": {"plans": ["all"], "windows": ["weekly"]},
        "source": {"handle": "h", "postId": post_id, "url": format!("https://x.com/h/status/{post_id}")},
        "confidence": 0.9,
        "rationale": "",
        "text": "a reset is coming",
        "schedulePrecision": precision,
        "scheduleBasis": "explicit"
    })
}

fn sync_at(w: &World, url: &str, now: &str, extra: &[&str]) -> crate::util::Run {
    let mut args = vec!["--now", now, "sync", "--upstream", url, "--once"];
    args.extend_from_slice(extra);
    w.run(&args)
}

fn state(w: &World) -> Value {
    serde_json::from_slice(&std::fs::read(w.data_dir().join("sync-state.json")).unwrap()).unwrap()
}

/// Every file under `dir`, as text.
fn all_files_text(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&all_files_text(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    for secret in ["s3cret", "abc123", "hunter2"] {
        assert!(!text.contains(secret), "{what} reveals {secret:?}:\n{text}");
    }
}

#[test]
fn upstream_credentials_are_never_published_printed_or_stored() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 3), "\"v1\"");
    let secret_url = format!("http://user:s3cret@{}/feed?token=abc123", up.addr);
    let w = World::new();
    let run = sync_at(&w, &secret_url, T1, &[]).success();
    assert_no_secret("sync's output", &format!("{}{}", run.stdout, run.stderr));
    let public = format!("http://{}/feed", up.addr);
    let s = Server::start(&w, &["--now", T1], &[]);
    let meta = s.get("/openapi/v1/records/latest").json()["meta"].clone();
    assert_no_secret("the API", &meta.to_string());
    assert_eq!(meta["dataSource"]["url"], json!(public));
    // A secret header reaches the upstream, and only there.
    up.serve(&document("2026-11-20T09:10:00.000Z", 3), "\"v1b\"");
    let run = sync_at(
        &w,
        &secret_url,
        T1,
        &["--upstream-header", "X-Feed-Token: tok-hunter2"],
    )
    .success();
    assert_no_secret("sync's output", &format!("{}{}", run.stdout, run.stderr));
    assert_eq!(
        header(&up.last_request(), "x-feed-token"),
        Some("tok-hunter2")
    );
    // A failing sync: neither lastError, nor the message, nor the state file.
    up.set(Behavior::Status(500));
    let failed = sync_at(&w, &secret_url, T1, &["--force"]).code(69);
    assert_no_secret("a failed sync's message", &failed.stderr);
    let refused_url = "http://user:s3cret@127.0.0.1:1/feed?token=abc123";
    let refused = sync_at(&w, refused_url, T1, &["--force"]).code(69);
    assert_no_secret("a refused connection's message", &refused.stderr);
    assert!(
        refused.stderr.contains("cannot connect to the upstream"),
        "{}",
        refused.stderr
    );
    assert_no_secret("the data dir", &all_files_text(&w.data_dir()));
    let check = w
        .run(&["sync", "--upstream", &secret_url, "--check"])
        .success();
    assert_no_secret("sync --check", &check.stdout);
    // Stale by then (the last sync failed): exit 1, the report printed all the same.
    assert_no_secret("status", &w.run(&["--now", T1, "status"]).code(1).stdout);
    // An operator-chosen public URL is what the API shows.
    up.serve(&document("2026-11-20T09:30:00.000Z", 3), "\"v2\"");
    sync_at(
        &w,
        &secret_url,
        T1,
        &[
            "--force",
            "--public-url",
            "https://mirror.example/feed.json",
        ],
    )
    .success();
    assert_eq!(
        s.wait_for(
            "/openapi/v1/records/latest",
            std::time::Duration::from_secs(10),
            |r| { r.json()["meta"]["dataSource"]["url"] == "https://mirror.example/feed.json" }
        )
        .status,
        200
    );
}

#[test]
fn a_redis_password_is_never_printed_or_logged() {
    let w = World::new();
    w.run(&["--now", T1, "seed"]).success();
    let store = "redis://:hunter2@127.0.0.1:1/0";
    let status = w
        .run(&["--now", T1, "status", "--rate-limit-store", store])
        .success();
    assert!(
        status.stdout.contains("in Redis at redis://127.0.0.1:1/0"),
        "{}",
        status.stdout
    );
    assert_no_secret("status", &status.stdout);
    let s = Server::start(&w, &["--rate-limit-store", store], &[]);
    assert_eq!(s.get("/openapi/v1/records").status, 503);
    let log = s.log_text();
    assert!(log.contains("redis://127.0.0.1:1/0"), "{log}");
    assert_no_secret("the server log", &log);
}

#[test]
fn a_feed_listing_a_manual_completion_twice_keeps_the_first_and_reports_the_second() {
    let manual = json!({
        "id": "manual:2026-11-20",
        "completedAt": "2026-11-20T08:00:00.000Z",
        "visibleUntil": "2026-11-27T08:00:00.000Z",
        "representativePostId": "2090000000000000001",
        "schedulePostIds": ["2090000000000000001"],
        "schedules": [],
        "fulfillmentOrigin": "manual"
    });
    let body = feed(
        json!([schedule_event(
            "2090000000000000001",
            "2026-11-20T07:00:00.000Z",
            "datetime"
        )]),
        json!([manual.clone(), manual]),
    );
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&body, "\"f1\"");
    let w = World::new();
    let run = sync_at(&w, &up.url("/status.json"), T1, &[]).success();
    assert!(
        run.stdout.contains("published snapshot 1 (2 records)"),
        "{}",
        run.stdout
    );
    let st = state(&w);
    assert_eq!(st["status"], "ok");
    assert_eq!(
        st["skipped"],
        json!(["resetTimeline.manualCompletions[1] (post manual:2026-11-20): duplicate id \"manual:2026-11-20\": an earlier item has the same id; this later copy is dropped"])
    );
}

#[test]
fn a_kept_feed_that_no_longer_decodes_fails_the_sync_after_a_304() {
    let body = feed(
        json!([schedule_event(
            "2090000000000000001",
            "2026-11-20T07:00:00.000Z",
            "datetime"
        )]),
        json!([]),
    );
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&body, "\"f1\"");
    let w = World::new();
    sync_at(&w, &up.url("/status.json"), T1, &[]).success();
    std::fs::write(w.data_dir().join("upstream-feed.json"), b"{ not json").unwrap();
    let run = sync_at(&w, &up.url("/status.json"), T1, &[]).code(65);
    assert!(
        run.stderr.contains(
            "the upstream answered 304, but the kept feed (upstream-feed.json) cannot be used"
        ),
        "{}",
        run.stderr
    );
    let st = state(&w);
    assert_eq!(st["status"], "stale");
    assert!(st["lastError"].as_str().unwrap().contains("kept feed"));
    assert!(st["nextAttemptAt"].is_string(), "backing off: {st}");
    // The validators went with the kept feed: the next attempt is a plain GET.
    assert_eq!(st["etag"], Value::Null, "{st}");
    sync_at(&w, &up.url("/status.json"), T1, &["--force"]).success();
    assert_eq!(header(&up.last_request(), "if-none-match"), None);
    assert_eq!(state(&w)["status"], "ok");
}

#[test]
fn a_304_to_a_request_without_validators_is_a_failure() {
    let up = Upstream::start(Behavior::AlwaysNotModified);
    let w = World::new();
    let run = sync_at(&w, &up.url("/feed"), T1, &[]).code(65);
    assert!(
        run.stderr
            .contains("304 Not Modified to a request without validators"),
        "{}",
        run.stderr
    );
    assert_eq!(state(&w)["status"], "error");
    assert_eq!(
        w.run(&["--now", T1, "status"]).code,
        69,
        "nothing is published"
    );
}

#[test]
fn a_304_from_another_upstream_does_not_relabel_the_cache() {
    let a = Upstream::start(Behavior::Status(500));
    a.serve(&document("2026-11-20T09:00:00.000Z", 3), "\"a1\"");
    let b = Upstream::start(Behavior::AlwaysNotModified);
    let w = World::new();
    sync_at(&w, &a.url("/feed"), T1, &["--source-id", "a"]).success();
    let run = sync_at(&w, &b.url("/feed"), T1, &["--source-id", "b"]).code(65);
    assert!(run.stderr.contains("without validators"), "{}", run.stderr);
    assert_eq!(
        header(&b.last_request(), "if-none-match"),
        None,
        "A's validator is never sent to B"
    );
    let snapshots = w.run(&["snapshots", "list", "--json"]).success().json();
    assert_eq!(
        snapshots.as_array().unwrap().len(),
        1,
        "nothing republished"
    );
}

#[test]
fn a_date_schedule_on_9999_12_31_is_skipped_and_the_instance_stays_healthy() {
    let body = feed(
        json!([
            schedule_event("2090000000000000001", "9999-12-31T12:00:00.000Z", "date"),
            schedule_event(
                "2090000000000000002",
                "2026-11-20T07:00:00.000Z",
                "datetime"
            ),
        ]),
        json!([]),
    );
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&body, "\"f1\"");
    let w = World::new();
    sync_at(&w, &up.url("/status.json"), T1, &[]).success();
    let st = state(&w);
    assert_eq!(st["status"], "ok");
    let skipped = st["skipped"].to_string();
    assert!(
        skipped.contains("2090000000000000001") && skipped.contains("scheduleWindow.endAt"),
        "{skipped}"
    );
    // Everything that reads the snapshot still can.
    w.run(&["--now", T1, "status"]).success();
    w.run(&["export"]).success();
    let s = Server::start(&w, &["--now", T1], &[]);
    let list = s.get("/openapi/v1/records").json();
    assert_eq!(list["data"]["total"], 1);
    // A fixed upstream syncs as usual.
    up.serve(&document("2026-11-20T09:30:00.000Z", 2), "\"r2\"");
    sync_at(&w, &up.url("/status.json"), T1, &[]).success();
}

#[test]
fn a_sync_killed_between_publishing_and_saving_its_state_still_serves_its_data_source() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 3), "\"v1\"");
    let w = World::new();
    let mut killed_between = 0;
    for round in 0..3 {
        // The test hook holds the sync right after the pointer moved and
        // before the state is saved (tracing that it got there); the kill
        // lands exactly there.
        let trace = w.path(&format!("trace-{round}"));
        let mut child = w
            .cmd()
            .env("RESETCTL_TEST_PAUSE_AT", "sync:published")
            .env("RESETCTL_TEST_TRACE", &trace)
            .args([
                "--now",
                T1,
                "sync",
                "--upstream",
                &up.url("/feed"),
                "--once",
                "--force",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !std::fs::read_to_string(&trace).is_ok_and(|t| t.contains("sync:published")) {
            assert!(
                std::time::Instant::now() < deadline,
                "the sync never reached the pause"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        killed_between += 1;
        if round == 0 {
            assert!(
                !w.data_dir().join("sync-state.json").exists(),
                "the kill landed before the state was saved"
            );
        }
        // What is served describes the snapshot that is served.
        let status = w.run(&["--now", T1, "status", "--json"]).success().json();
        assert_eq!(status["sync"]["status"], "ok", "{status}");
        assert_eq!(
            status["sync"]["upstreamGeneratedAt"],
            status["snapshot"]["generatedAt"]
        );
        let s = Server::start(&w, &["--now", T1], &[]);
        let meta = s.get("/openapi/v1/records/latest").json()["meta"].clone();
        assert_eq!(meta["dataSource"]["status"], "ok", "{meta}");
        assert_eq!(
            meta["dataSource"]["upstreamGeneratedAt"],
            meta["generatedAt"]
        );
        let health = s.get("/healthz").json();
        assert_eq!(health["syncStatus"], "ok", "{health}");
        // The next upstream version, for the next round.
        up.serve(
            &document(&format!("2026-11-20T09:{:02}:00.000Z", 10 + round), 3),
            &format!("\"v{}\"", round + 2),
        );
    }
    assert_eq!(killed_between, 3);
}

#[test]
fn temp_files_of_killed_writers_are_removed_under_the_lock() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 3), "\"v1\"");
    let w = World::new();
    sync_at(&w, &up.url("/feed"), T1, &[]).success();
    let leftovers = [
        w.data_dir().join(".tmp-sync-state.json-4242"),
        w.data_dir().join(".tmp-upstream-feed.json-4243"),
        w.data_dir().join(".tmp-history.json-4244"),
        w.data_dir().join("snapshots/.tmp-000000000002.json-4245"),
    ];
    for path in &leftovers {
        std::fs::write(path, b"half").unwrap();
    }
    sync_at(&w, &up.url("/feed"), T1, &[]).success();
    for path in &leftovers {
        assert!(!path.exists(), "{} was left behind", path.display());
    }
}

#[test]
fn a_data_dir_belongs_to_one_mode() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 6), "\"v1\"");
    let mirror = World::new();
    sync_at(&mirror, &up.url("/feed"), T1, &[]).success();
    for args in [
        vec![
            "--now",
            T1,
            "record",
            "schedule",
            "--operator",
            "--at",
            "2026-11-21T10:00:00Z",
        ],
        vec!["--now", T1, "seed"],
        vec!["--now", T1, "publish"],
    ] {
        let run = mirror.run(&args).code(64);
        assert!(
            run.stderr
                .contains("is an upstream mirror (filled by resetctl sync)")
                && run.stderr.contains("separate data dir"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let status = mirror
        .run(&["--now", T1, "status", "--json"])
        .success()
        .json();
    assert_eq!(status["mode"], "upstream");
    assert_eq!(status["snapshot"]["records"], 6);
    let standalone = World::new();
    standalone.run(&["--now", T1, "seed"]).success();
    let run = sync_at(&standalone, &up.url("/feed"), T1, &[]).code(64);
    assert!(
        run.stderr.contains("holds a standalone instance"),
        "{}",
        run.stderr
    );
    assert!(!standalone.data_dir().join("sync-state.json").exists());
}

#[test]
fn no_response_lacks_the_data_source_across_many_syncs() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 3), "\"v0\"");
    let w = World::new();
    sync_at(&w, &up.url("/feed"), T1, &[]).success();
    let s = Server::start(&w, &["--now", T1, "--no-rate-limit", "--log", "warn"], &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let addr = s.addr;
    let poller = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut seen, mut lacking) = (0usize, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let reply = crate::util::server::raw_request(
                    addr,
                    "GET",
                    "/openapi/v1/records/latest",
                    &[],
                );
                let meta = reply.json()["meta"].clone();
                seen += 1;
                if meta.get("dataSource").is_none() {
                    lacking.push(meta);
                }
            }
            (seen, lacking)
        })
    };
    for n in 1..=150 {
        let minute = n % 60;
        let hour = 9 + n / 60;
        up.serve(
            &document(&format!("2026-11-20T{hour:02}:{minute:02}:00.000Z"), 3),
            &format!("\"v{n}\""),
        );
        sync_at(&w, &up.url("/feed"), T1, &[]).success();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (seen, lacking) = poller.join().unwrap();
    assert!(seen > 150, "the poller ran throughout ({seen} responses)");
    assert!(
        lacking.is_empty(),
        "{} of {seen} responses lacked meta.dataSource: {:?}",
        lacking.len(),
        lacking.first()
    );
}

#[test]
fn oversized_validators_are_not_kept_and_a_4xx_to_a_conditional_request_drops_them() {
    let up = Upstream::start(Behavior::Status(500));
    let huge = format!("\"{}\"", "e".repeat(200_000));
    up.serve(&document("2026-11-20T09:00:00.000Z", 3), &huge);
    let w = World::new();
    sync_at(&w, &up.url("/feed"), T1, &[]).success();
    assert_eq!(state(&w)["etag"], Value::Null, "a 200 KB ETag is not kept");
    sync_at(&w, &up.url("/feed"), T1, &[]).success();
    assert_eq!(header(&up.last_request(), "if-none-match"), None);
    // An upstream that refuses any conditional request: one failure, then plain requests again.
    up.set(Behavior::RefuseConditional {
        body: document("2026-11-20T09:30:00.000Z", 3).into_bytes(),
        etag: "\"small\"".into(),
    });
    sync_at(&w, &up.url("/feed"), T1, &[]).success();
    assert_eq!(state(&w)["etag"], "\"small\"");
    let failed = sync_at(&w, &up.url("/feed"), T1, &[]).code(69);
    assert!(failed.stderr.contains("431"), "{}", failed.stderr);
    assert_eq!(
        state(&w)["etag"],
        Value::Null,
        "the validators were dropped"
    );
    sync_at(&w, &up.url("/feed"), T1, &["--force"]).success();
    assert_eq!(header(&up.last_request(), "if-none-match"), None);
    assert_eq!(state(&w)["status"], "ok");
}

#[test]
fn a_sync_whose_commit_fails_keeps_the_old_validators_so_the_update_is_not_lost() {
    let disk = crate::util::disk::SmallDisk::mount(1024);
    let w = crate::util::disk::world_on(&disk);
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&document("2026-11-20T09:00:00.000Z", 3), "\"v1\"");
    sync_at(&w, &up.url("/feed"), T1, &[]).success();
    // v2 arrives while the disk is nearly full: room for the small sync
    // state (four pages), none for the snapshot of 300 records (about 40).
    let v2 = crate::util::generated_document(300).replace(
        "\"generatedAt\":\"2026-11-20T10:00:00.000Z\"",
        "\"generatedAt\":\"2026-11-20T09:30:00.000Z\"",
    );
    up.serve(&v2, "\"v2\"");
    let filler = disk.fill_leaving(4);
    let failed = sync_at(&w, &up.url("/feed"), T1, &[]);
    assert_ne!(failed.code, 0, "{}", failed.stdout);
    let st = state(&w);
    assert_eq!(
        st["etag"], "\"v1\"",
        "the validators of the failed commit are not kept: {st}"
    );
    assert_eq!(
        st["lastError"],
        "a local storage error while recording the sync (see the sync's own output)",
        "no local detail in what the API publishes"
    );
    // Room again: the next sync sends v1's validator, gets v2's body and publishes it.
    std::fs::remove_file(filler).unwrap();
    sync_at(&w, &up.url("/feed"), T1, &["--force"]).success();
    assert_eq!(header(&up.last_request(), "if-none-match"), Some("\"v1\""));
    let status = w.run(&["--now", T1, "status", "--json"]).success().json();
    assert_eq!(
        status["snapshot"]["generatedAt"], "2026-11-20T09:30:00.000Z",
        "{status}"
    );
}
