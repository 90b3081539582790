//! The public API against the real binary: every row of sections 4 and 7
//! of docs/spec/reset-records-api.md, the rules of docs/spec/decisions.md,
//! ordering with ties and nulls, CORS, docs.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn src(id: &str) -> Value {
    if id.starts_with("op_") {
        json!({"origin": "operator", "postId": id, "handle": null, "url": null})
    } else {
        json!({"origin": "x", "postId": id, "handle": "h", "url": format!("https://x.com/h/status/{id}")})
    }
}

fn schedule(
    id: &str,
    state: &str,
    window: Option<(&str, &str)>,
    effective: Option<&str>,
    announced: &str,
) -> Value {
    json!({
        "id": id, "kind": "reset_scheduled", "resetType": "global",
        "announcedAt": announced, "effectiveAt": effective, "text": format!("schedule {id}"),
        "confidence": 0.9, "scope": {"plans": ["all"], "windows": ["unknown"]}, "source": src(id),
        "schedulePrecision": "datetime", "scheduleBasis": "explicit",
        "scheduleWindow": window.map(|(s, e)| json!({"startAt": s, "endAt": e})),
        "scheduleState": state, "completedAt": null, "completionRecordId": null,
        "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

fn completion(
    id: &str,
    announced: Option<&str>,
    completed: &str,
    effective: Option<&str>,
) -> Value {
    json!({
        "id": id, "kind": "reset_completed", "resetType": "global",
        "announcedAt": announced, "effectiveAt": effective, "text": format!("completion {id}"),
        "confidence": 0.8, "scope": null, "source": src(id),
        "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
        "completedAt": completed, "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

/// The hand-built dataset: pending ties, null announcedAt, numeric id ties.
fn dataset() -> Vec<Value> {
    let mut fulfilled = schedule(
        "300",
        "fulfilled",
        Some(("2026-11-10T00:00:00.000Z", "2026-11-10T00:00:00.000Z")),
        Some("2026-11-10T00:00:00.000Z"),
        "2026-11-09T00:00:00.000Z",
    );
    fulfilled["completedAt"] = json!("2026-11-10T01:00:00.000Z");
    fulfilled["completionRecordId"] = json!("400");
    fulfilled["fulfillmentOrigin"] = json!("auto");
    let mut c1 = completion(
        "400",
        Some("2026-11-10T01:00:00.000Z"),
        "2026-11-10T01:00:00.000Z",
        None,
    );
    c1["relatedRecordIds"] = json!(["300"]);
    let manual = json!({
        "id": "manual:m1", "kind": "reset_completed", "resetType": "global",
        "announcedAt": null, "effectiveAt": "2026-11-16T00:00:00.000Z", "text": null, "confidence": null,
        "scope": null, "source": {"origin": "operator", "postId": null, "handle": null, "url": null},
        "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
        "completedAt": "2026-11-16T00:00:00.000Z", "completionRecordId": null,
        "fulfillmentOrigin": "manual", "relatedRecordIds": []
    });
    let day21 = "2026-11-21T00:00:00.000Z";
    vec![
        schedule(
            "101",
            "pending",
            Some((day21, "2026-11-22T00:00:00.000Z")),
            Some(day21),
            "2026-11-19T00:00:00.000Z",
        ),
        schedule(
            "102",
            "pending",
            Some(("2026-11-20T12:00:00.000Z", "2026-11-20T12:00:00.000Z")),
            Some("2026-11-20T12:00:00.000Z"),
            "2026-11-18T00:00:00.000Z",
        ),
        schedule(
            "99",
            "pending",
            Some((day21, day21)),
            Some(day21),
            "2026-11-17T00:00:00.000Z",
        ),
        schedule(
            "200",
            "elapsed",
            Some(("2026-11-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z")),
            Some("2026-11-01T00:00:00.000Z"),
            "2026-10-30T00:00:00.000Z",
        ),
        fulfilled,
        c1,
        completion(
            "9",
            Some("2026-11-05T00:00:00.000Z"),
            "2026-11-05T00:00:00.000Z",
            Some("2026-11-05T00:00:00.000Z"),
        ),
        completion(
            "10",
            Some("2026-11-05T00:00:00.000Z"),
            "2026-11-05T00:00:00.000Z",
            Some("2026-11-05T00:00:00.000Z"),
        ),
        completion("500", None, "2026-11-15T00:00:00.000Z", None),
        completion(
            "501",
            Some("2026-11-05T00:00:00.000Z"),
            "2026-11-06T00:00:00.000Z",
            None,
        ),
        schedule("op_aaa", "unknown", None, None, "2026-11-12T00:00:00.000Z"),
        manual,
    ]
}

/// Pending schedules first; then by announcement, a manual completion (no
/// announcement) by its completion: manual:m1 (completed 11-16) and 500
/// (completed 11-15) are the newest (docs/spec/decisions.md, "Ordering details", revised).
const ALL_ORDER: &[&str] = &[
    "102",
    "99",
    "101",
    "manual:m1",
    "500",
    "op_aaa",
    "400",
    "501",
    "10",
    "9",
    "200",
];
const SCHEDULED_ORDER: &[&str] = &["101", "99", "102", "300", "200", "op_aaa"];
const COMPLETED_ORDER: &[&str] = &["manual:m1", "500", "400", "501", "10", "9"];

fn ids(page: &Value) -> Vec<String> {
    page["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

fn started() -> (World, Server) {
    let w = World::new();
    w.publish_records(&dataset(), NOW);
    let s = Server::start(&w, &[], &[]);
    (w, s)
}

#[test]
fn ordering_and_filters_follow_the_spec_with_ties_and_nulls() {
    let (_w, s) = started();
    for (kind, order) in [
        ("all", ALL_ORDER),
        ("reset_scheduled", SCHEDULED_ORDER),
        ("reset_completed", COMPLETED_ORDER),
    ] {
        let mut got = Vec::new();
        for page in 1..=2 {
            let reply = s.get(&format!(
                "/openapi/v1/records?kind={kind}&page={page}&pageSize=10"
            ));
            assert_eq!(reply.status, 200, "{kind}");
            got.extend(ids(&reply.json()));
        }
        assert_eq!(got, order, "kind={kind}");
        // latest = first item of the same list
        let latest = s
            .get(&format!("/openapi/v1/records/latest?kind={kind}"))
            .json();
        assert_eq!(latest["data"]["id"], order[0], "latest kind={kind}");
    }
    // Default kind is all, default page 1, pageSize 10.
    let default = s.get("/openapi/v1/records").json();
    assert_eq!(ids(&default), &ALL_ORDER[..10]);
    assert_eq!(
        s.get("/openapi/v1/records/latest").json()["data"]["id"],
        "102"
    );
}

#[test]
fn list_envelope_page_fields_and_meta_are_exact() {
    let (_w, s) = started();
    let reply = s.get("/openapi/v1/records?kind=reset_completed&pageSize=2");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert!(
        reply
            .text()
            .starts_with("{\"ok\":true,\"data\":{\"items\":["),
        "{}",
        reply.text()
    );
    let data = dataset();
    let find = |id: &str| data.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(
        reply.json(),
        json!({
            "ok": true,
            "data": {"items": [find("manual:m1"), find("500")], "page": 1, "pageSize": 2, "total": 6, "totalPages": 3, "hasNext": true},
            "meta": {"generatedAt": NOW, "lastSuccessfulCheckAt": null}
        })
    );
    let last = s
        .get("/openapi/v1/records?kind=reset_completed&pageSize=2&page=3")
        .json();
    assert_eq!(ids(&last), ["10", "9"]);
    assert_eq!(last["data"]["hasNext"], false);
    // A page beyond the last: 200, empty items, the requested page kept.
    let beyond = s
        .get("/openapi/v1/records?kind=reset_completed&pageSize=2&page=4294967295")
        .json();
    assert_eq!(
        beyond["data"],
        json!({"items": [], "page": 4294967295u32, "pageSize": 2, "total": 6, "totalPages": 3, "hasNext": false})
    );
    // Meta carries no dataSource in standalone mode.
    assert!(beyond["meta"].get("dataSource").is_none());
}

#[test]
fn no_match_is_an_empty_page_and_null_latest() {
    let w = World::new();
    w.publish_records(&[completion("1", None, NOW, None)], NOW);
    let s = Server::start(&w, &[], &[]);
    let list = s.get("/openapi/v1/records?kind=reset_scheduled");
    assert_eq!(list.status, 200);
    assert_eq!(
        list.json(),
        json!({"ok": true, "data": {"items": [], "page": 1, "pageSize": 10, "total": 0, "totalPages": 0, "hasNext": false},
               "meta": {"generatedAt": NOW, "lastSuccessfulCheckAt": null}})
    );
    let latest = s.get("/openapi/v1/records/latest?kind=reset_scheduled");
    assert_eq!(latest.status, 200);
    assert_eq!(latest.text(), format!("{{\"ok\":true,\"data\":null,\"meta\":{{\"generatedAt\":\"{NOW}\",\"lastSuccessfulCheckAt\":null}}}}"));
}

fn error_body(code: &str, detail: &str) -> Value {
    json!({"ok": false, "error": code, "detail": detail, "retryAfter": null})
}

#[test]
fn every_bad_query_is_422_naming_the_parameter() {
    let (_w, s) = started();
    let page_rule =
        "must be a whole number from 1 to 4294967295, without sign, leading zeros or spaces";
    let size_rule = "must be a whole number from 1 to 10, without sign, leading zeros or spaces";
    let cases: Vec<(&str, String)> = vec![
        ("/openapi/v1/records?page=0", format!("query parameter \"page\" {page_rule}; got \"0\"")),
        ("/openapi/v1/records?page=4294967296", format!("query parameter \"page\" {page_rule}; got \"4294967296\"")),
        ("/openapi/v1/records?page=007", format!("query parameter \"page\" {page_rule}; got \"007\"")),
        ("/openapi/v1/records?page=%201", format!("query parameter \"page\" {page_rule}; got \" 1\"")),
        ("/openapi/v1/records?pageSize=11", format!("query parameter \"pageSize\" {size_rule}; got \"11\"")),
        ("/openapi/v1/records?pageSize=0", format!("query parameter \"pageSize\" {size_rule}; got \"0\"")),
        ("/openapi/v1/records?pageSize=abc", format!("query parameter \"pageSize\" {size_rule}; got \"abc\"")),
        ("/openapi/v1/records?kind=Reset_Completed", "query parameter \"kind\" must be one of all, reset_scheduled, reset_completed; got \"Reset_Completed\"".into()),
        ("/openapi/v1/records?kind=", "query parameter \"kind\" is empty".into()),
        ("/openapi/v1/records?kind", "query parameter \"kind\" has no value (expected kind=…)".into()),
        ("/openapi/v1/records?page=1&page=1", "query parameter \"page\" is given more than once".into()),
        ("/openapi/v1/records?%6Bind=all&kind=all", "query parameter \"kind\" is given more than once".into()),
        ("/openapi/v1/records?sort=id", "unknown query parameter \"sort\"; this endpoint accepts kind, page, pageSize".into()),
        ("/openapi/v1/records?kind=all&&page=1", "the query string has an empty parameter (a stray '&')".into()),
        ("/openapi/v1/records?kind=%C3%28", "query parameter \"kind\" is not valid percent-encoded UTF-8".into()),
        ("/openapi/v1/records/latest?page=1", "unknown query parameter \"page\"; this endpoint accepts kind".into()),
        ("/openapi/v1/records/latest?kind=all&kind=all", "query parameter \"kind\" is given more than once".into()),
    ];
    for (path, detail) in cases {
        let reply = s.get(path);
        assert_eq!(reply.status, 422, "{path}");
        assert_eq!(reply.json(), error_body("invalid_query", &detail), "{path}");
    }
}

#[test]
fn unknown_paths_and_methods_get_json_404_and_405() {
    let (_w, s) = started();
    for path in [
        "/fr/",
        "/en/records/",
        "/openapi/v1",
        "/openapi/v1/records/",
        "/openapi/v1/record",
        "/openapi/v2/records",
        "/healthz/x",
    ] {
        let reply = s.get(path);
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(
            reply.json(),
            error_body("not_found", "no such path"),
            "{path}"
        );
        assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
    }
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        for path in [
            "/openapi/v1/records",
            "/openapi/v1/records/latest",
            "/openapi/v1/docs",
            "/healthz",
        ] {
            let reply = s.request(method, path, &[("Content-Length", "0")]);
            assert_eq!(reply.status, 405, "{method} {path}");
            assert_eq!(reply.header("allow"), Some("GET, HEAD, OPTIONS"));
            assert_eq!(
                reply.json(),
                error_body(
                    "method_not_allowed",
                    "method not allowed; this path answers GET, HEAD, OPTIONS"
                )
            );
        }
    }
    let reply = s.request("POST", "/nope", &[("Content-Length", "0")]);
    assert_eq!(reply.status, 404);
}

#[test]
fn a_panicking_handler_answers_500_without_detail() {
    let w = World::new();
    w.publish_records(&dataset(), NOW);
    let s = Server::start(&w, &[], &[("RESETCTL_TEST_PANIC_QUERY", "kind=all&page=7")]);
    let reply = s.get("/openapi/v1/records?kind=all&page=7");
    assert_eq!(reply.status, 500);
    assert_eq!(reply.text(), "{\"ok\":false,\"error\":\"internal_error\",\"detail\":\"internal server error\",\"retryAfter\":null}");
    // The server keeps serving.
    assert_eq!(s.get("/openapi/v1/records?kind=all&page=1").status, 200);
}

#[test]
fn cors_on_every_answer_and_preflight_without_body() {
    let (_w, s) = started();
    for path in [
        "/openapi/v1/records",
        "/openapi/v1/records?page=0",
        "/nope",
        "/healthz",
        "/openapi/v1/docs",
    ] {
        let reply = s.get(path);
        assert_eq!(
            reply.header("access-control-allow-origin"),
            Some("*"),
            "{path}"
        );
        assert_eq!(
            reply.header("access-control-expose-headers"),
            Some("X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Window, X-RateLimit-Reset, Retry-After, ETag, Last-Modified"),
            "{path}"
        );
    }
    let pre = s.request(
        "OPTIONS",
        "/openapi/v1/records",
        &[
            ("Origin", "https://example.org"),
            ("Access-Control-Request-Method", "GET"),
            ("Access-Control-Request-Headers", "x-client"),
        ],
    );
    assert_eq!(pre.status, 204);
    assert!(pre.body.is_empty());
    assert_eq!(pre.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        pre.header("access-control-allow-methods"),
        Some("GET, HEAD, OPTIONS")
    );
    assert_eq!(pre.header("access-control-allow-headers"), Some("x-client"));
    assert_eq!(pre.header("access-control-max-age"), Some("86400"));
}

#[test]
fn head_answers_like_get_without_a_body() {
    let (_w, s) = started();
    let reply = s.request("HEAD", "/openapi/v1/records", &[]);
    assert_eq!(reply.status, 200);
    assert!(reply.body.is_empty());
    assert_eq!(reply.header("content-type"), Some("application/json"));
}

#[test]
fn data_unavailable_until_the_first_snapshot_then_served_without_restart() {
    let w = World::new();
    // The injectable clock: 42 s after the snapshot's publish time.
    let s = Server::start(&w, &["--now", "2026-11-20T10:00:42.000Z"], &[]);
    for path in ["/openapi/v1/records", "/openapi/v1/records/latest?kind=all"] {
        let reply = s.get(path);
        assert_eq!(reply.status, 503);
        assert_eq!(
            reply.json(),
            error_body("data_unavailable", "no published snapshot exists yet")
        );
    }
    let health = s.get("/healthz");
    assert_eq!(health.status, 503);
    assert_eq!(
        health.json(),
        json!({"ok": false, "status": "unavailable", "mode": null, "sequence": null, "generatedAt": null, "ageSeconds": null, "syncStatus": null})
    );
    // The docs keep working while no data exists.
    assert_eq!(s.get("/openapi/v1/docs").status, 200);
    // Still, a bad query is a 422 first.
    assert_eq!(s.get("/openapi/v1/records?page=0").status, 422);

    w.run(&["--now", NOW, "seed"]).success();
    // Wait on /healthz, which is not counted, then ask once.
    s.wait_for("/healthz", Duration::from_secs(5), |r| r.status == 200);
    let reply = s.get("/openapi/v1/records");
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json()["data"]["total"],
        13,
        "16 bundled records less 3 fulfilled schedules"
    );
    let health = s.get("/healthz").json();
    assert_eq!(health["status"], "ready");
    assert_eq!(health["sequence"], 1);
    assert_eq!(health["mode"], "standalone");
    assert_eq!(health["generatedAt"], NOW);
    assert_eq!(health["ageSeconds"], 42);
}

#[test]
fn the_server_starts_on_a_missing_data_dir() {
    let w = World::new();
    assert!(!w.data_dir().exists());
    let s = Server::start(&w, &[], &[]);
    assert_eq!(s.get("/openapi/v1/records").status, 503);
    w.publish_records(&dataset(), NOW);
    s.wait_for("/healthz", Duration::from_secs(5), |r| r.status == 200);
    assert_eq!(s.get("/openapi/v1/records").status, 200);
}

#[test]
fn docs_openapi_and_skill_are_served() {
    let (_w, s) = started();
    let spec = s.get("/openapi/v1/openapi.json");
    assert_eq!(spec.status, 200);
    assert_eq!(spec.header("content-type"), Some("application/json"));
    let spec = spec.json();
    assert!(spec["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(spec["info"]["version"], "1.0.0");
    for path in [
        "/records/latest",
        "/records",
        "/openapi.json",
        "/docs",
        "/skill.md",
        "/healthz",
    ] {
        assert!(spec["paths"].get(path).is_some(), "{path} described");
    }
    let docs = s.get("/openapi/v1/docs");
    assert_eq!(
        docs.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = docs.text();
    for needle in [
        "/openapi/v1/records/latest",
        "pageSize",
        "invalid_query",
        "X-RateLimit-Reset",
        "20",
        "3600",
    ] {
        assert!(html.contains(needle), "docs mention {needle}");
    }
    let skill = s.get("/openapi/v1/skill.md");
    assert_eq!(
        skill.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert_eq!(
        skill.header("content-disposition"),
        Some("attachment; filename=\"reset-records-api-skill.md\"")
    );
    assert!(skill.text().starts_with("---\nname: reset-records-api\n"));
}

#[test]
fn the_access_log_names_method_path_status_and_client() {
    let (_w, s) = started();
    s.get("/openapi/v1/records?page=0");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let log = s.log_text();
        if let Some(line) = log
            .lines()
            .find(|l| l.contains("resetctl::access") && l.contains("status=422"))
        {
            assert!(line.contains("method=GET"), "{line}");
            assert!(line.contains("path=\"/openapi/v1/records\""), "{line}");
            assert!(line.contains("client=127.0.0.1"), "{line}");
            assert!(line.contains("latency_us="), "{line}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no access log line:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let (_w, mut s) = started();
    assert_eq!(s.get("/healthz").status, 200);
    let status = s.terminate();
    assert!(status.success(), "{status:?}");
}
