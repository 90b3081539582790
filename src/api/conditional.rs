//! Conditional requests (RFC 9110 section 13), decided in one place for
//! every route, the admin listener's `/export.json` included: the
//! request's validators ([`Conditionals`], read once by the accept loop,
//! with the `Accept-Encoding` that picks the representation they are
//! compared with), the one `If-None-Match` matcher (weak comparison, `*`,
//! any coded form of a representation), the `If-Modified-Since` rule, and
//! the answer of an uncounted route ([`rest_uncounted`]). The entity tags
//! themselves are made by [`crate::query::entity_tag`] and
//! [`crate::encoding::coded_tag`], for every representation alike.

use std::time::{SystemTime, UNIX_EPOCH};

use headers::HeaderMapExt;
use warp::http::{header, HeaderMap, HeaderValue};
use warp::reply::Response;

use super::errors::{answer_panics, ApiError};
use super::representation::{AcceptEncoding, Representation};
use crate::encoding::base_of;
use crate::query::Validators;

/// The conditional headers of a request (RFC 9110 section 13) and its
/// `Accept-Encoding` (which representation a validator is compared
/// with), read once by the accept loop and carried as a request extension.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conditionals {
    /// `If-None-Match`: absent, present but unreadable (matches nothing), or its tags.
    none_match: NoneMatch,
    /// `If-Modified-Since`, when it is a valid HTTP date.
    modified_since: Option<SystemTime>,
    /// `Accept-Encoding`.
    accept: AcceptEncoding,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum NoneMatch {
    #[default]
    Absent,
    Unreadable,
    /// `*`.
    Any,
    /// The opaque part of each tag (no quotes, no `W/`: compared weakly).
    Tags(Vec<String>),
}

impl Conditionals {
    /// The conditional headers of `headers` (every `If-None-Match` line,
    /// as one list) and its `Accept-Encoding`.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        let mut lines = headers.get_all(header::IF_NONE_MATCH).iter().peekable();
        let none_match = if lines.peek().is_some() {
            none_match(lines)
        } else {
            NoneMatch::Absent
        };
        let modified_since = headers
            .typed_get::<headers::IfModifiedSince>()
            .map(SystemTime::from);
        Self {
            none_match,
            modified_since,
            accept: AcceptEncoding::of(headers),
        }
    }

    /// The request's `Accept-Encoding`.
    pub(crate) fn accept(&self) -> &AcceptEncoding {
        &self.accept
    }

    /// Whether `If-None-Match` names a representation whose identity form
    /// is tagged `etag` (weak comparison, `*`, or any coded form of it,
    /// whichever form the client saw first): the one matcher of every
    /// route. An unreadable or absent header names nothing.
    pub(crate) fn names(&self, etag: &[u8]) -> bool {
        match &self.none_match {
            NoneMatch::Any => true,
            NoneMatch::Tags(tags) => {
                let ours = etag
                    .strip_prefix(b"\"")
                    .and_then(|t| t.strip_suffix(b"\""))
                    .unwrap_or(etag);
                tags.iter().any(|tag| base_of(tag).as_bytes() == ours)
            }
            NoneMatch::Absent | NoneMatch::Unreadable => false,
        }
    }

    /// Whether the client's copy is the one `current` describes, so a 304
    /// answers it. `If-None-Match` decides when present (see
    /// [`Conditionals::names`]); else `If-Modified-Since`, which matches
    /// only the exact second of `Last-Modified` (nginx's default
    /// `if_modified_since exact`): a later date does not match either, so
    /// a rollback to older data is never hidden behind a 304.
    pub(crate) fn matches(&self, current: &Validators) -> bool {
        match &self.none_match {
            NoneMatch::Absent => self.modified_since.is_some_and(|since| {
                let secs = |t: SystemTime| t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok();
                let modified = current.last_modified.as_millis().div_euclid(1000);
                secs(since) == u64::try_from(modified).ok()
            }),
            _ => self.names(&current.etag),
        }
    }
}

