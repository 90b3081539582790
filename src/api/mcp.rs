//! `POST /mcp`: the Model Context Protocol over Streamable HTTP, answering
//! with `application/json` (no SSE stream), one route of the route table.
//!
//! The official Rust SDK (`rmcp`, no default features) supplies the model
//! types (initialize, tools, call results, JSON-RPC errors), so the wire
//! shapes follow the SDK; the dispatch is ours because the server is
//! stateless and must share the REST quota per request, which the SDK's
//! session-based server transport does not do.
//!
//! Quota (section 8): an admitted `tools/call` counts once, even with
//! invalid (or repeated) arguments; `initialize`, notifications, `ping`,
//! `tools/list` and rejected protocol requests do not count (they pass the
//! flood guard, applied to every uncounted answer in `routes`).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ErrorCode, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, ProtocolVersion,
    RequestId, ServerCapabilities, Tool, ToolAnnotations,
};
use serde_json::{json, Value};
use warp::http::{header, HeaderValue, StatusCode};
use warp::reply::Response;

use super::admission::Answer;
use super::handlers::Data;
use super::handlers::{latest_envelope, list_envelope};
use super::jsonrpc::{rpc_error, rpc_result, RpcAnswer};
pub use super::jsonrpc::{RATE_LIMITED, RATE_LIMIT_UNAVAILABLE};
use super::responses::json as json_response;
use crate::limit::QuotaPolicy;
use crate::query::{latest_query_from_args, list_query_from_args};
use warp::hyper::body::Bytes;

/// Protocol versions this server speaks, newest first.
pub const SUPPORTED_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// JSON-RPC error code of a refused `Origin` (HTTP 403).
pub const ORIGIN_NOT_ALLOWED: i32 = -32031;
/// Largest accepted request body.
pub const MAX_BODY_BYTES: u64 = 64 * 1024;

/// The version to answer an `initialize` with: the requested one when we
/// speak it, else our newest (a client asking for a newer one gets ours).
pub fn negotiate(requested: &str) -> &'static str {
    SUPPORTED_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(SUPPORTED_VERSIONS[0])
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas are objects"),
    }
}

/// What the tools and instructions say about the quota: the configured one, or none.
fn quota_text(policy: Option<QuotaPolicy>) -> String {
    match policy {
        Some(p) => format!(
            "Counts against the quota shared with the REST API: {} calls per {} s per client (sliding window). \
             To watch for changes without spending it, poll the REST endpoint with If-None-Match (a 304 is not counted).",
            p.limit, p.window_seconds
        ),
        None => "There is no call quota on this server.".to_owned(),
    }
}

/// The two read-only tools and their argument and result schemas; the
/// descriptions state `policy`, the quota this server was started with.
pub fn tools(policy: Option<QuotaPolicy>) -> Vec<Tool> {
    let quota = quota_text(policy);
    let kind = json!({"type": "string", "enum": ["all", "reset_scheduled", "reset_completed"], "default": "all",
        "description": "all: the live list (fulfilled schedules omitted); reset_scheduled: schedules incl. fulfilled and elapsed history; reset_completed: completions"});
    let result = |data: Value| {
        json!({"type": "object", "required": ["data", "meta"], "properties": {
            "data": data,
            "meta": {"type": "object", "description": "generatedAt, lastSuccessfulCheckAt and, in upstream-sync mode, dataSource (as the REST API)"}
        }})
    };
    let read_only = ToolAnnotations::new().read_only(true);
    vec![
        Tool::new(
            "get_latest_reset",
            format!("The newest matching reset record (the first of the list for that kind), exactly as GET {}. {quota}", crate::paths::LATEST),
            object(json!({"type": "object", "properties": {"kind": kind}, "additionalProperties": false})),
        )
        .with_raw_output_schema(object(result(json!({"type": ["object", "null"], "description": "a Record, or null when nothing matches"}))))
        .with_annotations(read_only.clone()),
        Tool::new(
            "list_resets",
            format!("A page of reset records, exactly as GET {}. {quota}", crate::paths::RECORDS),
            object(json!({"type": "object", "properties": {
                "kind": kind,
                "page": {"type": "integer", "minimum": 1, "maximum": 4294967295u64, "default": 1},
                "pageSize": {"type": "integer", "minimum": 1, "maximum": 10, "default": 10}
            }, "additionalProperties": false})),
        )
        .with_raw_output_schema(object(result(json!({"type": "object", "description": "a Page: items, page, pageSize, total, totalPages, hasNext"}))))
        .with_annotations(read_only),
    ]
}

