//! The server at the edges of HTTP: odd request targets, the flood guard
//! on every uncounted answer, panics, a stalled or restarted Redis, MCP
//! protocol details, and JSON bodies on the errors hyper answers itself.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::redis::Redis;
use crate::util::server::{raw_request, raw_request_with_body, Reply, Server};
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn seeded() -> World {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    w
}

fn mcp_post(s: &Server, body: &str, headers: &[(&str, &str)]) -> Reply {
    let length = body.len().to_string();
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Length", length.as_str()),
    ];
    all.extend_from_slice(headers);
    raw_request_with_body(s.addr, "POST", "/mcp", &all, body.as_bytes())
}

/// Sends raw bytes and reads the whole answer (the connection is closed by us).
fn raw_bytes(s: &Server, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(s.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    raw
}

// Item 1 ----------------------------------------------------------------------

#[test]
fn connect_and_authority_form_targets_get_json_never_a_panic() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW], &[]);
    let connect = raw_request(s.addr, "CONNECT", "example.com:443", &[]);
    assert_eq!(connect.status, 405, "{}", connect.text());
    assert_eq!(connect.json()["error"], "method_not_allowed");
    assert_eq!(connect.json()["retryAfter"], Value::Null);
    let connect_path = raw_request(s.addr, "CONNECT", "/openapi/v1/records", &[]);
    assert_eq!(connect_path.status, 405, "{}", connect_path.text());
    assert_eq!(connect_path.json()["error"], "method_not_allowed");
    // Any other method with an authority-form or asterisk-form target is a 400;
    // OPTIONS * asks about the server as a whole and gets the preflight answer.
    for (method, target) in [("GET", "example.com:80"), ("DELETE", "*"), ("GET", "*")] {
        let odd = raw_request(s.addr, method, target, &[]);
        assert_eq!(odd.status, 400, "{method} {target}: {}", odd.text());
        assert_eq!(
            odd.json(),
            json!({"ok": false, "error": "bad_request", "detail": "the request target must be a path or an absolute URL", "retryAfter": null}),
            "{method} {target}"
        );
    }
    let server_wide = raw_request(s.addr, "OPTIONS", "*", &[]);
    assert_eq!(server_wide.status, 204);
    assert_eq!(
        server_wide.header("access-control-allow-methods"),
        Some("GET, HEAD, OPTIONS")
    );
    // The absolute form is an ordinary request.
    let absolute = raw_request(
        s.addr,
        "GET",
        &format!("http://{}/openapi/v1/records", s.addr),
        &[],
    );
    assert_eq!(absolute.status, 200);
    // The server is still up and nothing panicked.
    assert_eq!(s.get("/healthz").status, 200);
    assert!(!s.log_text().contains("panicked"), "{}", s.log_text());
}

// Item 3 ----------------------------------------------------------------------

/// Sends `send` until the flood guard answers 429 (or 60 times), and returns that answer.
fn flooded(send: impl Fn() -> Reply) -> Reply {
    (0..60)
        .map(|_| send())
        .find(|r| r.status == 429)
        .expect("the flood guard never answered 429")
}

#[test]
fn every_uncounted_answer_meets_the_flood_guard() {
    let w = seeded();
    let start = || {
        Server::start(
            &w,
            &[
                "--now",
                NOW,
                "--flood-guard",
                "1/3",
                "--mcp-allow-origin",
                "https://agent.example",
            ],
            &[],
        )
    };
    // REST: /healthz and a 404 answer in the API's error shape.
    for path in ["/healthz", "/nowhere"] {
        let s = start();
        let reply = flooded(|| s.get(path));
        assert_eq!(reply.json()["error"], "rate_limited", "{path}");
        assert_eq!(reply.header("retry-after"), Some("1"), "{path}");
        assert_eq!(reply.header("x-ratelimit-remaining"), None, "{path}");
    }
    // MCP: every uncounted answer, in JSON-RPC's shape.
    let bodies: [(&str, &[(&str, &str)]); 5] = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            &[("Origin", "https://evil.example")],
        ),
        ("{not json", &[]),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"drop_tables","arguments":{}}}"#,
            &[],
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":5}"#,
            &[],
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            &[("MCP-Protocol-Version", "1999-01-01")],
        ),
    ];
    for (body, headers) in bodies {
        let s = start();
        let reply = flooded(|| mcp_post(&s, body, headers));
        assert_eq!(reply.json()["error"]["code"], -32029, "{body}");
        assert_eq!(reply.header("retry-after"), Some("1"), "{body}");
    }
    let s = start();
    let reply = flooded(|| raw_request(s.addr, "OPTIONS", "/mcp", &[]));
    assert_eq!(reply.json()["error"]["code"], -32029);
    // The data quota was never touched.
    assert_eq!(
        s.get("/openapi/v1/records").header("x-ratelimit-remaining"),
        Some("19")
    );
}

