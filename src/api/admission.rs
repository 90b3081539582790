//! Admission: what happens to a request before its handler answers.
//!
//! One place decides, for every route, whether a request is
//! - answered **304** (a data route whose conditional headers match the
//!   served view: not counted, like every uncounted answer it passes the
//!   flood guard; docs/spec/decisions.md, "Beyond the spec"),
//! - **counted** against the quota and answered (data routes, MCP tool calls),
//! - **refused** (429 over quota, 503 when the quota store cannot answer), or
//! - passed through the **flood guard** (every answer the quota did not decide).
//!
//! A handler returns what it would send ([`Answer`]); [`admit`] wraps it by
//! the class the route table gives its route (`routes::Class`), so no
//! handler decides whether its answer is sent. Decisions are rendered for
//! REST ([`rest_data`], [`rest_counted`]) and for JSON-RPC
//! ([`rpc_counted`]); none of them is reachable from a handler.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::json;
use warp::http::{header, HeaderName, HeaderValue, StatusCode};
use warp::reply::Response;

use super::conditional::{last_modified, Conditionals};
use super::errors::{answer_panics, ApiError};
use super::jsonrpc::{rpc_error, RpcAnswer, RATE_LIMITED, RATE_LIMIT_UNAVAILABLE};
use super::representation::Representation;
use super::request::DataRequest;
use super::routes::Class;
use crate::clock::Clock;
use crate::limit::flood::FloodGuard;
use crate::limit::{Limiter, QuotaDecision, QuotaPolicy, QuotaState};
use crate::metrics::QuotaOutcome;
use crate::model::Timestamp;
use crate::query::Validators;

/// The quota and the burst guard, with the clock they count by: what every
/// counted route and the flood guard are given.
#[derive(Debug)]
pub struct Quota {
    /// The sliding-window quota (or `Limiter::Off`): shared with the quota
    /// a reload makes when it keeps the policy and the store, so every
    /// client keeps its count.
    pub limiter: Arc<Limiter>,
    /// The clock the windows move by.
    pub clock: Arc<dyn Clock>,
    /// The burst guard of uncounted answers (`None`: off), shared the same way.
    pub flood: Option<Arc<FloodGuard>>,
}

