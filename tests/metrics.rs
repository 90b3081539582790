//! The admin listener (`serve --admin-listen`): `/metrics` read back with
//! the official Python client's parsers in both text formats (pinned in
//! tests/requirements.txt, through tests/metrics_check.py), `/healthz`,
//! and `/export.json` with its strong ETag.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::Value;

use crate::util::server::Server;
use crate::util::World;

const NOW: &str = "2026-11-24T12:00:00.000Z";

/// What prometheus_client's parser (`text` or `openmetrics`) read in `body`.
pub(crate) fn parse(format: &str, body: &[u8]) -> Value {
    crate::util::python_json("metrics_check.py", format, body)
}

pub(crate) fn family<'a>(parsed: &'a Value, name: &str) -> &'a Value {
    parsed["families"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no family {name} in {parsed:#}"))
}

/// The value of the sample `sample` of family `name` whose labels are `labels`.
pub(crate) fn value(
    parsed: &Value,
    name: &str,
    sample: &str,
    labels: &[(&str, &str)],
) -> Option<f64> {
    family(parsed, name)["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["name"] == sample
                && s["labels"].as_object().unwrap().len() == labels.len()
                && labels.iter().all(|(k, v)| s["labels"][*k] == *v)
        })
        .map(|s| s["value"].as_f64().unwrap())
}

