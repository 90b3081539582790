//! The renderers' rules, in process: identities, `updated`, headlines, the
//! base URL, and both documents read back (Atom with the crate's own reader).

use serde_json::{json, Value};

use super::*;
use crate::model::{ResetType, Timestamp};
use crate::query::{parse_atom_query, parse_ics_query, PublishedView};

fn record(value: Value) -> Record {
    serde_json::from_value(value).expect("a valid record")
}

fn schedule(id: &str, state: &str, start: &str, end: &str) -> Value {
    json!({
        "id": id, "kind": "reset_scheduled", "resetType": "global",
        "announcedAt": "2026-11-01T00:00:00.000Z", "effectiveAt": start,
        "text": format!("Schedule {id} <b>&amp;</b>, soon; \u{1}"), "confidence": 0.9,
        "scope": {"plans": ["pro"], "windows": ["weekly"]},
        "source": {"origin": "x", "postId": id, "handle": "h", "url": format!("https://x.com/h/status/{id}?a=1&b=2")},
        "schedulePrecision": "datetime", "scheduleBasis": "explicit",
        "scheduleWindow": {"startAt": start, "endAt": end},
        "scheduleState": state, "completedAt": null, "completionRecordId": null,
        "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

fn view(records: &[Value]) -> PublishedView {
    crate::query::view::standalone_view(7, records.iter().cloned().map(record).collect())
}

/// The matcher's default tolerance, 180 minutes.
const TOLERANCE: i64 = 180 * 60_000;

/// The words of `v` at its publish.
fn at_publish(v: &PublishedView) -> AsOf {
    AsOf::of(v, TOLERANCE, v.generated_at())
}

#[test]
fn record_ids_give_stable_distinct_uuids() {
    assert_eq!(record_uuid("123"), record_uuid("123"));
    assert_ne!(record_uuid("123"), record_uuid("1234"));
    assert_eq!(record_uuid("123").get_version_num(), 5);
    // Pinned (Python: uuid5(UUID(namespace), "record:" + id)): subscribers
    // keep these ids, so the namespace and the name must never change.
    assert_eq!(
        record_uuid("2083287127865885060").to_string(),
        "c77aad95-e869-5136-9df1-a83c01dfe90d"
    );
}

#[test]
fn updated_follows_the_records_own_changes() {
    let mut r = record(schedule(
        "1",
        "pending",
        "2026-11-24T18:00:00.000Z",
        "2026-11-24T18:00:00.000Z",
    ));
    let announced = Timestamp::parse("2026-11-01T00:00:00.000Z").unwrap();
    assert_eq!(
        record_updated(&r, None),
        announced,
        "pending: when announced"
    );
    r.schedule_state = Some(ScheduleState::Elapsed);
    assert_eq!(
        record_updated(&r, None),
        announced,
        "elapsed, not told yet: its words have not changed"
    );
    let told = Timestamp::parse("2026-11-24T21:00:00.000Z").unwrap();
    assert_eq!(
        record_updated(&r, Some(told)),
        told,
        "told not confirmed: when it was"
    );
    r.schedule_state = Some(ScheduleState::Fulfilled);
    r.completed_at = Some(Timestamp::parse("2026-11-24T18:05:00.000Z").unwrap());
    assert_eq!(
        record_updated(&r, None),
        r.completed_at.unwrap(),
        "fulfilled: when confirmed"
    );
    let manual = Record::manual_completion("manual:1", announced, &[], ResetType::Global);
    assert_eq!(record_updated(&manual, None), announced);
}

#[test]
fn headlines_say_in_the_messages_words_what_is_known_when_and_what() {
    let r = record(schedule(
        "1",
        "pending",
        "2026-11-24T18:00:00.000Z",
        "2026-11-24T18:00:00.000Z",
    ));
    assert_eq!(
        headline(&r, false),
        "Reset announced: 2026-11-24 18:00 UTC · Global reset · Pro · weekly limit"
    );
    let mut day = r.clone();
    day.schedule_window = Some(crate::model::ScheduleWindow {
        start_at: Timestamp::parse("2026-11-01T07:00:00.000Z").unwrap(),
        end_at: Timestamp::parse("2026-11-02T08:00:00.000Z").unwrap(),
    });
    day.scope = None;
    day.schedule_state = Some(ScheduleState::Elapsed);
    assert_eq!(
        headline(&day, false),
        "Reset announced: 2026-11-01 07:00 to 2026-11-02 08:00 UTC · Global reset",
        "elapsed but within the tolerance: not \"not confirmed\" yet"
    );
    assert_eq!(
        headline(&day, true),
        "Scheduled reset not confirmed: 2026-11-01 07:00 to 2026-11-02 08:00 UTC · Global reset"
    );
    let mut fulfilled = r.clone();
    fulfilled.schedule_state = Some(ScheduleState::Fulfilled);
    fulfilled.completed_at = Some(Timestamp::parse("2026-11-24T18:02:00.000Z").unwrap());
    fulfilled.scope = Some(crate::model::Scope {
        plans: vec!["plus".into(), "pro".into(), "max".into()],
        windows: vec!["unknown".into()],
    });
    assert_eq!(
        headline(&fulfilled, false),
        "Scheduled reset completed: 2026-11-24 18:02 UTC · Global reset · Plus, Pro, Max"
    );
    let mut untimed = r.clone();
    untimed.schedule_window = None;
    untimed.schedule_state = Some(ScheduleState::Unknown);
    assert_eq!(
        headline(&untimed, false),
        "Reset announced: time not stated · Global reset · Pro · weekly limit"
    );
    let at = Timestamp::parse("2026-11-16T00:00:30.000Z").unwrap();
    let manual = Record::manual_completion("manual:1", at, &[], ResetType::GlobalAndBanked);
    assert_eq!(
        headline(&manual, false),
        "Reset completed: 2026-11-16 00:00:30 UTC · Global and banked reset"
    );
}

#[test]
fn a_schedule_turns_not_confirmed_a_tolerance_after_its_window_in_both_feeds() {
    // Published at 2026-11-20T10:00Z (standalone_view): a window that
    // ended at 09:00 is told not confirmed at 12:00, not before.
    let v = view(&[schedule(
        "1",
        "elapsed",
        "2026-11-20T08:00:00.000Z",
        "2026-11-20T09:00:00.000Z",
    )]);
    let instant = |t: &str| Timestamp::parse(t).unwrap();
    let before = AsOf::of(&v, TOLERANCE, instant("2026-11-20T11:59:59.999Z"));
    let after = AsOf::of(&v, TOLERANCE, instant("2026-11-20T12:00:00.000Z"));
    assert_eq!(
        before,
        at_publish(&v),
        "nothing turned between the publish and 12:00"
    );
    assert_eq!(before.since, None);
    assert_eq!(after.since, Some(instant("2026-11-20T12:00:00.000Z")));
    assert_eq!(
        AsOf::of(&v, TOLERANCE, instant("2026-12-01T00:00:00.000Z")),
        after,
        "nothing turns after it: the same words, the same body"
    );
    let base = BaseUrl::from_host(None);
    let all = parse_atom_query("").unwrap();
    let title = |as_of: AsOf| {
        let body = atom::render(&v, &all, &base, None, as_of);
        let feed = atom_syndication::Feed::read_from(&body[..]).unwrap();
        let entry = &feed.entries[0];
        (entry.title.value.clone(), entry.updated.to_rfc3339())
    };
    // Asked after the turn first, so the view keeps the last words, and
    // before it still says what is true then.
    assert_eq!(
        title(after),
        (
            "Scheduled reset not confirmed: 2026-11-20 08:00 to 2026-11-20 09:00 UTC · Global reset · Pro · weekly limit".to_owned(),
            "2026-11-20T12:00:00+00:00".to_owned()
        )
    );
    assert_eq!(
        title(before),
        (
            "Reset announced: 2026-11-20 08:00 to 2026-11-20 09:00 UTC · Global reset · Pro · weekly limit".to_owned(),
            "2026-11-01T00:00:00+00:00".to_owned()
        )
    );
    let summary = |as_of: AsOf| {
        let body = ics::render(&v, &parse_ics_query("").unwrap(), None, as_of);
        let text = String::from_utf8(body.to_vec()).unwrap();
        let unfolded = text.replace("\r\n ", "");
        unfolded
            .lines()
            .filter(|l| l.starts_with("SUMMARY:") || l.starts_with("LAST-MODIFIED:"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    // The calendar is kept whole for the first words asked, and made
    // again for the others.
    assert_eq!(
        summary(before),
        [
            "LAST-MODIFIED:20261120T100000Z",
            "SUMMARY:Reset announced: 2026-11-20 08:00 to 2026-11-20 09:00 UTC · Global reset · Pro · weekly limit"
        ]
    );
    assert_eq!(
        summary(after),
        [
            "LAST-MODIFIED:20261120T120000Z",
            "SUMMARY:Scheduled reset not confirmed: 2026-11-20 08:00 to 2026-11-20 09:00 UTC · Global reset · Pro · weekly limit"
        ]
    );
}

#[test]
fn a_configured_base_url_is_an_absolute_http_url_without_query_or_fragment() {
    assert_eq!(
        BaseUrl::parse("https://Resets.Example.com/api/")
            .unwrap()
            .as_str(),
        "https://resets.example.com/api"
    );
    assert_eq!(
        BaseUrl::parse("http://127.0.0.1:8080").unwrap().as_str(),
        "http://127.0.0.1:8080"
    );
    for bad in [
        "example.com",
        "/relative",
        "ftp://example.com",
        "https://user:pw@example.com",
        "https://example.com/?q=1",
        "https://example.com/#top",
        "mailto:a@example.com",
    ] {
        assert!(BaseUrl::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_host_header_is_used_only_when_it_is_a_plain_authority() {
    assert_eq!(
        BaseUrl::from_host(Some("Example.com:8080")).as_str(),
        "http://example.com:8080"
    );
    assert_eq!(
        BaseUrl::from_host(Some("[::1]:80")).as_str(),
        "http://[::1]:80"
    );
    assert_eq!(
        BaseUrl::from_host(Some("10.0.0.1")).as_str(),
        "http://10.0.0.1"
    );
    for bad in [
        None,
        Some(""),
        Some("evil.com\"><x>"),
        Some("a@b.com"),
        Some("a.com:80:80"),
        Some("a.com:123456"),
        Some("a.com/path"),
        Some("[zz]:1"),
        Some("a b"),
    ] {
        assert_eq!(BaseUrl::from_host(bad).as_str(), "", "{bad:?}");
    }
}

#[test]
fn control_characters_never_reach_xml() {
    assert_eq!(xml_safe("a\u{1}b\tc\u{ffff}"), "a\u{fffd}b\tc\u{fffd}");
    assert!(matches!(xml_safe("plain"), Cow::Borrowed(_)));
}

#[test]
fn the_atom_feed_reads_back_with_escaped_text_and_links() {
    let v = view(&[
        schedule(
            "1",
            "pending",
            "2026-11-24T18:00:00.000Z",
            "2026-11-24T18:00:00.000Z",
        ),
        schedule(
            "2",
            "elapsed",
            "2026-11-10T18:00:00.000Z",
            "2026-11-10T19:00:00.000Z",
        ),
    ]);
    let query = parse_atom_query("plan=pro").unwrap();
    let base = BaseUrl::from_host(Some("example.com"));
    let body = atom::render(&v, &query, &base, None, at_publish(&v));
    let feed = atom_syndication::Feed::read_from(&body[..]).expect("a well-formed feed");
    assert_eq!(feed.entries.len(), 2);
    assert_eq!(feed.updated.to_rfc3339(), "2026-11-20T10:00:00+00:00");
    let links: Vec<(&str, &str)> = feed
        .links
        .iter()
        .map(|l| (l.rel.as_str(), l.href.as_str()))
        .collect();
    assert!(
        links.contains(&(
            "self",
            "http://example.com/openapi/v1/records.atom?plan=pro"
        )),
        "{links:?}"
    );
    let first = &feed.entries[0];
    assert_eq!(first.id, format!("urn:uuid:{}", record_uuid("1")));
    assert_eq!(
        first.content.as_ref().unwrap().value.as_deref(),
        Some("Schedule 1 <b>&amp;</b>, soon; \u{fffd}")
    );
    assert_eq!(first.links[0].href, "https://x.com/h/status/1?a=1&b=2");
    assert_eq!(
        feed.entries[1].updated.to_rfc3339(),
        "2026-11-10T22:00:00+00:00",
        "told not confirmed: the tolerance after its window"
    );
    // Another plan: nothing concerns it; the entries are rendered once, then copied.
    let other = atom::render(
        &v,
        &parse_atom_query("plan=plus").unwrap(),
        &base,
        None,
        at_publish(&v),
    );
    let feed = atom_syndication::Feed::read_from(&other[..]).unwrap();
    assert!(feed.entries.is_empty());
    assert_eq!(
        atom::render(&v, &query, &base, None, at_publish(&v)),
        body,
        "the same view gives the same bytes"
    );
}

#[test]
fn the_feed_takes_the_newest_fifty() {
    let records: Vec<Value> = (0..60)
        .map(|i| {
            let at = format!("2026-10-{:02}T00:00:00.000Z", i % 28 + 1);
            schedule(&format!("{}", 100 + i), "elapsed", &at, &at)
        })
        .collect();
    let v = view(&records);
    let body = atom::render(
        &v,
        &parse_atom_query("").unwrap(),
        &BaseUrl::from_host(None),
        None,
        at_publish(&v),
    );
    let feed = atom_syndication::Feed::read_from(&body[..]).unwrap();
    assert_eq!(feed.entries.len(), atom::LIMIT);
    let expected: Vec<String> = v.ordered(crate::query::KindFilter::All)[..atom::LIMIT]
        .iter()
        .map(|&i| format!("urn:uuid:{}", record_uuid(&v.record(i).id)))
        .collect();
    let got: Vec<&String> = feed.entries.iter().map(|e| &e.id).collect();
    assert_eq!(got, expected.iter().collect::<Vec<_>>());
    // No usable Host: the links are relative.
    assert!(feed
        .links
        .iter()
        .any(|l| l.rel == "self" && l.href == "/openapi/v1/records.atom"));
}

#[test]
fn the_calendar_has_events_alarms_and_crlf_lines() {
    let v = view(&[
        schedule(
            "1",
            "pending",
            "2026-11-24T18:00:00.000Z",
            "2026-11-24T18:00:00.000Z",
        ),
        schedule(
            "2",
            "elapsed",
            "2026-11-01T07:00:00.000Z",
            "2026-11-02T08:00:00.000Z",
        ),
    ]);
    let plain = ics::render(&v, &parse_ics_query("").unwrap(), None, at_publish(&v));
    let text = std::str::from_utf8(&plain).unwrap();
    assert!(text.starts_with("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"));
    assert!(text.ends_with("END:VCALENDAR\r\n"));
    assert!(
        !text.replace("\r\n", "").contains('\n'),
        "every line ends in CR-LF"
    );
    assert_eq!(text.matches("BEGIN:VEVENT").count(), 2);
    assert!(text.contains("DTSTART:20261101T070000Z\r\nDTEND:20261102T080000Z\r\n"));
    assert!(
        text.contains("DTSTART:20261124T180000Z\r\nSUMMARY"),
        "an exact time has no DTEND"
    );
    assert!(text.contains("REFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n"));
    assert!(!text.contains("VALARM"));
    // The default calendar is kept: the same bytes, shared.
    let again = ics::render(&v, &parse_ics_query("").unwrap(), None, at_publish(&v));
    assert_eq!(again.as_ptr(), plain.as_ptr());
    let alarmed = ics::render(
        &v,
        &parse_ics_query("alarm=15").unwrap(),
        None,
        at_publish(&v),
    );
    let alarmed = std::str::from_utf8(&alarmed).unwrap();
    assert_eq!(
        alarmed.matches("BEGIN:VALARM").count(),
        1,
        "only the pending schedule"
    );
    assert!(alarmed.contains("TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT"));
}

#[test]
fn a_fixed_base_keeps_each_kinds_feed_and_renders_the_rest() {
    let v = view(&[
        schedule(
            "1",
            "pending",
            "2026-11-21T00:00:00.000Z",
            "2026-11-21T01:00:00.000Z",
        ),
        schedule(
            "2",
            "elapsed",
            "2026-11-19T00:00:00.000Z",
            "2026-11-19T01:00:00.000Z",
        ),
    ]);
    let base = BaseUrl::parse("https://resets.example.org").unwrap();
    let all = parse_atom_query("").unwrap();
    let kept = atom::render_shared(&v, &all, &base, true, None, at_publish(&v));
    assert_eq!(
        kept,
        atom::render(&v, &all, &base, None, at_publish(&v)),
        "kept bytes are the rendered ones"
    );
    let again = atom::render_shared(&v, &all, &base, true, None, at_publish(&v));
    assert_eq!(
        kept.as_ptr(),
        again.as_ptr(),
        "the second request shares the kept bytes"
    );
    // Another kind, a plan, or a base from the request's Host is never the kept feed.
    let scheduled = parse_atom_query("kind=reset_scheduled").unwrap();
    assert_eq!(
        atom::render_shared(&v, &scheduled, &base, true, None, at_publish(&v)),
        atom::render(&v, &scheduled, &base, None, at_publish(&v))
    );
    let pro = parse_atom_query("plan=pro").unwrap();
    let with_plan = atom::render_shared(&v, &pro, &base, true, None, at_publish(&v));
    assert_eq!(
        with_plan,
        atom::render(&v, &pro, &base, None, at_publish(&v))
    );
    assert_ne!(
        with_plan.as_ptr(),
        atom::render_shared(&v, &pro, &base, true, None, at_publish(&v)).as_ptr()
    );
    let host = BaseUrl::from_host(Some("other.example:8080"));
    let from_host = atom::render_shared(&v, &all, &host, false, None, at_publish(&v));
    assert_eq!(
        from_host,
        atom::render(&v, &all, &host, None, at_publish(&v))
    );
    assert_ne!(from_host, kept);
}

#[test]
fn the_calendar_takes_the_first_events_of_the_list() {
    let records: Vec<Value> = (0..(ics::LIMIT + 30))
        .map(|i| {
            let at = format!("2026-{:02}-{:02}T00:00:00.000Z", i % 12 + 1, i % 28 + 1);
            schedule(&format!("{}", 1000 + i), "elapsed", &at, &at)
        })
        .collect();
    let v = view(&records);
    let body = ics::render(&v, &parse_ics_query("").unwrap(), None, at_publish(&v));
    let text = String::from_utf8(body.to_vec()).unwrap();
    let uids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("UID:"))
        .map(str::trim_end)
        .collect();
    let expected: Vec<String> = v.ordered(crate::query::KindFilter::All)[..ics::LIMIT]
        .iter()
        .map(|&i| record_uuid(&v.record(i).id).to_string())
        .collect();
    assert_eq!(uids, expected);
}
