//! Pages that say one thing instead of showing records: a record id that
//! is not published (404), a query a page does not take (400), nothing
//! published yet (503). Made from the [`Frame`] alone, so they need no
//! view: the last one is shown before there is any.

use super::*;

/// What a notice page says.
#[derive(Clone, Copy, Debug)]
pub enum Notice<'a> {
    /// A record page of an id that is not published.
    NoSuchRecord(&'a str),
    /// The status page asked with a query it does not take.
    IndexQuery,
    /// A record page asked with a query.
    RecordQuery,
    /// No snapshot is published yet.
    NothingPublished,
}

/// The page of `notice`, in `frame`'s language.
pub fn notice_page(frame: &Frame, notice: Notice) -> String {
    let s = frame.s();
    let (title, line): (&str, Markup) = match notice {
        Notice::NoSuchRecord(id) => (s.record_not_found, html! { p { code { (id) } } }),
        Notice::IndexQuery => (s.bad_query, html! { p { (s.index_query_rule) } }),
        Notice::RecordQuery => (s.bad_query, html! { p { (s.record_query_rule) } }),
        Notice::NothingPublished => (
            s.nothing_published,
            html! { p { (s.nothing_published_note) } },
        ),
    };
    let page = html! {
        (DOCTYPE)
        html lang=(frame.lang.tag()) {
            (head(frame, title))
            body {
                (header(frame, &format!("/{}/", frame.lang.other().segment())))
                main {
                    h1 { (title) }
                    (line)
                    @if !matches!(notice, Notice::NothingPublished) {
                        p { a href=(frame.link(&format!("/{}/", frame.lang.segment()))) { (s.back) } }
                    }
                }
                (footer(frame))
            }
        }
    };
    finish(page)
}
