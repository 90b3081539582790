//! The status page (`/`, `/en/`, `/zh/`): the verdict, the next reset,
//! freshness, the history, the heatmap and the ways to subscribe.

use super::*;
use crate::paths;

/// The status page (`/`, `/en/`, `/zh/`) with its history under `filter`.
pub fn index(ctx: &PageContext, filter: KindFilter) -> String {
    let s = ctx.s();
    let now = ctx.now;
    let day = Day::utc_of(now);
    let trust = Trust::of(ctx.view);
    let verdict = verdict::verdict(ctx.visible(), trust, day, now, ctx.tolerance_ms);
    let next = next_reset(ctx.visible(), now);
    let other = ctx.lang.other();
    let page = html! {
        (DOCTYPE)
        html lang=(ctx.lang.tag()) {
            (head(&ctx.frame(), s.title))
            body {
                (header(&ctx.frame(), &format!("/{}/", other.segment())))
                main {
                    h1 { (s.title) }
                    (verdict_section(ctx, &verdict))
                    (next_section(ctx, next))
                    (freshness_section(ctx))
                    (history_section(ctx, filter))
                    (heatmap_section(ctx, &heatmap(crate::site::listed(ctx.view, KindFilter::Completed), now)))
                    (subscribe_section(ctx))
                }
                (footer(&ctx.frame()))
                script type="application/json" id="site-data" {
                    (PreEscaped(script_data(ctx)))
                }
                script { (PreEscaped(JS)) }
            }
        }
    };
    finish(page)
}

fn verdict_section(ctx: &PageContext, verdict: &Verdict) -> Markup {
    let s = ctx.s();
    let (word, name) = match verdict {
        Verdict::Yes { hit, .. } => (super::yes_word(s, hit.kind), "yes"),
        Verdict::No => (s.no, "no"),
        Verdict::Unknown(_) => (s.unknown, "unknown"),
    };
    let later = match verdict {
        Verdict::Yes { later, .. } => *later,
        _ => None,
    };
    html! {
        section.verdict-box aria-labelledby="verdict-question" {
            h2 id="verdict-question" { (s.question_utc) }
            p id="verdict" class=(format!("verdict verdict-{name}")) data-verdict=(name) { (word) }
            p id="verdict-detail" {
                @match verdict {
                    Verdict::Yes { hit, .. } => { (hit_line(ctx, hit_words(s, hit.kind), hit)) }
                    Verdict::No => { (s.no_detail) }
                    Verdict::Unknown(why) => { (distrust_words(s, *why)) }
                }
            }
            // Always there, so the page's script can tell it for the
            // visitor's day too; hidden when nothing is due later.
            p id="verdict-later" hidden[later.is_none()] {
                @if let Some(later) = later { (hit_line(ctx, later_words(s, later.kind), &later)) }
            }
            (operator_note(ctx, verdict))
        }
    }
}

/// `A reset was confirmed: 2026-11-24 03:15 UTC · Global reset · all plans details`,
/// the time kept on one line (a phone would break a date inside itself).
fn hit_line(ctx: &PageContext, words: &str, hit: &Hit) -> Markup {
    let s = ctx.s();
    html! {
        (words) (s.colon) span.nowrap { (utc(hit.at)) } " · " (s.what(hit.record)) " "
        a href=(ctx.link(&record_path(&hit.record.id, Some(ctx.lang)))) { (s.details) }
    }
}

fn distrust_words(s: &Strings, why: Distrust) -> String {
    match why {
        Distrust::NeverChecked => s.distrust_never.to_owned(),
        Distrust::Stale { .. } => {
            let (before, after) = s.distrust_stale;
            format!("{before}{}{after}", crate::site::verdict::TRUST_HOURS)
        }
        Distrust::Source(status) => {
            let (before, after) = s.distrust_source;
            format!("{before}{}{after}", status_words(s, status))
        }
    }
}

