//! Admission: what happens to a request before its handler answers.
//!
//! One place decides, for every route, whether a request is
//! - answered **304** (a data route whose conditional headers match the
//!   served view: not counted, like every uncounted answer it passes the
//!   flood guard; decisions.md, "Beyond the spec"),
//! - **counted** against the quota and answered (data routes, MCP tool calls),
//! - **refused** (429 over quota, 503 when the quota store cannot answer), or
//! - passed through the **flood guard** (every answer the quota did not decide).
//!
//! Decisions are rendered for REST ([`rest_data`], [`rest_counted`]) and
//! for JSON-RPC ([`rpc_counted`]); handlers never repeat them.

use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use headers::HeaderMapExt;
use serde_json::json;
use warp::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use warp::reply::Response;

use super::errors::{answer_panics, ApiError};
use super::jsonrpc::{rpc_error, RpcAnswer, RATE_LIMITED, RATE_LIMIT_UNAVAILABLE};
use super::responses::cors;
use super::server::AppState;
use crate::limit::{QuotaDecision, QuotaPolicy, QuotaState};
use crate::metrics::QuotaOutcome;
use crate::model::Timestamp;
use crate::query::Validators;

/// The conditional headers of a request (RFC 9110 section 13), read once
/// by the accept loop and carried as a request extension.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conditionals {
    /// `If-None-Match`: absent, present but unreadable (matches nothing), or its tags.
    none_match: NoneMatch,
    /// `If-Modified-Since`, when it is a valid HTTP date.
    modified_since: Option<SystemTime>,
}

#[derive(Clone, Debug, Default)]
enum NoneMatch {
    #[default]
    Absent,
    Unreadable,
    Tags(headers::IfNoneMatch),
}

impl Conditionals {
    /// The conditional headers of `headers` (every `If-None-Match` line,
    /// as one list).
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        let none_match = if headers.contains_key(header::IF_NONE_MATCH) {
            headers
                .typed_get::<headers::IfNoneMatch>()
                .map_or(NoneMatch::Unreadable, NoneMatch::Tags)
        } else {
            NoneMatch::Absent
        };
        let modified_since = headers
            .typed_get::<headers::IfModifiedSince>()
            .map(SystemTime::from);
        Self {
            none_match,
            modified_since,
        }
    }

    /// Whether the client's copy is the one `current` describes, so a 304
    /// answers it. `If-None-Match` decides when present (weak comparison,
    /// `*` matches any current view); else `If-Modified-Since`, which
    /// matches only the exact second of `Last-Modified` (nginx's default
    /// `if_modified_since exact`): a later date does not match either, so
    /// a rollback to older data is never hidden behind a 304.
    fn matches(&self, current: &Validators) -> bool {
        match &self.none_match {
            NoneMatch::Tags(tags) => tags_match(tags, &current.etag),
            NoneMatch::Unreadable => false,
            NoneMatch::Absent => self.modified_since.is_some_and(|since| {
                let secs = |t: SystemTime| t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok();
                let modified = current.last_modified.as_millis().div_euclid(1000);
                secs(since) == u64::try_from(modified).ok()
            }),
        }
    }
}

/// Whether `If-None-Match`'s tags match `etag` (weak comparison, `*` included).
fn tags_match(tags: &headers::IfNoneMatch, etag: &[u8]) -> bool {
    std::str::from_utf8(etag)
        .ok()
        .and_then(|tag| tag.parse::<headers::ETag>().ok())
        .is_some_and(|tag| !tags.precondition_passes(&tag))
}

/// Whether the `If-None-Match` header `value` names `etag`: the one matcher
/// of every route (the admin listener's `/export.json` too), with weak
/// comparison and `*`. An unreadable header names nothing.
pub(crate) fn none_match_names(value: &str, etag: &[u8]) -> bool {
    let Ok(value) = HeaderValue::from_str(value) else {
        return false;
    };
    let mut headers = HeaderMap::new();
    headers.insert(header::IF_NONE_MATCH, value);
    headers
        .typed_get::<headers::IfNoneMatch>()
        .is_some_and(|tags| tags_match(&tags, etag))
}

