//! One handler per route: parse, call one query function, build the body.
//!
//! Data handlers read the published view through an `arc-swap` guard (no
//! lock shared with reload) and write the envelope around pre-serialised
//! records, so a request costs O(pageSize).

use std::io::Write;
use std::net::IpAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use warp::http::{header, HeaderMap, HeaderValue, StatusCode};
use warp::reply::Response;

use super::assets::{DOCS_HTML, OPENAPI_JSON, SKILL_MD};
use super::errors::ApiError;
use super::responses::{json, with_body};
use super::server::AppState;
use crate::limit::{QuotaDecision, QuotaPolicy};
use crate::model::Timestamp;
use crate::query::{parse_latest_query, parse_list_query, LatestQuery, ListQuery, PublishedView};

/// The paths this server answers (for 405 versus 404).
pub const KNOWN_PATHS: &[&str] = &[
    "/openapi/v1/records/latest",
    "/openapi/v1/records",
    "/openapi/v1/openapi.json",
    "/openapi/v1/docs",
    "/openapi/v1/skill.md",
    "/healthz",
];

/// Runs a handler; a panic becomes a 500 `internal_error` with no detail.
fn guarded(f: impl FnOnce() -> Response) -> Response {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        tracing::error!("a request handler panicked; answered 500");
        ApiError::Internal.response()
    })
}

/// The test hook: a data request whose raw query equals the configured text panics.
fn maybe_panic(raw_query: &str) {
    crate::testhook::panic_if_asked(raw_query);
}

/// What the quota says about one request, with what its answer needs.
pub(crate) enum Admission {
    /// Counted (or limiting is off: `None`); the headers to add.
    Admitted(Option<(QuotaPolicy, u32, Timestamp)>),
    /// Refused: answer 429.
    Limited {
        /// The policy, for the headers.
        policy: QuotaPolicy,
        /// When the oldest counted request leaves the window.
        reset_at: Timestamp,
        /// Whole seconds to wait.
        retry_after: u64,
    },
    /// The quota store cannot answer: fail closed with 503.
    Unavailable,
}

/// Counts one request of `client` against the quota.
pub(crate) async fn admit(state: &AppState, client: IpAddr) -> Admission {
    let decision = match state.limiter.check(client, state.clock.now()).await {
        Ok(decision) => decision,
        Err(e) => {
            // Every refused request would be a line: warn at most every 10 s.
            static LAST_WARNED: std::sync::atomic::AtomicI64 =
                std::sync::atomic::AtomicI64::new(i64::MIN);
            let now = state.clock.now().as_millis();
            let last = LAST_WARNED.load(std::sync::atomic::Ordering::Relaxed);
            if now.saturating_sub(last) >= 10_000 {
                LAST_WARNED.store(now, std::sync::atomic::Ordering::Relaxed);
                tracing::warn!(
                    "answering 503 rate_limit_unavailable: {} (logged at most every 10 s)",
                    e.0
                );
            } else {
                tracing::debug!("answering 503 rate_limit_unavailable: {}", e.0);
            }
            return Admission::Unavailable;
        }
    };
    match (decision, state.limiter.policy()) {
        (
            Some(QuotaDecision::Admitted {
                remaining,
                reset_at,
            }),
            Some(policy),
        ) => Admission::Admitted(Some((policy, remaining, reset_at))),
        (
            Some(QuotaDecision::Limited {
                reset_at,
                retry_after,
            }),
            Some(policy),
        ) => Admission::Limited {
            policy,
            reset_at,
            retry_after,
        },
        _ => Admission::Admitted(None),
    }
}

/// Counts the request against the client's quota, then answers with
/// `respond` (admitted, headers added) or the 429/503 of the quota.
/// Admitted requests count even when `respond` ends in 422, 500 or 503.
async fn counted(state: &AppState, client: IpAddr, respond: impl FnOnce() -> Response) -> Response {
    let mut response = quota_answer(state, client, respond).await;
    response.extensions_mut().insert(QuotaDecided);
    response
}