impl Quota {
    /// Drops idle entries, so memory is bounded by the clients active in
    /// the last window (called every minute by the server).
    pub(crate) fn evict_idle(&self) {
        if let Limiter::Memory(memory) = &*self.limiter {
            let left = memory.evict_idle(self.clock.now());
            tracing::debug!(clients = left, "evicted idle quota entries");
        }
        if let Some(flood) = &self.flood {
            flood.evict_idle();
        }
    }
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
async fn count(quota: &Quota, client: IpAddr) -> Admission {
    let admission = decide(quota, client).await;
    crate::metrics::quota_decision(match admission {
        Admission::Admitted(_) => QuotaOutcome::Admitted,
        Admission::Limited { .. } => QuotaOutcome::Limited,
        Admission::Unavailable => QuotaOutcome::Unavailable,
    });
    admission
}

async fn decide(quota: &Quota, client: IpAddr) -> Admission {
    let decision = match quota.limiter.check(client, quota.clock.now()).await {
        Ok(decision) => decision,
        Err(e) => {
            // Every refused request would be a line: warn at most every 10 s.
            static LAST_WARNED: std::sync::atomic::AtomicI64 =
                std::sync::atomic::AtomicI64::new(i64::MIN);
            let now = quota.clock.now().as_millis();
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
    match (decision, quota.limiter.policy()) {
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

/// What a data route serves when its query is valid and a view is served:
/// the validators of its representation, and the representation itself
/// (made only when it is sent, or to answer a 304).
pub(crate) trait DataSource {
    /// The validators the request's conditional headers are matched with.
    fn validators(&self) -> std::borrow::Cow<'_, Validators>;
    /// The representation (its coded forms made on first need).
    fn representation(&self) -> Arc<Representation>;
}

/// What a handler would send; [`admit`] decides whether and how it is sent.
pub(crate) enum Answer<'a> {
    /// A data route's representation, or why it has none (a bad query, no
    /// view yet: counted, never a 304). Class `Data`.
    Data(Result<Box<dyn DataSource + Send + Sync + 'a>, super::errors::ApiError>),
    /// Made only once the quota admits the request. Class `Stream`.
    Counted(Box<dyn FnOnce() -> Response + Send + 'a>),
    /// A JSON-RPC tool call for `id`, made only once the quota admits it.
    /// Class `Rpc`.
    ToolCall {
        /// The request's id (refusals are JSON-RPC errors for it).
        id: rmcp::model::RequestId,
        /// The call's answer.
        respond: Box<dyn FnOnce(rmcp::model::RequestId) -> Response + Send + 'a>,
    },
    /// An answer the quota has no part in: a fixed representation (304 by
    /// its tag), a handshake, or a refusal made before admission (the
    /// stream's caps, an origin). Every class; the flood guard decides.
    Uncounted(Response),
}

/// Sends `answer` of a route of `class` for `request`: the one place the
/// class of a route decides what the quota does. An answer its class
/// does not make is a bug of the handler: a 500, logged.
pub(crate) async fn admit(
    quota: &Quota,
    class: Class,
    request: &DataRequest<'_>,
    answer: Answer<'_>,
) -> Response {
    match (class, answer) {
        (Class::Data, Answer::Data(Err(error))) => {
            rest_refused(quota, request.client, || {
                maybe_panic(request.query);
                error.response()
            })
            .await
        }
        (Class::Data, Answer::Data(Ok(source))) => {
            rest_data(
                quota,
                request.client,
                request.conditionals,
                &source.validators(),
                || source.representation(),
                || maybe_panic(request.query),
            )
            .await
        }
        (Class::Stream, Answer::Counted(respond)) => {
            rest_counted(quota, request.client, respond).await
        }
        (Class::Rpc, Answer::ToolCall { id, respond }) => {
            rpc_counted(quota, request.client, id, respond).await
        }
        (_, Answer::Uncounted(response)) => response,
        (class, _) => {
            tracing::error!(
                "a {class:?} route's handler made an answer of another class; answered 500"
            );
            ApiError::Internal.response()
        }
    }
}

/// The test hook: a data request whose raw query equals the configured
/// text panics once it is counted, whatever it is answered.
fn maybe_panic(raw_query: &str) {
    crate::testhook::panic_if_asked(raw_query);
}

/// A data route (the record endpoints, the feeds) for a valid query on a
/// served view (`current`): 304, not counted, when `conditionals` match
/// it; else counted, and answered (after `before`, the test hook) with the
/// form of `representation()` the request accepts, or 406 when it accepts
/// none. Every answer carries `Cache-Control: no-cache`; a 200 also
/// `Last-Modified`.
async fn rest_data(
    quota: &Quota,
    client: IpAddr,
    conditionals: &Conditionals,
    current: &Validators,
    representation: impl Fn() -> Arc<Representation>,
    before: impl FnOnce(),
) -> Response {
    let chosen = conditionals
        .matches(current)
        .then(|| {
            let representation = representation();
            representation
                .choose(conditionals.accept())
                .map(|coding| (representation, coding))
        })
        .flatten();
    let mut response = match chosen {
        Some((representation, coding)) => {
            not_modified(quota, client, representation.not_modified(coding)).await
        }
        None => {
            rest_counted(quota, client, || {
                before();
                let representation = representation();
                match representation.choose(conditionals.accept()) {
                    Some(coding) => {
                        let mut response = representation.response(coding);
                        super::responses::cors(response.headers_mut());
                        last_modified(response.headers_mut(), current);
                        response
                    }
                    None => ApiError::NotAcceptable.response(),
                }
            })
            .await
        }
    };
    revalidate(&mut response);
    response
}

/// A refused data request (a bad query, no view yet): counted, never a 304.
async fn rest_refused(
    quota: &Quota,
    client: IpAddr,
    respond: impl FnOnce() -> Response,
) -> Response {
    let mut response = rest_counted(quota, client, respond).await;
    revalidate(&mut response);
    response
}

/// `Cache-Control: no-cache`, on every answer of a data route.
fn revalidate(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
}

/// The 304 `response`: not counted, so it shows where the client's quota
/// stands; it passes the flood guard (it carries no [`QuotaDecided`]).
async fn not_modified(quota: &Quota, client: IpAddr, mut response: Response) -> Response {
    crate::metrics::quota_decision(QuotaOutcome::NotModified);
    match quota.limiter.peek(client, quota.clock.now()).await {
        Ok(Some(state)) => {
            if let Some(policy) = quota.limiter.policy() {
                quota_headers(&mut response, policy, state.remaining, state.reset_at);
            }
        }
        Ok(None) => {}
        // The 304 does not depend on the quota: it is answered without its headers.
        Err(e) => tracing::debug!("a 304 without X-RateLimit-* headers: {}", e.0),
    }
    response
}

/// A counted REST request: `respond` runs only when the quota admits it
/// (a panic in it is a 500 that still carries the quota headers).
async fn rest_counted(
    quota: &Quota,
    client: IpAddr,
    respond: impl FnOnce() -> Response,
) -> Response {
    let mut response = match count(quota, client).await {
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
async fn rpc_counted(
    quota: &Quota,
    client: IpAddr,
    id: rmcp::model::RequestId,
    respond: impl FnOnce(rmcp::model::RequestId) -> Response,
) -> Response {
    let mut response = match count(quota, client).await {
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
pub fn flood_guarded(quota: &Quota, client: IpAddr, response: Response) -> Response {
    if response.extensions().get::<QuotaDecided>().is_some() {
        return response;
    }
    match quota.flood.as_ref().map(|f| f.check(client)) {
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
