//! The MCP endpoint driven by the official Rust SDK's client (rmcp, over
//! the streamable-HTTP transport) against the real binary, compared with the
//! REST answers; the shared quota; protocol errors.

use serde_json::{json, Value};

use crate::util::server::{raw_request, raw_request_with_body, Server};
use crate::util::{within, World};

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn seeded() -> World {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    w
}

fn args(value: Value) -> rmcp::model::JsonObject {
    value.as_object().unwrap().clone()
}

#[test]
fn an_rmcp_client_initializes_lists_and_calls_both_tools() {
    let w = seeded();
    let s = Server::start(&w, &["--no-rate-limit"], &[]);
    let rest_latest = s
        .get("/openapi/v1/records/latest?kind=reset_scheduled")
        .json();
    let rest_page = s
        .get("/openapi/v1/records?kind=reset_completed&page=2&pageSize=3")
        .json();
    let url = s.url("/mcp");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        use rmcp::ServiceExt;
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        let client = within(10, "initialize", ().serve(transport))
            .await
            .expect("initialize");
        let info = client.peer_info().expect("server info");
        assert_eq!(
            info.server_info.as_ref().map(|i| i.name.as_str()),
            Some("resetctl")
        );
        assert!(info.capabilities.tools.is_some());

        let tools = within(10, "tools/list", client.list_all_tools())
            .await
            .expect("tools/list");
        let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, ["get_latest_reset", "list_resets"]);
        for tool in &tools {
            assert_eq!(
                tool.annotations.as_ref().and_then(|a| a.read_only_hint),
                Some(true)
            );
            assert_eq!(tool.input_schema["additionalProperties"], false);
            assert!(tool.output_schema.is_some());
        }

        let call = |name: &'static str, a: Value| {
            rmcp::model::CallToolRequestParams::new(name).with_arguments(args(a))
        };
        let latest = within(
            10,
            "get_latest_reset",
            client.call_tool(call("get_latest_reset", json!({"kind": "reset_scheduled"}))),
        )
        .await
        .expect("call");
        assert_eq!(latest.is_error, Some(false));
        let structured = latest.structured_content.clone().unwrap();
        assert_eq!(structured["data"], rest_latest["data"]);
        assert_eq!(structured["meta"], rest_latest["meta"]);
        // docs/api.md pins "plus a short text", not its wording.
        assert_short_text(&latest.content);

        let page = within(
            10,
            "list_resets",
            client.call_tool(call(
                "list_resets",
                json!({"kind": "reset_completed", "page": 2, "pageSize": 3}),
            )),
        )
        .await
        .expect("call");
        let structured = page.structured_content.clone().unwrap();
        assert_eq!(structured["data"], rest_page["data"]);
        assert_short_text(&page.content);

        // Invalid arguments follow the REST rules (never clamped): a tool
        // error naming the argument (docs/api.md pins that much of the text).
        for (a, argument) in [
            (json!({"pageSize": 11}), "pageSize"),
            (json!({"page": 0}), "page"),
            (json!({"kind": "ALL"}), "kind"),
            (json!({"limit": 5}), "limit"),
            (json!({"page": "2"}), "page"),
        ] {
            let bad = within(
                10,
                "a bad call",
                client.call_tool(call("list_resets", a.clone())),
            )
            .await
            .expect("a tool error is still a result");
            assert_eq!(bad.is_error, Some(true), "{a}");
            assert_eq!(bad.structured_content, None, "{a}");
            let content = serde_json::to_value(&bad.content).unwrap();
            assert_eq!(content.as_array().unwrap().len(), 1, "{a}");
            assert_eq!(content[0]["type"], "text", "{a}");
            let text = content[0]["text"].as_str().unwrap();
            assert!(text.contains(&format!("\"{argument}\"")), "{a}: {text}");
        }
        // An unknown tool is a JSON-RPC error answered by the server (-32602),
        // not a transport failure.
        match within(
            10,
            "an unknown tool",
            client.call_tool(call("drop_tables", json!({}))),
        )
        .await
        {
            Err(rmcp::ServiceError::McpError(e)) => assert_eq!(e.code.0, -32602, "{e:?}"),
            other => panic!("expected a -32602 error from the server, got {other:?}"),
        }
        within(10, "cancel", client.cancel()).await.unwrap();
    });
}

/// Exactly one text item, not empty and short (docs/api.md: "plus a short text").
#[track_caller]
fn assert_short_text(content: &impl serde::Serialize) {
    let content = serde_json::to_value(content).unwrap();
    let items = content.as_array().expect("a content list");
    assert_eq!(items.len(), 1, "{content}");
    assert_eq!(items[0]["type"], "text", "{content}");
    let text = items[0]["text"].as_str().expect("a text");
    assert!(!text.trim().is_empty() && text.len() <= 500, "{text:?}");
}

