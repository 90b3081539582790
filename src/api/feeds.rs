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

use bytes::Bytes;
use warp::http::StatusCode;
use warp::reply::Response;

use super::admission::{rest_data, Conditionals};
use super::handlers::{fresh, respond};
use super::responses::with_body;
use super::server::AppState;
use crate::query::{parse_atom_query, parse_ics_query, AtomQuery, IcsQuery, PublishedView};
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
    let view = state.view.load_full();
    let query = parse_atom_query(&raw_query);
    let current = fresh(&query, view.as_deref());
    rest_data(&state, client, &conditionals, current, || {
        respond(query, view.as_deref(), |view, query| {
            let base = match &state.public_base_url {
                Some(base) => base.clone(),
                None => BaseUrl::from_host(host.as_deref()),
            };
            with_body(
                StatusCode::OK,
                atom::CONTENT_TYPE,
                atom_response_body(view, &query, &base),
            )
        })
    })
    .await
}

/// `GET /openapi/v1/records.ics?kind=&plan=&alarm=`.
pub(crate) async fn ics(
    raw_query: String,
    client: IpAddr,
    conditionals: Conditionals,
    state: Arc<AppState>,
) -> Response {
    let view = state.view.load_full();
    let query = parse_ics_query(&raw_query);
    let current = fresh(&query, view.as_deref());
    rest_data(&state, client, &conditionals, current, || {
        respond(query, view.as_deref(), |view, query| {
            with_body(
                StatusCode::OK,
                ics::CONTENT_TYPE,
                warp::http::Response::new(ics_response_body(view, &query)),
            )
        })
    })
    .await
}

/// The body of a 200 from `/records.atom`.
pub(crate) fn atom_response_body(
    view: &PublishedView,
    query: &AtomQuery,
    base: &BaseUrl,
) -> Vec<u8> {
    atom::render(view, query, base)
}

/// The body of a 200 from `/records.ics` (shared bytes for the default variants).
pub(crate) fn ics_response_body(view: &PublishedView, query: &IcsQuery) -> Bytes {
    ics::render(view, query)
}