/// What the operator of a standalone instance runs when the check is
/// missing or too old. Only a standalone page carries it (a mirror's
/// trust is its upstream's); it is hidden while the data is trusted, and
/// the script shows it when the visitor's clock passes the trust limit.
fn operator_note(ctx: &PageContext, verdict: &Verdict) -> Markup {
    let s = ctx.s();
    let shown = matches!(verdict, Verdict::Unknown(_));
    html! {
        @if ctx.view.mode() == Mode::Standalone {
            p.operator-note id="operator-note" role="note" hidden[!shown] {
                strong { (s.operator_note_label) } " "
                (s.operator_note.0) code { (crate::site::i18n::OPERATOR_COMMAND) } (s.operator_note.1) (crate::site::verdict::TRUST_HOURS) (s.operator_note.2)
            }
        }
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
                        dd { (s.what(record)) }
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
fn freshness_section(ctx: &PageContext) -> Markup {
    let s = ctx.s();
    let view = ctx.view;
    html! {
        section aria-labelledby="freshness-heading" {
            h2 id="freshness-heading" { (s.freshness_heading) }
            dl.facts {
                dt { (s.generated_at) }
                dd { (ago(s, view.generated_at(), ctx.now)) " " span.nowrap { "(" (utc(view.generated_at())) ")" } }
                dt { (s.last_check) }
                dd {
                    @match view.last_successful_check_at() {
                        Some(at) => { (ago(s, at, ctx.now)) " " span.nowrap { "(" (utc(at)) ")" } }
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
                            Some(at) => { (ago(s, at, ctx.now)) " " span.nowrap { "(" (utc(at)) ")" } }
                            None => { (s.never) }
                        }
                    }
                    dt { (s.sync_status) }
                    dd { (status_words(s, source.status)) }
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
    let records: Vec<&Record> = crate::site::listed(view, filter)
        .take(HISTORY_LEN)
        .collect();
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
        @if let Some(state) = state_now(ctx, record) {
            span.tag { (state) }
        }
        strong { (s.what(record)) }
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
    /// Room above the grid for the month labels.
    const TOP: usize = 14;
    /// The weekday labels' column (outside the scrolling grid).
    const LABELS: usize = 32;
    let s = ctx.s();
    let width = map.weeks.len() * STEP;
    let height = TOP + 7 * STEP;
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
                    TOP + d * STEP
                ));
            }
        }
    }
    let summary = s.count(&s.heatmap_total, u64::from(map.total));
    html! {
        section.heatmap aria-labelledby="heatmap-heading" {
            h2 id="heatmap-heading" { (s.heatmap_heading) }
            div.heatmap-grid {
                // Monday, Wednesday and Friday name their rows, beside the
                // grid so they stay in view when a narrow screen scrolls it.
                svg.heatmap-days xmlns="http://www.w3.org/2000/svg" aria-hidden="true"
                    width=(LABELS) height=(height) viewBox=(format!("0 0 {LABELS} {height}")) {
                    @for d in [0usize, 2, 4] {
                        text x="0" y=(TOP + d * STEP + CELL - 1) { (s.weekdays[d]) }
                    }
                }
                // Scrolled to the newest weeks from the start (right to left).
                div.heatmap-scroll tabindex="0" role="group" aria-label=(s.heatmap_scroll_label) {
                    svg id="heatmap" xmlns="http://www.w3.org/2000/svg" width=(width) height=(height)
                        viewBox=(format!("0 0 {width} {height}")) role="img" aria-labelledby="heatmap-title" {
                        title id="heatmap-title" { (summary) }
                        @for (w, month) in map.month_labels() {
                            text.month x=(w * STEP) y="10" { (s.months[month as usize]) }
                        }
                        path.l0 d=(empty) {}
                        @for (w, week) in map.weeks.iter().enumerate() {
                            @for (d, cell) in week.iter().enumerate() {
                                @if let Some(cell) = cell.filter(|c| c.count > 0) {
                                    rect class=(format!("l{}", level(cell.count))) x=(w * STEP) y=(TOP + d * STEP)
                                        width=(CELL) height=(CELL) data-date=(cell.date.to_string()) data-count=(cell.count) {
                                        title { (s.count(&s.heatmap_cell, u64::from(cell.count))) (cell.date.to_string()) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            p.legend id="heatmap-legend" {
                (s.legend_less) " "
                @for l in 0..=4 { span class=(format!("swatch l{l}")) aria-hidden="true" {} }
                " " (s.legend_more)
            }
            p.muted { (summary) }
        }
    }
}

fn subscribe_section(ctx: &PageContext) -> Markup {
    let s = ctx.s();
    let ics = ctx.link(paths::ICS);
    // webcal:// needs an absolute address; without a configured base the
    // script-free page offers the https link only.
    let webcal = ics
        .split_once("://")
        .map(|(_, rest)| format!("webcal://{rest}"));
    html! {
        section aria-labelledby="subscribe-heading" {
            h2 id="subscribe-heading" { (s.subscribe_heading) }
            ul.links {
                li { a href=(ctx.link(paths::ATOM)) type="application/atom+xml" { (s.sub_atom) } }
                li {
                    a href=(ics) type="text/calendar" { (s.sub_ics) }
                    @if let Some(webcal) = webcal { " · " a href=(webcal) { (s.sub_webcal) } }
                }
                li { a href=(ctx.link(&format!("{}#stream", ctx.lang.docs_path()))) { (s.sub_stream) } " — " code { "GET " (paths::STREAM) } }
                li { a href=(ctx.link(&format!("{}#webhooks", ctx.lang.docs_path()))) { (s.sub_webhooks) } }
                li {
                    a href=(ctx.link(&format!("{}#reminders", ctx.lang.docs_path()))) { (s.sub_reminders) }
                    " — " code { "GET " (paths::STREAM) "?remind=60,10" }
                }
                li { a href=(ctx.link(ctx.lang.docs_path())) { (s.sub_docs) } }
                li { (s.sub_mcp) (s.colon) code { (ctx.link(paths::MCP)) } }
                li { a href=(ctx.link(paths::BADGE)) { (s.sub_badge) } }
            }
        }
    }
}