/// Reads a request body of at most [`MAX_BODY_BYTES`], with or without a
/// `Content-Length` (chunked HTTP/1.1, HTTP/2); a larger one is a 413.
pub(crate) async fn read_body<B>(content_length: Option<&str>, body: B) -> Result<Bytes, Response>
where
    B: http_body::Body<Data = Bytes>,
{
    use http_body_util::BodyExt;
    let too_large = || {
        rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST.0,
            format!("the request body must be at most {MAX_BODY_BYTES} bytes"),
            None,
        )
    };
    let declared = content_length.and_then(|l| l.trim().parse::<u64>().ok());
    if declared.is_some_and(|l| l > MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let mut collected = Vec::with_capacity(declared.unwrap_or(1024).min(MAX_BODY_BYTES) as usize);
    let mut body = std::pin::pin!(body);
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                ErrorCode::INVALID_REQUEST.0,
                "the request body could not be read".into(),
                None,
            ));
        };
        // Trailers carry no body bytes.
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        if (collected.len() + chunk.len()) as u64 > MAX_BODY_BYTES {
            return Err(too_large());
        }
        collected.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(collected))
}

/// The 500 of a request whose handling panicked, for the request id in `body` if it has one.
pub fn internal_error(body: &[u8]) -> Response {
    let id = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| serde_json::from_value::<RequestId>(v.get("id")?.clone()).ok());
    rpc_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        id,
        ErrorCode::INTERNAL_ERROR.0,
        "internal error".into(),
        None,
    )
}

/// Why a request's `Origin` headers are refused, if they are
/// (DNS-rebinding protection): every one of them must be allowed, and one
/// that is not readable text never is. No `Origin` at all is allowed.
pub fn refused_origin(allowed: &[String], origins: &[HeaderValue]) -> Option<String> {
    origins.iter().find_map(|value| match value.to_str() {
        Ok(text) if allowed.iter().any(|a| a == text) => None,
        Ok(text) => Some(format!(
            "origin {text:?} is not allowed (see --mcp-allow-origin)"
        )),
        Err(_) => Some(format!(
            "origin {:?} is not readable text and not allowed (see --mcp-allow-origin)",
            String::from_utf8_lossy(value.as_bytes())
        )),
    })
}

/// The 500 of a panic where no request id is known.
pub fn internal_error_without_id() -> Response {
    internal_error(b"")
}

/// The first key given twice in `params.arguments` of a request body, if
/// any (a JSON object keeps the last of duplicate keys; REST refuses a
/// repeated query parameter, so the tools refuse a repeated argument).
fn duplicate_argument(body: &[u8]) -> Option<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    #[derive(serde::Deserialize)]
    struct Probe {
        params: Option<ProbeParams>,
    }
    #[derive(serde::Deserialize)]
    struct ProbeParams {
        arguments: Option<FirstDuplicate>,
    }
    struct FirstDuplicate(Option<String>);
    impl<'de> serde::Deserialize<'de> for FirstDuplicate {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Keys;
            impl<'de> Visitor<'de> for Keys {
                type Value = FirstDuplicate;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut seen = std::collections::HashSet::new();
                    let mut first = None;
                    while let Some(key) = map.next_key::<String>()? {
                        map.next_value::<IgnoredAny>()?;
                        if !seen.insert(key.clone()) && first.is_none() {
                            first = Some(key);
                        }
                    }
                    Ok(FirstDuplicate(first))
                }
            }
            d.deserialize_map(Keys)
        }
    }
    serde_json::from_slice::<Probe>(body)
        .ok()?
        .params?
        .arguments?
        .0
}

/// A request the JSON-RPC envelope refuses.
struct BadRequest {
    id: Option<RequestId>,
    code: i32,
    message: String,
}

impl BadRequest {
    fn response(self) -> Response {
        rpc_error(
            StatusCode::BAD_REQUEST,
            self.id,
            self.code,
            self.message,
            None,
        )
    }
}

/// The envelope of a JSON-RPC request: its id (absent for a
/// notification), its method and the whole message; a malformed one is
/// a [`BadRequest`] (answered 400, with the JSON-RPC error naming the problem).
fn read_request(body: &[u8]) -> Result<(Option<RequestId>, String, JsonObject), BadRequest> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => {
            return Err(BadRequest {
                id: None,
                code: ErrorCode::PARSE_ERROR.0,
                message: format!("parse error: {e}"),
            })
        }
    };
    let Value::Object(message) = value else {
        let why = if value.is_array() {
            "batch requests are not supported"
        } else {
            "a request must be a JSON object"
        };
        return Err(BadRequest {
            id: None,
            code: ErrorCode::INVALID_REQUEST.0,
            message: why.into(),
        });
    };
    let id: Option<RequestId> = match message.get("id") {
        None => None,
        Some(raw) => match serde_json::from_value(raw.clone()) {
            Ok(id) => Some(id),
            Err(_) => {
                return Err(BadRequest {
                    id: None,
                    code: ErrorCode::INVALID_REQUEST.0,
                    message: "id must be a string or an integer".into(),
                })
            }
        },
    };
    let method = match (
        message.get("jsonrpc").and_then(Value::as_str),
        message.get("method").and_then(Value::as_str),
    ) {
        (Some("2.0"), Some(method)) => method.to_owned(),
        _ => {
            return Err(BadRequest {
                id,
                code: ErrorCode::INVALID_REQUEST.0,
                message: "not a JSON-RPC 2.0 request (jsonrpc \"2.0\" and a method are required)"
                    .into(),
            })
        }
    };
    Ok((id, method, message))
}

