//! The public paths of the HTTP API, each named once: the route table
//! (`api::routes`) gives each its methods, metrics label and admission
//! class, and the pages, feeds and tool descriptions that link to one use
//! its name here. `tests/architecture.rs` checks that no other code of the
//! library spells one out.

/// A page of records.
pub const RECORDS: &str = "/openapi/v1/records";
/// The newest record of a kind.
pub const LATEST: &str = "/openapi/v1/records/latest";
/// The live record stream (SSE).
pub const STREAM: &str = "/openapi/v1/records/stream";
/// The Atom feed.
pub const ATOM: &str = "/openapi/v1/records.atom";
/// The iCalendar feed.
pub const ICS: &str = "/openapi/v1/records.ics";
/// The OpenAPI document.
pub const OPENAPI: &str = "/openapi/v1/openapi.json";
/// The API's documentation page, in the language `Accept-Language` prefers.
pub const DOCS: &str = "/openapi/v1/docs";
/// The documentation page in English.
pub const DOCS_EN: &str = "/openapi/v1/docs/en";
/// The documentation page in Chinese.
pub const DOCS_ZH: &str = "/openapi/v1/docs/zh";
/// The agent skill file.
pub const SKILL: &str = "/openapi/v1/skill.md";
/// The status badge.
pub const BADGE: &str = "/openapi/v1/badge.json";
/// The mirrored public status feed.
pub const STATUS_FEED: &str = "/api/status.json";
/// Liveness and readiness.
pub const HEALTHZ: &str = "/healthz";
/// The MCP endpoint (JSON-RPC over HTTP).
pub const MCP: &str = "/mcp";
