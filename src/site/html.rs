//! The HTML of the status page and the record pages, from compile-time
//! checked `maud` templates: every string from a record, the upstream or
//! the operator goes through `maud`'s escaping, and a link to a source post
//! is kept only when it is an `http(s)` URL.
//!
//! Pure functions of a [`PublishedView`], an instant and a language: the
//! server keeps what they make (see `api::site`), so a request copies bytes.

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
    DataSourceStatus, Kind, Link, Record, ResetType, ScheduleBasis, SchedulePrecision,
    ScheduleState, Timestamp,
};
use crate::query::PublishedView;

const CSS: &str = include_str!("assets/page.css");
const JS: &str = include_str!("assets/page.js");

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
}

impl PageContext<'_> {
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

fn type_words(s: &Strings, t: ResetType) -> &'static str {
    match t {
        ResetType::Global => s.type_global,
        ResetType::Banked => s.type_banked,
        ResetType::GlobalAndBanked => s.type_both,
    }
}

fn state_words(s: &Strings, state: ScheduleState) -> &'static str {
    match state {
        ScheduleState::Pending => s.state_pending,
        ScheduleState::Elapsed => s.state_elapsed,
        ScheduleState::Fulfilled => s.state_fulfilled,
        ScheduleState::Unknown => s.state_unknown,
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

fn hit_name(kind: HitKind) -> &'static str {
    match kind {
        HitKind::Completed => "completed",
        HitKind::Fulfilled => "fulfilled",
        HitKind::Elapsed => "elapsed",
        HitKind::Due => "due",
    }
}

/// `Global reset · all plans · five_hour, weekly`.
fn what(s: &Strings, record: &Record) -> String {
    let mut out = type_words(s, record.reset_type).to_owned();
    if let Some(scope) = &record.scope {
        let plans = if scope.plans.iter().any(|p| p == "all") {
            s.all_plans.to_owned()
        } else {
            scope.plans.join(", ")
        };
        if !plans.is_empty() {
            out.push_str(" · ");
            out.push_str(&plans);
        }
        if !scope.windows.is_empty() {
            out.push_str(" · ");
            out.push_str(&scope.windows.join(", "));
        }
    }
    out
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

fn head(ctx: &PageContext, title: &str) -> Markup {
    let s = ctx.s();
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="color-scheme" content="light dark";
            title { (title) }
            link rel="alternate" type="application/atom+xml" title=(s.sub_atom)
                href=(ctx.link("/openapi/v1/records.atom"));
            @for lang in Lang::ALL {
                link rel="alternate" hreflang=(lang.tag()) href=(ctx.link(&format!("/{}/", lang.segment())));
            }
            style { (PreEscaped(CSS)) }
        }
    }
}

fn header(ctx: &PageContext, other_path: &str) -> Markup {
    let s = ctx.s();
    let other = ctx.lang.other();
    html! {
        header {
            p { a href=(ctx.link(&format!("/{}/", ctx.lang.segment()))) { strong { "resetctl" } } }
            nav aria-label=(s.nav_label) {
                ul {
                    li { a href=(ctx.link(other_path)) hreflang=(other.tag()) lang=(other.tag()) { (s.other_language) } }
                    li { a href=(ctx.link("/openapi/v1/docs")) { (s.sub_docs) } }
                }
            }
        }
    }
}

fn footer(ctx: &PageContext) -> Markup {
    html! {
        footer {
            p { (ctx.s().times_note) }
            p { (ctx.s().served_by) " " (env!("CARGO_PKG_VERSION")) }
        }
    }
}

