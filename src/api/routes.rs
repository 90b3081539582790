//! Route composition: which filter chain answers which method and path.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use warp::filters::BoxedFilter;
use warp::Filter;

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

/// The client key of the request: the peer IP, or what a trusted proxy
/// says in the one forwarding header the operator named.
fn client(state: Arc<AppState>) -> BoxedFilter<(IpAddr,)> {
    let peer_ip =
        |peer: Option<SocketAddr>| peer.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip());
    if state.client_keys.trusted_proxies.is_empty() {
        // Forwarding headers change nothing without a trusted proxy: do not even read them.
        return warp::addr::remote()
            .map(move |peer: Option<SocketAddr>| state.client_keys.client_key(peer_ip(peer), None))
            .boxed();
    }
    // Behind a trusted proxy: its header decides.
    warp::addr::remote()
        .and(warp::header::headers_cloned())
        .map(
            move |peer: Option<SocketAddr>, headers: warp::http::HeaderMap| {
                client_key_of(&state.client_keys, peer_ip(peer), &headers)
            },
        )
        .boxed()
}

/// The key of a request from `peer` with `headers`: every line of the
/// policy's one header, joined in order (a proxy may add a line instead of
/// appending to the existing one).
fn client_key_of(keys: &ClientKeyPolicy, peer: IpAddr, headers: &warp::http::HeaderMap) -> IpAddr {
    let parts: Vec<&str> = headers
        .get_all(keys.header.name())
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let value = (!parts.is_empty()).then(|| parts.join(", "));
    keys.client_key(peer, value.as_deref())
}

/// A header as text, or `None` when absent or not visible ASCII (never a rejection).
fn optional_header(
    name: &'static str,
) -> impl Filter<Extract = (Option<String>,), Error = Infallible> + Clone {
    warp::header::optional::<String>(name)
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

/// Every route of the server, wrapped in the access log. The chain ends in a
/// catch-all that answers 404/405, so its error type is `Infallible`: the
/// compiler proves no rejection escapes without a section 7 body, which
/// makes a `recover` step unnecessary.
pub fn routes(
    state: Arc<AppState>,
) -> impl Filter<Extract = (impl warp::Reply,), Error = Infallible> + Clone + Send + Sync + 'static
{
    let latest = warp::path!("openapi" / "v1" / "records" / "latest")
        .and(read_method())
        .and(raw_query())
        .and(client(state.clone()))
        .and(with_state(state.clone()))
        .and_then(handlers::latest);
    let list = warp::path!("openapi" / "v1" / "records")
        .and(read_method())
        .and(raw_query())
        .and(client(state.clone()))
        .and(with_state(state.clone()))
        .and_then(handlers::list);
    // Uncounted routes pass the flood guard instead of the quota.
    let free = |respond: fn() -> warp::reply::Response| {
        let state = state.clone();
        client(state.clone()).map(move |ip| handlers::uncounted(&state, ip, respond))
    };
    let openapi = warp::path!("openapi" / "v1" / "openapi.json")
        .and(read_method())
        .and(free(handlers::openapi));
    let docs = warp::path!("openapi" / "v1" / "docs")
        .and(read_method())
        .and(free(handlers::docs));
    let skill = warp::path!("openapi" / "v1" / "skill.md")
        .and(read_method())
        .and(free(handlers::skill));
    let healthz = warp::path!("healthz")
        .and(read_method())
        .and(with_state(state.clone()))
        .map(handlers::healthz);
    let guard_state = state.clone();
    let preflight = warp::options()
        .and(warp::path::full())
        .and(optional_header("access-control-request-headers"))
        .and(client(state.clone()))
        .and_then(
            move |path: warp::path::FullPath, request_headers: Option<String>, ip: IpAddr| {
                let state = guard_state.clone();
                async move {
                    if handlers::KNOWN_PATHS.contains(&path.as_str()) {
                        Ok(handlers::uncounted(&state, ip, || {
                            handlers::preflight(request_headers)
                        }))
                    } else {
                        Err(warp::reject::not_found())
                    }
                }
            },
        );
    // MCP: POST with a bounded body; any other method gets its own 405/preflight/413.
    let mcp_state = state.clone();
    let mcp_post = warp::path!("mcp")
        .and(warp::post())
        .and(warp::body::content_length_limit(super::mcp::MAX_BODY_BYTES))
        .and(warp::body::bytes())
        .and(client(state.clone()))
        .and(warp::header::headers_cloned())
        .and_then(move |body, ip, headers: warp::http::HeaderMap| {
            let state = mcp_state.clone();
            // Every Origin line, raw: an unreadable one is refused, never taken as absent.
            let origins = headers.get_all("origin").iter().cloned().collect();
            async move { Ok::<_, Infallible>(super::mcp::handle(state, ip, origins, body).await) }
        });
    let mcp_other = warp::path!("mcp")
        .and(warp::method())
        .and(optional_header("access-control-request-headers"))
        .map(handlers::mcp_not_post);
    let unrouted =
        warp::path::full().map(|path: warp::path::FullPath| handlers::unrouted(path.as_str()));

    let named = latest
        .or(list)
        .unify()
        .or(openapi)
        .unify()
        .or(docs)
        .unify()
        .or(skill)
        .unify()
        .or(healthz)
        .unify()
        .or(preflight)
        .unify()
        .or(mcp_post)
        .unify()
        .or(mcp_other)
        .unify();
    exact_path()
        .and(named)
        .or(unrouted)
        .unify()
        .with(warp::log::custom(move |info| access_log(&state, info)))
}

/// One structured line per request. `client` is the key the quota used
/// (what a trusted proxy vouched for, IPv6 by its prefix), so an operator
/// can tell who got a 429. A peer that sends forwarding headers without
/// being trusted is warned about once: it is usually a proxy the operator
/// forgot to trust, and every client behind it then shares one quota.
fn access_log(state: &AppState, info: warp::log::Info<'_>) {
    let peer = info.remote_addr().map(|a| canonical(a.ip()));
    let client = peer.map(|peer| {
        let keys = &state.client_keys;
        let headers = info.request_headers();
        if !keys.trusts(peer) {
            let sent = FORWARDING_HEADERS
                .iter()
                .find(|name| headers.contains_key(**name));
            if let Some(name) = sent.filter(|_| state.untrusted_forwarders.first_time(peer)) {
                tracing::warn!(
                    "peer {peer} sends {name} but is not a trusted proxy, so every client behind it shares one quota; \
                     if it is your proxy, add it with --trust-proxy (and name its header with --client-ip-header)"
                );
            }
            return keys.client_key(peer, None);
        }
        client_key_of(keys, peer, headers)
    });
    tracing::info!(
        target: "resetctl::access",
        method = %info.method(),
        path = info.path(),
        status = info.status().as_u16(),
        latency_us = info.elapsed().as_micros() as u64,
        client = %client.map_or_else(|| "-".to_owned(), |c| c.to_string()),
    );
}
