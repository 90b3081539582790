//! The page of one record (`/records/{id}`), with the records it links to.

use super::*;

/// The page of one record, with the records it links to.
pub fn record_page(ctx: &PageContext, index: u32) -> String {
    let s = ctx.s();
    let record = ctx.view.record(index);
    let title = format!("{} · {}", s.what(record), s.record_heading);
    let linked: Vec<&str> = record
        .completion_record_id
        .iter()
        .chain(record.related_record_ids.iter())
        .map(String::as_str)
        .collect();
    let page = html! {
        (DOCTYPE)
        html lang=(ctx.lang.tag()) {
            (head(&ctx.frame(), &title))
            body {
                (header(&ctx.frame(), &record_path(&record.id, Some(ctx.lang.other()))))
                main {
                    h1 { (s.what(record)) }
                    dl.facts id="record" {
                        dt { (s.id) } dd { code { (record.id) } }
                        dt { (s.kind) } dd { @if record.is_schedule() { (s.kind_schedule) } @else { (s.kind_completion) } }
                        dt { (s.reset_type) } dd { (s.type_words(record.reset_type)) }
                        @if let Some(state) = state_now(ctx, record) {
                            dt { (s.state) } dd { (state) }
                        }
                        @if let Some(scope) = &record.scope {
                            @let plans = s.plan_words(&scope.plans);
                            @let windows = s.window_words(&scope.windows);
                            dt { (s.plans) } dd { @if plans.is_empty() { (s.plans_unknown) } @else { (plans) } }
                            dt { (s.windows) } dd { @if windows.is_empty() { (s.windows_unknown) } @else { (windows) } }
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
                            (origin_words(s, record.source.origin))
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
