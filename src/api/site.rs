//! Serving the human side: the status page (`/`, `/en/`, `/zh/`), the
//! record pages (`/records/{id}`, `/en/records/{id}`, `/zh/records/{id}`)
//! and the badge (`/openapi/v1/badge.json`).
//!
//! None of them counts against the quota; every answer passes the flood
//! guard (in `routes`), is negotiated like every body a client reads
//! again ([`super::representation`]), and carries a strong `ETag` per form
//! (a hash of its bytes, the coding appended) with `If-None-Match`
//! answered 304. What [`crate::site`] renders is kept per served view and
//! per minute (the verdict, the relative times and the countdown move with
//! the clock), with its coded forms, so a request copies bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use warp::http::{header, HeaderMap, HeaderValue, StatusCode};
use warp::reply::Response;

use super::conditional::{rest_uncounted, Conditionals};
use super::errors::ApiError;
use super::handlers::Data;
use super::handlers::Links;
use super::representation::Representation;
use crate::encoding::Effort;
use crate::model::BaseUrl;
use crate::query::{parse_latest_query, KindFilter, PublishedView};
use crate::site::html::{self, Frame, Notice, PageContext};
use crate::site::i18n::Lang;
use crate::site::verdict::Trust;

/// Entries kept per view before the cache starts over (record pages are
/// kept as they are asked for; a crawler must not grow it without end).
const MAX_ENTRIES: usize = 4096;

/// What a page is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PageKey {
    Index(Lang, KindFilter),
    Record(Lang, u32),
    Badge,
}

#[derive(Clone, Debug)]
struct Kept {
    minute: i64,
    representation: Arc<Representation>,
}

/// The human side's state: whether the pages are served, the base of
/// their links, and what was rendered of the served view.
#[derive(Debug, Default)]
pub struct Site {
    /// Whether the status page and the record pages are served (`--no-site`: not; the badge is).
    pub pages: bool,
    /// The pages' name in their header and titles (`--site-name`); a
    /// reload swaps in a new one (`LiveSettings::set_site_name`).
    pub site_name: arc_swap::ArcSwap<String>,
    /// The base of the pages' links (`--public-base-url`); `None`: a relative base.
    pub public_base_url: Option<BaseUrl>,
    /// The pages rendered from the served view.
    pub cache: SiteCache,
}

impl Site {
    /// Names the pages `name` from now on: the pages kept are made again.
    pub(crate) fn set_site_name(&self, name: String) {
        self.site_name.store(Arc::new(name));
        self.cache.clear();
    }

    /// The links the feeds are made with.
    pub(crate) fn links(&self) -> Links<'_> {
        Links {
            base: self.public_base_url.as_ref(),
            pages: self.record_pages(),
        }
    }

    /// The base of the record pages feeds link to ([`crate::model::record_pages_base`]).
    pub fn record_pages(&self) -> Option<&BaseUrl> {
        crate::model::record_pages_base(self.public_base_url.as_ref(), self.pages)
    }
}

/// The rendered pages of the served view.
#[derive(Debug, Default)]
pub struct SiteCache {
    inner: Mutex<(u64, HashMap<PageKey, Kept>)>,
}

impl SiteCache {
    /// Forgets every page kept (the next request of each renders it).
    fn clear(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        *inner = (u64::MAX, HashMap::new());
    }

    /// The page `key` of `view` for the minute of `now`, rendered by
    /// `render` when not kept. A page rendered again in a new minute with
    /// the same bytes keeps its representation (and the coded forms made).
    fn get(
        &self,
        view: &PublishedView,
        key: PageKey,
        minute: i64,
        content_type: &'static str,
        render: impl FnOnce() -> String,
    ) -> Arc<Representation> {
        let before = {
            let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let kept = (inner.0 == view.generation())
                .then(|| inner.1.get(&key).cloned())
                .flatten();
            match kept {
                Some(kept) if kept.minute == minute => return kept.representation,
                kept => kept,
            }
        };
        let body = Bytes::from(render());
        let representation = match before {
            Some(kept) if kept.representation.identity() == &body => kept.representation,
            _ => Arc::new(Representation::tagged_by_bytes(
                content_type,
                body,
                Effort::Quick,
            )),
        };
        let kept = Kept {
            minute,
            representation: representation.clone(),
        };
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.0 != view.generation() || inner.1.len() >= MAX_ENTRIES {
            *inner = (view.generation(), HashMap::new());
        }
        inner.1.insert(key, kept);
        representation
    }
}

/// Which page of the site a path names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SitePath {
    /// `/` (negotiated) or `/en/`, `/zh/`.
    Index(Option<Lang>),
    /// `/en`, `/zh`: redirected to the slash form.
    Bare(Lang),
    /// `/records/{id}` (negotiated) or `/{lang}/records/{id}`, the id decoded.
    Record(Option<Lang>, String),
}

impl SitePath {
    /// The page `path` names, if any (`None`: not the site's).
    pub(crate) fn parse(path: &str) -> Option<Self> {
        if path == "/" {
            return Some(SitePath::Index(None));
        }
        let rest = path.strip_prefix('/')?;
        if let Some(lang) = Lang::from_segment(rest) {
            return Some(SitePath::Bare(lang));
        }
        let (lang, rest) = match rest.split_once('/') {
            Some((first, tail)) => match Lang::from_segment(first) {
                Some(lang) => (Some(lang), tail),
                None => (None, rest),
            },
            None => (None, rest),
        };
        if lang.is_some() && rest.is_empty() {
            return Some(SitePath::Index(lang));
        }
        let id = rest.strip_prefix("records/")?;
        if id.is_empty() || id.contains('/') {
            return None;
        }
        let id = percent_encoding::percent_decode_str(id)
            .decode_utf8()
            .ok()?;
        Some(SitePath::Record(lang, id.into_owned()))
    }
}

