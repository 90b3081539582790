//! The iCalendar calendar (RFC 5545) of
//! `GET /openapi/v1/records.ics?kind=&plan=&alarm=`.
//!
//! One `VEVENT` per record of `kind`'s list that has a time, the first
//! [`LIMIT`] of them in the list's order (pending schedules first, then the
//! newest), so one counted request stays small however long the history
//! grows (a subscribed calendar keeps the events it already has): a schedule
//! with a window covers exactly its `scheduleWindow` (a date-precision
//! schedule its civil day, 23 or 25 hours on daylight-saving days, as the
//! window already says), `STATUS:CONFIRMED` once fulfilled, else
//! `TENTATIVE`; a completion is an event at its `completedAt` (else
//! `effectiveAt`). `UID` is the record's UUID ([`super::record_uuid`]),
//! stable across publishes; `DTSTAMP` and `LAST-MODIFIED` are the
//! snapshot's `generatedAt` (or the instant a schedule was told "not
//! confirmed", when that is later); `URL` is the source post. With `alarm=M` each
//! pending schedule carries one `VALARM` (DISPLAY) M minutes before it.
//! Events are transparent (they never block busy time). Times are UTC;
//! the iCalendar form has no milliseconds, so they are cut to the second.
//!
//! A small writer of its own, not the `icalendar` crate: version 0.17
//! writes a carriage return inside a text value raw (a CR-LF in a post's
//! text breaks the line structure) and other control characters too, and
//! stamps every `VALARM` with the wall clock (`DTSTAMP`) and a random
//! `UID`, so the same view would not give the same bytes twice. The rules
//! it needs are short and tested here: CR-LF line ends, lines folded at 75
//! octets never inside a UTF-8 character, TEXT escaped (RFC 5545 3.1, 3.3.11).
//!
//! `SUMMARY` is the record's headline in the push messages' words
//! ([`super::headline`]), "not confirmed" from the instant they tell it
//! ([`super::AsOf`]).
//!
//! Speed: each record's event is rendered once per snapshot and kept in
//! the view ([`Fragment::CalendarEvent`], without its `END:VEVENT`, so an
//! alarm can be added; in the words it ends with, a schedule still waiting
//! to be told "not confirmed" is rendered per body); the calendar of each
//! `kind` without `plan` or `alarm` is kept whole ([`Body::Calendar`]) and
//! served as shared bytes.
//! A `plan` or `alarm` variant is put together per request from the kept
//! events (copies, nothing rendered again).

use bytes::Bytes;

use super::{canonical_query, details, feed_title, headline, record_uuid, selected, AsOf, BaseUrl};
use crate::model::{Record, ScheduleState, Timestamp};
use crate::query::{Body, Fragment, IcsQuery, PublishedView};

/// The media type served.
pub const CONTENT_TYPE: &str = "text/calendar; charset=utf-8";

/// The most events a calendar holds: the first of the list's order.
pub const LIMIT: usize = 200;

/// The longest content line, in octets, without its CR-LF (RFC 5545 3.1).
const MAX_LINE: usize = 75;

/// The whole calendar.
///
/// With `pages` (the base of the status site's record pages, fixed for the
/// process) an event's `URL` is the record's page; without, its source post.
/// Its words are those of `as_of`.
pub fn render(
    view: &PublishedView,
    query: &IcsQuery,
    pages: Option<&BaseUrl>,
    as_of: AsOf,
) -> Bytes {
    if query.plan.is_none() && query.alarm.is_none() {
        let kind = query.kind;
        view.body(Body::Calendar(kind), as_of.variant(), |view| {
            Bytes::from(calendar(view, query, pages, as_of))
        })
    } else {
        Bytes::from(calendar(view, query, pages, as_of))
    }
}

fn calendar(
    view: &PublishedView,
    query: &IcsQuery,
    pages: Option<&BaseUrl>,
    as_of: AsOf,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    head(&mut out, query);
    let alarm = query.alarm.map(valarm);
    let stamp = view.generated_at();
    let timed = selected(view, query.kind, query.plan.as_ref())
        .filter(|index| event_start(view.record(*index)).is_some())
        .take(LIMIT);
    for index in timed {
        let record = view.record(index);
        // The view keeps the words a record ends with (see `AsOf::words_of`).
        match as_of.words_of(record) {
            (now, end) if now == end => {
                out.extend_from_slice(view.fragment(Fragment::CalendarEvent, index, |r| {
                    event(r, stamp, pages, end)
                }))
            }
            (now, _) => out.extend_from_slice(&event(record, stamp, pages, now)),
        }
        if let Some(alarm) = &alarm {
            if record.is_schedule() && record.schedule_state == Some(ScheduleState::Pending) {
                out.extend_from_slice(alarm);
            }
        }
        out.extend_from_slice(b"END:VEVENT\r\n");
    }
    out.extend_from_slice(b"END:VCALENDAR\r\n");
    out
}

