//! MCP promises of docs/api.md at their edges: the 64 KiB body limit at
//! exactly 65,536 and 65,537 bytes, and the Origin check with no
//! allow-list and through `RESETCTL_MCP_ALLOW_ORIGIN`.

use serde_json::json;

use crate::headers::mcp;
use crate::util::server::Server;
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

/// A `ping` padded to exactly `size` bytes.
fn ping_of_size(size: usize) -> String {
    let empty = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""}}"#;
    let body = empty.replace(
        r#""pad":"""#,
        &format!(r#""pad":"{}""#, "x".repeat(size - empty.len())),
    );
    assert_eq!(body.len(), size);
    body
}

#[test]
fn the_body_limit_is_exactly_64_kib() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    let s = Server::start(&w, &[], &[]);
    let at_limit = mcp(s.addr, &ping_of_size(65_536), &[]);
    assert_eq!(at_limit.status, 200, "{}", at_limit.text());
    assert_eq!(at_limit.json()["result"], json!({}));
    let over = mcp(s.addr, &ping_of_size(65_537), &[]);
    assert_eq!(over.status, 413, "{}", over.text());
}

#[test]
fn with_no_allow_list_any_origin_is_refused_and_none_is_fine() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    let s = Server::start(&w, &[], &[]);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    for origin in [
        "https://agent.example",
        "http://127.0.0.1",
        &format!("http://{}", s.addr),
        "null",
    ] {
        let reply = mcp(s.addr, ping, &[("Origin", origin)]);
        assert_eq!(reply.status, 403, "{origin}");
        assert_eq!(reply.json()["error"]["code"], -32031, "{origin}");
    }
    let no_origin = mcp(s.addr, ping, &[]);
    assert_eq!(no_origin.status, 200);
    assert_eq!(no_origin.json()["result"], json!({}));
}

#[test]
fn the_allow_list_can_come_from_the_environment() {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    let s = Server::start(
        &w,
        &[],
        &[("RESETCTL_MCP_ALLOW_ORIGIN", "https://agent.example")],
    );
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let allowed = mcp(s.addr, ping, &[("Origin", "https://agent.example")]);
    assert_eq!(allowed.status, 200, "{}", allowed.text());
    let foreign = mcp(s.addr, ping, &[("Origin", "https://evil.example")]);
    assert_eq!(foreign.status, 403);
    assert_eq!(foreign.json()["error"]["code"], -32031);
}
