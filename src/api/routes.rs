//! Route composition: which filter chain answers which method and path.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use warp::filters::BoxedFilter;
use warp::reply::Response;
use warp::Filter;

use super::admission::{flood_guarded, Conditionals};
use super::conn::{PeerAddr, TargetForm};
use super::errors::{answer_panics_async as guard, ApiError};
use super::handlers;
use super::server::AppState;
use crate::limit::client::{canonical, ClientKeyPolicy, FORWARDING_HEADERS};

/// The raw query string, or "" when the URL has none.
fn raw_query() -> impl Filter<Extract = (String,), Error = Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

fn with_state(
    state: Arc<AppState>,
) -> impl Filter<Extract = (Arc<AppState>,), Error = Infallible> + Clone {
    warp::any().map(move || state.clone())
}

/// The peer address: from our accept loop ([`PeerAddr`]), or warp's own
/// (the in-process `warp::test` requests).
fn peer() -> impl Filter<Extract = (Option<SocketAddr>,), Error = Infallible> + Clone {
    warp::ext::optional::<PeerAddr>()
        .and(warp::addr::remote())
        .map(|ours: Option<PeerAddr>, warps: Option<SocketAddr>| ours.map(|p| p.0).or(warps))
}

/// The client key of the request: the peer IP, or what a trusted proxy
/// says in the one forwarding header the operator named.
fn client(state: Arc<AppState>) -> BoxedFilter<(IpAddr,)> {
    let peer_ip =
        |peer: Option<SocketAddr>| peer.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip());
    // Our accept loop computes the key once per request, from the peer and
    // the one forwarding header a trusted proxy sets (the access log names
    // it too), so no route clones the headers to find it. In-process
    // `warp::test` requests have no such key: they are keyed by their peer.
    warp::ext::optional::<ClientKey>()
        .and(peer())
        .map(move |key: Option<ClientKey>, peer: Option<SocketAddr>| {
            key.map_or_else(
                || state.client_keys.client_key(peer_ip(peer), None),
                |k| k.0,
            )
        })
        .boxed()
}

/// The conditional headers, read once by the accept loop; in-process
/// `warp::test` requests (no accept loop) have none.
fn conditionals() -> impl Filter<Extract = (Conditionals,), Error = Infallible> + Clone {
    warp::ext::optional::<Conditionals>().map(Option::unwrap_or_default)
}

/// The client key of a request, computed once by the accept loop and
/// carried as a request extension.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClientKey(pub IpAddr);

/// The key of a request from `peer` with `headers`: every line of the
/// policy's one header, joined in order (a proxy may add a line instead of
/// appending to the existing one).
pub(super) fn client_key_of(
    keys: &ClientKeyPolicy,
    peer: IpAddr,
    headers: &warp::http::HeaderMap,
) -> IpAddr {
    let parts: Vec<&str> = headers
        .get_all(keys.header.name())
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let value = (!parts.is_empty()).then(|| parts.join(", "));
    keys.client_key(peer, value.as_deref())
}

/// The client key of a request, for the quota and the access log alike:
/// the key the quota uses (what a trusted
/// proxy vouched for, IPv6 by its prefix), so an operator can tell who got
/// a 429. A peer that sends forwarding headers without being trusted is
/// warned about once: it is usually a proxy the operator forgot to trust,
/// and every client behind it then shares one quota.
pub(super) fn request_client_key(
    state: &AppState,
    peer: IpAddr,
    headers: &warp::http::HeaderMap,
) -> IpAddr {
    let peer = canonical(peer);
    let keys = &state.client_keys;
    if keys.trusts(peer) {
        return client_key_of(keys, peer, headers);
    }
    let sent = FORWARDING_HEADERS
        .iter()
        .find(|name| headers.contains_key(**name));
    if let Some(name) = sent.filter(|_| state.untrusted_forwarders.first_time(peer)) {
        tracing::warn!(
            "peer {peer} sends {name} but is not a trusted proxy, so every client behind it shares one quota; \
             if it is your proxy, add it with --trust-proxy (and name its header with --client-ip-header)"
        );
    }
    keys.client_key(peer, None)
}

/// A header as text, or `None` when absent or not visible ASCII (never a rejection).
fn optional_header(
    name: &'static str,
) -> impl Filter<Extract = (Option<String>,), Error = Infallible> + Clone {
    warp::header::optional::<String>(name)
        .or(warp::any().map(|| None))
        .unify()
}

/// The request's authority (`Host`, or HTTP/2's `:authority`) as text;
/// `None` when absent, unreadable or contradictory (never a rejection).
fn request_host() -> impl Filter<Extract = (Option<String>,), Error = Infallible> + Clone {
    warp::host::optional()
        .map(|host: Option<warp::host::Authority>| host.map(|h| h.as_str().to_owned()))
        .or(warp::any().map(|| None))
        .unify()
}

