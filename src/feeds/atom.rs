//! The Atom feed (RFC 4287) of `GET /openapi/v1/records.atom?kind=&plan=`.
//!
//! Written with the `atom_syndication` crate (its writer escapes text and
//! attributes through `quick-xml`; characters XML cannot carry are
//! replaced first). The newest [`LIMIT`] records
//! of `kind`'s list, in the API's order, each an `<entry>` whose id is the
//! `urn:uuid:` of its record id ([`super::record_uuid`]) and whose
//! `updated` moves only when the record changes ([`super::record_updated`]).
//!
//! Speed: each record's `<entry>` is rendered once per snapshot and kept in
//! the view ([`Fragment::AtomEntry`], in the words it ends with: a schedule
//! still waiting to be told "not confirmed" is rendered per body, see
//! [`super::AsOf`]); a request renders only the feed's
//! head (title, id, `updated`, the `self` link from the base URL, which
//! may come from the request's `Host`) and copies at most [`LIMIT`]
//! entries, with or without `plan`. With a configured base URL the feed of
//! each `kind` without `plan` is kept whole ([`Body::Atom`]): 0.92x nginx
//! serving the same bytes with the head rendered per request, 1.93x kept
//! (docs/benchmarks.md).

use bytes::Bytes;

use atom_syndication::{
    Category, Content, Entry, Feed, FixedDateTime, Generator, Link, Person, Text, WriteConfig,
};

use super::{
    canonical_query, details, feed_title, feed_uuid, headline, record_updated, record_uuid,
    selected, xml_safe, AsOf, BaseUrl,
};
use crate::model::{Origin, Record, Timestamp};
use crate::query::{AtomQuery, Body, Fragment, PublishedView};

/// The media type served.
pub const CONTENT_TYPE: &str = "application/atom+xml; charset=utf-8";

/// How many entries a feed carries at most.
pub const LIMIT: usize = 50;

/// The path of the feed (below the base URL).
const PATH: &str = crate::paths::ATOM;

/// The feed as shared bytes. With a fixed base (`--public-base-url`) the
/// feed of each `kind` without `plan` is kept whole in the view, like the
/// default calendar, and a request copies nothing; a base taken from the
/// request's `Host` may differ per request, so that feed is put together
/// from the kept entries each time.
pub fn render_shared(
    view: &PublishedView,
    query: &AtomQuery,
    base: &BaseUrl,
    base_is_fixed: bool,
    pages: Option<&BaseUrl>,
    as_of: AsOf,
) -> Bytes {
    if base_is_fixed && query.plan.is_none() {
        view.body(Body::Atom(query.kind), as_of.variant(), |view| {
            Bytes::from(render(view, query, base, pages, as_of))
        })
    } else {
        Bytes::from(render(view, query, base, pages, as_of))
    }
}

/// The whole feed document. With `pages` (the base of the status site's
/// record pages, fixed for the process) each entry's `alternate` link is
/// the record's page and the source post is its `related` link; without,
/// the source post is the `alternate` link. Its words are those of
/// `as_of`.
pub fn render(
    view: &PublishedView,
    query: &AtomQuery,
    base: &BaseUrl,
    pages: Option<&BaseUrl>,
    as_of: AsOf,
) -> Vec<u8> {
    let entries: Vec<std::borrow::Cow<[u8]>> = selected(view, query.kind, query.plan.as_ref())
        .take(LIMIT)
        .map(|i| {
            let record = view.record(i);
            let (now, end) = as_of.words_of(record);
            // The view keeps the words a record ends with; a schedule not
            // told "not confirmed" yet is rendered as it is now.
            if now == end {
                view.fragment(Fragment::AtomEntry, i, |r| entry_bytes(r, pages, end))
                    .into()
            } else {
                entry_bytes(record, pages, now).into()
            }
        })
        .collect();
    let head = head(view, query, base);
    let mut body =
        Vec::with_capacity(head.len() + entries.iter().map(|e| e.len()).sum::<usize>() + 8);
    body.extend_from_slice(&head);
    for entry in entries {
        body.extend_from_slice(&entry);
    }
    body.extend_from_slice(b"</feed>");
    body
}