fn started(w: &World, extra: &[&str]) -> Server {
    w.seed_bundled();
    let mut args = vec!["--now", NOW, "--admin-listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    Server::start(w, &args, &[])
}

/// Opens a record stream and reads up to its `ready` event.
fn open_stream(s: &Server) -> std::net::TcpStream {
    let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /openapi/v1/records/stream HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("event:ready") {
        let n = stream.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the stream closed: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    stream
}

#[test]
fn metrics_count_answers_quota_decisions_and_state_in_both_formats() {
    let w = World::new();
    let s = started(&w, &["--rate-limit", "3/3600"]);
    let first = s.get("/openapi/v1/records");
    assert_eq!(first.status, 200);
    let etag = first.header("etag").unwrap().to_owned();
    assert_eq!(s.get("/openapi/v1/records/latest").status, 200);
    let _stream = open_stream(&s);
    assert_eq!(s.get("/openapi/v1/records").status, 429);
    let not_modified = s.request("GET", "/openapi/v1/records", &[("If-None-Match", &etag)]);
    assert_eq!(not_modified.status, 304);
    assert_eq!(s.get("/healthz").status, 200);
    assert_eq!(s.get("/no/such/path").status, 404);
    let health = s.get("/healthz").json();

    let text = s.admin_get("/metrics", &[]);
    assert_eq!(text.status, 200);
    assert_eq!(
        text.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let om = s.admin_get(
        "/metrics",
        &[(
            "Accept",
            "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
        )],
    );
    assert_eq!(
        om.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(om.text().ends_with("# EOF\n"), "{}", om.text());
    assert!(!text.text().contains("# EOF"), "{}", text.text());

    for (format, body) in [("text", &text.body), ("openmetrics", &om.body)] {
        let m = parse(format, body);
        let requests = "resetctl_http_requests";
        let total = "resetctl_http_requests_total";
        assert_eq!(family(&m, requests)["type"], "counter", "{format}");
        for (route, status, n) in [
            ("records", "200", 1.0),
            ("records", "429", 1.0),
            ("records", "304", 1.0),
            ("latest", "200", 1.0),
            ("stream", "200", 1.0),
            ("healthz", "200", 2.0),
            ("other", "404", 1.0),
        ] {
            assert_eq!(
                value(&m, requests, total, &[("route", route), ("status", status)]),
                Some(n),
                "{format}: {route} {status}"
            );
        }
        // The raw path never becomes a label.
        assert!(!serde_json::to_string(&m).unwrap().contains("/no/such/path"));
        let duration = family(&m, "resetctl_http_request_duration_seconds");
        assert_eq!(duration["type"], "histogram", "{format}");
        assert_eq!(
            value(
                &m,
                "resetctl_http_request_duration_seconds",
                "resetctl_http_request_duration_seconds_count",
                &[("route", "records")]
            ),
            Some(3.0),
            "{format}"
        );
        let decisions = "resetctl_quota_decisions";
        let sample = "resetctl_quota_decisions_total";
        for (decision, n) in [("admitted", 3.0), ("limited", 1.0), ("not_modified", 1.0)] {
            assert_eq!(
                value(&m, decisions, sample, &[("decision", decision)]),
                Some(n),
                "{format}: {decision}"
            );
        }
        assert_eq!(
            value(
                &m,
                "resetctl_quota_tracked_clients",
                "resetctl_quota_tracked_clients",
                &[]
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &m,
                "resetctl_snapshot_sequence",
                "resetctl_snapshot_sequence",
                &[]
            ),
            Some(health["sequence"].as_f64().unwrap())
        );
        let age = value(
            &m,
            "resetctl_snapshot_age_seconds",
            "resetctl_snapshot_age_seconds",
            &[],
        )
        .unwrap();
        assert_eq!(
            age.floor(),
            health["ageSeconds"].as_f64().unwrap(),
            "{format}"
        );
        assert_eq!(
            value(&m, "resetctl_streams_open", "resetctl_streams_open", &[]),
            Some(1.0)
        );
        assert_eq!(
            value(
                &m,
                "resetctl_snapshot_reloads",
                "resetctl_snapshot_reloads_total",
                &[]
            ),
            Some(1.0)
        );
        // Standalone: no sync state, so no sync family at all (a 0 there would mean nothing).
        let sync_families: Vec<&Value> = m["families"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["name"].as_str().unwrap().starts_with("resetctl_sync_"))
            .collect();
        assert_eq!(sync_families, Vec::<&Value>::new(), "{format}");
    }
    let m = parse("openmetrics", &om.body);
    assert_eq!(
        family(&m, "resetctl_http_request_duration_seconds")["unit"],
        "seconds"
    );
    assert_eq!(
        family(&m, "resetctl_snapshot_age_seconds")["unit"],
        "seconds"
    );
}

#[test]
fn the_admin_listener_answers_healthz_and_nothing_else_and_counts_nothing() {
    let w = World::new();
    let s = started(&w, &["--rate-limit", "1/3600"]);
    let health = s.admin_get("/healthz", &[]);
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["status"], "ready");
    assert_eq!(s.admin_get("/healthz?ready=fresh", &[]).status, 200);
    let missing = s.admin_get("/openapi/v1/records", &[]);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"], "not_found");
    for _ in 0..3 {
        assert_eq!(s.admin_get("/metrics", &[]).status, 200);
        assert_eq!(s.admin_get("/export.json", &[]).status, 200);
    }
    // The one public request is still the first of the quota.
    let public = s.get("/openapi/v1/records");
    assert_eq!(public.status, 200);
    assert_eq!(public.header("x-ratelimit-remaining"), Some("0"));
}

#[test]
fn without_an_admin_listener_there_are_no_metrics_anywhere() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--now", NOW], &[]);
    assert_eq!(s.admin, None);
    let reply = s.get("/metrics");
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"], "not_found");
}

#[test]
fn export_json_is_the_served_snapshot_with_a_strong_etag_and_304() {
    let w = World::new();
    let s = started(&w, &[]);
    let export = s.admin_get("/export.json", &[]);
    assert_eq!(export.status, 200);
    assert_eq!(export.header("content-type"), Some("application/json"));
    let etag = export.header("etag").unwrap().to_owned();
    assert!(etag.starts_with('"') && !etag.starts_with("W/"), "{etag}");
    // What `export` writes, and the served dataSource: none (standalone).
    let exported: Value = serde_json::from_str(&w.run(&["export"]).success().stdout).unwrap();
    let mut expected = exported.clone();
    expected["dataSource"] = Value::Null;
    assert_eq!(export.json(), expected);

    let again = s.admin_get("/export.json", &[("If-None-Match", &etag)]);
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    // If-None-Match compares weakly, as on every other route (RFC 9110
    // 13.1.2): the weak form of the tag, or in a list, is the same copy.
    for tags in [
        format!("W/{etag}"),
        format!("\"other\", W/{etag}"),
        "*".to_owned(),
    ] {
        let weak = s.admin_get("/export.json", &[("If-None-Match", &tags)]);
        assert_eq!(weak.status, 304, "If-None-Match: {tags}");
    }
    let other = s.admin_get("/export.json", &[("If-None-Match", "W/\"other\"")]);
    assert_eq!(other.status, 200);

    let before = s.get("/healthz").json()["sequence"].as_u64().unwrap();
    w.run(&[
        "--now",
        NOW,
        "record",
        "completion",
        "--operator",
        "--at",
        "2026-11-24 11:00 +00:00",
    ])
    .success();
    s.wait_for("/healthz", Duration::from_secs(10), |r| {
        r.json()["sequence"].as_u64() > Some(before)
    });
    let changed = s.admin_get("/export.json", &[("If-None-Match", &etag)]);
    assert_eq!(changed.status, 200, "a new snapshot is a new tag");
    assert_ne!(changed.header("etag"), Some(etag.as_str()));
    let mut exported: Value = serde_json::from_str(&w.run(&["export"]).success().stdout).unwrap();
    exported["dataSource"] = Value::Null;
    assert_eq!(changed.json(), exported);
}

#[test]
fn an_overdue_check_is_a_metric_and_a_failing_status_before_the_page_says_unknown() {
    let w = World::new();
    w.seed_bundled();
    // Never checked: nothing overdue (a new instance), the gauge says 0.
    w.run(&["--now", NOW, "status"]).success();
    let checked = "2026-11-24T06:00:00.000Z";
    w.run(&["--now", NOW, "mark-checked", "--at", checked])
        .success();
    let s = Server::start(&w, &["--now", NOW, "--admin-listen", "127.0.0.1:0"], &[]);
    let m = parse("text", &s.admin_get("/metrics", &[]).body);
    let at = resetctl::model::Timestamp::parse(checked)
        .unwrap()
        .as_millis() as f64
        / 1000.0;
    assert_eq!(
        value(
            &m,
            "resetctl_last_successful_check_timestamp_seconds",
            "resetctl_last_successful_check_timestamp_seconds",
            &[]
        ),
        Some(at)
    );
    // 29 hours after the check: fine; 31 hours after: status exits 1 and says what to run.
    w.run(&["--now", "2026-11-25T11:00:00.000Z", "status"])
        .success();
    let late = w.run_refused(&["--now", "2026-11-25T13:00:00.000Z", "status"]);
    assert_eq!(late.code, 1, "{}", late.stderr);
    assert!(
        late.stderr.contains("more than 30 hours old")
            && late.stderr.contains("resetctl mark-checked"),
        "{}",
        late.stderr
    );
    assert!(
        late.stdout
            .contains("(overdue: the status page says Unknown)"),
        "{}",
        late.stdout
    );
    let json = w.run_refused(&["--now", "2026-11-25T13:00:00.000Z", "status", "--json"]);
    assert_eq!(json.code, 1);
    assert_eq!(json.json()["checkOverdue"], true);
}

#[test]
fn metrics_say_which_build_and_how_the_process_is_doing_in_both_formats() {
    let w = World::new();
    let s = started(&w, &[]);
    let version = w.run(&["--version"]).success().stdout;
    let commit = version
        .lines()
        .find_map(|l| l.strip_prefix("commit: "))
        .unwrap_or_else(|| panic!("no commit line in {version}"))
        .to_owned();
    let started_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    for (format, accept) in [
        ("text", None),
        ("openmetrics", Some("application/openmetrics-text")),
    ] {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("Accept", a)).into_iter().collect();
        let m = parse(format, &s.admin_get("/metrics", &headers).body);
        let build = family(&m, "resetctl_build_info");
        assert_eq!(build["type"], "gauge", "{format}: {build:#}");
        assert_eq!(
            value(
                &m,
                "resetctl_build_info",
                "resetctl_build_info",
                &[("version", env!("CARGO_PKG_VERSION")), ("commit", &commit)]
            ),
            Some(1.0),
            "{format}: {build:#}"
        );
        let gauge = |name: &str| {
            value(&m, name, name, &[]).unwrap_or_else(|| panic!("{format}: no {name} in {m:#}"))
        };
        let resident = gauge("process_resident_memory_bytes");
        assert!(
            resident > 1e6 && resident < 1e9,
            "{format}: resident {resident}"
        );
        let open = gauge("process_open_fds");
        assert!(
            open >= 3.0 && open <= gauge("process_max_fds"),
            "{format}: open fds {open}"
        );
        let start = gauge("process_start_time_seconds");
        assert!(
            (started_at - 120.0..=started_at + 1.0).contains(&start),
            "{format}: started at {start}, the test at {started_at}"
        );
        assert!(gauge("process_threads") >= 1.0);
        assert!(gauge("process_virtual_memory_bytes") >= resident);
        // The CPU time the kernel counts for the process, read around the
        // scrape (user + system ticks of /proc/PID/stat, 100 per second):
        // the reported figure lies between them, within a tick each way.
        let cpu_of_process = || {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", s.child.id())).unwrap();
            let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
            (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) / 100.0
        };
        let before = cpu_of_process();
        let m = parse(format, &s.admin_get("/metrics", &headers).body);
        let after = cpu_of_process();
        let cpu = value(&m, "process_cpu_seconds", "process_cpu_seconds_total", &[])
            .unwrap_or_else(|| panic!("{format}: no process_cpu_seconds in {m:#}"));
        assert!(
            cpu > 0.0 && before - 0.02 <= cpu && cpu <= after + 0.02,
            "{format}: cpu {cpu} s, the kernel counted {before} s before the scrape and {after} s after"
        );
    }
}

#[test]
fn metrics_count_the_bytes_of_the_bodies_made_from_the_served_view() {
    let w = World::new();
    let s = started(
        &w,
        &[
            "--no-rate-limit",
            "--public-base-url",
            "https://resets.example",
        ],
    );
    let held = |s: &Server| {
        let m = parse("text", &s.admin_get("/metrics", &[]).body);
        value(
            &m,
            "resetctl_view_bodies_bytes",
            "resetctl_view_bodies_bytes",
            &[],
        )
    };
    // The hot set, made when the view was served: each filter's latest
    // record, first page, calendar and (its links fixed) Atom feed, every
    // form of each. Reading them back makes nothing new.
    s.settle();
    let mut expected = 0;
    for kind in ["", "?kind=reset_scheduled", "?kind=reset_completed"] {
        for path in [
            "/openapi/v1/records/latest",
            "/openapi/v1/records",
            "/openapi/v1/records.ics",
            "/openapi/v1/records.atom",
        ] {
            for coding in ["identity", "br", "zstd", "gzip"] {
                let r = s.request(
                    "GET",
                    &format!("{path}{kind}"),
                    &[("Accept-Encoding", coding)],
                );
                assert_eq!(r.status, 200, "{path}{kind} {coding}");
                if coding == "identity" || r.header("content-encoding") == Some(coding) {
                    expected += r.body.len();
                }
            }
        }
    }
    assert_eq!(held(&s), Some(expected as f64), "the hot set, every form");
    // A cold body adds its identity form, then each coded form asked for.
    let page = s.request(
        "GET",
        "/openapi/v1/records?page=2",
        &[("Accept-Encoding", "gzip")],
    );
    assert_eq!(page.header("content-encoding"), Some("gzip"));
    let identity = s.get("/openapi/v1/records?page=2").body.len();
    assert_eq!(
        held(&s),
        Some((expected + identity + page.body.len()) as f64)
    );
}