#[test]
fn a_panic_inside_an_mcp_tool_call_is_a_500() {
    let w = seeded();
    let s = Server::start(
        &w,
        &["--now", NOW],
        &[("RESETCTL_TEST_PANIC_QUERY", r#"{"kind":"panic"}"#)],
    );
    let reply = mcp_post(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_latest_reset","arguments":{"kind":"panic"}}}"#,
        &[],
    );
    assert_eq!(reply.status, 500, "{}", reply.text());
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "internal error"}})
    );
    // The server goes on.
    assert_eq!(
        mcp_post(&s, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, &[]).status,
        200
    );
}

// Items 4 and 12 --------------------------------------------------------------

#[test]
fn requests_refused_while_redis_is_stalled_are_never_counted() {
    let redis = Redis::start();
    let w = seeded();
    let s = Server::start(&w, &["--rate-limit-store", &redis.url()], &[]);
    for remaining in ["19", "18"] {
        let reply = s.get("/openapi/v1/records");
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("x-ratelimit-remaining"), Some(remaining));
    }
    redis.pause();
    for _ in 0..8 {
        let reply = s.get("/openapi/v1/records");
        assert_eq!(reply.status, 503, "{}", reply.text());
        assert_eq!(reply.json()["error"], "rate_limit_unavailable");
    }
    redis.resume();
    let back = s.wait_for("/openapi/v1/records", Duration::from_secs(10), |r| {
        r.status == 200
    });
    assert_eq!(
        back.header("x-ratelimit-remaining"),
        Some("17"),
        "the eight 503s were not charged"
    );
}

#[test]
fn the_first_request_after_redis_restarts_is_answered() {
    let mut redis = Redis::start();
    let w = seeded();
    let s = Server::start(&w, &["--rate-limit-store", &redis.url()], &[]);
    assert_eq!(s.get("/openapi/v1/records").status, 200);
    redis.kill();
    redis.restart();
    let first = s.get("/openapi/v1/records");
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.header("x-ratelimit-remaining"), Some("19"));
}

// Item 5 ----------------------------------------------------------------------

#[test]
fn mcp_refuses_duplicate_arguments_and_bad_protocol_versions() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW], &[]);
    let dup = mcp_post(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_resets","arguments":{"pageSize":1,"pageSize":10}}}"#,
        &[],
    );
    assert_eq!(dup.status, 200, "{}", dup.text());
    let body = dup.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "argument \"pageSize\" is given more than once"
    );
    assert_eq!(
        dup.header("x-ratelimit-remaining"),
        Some("19"),
        "counted, as REST's 422"
    );
    let bad = mcp_post(
        &s,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        &[("MCP-Protocol-Version", "1999-01-01")],
    );
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert_eq!(bad.json()["error"]["code"], -32600);
    assert_eq!(bad.json()["id"], 2);
    assert_eq!(
        bad.json()["error"]["message"],
        "unsupported MCP-Protocol-Version \"1999-01-01\" (supported: 2025-11-25, 2025-06-18, 2025-03-26)"
    );
    let good = mcp_post(
        &s,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        &[("MCP-Protocol-Version", "2025-06-18")],
    );
    assert_eq!(good.status, 200);
}

