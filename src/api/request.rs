//! What a request carries, read from its head for every route: its raw
//! query, a header as text, its authority, its client key and its
//! conditional headers ([`Head`]), and what a data route reads of it
//! ([`DataRequest`]). Nothing here refuses a request for a malformed
//! header: that is the handler's to answer.

use std::net::{IpAddr, Ipv4Addr};

use warp::http::request::Parts;
use warp::http::{header, uri::Authority, HeaderValue, Method};

use super::clients::{ClientKey, ClientKeys};
use super::conditional::Conditionals;
use super::transport::PeerAddr;

/// A request's head, with the facts the accept loop read once (its client
/// key, its conditional headers) taken out of its extensions.
pub(crate) struct Head {
    parts: Parts,
    client: IpAddr,
    conditionals: Conditionals,
}

impl Head {
    /// The head of `parts`. A request the accept loop did not prepare (an
    /// in-process test) is keyed by its peer, or by `0.0.0.0` without one.
    pub(crate) fn of(mut parts: Parts, keys: &ClientKeys) -> Self {
        let client = match parts.extensions.get::<ClientKey>() {
            Some(key) => key.0,
            None => keys.of_peer(
                parts
                    .extensions
                    .get::<PeerAddr>()
                    .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |p| p.0.ip()),
            ),
        };
        let conditionals = parts
            .extensions
            .remove::<Conditionals>()
            .unwrap_or_default();
        Self {
            parts,
            client,
            conditionals,
        }
    }

    /// The method.
    pub(crate) fn method(&self) -> &Method {
        &self.parts.method
    }

    /// The path, as sent (not decoded).
    pub(crate) fn path(&self) -> &str {
        self.parts.uri.path()
    }

    /// The raw query string, or "" when the target has none.
    pub(crate) fn query(&self) -> &str {
        self.parts.uri.query().unwrap_or("")
    }

    /// The client key the quota counts.
    pub(crate) fn client(&self) -> IpAddr {
        self.client
    }

    /// `If-None-Match` / `If-Modified-Since` and `Accept-Encoding`.
    pub(crate) fn conditionals(&self) -> &Conditionals {
        &self.conditionals
    }

    /// The request's extensions (marks the accept loop left).
    pub(crate) fn extensions(&self) -> &warp::http::Extensions {
        &self.parts.extensions
    }

    /// The first `name` header as text; `None` when absent or not visible ASCII.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.parts.headers.get(name)?.to_str().ok()
    }

    /// Every `name` header, raw.
    pub(crate) fn headers_all(&self, name: &str) -> Vec<HeaderValue> {
        self.parts.headers.get_all(name).iter().cloned().collect()
    }

    /// The request's authority (`Host`, or HTTP/2's `:authority`) as text;
    /// `None` when absent, unreadable or contradictory.
    pub(crate) fn host(&self) -> Option<String> {
        let from_uri = self.parts.uri.authority();
        let from_header = match self.parts.headers.get(header::HOST) {
            None => None,
            Some(value) => Some(
                value
                    .to_str()
                    .ok()
                    .and_then(|text| text.parse::<Authority>().ok())?,
            ),
        };
        match (from_uri, from_header) {
            (Some(uri), Some(header)) if *uri != header => None,
            (Some(uri), _) => Some(uri.as_str().to_owned()),
            (None, Some(header)) => Some(header.as_str().to_owned()),
            (None, None) => None,
        }
    }

    /// What a data route reads of this request.
    pub(crate) fn data_request(&self) -> DataRequest<'_> {
        DataRequest {
            query: self.query(),
            client: self.client,
            conditionals: &self.conditionals,
        }
    }
}

/// What a data route (the record endpoints, the feeds) reads of a request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DataRequest<'a> {
    /// The raw query string ("" when none).
    pub query: &'a str,
    /// The client key the quota counts.
    pub client: IpAddr,
    /// `If-None-Match` / `If-Modified-Since`.
    pub conditionals: &'a Conditionals,
}
