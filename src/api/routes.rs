//! Route composition: which filter chain answers which method and path,
//! and which part of the server's state each one is given ([`Api`]).
//! One function per route; [`routes`] only puts them in order.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::Arc;

use warp::http::Method;
use warp::reply::Response;
use warp::{Filter, Rejection};

use super::admission::flood_guarded;
use super::clients::ClientKeys;
use super::conditional::Conditionals;
use super::errors::{answer_panics_async as guard, ApiError};
use super::filters::{
    client, conditionals, data_request, exact_path, optional_header, raw_query, read_method,
    request_host, with,
};
use super::handlers::{self, Data};
use super::site::{Site, SitePath};
use super::stream::Streams;
use super::transport::TargetForm;

/// The parts of the public listener's state, each handed only to the
/// routes that use it (as warp's `todos` example hands its database).
#[derive(Clone, Debug)]
pub struct Api {
    /// The served view, the clock, the quota: every data route's. One
    /// `Arc`, like every part here: warp clones the route tree per request.
    pub data: Arc<Data>,
    /// How a request's client key is found.
    pub keys: Arc<ClientKeys>,
    /// The status page, the record pages, the badge, and the bases the
    /// pages and feeds link with.
    pub site: Arc<Site>,
    /// The record stream's places and closing signal.
    pub streams: Arc<Streams>,
    /// Origins allowed to call `/mcp` (requests with any other `Origin` are refused).
    pub mcp_allowed_origins: Arc<Vec<String>>,
    /// The data dir (`/healthz?ready=fresh` reads its sync state).
    pub data_dir: Arc<PathBuf>,
}

/// A route: what a path answers, or a rejection for the next route.
trait Route: Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static {}
impl<F: Filter<Extract = (Response,), Error = Rejection> + Clone + Send + Sync + 'static> Route
    for F
{
}

/// The REST 500 of a handler that panicked.
fn internal() -> Response {
    ApiError::Internal.response()
}

/// Every route of the server (the access log is written around it, in
/// the transport). The chain ends in a catch-all that answers 404/405, so
/// its error type is `Infallible`: the compiler proves no rejection
/// escapes without a section 7 body, which makes a `recover` step
/// unnecessary.
///
/// Two guards wrap every answer: each handler runs under `guard` (a panic
/// is a 500), and every answer the quota did not decide passes the flood
/// guard (`admission::flood_guarded`), whichever route produced it.
pub fn routes(
    api: &Api,
) -> impl Filter<Extract = (impl warp::Reply,), Error = Infallible> + Clone + Send + Sync + 'static
{
    let named = latest(api)
        .or(list(api))
        .unify()
        .or(stream(api))
        .unify()
        .or(atom(api))
        .unify()
        .or(ics(api))
        .unify()
        .or(fixed(api))
        .unify()
        .or(healthz(api))
        .unify()
        .or(status_feed(api))
        .unify()
        .or(badge(api))
        .unify()
        .or(preflight())
        .unify()
        .or(mcp_post(api))
        .unify()
        .or(mcp_other())
        .unify();
    let root = warp::path::end().map(|| ApiError::NotFound.response());
    let unrouted =
        warp::path::full().map(|path: warp::path::FullPath| handlers::unrouted(path.as_str()));
    // CONNECT and other targets that are not a path come before any path
    // is read; the pages' paths end in `/` or hold an encoded id, so they
    // come before the exact paths of the API.
    let answered = connect()
        .or(odd_target())
        .unify()
        .or(site(api))
        .unify()
        .or(root)
        .unify()
        .or(exact_path().and(named))
        .unify()
        .or(unrouted)
        .unify();
    let quota = api.data.quota.clone();
    // `client` never rejects; the fallback only tells the compiler so.
    let client_key = client(api.keys.clone())
        .or(warp::any().map(|| IpAddr::V4(Ipv4Addr::UNSPECIFIED)))
        .unify();
    client_key
        .and(answered)
        .map(move |ip: IpAddr, response: Response| flood_guarded(&quota, ip, response))
}

/// `GET /openapi/v1/records/latest`.
fn latest(api: &Api) -> impl Route {
    warp::path!("openapi" / "v1" / "records" / "latest")
        .and(data_request(api.keys.clone()))
        .and(with(api.data.clone()))
        .and_then(|request, data| guard(internal, handlers::latest(request, data)))
}

