//! One handler per route: parse, call one query function, build the body.
//!
//! Data handlers read the published view through an `arc-swap` guard (no
//! lock shared with reload) and write the envelope around pre-serialised
//! records, so a request costs O(pageSize).

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use warp::http::{header, HeaderMap, HeaderValue, StatusCode};
use warp::reply::Response;

use bytes::Bytes;

use super::admission::{Answer, DataSource, Quota};
use super::assets::{docs_html_zh, DOCS_CSP, DOCS_HTML, OPENAPI_JSON, SKILL_MD};
use super::conditional::{rest_uncounted, Conditionals};
use super::errors::ApiError;
use super::representation::{Representation, ViewBodies};
use super::request::DataRequest;
use super::responses::{json, with_body};
use crate::encoding::Effort;
use crate::feeds::AsOf;
use crate::model::{BaseUrl, KindFilter};
use crate::query::{
    parse_latest_query, parse_list_query, AtomQuery, IcsQuery, LatestQuery, ListQuery,
    PublishedView, Validators, DEFAULT_PAGE_SIZE,
};
use crate::reload::{MirroredFeed, ViewHandle};
use crate::site::i18n::Lang;
use crate::snapshot::Mode;

/// What the data routes answer from and count against: the served view,
/// the quota (with the clock both go by), and the bodies made of the view.
#[derive(Clone, Debug)]
pub struct Data {
    /// The published view, swapped atomically by the reloader.
    pub view: ViewHandle,
    /// The quota, the flood guard and the clock; a reload swaps in a new one.
    quota: Arc<arc_swap::ArcSwap<Quota>>,
    /// The data routes' bodies made from the served view, coded forms included.
    pub(crate) bodies: Arc<ViewBodies<BodyKey>>,
    /// The matcher's tolerance in milliseconds ([`crate::remind::unconfirmed_at`]).
    pub tolerance_ms: i64,
}

impl Data {
    /// The data routes' state over `view` and `quota`, with no body made
    /// yet, announcing unconfirmed schedules `tolerance_ms` after their
    /// window (the matcher's tolerance, from the settings).
    pub fn new(view: ViewHandle, quota: Arc<Quota>, tolerance_ms: i64) -> Self {
        Self {
            view,
            quota: Arc::new(arc_swap::ArcSwap::new(quota)),
            bodies: Default::default(),
            tolerance_ms,
        }
    }

    /// The quota in force: requests admitted under it are counted by it,
    /// even when a reload swaps in another meanwhile.
    pub fn quota(&self) -> Arc<Quota> {
        self.quota.load_full()
    }

    /// Puts `quota` in force for the requests admitted from now on.
    pub(crate) fn set_quota(&self, quota: Arc<Quota>) {
        self.quota.store(quota);
    }

    /// Now, by the server's clock (`/healthz` ages, the pages' verdicts).
    pub fn now(&self) -> crate::model::Timestamp {
        self.quota.load().clock.now()
    }

    /// The instant the feeds of `view` speak of now ([`AsOf`]).
    pub(crate) fn as_of(&self, view: &PublishedView) -> AsOf {
        AsOf::of(view, self.tolerance_ms, self.now())
    }

    /// Bytes held by the bodies made from the served view (`/metrics`).
    pub fn body_bytes(&self) -> usize {
        self.bodies.held_bytes()
    }

    /// The memory their cache counts against its bound (`/metrics`).
    pub fn body_memory(&self) -> usize {
        self.bodies.held_memory()
    }
}

/// What a data route's body is a function of besides the view: the key of
/// its representation in [`Data::bodies`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum DataBody {
    /// `/records/latest`.
    Latest(LatestQuery),
    /// `/records`.
    List(ListQuery),
    /// `/records.atom`, the base of its links, and the instant its words are for.
    Atom(AtomQuery, FeedBase, AsOf),
    /// `/records.ics`, and the instant its words are for.
    Ics(IcsQuery, AsOf),
}

/// The key of a body in [`Data::bodies`]: one a data route renders from
/// the view, or the mirrored feed as stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BodyKey {
    /// A data route's body.
    Data(DataBody),
    /// `/api/status.json`: the mirrored feed of this entity tag.
    StatusFeed(Bytes),
}