/// What the quota says about one counted request, with what its answer needs.
pub(crate) enum Admission {
    /// Counted (or limiting is off: `None`).
    Admitted(Option<(QuotaPolicy, QuotaState)>),
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

/// Counts one request of `client` against the quota (and records the
/// decision for the metrics).
async fn count(state: &AppState, client: IpAddr) -> Admission {
    let admission = decide(state, client).await;
    crate::metrics::quota_decision(match admission {
        Admission::Admitted(_) => QuotaOutcome::Admitted,
        Admission::Limited { .. } => QuotaOutcome::Limited,
        Admission::Unavailable => QuotaOutcome::Unavailable,
    });
    admission
}

async fn decide(state: &AppState, client: IpAddr) -> Admission {
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
        ) => Admission::Admitted(Some((
            policy,
            QuotaState {
                remaining,
                reset_at,
            },
        ))),
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

/// A data route (the record endpoints, the feeds): 304 when `conditionals`
/// match `current` (the validators of the view `respond` answers from, or
/// `None` when no 304 is possible: no view yet, or a query that is refused),
/// else counted; every answer carries `Cache-Control: no-cache`, and a 200
/// its `ETag` and `Last-Modified`.
pub(crate) async fn rest_data(
    state: &AppState,
    client: IpAddr,
    conditionals: &Conditionals,
    current: Option<&Validators>,
    respond: impl FnOnce() -> Response,
) -> Response {
    let mut response = match current {
        Some(current) if conditionals.matches(current) => {
            not_modified(state, client, current).await
        }
        _ => {
            let mut response = rest_counted(state, client, respond).await;
            if let (Some(current), StatusCode::OK) = (current, response.status()) {
                validator_headers(response.headers_mut(), current);
            }
            response
        }
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// An uncounted route with a validator of its own (the mirrored feed):
/// 304 when `If-None-Match` matches `etag`, else `respond()` with the tag.
/// Neither is the quota's business: both pass the flood guard.
pub(crate) fn rest_uncounted(
    conditionals: &Conditionals,
    etag: &bytes::Bytes,
    respond: impl FnOnce() -> Response,
) -> Response {
    let tag = HeaderValue::from_maybe_shared(etag.clone()).ok();
    let matched = match &conditionals.none_match {
        NoneMatch::Tags(tags) => tags_match(tags, etag),
        _ => false,
    };
    let mut response = if matched {
        let mut response = Response::new(warp::hyper::body::Bytes::new().into());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        cors(response.headers_mut());
        response
    } else {
        answer_panics(respond)
    };
    let headers = response.headers_mut();
    if let Some(tag) = tag {
        headers.insert(header::ETAG, tag);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A 304 for `current`: not counted, so it shows where the client's quota
/// stands; it passes the flood guard (it carries no [`QuotaDecided`]).
async fn not_modified(state: &AppState, client: IpAddr, current: &Validators) -> Response {
    crate::metrics::quota_decision(QuotaOutcome::NotModified);
    let mut response = Response::new(warp::hyper::body::Bytes::new().into());
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    let headers = response.headers_mut();
    cors(headers);
    validator_headers(headers, current);
    match state.limiter.peek(client, state.clock.now()).await {
        Ok(Some(quota)) => {
            if let Some(policy) = state.limiter.policy() {
                quota_headers(&mut response, policy, quota.remaining, quota.reset_at);
            }
        }
        Ok(None) => {}
        // The 304 does not depend on the quota: it is answered without its headers.
        Err(e) => tracing::debug!("a 304 without X-RateLimit-* headers: {}", e.0),
    }
    response
}

/// `ETag` and `Last-Modified` of `current`.
fn validator_headers(headers: &mut HeaderMap, current: &Validators) {
    if let Ok(tag) = HeaderValue::from_maybe_shared(current.etag.clone()) {
        headers.insert(header::ETAG, tag);
    }
    if let Ok(date) = HeaderValue::from_maybe_shared(current.last_modified_http.clone()) {
        headers.insert(header::LAST_MODIFIED, date);
    }
}

/// A counted REST request: `respond` runs only when the quota admits it
/// (a panic in it is a 500 that still carries the quota headers).
pub(crate) async fn rest_counted(
    state: &AppState,
    client: IpAddr,
    respond: impl FnOnce() -> Response,
) -> Response {
    let mut response = match count(state, client).await {
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
        Admission::Admitted(quota) => {
            let mut response = answer_panics(respond);
            if let Some((policy, quota)) = quota {
                quota_headers(&mut response, policy, quota.remaining, quota.reset_at);
            }
            response
        }
    };
    response.extensions_mut().insert(QuotaDecided);
    response
}

/// A counted JSON-RPC request (an MCP tool call): `respond` runs only when
/// the quota admits it; refusals are JSON-RPC errors for `id`.
pub(crate) async fn rpc_counted(
    state: &AppState,
    client: IpAddr,
    id: rmcp::model::RequestId,
    respond: impl FnOnce(rmcp::model::RequestId) -> Response,
) -> Response {
    let mut response = match count(state, client).await {
        Admission::Unavailable => rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(id),
            RATE_LIMIT_UNAVAILABLE,
            "the rate-limit store is unavailable".into(),
            None,
        ),
        Admission::Limited {
            policy,
            reset_at,
            retry_after,
        } => {
            let mut response = rpc_limited(Some(id), retry_after, "rate limit exceeded");
            quota_headers(&mut response, policy, 0, reset_at);
            response
        }
        Admission::Admitted(quota) => {
            let mut response = respond(id);
            if let Some((policy, quota)) = quota {
                quota_headers(&mut response, policy, quota.remaining, quota.reset_at);
            }
            response
        }
    };
    response.extensions_mut().insert(QuotaDecided);
    response
}

/// A JSON-RPC 429 with `Retry-After`.
fn rpc_limited(id: Option<rmcp::model::RequestId>, retry_after: u64, why: &str) -> Response {
    let mut response = rpc_error(
        StatusCode::TOO_MANY_REQUESTS,
        id,
        RATE_LIMITED,
        format!("{why}; retry after {retry_after} s"),
        Some(json!({"retryAfter": retry_after})),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    response
}

/// Marks an answer the quota decided (admitted, refused 429 or failed closed
/// 503): it is the quota's business, not the flood guard's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuotaDecided;

/// The one flood guard: every answer the quota did not decide (304s, docs,
/// `/healthz`, OPTIONS, 404/405, MCP handshakes and every refused MCP
/// request, whatever route made it) takes a token from the client's burst
/// bucket, or is replaced by a 429 that never touches the quota.
pub fn flood_guarded(state: &AppState, client: IpAddr, response: Response) -> Response {
    if response.extensions().get::<QuotaDecided>().is_some() {
        return response;
    }
    match state.flood.as_ref().map(|f| f.check(client)) {
        Some(Err(retry_after)) => {
            crate::metrics::refused("flood_guard");
            match response.extensions().get::<RpcAnswer>() {
                Some(RpcAnswer(id)) => rpc_limited(id.clone(), retry_after, "too many requests"),
                None => ApiError::RateLimited { retry_after }.response(),
            }
        }
        _ => response,
    }
}

/// The `X-RateLimit-*` headers of section 8.
///
/// Written on every counted answer, so kept cheap: constant names, the
/// limit, window and small `Remaining` values as shared values made once
/// per policy ([`QuotaHeaderValues`]), and the reset time without the
/// formatting machinery.
pub(crate) fn quota_headers(
    response: &mut Response,
    policy: QuotaPolicy,
    remaining: u32,
    reset_at: Timestamp,
) {
    static VALUES: std::sync::OnceLock<QuotaHeaderValues> = std::sync::OnceLock::new();
    let cached = VALUES.get_or_init(|| QuotaHeaderValues::new(policy));
    let fresh;
    let values = if cached.policy == policy {
        cached
    } else {
        // Another policy in one process (tests of several servers): made here.
        fresh = QuotaHeaderValues::new(policy);
        &fresh
    };
    let headers = response.headers_mut();
    headers.insert(X_RATELIMIT_LIMIT, values.limit.clone());
    headers.insert(X_RATELIMIT_REMAINING, values.remaining(remaining));
    headers.insert(X_RATELIMIT_WINDOW, values.window.clone());
    headers.insert(
        X_RATELIMIT_RESET,
        HeaderValue::from_bytes(&reset_at.to_ascii()).expect("timestamps are ASCII"),
    );
}

const X_RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
const X_RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
const X_RATELIMIT_WINDOW: HeaderName = HeaderName::from_static("x-ratelimit-window");
const X_RATELIMIT_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// The header values one policy always writes, made once.
struct QuotaHeaderValues {
    policy: QuotaPolicy,
    limit: HeaderValue,
    window: HeaderValue,
    /// `Remaining` for 0 to `limit`, when the limit is small enough to list.
    remaining: Vec<HeaderValue>,
}

impl QuotaHeaderValues {
    /// Limits up to this have every `Remaining` value made in advance.
    const LISTED: u32 = 4096;

    fn new(policy: QuotaPolicy) -> Self {
        let listed = if policy.limit <= Self::LISTED {
            (0..=policy.limit).map(HeaderValue::from).collect()
        } else {
            Vec::new()
        };
        Self {
            policy,
            limit: HeaderValue::from(policy.limit),
            window: HeaderValue::from(policy.window_seconds),
            remaining: listed,
        }
    }

    fn remaining(&self, remaining: u32) -> HeaderValue {
        self.remaining
            .get(remaining as usize)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from(remaining))
    }
}
