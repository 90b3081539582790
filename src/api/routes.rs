//! The route table: every path the API answers, declared once, with the
//! methods it answers, its metrics label and its admission class.
//!
//! Everything that needs to know a path asks this table: the router (one
//! lookup per request, [`find`]), the 404/405 decision and its `Allow`,
//! the CORS preflight and the metrics label (carried with the answer as a
//! [`RouteLabel`], never matched again from the path); the stream's fast
//! path in the transport reads the same name ([`crate::paths::STREAM`]).
//! The site's paths are not here: they stay with their parser
//! (`site::SitePath`), which the router asks for a path the table does not
//! hold (no page path is one of the table's); their label is [`SITE_LABEL`].
//!
//! A route's class says how admission wraps it ([`Class`]); a handler
//! returns what to send and never decides whether it is sent.

use warp::http::Method;

use crate::paths;
use crate::site::i18n::Lang;

/// How admission wraps a route (see `admission::admit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A data route: 304 when the request names the served
    /// representation (uncounted), else counted, then the body.
    Data,
    /// A representation of its own: 304 by its tag, never counted.
    Fixed,
    /// The record stream: its caps, then counted.
    Stream,
    /// JSON-RPC: each tool call is counted; the handshake is not.
    Rpc,
    /// Never counted: the flood guard only.
    Open,
}

/// What a route answers (the router calls its handler).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET /openapi/v1/records/latest`.
    Latest,
    /// `GET /openapi/v1/records`.
    Records,
    /// `GET /openapi/v1/records/stream` (SSE).
    Stream,
    /// `GET /openapi/v1/records.atom`.
    Atom,
    /// `GET /openapi/v1/records.ics`.
    Ics,
    /// `GET /openapi/v1/openapi.json`.
    OpenApi,
    /// `GET /openapi/v1/docs`: in the language asked for (`None`:
    /// negotiated from `Accept-Language`).
    Docs(Option<Lang>),
    /// `GET /openapi/v1/skill.md`.
    Skill,
    /// `GET /openapi/v1/badge.json`.
    Badge,
    /// `GET /api/status.json` (the mirrored feed).
    StatusFeed,
    /// `GET /healthz`.
    Healthz,
    /// `POST /mcp`.
    Mcp,
}

/// The methods a route answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Methods {
    /// GET and HEAD (and OPTIONS, the CORS preflight).
    Read,
    /// POST (and OPTIONS, the CORS preflight).
    Rpc,
}

impl Methods {
    /// The `Allow` header of a 405, and the preflight's
    /// `Access-Control-Allow-Methods`.
    pub const fn allow(self) -> &'static str {
        match self {
            Methods::Read => "GET, HEAD, OPTIONS",
            Methods::Rpc => "POST, OPTIONS",
        }
    }

    /// Whether `method` is answered by the route's handler (OPTIONS is
    /// the router's preflight, every other method a 405).
    pub fn answers(self, method: &Method) -> bool {
        match self {
            Methods::Read => method == Method::GET || method == Method::HEAD,
            Methods::Rpc => method == Method::POST,
        }
    }
}

/// One route of the table.
#[derive(Debug)]
pub struct Route {
    /// The exact path (no trailing slash, no decoding).
    pub path: &'static str,
    /// What answers it.
    pub endpoint: Endpoint,
    /// The methods it answers.
    pub methods: Methods,
    /// Its `route` label in the metrics.
    pub label: &'static str,
    /// How admission wraps it.
    pub class: Class,
}

const fn route(
    path: &'static str,
    endpoint: Endpoint,
    methods: Methods,
    label: &'static str,
    class: Class,
) -> Route {
    Route {
        path,
        endpoint,
        methods,
        label,
        class,
    }
}

/// Every path the API answers (the site's pages aside); the paths' names
/// are [`crate::paths`]'.
#[rustfmt::skip]
pub const ROUTES: &[Route] = &[
    route(paths::RECORDS, Endpoint::Records, Methods::Read, "records", Class::Data),
    route(paths::LATEST, Endpoint::Latest, Methods::Read, "latest", Class::Data),
    route(paths::STREAM, Endpoint::Stream, Methods::Read, "stream", Class::Stream),
    route(paths::ATOM, Endpoint::Atom, Methods::Read, "atom", Class::Data),
    route(paths::ICS, Endpoint::Ics, Methods::Read, "ics", Class::Data),
    route(paths::OPENAPI, Endpoint::OpenApi, Methods::Read, "openapi", Class::Fixed),
    route(paths::DOCS, Endpoint::Docs(None), Methods::Read, "docs", Class::Fixed),
    route(paths::DOCS_EN, Endpoint::Docs(Some(Lang::En)), Methods::Read, "docs_en", Class::Fixed),
    route(paths::DOCS_ZH, Endpoint::Docs(Some(Lang::Zh)), Methods::Read, "docs_zh", Class::Fixed),
    route(paths::SKILL, Endpoint::Skill, Methods::Read, "skill", Class::Fixed),
    route(paths::BADGE, Endpoint::Badge, Methods::Read, "badge", Class::Fixed),
    route(paths::STATUS_FEED, Endpoint::StatusFeed, Methods::Read, "status_feed", Class::Fixed),
    route(paths::HEALTHZ, Endpoint::Healthz, Methods::Read, "healthz", Class::Open),
    route(paths::MCP, Endpoint::Mcp, Methods::Rpc, "mcp", Class::Rpc),
];

/// The metrics label of the site's pages.
pub const SITE_LABEL: &str = "site";
/// The metrics label of everything no route answers (and of targets that
/// are not a path).
pub const OTHER_LABEL: &str = "other";

/// The route of `path`, if the table has one: exact, byte for byte.
pub fn find(path: &str) -> Option<&'static Route> {
    ROUTES.iter().find(|route| route.path == path)
}

/// The metrics label of an answer, carried in its extensions from the
/// router to the access log.
#[derive(Clone, Copy, Debug)]
pub struct RouteLabel(pub &'static str);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_endpoint_and_label_is_declared_once() {
        for (i, a) in ROUTES.iter().enumerate() {
            for b in &ROUTES[i + 1..] {
                assert_ne!(a.path, b.path);
                assert_ne!(a.endpoint, b.endpoint);
                assert_ne!(a.label, b.label);
            }
            assert!(
                a.path.starts_with('/') && !a.path.ends_with('/'),
                "{}",
                a.path
            );
            assert_ne!(a.label, SITE_LABEL);
            assert_ne!(a.label, OTHER_LABEL);
            assert_eq!(find(a.path).map(|r| r.endpoint), Some(a.endpoint));
        }
        assert!(find(&format!("{}/", paths::RECORDS)).is_none());
        assert!(find(&format!("/{}", paths::HEALTHZ)).is_none());
    }
}
