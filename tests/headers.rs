//! docs/api.md promises about headers, checked on every kind of answer: the full
//! `X-RateLimit-*` set on each admitted answer (200, 422, 500, 503, MCP,
//! HEAD), CORS on refusals and MCP answers, HEAD answering GET's headers.

use serde_json::json;

use crate::util::server::{raw_request_with_body, Reply, Server};
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";
const RESET: &str = "2026-11-20T11:00:00.000Z";
const EXPOSED: &str =
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Window, X-RateLimit-Reset, Retry-After, ETag, Last-Modified";

#[track_caller]
fn assert_quota_headers(reply: &Reply, remaining: u32, what: &str) {
    let remaining = remaining.to_string();
    assert_eq!(
        (
            reply.header("x-ratelimit-limit"),
            reply.header("x-ratelimit-remaining"),
            reply.header("x-ratelimit-window"),
            reply.header("x-ratelimit-reset"),
        ),
        (
            Some("20"),
            Some(remaining.as_str()),
            Some("3600"),
            Some(RESET)
        ),
        "{what}: {reply:?}"
    );
    assert_eq!(reply.header("retry-after"), None, "{what}");
}

#[track_caller]
fn assert_cors(reply: &Reply, what: &str) {
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("*"),
        "{what}: {reply:?}"
    );
    assert_eq!(
        reply.header("access-control-expose-headers"),
        Some(EXPOSED),
        "{what}: {reply:?}"
    );
}

pub fn mcp(addr: std::net::SocketAddr, body: &str, headers: &[(&str, &str)]) -> Reply {
    let length = body.len().to_string();
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Length", length.as_str()),
    ];
    all.extend_from_slice(headers);
    raw_request_with_body(addr, "POST", "/mcp", &all, body.as_bytes())
}

fn tool_call(id: u32) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "list_resets", "arguments": {}}})
    .to_string()
}

#[test]
fn every_admitted_answer_carries_the_whole_quota_set() {
    let w = World::new();
    let s = Server::start(
        &w,
        &["--now", NOW],
        &[("RESETCTL_TEST_PANIC_QUERY", "page=5")],
    );
    let unavailable = s.get("/openapi/v1/records");
    assert_eq!(unavailable.status, 503);
    assert_quota_headers(&unavailable, 19, "503 data_unavailable");
    assert_cors(&unavailable, "503 data_unavailable");
    w.run(&["--now", NOW, "seed"]).success();
    s.wait_for("/healthz", std::time::Duration::from_secs(5), |r| {
        r.status == 200
    });
    let mut remaining = 18;
    for (path, status) in [
        ("/openapi/v1/records", 200),
        ("/openapi/v1/records/latest", 200),
        ("/openapi/v1/records?page=0", 422),
        ("/openapi/v1/records?page=5", 500),
    ] {
        let reply = s.get(path);
        assert_eq!(reply.status, status, "{path}");
        assert_quota_headers(&reply, remaining, path);
        assert_cors(&reply, path);
        remaining -= 1;
    }
    let head = s.request("HEAD", "/openapi/v1/records", &[]);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_quota_headers(&head, remaining, "HEAD");
    remaining -= 1;
    let call = mcp(s.addr, &tool_call(1), &[]);
    assert_eq!(call.status, 200, "{}", call.text());
    assert_eq!(call.json()["result"]["isError"], false);
    assert_quota_headers(&call, remaining, "MCP tools/call");
    assert_cors(&call, "MCP tools/call");
}

#[test]
fn refusals_and_mcp_answers_carry_cors() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    let s = Server::start(&w, &["--now", NOW, "--rate-limit", "1/60"], &[]);
    assert_eq!(s.get("/openapi/v1/records").status, 200);
    let limited = s.get("/openapi/v1/records");
    assert_eq!(limited.status, 429);
    assert_cors(&limited, "429");
    let post = s.request("POST", "/openapi/v1/records", &[("Content-Length", "0")]);
    assert_eq!(post.status, 405);
    assert_cors(&post, "405");
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000)
    );
    let too_large = mcp(s.addr, &big, &[]);
    assert_eq!(too_large.status, 413);
    assert_cors(&too_large, "413");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let hello = mcp(s.addr, &init, &[]);
    assert_eq!(hello.status, 200);
    assert_cors(&hello, "MCP initialize");
    let over = mcp(s.addr, &tool_call(2), &[]);
    assert_eq!(over.status, 429);
    assert_eq!(over.json()["error"]["code"], -32029);
    assert_cors(&over, "MCP 429");
    let foreign = mcp(
        s.addr,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        &[("Origin", "https://evil.example")],
    );
    assert_eq!(foreign.status, 403);
    assert_cors(&foreign, "MCP 403");
}

#[test]
fn a_503_rate_limit_unavailable_carries_cors() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    // Nothing listens on this port: Redis is down.
    let (_held, port) = crate::util::refused_port();
    let url = format!("redis://127.0.0.1:{port}/0");
    let s = Server::start(&w, &["--rate-limit-store", &url], &[]);
    let reply = s.get("/openapi/v1/records");
    assert_eq!(reply.status, 503);
    assert_eq!(reply.json()["error"], "rate_limit_unavailable");
    assert_cors(&reply, "503 rate_limit_unavailable");
    let call = mcp(s.addr, &tool_call(1), &[]);
    assert_eq!(call.status, 503);
    assert_eq!(call.json()["error"]["code"], -32030);
    assert_eq!(call.json()["id"], 1);
    assert_cors(&call, "MCP 503");
}

/// The headers of a reply without `Date` (which moves), sorted.
fn comparable(reply: &Reply) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = reply
        .headers
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("date"))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect();
    headers.sort();
    headers
}

#[test]
fn head_answers_with_exactly_the_headers_of_get() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    // A frozen clock and a quota: the counted paths' headers match exactly
    // when HEAD and GET leave the same number remaining (two servers).
    let args = ["--now", NOW];
    let (get_server, head_server) = (Server::start(&w, &args, &[]), Server::start(&w, &args, &[]));
    for path in [
        "/openapi/v1/records?kind=reset_completed&pageSize=3",
        "/openapi/v1/records/latest",
        "/openapi/v1/records?page=0",
        "/openapi/v1/openapi.json",
        "/openapi/v1/docs",
        "/openapi/v1/skill.md",
        "/healthz",
        "/nope",
    ] {
        let get = get_server.get(path);
        let head = head_server.request("HEAD", path, &[]);
        assert_eq!(head.status, get.status, "{path}");
        assert!(head.body.is_empty(), "{path}: HEAD sent a body");
        assert_eq!(comparable(&head), comparable(&get), "{path}");
        assert_eq!(
            get.header("content-length"),
            Some(get.body.len().to_string().as_str()),
            "{path}"
        );
    }
}