/// GET or HEAD (hyper drops the body of a HEAD answer).
fn read_method() -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::get().or(warp::head()).unify()
}

/// Rejects a path with a trailing slash (`/openapi/v1/records/`), which
/// `warp::path!` would otherwise accept: paths are exact.
fn exact_path() -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::path::full()
        .and_then(|path: warp::path::FullPath| async move {
            if path.as_str().len() > 1 && path.as_str().ends_with('/') {
                Err(warp::reject::not_found())
            } else {
                Ok(())
            }
        })
        .untuple_one()
}

/// The REST 500 of a handler that panicked.
fn internal() -> Response {
    ApiError::Internal.response()
}

/// Every route of the server (the access log is written around it, in
/// `conn`). The chain ends in a
/// catch-all that answers 404/405, so its error type is `Infallible`: the
/// compiler proves no rejection escapes without a section 7 body, which
/// makes a `recover` step unnecessary.
///
/// Two guards wrap every answer: each handler runs under `guard` (a panic
/// is a 500), and every answer the quota did not decide passes the flood
/// guard (`admission::flood_guarded`), whichever route produced it.
pub fn routes(
    state: Arc<AppState>,
) -> impl Filter<Extract = (impl warp::Reply,), Error = Infallible> + Clone + Send + Sync + 'static
{
    let latest = warp::path!("openapi" / "v1" / "records" / "latest")
        .and(read_method())
        .and(raw_query())
        .and(client(state.clone()))
        .and(conditionals())
        .and(with_state(state.clone()))
        .and_then(|query, client, conditionals, state| {
            guard(
                internal,
                handlers::latest(query, client, conditionals, state),
            )
        });
    let list = warp::path!("openapi" / "v1" / "records")
        .and(read_method())
        .and(raw_query())
        .and(client(state.clone()))
        .and(conditionals())
        .and(with_state(state.clone()))
        .and_then(|query, client, conditionals, state| {
            guard(internal, handlers::list(query, client, conditionals, state))
        });
    let stream = warp::path!("openapi" / "v1" / "records" / "stream")
        .and(read_method())
        .and(raw_query())
        .and(optional_header("last-event-id"))
        .and(client(state.clone()))
        .and(with_state(state.clone()))
        .and_then(|query, last_event_id, client, state| {
            guard(
                internal,
                super::stream::stream(query, last_event_id, client, state),
            )
        });
    let status_feed = warp::path!("api" / "status.json")
        .and(read_method())
        .and(conditionals())
        .and(with_state(state.clone()))
        .and_then(|conditionals, state| {
            guard(internal, async move {
                handlers::status_feed(conditionals, state)
            })
        });
    let atom = warp::path!("openapi" / "v1" / "records.atom")
        .and(read_method())
        .and(raw_query())
        .and(request_host())
        .and(client(state.clone()))
        .and(conditionals())
        .and(with_state(state.clone()))
        .and_then(|query, host, client, conditionals, state| {
            guard(
                internal,
                super::feeds::atom(query, host, client, conditionals, state),
            )
        });
    let ics = warp::path!("openapi" / "v1" / "records.ics")
        .and(read_method())
        .and(raw_query())
        .and(client(state.clone()))
        .and(conditionals())
        .and(with_state(state.clone()))
        .and_then(|query, client, conditionals, state| {
            guard(
                internal,
                super::feeds::ics(query, client, conditionals, state),
            )
        });
    let fixed = |respond: fn() -> Response| move || guard(internal, async move { respond() });
    let openapi = warp::path!("openapi" / "v1" / "openapi.json")
        .and(read_method())
        .and_then(fixed(handlers::openapi));
    let docs = warp::path!("openapi" / "v1" / "docs")
        .and(read_method())
        .and_then(fixed(handlers::docs));
    let skill = warp::path!("openapi" / "v1" / "skill.md")
        .and(read_method())
        .and_then(fixed(handlers::skill));
    let healthz = warp::path!("healthz")
        .and(read_method())
        .and(raw_query())
        .and(with_state(state.clone()))
        .and_then(|query: String, state| {
            guard(internal, async move { handlers::healthz(&query, state) })
        });
    let preflight = warp::options()
        .and(warp::path::full())
        .and(optional_header("access-control-request-headers"))
        .and_then(
            |path: warp::path::FullPath, request_headers: Option<String>| async move {
                if handlers::KNOWN_PATHS.contains(&path.as_str()) {
                    let Ok(response) =
                        guard(
                            internal,
                            async move { handlers::preflight(request_headers) },
                        )
                        .await;
                    Ok(response)
                } else {
                    Err(warp::reject::not_found())
                }
            },
        );
    // MCP: POST with a body of at most 64 KiB, with or without a
    // Content-Length (chunked HTTP/1.1, HTTP/2); any other method gets its
    // own 405 or preflight.
    let mcp_state = state.clone();
    let mcp_post = warp::path!("mcp")
        .and(warp::post())
        .and(optional_header("content-length"))
        .and(warp::body::stream())
        .and(client(state.clone()))
        .and(warp::header::headers_cloned())
        .and(optional_header("mcp-protocol-version"))
        .and_then(
            move |length, body, ip, headers: warp::http::HeaderMap, version| {
                let state = mcp_state.clone();
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
                    guard(
                        on_panic,
                        super::mcp::handle(state, ip, origins, version, body),
                    )
                    .await
                }
            },
        );
    let mcp_other = warp::path!("mcp")
        .and(warp::method())
        .and(optional_header("access-control-request-headers"))
        .and_then(|method, request_headers| {
            guard(super::mcp::internal_error_without_id, async move {
                handlers::mcp_not_post(method, request_headers)
            })
        });
    // CONNECT (whose authority-form target has no path for warp to read),
    // other targets that are not a path, and the bare root are answered
    // before any path is read.
    let connect = warp::method().and_then(|method: warp::http::Method| async move {
        if method == warp::http::Method::CONNECT {
            Ok(ApiError::MethodNotAllowed.response())
        } else {
            Err(warp::reject::not_found())
        }
    });
    // Targets that are not a path: `OPTIONS *` asks about the server as a
    // whole (the preflight answer); anything else is a 400.
    let odd_target = warp::ext::optional::<TargetForm>()
        .and(warp::method())
        .and_then(
            |form: Option<TargetForm>, method: warp::http::Method| async move {
                match (form, method) {
                    (None, _) => Err(warp::reject::not_found()),
                    (Some(TargetForm::Asterisk), warp::http::Method::OPTIONS) => {
                        Ok(handlers::preflight(None))
                    }
                    (Some(_), _) => Ok(ApiError::BadTarget.response()),
                }
            },
        );
    // The status page and the record pages (unless `--no-site`): their
    // paths end in `/` or hold an encoded id, so they come before the exact
    // paths of the API.
    // The path is read first, so an API request is turned away before any
    // header or query is copied.
    let site_state = state.clone();
    let site_path = warp::path::full().and_then(move |path: warp::path::FullPath| {
        let page = super::site::SitePath::parse(path.as_str()).filter(|_| site_state.site_enabled);
        async move { page.ok_or_else(warp::reject::not_found) }
    });
    let site = site_path
        .and(warp::method())
        .and(raw_query())
        .and(optional_header("accept-language"))
        .and(conditionals())
        .and(with_state(state.clone()))
        .and_then(
            |page,
             method: warp::http::Method,
             query: String,
             accept_language: Option<String>,
             conditionals: Conditionals,
             state: Arc<AppState>| {
                guard(internal, async move {
                    super::site::answer(
                        &state,
                        page,
                        &method,
                        &query,
                        accept_language.as_deref(),
                        &conditionals,
                    )
                })
            },
        );
    let badge = warp::path!("openapi" / "v1" / "badge.json")
        .and(read_method())
        .and(conditionals())
        .and(with_state(state.clone()))
        .and_then(|conditionals, state| {
            guard(internal, async move {
                super::site::badge(&state, &conditionals)
            })
        });
    let root = warp::path::end().map(|| ApiError::NotFound.response());
    let unrouted =
        warp::path::full().map(|path: warp::path::FullPath| handlers::unrouted(path.as_str()));

    let named = latest
        .or(list)
        .unify()
        .or(stream)
        .unify()
        .or(atom)
        .unify()
        .or(ics)
        .unify()
        .or(openapi)
        .unify()
        .or(docs)
        .unify()
        .or(skill)
        .unify()
        .or(healthz)
        .unify()
        .or(status_feed)
        .unify()
        .or(badge)
        .unify()
        .or(preflight)
        .unify()
        .or(mcp_post)
        .unify()
        .or(mcp_other)
        .unify();
    let answered = connect
        .or(odd_target)
        .unify()
        .or(site)
        .unify()
        .or(root)
        .unify()
        .or(exact_path().and(named))
        .unify()
        .or(unrouted)
        .unify();
    let guard_state = state.clone();
    // `client` never rejects; the fallback only tells the compiler so.
    let client_key = client(state)
        .or(warp::any().map(|| IpAddr::V4(Ipv4Addr::UNSPECIFIED)))
        .unify();
    client_key
        .and(answered)
        .map(move |ip: IpAddr, response: Response| flood_guarded(&guard_state, ip, response))
}