fn head(out: &mut Vec<u8>, query: &IcsQuery) {
    let title = feed_title(query.kind, query.plan.as_ref());
    out.extend_from_slice(b"BEGIN:VCALENDAR\r\n");
    property(out, "VERSION", "2.0");
    property(out, "PRODID", "-//resetctl//Usage-limit resets//EN");
    property(out, "CALSCALE", "GREGORIAN");
    property(out, "METHOD", "PUBLISH");
    text_property(out, "NAME", &title);
    text_property(out, "X-WR-CALNAME", &title);
    text_property(
        out,
        "X-WR-CALDESC",
        &format!(
            "Announced and completed usage-limit resets (records.ics{}). Refreshes hourly.",
            canonical_query(query.kind, query.plan.as_ref(), query.alarm)
        ),
    );
    property(out, "REFRESH-INTERVAL;VALUE=DURATION", "PT1H");
    property(out, "X-PUBLISHED-TTL", "PT1H");
}

/// When the record's event starts: a schedule's window start, a
/// completion's `completedAt` or `effectiveAt`; `None`: no event.
fn event_start(record: &Record) -> Option<Timestamp> {
    if record.is_schedule() {
        record.schedule_window.map(|w| w.start_at)
    } else {
        record.completed_at.or(record.effective_at)
    }
}

/// The record's `VEVENT`, without its `END:VEVENT` line;
/// `unconfirmed_since`: the schedule is told "not confirmed" since then
/// (the event changed then, if that is after the snapshot's `stamp`).
fn event(
    record: &Record,
    stamp: Timestamp,
    pages: Option<&BaseUrl>,
    unconfirmed_since: Option<Timestamp>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let start = event_start(record).expect("only records with a time are events");
    let stamp = unconfirmed_since.map_or(stamp, |since| since.max(stamp));
    out.extend_from_slice(b"BEGIN:VEVENT\r\n");
    property(&mut out, "UID", &record_uuid(&record.id).to_string());
    property(&mut out, "DTSTAMP", &ics_time(stamp));
    property(&mut out, "LAST-MODIFIED", &ics_time(stamp));
    property(&mut out, "DTSTART", &ics_time(start));
    // An exact time has no DTEND: the event ends when it starts (RFC 5545
    // 3.6.1), and a DTEND must be later than DTSTART (3.8.2.2).
    if let Some(window) = record.schedule_window.filter(|_| record.is_schedule()) {
        if ics_time(window.end_at) != ics_time(window.start_at) {
            property(&mut out, "DTEND", &ics_time(window.end_at));
        }
    }
    text_property(
        &mut out,
        "SUMMARY",
        &headline(record, unconfirmed_since.is_some()),
    );
    let details = details(record);
    let description = match record.text.as_deref() {
        Some(text) if !text.trim().is_empty() => format!("{text}\n\n{details}"),
        _ => details,
    };
    text_property(&mut out, "DESCRIPTION", &description);
    let confirmed =
        !record.is_schedule() || record.schedule_state == Some(ScheduleState::Fulfilled);
    property(
        &mut out,
        "STATUS",
        if confirmed { "CONFIRMED" } else { "TENTATIVE" },
    );
    property(&mut out, "TRANSP", "TRANSPARENT");
    // A URI is written as is: only a link (crate::model::Link: http(s),
    // percent-encoded, so plain visible ASCII) is written at all.
    let page = pages.map(|pages| pages.join(&crate::model::record_page_path(&record.id)));
    let source = record.source.link();
    if let Some(url) = page.as_deref().or(source.as_ref().map(|l| l.as_str())) {
        property(&mut out, "URL", url);
    }
    out
}

/// The `VALARM` of `alarm=minutes`.
fn valarm(minutes: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"BEGIN:VALARM\r\n");
    property(&mut out, "ACTION", "DISPLAY");
    let when = match minutes {
        0 => "now".to_owned(),
        1 => "in 1 minute".to_owned(),
        m => format!("in {m} minutes"),
    };
    text_property(
        &mut out,
        "DESCRIPTION",
        &format!("Usage-limit reset due {when}"),
    );
    property(&mut out, "TRIGGER", &format!("-PT{minutes}M"));
    out.extend_from_slice(b"END:VALARM\r\n");
    out
}

/// `20261120T100000Z`: the UTC form of RFC 5545 3.3.5 (milliseconds cut).
fn ics_time(at: Timestamp) -> String {
    let a = at.to_ascii();
    let pick = |range: std::ops::Range<usize>| std::str::from_utf8(&a[range]).expect("ASCII");
    format!(
        "{}{}{}T{}{}{}Z",
        pick(0..4),
        pick(5..7),
        pick(8..10),
        pick(11..13),
        pick(14..16),
        pick(17..19)
    )
}