#[test]
fn mcp_accepts_a_chunked_body_within_the_limit() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW], &[]);
    let chunked = |body: &str| {
        let mut request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for piece in body.as_bytes().chunks(1000) {
            request.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            request.extend_from_slice(piece);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
        raw_bytes(&s, &request)
    };
    let small = chunked(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let text = String::from_utf8_lossy(&small).into_owned();
    assert!(text.starts_with("HTTP/1.1 200 "), "{text}");
    assert!(
        text.ends_with(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        "{text}"
    );
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000)
    );
    let text = String::from_utf8_lossy(&chunked(&big)).into_owned();
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
}

#[test]
fn mcp_texts_state_the_configured_quota() {
    let w = seeded();
    let describe = |args: &[&str]| {
        let s = Server::start(&w, args, &[]);
        let list = mcp_post(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &[]).json();
        let init = mcp_post(
            &s,
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            &[],
        )
        .json();
        let descriptions: Vec<String> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["description"].as_str().unwrap().to_owned())
            .collect();
        (
            descriptions,
            init["result"]["instructions"].as_str().unwrap().to_owned(),
        )
    };
    let (tools, instructions) = describe(&["--rate-limit", "5/60"]);
    for text in tools.iter().chain([&instructions]) {
        assert!(
            text.contains("5 calls per 60 s per client") && !text.contains("20 calls"),
            "{text}"
        );
    }
    let (tools, instructions) = describe(&["--no-rate-limit"]);
    for text in tools.iter().chain([&instructions]) {
        assert!(
            text.contains("no call quota on this server") && !text.contains("20 calls"),
            "{text}"
        );
    }
}

// Item 9 ----------------------------------------------------------------------

#[test]
fn errors_the_http_library_answers_itself_have_json_bodies() {
    let w = seeded();
    // A head cap above hyper's 64 KiB target limit, so a long target meets that limit first.
    let s = Server::start(&w, &["--now", NOW, "--max-head-bytes", "131072"], &[]);
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    let mut many_headers = String::from("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    for n in 0..120 {
        many_headers.push_str(&format!("X-Header-{n}: {n}\r\n"));
    }
    many_headers.push_str("\r\n");
    for (request, status, code, detail) in [
        (
            "GARBAGE\r\n\r\n".to_owned(),
            "400",
            "bad_request",
            "the request is not valid HTTP",
        ),
        (
            long_target,
            "414",
            "uri_too_long",
            "the request target is longer than 65,534 bytes",
        ),
        (
            many_headers,
            "431",
            "headers_too_large",
            "the request head (its target and headers) is larger than the server accepts, or has more than 100 headers",
        ),
    ] {
        let raw = raw_bytes(&s, request.as_bytes());
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").expect("a whole answer");
        assert!(
            head.starts_with(&format!("HTTP/1.1 {status} ")),
            "{status}: {head}"
        );
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{status}: {head}"
        );
        assert_eq!(
            serde_json::from_str::<Value>(body).unwrap_or(Value::Null),
            json!({"ok": false, "error": code, "detail": detail, "retryAfter": null}),
            "{status}: {text}"
        );
    }
    // Ordinary answers are untouched and the server goes on.
    assert_eq!(s.get("/healthz").status, 200);
    // With the default head cap (32 KiB), the same long target is a head too large.
    let capped = Server::start(&w, &["--now", NOW], &[]);
    let target = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(40_000));
    let text = String::from_utf8_lossy(&raw_bytes(&capped, target.as_bytes())).into_owned();
    assert!(text.starts_with("HTTP/1.1 431 "), "{text}");
    assert!(text.contains("\"error\":\"headers_too_large\""), "{text}");
}

/// Issue 39, item 8: each answer says what is true, from one source: a
/// 405's detail names the methods its `Allow` lists; a long target under
/// the default head limit is a 431 that says the head (its target
/// included) is too large.
#[test]
fn a_refusal_names_what_it_refuses() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW], &[]);
    for (method, path, allow) in [
        ("GET", "/mcp", "POST, OPTIONS"),
        ("DELETE", "/mcp", "POST, OPTIONS"),
        ("DELETE", "/openapi/v1/records", "GET, HEAD, OPTIONS"),
        ("PUT", "/openapi/v1/docs", "GET, HEAD, OPTIONS"),
        ("POST", "/en/", "GET, HEAD"),
    ] {
        let r = s.request(method, path, &[]);
        assert_eq!(r.status, 405, "{method} {path}");
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
        assert_eq!(
            r.json()["detail"],
            format!("method not allowed; this path answers {allow}"),
            "{method} {path}"
        );
    }
    // A 40 KiB target under the default 32 KiB head: the head is too large.
    let long = format!("/openapi/v1/records?x={}", "a".repeat(40 * 1024));
    let r = s.get(&long);
    assert_eq!(r.status, 431);
    let detail = r.json()["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("its target and headers"), "{detail}");
    // (With room for it, a target over 64 KiB is what is too long: 414,
    // errors_the_http_library_answers_itself_have_json_bodies.)
}