impl super::representation::Weigh for BodyKey {
    fn heap_bytes(&self) -> usize {
        let plan =
            |plan: &Option<crate::model::PlanId>| plan.as_ref().map_or(0, |p| p.as_str().len());
        match self {
            BodyKey::Data(DataBody::Latest(_) | DataBody::List(_)) => 0,
            BodyKey::Data(DataBody::Atom(query, base, _)) => {
                plan(&query.plan)
                    + match base {
                        FeedBase::Host(Some(host)) => host.capacity(),
                        FeedBase::Host(None) | FeedBase::Configured => 0,
                    }
            }
            BodyKey::Data(DataBody::Ics(query, _)) => plan(&query.plan),
            BodyKey::StatusFeed(tag) => tag.len(),
        }
    }
}

/// The base of the Atom feed's links.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum FeedBase {
    /// `--public-base-url`.
    Configured,
    /// The request's host (`None`: it named none, so links are relative).
    Host(Option<String>),
}

/// The links the feeds are made with: the configured base URL (`None`:
/// the request's host) and the record pages' base.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Links<'a> {
    /// `--public-base-url`.
    pub base: Option<&'a BaseUrl>,
    /// Where the record pages are, when the feeds link to them.
    pub pages: Option<&'a BaseUrl>,
}

impl DataBody {
    /// The hot set: the bodies nearly every client asks for (each filter's
    /// latest record, first page at the default size, calendar, and Atom
    /// feed when its links do not depend on the request; the feeds in the
    /// words of `as_of`), made when a view is published, at the encoders'
    /// best levels, and kept whatever the cache's bound.
    pub(crate) fn hot_set(links: Links<'_>, as_of: AsOf) -> Vec<DataBody> {
        let mut hot = Vec::new();
        for kind in KindFilter::ALL {
            hot.push(DataBody::Latest(LatestQuery { kind }));
            hot.push(DataBody::List(ListQuery {
                kind,
                page: 1,
                page_size: DEFAULT_PAGE_SIZE,
            }));
            hot.push(DataBody::Ics(
                IcsQuery {
                    kind,
                    plan: None,
                    alarm: None,
                },
                as_of,
            ));
            if links.base.is_some() {
                hot.push(DataBody::Atom(
                    AtomQuery { kind, plan: None },
                    FeedBase::Configured,
                    as_of,
                ));
            }
        }
        hot
    }

    fn is_hot(&self) -> bool {
        match self {
            DataBody::Latest(_) => true,
            DataBody::List(query) => query.page == 1 && query.page_size == DEFAULT_PAGE_SIZE,
            DataBody::Atom(query, base, _) => query.plan.is_none() && *base == FeedBase::Configured,
            DataBody::Ics(query, _) => query.plan.is_none() && query.alarm.is_none(),
        }
    }