async fn quota_answer(
    state: &AppState,
    client: IpAddr,
    respond: impl FnOnce() -> Response,
) -> Response {
    match admit(state, client).await {
        Admission::Unavailable => ApiError::RateLimitUnavailable.response(),
        Admission::Limited {
            policy,
            reset_at,
            retry_after,
        } => {
            let mut response = ApiError::RateLimited { retry_after }.response();
            quota_headers(&mut response, policy, 0, reset_at);
            response
        }
        Admission::Admitted(headers) => {
            let mut response = guarded(respond);
            if let Some((policy, remaining, reset_at)) = headers {
                quota_headers(&mut response, policy, remaining, reset_at);
            }
            response
        }
    }
}

/// The `X-RateLimit-*` headers of section 8.
pub(crate) fn quota_headers(
    response: &mut Response,
    policy: QuotaPolicy,
    remaining: u32,
    reset_at: Timestamp,
) {
    let headers = response.headers_mut();
    headers.insert("x-ratelimit-limit", HeaderValue::from(policy.limit));
    headers.insert("x-ratelimit-remaining", HeaderValue::from(remaining));
    headers.insert(
        "x-ratelimit-window",
        HeaderValue::from(policy.window_seconds),
    );
    headers.insert(
        "x-ratelimit-reset",
        HeaderValue::from_str(&reset_at.to_string()).expect("timestamps are ASCII"),
    );
}

/// Marks an answer the quota decided (admitted, refused 429 or failed closed
/// 503): it is the quota's business, not the flood guard's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuotaDecided;

/// Marks an answer of `/mcp`: its flood-guard 429 is a JSON-RPC error for this request id.
#[derive(Clone, Debug)]
pub(crate) struct RpcAnswer(pub Option<rmcp::model::RequestId>);

/// The one flood guard: every answer the quota did not decide (docs,
/// `/healthz`, OPTIONS, 404/405, MCP handshakes and every refused MCP
/// request, whatever route made it) takes a token from the client's burst
/// bucket, or is replaced by a 429 that never touches the quota.
pub fn flood_guarded(state: &AppState, client: IpAddr, response: Response) -> Response {
    if response.extensions().get::<QuotaDecided>().is_some() {
        return response;
    }
    match state.flood.as_ref().map(|f| f.check(client)) {
        Some(Err(retry_after)) => match response.extensions().get::<RpcAnswer>() {
            Some(RpcAnswer(id)) => super::mcp::flood_limited(id.clone(), retry_after),
            None => ApiError::RateLimited { retry_after }.response(),
        },
        _ => response,
    }
}

/// `GET /openapi/v1/records/latest`.
pub async fn latest(raw_query: String, client: IpAddr, state: Arc<AppState>) -> Response {
    counted(&state, client, || latest_body(&raw_query, &state)).await
}

/// `GET /openapi/v1/records`.
pub async fn list(raw_query: String, client: IpAddr, state: Arc<AppState>) -> Response {
    crate::testhook::hold(&raw_query).await;
    counted(&state, client, || list_body(&raw_query, &state)).await
}

fn latest_body(raw_query: &str, state: &AppState) -> Response {
    {
        maybe_panic(raw_query);
        let query = match parse_latest_query(raw_query) {
            Ok(query) => query,
            Err(e) => return ApiError::InvalidQuery(e.to_string()).response(),
        };
        let guard = state.view.load();
        let Some(view) = guard.as_deref() else {
            return ApiError::DataUnavailable.response();
        };
        json(StatusCode::OK, latest_envelope(view, query))
    }
}

fn list_body(raw_query: &str, state: &AppState) -> Response {
    {
        maybe_panic(raw_query);
        let query = match parse_list_query(raw_query) {
            Ok(query) => query,
            Err(e) => return ApiError::InvalidQuery(e.to_string()).response(),
        };
        let guard = state.view.load();
        let Some(view) = guard.as_deref() else {
            return ApiError::DataUnavailable.response();
        };
        json(StatusCode::OK, list_envelope(view, query))
    }
}

/// `{ok: true, data: Record|null, meta}` for `/records/latest` (and the MCP tool).
pub(crate) fn latest_envelope(view: &PublishedView, query: LatestQuery) -> Vec<u8> {
    let record = view.latest(query.kind);
    let mut body = Vec::with_capacity(64 + record.map_or(4, str::len) + view.meta_json().len());
    body.extend_from_slice(b"{\"ok\":true,\"data\":");
    body.extend_from_slice(record.unwrap_or("null").as_bytes());
    push_meta(&mut body, view);
    body
}