fn post(s: &Server, body: &str, headers: &[(&str, &str)]) -> crate::util::server::Reply {
    let length = body.len().to_string();
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Length", length.as_str()),
    ];
    all.extend_from_slice(headers);
    raw_request_with_body(s.addr, "POST", "/mcp", &all, body.as_bytes())
}

fn call(id: u32, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}).to_string()
}

#[test]
fn rest_and_mcp_share_one_quota_and_handshakes_do_not_count() {
    let w = seeded();
    let s = Server::start(&w, &[], &[]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    for n in 0..20u32 {
        // Handshakes, pings and listings in between change nothing.
        assert_eq!(post(&s, &init, &[]).status, 200);
        assert_eq!(
            post(
                &s,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                &[]
            )
            .status,
            202
        );
        assert_eq!(
            post(&s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &[]).status,
            200
        );
        assert_eq!(
            post(&s, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#, &[]).status,
            200
        );
        let remaining = (19 - n).to_string();
        let reply = if n % 2 == 0 {
            s.get("/openapi/v1/records")
        } else if n % 3 == 0 {
            // Invalid arguments still count.
            post(
                &s,
                &call(10 + n, "list_resets", json!({"pageSize": 0})),
                &[],
            )
        } else {
            post(&s, &call(10 + n, "get_latest_reset", json!({})), &[])
        };
        assert_eq!(reply.status, 200, "{n}: {}", reply.text());
        assert_eq!(
            reply.header("x-ratelimit-remaining"),
            Some(remaining.as_str()),
            "{n}"
        );
    }
    let rest = s.get("/openapi/v1/records/latest");
    assert_eq!(rest.status, 429);
    let mcp = post(&s, &call(99, "list_resets", json!({})), &[]);
    assert_eq!(mcp.status, 429);
    let retry = mcp.header("retry-after").unwrap().to_owned();
    assert_eq!(mcp.header("x-ratelimit-remaining"), Some("0"));
    let body = mcp.json();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 99);
    assert_eq!(body["error"]["code"], -32029);
    assert_eq!(body["error"]["data"]["retryAfter"].to_string(), retry);
    // The handshake still works over quota.
    let hello = post(&s, &init, &[]).json();
    assert_eq!(hello["result"]["protocolVersion"], "2025-06-18");
}

#[test]
fn version_negotiation_and_protocol_errors() {
    let w = seeded();
    let s = Server::start(&w, &["--mcp-allow-origin", "https://agent.example"], &[]);
    let init = |v: &str| {
        json!({"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": {
            "protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        .to_string()
    };
    for (asked, got) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let reply = post(&s, &init(asked), &[]).json();
        assert_eq!(reply["result"]["protocolVersion"], got, "{asked}");
        assert_eq!(reply["id"], "a");
    }
    let malformed = post(&s, "{not json", &[]);
    assert_eq!(malformed.status, 400);
    assert_eq!(malformed.json()["error"]["code"], -32700);
    let batch = post(&s, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, &[]);
    assert_eq!(batch.json()["error"]["code"], -32600);
    let no_method = post(&s, r#"{"jsonrpc":"2.0","id":4}"#, &[]);
    assert_eq!(no_method.json()["error"]["code"], -32600);
    assert_eq!(no_method.json()["id"], 4);
    let unknown_method = post(
        &s,
        r#"{"jsonrpc":"2.0","id":5,"method":"resources/list"}"#,
        &[],
    );
    assert_eq!(unknown_method.status, 200);
    assert_eq!(unknown_method.json()["error"]["code"], -32601);
    let unknown_tool = post(&s, &call(6, "drop_tables", json!({})), &[]);
    assert_eq!(unknown_tool.json()["error"]["code"], -32602);
    assert_eq!(
        unknown_tool.header("x-ratelimit-remaining"),
        None,
        "a rejected protocol request is not counted"
    );
    // DNS-rebinding protection: a foreign Origin is refused, an allowed one passes.
    let foreign = post(
        &s,
        r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
        &[("Origin", "https://evil.example")],
    );
    assert_eq!(foreign.status, 403);
    assert_eq!(foreign.json()["error"]["code"], -32031);
    let allowed = post(
        &s,
        r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#,
        &[("Origin", "https://agent.example")],
    );
    assert_eq!(allowed.status, 200);
    assert_eq!(allowed.json()["result"], json!({}));
    // GET /mcp: no SSE stream.
    let get = raw_request(s.addr, "GET", "/mcp", &[]);
    assert_eq!(get.status, 405);
    assert_eq!(get.header("allow"), Some("POST, OPTIONS"));
    // A body over the limit.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000)
    );
    assert_eq!(post(&s, &big, &[]).status, 413);
}

/// `POST /mcp` with `Origin` header lines given as raw bytes; returns the status.
fn post_with_origins(s: &Server, origins: &[&[u8]]) -> u16 {
    use std::io::{Read, Write};
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_latest_reset","arguments":{}}}"#;
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        s.addr,
        body.len()
    )
    .into_bytes();
    for origin in origins {
        request.extend_from_slice(b"Origin: ");
        request.extend_from_slice(origin);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"\r\n");
    request.extend_from_slice(body);
    let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
    stream.write_all(&request).unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).unwrap();
    String::from_utf8_lossy(&reply[9..12]).parse().unwrap()
}

#[test]
fn the_origin_check_fails_closed() {
    let w = seeded();
    let s = Server::start(
        &w,
        &[
            "--mcp-allow-origin",
            "https://agent.example,https://other.example",
        ],
        &[],
    );
    assert_eq!(post_with_origins(&s, &[b"https://agent.example"]), 200);
    assert_eq!(post_with_origins(&s, &[b"http://evil.example"]), 403);
    assert_eq!(
        post_with_origins(&s, &[b"http://evil.example\xff"]),
        403,
        "an unreadable Origin is refused, never taken as absent"
    );
    assert_eq!(
        post_with_origins(&s, &[b"https://agent.example", b"http://evil.example"]),
        403,
        "several Origin lines: refused unless every one is allowed"
    );
    assert_eq!(
        post_with_origins(&s, &[b"https://agent.example", b"https://other.example"]),
        200
    );
    assert_eq!(post_with_origins(&s, &[]), 200, "no Origin: not a browser");
}

/// Issue 39, item 12: a tool's text agrees with its structured result and
/// says why that record is first: "Next scheduled reset" only for the
/// soonest pending schedule (`kind=all`), never for the schedule with the
/// latest date that `kind=reset_scheduled` puts first.
#[test]
fn the_latest_tools_text_names_the_record_it_returns_for_what_it_is() {
    let w = World::new();
    for at in ["2026-12-01 12:00 +00:00", "2026-12-10 12:00 +00:00"] {
        w.run(&["--now", NOW, "record", "schedule", "--operator", "--at", at])
            .success();
    }
    let s = Server::start(&w, &["--no-rate-limit", "--now", NOW], &[]);
    let latest = |kind: &str| {
        let reply = post(&s, &call(1, "get_latest_reset", json!({"kind": kind})), &[]);
        let result = reply.json()["result"].clone();
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        let data = result["structuredContent"]["data"].clone();
        (text, data)
    };
    let (text, data) = latest("all");
    assert_eq!(
        data["scheduleWindow"]["startAt"],
        "2026-12-01T12:00:00.000Z"
    );
    assert!(
        text.starts_with("Next scheduled reset: ") && text.contains(data["id"].as_str().unwrap()),
        "{text}"
    );
    let (text, data) = latest("reset_scheduled");
    assert_eq!(
        data["scheduleWindow"]["startAt"],
        "2026-12-10T12:00:00.000Z"
    );
    assert!(
        !text.contains("Next scheduled reset") && text.contains(data["id"].as_str().unwrap()),
        "{text}"
    );
    assert!(text.contains("latest date"), "{text}");
}

/// Issue 50, item 9: every error reply of `/mcp` carries `"id"` (`null`
/// when the request's id is unknown), as JSON-RPC 2.0 requires, so the
/// official Python SDK shows the server's own message: without it, it
/// showed `-32603 Server returned an error response` for a refused
/// origin and a body too large.
#[test]
fn the_python_sdk_shows_each_error_replys_own_message() {
    let w = seeded();
    let s = Server::start(&w, &["--no-rate-limit"], &[]);
    let out = std::process::Command::new(crate::util::python())
        .arg(crate::util::repo_root().join("tests/mcp_python_client.py"))
        .arg(s.url("/mcp"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("ModuleNotFoundError"),
        "the official MCP Python SDK is not installed: run `make test-deps` (mcp, pinned in \
         tests/requirements.txt):\n{stderr}"
    );
    assert!(out.status.success(), "tests/mcp_python_client.py: {stderr}");
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        shown,
        json!({
            "refusedOrigin": {
                "code": -32031,
                "message": "origin \"https://evil.example\" is not allowed (see --mcp-allow-origin)",
            },
            "oversizedBody": {
                "code": -32600,
                "message": "the request body must be at most 65536 bytes",
            },
            "notJson": {
                "status": 400,
                "id": null,
                "code": -32700,
                "message": "parse error: key must be a string at line 1 column 2",
            },
        })
    );
    // The same on the wire, for any client: "id" is there, null.
    let refused = post(
        &s,
        r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
        &[("Origin", "https://evil.example")],
    );
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32031,
            "message": "origin \"https://evil.example\" is not allowed (see --mcp-allow-origin)"}})
    );
}
