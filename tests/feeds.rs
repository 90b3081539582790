//! The Atom feed and the iCalendar calendar against the real binary, read
//! back with the real libraries: `feedparser` and `icalendar` from PyPI
//! (pinned in tests/requirements.txt), through tests/feeds_check.py.
//!
//! The records are tests/fixtures/records/feeds.json (hand-made, see its
//! `comment`): every schedule state, date-precision schedules over a
//! 25-hour and a 23-hour day, completions with long UTF-8 text, scopes for
//! the `plan` filter.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::server::{Reply, Server};
use crate::util::{fixture, World};

const GENERATED_AT: &str = "2026-11-20T10:00:00.000Z";
const ATOM: &str = "/openapi/v1/records.atom";
const ICS: &str = "/openapi/v1/records.ics";

/// The namespace of record UUIDs, pinned here independently of the code:
/// entry ids and UIDs are `uuid5(NAMESPACE, "record:" + id)` forever.
const NAMESPACE: &str = "754694ed-f97f-407f-9f9d-610864c69d78";

fn record_uuid(id: &str) -> String {
    let namespace = uuid::Uuid::parse_str(NAMESPACE).unwrap();
    uuid::Uuid::new_v5(&namespace, format!("record:{id}").as_bytes()).to_string()
}

fn records() -> Vec<Value> {
    let text = std::fs::read_to_string(fixture("records/feeds.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["records"].as_array().unwrap().clone()
}

/// A server over the fixture (rate limiting off unless `args` say
/// otherwise), its clock frozen at the publish: what a feed says of a
/// schedule turns with the clock.
fn serve(w: &World, args: &[&str]) -> Server {
    w.publish_records(&records(), GENERATED_AT);
    let mut all = vec!["--now", GENERATED_AT];
    all.extend_from_slice(args);
    Server::start(w, &all, &[])
}

fn open(w: &World) -> Server {
    serve(w, &["--no-rate-limit", "--flood-guard", "off"])
}

/// What feedparser (`atom`) or icalendar (`ics`) read in `body`.
fn read_back(format: &str, body: &[u8]) -> Value {
    crate::util::python_json("feeds_check.py", format, body)
}

#[track_caller]
fn ok(reply: Reply, content_type: &str) -> Reply {
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("content-type"), Some(content_type));
    reply
}

fn atom(s: &Server, query: &str) -> Value {
    let reply = ok(
        s.get(&format!("{ATOM}{query}")),
        "application/atom+xml; charset=utf-8",
    );
    let feed = read_back("atom", &reply.body);
    assert_eq!(
        feed["bozo"], false,
        "feedparser: {}",
        feed["bozo_exception"]
    );
    assert_eq!(feed["version"], "atom10");
    feed
}

fn ics(s: &Server, query: &str) -> (Value, Vec<u8>) {
    let reply = ok(
        s.get(&format!("{ICS}{query}")),
        "text/calendar; charset=utf-8",
    );
    let calendar = read_back("ics", &reply.body);
    assert_eq!(calendar["errors"], json!([]));
    for event in calendar["events"].as_array().unwrap() {
        assert_eq!(event["errors"], json!([]), "{event}");
    }
    (calendar, reply.body)
}

/// Every record of `kind` as the JSON API lists it, in its order.
fn api_records(s: &Server, kind: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for page in 1.. {
        let reply = s.get(&format!("/openapi/v1/records?kind={kind}&page={page}"));
        assert_eq!(reply.status, 200, "{}", reply.text());
        let body = reply.json();
        all.extend(body["data"]["items"].as_array().unwrap().iter().cloned());
        if body["data"]["hasNext"] != true {
            break;
        }
    }
    all
}

fn ids_of(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

fn entry_ids(feed: &Value) -> Vec<String> {
    feed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// `2026-11-01T07:00:00.000Z` as the calendar reader prints it.
fn second(ts: &Value) -> String {
    ts.as_str().unwrap().replace(".000Z", "Z")
}

fn events_by_uid(calendar: &Value) -> BTreeMap<String, Value> {
    calendar["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["uid"].as_str().unwrap().to_owned(), e.clone()))
        .collect()
}

#[test]
fn the_atom_feed_parses_and_shows_the_api_order_with_glanceable_entries() {
    let w = World::new();
    let s = open(&w);
    for kind in ["all", "reset_scheduled", "reset_completed"] {
        let feed = atom(&s, &format!("?kind={kind}"));
        let expected: Vec<String> = ids_of(&api_records(&s, kind))
            .iter()
            .take(50)
            .map(|id| format!("urn:uuid:{}", record_uuid(id)))
            .collect();
        assert_eq!(
            entry_ids(&feed),
            expected,
            "kind={kind}: the API's records, in its order"
        );
        assert_eq!(feed["feed"]["updated"], "2026-11-20T10:00:00+00:00");
    }
    let feed = atom(&s, "");
    let self_link = json!({"rel": "self", "href": s.url(ATOM), "type": "application/atom+xml"});
    assert!(
        feed["feed"]["links"]
            .as_array()
            .unwrap()
            .contains(&self_link),
        "self link from the Host: {}",
        feed["feed"]["links"]
    );
    let by_id: BTreeMap<String, &Value> = feed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_owned(), e))
        .collect();
    let pending = by_id[&format!("urn:uuid:{}", record_uuid("2090000000000000001"))];
    // The words of the push messages, not identifiers.
    assert_eq!(
        pending["title"],
        "Reset announced: 2026-11-24 18:00 UTC · Global reset · Pro · 5-hour limit"
    );
    assert_eq!(
        pending["content"],
        json!(["Resetting Pro limits on Tuesday at 10:00 PT."])
    );
    assert_eq!(
        pending["links"],
        json!([{"rel": "alternate", "href": "https://x.com/resets/status/2090000000000000001", "type": "text/html"}])
    );
    assert_eq!(
        pending["updated_utc"], "2026-11-19T08:00:00Z",
        "announcedAt"
    );
    let day = by_id[&format!("urn:uuid:{}", record_uuid("2090000000000000003"))];
    assert_eq!(
        day["title"],
        "Scheduled reset not confirmed: 2026-11-01 07:00 to 2026-11-02 08:00 UTC · Global reset · all plans · weekly limit"
    );
    assert_eq!(
        day["updated_utc"], "2026-11-02T11:00:00Z",
        "told not confirmed: the match tolerance (180 minutes) after its window"
    );
    // A fulfilled schedule is in the schedules' list (it left `all`).
    let schedules = atom(&s, "?kind=reset_scheduled");
    let fulfilled = schedules["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == format!("urn:uuid:{}", record_uuid("2090000000000000005")))
        .unwrap();
    assert_eq!(
        fulfilled["title"],
        "Scheduled reset completed: 2026-11-12 16:20 UTC · Global reset · Plus, Pro · weekly limit"
    );
    // The long UTF-8 text survives (XML turns its CR-LF into LF, as every XML reader must).
    let long = records()
        .into_iter()
        .find(|r| r["id"] == "2090000000000000006")
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    let completion = by_id[&format!("urn:uuid:{}", record_uuid("2090000000000000006"))];
    assert_eq!(completion["content"], json!([long]));
    let manual = by_id[&format!("urn:uuid:{}", record_uuid("manual:m1"))];
    assert_eq!(
        manual["title"],
        "Reset completed: 2026-11-15 03:00 UTC · Banked reset"
    );
    assert_eq!(manual["links"], json!([]), "no source post, no link");
}

/// One schedule of 2026-11-20, 08:00 to 09:00 UTC, served `elapsed`
/// (published at 09:30), in the Atom feed and the calendar of a server
/// frozen at `now`: each entry's title and `updated`, each event's
/// `SUMMARY` and `LAST-MODIFIED`, and the answers' `ETag` and `Last-Modified`.
fn told_at(now: &str, args: &[&str]) -> (Value, Value, [String; 4]) {
    let w = World::new();
    let mut schedule = records()
        .into_iter()
        .find(|r| r["id"] == "2090000000000000003")
        .unwrap();
    schedule["scheduleWindow"] =
        json!({"startAt": "2026-11-20T08:00:00.000Z", "endAt": "2026-11-20T09:00:00.000Z"});
    schedule["effectiveAt"] = json!("2026-11-20T08:00:00.000Z");
    schedule["announcedAt"] = json!("2026-11-19T08:00:00.000Z");
    schedule["schedulePrecision"] = json!("window");
    w.publish_records(&[schedule], "2026-11-20T09:30:00.000Z");
    // A configured base: the Atom feed's tag does not depend on the port.
    let mut all = vec![
        "--now",
        now,
        "--no-rate-limit",
        "--flood-guard",
        "off",
        "--public-base-url",
        "https://resets.example.org",
    ];
    all.extend_from_slice(args);
    let s = Server::start(&w, &all, &[]);
    let atom_reply = s.get(ATOM);
    let ics_reply = s.get(ICS);
    let headers = [&atom_reply, &ics_reply].map(|r| {
        (
            r.header("etag").unwrap().to_owned(),
            r.header("last-modified").unwrap().to_owned(),
        )
    });
    let entry = read_back("atom", &atom_reply.body)["entries"][0].clone();
    let event = read_back("ics", &ics_reply.body)["events"][0].clone();
    (
        json!({"title": entry["title"], "updated": entry["updated_utc"]}),
        json!({"summary": event["summary"], "lastModified": event["last_modified"]}),
        [
            headers[0].0.clone(),
            headers[0].1.clone(),
            headers[1].0.clone(),
            headers[1].1.clone(),
        ],
    )
}

#[test]
fn a_schedule_is_not_confirmed_in_the_feeds_when_the_messages_say_so() {
    const WHAT: &str =
        "2026-11-20 08:00 to 2026-11-20 09:00 UTC · Global reset · all plans · weekly limit";
    // The window ended at 09:00; the match tolerance is 180 minutes, so a
    // completion until 12:00 still confirms it: announced until then,
    // not confirmed from 12:00, the instant "Scheduled reset not
    // confirmed" is pushed (crate::remind::unconfirmed_at).
    let (entry, event, before) = told_at("2026-11-20T11:59:59.999Z", &[]);
    assert_eq!(
        (entry, event),
        (
            json!({"title": format!("Reset announced: {WHAT}"), "updated": "2026-11-19T08:00:00Z"}),
            json!({"summary": format!("Reset announced: {WHAT}"), "lastModified": "2026-11-20T09:30:00Z"}),
        )
    );
    let (entry, event, after) = told_at("2026-11-20T12:00:00.000Z", &[]);
    assert_eq!(
        (entry, event),
        (
            json!({"title": format!("Scheduled reset not confirmed: {WHAT}"), "updated": "2026-11-20T12:00:00Z"}),
            json!({"summary": format!("Scheduled reset not confirmed: {WHAT}"), "lastModified": "2026-11-20T12:00:00Z"}),
        )
    );
    // New words, new validators: a client's copy from before is not 304.
    assert_ne!(before[0], after[0], "the Atom feed's ETag");
    assert_ne!(before[2], after[2], "the calendar's ETag");
    assert_eq!(
        [&before[1], &after[1], &before[3], &after[3]],
        [
            "Fri, 20 Nov 2026 09:30:00 GMT",
            "Fri, 20 Nov 2026 12:00:00 GMT",
            "Fri, 20 Nov 2026 09:30:00 GMT",
            "Fri, 20 Nov 2026 12:00:00 GMT"
        ],
        "Last-Modified: the publish, then the instant the words turned"
    );
    // Later, nothing else turns: the same words under the same tags.
    let (_, _, much_later) = told_at("2026-11-21T12:00:00.000Z", &[]);
    assert_eq!(much_later, after);
    // The tolerance is the server's own (--match-tolerance-minutes).
    let (entry, _, _) = told_at(
        "2026-11-20T10:00:00.000Z",
        &["--match-tolerance-minutes", "60"],
    );
    assert_eq!(
        entry["title"],
        format!("Scheduled reset not confirmed: {WHAT}")
    );
}

#[test]
fn a_configured_public_base_url_makes_the_self_link() {
    let w = World::new();
    let s = serve(
        &w,
        &[
            "--no-rate-limit",
            "--public-base-url",
            "https://resets.example.com/mirror/",
        ],
    );
    let feed = atom(&s, "?kind=reset_completed&plan=pro");
    let links = feed["feed"]["links"].as_array().unwrap();
    assert!(links.contains(&json!({
        "rel": "self",
        "href": "https://resets.example.com/mirror/openapi/v1/records.atom?kind=reset_completed&plan=pro",
        "type": "application/atom+xml"
    })), "{links:?}");
    // A bad value is refused at start, naming the setting.
    let bad = w.run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--public-base-url",
        "https://x.example/?a=1",
    ]);
    assert_eq!(bad.code, 64, "{}", bad.stderr);
    assert!(bad.stderr.contains("public-base-url"), "{}", bad.stderr);
}

/// A record id as the record pages' path segment (everything but
/// unreserved characters percent-encoded).
fn page_segment(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// With a configured public base URL and the status site on, each Atom
/// entry's `alternate` link and each calendar event's `URL` is the record's
/// page, and the source post stays as the entry's `related` link; with
/// `--no-site` they are the source post again.
#[test]
fn a_configured_base_links_entries_and_events_to_the_record_pages() {
    const BASE: &str = "https://resets.example.com/mirror";
    let w = World::new();
    let s = serve(
        &w,
        &[
            "--no-rate-limit",
            "--public-base-url",
            "https://resets.example.com/mirror/",
        ],
    );
    let listed = api_records(&s, "all");
    let feed = atom(&s, "");
    let entries = feed["entries"].as_array().unwrap();
    assert!(!entries.is_empty());
    let mut sourced = 0;
    for (entry, record) in entries.iter().zip(&listed) {
        let id = record["id"].as_str().unwrap();
        let mut expected = vec![json!({
            "rel": "alternate",
            "href": format!("{BASE}/records/{}", page_segment(id)),
            "type": "text/html"
        })];
        if let Some(url) = record["source"]["url"].as_str() {
            sourced += 1;
            expected.push(json!({"rel": "related", "href": url, "type": "text/html"}));
        }
        assert_eq!(entry["links"], json!(expected), "{id}");
    }
    assert!(sourced > 0, "the fixture has records with a source post");
    // The page the link names exists.
    let first = listed[0]["id"].as_str().unwrap();
    assert_eq!(
        s.get(&format!("/records/{}", page_segment(first))).status,
        200
    );
    let (calendar, _) = ics(&s, "");
    let events = events_by_uid(&calendar);
    assert!(!events.is_empty());
    for record in &listed {
        let id = record["id"].as_str().unwrap();
        if let Some(event) = events.get(&record_uuid(id)) {
            assert_eq!(
                event["url"],
                json!(format!("{BASE}/records/{}", page_segment(id))),
                "{id}"
            );
        }
    }
    drop(s);

    let w = World::new();
    let s = serve(
        &w,
        &[
            "--no-rate-limit",
            "--no-site",
            "--public-base-url",
            "https://resets.example.com/mirror/",
        ],
    );
    let feed = atom(&s, "");
    for (entry, record) in feed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&api_records(&s, "all"))
    {
        let expected: Vec<Value> = record["source"]["url"]
            .as_str()
            .map(|url| json!({"rel": "alternate", "href": url, "type": "text/html"}))
            .into_iter()
            .collect();
        assert_eq!(entry["links"], json!(expected));
    }
}

#[test]
fn a_host_header_that_is_not_a_plain_authority_never_reaches_the_feed() {
    let w = World::new();
    let s = open(&w);
    // Markup (refused by the HTTP authority parser already) and user info
    // (a valid authority, but not a plain host and port).
    for host in ["evil.example\"><x a=\"", "user@evil.example"] {
        let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
        let request = format!("GET {ATOM} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        let body = &raw[text.find("\r\n\r\n").unwrap() + 4..];
        let feed = read_back("atom", body);
        assert_eq!(feed["bozo"], false, "{}", feed["bozo_exception"]);
        assert!(!String::from_utf8_lossy(body).contains("evil"), "{host}");
        assert!(
            feed["feed"]["links"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["rel"] == "self" && l["href"] == ATOM),
            "{host}: a relative self link: {}",
            feed["feed"]["links"]
        );
    }
}

#[test]
fn ids_stay_and_updated_moves_only_for_the_changed_record_across_a_republish() {
    let w = World::new();
    let s = open(&w);
    let before = atom(&s, "?kind=reset_scheduled");
    let (calendar_before, _) = ics(&s, "?kind=reset_scheduled");
    // Republish: one schedule is fulfilled; nothing else changes.
    let mut changed = records();
    let target = changed
        .iter_mut()
        .find(|r| r["id"] == "2090000000000000001")
        .unwrap();
    target["scheduleState"] = json!("fulfilled");
    target["completedAt"] = json!("2026-11-24T18:10:00.000Z");
    target["fulfillmentOrigin"] = json!("manual");
    w.publish_records(&changed, "2026-11-24T19:00:00.000Z");
    s.wait_for("/healthz", Duration::from_secs(5), |r| {
        r.json()["sequence"] == 2
    });
    let after = atom(&s, "?kind=reset_scheduled");
    assert_eq!(
        after["feed"]["id"], before["feed"]["id"],
        "the feed id is stable"
    );
    assert_eq!(
        after["feed"]["updated"], "2026-11-24T19:00:00+00:00",
        "generatedAt"
    );
    let updated = |feed: &Value| -> BTreeMap<String, String> {
        feed["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["id"].as_str().unwrap().to_owned(),
                    e["updated_utc"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let (old, new) = (updated(&before), updated(&after));
    assert_eq!(
        old.keys().collect::<BTreeSet<_>>(),
        new.keys().collect::<BTreeSet<_>>(),
        "entry ids are stable across publishes"
    );
    let moved = format!("urn:uuid:{}", record_uuid("2090000000000000001"));
    for (id, at) in &old {
        if *id == moved {
            assert_eq!(at, "2026-11-19T08:00:00Z");
            assert_eq!(
                new[id], "2026-11-24T18:10:00Z",
                "fulfilled: updated is completedAt"
            );
        } else {
            assert_eq!(new[id], *at, "{id} did not change, nor did its updated");
        }
    }
    let (calendar_after, _) = ics(&s, "?kind=reset_scheduled");
    let (old, new) = (
        events_by_uid(&calendar_before),
        events_by_uid(&calendar_after),
    );
    assert_eq!(
        old.keys().collect::<Vec<_>>(),
        new.keys().collect::<Vec<_>>(),
        "UIDs are stable"
    );
    let uid = record_uuid("2090000000000000001");
    assert_eq!(
        (old[&uid]["status"].as_str(), new[&uid]["status"].as_str()),
        (Some("TENTATIVE"), Some("CONFIRMED"))
    );
    assert_eq!(
        new[&uid]["dtstamp"], "2026-11-24T19:00:00Z",
        "DTSTAMP is the snapshot's"
    );
}

#[test]
fn plan_keeps_the_records_for_that_plan_all_or_unknown() {
    let w = World::new();
    let s = open(&w);
    let p = |n: &str| format!("20900000000000000{n}");
    let cases: [(&str, &str, Vec<String>); 5] = [
        (
            "reset_scheduled",
            "pro",
            vec![
                p("01"),
                p("03"),
                p("04"),
                p("05"),
                "op_0123456789abcdef01234567".into(),
                p("10"),
            ],
        ),
        (
            "reset_scheduled",
            "plus",
            vec![p("02"), p("03"), p("04"), p("05"), p("10")],
        ),
        // A plan no record names: the records for all or unknown plans.
        ("reset_scheduled", "team", vec![p("03"), p("04"), p("10")]),
        ("reset_completed", "pro", vec![p("06"), "manual:m1".into()]),
        (
            "reset_completed",
            "plus",
            vec![p("06"), "manual:m1".into(), p("09")],
        ),
    ];
    for (kind, plan, expected) in cases {
        let api_order = ids_of(&api_records(&s, kind));
        let expected: Vec<String> = api_order
            .iter()
            .filter(|id| expected.contains(id))
            .cloned()
            .collect();
        let feed = atom(&s, &format!("?kind={kind}&plan={plan}"));
        let want: Vec<String> = expected
            .iter()
            .map(|id| format!("urn:uuid:{}", record_uuid(id)))
            .collect();
        assert_eq!(entry_ids(&feed), want, "atom kind={kind} plan={plan}");
        // The plan in words, as the pages and the messages say it.
        let words = match plan {
            "pro" => "Pro",
            "plus" => "Plus",
            _ => "Team",
        };
        assert!(
            feed["feed"]["title"]
                .as_str()
                .unwrap()
                .ends_with(&format!(" ({words})")),
            "{}",
            feed["feed"]["title"]
        );
        let (calendar, _) = ics(&s, &format!("?kind={kind}&plan={plan}"));
        let uids: BTreeSet<String> = events_by_uid(&calendar).into_keys().collect();
        let with_time: BTreeSet<String> = expected
            .iter()
            .filter(|id| !id.starts_with("op_"))
            .map(|id| record_uuid(id))
            .collect();
        assert_eq!(uids, with_time, "ics kind={kind} plan={plan}");
    }
}

#[test]
fn calendar_events_cover_each_schedule_window_including_25_and_23_hour_days() {
    let w = World::new();
    let s = open(&w);
    let (calendar, _) = ics(&s, "?kind=reset_scheduled");
    assert_eq!(calendar["calendar"]["VERSION"], "2.0");
    assert_eq!(
        calendar["calendar"]["PRODID"],
        "-//resetctl//Usage-limit resets//EN"
    );
    assert_eq!(
        calendar["calendar"]["X-WR-CALNAME"],
        "Scheduled usage-limit resets"
    );
    assert_eq!(calendar["calendar"]["REFRESH-INTERVAL"], "PT1H");
    assert_eq!(calendar["calendar"]["X-PUBLISHED-TTL"], "PT1H");
    let events = events_by_uid(&calendar);
    let schedules = api_records(&s, "reset_scheduled");
    let with_window: Vec<&Value> = schedules
        .iter()
        .filter(|r| !r["scheduleWindow"].is_null())
        .collect();
    assert_eq!(
        events.len(),
        with_window.len(),
        "one event per schedule with a window"
    );
    let mut hours = BTreeMap::new();
    for record in with_window {
        let id = record["id"].as_str().unwrap();
        let event = &events[&record_uuid(id)];
        let window = &record["scheduleWindow"];
        assert_eq!(event["start"], second(&window["startAt"]), "{id}");
        assert_eq!(event["end"], second(&window["endAt"]), "{id}");
        let status = if record["scheduleState"] == "fulfilled" {
            "CONFIRMED"
        } else {
            "TENTATIVE"
        };
        assert_eq!(event["status"], status, "{id}");
        assert_eq!(event["url"], record["source"]["url"], "{id}");
        assert_eq!(event["dtstamp"], "2026-11-20T10:00:00Z");
        assert_eq!(event["last_modified"], "2026-11-20T10:00:00Z");
        let description = event["description"].as_str().unwrap();
        for part in ["state", "precision", "basis"] {
            let field = format!("schedule{}{}", part[..1].to_uppercase(), &part[1..]);
            assert!(
                description.contains(&format!("{part}: {}", record[&field].as_str().unwrap())),
                "{id}: {description}"
            );
        }
        hours.insert(id.to_owned(), event.clone());
    }
    // The date-precision schedules: their civil day, 25 and 23 hours long.
    let day = &hours["2090000000000000003"];
    assert_eq!(
        (day["start"].as_str(), day["end"].as_str()),
        (Some("2026-11-01T07:00:00Z"), Some("2026-11-02T08:00:00Z"))
    );
    let spring = &hours["2090000000000000004"];
    assert_eq!(
        (spring["start"].as_str(), spring["end"].as_str()),
        (Some("2026-03-28T23:00:00Z"), Some("2026-03-29T22:00:00Z"))
    );
    // Completions are events at completedAt.
    let (calendar, _) = ics(&s, "?kind=reset_completed");
    let events = events_by_uid(&calendar);
    for record in api_records(&s, "reset_completed") {
        let event = &events[&record_uuid(record["id"].as_str().unwrap())];
        assert_eq!(event["start"], second(&record["completedAt"]));
        assert_eq!(event["status"], "CONFIRMED");
    }
}

#[test]
fn calendar_lines_are_crlf_and_folded_at_75_octets_never_inside_a_character() {
    let w = World::new();
    let s = open(&w);
    let (calendar, body) = ics(&s, "");
    assert!(body.ends_with(b"END:VCALENDAR\r\n"));
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    assert_eq!(
        lines.last(),
        Some(&&b""[..]),
        "the last line ends in CR-LF too"
    );
    let mut folded = 0;
    for line in &lines[..lines.len() - 1] {
        let line = line.strip_suffix(b"\r").expect("every line ends in CR-LF");
        assert!(!line.contains(&b'\r'), "a bare CR inside a line");
        assert!(
            line.len() <= 75,
            "{} octets: {}",
            line.len(),
            String::from_utf8_lossy(line)
        );
        assert!(
            std::str::from_utf8(line).is_ok(),
            "a fold split a character: {line:?}"
        );
        folded += usize::from(line.starts_with(b" "));
    }
    assert!(
        folded > 10,
        "the long text was folded ({folded} continuation lines)"
    );
    let long = records()
        .into_iter()
        .find(|r| r["id"] == "2090000000000000006")
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    let event = &events_by_uid(&calendar)[&record_uuid("2090000000000000006")];
    assert!(
        event["description"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{long}\n\n")),
        "the text, unfolded and unescaped: {}",
        event["description"]
    );
}

#[test]
fn alarm_adds_one_valarm_to_each_pending_schedule() {
    let w = World::new();
    let s = open(&w);
    let (plain, _) = ics(&s, "");
    assert!(plain["events"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["alarms"] == json!([])));
    let pending: BTreeSet<String> = api_records(&s, "all")
        .iter()
        .filter(|r| r["scheduleState"] == "pending" && !r["scheduleWindow"].is_null())
        .map(|r| record_uuid(r["id"].as_str().unwrap()))
        .collect();
    assert_eq!(pending.len(), 3);
    for minutes in [0, 15, 1440] {
        let (calendar, _) = ics(&s, &format!("?alarm={minutes}"));
        for (uid, event) in events_by_uid(&calendar) {
            let alarms = event["alarms"].as_array().unwrap();
            if pending.contains(&uid) {
                assert_eq!(alarms.len(), 1, "{event}");
                assert_eq!(alarms[0]["action"], "DISPLAY");
                assert_eq!(
                    alarms[0]["trigger_seconds"],
                    json!(-(minutes as f64) * 60.0)
                );
            } else {
                assert!(alarms.is_empty(), "only pending schedules get one: {event}");
            }
        }
    }
}

#[test]
fn strict_queries_are_422_on_both_feeds() {
    let w = World::new();
    let s = open(&w);
    let cases = [
        (ATOM, "?page=1", "unknown query parameter \"page\"; this endpoint accepts kind, plan"),
        (ATOM, "?alarm=5", "unknown query parameter \"alarm\"; this endpoint accepts kind, plan"),
        (ATOM, "?kind=all&kind=all", "query parameter \"kind\" is given more than once"),
        (ATOM, "?plan=pro&plan=plus", "query parameter \"plan\" is given more than once"),
        (ATOM, "?plan=Pro", "query parameter \"plan\" must be a plan id of 1 to 32 characters a-z, 0-9 or _ (such as plus or pro); got \"Pro\""),
        (ICS, "?pageSize=1", "unknown query parameter \"pageSize\"; this endpoint accepts kind, plan, alarm"),
        (ICS, "?alarm=5&alarm=5", "query parameter \"alarm\" is given more than once"),
        (ICS, "?alarm=1441", "query parameter \"alarm\" must be a whole number of minutes from 0 to 1440, without sign, leading zeros or spaces; got \"1441\""),
        (ICS, "?alarm=-1", "query parameter \"alarm\" must be a whole number of minutes from 0 to 1440, without sign, leading zeros or spaces; got \"-1\""),
        (ICS, "?kind=everything", "query parameter \"kind\" must be one of all, reset_scheduled, reset_completed; got \"everything\""),
    ];
    for (path, query, detail) in cases {
        let reply = s.get(&format!("{path}{query}"));
        assert_eq!(reply.status, 422, "{path}{query}: {}", reply.text());
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(
            reply.json(),
            json!({"ok": false, "error": "invalid_query", "detail": detail, "retryAfter": null}),
            "{path}{query}"
        );
    }
}

#[test]
fn before_the_first_snapshot_both_feeds_are_503() {
    let w = World::new();
    let s = Server::start(&w, &["--no-rate-limit"], &[]);
    for path in [ATOM, ICS] {
        let reply = s.get(path);
        assert_eq!(reply.status, 503, "{path}");
        assert_eq!(reply.json()["error"], "data_unavailable", "{path}");
        // A bad query is still a 422 first, as on the record endpoints.
        assert_eq!(s.get(&format!("{path}?x=1")).status, 422);
    }
}

#[test]
fn head_answers_the_headers_and_every_answer_carries_cors() {
    let w = World::new();
    let s = open(&w);
    for (path, content_type) in [
        (ATOM, "application/atom+xml; charset=utf-8"),
        (ICS, "text/calendar; charset=utf-8"),
    ] {
        let get = s.get(path);
        let head = s.request("HEAD", path, &[]);
        assert_eq!(head.status, 200, "{path}");
        assert_eq!(head.header("content-type"), Some(content_type));
        assert!(head.body.is_empty(), "HEAD has no body");
        assert_eq!(
            head.header("content-length"),
            get.header("content-length"),
            "{path}"
        );
        for reply in [&get, &head, &s.get(&format!("{path}?bad=1"))] {
            assert_eq!(
                reply.header("access-control-allow-origin"),
                Some("*"),
                "{path}"
            );
            assert!(reply
                .header("access-control-expose-headers")
                .is_some_and(|h| h.contains("X-RateLimit-Remaining")));
        }
        let preflight = s.request(
            "OPTIONS",
            path,
            &[
                ("Origin", "https://app.example"),
                ("Access-Control-Request-Method", "GET"),
            ],
        );
        assert_eq!(preflight.status, 204, "{path}");
        assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
        assert_eq!(s.request("POST", path, &[]).status, 405, "{path}");
    }
}

#[test]
fn both_feeds_are_counted_like_the_record_endpoints() {
    let w = World::new();
    let s = serve(&w, &["--rate-limit", "4/3600"]);
    let remaining = |reply: &Reply| reply.header("x-ratelimit-remaining").map(str::to_owned);
    assert_eq!(remaining(&s.get(ATOM)).as_deref(), Some("3"));
    assert_eq!(
        remaining(&s.get(&format!("{ICS}?alarm=5"))).as_deref(),
        Some("2")
    );
    assert_eq!(
        remaining(&s.get(&format!("{ATOM}?bad=1"))).as_deref(),
        Some("1"),
        "a 422 counts"
    );
    assert_eq!(
        remaining(&s.get("/openapi/v1/records")).as_deref(),
        Some("0"),
        "one shared quota"
    );
    for path in [ATOM, ICS] {
        let refused = s.get(path);
        assert_eq!(refused.status, 429, "{path}");
        assert_eq!(refused.json()["error"], "rate_limited");
        assert!(refused.header("retry-after").is_some());
    }
}