    /// The validators of its representation: the view's, and for a feed
    /// also the bases of its links and the instant its words are for,
    /// which its bytes depend on (a feed last changed when a schedule was
    /// last told "not confirmed", if that is after the view's data).
    fn validators<'v>(
        &self,
        view: &'v PublishedView,
        links: Links<'_>,
    ) -> std::borrow::Cow<'v, Validators> {
        use std::borrow::Cow;
        let pages = links.pages.map_or(&b""[..], |p| p.as_str().as_bytes());
        match self {
            DataBody::Latest(_) | DataBody::List(_) => Cow::Borrowed(view.validators()),
            DataBody::Atom(_, feed_base, as_of) => {
                let (from, base): (&[u8], &[u8]) = match (feed_base, links.base) {
                    (FeedBase::Configured, Some(base)) => (b"configured", base.as_str().as_bytes()),
                    (FeedBase::Host(Some(host)), _) => (b"host", host.as_bytes()),
                    (FeedBase::Host(None), _) | (FeedBase::Configured, None) => (b"none", b""),
                };
                Cow::Owned(
                    view.validators()
                        .varied(&[b"atom", from, base, pages, &as_of.tag_input()])
                        .changed_at(as_of.since),
                )
            }
            DataBody::Ics(_, as_of) => Cow::Owned(
                view.validators()
                    .varied(&[b"ics", pages, &as_of.tag_input()])
                    .changed_at(as_of.since),
            ),
        }
    }

    /// Its representation made from `view` (hot: coded at the best
    /// levels; else quickly, on the request that first needs it).
    fn render(&self, view: &PublishedView, links: Links<'_>) -> Representation {
        let (content_type, body) = match self {
            // Exactly as long as it is: a cold entry is kept (and counted)
            // at its length, not at the capacity its builder guessed.
            DataBody::Latest(query) => (
                "application/json",
                Bytes::from(latest_envelope(view, *query).into_boxed_slice()),
            ),
            DataBody::List(query) => (
                "application/json",
                Bytes::from(list_envelope(view, *query).into_boxed_slice()),
            ),
            DataBody::Atom(query, base, as_of) => {
                let from_host;
                let (base, fixed) = match (base, links.base) {
                    (FeedBase::Configured, Some(base)) => (base, true),
                    (FeedBase::Host(host), _) => {
                        from_host = BaseUrl::from_host(host.as_deref());
                        (&from_host, false)
                    }
                    (FeedBase::Configured, None) => {
                        from_host = BaseUrl::from_host(None);
                        (&from_host, false)
                    }
                };
                (
                    crate::feeds::atom::CONTENT_TYPE,
                    crate::feeds::atom::render_shared(
                        view,
                        query,
                        base,
                        fixed,
                        links.pages,
                        *as_of,
                    ),
                )
            }
            DataBody::Ics(query, as_of) => (
                crate::feeds::ics::CONTENT_TYPE,
                crate::feeds::ics::render(view, query, links.pages, *as_of),
            ),
        };
        let effort = if self.is_hot() {
            Effort::Best
        } else {
            Effort::Quick
        };
        Representation::new(
            content_type,
            body,
            &self.validators(view, links).etag,
            effort,
        )
    }
}

/// Makes the hot set of `view` and every coded form of it (a blocking
/// task's work, when a view is published).
pub(crate) fn warm(data: &Data, view: &PublishedView, links: Links<'_>) {
    for body in DataBody::hot_set(links, data.as_of(view)) {
        data_body(data, view, &body, links).warm();
    }
    if let Some(feed) = data.view.feed().filter(|_| view.mode() == Mode::Upstream) {
        status_feed_body(data, view, &feed).warm();
    }
}

/// The representation of `body` made from `view`: kept in [`Data::bodies`]
/// (past the bound when hot), made on first need.
fn data_body(
    data: &Data,
    view: &PublishedView,
    body: &DataBody,
    links: Links<'_>,
) -> Arc<Representation> {
    let key = BodyKey::Data(body.clone());
    data.bodies.get(view.generation(), &key, body.is_hot(), || {
        body.render(view, links)
    })
}

/// The mirrored feed's representation: its stored bytes, under its own tag.
fn status_feed_body(data: &Data, view: &PublishedView, feed: &MirroredFeed) -> Arc<Representation> {
    let key = BodyKey::StatusFeed(feed.etag.clone());
    data.bodies.get(view.generation(), &key, true, || {
        Representation::new(
            "application/json",
            feed.bytes.clone(),
            &feed.etag,
            Effort::Best,
        )
    })
}

/// `GET /openapi/v1/records/latest`.
pub(crate) fn latest<'a>(request: &DataRequest<'_>, data: &'a Data) -> Answer<'a> {
    let query = parse_latest_query(request.query);
    data_answer(data, query, |q, _| DataBody::Latest(q), NO_LINKS)
}

/// `GET /openapi/v1/records`.
pub(crate) async fn list<'a>(request: &DataRequest<'_>, data: &'a Data) -> Answer<'a> {
    crate::testhook::hold(request.query).await;
    let query = parse_list_query(request.query);
    data_answer(data, query, |q, _| DataBody::List(q), NO_LINKS)
}

/// The links of a body that has none.
const NO_LINKS: Links<'static> = Links {
    base: None,
    pages: None,
};

/// What a data route serves from the view served now: 422 for a bad query
/// and 503 before the first snapshot, else the body `body(query, view)` names.
pub(crate) fn data_answer<'a, Q, E: std::fmt::Display>(
    data: &'a Data,
    query: Result<Q, E>,
    body: impl FnOnce(Q, &PublishedView) -> DataBody,
    links: Links<'a>,
) -> Answer<'a> {
    Answer::Data(match (data.view.load_full(), query) {
        (Some(view), Ok(query)) => Ok(Box::new(Served {
            data,
            body: body(query, &view),
            view,
            links,
        })),
        (_, Err(e)) => Err(ApiError::InvalidQuery(e.to_string())),
        (None, Ok(_)) => Err(ApiError::DataUnavailable),
    })
}

