//! One handler per route: parse, call one query function, build the body.
//!
//! Data handlers read the published view through an `arc-swap` guard (no
//! lock shared with reload) and write the envelope around pre-serialised
//! records, so a request costs O(pageSize).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use warp::http::{header, HeaderMap, HeaderValue, StatusCode};
use warp::reply::Response;

use super::admission::{rest_data, Quota};
use super::assets::{DOCS_CSP, DOCS_HTML, OPENAPI_JSON, SKILL_MD};
use super::conditional::{rest_uncounted, Conditionals};
use super::errors::ApiError;
use super::filters::DataRequest;
use super::jsonrpc::RpcAnswer;
use super::responses::{json, with_body};
use crate::query::{
    parse_latest_query, parse_list_query, LatestQuery, ListQuery, PublishedView, Validators,
};
use crate::reload::ViewHandle;
use crate::snapshot::Mode;

/// The paths this server answers (for 405 versus 404).
pub const KNOWN_PATHS: &[&str] = &[
    "/openapi/v1/records/latest",
    "/openapi/v1/records/stream",
    "/openapi/v1/records",
    "/openapi/v1/records.atom",
    "/openapi/v1/records.ics",
    "/openapi/v1/openapi.json",
    "/openapi/v1/docs",
    "/openapi/v1/skill.md",
    "/healthz",
    "/api/status.json",
    "/openapi/v1/badge.json",
];

/// What the data routes answer from and count against: the served view
/// and the quota (with the clock both go by).
#[derive(Clone, Debug)]
pub struct Data {
    /// The published view, swapped atomically by the reloader.
    pub view: ViewHandle,
    /// The quota, the flood guard and the clock.
    pub quota: Arc<Quota>,
}

impl Data {
    /// Now, by the server's clock (`/healthz` ages, the pages' verdicts).
    pub fn now(&self) -> crate::model::Timestamp {
        self.quota.clock.now()
    }
}

/// The test hook: a data request whose raw query equals the configured text panics.
fn maybe_panic(raw_query: &str) {
    crate::testhook::panic_if_asked(raw_query);
}

/// `GET /openapi/v1/records/latest`.
pub(crate) async fn latest(request: DataRequest, data: Arc<Data>) -> Response {
    let query = parse_latest_query(&request.query);
    answer_data(&data, &request, query, |view, query| {
        json(StatusCode::OK, latest_envelope(view, query))
    })
    .await
}

/// `GET /openapi/v1/records`.
pub(crate) async fn list(request: DataRequest, data: Arc<Data>) -> Response {
    crate::testhook::hold(&request.query).await;
    let query = parse_list_query(&request.query);
    answer_data(&data, &request, query, |view, query| {
        json(StatusCode::OK, list_envelope(view, query))
    })
    .await
}

/// The answer of a data route from the view served now: 304 when the
/// client's copy is current, else counted and answered by [`respond`]
/// (422, 503, or what `render` makes of the view). The panic test hook
/// runs once the request is counted, whatever it is answered.
pub(crate) async fn answer_data<Q, E: std::fmt::Display>(
    data: &Data,
    request: &DataRequest,
    query: Result<Q, E>,
    render: impl FnOnce(&PublishedView, Q) -> Response,
) -> Response {
    let view = data.view.load_full();
    let current = fresh(&query, view.as_deref());
    let DataRequest {
        query: raw_query,
        client,
        conditionals,
    } = request;
    rest_data(&data.quota, *client, conditionals, current, || {
        maybe_panic(raw_query);
        respond(query, view.as_deref(), render)
    })
    .await
}

/// The validators a conditional request is compared with: those of the
/// view, when the query is valid and a view is served (else no 304).
fn fresh<'v, Q, E>(
    query: &Result<Q, E>,
    view: Option<&'v PublishedView>,
) -> Option<&'v Validators> {
    view.filter(|_| query.is_ok())
        .map(PublishedView::validators)
}

