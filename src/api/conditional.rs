//! Conditional requests (RFC 9110 section 13), decided in one place for
//! every route, the admin listener's `/export.json` included: the
//! request's validators ([`Conditionals`], read once by the accept loop),
//! the one `If-None-Match` matcher (weak comparison, `*`), the
//! `If-Modified-Since` rule, and the validator headers of an answer. The
//! entity tags themselves are made by [`crate::query::entity_tag`], for
//! every representation alike.

use std::time::{SystemTime, UNIX_EPOCH};

use headers::HeaderMapExt;
use warp::http::{header, HeaderMap, HeaderValue, StatusCode};
use warp::reply::Response;

use super::errors::answer_panics;
use super::responses::cors;
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

    /// Whether `If-None-Match` names `etag` (weak comparison, `*`): the
    /// one matcher of every route with a tag of its own (the pages, the
    /// mirrored feed, the admin listener's `/export.json`). An unreadable
    /// or absent header names nothing.
    pub(crate) fn names(&self, etag: &[u8]) -> bool {
        match &self.none_match {
            NoneMatch::Tags(tags) => tags_match(tags, etag),
            _ => false,
        }
    }

    /// Whether the client's copy is the one `current` describes, so a 304
    /// answers it. `If-None-Match` decides when present (weak comparison,
    /// `*` matches any current view); else `If-Modified-Since`, which
    /// matches only the exact second of `Last-Modified` (nginx's default
    /// `if_modified_since exact`): a later date does not match either, so
    /// a rollback to older data is never hidden behind a 304.
    pub(crate) fn matches(&self, current: &Validators) -> bool {
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

/// `ETag` and `Last-Modified` of `current`.
pub(crate) fn validator_headers(headers: &mut HeaderMap, current: &Validators) {
    if let Ok(tag) = HeaderValue::from_maybe_shared(current.etag.clone()) {
        headers.insert(header::ETAG, tag);
    }
    if let Ok(date) = HeaderValue::from_maybe_shared(current.last_modified_http.clone()) {
        headers.insert(header::LAST_MODIFIED, date);
    }
}

/// An empty 304 with the CORS headers (the caller adds its validators).
pub(crate) fn not_modified() -> Response {
    let mut response = Response::new(warp::hyper::body::Bytes::new().into());
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    cors(response.headers_mut());
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
    let mut response = if conditionals.names(etag) {
        not_modified()
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
