//! The error bodies of section 7 and the one mapping from error to status;
//! and the one panic guard: a handler that panics is answered 500 (in the
//! shape its path answers errors), never a dropped connection.

use warp::http::{header, HeaderValue, StatusCode};
use warp::reply::Response;

use super::responses::{json, push_json_str};

/// The `Retry-After` of a stream refused at the per-client cap (every 429
/// carries one, docs/spec/decisions.md "Details pinned").
const STREAM_RETRY_SECONDS: u64 = 60;

/// Every error the API answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 422: the query string breaks a rule; the detail names the parameter.
    InvalidQuery(String),
    /// 429: the client's quota is used up; retry after this many seconds.
    RateLimited {
        /// Whole seconds, at least 1.
        retry_after: u64,
    },
    /// 503: the rate-limit store cannot answer (fail closed).
    RateLimitUnavailable,
    /// 503: nothing is published yet.
    DataUnavailable,
    /// 429: the client has as many record streams open as it may.
    TooManyStreams {
        /// Streams one client may hold.
        per_client: u32,
    },
    /// 503: the server holds as many record streams as it may.
    StreamsFull,
    /// 500: something unexpected; no detail leaves the server.
    Internal,
    /// 404: no such path.
    NotFound,
    /// 404: the path exists on other instances; the detail says why not here.
    NotHere(&'static str),
    /// 405: the path exists, the method does not; the methods it answers
    /// (the `Allow` header and the detail, from this one value).
    MethodNotAllowed(&'static str),
    /// 406: the request's `Accept-Encoding` refuses every form this
    /// answer has (`identity;q=0` or `*;q=0` and no coding offered).
    NotAcceptable,
    /// 400: the request target is neither a path nor an absolute URL
    /// (authority form without CONNECT, or `*` without OPTIONS).
    BadTarget,
    /// 400: an HTTP/1.1 request without exactly one `Host` header (RFC
    /// 9112 section 3.2).
    BadHost,
    /// 408: the request body did not arrive whole within this time of its
    /// head; the connection is closed after the answer (the accept loop
    /// adds `Connection: close` on HTTP/1, and closes HTTP/2 with `GOAWAY`).
    RequestTimeout(std::time::Duration),
    /// 400: the request is not valid HTTP (hyper's own answer, given this body).
    MalformedRequest,
    /// 414: the request target is too long (hyper's own answer).
    UriTooLong,
    /// 431: the request headers are too large or too many (hyper's own answer).
    HeadersTooLarge,
}

impl ApiError {
    /// The status, code and detail of the body.
    pub fn parts(&self) -> (StatusCode, &'static str, String) {
        match self {
            ApiError::InvalidQuery(detail) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_query",
                detail.clone(),
            ),
            ApiError::RateLimited { retry_after } => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!("rate limit exceeded; retry after {retry_after} s"),
            ),
            ApiError::RateLimitUnavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "rate_limit_unavailable",
                "the rate-limit store is unavailable; the documentation still works".into(),
            ),
            ApiError::DataUnavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "data_unavailable",
                "no published snapshot exists yet".into(),
            ),
            ApiError::TooManyStreams { per_client } => (
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_streams",
                format!(
                    "this client already has {per_client} open streams, the most it may hold; close one first"
                ),
            ),
            ApiError::StreamsFull => (
                StatusCode::SERVICE_UNAVAILABLE,
                "streams_unavailable",
                "the server holds as many record streams as it may; retry later or poll with If-None-Match".into(),
            ),
            ApiError::Internal => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "internal server error".into(),
            ),
            ApiError::NotFound => (StatusCode::NOT_FOUND, "not_found", "no such path".into()),
            ApiError::NotHere(why) => (StatusCode::NOT_FOUND, "not_found", (*why).into()),
            ApiError::MethodNotAllowed(allow) => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                format!("method not allowed; this path answers {allow}"),
            ),
            ApiError::NotAcceptable => (
                StatusCode::NOT_ACCEPTABLE,
                "not_acceptable",
                "Accept-Encoding refuses every coding this answer has (br, zstd, gzip, identity)"
                    .into(),
            ),
            ApiError::BadTarget => (
                StatusCode::BAD_REQUEST,
                "bad_request",
                "the request target must be a path or an absolute URL".into(),
            ),
            ApiError::BadHost => (
                StatusCode::BAD_REQUEST,
                "bad_request",
                "an HTTP/1.1 request must carry exactly one Host header".into(),
            ),
            ApiError::RequestTimeout(limit) => (
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!(
                    "the request body did not arrive within {} s of its head; the connection is closed",
                    limit.as_secs_f64()
                ),
            ),
            ApiError::MalformedRequest => (
                StatusCode::BAD_REQUEST,
                "bad_request",
                "the request is not valid HTTP".into(),
            ),
            ApiError::UriTooLong => (
                StatusCode::URI_TOO_LONG,
                "uri_too_long",
                "the request target is longer than 65,534 bytes".into(),
            ),
            ApiError::HeadersTooLarge => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "headers_too_large",
                "the request head (its target and headers) is larger than the server accepts, or has more than 100 headers".into(),
            ),
        }
    }

    /// Whole seconds the client should wait, when the error says.
    fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::RateLimited { retry_after } => Some(*retry_after),
            // A stream place frees when a stream closes: no time can be known.
            ApiError::TooManyStreams { .. } => Some(STREAM_RETRY_SECONDS),
            _ => None,
        }
    }

    /// The body: `{ok: false, error, detail, retryAfter}`, the one place
    /// it is written (the accept loop's rewrite of hyper's own answers too).
    pub fn body(&self) -> Vec<u8> {
        let (_, code, detail) = self.parts();
        let mut body = Vec::with_capacity(96 + detail.len());
        body.extend_from_slice(b"{\"ok\":false,\"error\":\"");
        body.extend_from_slice(code.as_bytes());
        body.extend_from_slice(b"\",\"detail\":");
        push_json_str(&mut body, &detail);
        body.extend_from_slice(b",\"retryAfter\":");
        match self.retry_after() {
            Some(seconds) => body.extend_from_slice(seconds.to_string().as_bytes()),
            None => body.extend_from_slice(b"null"),
        }
        body.push(b'}');
        body
    }

    /// The response: [`body`](Self::body) and its headers.
    pub fn response(&self) -> Response {
        let status = self.parts().0;
        let retry_after = self.retry_after();
        let body = self.body();
        let mut response = json(status, body);
        let headers = response.headers_mut();
        if let Some(seconds) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let ApiError::MethodNotAllowed(allow) = self {
            headers.insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        response
    }
}

/// Runs `respond`; a panic in it becomes the REST 500 (`internal_error`,
/// no detail). For a response built after the quota admitted the request,
/// so the 500 still carries the quota headers.
pub(super) fn answer_panics(respond: impl FnOnce() -> Response) -> Response {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(respond))
        .unwrap_or_else(|_| panicked(|| ApiError::Internal.response()))
}

/// Runs one handler's future; a panic anywhere in it becomes `on_panic()`
/// (a 500 in the shape of the path: the API's error body, or JSON-RPC's on
/// `/mcp`). Every route ends in this guard.
pub(super) async fn answer_panics_async(
    on_panic: impl FnOnce() -> Response,
    handler: impl std::future::Future<Output = Response>,
) -> Result<Response, std::convert::Infallible> {
    use futures_util::FutureExt;
    Ok(std::panic::AssertUnwindSafe(handler)
        .catch_unwind()
        .await
        .unwrap_or_else(|_| panicked(on_panic)))
}

fn panicked(on_panic: impl FnOnce() -> Response) -> Response {
    tracing::error!("a request handler panicked; answered 500");
    on_panic()
}