/// `GET /openapi/v1/records`.
fn list(api: &Api) -> impl Route {
    warp::path!("openapi" / "v1" / "records")
        .and(data_request(api.keys.clone()))
        .and(with(api.data.clone()))
        .and_then(|request, data| guard(internal, handlers::list(request, data)))
}

/// `GET /openapi/v1/records/stream`.
fn stream(api: &Api) -> impl Route {
    warp::path!("openapi" / "v1" / "records" / "stream")
        .and(read_method())
        .and(raw_query())
        .and(optional_header("last-event-id"))
        .and(client(api.keys.clone()))
        .and(with(api.data.clone()))
        .and(with(api.streams.clone()))
        .and_then(
            |query, last_event_id, client, data, streams: Arc<Streams>| {
                guard(internal, async move {
                    super::stream::stream(query, last_event_id, client, data, &streams).await
                })
            },
        )
}

/// `GET /openapi/v1/records.atom`.
fn atom(api: &Api) -> impl Route {
    warp::path!("openapi" / "v1" / "records.atom")
        .and(data_request(api.keys.clone()))
        .and(request_host())
        .and(with(api.data.clone()))
        .and(with(api.site.clone()))
        .and_then(|request, host, data, site: Arc<Site>| {
            guard(internal, async move {
                super::feeds::atom(request, host, data, &site).await
            })
        })
}

/// `GET /openapi/v1/records.ics`.
fn ics(api: &Api) -> impl Route {
    warp::path!("openapi" / "v1" / "records.ics")
        .and(data_request(api.keys.clone()))
        .and(with(api.data.clone()))
        .and(with(api.site.clone()))
        .and_then(|request, data, site: Arc<Site>| {
            guard(internal, async move {
                super::feeds::ics(request, data, &site).await
            })
        })
}

/// The fixed documents: `openapi.json`, the docs page, the skill file.
fn fixed(_api: &Api) -> impl Route {
    let document = |respond: fn(&Conditionals) -> Response| {
        move |conditionals: Conditionals| guard(internal, async move { respond(&conditionals) })
    };
    let openapi = warp::path!("openapi" / "v1" / "openapi.json")
        .and(read_method())
        .and(conditionals())
        .and_then(document(handlers::openapi));
    let docs = warp::path!("openapi" / "v1" / "docs")
        .and(read_method())
        .and(conditionals())
        .and_then(document(handlers::docs));
    let skill = warp::path!("openapi" / "v1" / "skill.md")
        .and(read_method())
        .and(conditionals())
        .and_then(document(handlers::skill));
    openapi.or(docs).unify().or(skill).unify()
}

/// `GET /healthz`.
fn healthz(api: &Api) -> impl Route {
    warp::path!("healthz")
        .and(read_method())
        .and(raw_query())
        .and(with(api.data.clone()))
        .and(with(api.data_dir.clone()))
        .and_then(|query: String, data: Arc<Data>, data_dir: Arc<PathBuf>| {
            guard(internal, async move {
                handlers::healthz(&query, &data, &data_dir)
            })
        })
}

/// `GET /api/status.json`.
fn status_feed(api: &Api) -> impl Route {
    warp::path!("api" / "status.json")
        .and(read_method())
        .and(conditionals())
        .and(with(api.data.clone()))
        .and_then(|conditionals, data: Arc<Data>| {
            guard(internal, async move {
                handlers::status_feed(conditionals, &data)
            })
        })
}

/// `GET /openapi/v1/badge.json`.
fn badge(api: &Api) -> impl Route {
    warp::path!("openapi" / "v1" / "badge.json")
        .and(read_method())
        .and(conditionals())
        .and(with(api.data.clone()))
        .and(with(api.site.clone()))
        .and_then(|conditionals, data: Arc<Data>, site: Arc<Site>| {
            guard(internal, async move {
                super::site::badge(&data, &site, &conditionals)
            })
        })
}

