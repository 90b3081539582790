//! One handler per route: parse, call one query function, build the body.
//!
//! Data handlers read the published view through an `arc-swap` guard (no
//! lock shared with reload) and write the envelope around pre-serialised
//! records, so a request costs O(pageSize).

use std::convert::Infallible;
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
use crate::query::{parse_latest_query, parse_list_query, PublishedView};

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
fn maybe_panic(state: &AppState, raw_query: &str) {
    if state.panic_on_query.as_deref() == Some(raw_query) {
        panic!("injected panic for query {raw_query:?}");
    }
}

/// Counts the request against the client's quota, then answers with
/// `respond` (admitted, headers added) or the 429/503 of the quota.
/// Admitted requests count even when `respond` ends in 422, 500 or 503.
async fn counted(state: &AppState, client: IpAddr, respond: impl FnOnce() -> Response) -> Response {
    let decision = match state.limiter.check(client, state.clock.now()).await {
        Ok(decision) => decision,
        Err(e) => {
            tracing::warn!("answering 503 rate_limit_unavailable: {}", e.0);
            return ApiError::RateLimitUnavailable.response();
        }
    };
    let policy = state.limiter.policy();
    match (decision, policy) {
        (
            Some(QuotaDecision::Admitted {
                remaining,
                reset_at,
            }),
            Some(policy),
        ) => {
            let mut response = guarded(respond);
            quota_headers(&mut response, policy, remaining, reset_at);
            response
        }
        (
            Some(QuotaDecision::Limited {
                reset_at,
                retry_after,
            }),
            Some(policy),
        ) => {
            let mut response = ApiError::RateLimited { retry_after }.response();
            quota_headers(&mut response, policy, 0, reset_at);
            response
        }
        _ => guarded(respond),
    }
}

/// The `X-RateLimit-*` headers of section 8.
fn quota_headers(
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

/// Lets an uncounted request through the flood guard, or answers its 429.
pub fn uncounted(state: &AppState, client: IpAddr, respond: impl FnOnce() -> Response) -> Response {
    match state.flood.as_ref().map(|f| f.check(client)) {
        Some(Err(retry_after)) => ApiError::RateLimited { retry_after }.response(),
        _ => respond(),
    }
}

/// `GET /openapi/v1/records/latest`.
pub async fn latest(
    raw_query: String,
    client: IpAddr,
    state: Arc<AppState>,
) -> Result<Response, Infallible> {
    Ok(counted(&state, client, || latest_body(&raw_query, &state)).await)
}

/// `GET /openapi/v1/records`.
pub async fn list(
    raw_query: String,
    client: IpAddr,
    state: Arc<AppState>,
) -> Result<Response, Infallible> {
    Ok(counted(&state, client, || list_body(&raw_query, &state)).await)
}

fn latest_body(raw_query: &str, state: &AppState) -> Response {
    {
        maybe_panic(state, raw_query);
        let query = match parse_latest_query(raw_query) {
            Ok(query) => query,
            Err(e) => return ApiError::InvalidQuery(e.to_string()).response(),
        };
        let guard = state.view.load();
        let Some(view) = guard.as_deref() else {
            return ApiError::DataUnavailable.response();
        };
        let record = view.latest(query.kind);
        let mut body = Vec::with_capacity(64 + record.map_or(4, str::len) + view.meta_json().len());
        body.extend_from_slice(b"{\"ok\":true,\"data\":");
        body.extend_from_slice(record.unwrap_or("null").as_bytes());
        push_meta(&mut body, view);
        json(StatusCode::OK, body)
    }
}

fn list_body(raw_query: &str, state: &AppState) -> Response {
    {
        maybe_panic(state, raw_query);
        let query = match parse_list_query(raw_query) {
            Ok(query) => query,
            Err(e) => return ApiError::InvalidQuery(e.to_string()).response(),
        };
        let guard = state.view.load();
        let Some(view) = guard.as_deref() else {
            return ApiError::DataUnavailable.response();
        };
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
        json(StatusCode::OK, body)
    }
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