/// The answer of a data request: 422 for a bad query, 503 before the first
/// snapshot, else what `render` makes of the view (a 200).
fn respond<Q, E: std::fmt::Display>(
    query: Result<Q, E>,
    view: Option<&PublishedView>,
    render: impl FnOnce(&PublishedView, Q) -> Response,
) -> Response {
    let query = match query {
        Ok(query) => query,
        Err(e) => return ApiError::InvalidQuery(e.to_string()).response(),
    };
    let Some(view) = view else {
        return ApiError::DataUnavailable.response();
    };
    render(view, query)
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

/// `GET /api/status.json`: the last good public status feed, byte for
/// byte, in upstream mode with the public feed as upstream; not counted.
pub(crate) fn status_feed(conditionals: Conditionals, view: &ViewHandle) -> Response {
    let mode = view.load().as_ref().map(|v| v.mode());
    match (mode, view.feed()) {
        (None, _) => ApiError::DataUnavailable.response(),
        (Some(Mode::Upstream), Some(feed)) => rest_uncounted(&conditionals, &feed.etag, || {
            // The stored bytes, shared: no copy per request.
            let mut response = Response::new(feed.bytes.clone().into());
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            super::responses::cors(headers);
            response
        }),
        (Some(Mode::Standalone), _) => ApiError::NotHere(
            "this instance runs in standalone mode: it has no upstream status feed to mirror",
        )
        .response(),
        (Some(Mode::Upstream), None) => ApiError::NotHere(
            "this instance's upstream is not the public status feed (or no good feed has been fetched yet): nothing to mirror",
        )
        .response(),
    }
}

/// `GET /openapi/v1/openapi.json`.
pub fn openapi() -> Response {
    with_body(StatusCode::OK, "application/json", OPENAPI_JSON)
}

/// `GET /openapi/v1/docs`, under its own strict Content-Security-Policy.
pub fn docs() -> Response {
    let mut response = with_body(StatusCode::OK, "text/html; charset=utf-8", DOCS_HTML);
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(DOCS_CSP),
    );
    response
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
/// `GET /healthz?ready=fresh` (readiness for staleness): also 503, with
/// status `stale`, while the data dir's upstream sync status as of now is
/// `stale` or `error`; see [`crate::status::StatusReport::stale`].
pub(crate) fn healthz(query: &str, data: &Data, data_dir: &Path) -> Response {
    let fresh = match query {
        "" => false,
        "ready=fresh" => true,
        _ => {
            return ApiError::InvalidQuery("healthz accepts only ready=fresh (or no query)".into())
                .response()
        }
    };
    let guard = data.view.load();
    let now = data.now();
    let Some(view) = guard.as_deref() else {
        let body = serde_json::json!({
            "ok": false, "status": "unavailable", "mode": null, "sequence": null,
            "generatedAt": null, "ageSeconds": null, "syncStatus": null,
        });
        return json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::to_vec(&body).expect("plain JSON"),
        );
    };
    // The snapshot's status is as of its publish; readiness wants it as of
    // now, from the sync state beside it (a 304 or a failure since).
    let sync_status = match (fresh, view.mode()) {
        (true, crate::snapshot::Mode::Upstream) => {
            crate::sync::state::status_now(data_dir, now).or(view.sync_status())
        }
        _ => view.sync_status(),
    };
    let stale = fresh && sync_status.is_some_and(|s| s.is_behind());
    let mut body = serde_json::json!({
        "ok": !stale,
        "status": if stale { "stale" } else { "ready" },
        "mode": view.mode().as_str(),
        "sequence": view.sequence(),
        "generatedAt": view.generated_at(),
        "ageSeconds": (now.as_millis() - view.generated_at().as_millis()).max(0) / 1000,
        "syncStatus": sync_status,
    });
    if let Some(warning) = data.view.warning() {
        body["warning"] = serde_json::Value::from(warning.as_str());
    }
    let status = if stale {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
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