/// One `POST /mcp`; `origins` are the request's `Origin` header values.
/// Every answer is marked as JSON-RPC (for the flood guard's 429); only an
/// admitted or refused `tools/call` is the quota's.
pub(crate) fn handle<'a>(
    data: &'a Data,
    allowed_origins: &[String],
    origins: Vec<HeaderValue>,
    protocol_version: Option<&str>,
    body: &Bytes,
) -> Answer<'a> {
    if let Some(why) = refused_origin(allowed_origins, &origins) {
        return Answer::Uncounted(rpc_error(
            StatusCode::FORBIDDEN,
            None,
            ORIGIN_NOT_ALLOWED,
            why,
            None,
        ));
    }
    let (id, method, message) = match read_request(body) {
        Ok(request) => request,
        Err(refused) => return Answer::Uncounted(refused.response()),
    };
    // The transport specification: an invalid or unsupported version header is a 400.
    if let Some(version) = protocol_version.filter(|v| !SUPPORTED_VERSIONS.contains(v)) {
        return Answer::Uncounted(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST.0,
            format!(
                "unsupported MCP-Protocol-Version {version:?} (supported: {})",
                SUPPORTED_VERSIONS.join(", ")
            ),
            None,
        ));
    }
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let Some(id) = id else {
        // A notification (`notifications/initialized`, …): accepted, nothing to answer.
        let mut response = json_response(StatusCode::ACCEPTED, Vec::new());
        response.headers_mut().remove(header::CONTENT_TYPE);
        response.extensions_mut().insert(RpcAnswer(None));
        return Answer::Uncounted(response);
    };
    let policy = data.quota().limiter.policy();
    Answer::Uncounted(match method.as_str() {
        "initialize" => initialize(id, params, policy),
        "ping" => rpc_result(id, json!({})),
        "tools/list" => rpc_result(id, ListToolsResult::with_all_items(tools(policy))),
        "tools/call" => return call_tool(data, id, params, duplicate_argument(body)),
        other => rpc_error(
            StatusCode::OK,
            Some(id),
            ErrorCode::METHOD_NOT_FOUND.0,
            format!("method not found: {other}"),
            None,
        ),
    })
}

/// Capabilities: tools only (the list never changes while running).
fn tools_capability() -> ServerCapabilities {
    serde_json::from_value(json!({"tools": {"listChanged": false}}))
        .expect("a valid capabilities object")
}

fn initialize(id: RequestId, params: Value, policy: Option<QuotaPolicy>) -> Response {
    let params: InitializeRequestParams = match serde_json::from_value(params) {
        Ok(params) => params,
        Err(e) => {
            return rpc_error(
                StatusCode::OK,
                Some(id),
                ErrorCode::INVALID_PARAMS.0,
                format!("invalid initialize params: {e}"),
                None,
            )
        }
    };
    let version = negotiate(params.protocol_version.as_str());
    let mut result = InitializeResult::new(tools_capability())
        .with_instructions(match policy {
            Some(p) => format!("Read-only records of announced and completed usage-limit resets. Tools share the REST quota ({} calls per {} s per client, sliding window): cache answers and honour retryAfter.", p.limit, p.window_seconds),
            None => "Read-only records of announced and completed usage-limit resets. There is no call quota on this server; cache answers all the same.".to_owned(),
        });
    result.protocol_version =
        serde_json::from_value(json!(version)).unwrap_or(ProtocolVersion::V_2025_11_25);
    result.server_info = Implementation::new("resetctl", env!("CARGO_PKG_VERSION"));
    rpc_result(id, result)
}

