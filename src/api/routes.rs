//! Route composition: which filter chain answers which method and path.

use std::convert::Infallible;
use std::sync::Arc;

use warp::Filter;

use super::handlers;
use super::server::AppState;

/// The raw query string, or "" when the URL has none.
fn raw_query() -> impl Filter<Extract = (String,), Error = Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

fn with_state(
    state: Arc<AppState>,
) -> impl Filter<Extract = (Arc<AppState>,), Error = Infallible> + Clone {
    warp::any().map(move || state.clone())
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
        .and(with_state(state.clone()))
        .map(handlers::latest);
    let list = warp::path!("openapi" / "v1" / "records")
        .and(read_method())
        .and(raw_query())
        .and(with_state(state.clone()))
        .map(handlers::list);
    let openapi = warp::path!("openapi" / "v1" / "openapi.json")
        .and(read_method())
        .map(handlers::openapi);
    let docs = warp::path!("openapi" / "v1" / "docs")
        .and(read_method())
        .map(handlers::docs);
    let skill = warp::path!("openapi" / "v1" / "skill.md")
        .and(read_method())
        .map(handlers::skill);
    let healthz = warp::path!("healthz")
        .and(read_method())
        .and(with_state(state))
        .map(handlers::healthz);
    let preflight = warp::options()
        .and(warp::path::full())
        .and(warp::header::optional::<String>(
            "access-control-request-headers",
        ))
        .and_then(
            |path: warp::path::FullPath, request_headers: Option<String>| async move {
                if handlers::KNOWN_PATHS.contains(&path.as_str()) {
                    Ok(handlers::preflight(request_headers))
                } else {
                    Err(warp::reject::not_found())
                }
            },
        );
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
        .unify();
    exact_path()
        .and(named)
        .or(unrouted)
        .unify()
        .with(warp::log::custom(access_log))
}

/// One structured line per request.
fn access_log(info: warp::log::Info<'_>) {
    tracing::info!(
        target: "resetctl::access",
        method = %info.method(),
        path = info.path(),
        status = info.status().as_u16(),
        latency_us = info.elapsed().as_micros() as u64,
        client = %info.remote_addr().map(|a| a.ip().to_string()).unwrap_or_else(|| "-".into()),
    );
}