/// A data route's body on the view served when the request came.
struct Served<'a> {
    data: &'a Data,
    view: Arc<PublishedView>,
    body: DataBody,
    links: Links<'a>,
}

impl DataSource for Served<'_> {
    fn validators(&self) -> std::borrow::Cow<'_, Validators> {
        self.body.validators(&self.view, self.links)
    }

    fn representation(&self) -> Arc<Representation> {
        data_body(self.data, &self.view, &self.body, self.links)
    }
}

/// `{ok: true, data: Record|null, meta}` for `/records/latest` (and the MCP tool).
pub(crate) fn latest_envelope(view: &PublishedView, query: LatestQuery) -> Vec<u8> {
    let record = view.latest(query.kind);
    let mut body = Vec::with_capacity(64 + record.map_or(4, str::len) + view.meta_json().len());
    body.extend_from_slice(b"{\"ok\":true,\"data\":");
    body.extend_from_slice(record.unwrap_or("null").as_bytes());
    push_meta(&mut body, view);
    body
}

/// `{ok: true, data: Page, meta}` for `/records` (and the MCP tool).
pub(crate) fn list_envelope(view: &PublishedView, query: ListQuery) -> Vec<u8> {
    let window = view.page(query.kind, query.page, query.page_size);
    let items = &view.ordered(query.kind)[window.start..window.end];
    let mut body = Vec::with_capacity(160 + items.len() * 700 + view.meta_json().len());
    body.extend_from_slice(b"{\"ok\":true,\"data\":{\"items\":[");
    for (n, &index) in items.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        body.extend_from_slice(view.record_json(index).as_bytes());
    }
    let _ = write!(
        body,
        "],\"page\":{},\"pageSize\":{},\"total\":{},\"totalPages\":{},\"hasNext\":{}}}",
        query.page, query.page_size, window.total, window.total_pages, window.has_next
    );
    push_meta(&mut body, view);
    body
}

fn push_meta(body: &mut Vec<u8>, view: &PublishedView) {
    body.extend_from_slice(b",\"meta\":");
    body.extend_from_slice(view.meta_json().as_bytes());
    body.push(b'}');
}

/// `GET /api/status.json`: the last good public status feed, byte for
/// byte, in upstream mode with the public feed as upstream; not counted.
pub(crate) fn status_feed(conditionals: &Conditionals, data: &Data) -> Response {
    let view = data.view.load_full();
    match (view, data.view.feed()) {
        (None, _) => ApiError::DataUnavailable.response(),
        (Some(view), Some(feed)) if view.mode() == Mode::Upstream => {
            let representation = status_feed_body(data, &view, &feed);
            rest_uncounted(conditionals, &representation, |headers| {
                super::responses::cors(headers);
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            })
        }
        (Some(view), _) if view.mode() == Mode::Standalone => ApiError::NotHere(
            "this instance runs in standalone mode: it has no upstream status feed to mirror",
        )
        .response(),
        (Some(_), _) => ApiError::NotHere(
            "this instance's upstream is not the public status feed (or no good feed has been fetched yet): nothing to mirror",
        )
        .response(),
    }
}

/// A fixed document: made, with its coded forms at the best levels, once
/// per process (the first request, or [`warm_documents`] at start).
fn document(
    slot: &'static OnceLock<Representation>,
    content_type: &'static str,
    body: &'static str,
) -> &'static Representation {
    slot.get_or_init(|| {
        let representation = Representation::tagged_by_bytes(
            content_type,
            Bytes::from_static(body.as_bytes()),
            Effort::Best,
        );
        representation.warm();
        representation
    })
}

static OPENAPI: OnceLock<Representation> = OnceLock::new();
static DOCS: OnceLock<Representation> = OnceLock::new();
static DOCS_ZH: OnceLock<Representation> = OnceLock::new();
static SKILL: OnceLock<Representation> = OnceLock::new();

fn openapi_document() -> &'static Representation {
    document(&OPENAPI, "application/json", OPENAPI_JSON)
}

