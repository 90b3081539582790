//! The HTML of the status page and the record pages, from compile-time
//! checked `maud` templates: every string from a record, the upstream or
//! the operator goes through `maud`'s escaping, and a link to a source post
//! is kept only when it is an `http(s)` URL.
//!
//! Pure functions of a [`PublishedView`], an instant and a language: the
//! server keeps what they make (see `api::site`), so a request copies bytes.
//!
//! One page per file: [`index()`] (the status page, `index.rs`),
//! [`record_page`] (`record.rs`), [`notice_page`] (`notice.rs`: a record
//! not found, a query a page does not take, nothing published yet); here,
//! what they share: the frame, the context, the layout, the words and the
//! script's data.

use crate::paths;
use std::sync::OnceLock;

use base64::Engine;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use sha2::{Digest, Sha256};

use super::heatmap::{heatmap, Heatmap};
use super::i18n::{Lang, Strings};
use super::verdict::{self, next_reset, Day, Distrust, Hit, HitKind, Trust, Verdict};
use crate::model::BaseUrl;
use crate::model::KindFilter;
use crate::model::Mode;
use crate::model::{
    DataSourceStatus, Kind, Link, Origin, Record, ScheduleBasis, SchedulePrecision, Timestamp,
};
use crate::query::PublishedView;

mod index;
mod notice;
mod record;

pub use index::index;
pub use notice::{notice_page, Notice};
pub use record::record_page;

const CSS: &str = include_str!("../assets/page.css");
const JS: &str = include_str!("../assets/page.js");

/// A page as it is served: HTML that `maud` escaped, with every
/// bidirectional control in it (from a record's text, a handle, a name, a
/// requested id) neutralised ([`crate::model::without_bidi_controls`]),
/// so none reorders what the page shows. The templates write none.
fn finish(page: Markup) -> String {
    let page = page.into_string();
    match crate::model::without_bidi_controls(&page) {
        std::borrow::Cow::Borrowed(_) => page,
        std::borrow::Cow::Owned(neutralised) => neutralised,
    }
}

/// How many records the history shows.
pub const HISTORY_LEN: usize = 50;

/// The Content-Security-Policy of every page: nothing loads from anywhere,
/// only the page's own style and script (by hash) run.
pub fn content_security_policy() -> &'static str {
    static CSP: OnceLock<String> = OnceLock::new();
    CSP.get_or_init(|| {
        let hash = |text: &str| {
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
        };
        format!(
            "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            hash(JS),
            hash(CSS)
        )
    })
}

/// What every page's frame (head, header, footer) is made of: its
/// language, the base of its links and the site's name; no data, so a
/// page is framed also before anything is published.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// Its language.
    pub lang: Lang,
    /// The base of absolute links (empty: links relative to the server's root).
    pub base: &'a BaseUrl,
    /// The site's name (`--site-name`): the header's and the titles' brand.
    pub site_name: &'a str,
}

impl Frame<'_> {
    fn s(&self) -> &'static Strings {
        self.lang.strings()
    }

    fn link(&self, path: &str) -> String {
        self.base.join(path)
    }
}

/// What a page is rendered from.
#[derive(Clone, Copy, Debug)]
pub struct PageContext<'a> {
    /// The served view.
    pub view: &'a PublishedView,
    /// The instant the page is rendered for.
    pub now: Timestamp,
    /// Its language.
    pub lang: Lang,
    /// The base of absolute links (empty: links relative to the server's root).
    pub base: &'a BaseUrl,
    /// The site's name (`--site-name`): the header's and the titles' brand.
    pub site_name: &'a str,
    /// The matcher's tolerance in milliseconds: when a passed schedule is
    /// told as not confirmed ([`crate::remind::unconfirmed_at`]).
    pub tolerance_ms: i64,
}

impl PageContext<'_> {
    /// Its frame.
    pub fn frame(&self) -> Frame<'_> {
        Frame {
            lang: self.lang,
            base: self.base,
            site_name: self.site_name,
        }
    }

    fn s(&self) -> &'static Strings {
        self.lang.strings()
    }

    fn link(&self, path: &str) -> String {
        self.base.join(path)
    }

    fn visible(&self) -> impl Iterator<Item = &Record> + '_ {
        super::visible(self.view)
    }
}

