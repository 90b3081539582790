//! The request filters every route is made of: what a request carries (its
//! raw query, a header, its authority, its client key, its conditional
//! headers), the read methods, exact paths, and the one chain every data
//! route shares ([`data_request`]). None of them rejects a request for a
//! malformed header: that is the handler's to answer.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use warp::filters::BoxedFilter;
use warp::Filter;

use super::clients::{ClientKey, ClientKeys};
use super::conditional::Conditionals;
use super::transport::PeerAddr;

/// Injects `value` (a feature's state) into a filter chain, as warp's
/// `todos` example injects its database.
pub(super) fn with<T: Clone + Send + Sync + 'static>(
    value: T,
) -> impl Filter<Extract = (T,), Error = Infallible> + Clone {
    warp::any().map(move || value.clone())
}

/// The raw query string, or "" when the URL has none.
pub(super) fn raw_query() -> impl Filter<Extract = (String,), Error = Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

/// The peer address: from our accept loop ([`PeerAddr`]), or warp's own
/// (the in-process `warp::test` requests).
fn peer() -> impl Filter<Extract = (Option<SocketAddr>,), Error = Infallible> + Clone {
    warp::ext::optional::<PeerAddr>()
        .and(warp::addr::remote())
        .map(|ours: Option<PeerAddr>, warps: Option<SocketAddr>| ours.map(|p| p.0).or(warps))
}

/// The client key of the request ([`ClientKeys::of_request`], computed once
/// by the accept loop). In-process `warp::test` requests have no such key:
/// they are keyed by their peer.
pub(super) fn client(keys: Arc<ClientKeys>) -> BoxedFilter<(IpAddr,)> {
    warp::ext::optional::<ClientKey>()
        .and(peer())
        .map(move |key: Option<ClientKey>, peer: Option<SocketAddr>| {
            key.map_or_else(
                || keys.of_peer(peer.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip())),
                |k| k.0,
            )
        })
        .boxed()
}

/// The conditional headers, read once by the accept loop; in-process
/// `warp::test` requests (no accept loop) have none.
pub(super) fn conditionals() -> impl Filter<Extract = (Conditionals,), Error = Infallible> + Clone {
    warp::ext::optional::<Conditionals>().map(Option::unwrap_or_default)
}

/// A header as text, or `None` when absent or not visible ASCII (never a rejection).
pub(super) fn optional_header(
    name: &'static str,
) -> impl Filter<Extract = (Option<String>,), Error = Infallible> + Clone {
    warp::header::optional::<String>(name)
        .or(warp::any().map(|| None))
        .unify()
}

/// The request's authority (`Host`, or HTTP/2's `:authority`) as text;
/// `None` when absent, unreadable or contradictory (never a rejection).
pub(super) fn request_host() -> impl Filter<Extract = (Option<String>,), Error = Infallible> + Clone
{
    warp::host::optional()
        .map(|host: Option<warp::host::Authority>| host.map(|h| h.as_str().to_owned()))
        .or(warp::any().map(|| None))
        .unify()
}

/// GET or HEAD (hyper drops the body of a HEAD answer).
pub(super) fn read_method() -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::get().or(warp::head()).unify()
}

/// Rejects a path with a trailing slash (`/openapi/v1/records/`), which
/// `warp::path!` would otherwise accept: paths are exact.
pub(super) fn exact_path() -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
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

/// What a data route (the record endpoints, the feeds) reads of a request.
#[derive(Debug)]
pub(crate) struct DataRequest {
    /// The raw query string ("" when none).
    pub query: String,
    /// The client key the quota counts.
    pub client: IpAddr,
    /// `If-None-Match` / `If-Modified-Since`.
    pub conditionals: Conditionals,
}

/// The one chain of every data route: GET or HEAD, the raw query, the
/// client key, the conditional headers.
pub(super) fn data_request(
    keys: Arc<ClientKeys>,
) -> impl Filter<Extract = (DataRequest,), Error = warp::Rejection> + Clone {
    read_method()
        .and(raw_query())
        .and(client(keys))
        .and(conditionals())
        .map(|query, client, conditionals| DataRequest {
            query,
            client,
            conditionals,
        })
}