fn call_tool(data: &Data, id: RequestId, params: Value, duplicate: Option<String>) -> Answer<'_> {
    let params: CallToolRequestParams = match serde_json::from_value(params) {
        Ok(params) => params,
        Err(e) => {
            return Answer::Uncounted(rpc_error(
                StatusCode::OK,
                Some(id),
                ErrorCode::INVALID_PARAMS.0,
                format!("invalid tools/call params: {e}"),
                None,
            ))
        }
    };
    let name = params.name.to_string();
    crate::metrics::mcp_call(&name);
    if name != "get_latest_reset" && name != "list_resets" {
        // A protocol error, not an admitted call: not counted.
        return Answer::Uncounted(rpc_error(
            StatusCode::OK,
            Some(id),
            ErrorCode::INVALID_PARAMS.0,
            format!("unknown tool: {name}"),
            None,
        ));
    }
    let arguments = params.arguments.unwrap_or_default();
    Answer::ToolCall {
        id,
        respond: Box::new(move |id| {
            let result = match duplicate {
                Some(key) => CallToolResult::error(vec![ContentBlock::text(format!(
                    "argument {key:?} is given more than once"
                ))]),
                None => run_tool(data, &name, arguments),
            };
            rpc_result(id, result)
        }),
    }
}

/// A tool call's validated arguments.
enum ToolQuery {
    Latest(crate::query::LatestQuery),
    List(crate::query::ListQuery),
}

/// Runs a tool: the REST envelope's data and meta as structured content,
/// plus a short text; bad arguments are a tool error naming the argument.
fn run_tool(data: &Data, name: &str, args: JsonObject) -> CallToolResult {
    // The test hook of the REST handlers, for tools: these exact arguments panic.
    if let Ok(args) = serde_json::to_string(&args) {
        crate::testhook::panic_if_asked(&args);
    }
    let failed = |text: String| CallToolResult::error(vec![ContentBlock::text(text)]);
    // Arguments first (a bad one is the caller's error even without data), then the data.
    let query = if name == "get_latest_reset" {
        latest_query_from_args(&args).map(ToolQuery::Latest)
    } else {
        list_query_from_args(&args).map(ToolQuery::List)
    };
    let query = match query {
        Ok(query) => query,
        Err(e) => return failed(e.to_string()),
    };
    let guard = data.view.load();
    let Some(view) = guard.as_deref() else {
        return failed("no published snapshot exists yet (data_unavailable)".into());
    };
    let (envelope, latest_of) = match query {
        ToolQuery::Latest(q) => (latest_envelope(view, q), Some(q.kind)),
        ToolQuery::List(q) => (list_envelope(view, q), None),
    };
    let mut value: Value = serde_json::from_slice(&envelope).expect("our own JSON");
    let structured = json!({"data": value["data"].take(), "meta": value["meta"].take()});
    let text = match latest_of {
        Some(kind) => describe_latest(&structured["data"], kind),
        None => describe_page(&structured["data"]),
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

fn describe_record(r: &Value) -> String {
    let s = |k: &str| r[k].as_str().unwrap_or("-").to_owned();
    if r["kind"] == "reset_scheduled" {
        let window = &r["scheduleWindow"];
        let when = if window.is_null() {
            "no window known".to_owned()
        } else {
            format!(
                "window {} – {}",
                s_of(&window["startAt"]),
                s_of(&window["endAt"])
            )
        };
        format!(
            "scheduled reset {} ({}, {when})",
            s("id"),
            s("scheduleState")
        )
    } else {
        format!("completed reset {} at {}", s("id"), s("completedAt"))
    }
}

fn s_of(v: &Value) -> String {
    v.as_str().unwrap_or("-").to_owned()
}

/// What the first record of `kind`'s order is, in words that say why it
/// is first: only `all` puts the soonest pending schedule first (the next
/// reset); `reset_scheduled` is ordered by date, newest first, so its first
/// is the schedule with the latest date, which need not be the next.
fn describe_latest(data: &Value, kind: crate::model::KindFilter) -> String {
    use crate::model::KindFilter;
    if data.is_null() {
        return "No matching reset record.".into();
    }
    let prefix = match kind {
        KindFilter::All if data["scheduleState"] == "pending" => "Next scheduled reset",
        KindFilter::All => "Latest record",
        KindFilter::Scheduled => {
            "The schedule with the latest date (not always the next reset: ask kind=all for that)"
        }
        KindFilter::Completed => "Latest completed reset",
    };
    format!("{prefix}: {}", describe_record(data))
}

fn describe_page(page: &Value) -> String {
    let items = page["items"].as_array().cloned().unwrap_or_default();
    let mut text = format!(
        "{} of {} matching record(s), page {} of {}{}",
        items.len(),
        page["total"],
        page["page"],
        page["totalPages"],
        if page["hasNext"] == true {
            " (more pages)"
        } else {
            ""
        }
    );
    for r in &items {
        text.push_str("\n- ");
        text.push_str(&describe_record(r));
    }
    text
}