/// The stable path of the page of the record `id` in `lang`
/// ([`crate::model::record_page_path`], behind the language's segment).
pub fn record_path(id: &str, lang: Option<Lang>) -> String {
    let path = crate::model::record_page_path(id);
    match lang {
        Some(lang) => format!("/{}{path}", lang.segment()),
        None => path,
    }
}

/// `2026-11-24 09:30 UTC`.
fn utc(at: Timestamp) -> String {
    at.to_datetime().format("%Y-%m-%d %H:%M UTC").to_string()
}

fn iso(at: Timestamp) -> String {
    at.to_datetime()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// The verdict's word for a day a reset was due: "Yes" only when it is
/// confirmed; "Due" while the matcher may still confirm it; "Not
/// confirmed" after (page.js picks the same words by the same rule).
pub(super) fn yes_word(s: &Strings, kind: HitKind) -> &'static str {
    match kind {
        HitKind::Completed | HitKind::Fulfilled => s.yes,
        HitKind::Due => s.yes_due,
        HitKind::Elapsed => s.yes_unconfirmed,
    }
}

fn hit_words(s: &Strings, kind: HitKind) -> &'static str {
    match kind {
        HitKind::Completed => s.hit_completed,
        HitKind::Fulfilled => s.hit_fulfilled,
        HitKind::Elapsed => s.hit_elapsed,
        HitKind::Due => s.hit_due,
    }
}

/// A schedule's state in words as of the page's instant: what the
/// verdict says of it ([`verdict::reset_time`]) once its time has come,
/// so "not confirmed" waits for the matcher's tolerance as every message
/// does (the API's `elapsed` starts at the window's end); `None` for a
/// completion.
fn state_now(ctx: &PageContext, record: &Record) -> Option<&'static str> {
    let s = ctx.s();
    let state = record.schedule_state?;
    Some(
        match verdict::reset_time(record, ctx.now, ctx.tolerance_ms) {
            Some((_, HitKind::Due)) => s.state_due,
            Some((_, HitKind::Elapsed)) => s.state_elapsed,
            _ => s.state_words(state),
        },
    )
}

/// How a schedule due after a confirmed reset of the day is told beside it.
fn later_words(s: &Strings, kind: HitKind) -> &'static str {
    match kind {
        HitKind::Elapsed => s.later_unconfirmed,
        _ => s.later_due,
    }
}

fn hit_name(kind: HitKind) -> &'static str {
    match kind {
        HitKind::Completed => "completed",
        HitKind::Fulfilled => "fulfilled",
        HitKind::Elapsed => "elapsed",
        HitKind::Due => "due",
    }
}

fn origin_words(s: &Strings, origin: Origin) -> &'static str {
    match origin {
        Origin::X => s.origin_x,
        Origin::Operator => s.origin_operator,
        Origin::Rss => s.origin_rss,
        Origin::Github => s.origin_github,
    }
}

/// The time a record is listed at: its reset time, else its announcement.
fn listed_at(record: &Record) -> Option<Timestamp> {
    match record.kind {
        Kind::Completed => record.completed_at.or(record.effective_at),
        Kind::Scheduled => record
            .schedule_window
            .map(|w| w.start_at)
            .or(record.effective_at),
    }
    .or(record.announced_at)
}

/// A time in UTC, with a slot the script fills with the visitor's local time.
fn time(at: Timestamp, slot: &str) -> Markup {
    html! {
        time id=(slot) datetime=(iso(at)) data-local { (utc(at)) }
        " "
        span.muted data-local-of=(slot) {}
    }
}

/// A relative time ("12 min ago") as of `now`; the script keeps it current.
fn ago(s: &Strings, at: Timestamp, now: Timestamp) -> Markup {
    let secs = (now.as_millis() - at.as_millis()).max(0) / 1000;
    html! { span data-ago=(at.as_millis()) { (s.ago(secs)) } }
}

fn countdown_text(s: &Strings, ms: i64) -> String {
    let sec = ms.max(0) / 1000;
    let parts = [sec / 86_400, sec / 3_600 % 24, sec / 60 % 60, sec % 60];
    let mut out = Vec::new();
    for (i, n) in parts.iter().enumerate() {
        if *n != 0 || !out.is_empty() || i == 3 {
            out.push(format!("{n} {}", s.units[i]));
        }
    }
    out.join(" ")
}

