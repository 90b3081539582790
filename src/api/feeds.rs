//! The subscription feeds: `GET /openapi/v1/records.atom` (Atom) and
//! `GET /openapi/v1/records.ics` (iCalendar).
//!
//! Thin, like every handler: parse the strict query, load the published
//! view, call the pure renderer of [`crate::render`]. Admission (304 when
//! the client's copy is current, else counted exactly like
//! `/openapi/v1/records`) is the admission module's; a refused query (422)
//! or no snapshot yet (503) is never a 304.

use std::net::IpAddr;
use std::sync::Arc;

use warp::http::StatusCode;
use warp::reply::Response;

use super::admission::Conditionals;
use super::handlers::answer_data;
use super::responses::with_body;
use super::server::AppState;
use crate::query::{parse_atom_query, parse_ics_query};
use crate::render::{atom, ics, BaseUrl};

/// `GET /openapi/v1/records.atom?kind=&plan=`; `host` is the request's
/// authority, the base of the feed's links unless one is configured.
pub(crate) async fn atom(
    raw_query: String,
    host: Option<String>,
    client: IpAddr,
    conditionals: Conditionals,
    state: Arc<AppState>,
) -> Response {
    let query = parse_atom_query(&raw_query);
    answer_data(
        &state,
        client,
        &conditionals,
        &raw_query,
        query,
        |view, query| {
            let from_host;
            let (base, fixed) = match &state.public_base_url {
                Some(base) => (base, true),
                None => {
                    from_host = BaseUrl::from_host(host.as_deref());
                    (&from_host, false)
                }
            };
            let body = atom::render_shared(view, &query, base, fixed, state.record_pages());
            with_body(
                StatusCode::OK,
                atom::CONTENT_TYPE,
                warp::http::Response::new(body),
            )
        },
    )
    .await
}

/// `GET /openapi/v1/records.ics?kind=&plan=&alarm=`.
pub(crate) async fn ics(
    raw_query: String,
    client: IpAddr,
    conditionals: Conditionals,
    state: Arc<AppState>,
) -> Response {
    let query = parse_ics_query(&raw_query);
    answer_data(
        &state,
        client,
        &conditionals,
        &raw_query,
        query,
        |view, query| {
            with_body(
                StatusCode::OK,
                ics::CONTENT_TYPE,
                warp::http::Response::new(ics::render(view, &query, state.record_pages())),
            )
        },
    )
    .await
}