/// Issue 39, item 8 (continued): a page's bad query is a page with the
/// pages' safety headers, quoting nothing; the pages carry no CORS header
/// while every API answer does.
#[test]
fn a_pages_bad_query_is_a_page_and_only_the_api_answers_cors() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW], &[]);
    // A bad query on the status page: a page, with the pages' headers.
    for path in ["/en/?kind=%3Cb%3Eeverything", "/zh/records/300?x=1"] {
        let bad = s.get(path);
        assert_eq!(bad.status, 400, "{path}");
        assert_eq!(
            bad.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{path}"
        );
        assert!(bad.header("content-security-policy").is_some(), "{path}");
        assert_eq!(bad.header("x-content-type-options"), Some("nosniff"));
        let text = bad.text();
        assert!(
            !text.contains("everything") && !text.contains("<b>"),
            "{path} quotes the query: {text}"
        );
    }
    assert!(s
        .get("/en/?kind=nope")
        .text()
        .contains("takes one query parameter, kind"));
    assert!(s
        .get("/zh/?kind=nope")
        .text()
        .contains("只接受一个查询参数 kind"));

    // CORS: every API answer, no page.
    for path in [
        "/openapi/v1/records",
        "/openapi/v1/records.atom",
        "/openapi/v1/openapi.json",
        "/openapi/v1/docs",
        "/openapi/v1/skill.md",
        "/openapi/v1/badge.json",
        "/healthz",
        "/openapi/v1/nope",
    ] {
        assert_eq!(
            s.get(path).header("access-control-allow-origin"),
            Some("*"),
            "{path}"
        );
    }
    for path in ["/", "/en/", "/zh/records/300", "/records/nope"] {
        assert_eq!(
            s.get(path).header("access-control-allow-origin"),
            None,
            "{path}"
        );
    }
}

/// Issue 39, item 8 (continued): an HTTP/1.1 request without exactly one
/// `Host` is a 400 (RFC 9112 section 3.2); HTTP/1.0 may omit it.
#[test]
fn an_http_1_1_request_needs_exactly_one_host() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW], &[]);
    for request in [
        "GET /openapi/v1/docs HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET /openapi/v1/docs HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
        "GET /openapi/v1/records/stream HTTP/1.1\r\nConnection: close\r\n\r\n",
    ] {
        let answer = String::from_utf8_lossy(&raw_bytes(&s, request.as_bytes())).into_owned();
        assert!(
            answer.starts_with("HTTP/1.1 400 ") && answer.contains("exactly one Host header"),
            "{request:?}: {answer}"
        );
    }
    let answer = raw_bytes(&s, b"GET /openapi/v1/docs HTTP/1.0\r\n\r\n");
    assert!(answer.starts_with(b"HTTP/1.0 200 ") || answer.starts_with(b"HTTP/1.1 200 "));
}

// Issue 50, item 10 -----------------------------------------------------------

/// `curl --http2-prior-knowledge` (h2c, as a proxy speaks to the server)
/// with one header of `pad` bytes: the status line, the headers and the body.
fn h2_get(s: &Server, path: &str, pad: usize) -> (String, String) {
    let curl = crate::util::tool(&["curl"], "--version", "curl");
    let out = std::process::Command::new(curl)
        .args(["-sS", "--http2-prior-knowledge", "-D", "-", "-H"])
        .arg(format!("X-Pad: {}", "a".repeat(pad)))
        .arg(s.url(path))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    (head.to_ascii_lowercase(), body.to_owned())
}