fn head(ctx: &Frame, title: &str) -> Markup {
    let s = ctx.s();
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="color-scheme" content="light dark";
            title { (title) " · " (ctx.site_name) }
            link rel="alternate" type="application/atom+xml" title=(s.sub_atom)
                href=(ctx.link(paths::ATOM));
            @for lang in Lang::ALL {
                link rel="alternate" hreflang=(lang.tag()) href=(ctx.link(&format!("/{}/", lang.segment())));
            }
            style { (PreEscaped(CSS)) }
        }
    }
}

fn header(ctx: &Frame, other_path: &str) -> Markup {
    let s = ctx.s();
    let other = ctx.lang.other();
    html! {
        header {
            p { a href=(ctx.link(&format!("/{}/", ctx.lang.segment()))) { strong id="site-name" { (ctx.site_name) } } }
            nav aria-label=(s.nav_label) {
                ul {
                    li { a href=(ctx.link(other_path)) hreflang=(other.tag()) lang=(other.tag()) { (s.other_language) } }
                    li { a href=(ctx.link(ctx.lang.docs_path())) { (s.sub_docs) } }
                }
            }
        }
    }
}

fn footer(ctx: &Frame) -> Markup {
    html! {
        footer {
            p { (ctx.s().times_note) }
            p { (ctx.s().served_by) " " (env!("CARGO_PKG_VERSION")) }
        }
    }
}

fn precision_words(s: &Strings, p: SchedulePrecision) -> &'static str {
    match p {
        SchedulePrecision::Date => s.precision_date,
        SchedulePrecision::Datetime => s.precision_datetime,
        SchedulePrecision::Window => s.precision_window,
    }
}

fn basis_words(s: &Strings, b: ScheduleBasis) -> &'static str {
    match b {
        ScheduleBasis::Explicit => s.basis_explicit,
        ScheduleBasis::ContextualInference => s.basis_inferred,
    }
}

/// What the page's script needs, as JSON safe inside `<script>` (every `<`
/// escaped): the trust inputs, the records whose time may fall on the
/// visitor's day, and the strings it shows.
fn script_data(ctx: &PageContext) -> String {
    const TWO_DAYS: i64 = 2 * 86_400_000;
    let s = ctx.s();
    let now = ctx.now.as_millis();
    let candidates: Vec<serde_json::Value> = ctx
        .visible()
        .filter_map(|record| {
            // Every kind of hit, whatever "now" the visitor's clock says.
            // (A schedule not confirmed then; the script tells "due" from
            // "not confirmed" by `unconfirmedAt`, the same instant.)
            let (at, kind) =
                verdict::reset_time(record, Timestamp::from_millis(i64::MAX), ctx.tolerance_ms)?;
            let unconfirmed_at = crate::remind::unconfirmed_at(record, ctx.tolerance_ms);
            (at.as_millis() >= now - TWO_DAYS && at.as_millis() <= now + TWO_DAYS).then(|| {
                serde_json::json!({
                    "at": at.as_millis(),
                    "how": hit_name(kind),
                    "unconfirmedAt": unconfirmed_at.map(Timestamp::as_millis),
                    "what": s.what(record),
                    "href": ctx.link(&record_path(&record.id, Some(ctx.lang))),
                })
            })
        })
        .collect();
    let data = serde_json::json!({
        "lastCheck": ctx.view.last_successful_check_at().map(Timestamp::as_millis),
        "sourceStatus": ctx.view.sync_status().map(DataSourceStatus::as_str),
        "sourceStatusWords": ctx.view.sync_status().map(|st| status_words(s, st)),
        "trustHours": verdict::TRUST_HOURS,
        "candidates": candidates,
        "strings": s,
    });
    data.to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A sync status in the visitor's words.
fn status_words(s: &Strings, status: DataSourceStatus) -> &'static str {
    match status {
        DataSourceStatus::Ok => s.status_ok,
        DataSourceStatus::Stale => s.status_stale,
        DataSourceStatus::Error => s.status_error,
        DataSourceStatus::Pending => s.status_pending,
    }
}