/// `If-None-Match` (RFC 9110 section 13.1.2): `*`, or a list of entity
/// tags (`[W/]"opaque"`, separated by commas) over one or more lines;
/// anything else is unreadable and matches nothing.
fn none_match<'a>(lines: impl Iterator<Item = &'a HeaderValue>) -> NoneMatch {
    let mut tags = Vec::new();
    for line in lines {
        let line = line.as_bytes();
        if line.trim_ascii() == b"*" {
            return NoneMatch::Any;
        }
        let mut rest = line;
        loop {
            rest = rest.trim_ascii_start();
            while let Some(after) = rest.strip_prefix(b",") {
                rest = after.trim_ascii_start();
            }
            if rest.is_empty() {
                break;
            }
            let quoted = rest.strip_prefix(b"W/").unwrap_or(rest);
            let Some(quoted) = quoted.strip_prefix(b"\"") else {
                return NoneMatch::Unreadable;
            };
            let Some(end) = quoted.iter().position(|&b| b == b'"') else {
                return NoneMatch::Unreadable;
            };
            let opaque = &quoted[..end];
            if opaque.iter().any(|&b| b < 0x21 || b == 0x7f) {
                return NoneMatch::Unreadable;
            }
            tags.push(String::from_utf8_lossy(opaque).into_owned());
            rest = quoted[end + 1..].trim_ascii_start();
            if !rest.is_empty() && !rest.starts_with(b",") {
                return NoneMatch::Unreadable;
            }
        }
    }
    NoneMatch::Tags(tags)
}

/// `Last-Modified` of `current` (a data route's 200; a 304 does not repeat
/// it, RFC 9110 section 15.4.5: it carries an `ETag`).
pub(crate) fn last_modified(headers: &mut HeaderMap, current: &Validators) {
    if let Ok(date) = HeaderValue::from_maybe_shared(current.last_modified_http.clone()) {
        headers.insert(header::LAST_MODIFIED, date);
    }
}

/// An uncounted route with a representation of its own (the pages, the
/// badge, the mirrored feed, the fixed documents): 406 when no form of it
/// is acceptable, 304 when `If-None-Match` names it, else the chosen form
/// with `headers(response)` added. Neither is the quota's business: all
/// pass the flood guard.
pub(crate) fn rest_uncounted(
    conditionals: &Conditionals,
    representation: &Representation,
    headers: impl FnOnce(&mut HeaderMap),
) -> Response {
    let Some(coding) = representation.choose(conditionals.accept()) else {
        return ApiError::NotAcceptable.response();
    };
    if conditionals.names(representation.tag()) {
        return representation.not_modified(coding);
    }
    let mut response = answer_panics(|| representation.response(coding));
    headers(response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none_match_of(lines: &[&str]) -> NoneMatch {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(header::IF_NONE_MATCH, HeaderValue::from_str(line).unwrap());
        }
        Conditionals::of(&headers).none_match
    }

    fn tags(list: &[&str]) -> NoneMatch {
        NoneMatch::Tags(list.iter().map(|t| (*t).to_owned()).collect())
    }

    #[test]
    fn if_none_match_is_read_as_rfc_9110_writes_it() {
        assert_eq!(none_match_of(&["\"a\""]), tags(&["a"]));
        assert_eq!(
            none_match_of(&["W/\"a\", \"b,c\" ,\"\""]),
            tags(&["a", "b,c", ""])
        );
        assert_eq!(none_match_of(&["\"a\"", "W/\"b\""]), tags(&["a", "b"]));
        assert_eq!(none_match_of(&[" * "]), NoneMatch::Any);
        for bad in ["a", "\"a", "\"a\" \"b\"", "w/\"a\"", "\"a b\""] {
            assert_eq!(none_match_of(&[bad]), NoneMatch::Unreadable, "{bad}");
        }
    }

    #[test]
    fn a_tag_names_every_form_of_its_representation() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"x\", W/\"ab-gzip\""),
        );
        let c = Conditionals::of(&headers);
        assert!(c.names(b"\"ab\""));
        assert!(c.names(b"\"x\""));
        assert!(!c.names(b"\"a\""));
        assert!(!c.names(b"\"ab-gzip-br\""));
    }
}