/// The status page (`/`, `/en/`, `/zh/`) with its history under `filter`.
pub fn index(ctx: &PageContext, filter: KindFilter) -> String {
    let s = ctx.s();
    let now = ctx.now;
    let day = Day::utc_of(now);
    let trust = Trust::of(ctx.view);
    let verdict = verdict::verdict(ctx.visible(), trust, day, now);
    let next = next_reset(ctx.visible(), now);
    let other = ctx.lang.other();
    let page = html! {
        (DOCTYPE)
        html lang=(ctx.lang.tag()) {
            (head(ctx, s.title))
            body {
                (header(ctx, &format!("/{}/", other.segment())))
                main {
                    h1 { (s.title) }
                    (verdict_section(ctx, &verdict))
                    (next_section(ctx, next))
                    (freshness_section(ctx))
                    (history_section(ctx, filter))
                    (heatmap_section(ctx, &heatmap(super::listed(ctx.view, KindFilter::Completed), now)))
                    (subscribe_section(ctx))
                }
                (footer(ctx))
                script type="application/json" id="site-data" {
                    (PreEscaped(script_data(ctx)))
                }
                script { (PreEscaped(JS)) }
            }
        }
    };
    page.into_string()
}

fn verdict_section(ctx: &PageContext, verdict: &Verdict) -> Markup {
    let s = ctx.s();
    let (word, name) = match verdict {
        Verdict::Yes(_) => (s.yes, "yes"),
        Verdict::No => (s.no, "no"),
        Verdict::Unknown(_) => (s.unknown, "unknown"),
    };
    html! {
        section.verdict-box aria-labelledby="verdict-question" {
            h2 id="verdict-question" { (s.question_utc) }
            p id="verdict" class=(format!("verdict verdict-{name}")) data-verdict=(name) { (word) }
            p id="verdict-detail" {
                @match verdict {
                    Verdict::Yes(Hit { record, at, kind }) => {
                        (hit_words(s, *kind)) ": " (utc(*at)) " · " (what(s, record)) " "
                        a href=(ctx.link(&record_path(&record.id, Some(ctx.lang)))) { (s.details) }
                    }
                    Verdict::No => { (s.no_detail) }
                    Verdict::Unknown(why) => { (distrust_words(ctx, *why)) }
                }
            }
        }
    }
}

fn distrust_words(ctx: &PageContext, why: Distrust) -> String {
    let s = ctx.s();
    let mut out = match why {
        Distrust::NeverChecked => s.distrust_never.to_owned(),
        Distrust::Stale { .. } => s.distrust_stale.to_owned(),
        Distrust::Source(status) => format!("{} {}.", s.distrust_source, status_word(status)),
    };
    if ctx.view.mode() == Mode::Standalone {
        out.push(' ');
        out.push_str(s.distrust_standalone_hint);
    }
    out
}

fn status_word(status: DataSourceStatus) -> &'static str {
    match status {
        DataSourceStatus::Ok => "ok",
        DataSourceStatus::Stale => "stale",
        DataSourceStatus::Error => "error",
        DataSourceStatus::Pending => "pending",
    }
}

