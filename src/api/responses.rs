//! Response construction shared by every handler: content types, CORS and
//! the exact JSON envelopes, written straight into one buffer.

use warp::http::{header, HeaderValue, StatusCode};
use warp::reply::{Reply, Response as WarpResponse};

/// Headers browser scripts may read (docs/spec/decisions.md, "Details pinned").
pub const EXPOSED_HEADERS: &str =
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Window, X-RateLimit-Reset, Retry-After, ETag, Last-Modified";

/// A response with `body`, `content_type` and the CORS headers every response carries.
pub fn with_body(status: StatusCode, content_type: &'static str, body: impl Reply) -> WarpResponse {
    let mut response = body.into_response();
    *response.status_mut() = status;
    let headers = response.headers_mut();
    typed(headers, HeaderValue::from_static(content_type));
    cors(headers);
    response
}

/// Says what a body is: its `Content-Type`, and `X-Content-Type-Options:
/// nosniff`, so no browser takes it for anything else (a JSON answer that
/// quotes a client's text for HTML, say). Every answer with a body is
/// typed here, whichever listener and route made it.
pub fn typed(headers: &mut warp::http::HeaderMap, content_type: HeaderValue) {
    headers.insert(header::CONTENT_TYPE, content_type);
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// A JSON response.
pub fn json(status: StatusCode, body: Vec<u8>) -> WarpResponse {
    with_body(status, "application/json", body)
}

/// Adds the CORS headers of a public read-only API.
pub fn cors(headers: &mut warp::http::HeaderMap) {
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED_HEADERS),
    );
}

/// Appends a JSON string literal (quotes and escapes included).
pub fn push_json_str(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(&mut *out, text).expect("writing to a Vec cannot fail");
}

/// A page's `Content-Language`, and `Vary: Accept-Language` (beside the
/// `Accept-Encoding` it may already vary by) when the language was
/// negotiated: the pages' and the docs page's one rule.
pub(super) fn language_headers(
    headers: &mut warp::http::HeaderMap,
    lang: crate::site::i18n::Lang,
    negotiated: bool,
) {
    headers.insert(
        header::CONTENT_LANGUAGE,
        HeaderValue::from_static(lang.tag()),
    );
    if negotiated {
        let vary = if headers.contains_key(header::VARY) {
            "Accept-Language, Accept-Encoding"
        } else {
            "Accept-Language"
        };
        headers.insert(header::VARY, HeaderValue::from_static(vary));
    }
}