#[test]
fn an_http2_head_over_the_limit_is_the_json_431() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW, "--no-rate-limit"], &[]);
    // (curl's HTTP/2 library sends no header block over 64 KiB.)
    for pad in [40_000, 60_000] {
        let (head, body) = h2_get(&s, "/openapi/v1/records/latest", pad);
        assert!(head.starts_with("http/2 431"), "{pad}: {head}");
        assert!(
            head.contains("\r\ncontent-type: application/json"),
            "{head}"
        );
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap_or(Value::Null),
            json!({"ok": false, "error": "headers_too_large",
                "detail": "the request head (its target and headers) is larger than the server accepts, or has more than 100 headers",
                "retryAfter": null}),
            "a {pad}-byte header over HTTP/2: {body:?}"
        );
    }
    let (head, _) = h2_get(&s, "/openapi/v1/records/latest", 20_000);
    assert!(head.starts_with("http/2 200"), "{head}");
}

#[test]
fn a_422_quotes_a_long_parameter_name_only_in_part() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW, "--no-rate-limit"], &[]);
    let name = "n".repeat(5000);
    let reply = s.get(&format!("/openapi/v1/records?{name}=1"));
    assert_eq!(reply.status, 422);
    let detail = reply.json()["detail"].as_str().unwrap().to_owned();
    let expected = format!(
        "unknown query parameter \"{}\"… (5000 characters); this endpoint accepts kind, page, pageSize",
        "n".repeat(64)
    );
    assert!(
        detail == expected,
        "a detail of {} characters: {}…",
        detail.chars().count(),
        detail.chars().take(120).collect::<String>()
    );
    // A short one is quoted whole, as before.
    assert_eq!(
        s.get("/openapi/v1/records?limit=5").json()["detail"],
        "unknown query parameter \"limit\"; this endpoint accepts kind, page, pageSize"
    );
}

#[test]
fn every_json_answer_says_nosniff() {
    let w = seeded();
    let s = Server::start(
        &w,
        &[
            "--now",
            NOW,
            "--rate-limit",
            "2/3600",
            "--admin-listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    let mut answers: Vec<(String, Reply)> = [
        "/openapi/v1/records/latest",
        "/openapi/v1/records?bogus=1",
        "/openapi/v1/records/latest",
        "/openapi/v1/nowhere",
        "/openapi/v1/openapi.json",
        "/openapi/v1/badge.json",
        "/healthz",
        "/en/",
    ]
    .iter()
    .map(|path| (path.to_string(), s.get(path)))
    .collect();
    answers.push(("POST /mcp".into(), raw_request(s.addr, "POST", "/mcp", &[])));
    answers.push(("admin /healthz".into(), s.admin_get("/healthz", &[])));
    answers.push((
        "admin /export.json".into(),
        s.admin_get("/export.json", &[]),
    ));
    let statuses: Vec<u16> = answers.iter().map(|(_, r)| r.status).collect();
    assert_eq!(
        statuses,
        [200, 422, 429, 404, 200, 200, 200, 200, 400, 200, 200]
    );
    for (what, reply) in &answers {
        assert_eq!(
            reply.header("x-content-type-options"),
            Some("nosniff"),
            "{what}: {:?}",
            reply.headers
        );
    }
    // hyper's own 400/414/431, with the JSON body they are given.
    let raw = String::from_utf8_lossy(&raw_bytes(&s, b"GARBAGE\r\n\r\n")).into_owned();
    assert!(
        raw.contains("\r\nx-content-type-options: nosniff\r\n"),
        "{raw}"
    );
}

/// A path is matched byte for byte: another letter case is a 404, on the
/// API's paths, the documents, `/mcp` and `/healthz` alike.
#[test]
fn a_path_in_another_letter_case_is_not_found() {
    let w = seeded();
    let s = Server::start(&w, &["--now", NOW, "--no-rate-limit"], &[]);
    assert_eq!(s.get("/openapi/v1/records/latest").status, 200);
    for path in [
        "/OPENAPI/V1/RECORDS/LATEST",
        "/openapi/v1/Records",
        "/openapi/v1/OPENAPI.json",
        "/HEALTHZ",
        "/MCP",
    ] {
        let reply = s.get(path);
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(reply.json()["error"], "not_found", "{path}");
    }
}
