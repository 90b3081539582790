//! The subscription feeds: `GET /openapi/v1/records.atom` (Atom) and
//! `GET /openapi/v1/records.ics` (iCalendar).
//!
//! Thin, like every handler: parse the strict query, load the published
//! view, call the pure renderer of [`crate::feeds`] with the instant its
//! words are for ([`crate::feeds::AsOf`], from the server's clock and the
//! matcher's tolerance). Admission (304 when
//! the client's copy is current, else counted exactly like
//! `/openapi/v1/records`) is the admission module's; a refused query (422)
//! or no snapshot yet (503) is never a 304.

use super::admission::Answer;
use super::handlers::{data_answer, Data, DataBody, FeedBase};
use super::request::DataRequest;
use super::site::Site;
use crate::query::{parse_atom_query, parse_ics_query};

/// `GET /openapi/v1/records.atom?kind=&plan=`; `host` is the request's
/// authority, the base of the feed's links unless one is configured.
pub(crate) fn atom<'a>(
    request: &DataRequest<'_>,
    host: Option<String>,
    data: &'a Data,
    site: &'a Site,
) -> Answer<'a> {
    let query = parse_atom_query(request.query);
    let base = match site.public_base_url {
        Some(_) => FeedBase::Configured,
        None => FeedBase::Host(host),
    };
    let body = |query, view: &_| DataBody::Atom(query, base, data.as_of(view));
    data_answer(data, query, body, site.links())
}

/// `GET /openapi/v1/records.ics?kind=&plan=&alarm=`.
pub(crate) fn ics<'a>(request: &DataRequest<'_>, data: &'a Data, site: &'a Site) -> Answer<'a> {
    let query = parse_ics_query(request.query);
    let body = |query, view: &_| DataBody::Ics(query, data.as_of(view));
    data_answer(data, query, body, site.links())
}