fn next_section(ctx: &PageContext, next: Option<&Record>) -> Markup {
    let s = ctx.s();
    html! {
        section aria-labelledby="next-heading" {
            h2 id="next-heading" { (s.next_heading) }
            @match next.and_then(|r| r.schedule_window.map(|w| (r, w))) {
                None => { p id="next-none" { (s.none_announced) } }
                Some((record, window)) => {
                    p {
                        @if window.start_at <= ctx.now {
                            (s.in_window_now)
                        } @else {
                            (s.starts_in) " "
                            span.countdown id="countdown" data-target=(window.start_at.as_millis()) {
                                (countdown_text(s, window.start_at.as_millis() - ctx.now.as_millis()))
                            }
                        }
                    }
                    dl.facts {
                        dt { (s.window) }
                        dd {
                            (time(window.start_at, "next-start"))
                            @if window.end_at != window.start_at {
                                " – " (time(window.end_at, "next-end"))
                            }
                        }
                        dt { (s.reset_type) }
                        dd { (what(s, record)) }
                        @if let Some(p) = record.schedule_precision {
                            dt { (s.precision) }
                            dd { (precision_words(s, p)) }
                        }
                        @if let Some(b) = record.schedule_basis {
                            dt { (s.basis) }
                            dd { (basis_words(s, b)) }
                        }
                    }
                    p { a href=(ctx.link(&record_path(&record.id, Some(ctx.lang)))) { (s.details) } }
                }
            }
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

fn freshness_section(ctx: &PageContext) -> Markup {
    let s = ctx.s();
    let view = ctx.view;
    html! {
        section aria-labelledby="freshness-heading" {
            h2 id="freshness-heading" { (s.freshness_heading) }
            dl.facts {
                dt { (s.generated_at) }
                dd { (ago(s, view.generated_at(), ctx.now)) " (" (utc(view.generated_at())) ")" }
                dt { (s.last_check) }
                dd {
                    @match view.last_successful_check_at() {
                        Some(at) => { (ago(s, at, ctx.now)) " (" (utc(at)) ")" }
                        None => { (s.never) }
                    }
                }
                @if let Some(source) = view.data_source() {
                    dt { (s.source) }
                    dd {
                        @match Link::parse(&source.page_url) {
                            Some(url) => { a href=(url.as_str()) rel="noopener noreferrer" { (source.name) } }
                            None => { (source.name) }
                        }
                    }
                    dt { (s.last_sync) }
                    dd {
                        @match source.last_synced_at.or(source.synced_at) {
                            Some(at) => { (ago(s, at, ctx.now)) " (" (utc(at)) ")" }
                            None => { (s.never) }
                        }
                    }
                    dt { (s.sync_status) }
                    dd { (status_word(source.status)) }
                }
            }
        }
    }
}

fn history_section(ctx: &PageContext, filter: KindFilter) -> Markup {
    let s = ctx.s();
    let view = ctx.view;
    let filters = [
        (KindFilter::All, s.filter_all),
        (KindFilter::Scheduled, s.filter_schedules),
        (KindFilter::Completed, s.filter_completions),
    ];
    let here = format!("/{}/", ctx.lang.segment());
    let records: Vec<&Record> = super::listed(view, filter).take(HISTORY_LEN).collect();
    html! {
        section aria-labelledby="history-heading" {
            h2 id="history-heading" { (s.history_heading) }
            nav.filters aria-label=(s.history_heading) {
                @for (f, label) in filters {
                    @let href = if f == KindFilter::All { ctx.link(&here) } else { ctx.link(&format!("{here}?kind={}", f.as_str())) };
                    a href=(href) aria-current=[(f == filter).then_some("page")] { (label) }
                }
            }
            @if records.is_empty() {
                p { (s.no_records) }
            } @else {
                ol.history id="history" {
                    @for (n, record) in records.iter().enumerate() {
                        li data-id=(record.id) {
                            (history_item(ctx, record, n))
                        }
                    }
                }
            }
        }
    }
}

fn history_item(ctx: &PageContext, record: &Record, n: usize) -> Markup {
    let s = ctx.s();
    html! {
        span.tag { @if record.is_schedule() { (s.kind_schedule) } @else { (s.kind_completion) } }
        @if let Some(state) = record.schedule_state {
            span.tag { (state_words(s, state)) }
        }
        strong { (what(s, record)) }
        @if let Some(at) = listed_at(record) {
            br;
            (time(at, &format!("h{n}")))
        }
        @if let Some(text) = record.text.as_deref().filter(|t| !t.is_empty()) {
            blockquote { (text) }
        }
        p {
            a href=(ctx.link(&record_path(&record.id, Some(ctx.lang)))) { (s.details) }
            @if let Some(url) = record.source.link() {
                " · " a href=(url.as_str()) rel="noopener noreferrer" { (s.source_post) }
            }
        }
    }
}

fn heatmap_section(ctx: &PageContext, map: &Heatmap) -> Markup {
    const CELL: usize = 10;
    const STEP: usize = 12;
    let s = ctx.s();
    let width = map.weeks.len() * STEP;
    let height = 7 * STEP;
    let level = |count: u32| -> u32 {
        if count == 0 || map.max == 0 {
            0
        } else {
            (count * 4).div_ceil(map.max).clamp(1, 4)
        }
    };
    // Empty days share one path; each day with completions is a rect with its label.
    let mut empty = String::new();
    for (w, week) in map.weeks.iter().enumerate() {
        for (d, cell) in week.iter().enumerate() {
            if cell.is_some_and(|c| c.count == 0) {
                empty.push_str(&format!(
                    "M{} {}h{CELL}v{CELL}h-{CELL}z",
                    w * STEP,
                    d * STEP
                ));
            }
        }
    }
    let summary = format!("{}{}{}", s.heatmap_total.0, map.total, s.heatmap_total.1);
    html! {
        section.heatmap aria-labelledby="heatmap-heading" {
            h2 id="heatmap-heading" { (s.heatmap_heading) }
            svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {width} {height}"))
                role="img" aria-labelledby="heatmap-title" {
                title id="heatmap-title" { (summary) }
                path.l0 d=(empty) {}
                @for (w, week) in map.weeks.iter().enumerate() {
                    @for (d, cell) in week.iter().enumerate() {
                        @if let Some(cell) = cell.filter(|c| c.count > 0) {
                            rect class=(format!("l{}", level(cell.count))) x=(w * STEP) y=(d * STEP)
                                width=(CELL) height=(CELL) data-date=(cell.date.to_string()) data-count=(cell.count) {
                                title { (s.heatmap_cell.0) (cell.count) (s.heatmap_cell.1) (cell.date.to_string()) }
                            }
                        }
                    }
                }
            }
            p.muted { (summary) }
        }
    }
}

fn subscribe_section(ctx: &PageContext) -> Markup {
    let s = ctx.s();
    let ics = ctx.link("/openapi/v1/records.ics");
    // webcal:// needs an absolute address; without a configured base the
    // script-free page offers the https link only.
    let webcal = ics
        .split_once("://")
        .map(|(_, rest)| format!("webcal://{rest}"));
    html! {
        section aria-labelledby="subscribe-heading" {
            h2 id="subscribe-heading" { (s.subscribe_heading) }
            ul.links {
                li { a href=(ctx.link("/openapi/v1/records.atom")) type="application/atom+xml" { (s.sub_atom) } }
                li {
                    a href=(ics) type="text/calendar" { (s.sub_ics) }
                    @if let Some(webcal) = webcal { " · " a href=(webcal) { (s.sub_webcal) } }
                }
                li { a href=(ctx.link("/openapi/v1/docs#stream")) { (s.sub_stream) } " — " code { "GET /openapi/v1/records/stream" } }
                li { a href=(ctx.link("/openapi/v1/docs#webhooks")) { (s.sub_webhooks) } }
                li { a href=(ctx.link("/openapi/v1/docs")) { (s.sub_docs) } }
                li { (s.sub_mcp) ": " code { (ctx.link("/mcp")) } }
                li { a href=(ctx.link("/openapi/v1/badge.json")) { (s.sub_badge) } }
            }
        }
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
            let (at, kind) = verdict::reset_time(record, Timestamp::from_millis(i64::MAX))?;
            (at.as_millis() >= now - TWO_DAYS && at.as_millis() <= now + TWO_DAYS).then(|| {
                serde_json::json!({
                    "at": at.as_millis(),
                    "how": hit_name(kind),
                    "what": what(s, record),
                    "href": ctx.link(&record_path(&record.id, Some(ctx.lang))),
                })
            })
        })
        .collect();
    let data = serde_json::json!({
        "lastCheck": ctx.view.last_successful_check_at().map(Timestamp::as_millis),
        "sourceStatus": ctx.view.sync_status().map(status_word),
        "trustHours": verdict::TRUST_HOURS,
        "candidates": candidates,
        "strings": s,
    });
    data.to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The page of one record, with the records it links to.
pub fn record_page(ctx: &PageContext, index: u32) -> String {
    let s = ctx.s();
    let record = ctx.view.record(index);
    let title = format!("{} · {}", what(s, record), s.record_heading);
    let linked: Vec<&str> = record
        .completion_record_id
        .iter()
        .chain(record.related_record_ids.iter())
        .map(String::as_str)
        .collect();
    let page = html! {
        (DOCTYPE)
        html lang=(ctx.lang.tag()) {
            (head(ctx, &title))
            body {
                (header(ctx, &record_path(&record.id, Some(ctx.lang.other()))))
                main {
                    h1 { (what(s, record)) }
                    dl.facts id="record" {
                        dt { "ID" } dd { code { (record.id) } }
                        dt { (s.kind) } dd { @if record.is_schedule() { (s.kind_schedule) } @else { (s.kind_completion) } }
                        dt { (s.reset_type) } dd { (type_words(s, record.reset_type)) }
                        @if let Some(state) = record.schedule_state {
                            dt { (s.state) } dd { (state_words(s, state)) }
                        }
                        @if let Some(w) = record.schedule_window {
                            dt { (s.window) }
                            dd {
                                (time(w.start_at, "w-start"))
                                @if w.end_at != w.start_at { " – " (time(w.end_at, "w-end")) }
                            }
                        }
                        @if let Some(p) = record.schedule_precision { dt { (s.precision) } dd { (precision_words(s, p)) } }
                        @if let Some(b) = record.schedule_basis { dt { (s.basis) } dd { (basis_words(s, b)) } }
                        @if let Some(at) = record.announced_at { dt { (s.announced_at) } dd { (time(at, "announced")) } }
                        @if let Some(at) = record.effective_at { dt { (s.effective_at) } dd { (time(at, "effective")) } }
                        @if let Some(at) = record.completed_at { dt { (s.completed_at) } dd { (time(at, "completed")) } }
                        @if let Some(c) = record.confidence { dt { (s.confidence) } dd { (format!("{:.0} %", c * 100.0)) } }
                        dt { (s.source) }
                        dd {
                            (record.source.origin.as_str())
                            @if let Some(handle) = &record.source.handle { " @" (handle) }
                            @if let Some(url) = record.source.link() {
                                " · " a href=(url.as_str()) rel="noopener noreferrer" { (s.source_post) }
                            }
                        }
                    }
                    @if let Some(text) = record.text.as_deref().filter(|t| !t.is_empty()) {
                        h2 { (s.text) }
                        blockquote { (text) }
                    }
                    @if !linked.is_empty() {
                        h2 { (s.linked) }
                        ul.links {
                            @for id in &linked {
                                li { a href=(ctx.link(&record_path(id, Some(ctx.lang)))) { code { (id) } } }
                            }
                        }
                    }
                    p { a href=(ctx.link(&format!("/{}/", ctx.lang.segment()))) { (s.back) } }
                }
                (footer(ctx))
                script type="application/json" id="site-data" {
                    (PreEscaped(script_data(ctx)))
                }
                script { (PreEscaped(JS)) }
            }
        }
    };
    page.into_string()
}

/// The page of a record id that is not published (a 404's body).
pub fn not_found_page(ctx: &PageContext, id: &str) -> String {
    let s = ctx.s();
    let page = html! {
        (DOCTYPE)
        html lang=(ctx.lang.tag()) {
            (head(ctx, s.record_not_found))
            body {
                (header(ctx, &format!("/{}/", ctx.lang.other().segment())))
                main {
                    h1 { (s.record_not_found) }
                    p { code { (id) } }
                    p { a href=(ctx.link(&format!("/{}/", ctx.lang.segment()))) { (s.back) } }
                }
                (footer(ctx))
            }
        }
    };
    page.into_string()
}