/// A content line whose value is written as is (dates, URIs, fixed words).
fn property(out: &mut Vec<u8>, name: &str, value: &str) {
    let mut line = Vec::with_capacity(name.len() + 1 + value.len());
    line.extend_from_slice(name.as_bytes());
    line.push(b':');
    line.extend_from_slice(value.as_bytes());
    fold(out, &line);
}

/// A content line with a TEXT value, escaped.
fn text_property(out: &mut Vec<u8>, name: &str, text: &str) {
    let mut line = String::with_capacity(name.len() + 1 + text.len() + 8);
    line.push_str(name);
    line.push(':');
    escape_text(&mut line, text);
    fold(out, line.as_bytes());
}

/// Appends `text` escaped as a TEXT value (RFC 5545 3.3.11): backslash,
/// semicolon and comma get a backslash; a line break (CR-LF, LF or a lone
/// CR) becomes `\n`; other control characters, which TEXT cannot carry,
/// become U+FFFD, and so do bidirectional controls
/// ([`crate::model::is_bidi_control`]), which would reorder what a
/// calendar shows.
fn escape_text(out: &mut String, text: &str) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push_str("\\n");
                }
            }
            '\t' => out.push('\t'),
            c if c.is_control() && (c < ' ' || c == '\u{7f}') => out.push('\u{fffd}'),
            c if crate::model::is_bidi_control(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
}

/// Appends `line` and its CR-LF, folded (RFC 5545 3.1): no physical line
/// longer than 75 octets; a continuation starts with one space; a fold
/// never falls inside a UTF-8 character.
fn fold(out: &mut Vec<u8>, line: &[u8]) {
    let mut rest = line;
    // The first line holds 75 octets; each continuation its space and 74.
    let mut room = MAX_LINE;
    while rest.len() > room {
        let mut cut = room;
        // A UTF-8 continuation byte (10xxxxxx) at the cut would split a character.
        while rest[cut] & 0xC0 == 0x80 {
            cut -= 1;
        }
        out.extend_from_slice(&rest[..cut]);
        out.extend_from_slice(b"\r\n ");
        rest = &rest[cut..];
        room = MAX_LINE - 1;
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(line: &str) -> String {
        let mut out = Vec::new();
        fold(&mut out, line.as_bytes());
        String::from_utf8(out).expect("a fold never splits a character")
    }

    fn unfold(text: &str) -> String {
        text.trim_end_matches("\r\n").replace("\r\n ", "")
    }

    #[test]
    fn folds_at_75_octets_and_never_inside_a_character() {
        assert_eq!(folded("SUMMARY:short"), "SUMMARY:short\r\n");
        let exact = format!("X:{}", "a".repeat(73));
        assert_eq!(folded(&exact), format!("{exact}\r\n"), "75 octets fit");
        for text in [
            "a".repeat(400),
            "é".repeat(300),
            "老虎".repeat(200),
            "🦀".repeat(150),
            format!("x{}", "é".repeat(100)),
            format!("xy{}", "🦀".repeat(100)),
        ] {
            let line = format!("DESCRIPTION:{text}");
            let out = folded(&line);
            assert!(out.ends_with("\r\n"));
            for physical in out.trim_end_matches("\r\n").split("\r\n") {
                assert!(
                    physical.len() <= MAX_LINE,
                    "{} octets: {physical:?}",
                    physical.len()
                );
            }
            assert!(out
                .trim_end_matches("\r\n")
                .split("\r\n")
                .skip(1)
                .all(|l| l.starts_with(' ')));
            assert_eq!(unfold(&out), line);
        }
    }

    #[test]
    fn text_is_escaped_and_line_breaks_become_backslash_n() {
        let mut out = String::new();
        escape_text(&mut out, "a,b;c\\d\r\ne\nf\rg\u{7}h\ti:j");
        assert_eq!(out, "a\\,b\\;c\\\\d\\ne\\nf\\ng\u{fffd}h\ti:j");
        let mut line = Vec::new();
        text_property(&mut line, "DESCRIPTION", "one\r\ntwo");
        assert_eq!(line, b"DESCRIPTION:one\\ntwo\r\n");
    }

    #[test]
    fn times_are_utc_without_milliseconds() {
        let at = Timestamp::parse("2026-11-01T07:00:59.999Z").unwrap();
        assert_eq!(ics_time(at), "20261101T070059Z");
    }

    #[test]
    fn an_alarm_is_a_display_alarm_before_the_start() {
        let text = String::from_utf8(valarm(15)).unwrap();
        assert_eq!(
            text,
            "BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Usage-limit reset due in 15 minutes\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n"
        );
        assert!(String::from_utf8(valarm(0))
            .unwrap()
            .contains("TRIGGER:-PT0M\r\n"));
    }
}
