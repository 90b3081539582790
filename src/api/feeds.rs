//! The subscription feeds: `GET /openapi/v1/records.atom` (Atom) and
//! `GET /openapi/v1/records.ics` (iCalendar).
//!
//! Thin, like every handler: parse the strict query, load the published
//! view, call the pure renderer of [`crate::feeds`]. Admission (304 when
//! the client's copy is current, else counted exactly like
//! `/openapi/v1/records`) is the admission module's; a refused query (422)
//! or no snapshot yet (503) is never a 304.

use std::sync::Arc;

use warp::reply::Response;

use super::filters::DataRequest;
use super::handlers::{answer_data, Data, DataBody, FeedBase};
use super::site::Site;
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
    let base = match site.public_base_url {
        Some(_) => FeedBase::Configured,
        None => FeedBase::Host(host),
    };
    let body = |query| DataBody::Atom(query, base);
    answer_data(&data, &request, query, body, site.links()).await
}

/// `GET /openapi/v1/records.ics?kind=&plan=&alarm=`.
pub(crate) async fn ics(request: DataRequest, data: Arc<Data>, site: &Site) -> Response {
    let query = parse_ics_query(&request.query);
    answer_data(&data, &request, query, DataBody::Ics, site.links()).await
}
