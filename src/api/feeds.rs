//! The subscription feeds: `GET /openapi/v1/records.atom` (Atom) and
//! `GET /openapi/v1/records.ics` (iCalendar).
//!
//! Thin, like every handler: parse the strict query, load the published
//! view, call the pure renderer of [`crate::feeds`]. Admission (304 when
//! the client's copy is current, else counted exactly like
//! `/openapi/v1/records`) is the admission module's; a refused query (422)
//! or no snapshot yet (503) is never a 304.

use std::sync::Arc;

use warp::http::StatusCode;
use warp::reply::Response;

use super::filters::DataRequest;
use super::handlers::{answer_data, Data};
use super::responses::with_body;
use super::site::Site;
use crate::feeds::{atom, ics, BaseUrl};
use crate::query::{parse_atom_query, parse_ics_query};

/// `GET /openapi/v1/records.atom?kind=&plan=`; `host` is the request's
/// authority, the base of the feed's links unless one is configured.
pub(crate) async fn atom(
    request: DataRequest,
    host: Option<String>,
    data: Arc<Data>,
    site: &Site,
) -> Response {
    let query = parse_atom_query(&request.query);
    answer_data(&data, &request, query, |view, query| {
        let from_host;
        let (base, fixed) = match &site.public_base_url {
            Some(base) => (base, true),
            None => {
                from_host = BaseUrl::from_host(host.as_deref());
                (&from_host, false)
            }
        };
        let body = atom::render_shared(view, &query, base, fixed, site.record_pages());
        with_body(
            StatusCode::OK,
            atom::CONTENT_TYPE,
            warp::http::Response::new(body),
        )
    })
    .await
}

/// `GET /openapi/v1/records.ics?kind=&plan=&alarm=`.
pub(crate) async fn ics(request: DataRequest, data: Arc<Data>, site: &Site) -> Response {
    let query = parse_ics_query(&request.query);
    answer_data(&data, &request, query, |view, query| {
        with_body(
            StatusCode::OK,
            ics::CONTENT_TYPE,
            warp::http::Response::new(ics::render(view, &query, site.record_pages())),
        )
    })
    .await
}