/// `{ok: true, data: Page, meta}` for `/records` (and the MCP tool).
pub(crate) fn list_envelope(view: &PublishedView, query: ListQuery) -> Vec<u8> {
    let window = view.page(query.kind, query.page, query.page_size);
    let items = &view.ordered(query.kind)[window.start..window.end];
    let mut body = Vec::with_capacity(160 + items.len() * 700 + view.meta_json().len());
    body.extend_from_slice(b"{\"ok\":true,\"data\":{\"items\":[");
    for (n, &index) in items.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        body.extend_from_slice(view.record_json(index).as_bytes());
    }
    let _ = write!(
        body,
        "],\"page\":{},\"pageSize\":{},\"total\":{},\"totalPages\":{},\"hasNext\":{}}}",
        query.page, query.page_size, window.total, window.total_pages, window.has_next
    );
    push_meta(&mut body, view);
    body
}

fn push_meta(body: &mut Vec<u8>, view: &PublishedView) {
    body.extend_from_slice(b",\"meta\":");
    body.extend_from_slice(view.meta_json().as_bytes());
    body.push(b'}');
}

/// `GET /openapi/v1/openapi.json`.
pub fn openapi() -> Response {
    with_body(StatusCode::OK, "application/json", OPENAPI_JSON)
}

/// `GET /openapi/v1/docs`.
pub fn docs() -> Response {
    with_body(StatusCode::OK, "text/html; charset=utf-8", DOCS_HTML)
}

/// `GET /openapi/v1/skill.md`: offered as a download.
pub fn skill() -> Response {
    let mut response = with_body(StatusCode::OK, "text/markdown; charset=utf-8", SKILL_MD);
    response.headers_mut().insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"reset-records-api-skill.md\""),
    );
    response
}

/// `GET /healthz`: 200 while a snapshot is served, 503 while none is.
pub fn healthz(state: Arc<AppState>) -> Response {
    let guard = state.view.load();
    let body = match guard.as_deref() {
        Some(view) => serde_json::json!({
            "ok": true,
            "status": "ready",
            "mode": view.mode().as_str(),
            "sequence": view.sequence(),
            "generatedAt": view.generated_at(),
            "ageSeconds": (state.clock.now().as_millis() - view.generated_at().as_millis()).max(0) / 1000,
            "syncStatus": view.sync_status(),
        }),
        None => serde_json::json!({
            "ok": false, "status": "unavailable", "mode": null, "sequence": null,
            "generatedAt": null, "ageSeconds": null, "syncStatus": null,
        }),
    };
    let status = if guard.is_some() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json(status, serde_json::to_vec(&body).expect("plain JSON"))
}

/// `OPTIONS` on a known path: a CORS preflight answer with no body.
pub fn preflight(request_headers: Option<String>) -> Response {
    let mut response = with_body(StatusCode::NO_CONTENT, "text/plain", "");
    response.headers_mut().remove(header::CONTENT_TYPE);
    let headers: &mut HeaderMap = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, HEAD, OPTIONS"),
    );
    let allowed = request_headers
        .and_then(|h| HeaderValue::from_str(&h).ok())
        .unwrap_or_else(|| HeaderValue::from_static("*"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, allowed);
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}

/// Anything no route took: 405 on a known path, 404 elsewhere.
pub fn unrouted(path: &str) -> Response {
    if KNOWN_PATHS.contains(&path) {
        ApiError::MethodNotAllowed.response()
    } else {
        ApiError::NotFound.response()
    }
}

/// `/mcp` with another method than POST: a preflight for OPTIONS, 405
/// (with `Allow: POST, OPTIONS`) for the rest, `GET` included: no SSE stream.
pub fn mcp_not_post(method: warp::http::Method, request_headers: Option<String>) -> Response {
    use warp::http::Method;
    let mut response = match method {
        Method::OPTIONS => {
            let mut response = preflight(request_headers);
            response.headers_mut().insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("POST, OPTIONS"),
            );
            response
        }
        _ => {
            let mut response = ApiError::MethodNotAllowed.response();
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST, OPTIONS"));
            response
        }
    };
    response.extensions_mut().insert(RpcAnswer(None));
    response
}
