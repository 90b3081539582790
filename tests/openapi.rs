//! The served OpenAPI document describes what the server really answers:
//! real responses of every status are validated against it.

use serde_json::{json, Value};

use crate::util::server::{Reply, Server};
use crate::util::World;

/// Follows a local `$ref` (`#/components/...`) inside `doc`.
fn resolve<'a>(doc: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(pointer) => resolve(
            doc,
            doc.pointer(pointer.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("dangling $ref {pointer}")),
        ),
        None => node,
    }
}

/// Validates `reply` against the response the document gives for `path` and `status`.
#[track_caller]
fn check(doc: &Value, path: &str, reply: &Reply) {
    let status = reply.status.to_string();
    let operation = &doc["paths"][path]["get"];
    assert!(operation.is_object(), "{path} is not described");
    let response = resolve(doc, &operation["responses"][&status]);
    assert!(
        response.is_object(),
        "{path} does not document status {status}"
    );
    let content_type = reply
        .header("content-type")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let media = &response["content"][&content_type];
    assert!(
        media.is_object(),
        "{path} {status} does not document {content_type}"
    );
    if content_type != "application/json" {
        // The feeds: a document of their own format, described as a string.
        assert_eq!(
            media["schema"],
            json!({"type": "string"}),
            "{path} {status}"
        );
        assert!(std::str::from_utf8(&reply.body).is_ok(), "{path} {status}");
        check_headers(doc, path, &status, response, reply);
        return;
    }
    let mut schema = media["schema"].clone();
    schema["components"] = doc["components"].clone();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .expect("a valid schema");
    let body = reply.json();
    let errors: Vec<String> = validator
        .iter_errors(&body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{path} {status}: the body does not match the document:\n{}\n{body}",
        errors.join("\n")
    );
    check_headers(doc, path, &status, response, reply);
}

/// Every header the document marks required is there.
#[track_caller]
fn check_headers(doc: &Value, path: &str, status: &str, response: &Value, reply: &Reply) {
    if let Some(headers) = response.get("headers").and_then(Value::as_object) {
        for (name, header) in headers {
            let header = resolve(doc, header);
            if header["required"] == true {
                assert!(
                    reply.header(name).is_some(),
                    "{path} {status}: required header {name} missing"
                );
            }
        }
    }
}

fn document(server: &Server) -> Value {
    server.get("/openapi/v1/openapi.json").json()
}

#[test]
fn real_responses_of_every_status_match_the_document() {
    let w = World::new();
    let empty = Server::start(
        &w,
        &[],
        &[("RESETCTL_TEST_PANIC_QUERY", "kind=reset_completed")],
    );
    let doc = document(&empty);
    assert_eq!(doc["openapi"].as_str().map(|v| &v[..3]), Some("3.1"));
    assert_eq!(doc["info"]["version"], "1.0.0");
    // 503 data_unavailable on both endpoints and /healthz.
    check(&doc, "/records", &empty.get("/openapi/v1/records"));
    check(
        &doc,
        "/records/latest",
        &empty.get("/openapi/v1/records/latest"),
    );
    check(&doc, "/healthz", &empty.get("/healthz"));
    check(&doc, "/badge.json", &empty.get("/openapi/v1/badge.json"));

    w.run(&["--now", "2026-11-20T10:00:00.000Z", "seed"])
        .success();
    empty.wait_for("/healthz", std::time::Duration::from_secs(5), |r| {
        r.status == 200
    });
    let s = empty;
    for path in [
        "/openapi/v1/records",
        "/openapi/v1/records?kind=reset_scheduled&pageSize=10",
        "/openapi/v1/records?kind=reset_scheduled&page=2&pageSize=3",
        "/openapi/v1/records?page=99",
        "/openapi/v1/records?page=0",
        "/openapi/v1/records?kind=reset_completed",
    ] {
        check(&doc, "/records", &s.get(path));
    }
    for path in [
        "/openapi/v1/records/latest",
        "/openapi/v1/records/latest?kind=reset_scheduled",
        "/openapi/v1/records/latest?x=1",
    ] {
        check(&doc, "/records/latest", &s.get(path));
    }
    // The 500 of a panicking handler.
    let failed = s.get("/openapi/v1/records/latest?kind=reset_completed");
    assert_eq!(failed.status, 500);
    check(&doc, "/records/latest", &failed);
    check(&doc, "/healthz", &s.get("/healthz"));
    check(&doc, "/badge.json", &s.get("/openapi/v1/badge.json"));
}