/// The methods a page answers (no preflight: pages are not the API's).
const PAGE_METHODS: &str = "GET, HEAD";

/// Answers a site path for `method` (GET and HEAD; 405 otherwise).
pub(crate) fn answer(
    data: &Data,
    site: &Site,
    path: SitePath,
    method: &warp::http::Method,
    raw_query: &str,
    accept_language: Option<&str>,
    conditionals: &Conditionals,
) -> Response {
    use warp::http::Method;
    if *method != Method::GET && *method != Method::HEAD {
        return ApiError::MethodNotAllowed(PAGE_METHODS).response();
    }
    let (lang, negotiated) = match &path {
        SitePath::Index(Some(lang)) | SitePath::Record(Some(lang), _) => (*lang, false),
        SitePath::Bare(lang) => return redirect(&format!("/{}/", lang.segment())),
        _ => (Lang::negotiate(accept_language), true),
    };
    let base = site
        .public_base_url
        .clone()
        .unwrap_or_else(|| BaseUrl::from_host(None));
    let site_name = site.site_name.load_full();
    let frame = Frame {
        lang,
        base: &base,
        site_name: &site_name,
    };
    let notice = |status: StatusCode, notice: Notice| {
        notice_response(status, &frame, notice, lang, negotiated)
    };
    let filter = match &path {
        // `?kind=` under the API's own query rules (`/records/latest`'s).
        SitePath::Index(_) => match parse_latest_query(raw_query) {
            Ok(query) => query.kind,
            Err(_) => return notice(StatusCode::BAD_REQUEST, Notice::IndexQuery),
        },
        _ if !raw_query.is_empty() => return notice(StatusCode::BAD_REQUEST, Notice::RecordQuery),
        _ => KindFilter::All,
    };
    let Some(view) = data.view.load_full() else {
        return notice(StatusCode::SERVICE_UNAVAILABLE, Notice::NothingPublished);
    };
    let now = data.now();
    let ctx = PageContext {
        view: &view,
        now,
        lang,
        base: &base,
        site_name: &site_name,
        tolerance_ms: data.tolerance_ms,
    };
    let minute = now.as_millis().div_euclid(60_000);
    let key = match &path {
        SitePath::Record(_, id) => match view.find(id) {
            Some(index) => PageKey::Record(lang, index),
            None => return notice(StatusCode::NOT_FOUND, Notice::NoSuchRecord(id)),
        },
        _ => PageKey::Index(lang, filter),
    };
    let representation = site.cache.get(&view, key, minute, HTML, || match key {
        PageKey::Record(_, index) => html::record_page(&ctx, index),
        _ => html::index(&ctx, filter),
    });
    let response = rest_uncounted(conditionals, &representation, page_headers);
    with_page_headers(response, lang, negotiated)
}

/// The headers every page answer carries, 304s included: revalidate,
/// its language, and `Vary`: `Accept-Encoding` (the page's own, when it is
/// negotiable) and `Accept-Language` when the language came from it.
fn with_page_headers(mut response: Response, lang: Lang, negotiated: bool) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    super::responses::language_headers(headers, lang, negotiated);
    response
}

/// The type of every page.
const HTML: &str = "text/html; charset=utf-8";

/// The headers of an HTML page: the pages' Content-Security-Policy and
/// the rest of their safety headers (`nosniff` comes with every answer's
/// type, [`super::responses::typed`]).
fn page_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(html::content_security_policy()),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

/// A notice page (a record not found, a query the page does not take,
/// nothing published yet) with `status` and every page's headers: made
/// per request, never cached, so not negotiated for an encoding.
fn notice_response(
    status: StatusCode,
    frame: &Frame,
    notice: Notice,
    lang: Lang,
    negotiated: bool,
) -> Response {
    let mut response = Response::new(html::notice_page(frame, notice).into());
    *response.status_mut() = status;
    super::responses::typed(response.headers_mut(), HeaderValue::from_static(HTML));
    page_headers(response.headers_mut());
    with_page_headers(response, lang, negotiated)
}

fn redirect(to: &str) -> Response {
    let mut response = Response::new(Default::default());
    *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
    if let Ok(value) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// `GET /openapi/v1/badge.json`.
pub(crate) fn badge(data: &Data, site: &Site, conditionals: &Conditionals) -> Response {
    let Some(view) = data.view.load_full() else {
        return ApiError::DataUnavailable.response();
    };
    let now = data.now();
    let representation = site.cache.get(
        &view,
        PageKey::Badge,
        now.as_millis().div_euclid(60_000),
        "application/json",
        || {
            let visible = view
                .ordered(KindFilter::All)
                .iter()
                .map(|&i| view.record(i));
            let trust = Trust {
                last_successful_check_at: view.last_successful_check_at(),
                source_status: view.sync_status(),
            };
            serde_json::to_string(&crate::site::badge::badge(
                visible,
                trust,
                now,
                data.tolerance_ms,
            ))
            .expect("a badge serialises")
        },
    );
    let mut response = rest_uncounted(conditionals, &representation, |_| {});
    let headers = response.headers_mut();
    super::responses::cors(headers);
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}