/// The document up to its first entry: the declaration, `<feed>` and its
/// metadata (the crate writes a feed without entries, whose closing tag
/// is cut off here and written after the entries).
fn head(view: &PublishedView, query: &AtomQuery, base: &BaseUrl) -> Vec<u8> {
    let plan = query.plan.as_ref();
    let variant = format!(
        "records.atom?kind={}{}",
        query.kind.as_str(),
        plan.map(|p| format!("&plan={}", p.as_str()))
            .unwrap_or_default()
    );
    let feed = Feed {
        title: Text::plain(feed_title(query.kind, plan)),
        id: format!("urn:uuid:{}", feed_uuid(&variant)),
        updated: fixed(view.generated_at()),
        authors: vec![Person {
            name: "resetctl".into(),
            ..Person::default()
        }],
        generator: Some(Generator {
            value: "resetctl".into(),
            uri: None,
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        links: vec![
            Link {
                href: base.join(&format!(
                    "{PATH}{}",
                    canonical_query(query.kind, plan, None)
                )),
                rel: "self".into(),
                mime_type: Some("application/atom+xml".into()),
                ..Link::default()
            },
            Link {
                href: base.join(crate::paths::DOCS),
                rel: "alternate".into(),
                mime_type: Some("text/html".into()),
                ..Link::default()
            },
        ],
        subtitle: Some(Text::plain(
            "Announced and completed usage-limit resets, newest first (pending schedules lead).",
        )),
        ..Feed::default()
    };
    let mut bytes = feed
        .write_with_config(Vec::with_capacity(1024), WriteConfig::default())
        .expect("writing to a Vec cannot fail");
    let closing = b"</feed>";
    assert!(
        bytes.ends_with(closing),
        "a feed without entries ends with </feed>"
    );
    bytes.truncate(bytes.len() - closing.len());
    bytes
}

/// One record's `<entry>` element; `unconfirmed_since`: told "not
/// confirmed" since then.
fn entry_bytes(
    record: &Record,
    pages: Option<&BaseUrl>,
    unconfirmed_since: Option<Timestamp>,
) -> Vec<u8> {
    let config = WriteConfig {
        write_document_declaration: false,
        indent_size: None,
    };
    entry(record, pages, unconfirmed_since)
        .write_with_config(Vec::with_capacity(1024), config)
        .expect("writing to a Vec cannot fail")
}

fn entry(record: &Record, pages: Option<&BaseUrl>, unconfirmed_since: Option<Timestamp>) -> Entry {
    let author = match (&record.source.origin, &record.source.handle) {
        (Origin::X, Some(handle)) => format!("@{handle}"),
        (Origin::Operator, _) => "operator".to_owned(),
        (origin, _) => origin.as_str().to_owned(),
    };
    let mut categories = vec![category(record.kind.as_str())];
    if let Some(state) = record.schedule_state {
        categories.push(category(state.as_str()));
    }
    let details = details(record);
    let content = match record.text.as_deref() {
        Some(text) if !text.trim().is_empty() => text,
        _ => &details,
    };
    Entry {
        title: Text::plain(xml_safe(&headline(record, unconfirmed_since.is_some()))),
        id: format!("urn:uuid:{}", record_uuid(&record.id)),
        updated: fixed(record_updated(record, unconfirmed_since)),
        authors: vec![Person {
            name: xml_safe(&author).into_owned(),
            ..Person::default()
        }],
        categories,
        links: pages
            .map(|pages| pages.join(&crate::model::record_page_path(&record.id)))
            .into_iter()
            .map(|page| (page, "alternate"))
            .chain(record.source.link().map(|url| {
                let rel = if pages.is_some() {
                    "related"
                } else {
                    "alternate"
                };
                (url.as_str().to_owned(), rel)
            }))
            .map(|(href, rel)| Link {
                href,
                rel: rel.into(),
                mime_type: Some("text/html".into()),
                ..Link::default()
            })
            .collect(),
        published: record.announced_at.map(fixed),
        summary: Some(Text::plain(xml_safe(&details))),
        content: Some(Content {
            value: Some(xml_safe(content).into_owned()),
            content_type: Some("text".into()),
            ..Content::default()
        }),
        ..Entry::default()
    }
}

fn category(term: &str) -> Category {
    Category {
        term: term.to_owned(),
        scheme: None,
        label: None,
    }
}

/// A timestamp as the crate's date type (UTC).
fn fixed(at: Timestamp) -> FixedDateTime {
    at.to_datetime().fixed_offset()
}