#[test]
fn feed_responses_match_the_document() {
    let w = World::new();
    let s = Server::start(&w, &["--no-rate-limit"], &[]);
    let doc = document(&s);
    for (path, url) in [
        ("/records.atom", "/openapi/v1/records.atom"),
        ("/records.ics", "/openapi/v1/records.ics"),
    ] {
        let unavailable = s.get(url);
        assert_eq!(unavailable.status, 503);
        check(&doc, path, &unavailable);
    }
    w.run(&["--now", "2026-11-20T10:00:00.000Z", "seed"])
        .success();
    s.wait_for("/healthz", std::time::Duration::from_secs(5), |r| {
        r.status == 200
    });
    for (path, url, status) in [
        ("/records.atom", "/openapi/v1/records.atom", 200),
        (
            "/records.atom",
            "/openapi/v1/records.atom?kind=reset_completed&plan=pro",
            200,
        ),
        ("/records.atom", "/openapi/v1/records.atom?alarm=5", 422),
        ("/records.ics", "/openapi/v1/records.ics", 200),
        (
            "/records.ics",
            "/openapi/v1/records.ics?kind=reset_scheduled&plan=plus&alarm=1440",
            200,
        ),
        ("/records.ics", "/openapi/v1/records.ics?alarm=1441", 422),
        ("/records.ics", "/openapi/v1/records.ics?plan=Pro", 422),
    ] {
        let reply = s.get(url);
        assert_eq!(reply.status, status, "{url}");
        check(&doc, path, &reply);
    }
}

#[test]
fn every_bundled_record_and_the_null_latest_match_the_schemas() {
    let w = World::new();
    w.publish_records(&[], "2026-11-20T10:00:00.000Z");
    let s = Server::start(&w, &[], &[]);
    let doc = document(&s);
    check(
        &doc,
        "/records/latest",
        &s.get("/openapi/v1/records/latest"),
    );
    let mut schema = json!({"$ref": "#/components/schemas/Record"});
    schema["components"] = doc["components"].clone();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let bundled: Value = serde_json::from_slice(resetctl::BUNDLED_SEED_HISTORY).unwrap();
    for record in bundled["records"].as_array().unwrap() {
        assert!(validator.is_valid(record), "{record}");
    }
    // And the schema is strict: an extra field or a missing one is refused.
    let mut extra = bundled["records"][0].clone();
    extra["extra"] = json!(1);
    assert!(!validator.is_valid(&extra));
    let mut missing = bundled["records"][0].clone();
    missing.as_object_mut().unwrap().remove("text");
    assert!(!validator.is_valid(&missing));
}

#[test]
fn quota_answers_match_the_document() {
    let w = World::new();
    w.run(&["--now", "2026-11-20T10:00:00.000Z", "seed"])
        .success();
    let s = Server::start(&w, &["--rate-limit", "1/60"], &[]);
    let doc = document(&s);
    let admitted = s.get("/openapi/v1/records");
    assert_eq!(admitted.status, 200);
    check(&doc, "/records", &admitted);
    let limited = s.get("/openapi/v1/records");
    assert_eq!(limited.status, 429);
    check(&doc, "/records", &limited);
    check(
        &doc,
        "/records/latest",
        &s.get("/openapi/v1/records/latest"),
    );
    for (path, url) in [
        ("/records.atom", "/openapi/v1/records.atom"),
        ("/records.ics", "/openapi/v1/records.ics"),
    ] {
        let limited = s.get(url);
        assert_eq!(limited.status, 429);
        check(&doc, path, &limited);
    }
    // A Redis store nobody listens on: 503 rate_limit_unavailable.
    let (_held, port) = crate::util::refused_port();
    let down = Server::start(
        &w,
        &["--rate-limit-store", &format!("redis://127.0.0.1:{port}/0")],
        &[],
    );
    let unavailable = down.get("/openapi/v1/records/latest");
    assert_eq!(unavailable.status, 503);
    assert_eq!(unavailable.json()["error"], "rate_limit_unavailable");
    check(&doc, "/records/latest", &unavailable);
}