/// `OPTIONS` on a known path: the CORS preflight.
fn preflight() -> impl Route {
    warp::options()
        .and(warp::path::full())
        .and(optional_header("access-control-request-headers"))
        .and_then(
            |path: warp::path::FullPath, request_headers: Option<String>| async move {
                if !handlers::KNOWN_PATHS.contains(&path.as_str()) {
                    return Err(warp::reject::not_found());
                }
                let Ok(response) = guard(
                    internal,
                    async move { handlers::preflight(request_headers) },
                )
                .await;
                Ok(response)
            },
        )
}

/// `POST /mcp` with a body of at most 64 KiB, with or without a
/// Content-Length (chunked HTTP/1.1, HTTP/2).
fn mcp_post(api: &Api) -> impl Route {
    warp::path!("mcp")
        .and(warp::post())
        .and(optional_header("content-length"))
        .and(warp::body::stream())
        .and(client(api.keys.clone()))
        .and(warp::header::headers_cloned())
        .and(optional_header("mcp-protocol-version"))
        .and(with(api.data.clone()))
        .and(with(api.mcp_allowed_origins.clone()))
        .and_then(
            |length,
             body,
             ip,
             headers: warp::http::HeaderMap,
             version,
             data: Arc<Data>,
             allowed: Arc<Vec<String>>| {
                // Every Origin line, raw: an unreadable one is refused, never taken as absent.
                let origins: Vec<_> = headers.get_all("origin").iter().cloned().collect();
                async move {
                    let body = match super::mcp::read_body(length, body).await {
                        Ok(body) => body,
                        Err(too_large) => return Ok::<_, Infallible>(too_large),
                    };
                    let on_panic = {
                        let body = body.clone();
                        move || super::mcp::internal_error(&body)
                    };
                    let answer = async move {
                        super::mcp::handle(&data, &allowed, ip, origins, version, body).await
                    };
                    guard(on_panic, answer).await
                }
            },
        )
}

/// `/mcp` with any other method: its own 405 or preflight.
fn mcp_other() -> impl Route {
    warp::path!("mcp")
        .and(warp::method())
        .and(optional_header("access-control-request-headers"))
        .and_then(|method, request_headers| {
            guard(super::mcp::internal_error_without_id, async move {
                handlers::mcp_not_post(method, request_headers)
            })
        })
}

/// CONNECT (whose authority-form target has no path for warp to read): 405.
fn connect() -> impl Route {
    warp::method().and_then(|method: Method| async move {
        if method == Method::CONNECT {
            Ok(ApiError::MethodNotAllowed(super::errors::READ_METHODS).response())
        } else {
            Err(warp::reject::not_found())
        }
    })
}

/// Targets that are not a path: `OPTIONS *` asks about the server as a
/// whole (the preflight answer); anything else is a 400, as is an HTTP/1.1
/// request without exactly one `Host`.
fn odd_target() -> impl Route {
    warp::ext::optional::<TargetForm>()
        .and(warp::method())
        .and_then(|form: Option<TargetForm>, method: Method| async move {
            match (form, method) {
                (None, _) => Err(warp::reject::not_found()),
                (Some(TargetForm::Asterisk), Method::OPTIONS) => Ok(handlers::preflight(None)),
                (Some(TargetForm::BadHost), _) => Ok(ApiError::BadHost.response()),
                (Some(_), _) => Ok(ApiError::BadTarget.response()),
            }
        })
}

/// The status page and the record pages (unless `--no-site`). The path is
/// read first, so an API request is turned away before any header or
/// query is copied.
fn site(api: &Api) -> impl Route {
    let pages = api.site.pages;
    let site_path = warp::path::full().and_then(move |path: warp::path::FullPath| {
        let page = SitePath::parse(path.as_str()).filter(|_| pages);
        async move { page.ok_or_else(warp::reject::not_found) }
    });
    site_path
        .and(warp::method())
        .and(raw_query())
        .and(optional_header("accept-language"))
        .and(conditionals())
        .and(with(api.data.clone()))
        .and(with(api.site.clone()))
        .and_then(
            |page,
             method: Method,
             query: String,
             accept_language: Option<String>,
             conditionals,
             data: Arc<Data>,
             site: Arc<Site>| {
                guard(internal, async move {
                    super::site::answer(
                        &data,
                        &site,
                        page,
                        &method,
                        &query,
                        accept_language.as_deref(),
                        &conditionals,
                    )
                })
            },
        )
}