fn docs_document(lang: Lang) -> &'static Representation {
    match lang {
        Lang::En => document(&DOCS, "text/html; charset=utf-8", DOCS_HTML),
        Lang::Zh => document(&DOCS_ZH, "text/html; charset=utf-8", docs_html_zh()),
    }
}

fn skill_document() -> &'static Representation {
    document(&SKILL, "text/markdown; charset=utf-8", SKILL_MD)
}

/// Makes the fixed documents and their coded forms (a blocking task's
/// work, when the server starts).
pub(crate) fn warm_documents() {
    openapi_document();
    for lang in Lang::ALL {
        docs_document(lang);
    }
    skill_document();
}

/// `GET /openapi/v1/openapi.json`.
pub(crate) fn openapi(conditionals: &Conditionals) -> Response {
    rest_uncounted(conditionals, openapi_document(), super::responses::cors)
}

/// `GET /openapi/v1/docs` in `lang` (chosen from `Accept-Language` when
/// `negotiated`), under its own strict Content-Security-Policy.
pub(crate) fn docs(conditionals: &Conditionals, lang: Lang, negotiated: bool) -> Response {
    rest_uncounted(conditionals, docs_document(lang), |headers| {
        super::responses::cors(headers);
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DOCS_CSP),
        );
        super::responses::language_headers(headers, lang, negotiated);
    })
}

/// `GET /openapi/v1/skill.md`: offered as a download.
pub(crate) fn skill(conditionals: &Conditionals) -> Response {
    rest_uncounted(conditionals, skill_document(), |headers| {
        super::responses::cors(headers);
        headers.insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"reset-records-api-skill.md\""),
        );
    })
}

/// `GET /healthz`: 200 while a snapshot is served, 503 while none is.
/// `GET /healthz?ready=fresh` (readiness for staleness): also 503, with
/// status `stale`, while the data dir's upstream sync status as of now is
/// `stale` or `error`; see [`crate::status::StatusReport::stale`].
pub(crate) fn healthz(query: &str, data: &Data, data_dir: &Path) -> Response {
    let fresh = match query {
        "" => false,
        "ready=fresh" => true,
        _ => {
            return ApiError::InvalidQuery("healthz accepts only ready=fresh (or no query)".into())
                .response()
        }
    };
    let guard = data.view.load();
    let now = data.now();
    let Some(view) = guard.as_deref() else {
        let body = serde_json::json!({
            "ok": false, "status": "unavailable", "mode": null, "sequence": null,
            "generatedAt": null, "ageSeconds": null, "syncStatus": null,
        });
        return json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::to_vec(&body).expect("plain JSON"),
        );
    };
    // The snapshot's status is as of its publish; readiness wants it as of
    // now, from the sync state beside it (a 304 or a failure since).
    let sync_status = match (fresh, view.mode()) {
        (true, crate::snapshot::Mode::Upstream) => {
            crate::sync::state::status_now(data_dir, now).or(view.sync_status())
        }
        _ => view.sync_status(),
    };
    let stale = fresh && sync_status.is_some_and(|s| s.is_behind());
    let mut body = serde_json::json!({
        "ok": !stale,
        "status": if stale { "stale" } else { "ready" },
        "mode": view.mode().as_str(),
        "sequence": view.sequence(),
        "generatedAt": view.generated_at(),
        "ageSeconds": (now.as_millis() - view.generated_at().as_millis()).max(0) / 1000,
        "syncStatus": sync_status,
    });
    if let Some(warning) = data.view.warning() {
        body["warning"] = serde_json::Value::from(warning.as_str());
    }
    let status = if stale {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    json(status, serde_json::to_vec(&body).expect("plain JSON"))
}

/// `OPTIONS` on a route of the table (or `*`): a CORS preflight answer
/// with no body, allowing `methods`.
pub fn preflight(methods: &'static str, request_headers: Option<&str>) -> Response {
    let mut response = with_body(StatusCode::NO_CONTENT, "text/plain", "");
    response.headers_mut().remove(header::CONTENT_TYPE);
    let headers: &mut HeaderMap = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(methods),
    );
    let allowed = request_headers
        .and_then(|h| HeaderValue::from_str(h).ok())
        .unwrap_or_else(|| HeaderValue::from_static("*"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, allowed);
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}
