//! The public status feed: each real sample converted and checked field by
//! field against expectations written by hand from docs/spec/upstream-feed.md, the
//! rules no sample exercises (on small synthetic feeds), hostile feeds, and
//! sync → serve end to end.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{fixture, World};

/// `resetctl --now NOW convert FILE`: records by id, and the stderr report.
fn convert_file(path: &std::path::Path, now: &str) -> (BTreeMap<String, Value>, String) {
    let w = World::new();
    let run = w
        .run(&["--now", now, "convert", path.to_str().unwrap()])
        .success();
    let doc = run.json();
    let records = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r.clone()))
        .collect();
    (records, run.stderr)
}

fn convert_sample(name: &str, now: &str) -> BTreeMap<String, Value> {
    convert_file(&fixture(&format!("feed/{name}")), now).0
}

fn convert_value(feed: &Value, now: &str) -> (BTreeMap<String, Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("feed.json");
    std::fs::write(&path, feed.to_string()).unwrap();
    convert_file(&path, now)
}

fn x_source(id: &str) -> Value {
    json!({"origin": "x", "postId": id, "handle": "thsottiaux", "url": format!("https://x.com/thsottiaux/status/{id}")})
}

fn completion(
    id: &str,
    announced: &str,
    confidence: f64,
    plans: &[&str],
    windows: &[&str],
    text: Value,
) -> Value {
    json!({
        "id": id, "kind": "reset_completed", "resetType": "global",
        "announcedAt": announced, "effectiveAt": null, "text": text, "confidence": confidence,
        "scope": {"plans": plans, "windows": windows}, "source": x_source(id),
        "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
        "completedAt": announced, "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

/// A legacy (V1a) schedule: no precision or basis, a UTC-noon effectiveAt → datetime, explicit.
fn legacy_schedule(
    id: &str,
    announced: &str,
    effective: &str,
    confidence: f64,
    state: &str,
) -> Value {
    json!({
        "id": id, "kind": "reset_scheduled", "resetType": "global",
        "announcedAt": announced, "effectiveAt": effective, "text": null, "confidence": confidence,
        "scope": {"plans": ["all"], "windows": ["unknown"]}, "source": x_source(id),
        "schedulePrecision": "datetime", "scheduleBasis": "explicit",
        "scheduleWindow": {"startAt": effective, "endAt": effective}, "scheduleState": state,
        "completedAt": null, "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

#[test]
fn v1a_2026_07_29_one_completion_and_the_uncertain_event_dropped() {
    let records = convert_sample(
        "codexrunway-status-2026-07-29.json",
        "2026-07-29T12:00:45.124Z",
    );
    assert_eq!(records.len(), 1, "the `uncertain` event yields no record");
    assert_eq!(
        records["2081940052154933696"],
        completion(
            "2081940052154933696",
            "2026-07-28T03:09:23.000Z",
            1.0,
            &["business", "plus", "pro", "team"],
            &["unknown"],
            Value::Null
        )
    );
}

fn v1a_0731_expected(state_of_0801: &str) -> BTreeMap<String, Value> {
    let noon = "2026-08-01T12:00:00.000Z";
    [
        legacy_schedule(
            "2083287127865885060",
            "2026-07-31T20:22:11.000Z",
            noon,
            0.7,
            state_of_0801,
        ),
        legacy_schedule(
            "2082896652680167851",
            "2026-07-30T18:30:35.000Z",
            noon,
            0.7,
            state_of_0801,
        ),
        legacy_schedule(
            "2082606956368609353",
            "2026-07-29T23:19:26.000Z",
            noon,
            0.7,
            state_of_0801,
        ),
        legacy_schedule(
            "2082341416681001277",
            "2026-07-29T05:44:16.000Z",
            "2026-07-31T12:00:00.000Z",
            0.9,
            "elapsed",
        ),
        completion(
            "2082340992871760182",
            "2026-07-29T05:42:35.000Z",
            0.85,
            &["all"],
            &["unknown"],
            Value::Null,
        ),
        completion(
            "2082317452755751098",
            "2026-07-29T04:09:02.000Z",
            0.95,
            &["all"],
            &["weekly"],
            Value::Null,
        ),
    ]
    .into_iter()
    .map(|r| (r["id"].as_str().unwrap().to_owned(), r))
    .collect()
}

#[test]
fn v1a_2026_07_31_schedules_turn_elapsed_when_their_window_ends() {
    // At the feed's own time the 08-01 schedules are pending, the 07-31 one elapsed;
    // `limit_increase` yields nothing.
    let at_generation = convert_sample(
        "codexrunway-status-2026-07-31.json",
        "2026-07-31T23:16:07.963Z",
    );
    assert_eq!(at_generation, v1a_0731_expected("pending"));
    // Pending up to and including the window's end, elapsed one millisecond later.
    let at_end = convert_sample(
        "codexrunway-status-2026-07-31.json",
        "2026-08-01T12:00:00.000Z",
    );
    assert_eq!(at_end, v1a_0731_expected("pending"));
    let after = convert_sample(
        "codexrunway-status-2026-07-31.json",
        "2026-08-01T12:00:00.001Z",
    );
    assert_eq!(after, v1a_0731_expected("elapsed"));
}

#[test]
fn v1a_2026_08_01_degraded_feed_keeps_its_events_and_times() {
    let records = convert_sample(
        "codexrunway-status-2026-08-01.json",
        "2026-08-01T00:13:43.552Z",
    );
    assert_eq!(records, v1a_0731_expected("pending"));
    let w = World::new();
    let doc = w
        .run(&[
            "--now",
            "2026-08-01T00:13:43.552Z",
            "convert",
            fixture("feed/codexrunway-status-2026-08-01.json")
                .to_str()
                .unwrap(),
        ])
        .success()
        .json();
    assert_eq!(doc["generatedAt"], "2026-08-01T00:13:43.552Z");
    assert_eq!(doc["lastSuccessfulCheckAt"], "2026-07-31T23:16:07.963Z");
}

#[test]
fn v1b_live_fixture_carries_text() {
    let records = convert_sample(
        "fixture-live-status-2026-08-01.json",
        "2026-08-01T09:25:19.679Z",
    );
    assert_eq!(records.len(), 1);
    assert_eq!(
        records["2083395449814229287"],
        completion(
            "2083395449814229287",
            "2026-08-01T03:32:37.000Z",
            0.99,
            &["all"],
            &["unknown"],
            json!("I have reset usage limits for Codex and ChatGPT Work.")
        )
    );
}

#[test]
fn v1c_v1d_timeline_fixture_fulfilled_manual_suppressed_banked_heatmap() {
    let records = convert_sample(
        "fixture-official-timeline-2026-08-13.json",
        "2026-08-13T10:29:13.809Z",
    );
    let manual_id = "manual:cl_abd57edf90eb450aa54bd48c010854af";
    assert_eq!(
        records.keys().cloned().collect::<Vec<_>>(),
        [
            "2086189414292865249",
            "2086972802457063486",
            "2087706104814023111",
            manual_id
        ],
        "banked_reset 2086972802457063400 gives no record; the heatmap source is already known"
    );
    let mut done = completion(
        "2086972802457063486",
        "2026-08-11T00:27:44.000Z",
        0.97,
        &["all"],
        &["unknown"],
        json!("Hi.\n\nIt is done."),
    );
    done["relatedRecordIds"] = json!(["2086189414292865249"]);
    assert_eq!(records["2086972802457063486"], done);
    // Suppressed but fulfilled: it stays. The entry's own window wins; no origin given → auto.
    assert_eq!(
        records["2086189414292865249"],
        json!({
            "id": "2086189414292865249", "kind": "reset_scheduled", "resetType": "global",
            "announcedAt": "2026-08-08T20:34:50.000Z", "effectiveAt": "2026-08-10T07:00:00.000Z",
            "text": "I'll do another performative reset on Monday", "confidence": 0.92,
            "scope": {"plans": ["all"], "windows": ["weekly"]}, "source": x_source("2086189414292865249"),
            "schedulePrecision": "date", "scheduleBasis": "explicit",
            "scheduleWindow": {"startAt": "2026-08-10T07:00:00.000Z", "endAt": "2026-08-11T07:00:00.000Z"},
            "scheduleState": "fulfilled", "completedAt": "2026-08-11T00:27:44.000Z",
            "completionRecordId": "2086972802457063486", "fulfillmentOrigin": "auto", "relatedRecordIds": []
        })
    );
    assert_eq!(
        records["2087706104814023111"],
        json!({
            "id": "2087706104814023111", "kind": "reset_scheduled", "resetType": "global",
            "announcedAt": "2026-08-13T01:01:37.000Z", "effectiveAt": "2026-08-13T02:01:37.000Z",
            "text": "Enjoy a nice reset everyone. Landing in the next hour or so.", "confidence": 0.97,
            "scope": {"plans": ["all"], "windows": ["unknown"]}, "source": x_source("2087706104814023111"),
            "schedulePrecision": "datetime", "scheduleBasis": "explicit",
            "scheduleWindow": {"startAt": "2026-08-13T02:01:37.000Z", "endAt": "2026-08-13T02:01:37.000Z"},
            "scheduleState": "fulfilled", "completedAt": "2026-08-13T04:35:00.000Z",
            "completionRecordId": manual_id, "fulfillmentOrigin": "manual", "relatedRecordIds": []
        })
    );
    assert_eq!(
        records[manual_id],
        json!({
            "id": manual_id, "kind": "reset_completed", "resetType": "global",
            "announcedAt": null, "effectiveAt": "2026-08-13T04:35:00.000Z", "text": null, "confidence": null, "scope": null,
            "source": {"origin": "operator", "postId": null, "handle": null, "url": null},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
            "completedAt": "2026-08-13T04:35:00.000Z", "completionRecordId": null,
            "fulfillmentOrigin": "manual", "relatedRecordIds": ["2087706104814023111"]
        })
    );
}

fn event(kind: &str, id: &str, effective: Option<&str>) -> Value {
    let op = id.starts_with("op_");
    json!({
        "kind": kind, "announcedAt": "2026-10-30T10:00:00.000Z", "effectiveAt": effective,
        "scope": {"plans": ["all"], "windows": ["unknown"]},
        "source": if op { json!({"postId": id, "origin": "operator"}) } else { json!({"handle": "h", "postId": id, "url": format!("https://x.com/h/status/{id}")}) },
        "confidence": 0.9, "rationale": "derived copy"
    })
}

fn feed(events: Vec<Value>, extra: Value) -> Value {
    let mut doc = json!({
        "schemaVersion": 1, "generatedAt": "2026-10-31T00:00:00.000Z", "lastSuccessfulCheckAt": null,
        "monitor": {"status": "ok", "errorCode": null}, "events": events
    });
    for (k, v) in extra.as_object().unwrap() {
        doc[k] = v.clone();
    }
    doc
}

#[test]
fn v1d_v1e_rules_on_a_synthetic_feed() {
    let op_done = "op_0123456789abcdef01234567";
    let op_plan = "op_89abcdef0123456789abcdef";
    let mut banked = event("reset_scheduled", "301", Some("2026-11-01T12:00:00.000Z"));
    banked["resetType"] = json!("banked");
    banked["schedulePrecision"] = json!("date");
    banked["scheduleBasis"] = json!("contextual_inference");
    let mut op_schedule = event("reset_scheduled", op_plan, Some("2026-11-05T18:00:00.000Z"));
    op_schedule["schedulePrecision"] = json!("datetime");
    op_schedule["scheduleGraceHours"] = json!(3);
    let mut s306 = event("reset_scheduled", "306", Some("2026-10-25T10:00:00.000Z"));
    s306["resetType"] = json!("global");
    let mut s307 = event("reset_scheduled", "307", Some("2026-10-25T11:00:00.000Z"));
    s307["resetType"] = json!("banked");
    let doc = feed(
        vec![
            event("reset_completed", op_done, Some("2026-10-30T09:00:00.000Z")),
            // Legacy: exactly midnight in Los Angeles (PDT) → a date schedule.
            event("reset_scheduled", "300", Some("2026-10-29T07:00:00.000Z")),
            event("reset_completed", "302", None),
            event("limit_increase", "303", None),
            event("reset_completed", "304", None),
            // A copy of 300 with more facts (text) later in the list: the most complete copy wins.
            {
                let mut e = event("reset_scheduled", "300", Some("2026-10-29T07:00:00.000Z"));
                e["text"] = json!("Thursday");
                e
            },
        ],
        json!({
            "graceSchedules": [op_schedule],
            "resetTimeline": {
                "nextSchedule": {"event": banked, "window": null},
                "fulfilledSchedules": [{
                    "schedule": event("reset_scheduled", "305", Some("2026-10-20T16:00:00.000Z")),
                    "window": {"startAt": "2026-10-20T15:00:00.000Z", "endAt": "2026-10-20T17:00:00.000Z", "precision": "datetime"},
                    "completionPostId": "302", "completedAt": "2026-10-20T16:30:00.000Z",
                    "visibleUntil": "2026-10-30T16:30:00.000Z", "fulfillmentOrigin": "link"
                }],
                "manualCompletions": [{
                    "id": "manual:cl_x", "completedAt": "2026-10-25T12:00:00.000Z", "visibleUntil": "2026-11-04T12:00:00.000Z",
                    "representativePostId": "306", "schedulePostIds": ["306", "307"],
                    "schedules": [s306, s307],
                    "fulfillmentOrigin": "manual"
                }],
                "suppressedPostIds": ["304", "308"],
                "recentNonCompletedPostId": null
            },
            "heatmap": {"timezone": "UTC", "weeks": 53, "total": 2, "days": [{"date": "2026-10-10", "count": 2, "level": 2, "sources": [
                {"postId": "309", "kind": "reset_completed", "announcedAt": "2026-10-10T08:00:00.000Z", "effectiveAt": "2026-10-10T08:05:00.000Z", "url": "https://x.com/h/status/309", "text": "reset"},
                {"postId": "302", "kind": "reset_completed", "announcedAt": "2026-10-10T08:00:00.000Z", "effectiveAt": null, "url": "https://x.com/h/status/302", "text": "dup"},
                {"postId": "308", "kind": "reset_completed", "announcedAt": "2026-10-10T08:00:00.000Z", "effectiveAt": null, "url": "https://x.com/h/status/308", "text": "suppressed"}
            ]}]}
        }),
    );
    let (r, report) = convert_value(&doc, "2026-10-31T00:00:00.000Z");
    assert_eq!(report, "", "nothing skipped");
    assert_eq!(
        r.keys().cloned().collect::<Vec<_>>(),
        [
            "300",
            "301",
            "302",
            "305",
            "306",
            "307",
            "309",
            "manual:cl_x",
            op_done,
            op_plan
        ],
        "303 (limit_increase) and 304, 308 (suppressed) give no record"
    );
    // Operator completion: origin operator, no handle or url; completedAt falls back correctly.
    assert_eq!(
        r[op_done]["source"],
        json!({"origin": "operator", "postId": op_done, "handle": null, "url": null})
    );
    assert_eq!(r[op_done]["completedAt"], "2026-10-30T09:00:00.000Z");
    // Legacy LA-midnight schedule: date precision, the civil day, the most complete copy.
    assert_eq!(r["300"]["schedulePrecision"], "date");
    assert_eq!(r["300"]["scheduleBasis"], "explicit");
    assert_eq!(
        r["300"]["scheduleWindow"],
        json!({"startAt": "2026-10-29T07:00:00.000Z", "endAt": "2026-10-30T07:00:00.000Z"})
    );
    assert_eq!(r["300"]["scheduleState"], "elapsed");
    assert_eq!(r["300"]["text"], "Thursday");
    // nextSchedule {event, window: null}: a date window across the end of daylight saving (25 hours).
    assert_eq!(
        r["301"]["scheduleWindow"],
        json!({"startAt": "2026-11-01T07:00:00.000Z", "endAt": "2026-11-02T08:00:00.000Z"})
    );
    assert_eq!(r["301"]["scheduleState"], "pending");
    assert_eq!(r["301"]["resetType"], "banked");
    assert_eq!(r["301"]["scheduleBasis"], "contextual_inference");
    // Grace schedule from an operator.
    assert_eq!(r[op_plan]["scheduleState"], "pending");
    assert_eq!(r[op_plan]["source"]["origin"], "operator");
    // fulfilledSchedules with origin link, linked both ways.
    assert_eq!(r["305"]["scheduleState"], "fulfilled");
    assert_eq!(r["305"]["fulfillmentOrigin"], "link");
    assert_eq!(r["305"]["completionRecordId"], "302");
    assert_eq!(
        r["305"]["scheduleWindow"],
        json!({"startAt": "2026-10-20T15:00:00.000Z", "endAt": "2026-10-20T17:00:00.000Z"})
    );
    assert_eq!(r["302"]["relatedRecordIds"], json!(["305"]));
    assert_eq!(
        r["302"]["completedAt"], "2026-10-30T10:00:00.000Z",
        "effectiveAt null → announcedAt"
    );
    // A manual completion of a global and a banked schedule.
    assert_eq!(r["manual:cl_x"]["resetType"], "global_and_banked");
    assert_eq!(r["manual:cl_x"]["relatedRecordIds"], json!(["306", "307"]));
    for id in ["306", "307"] {
        assert_eq!(r[id]["scheduleState"], "fulfilled");
        assert_eq!(r[id]["completionRecordId"], "manual:cl_x");
        assert_eq!(r[id]["fulfillmentOrigin"], "manual");
    }
    // Heatmap-only history: confidence and scope null, handle from the URL.
    assert_eq!(
        r["309"],
        json!({
            "id": "309", "kind": "reset_completed", "resetType": "global",
            "announcedAt": "2026-10-10T08:00:00.000Z", "effectiveAt": "2026-10-10T08:05:00.000Z", "text": "reset",
            "confidence": null, "scope": null, "source": {"origin": "x", "postId": "309", "handle": "h", "url": "https://x.com/h/status/309"},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
            "completedAt": "2026-10-10T08:05:00.000Z", "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
        })
    );
}

#[test]
fn unconvertible_items_are_reported_and_skipped_the_rest_publish() {
    let mut no_source = event("reset_completed", "1", None);
    no_source.as_object_mut().unwrap().remove("source");
    let mut bad_type = event("reset_completed", "2", None);
    bad_type["resetType"] = json!("partial");
    let doc = feed(
        vec![
            event("reset_maybe", "10", None),
            event("reset_scheduled", "11", None),
            event("reset_completed", "abc", None),
            no_source,
            bad_type,
            event("reset_completed", "12", None),
            {
                let mut e = event("reset_completed", "13", None);
                e["confidence"] = json!(3);
                e
            },
        ],
        json!({}),
    );
    let (records, report) = convert_value(&doc, "2026-10-31T00:00:00.000Z");
    assert_eq!(records.keys().cloned().collect::<Vec<_>>(), ["12"]);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(
        lines[0],
        "resetctl: skipped events[3]: unreadable event: missing field `source`"
    );
    assert_eq!(
        lines[1],
        "resetctl: skipped events[0] (post 10): unknown event kind \"reset_maybe\""
    );
    assert_eq!(
        lines[2],
        "resetctl: skipped events[1] (post 11): a schedule with no effectiveAt and no window"
    );
    assert_eq!(lines[3], "resetctl: skipped events[2] (post abc): post id \"abc\" follows no known id scheme (numeric or op_…)");
    assert_eq!(
        lines[4],
        "resetctl: skipped events[4] (post 2): unknown resetType \"partial\""
    );
    assert_eq!(
        lines[5],
        "resetctl: skipped events[6] (post 13): confidence: must be between 0 and 1, got 3"
    );
    assert_eq!(lines.len(), 6);
}

#[test]
fn hostile_documents_are_refused_whole_or_handled_never_a_panic() {
    let w = World::new();
    let write = |name: &str, bytes: &[u8]| {
        let p = w.path(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_owned()
    };
    // Deeply nested junk: refused whole with a clear error.
    let deep = format!(
        "{{\"schemaVersion\": 1, \"events\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let run = w
        .run(&["convert", &write("deep.json", deep.as_bytes())])
        .code(65);
    assert!(
        run.stderr
            .contains("not valid JSON: recursion limit exceeded"),
        "{}",
        run.stderr
    );
    let deep_top = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let run = w
        .run(&["convert", &write("deep-top.json", deep_top.as_bytes())])
        .code(65);
    assert!(
        run.stderr
            .contains("not valid JSON: recursion limit exceeded")
            || run.stderr.contains("(document): is not a JSON object"),
        "{}",
        run.stderr
    );
    // Invalid UTF-8.
    let run = w
        .run(&[
            "convert",
            &write(
                "utf8.json",
                b"{\"schemaVersion\":1,\"events\":[\"\xff\xfe\"]}",
            ),
        ])
        .code(65);
    assert!(run.stderr.contains("not valid JSON"), "{}", run.stderr);
    // Neither kind of document.
    let run = w
        .run(&["convert", &write("other.json", b"{\"items\": []}")])
        .code(65);
    assert!(
        run.stderr
            .contains("is neither a records document (with `records`) nor the public status feed"),
        "{}",
        run.stderr
    );
    // A future schema version.
    let run = w
        .run(&[
            "convert",
            &write(
                "v2.json",
                br#"{"schemaVersion": 2, "generatedAt": "2026-10-31T00:00:00.000Z", "events": []}"#,
            ),
        ])
        .code(65);
    assert!(
        run.stderr
            .contains("schemaVersion: unsupported version 2 (only 1 is known)"),
        "{}",
        run.stderr
    );
    // A bad top-level field.
    let run = w
        .run(&[
            "convert",
            &write(
                "gen.json",
                br#"{"schemaVersion": 1, "generatedAt": "yesterday", "events": []}"#,
            ),
        ])
        .code(65);
    assert!(
        run.stderr.contains("generatedAt: expected a UTC timestamp"),
        "{}",
        run.stderr
    );
    // 10,000 events, many duplicates and unknown kinds: converted, duplicates collapsed.
    let events: Vec<Value> = (0..10_000)
        .map(|i| match i % 4 {
            0 => event("reset_completed", &(1_000_000 + i / 2).to_string(), None),
            1 => event("reset_completed", &(1_000_000 + i / 2).to_string(), None),
            2 => event("mystery", &(2_000_000 + i).to_string(), None),
            _ => event(
                "reset_scheduled",
                &(3_000_000 + i).to_string(),
                Some("2026-11-10T12:00:00.000Z"),
            ),
        })
        .collect();
    let big = feed(events, json!({}));
    let started = std::time::Instant::now();
    let run = w
        .run(&[
            "--now",
            "2026-10-31T00:00:00.000Z",
            "convert",
            &write("big.json", big.to_string().as_bytes()),
        ])
        .success();
    eprintln!("10,000-event feed converted in {:?}", started.elapsed());
    let records = run.json()["records"].as_array().unwrap().len();
    assert_eq!(
        records,
        2500 + 2500,
        "2,500 distinct completions and 2,500 schedules"
    );
    assert_eq!(
        run.stderr
            .lines()
            .filter(|l| l.contains("unknown event kind \"mystery\""))
            .count(),
        2500
    );
}

#[test]
fn sync_serve_the_public_feed_end_to_end() {
    let base = std::fs::read_to_string(fixture("feed/codexrunway-status-2026-07-31.json")).unwrap();
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&base, "\"f1\"");
    let w = World::new();
    let sync = |now: &str| {
        w.run(&[
            "--now",
            now,
            "sync",
            "--upstream",
            &up.url("/api/status.json"),
            "--once",
        ])
    };
    assert!(sync("2026-07-31T23:20:00.000Z")
        .success()
        .stdout
        .starts_with("published snapshot 1 (6 records)"));
    let s = Server::start(
        &w,
        &["--no-rate-limit", "--now", "2026-07-31T23:20:00.000Z"],
        &[],
    );
    let all = s.get("/openapi/v1/records").json();
    assert_eq!(all["meta"]["generatedAt"], "2026-07-31T23:16:07.963Z");
    assert_eq!(
        all["meta"]["lastSuccessfulCheckAt"],
        "2026-07-31T23:16:07.963Z"
    );
    assert_eq!(
        all["meta"]["dataSource"]["upstreamGeneratedAt"],
        "2026-07-31T23:16:07.963Z"
    );
    assert_eq!(all["meta"]["dataSource"]["status"], "ok");
    // Pending schedules first, soonest window first, then id ascending.
    let ids: Vec<&str> = all["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "2082606956368609353",
            "2082896652680167851",
            "2083287127865885060",
            "2082341416681001277",
            "2082340992871760182",
            "2082317452755751098"
        ]
    );
    assert_eq!(all["data"]["items"][0]["scheduleState"], "pending");

    // The feed is unchanged (304) but the window ends: states are re-derived and published.
    let run = sync("2026-08-01T12:00:00.001Z").success();
    assert!(
        run.stdout.starts_with("published snapshot 2 (6 records)"),
        "{}",
        run.stdout
    );
    let after = s
        .wait_for("/openapi/v1/records/latest", Duration::from_secs(5), |r| {
            r.json()["data"]["scheduleState"] == "elapsed"
        })
        .json();
    assert_eq!(
        after["data"]["id"], "2083287127865885060",
        "no pending left: newest announcement first"
    );
    // Nothing changed since: nothing published.
    assert!(sync("2026-08-01T12:05:00.000Z")
        .success()
        .stdout
        .contains("not modified (304)"));
    assert_eq!(
        w.run(&["snapshots", "list", "--json"])
            .success()
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // A later feed fulfils a schedule: it leaves kind=all, stays under reset_scheduled.
    let mut later: Value = serde_json::from_str(&base).unwrap();
    later["generatedAt"] = json!("2026-08-01T13:00:00.000Z");
    later["resetTimeline"] = json!({"fulfilledSchedules": [{
        "schedule": later["events"][0].clone(),
        "completionPostId": "2082340992871760182",
        "completedAt": "2026-08-01T12:30:00.000Z", "visibleUntil": "2026-08-11T12:30:00.000Z"
    }]});
    later["monitor"] = json!({"status": "degraded", "errorCode": "request_failed"});
    up.serve(&later.to_string(), "\"f2\"");
    sync("2026-08-01T13:00:00.000Z").success();
    let all = s
        .wait_for("/openapi/v1/records", Duration::from_secs(5), |r| {
            r.json()["meta"]["generatedAt"] == "2026-08-01T13:00:00.000Z"
        })
        .json();
    let ids: Vec<&str> = all["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        !ids.contains(&"2083287127865885060"),
        "fulfilled: out of kind=all"
    );
    let scheduled = s.get("/openapi/v1/records?kind=reset_scheduled").json();
    let fulfilled = scheduled["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "2083287127865885060")
        .unwrap()
        .clone();
    assert_eq!(fulfilled["scheduleState"], "fulfilled");
    assert_eq!(fulfilled["completionRecordId"], "2082340992871760182");
    let completion = s.get("/openapi/v1/records?kind=reset_completed").json();
    let linked = completion["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "2082340992871760182")
        .unwrap()
        .clone();
    assert_eq!(linked["relatedRecordIds"], json!(["2083287127865885060"]));
    // The feed's own monitor shows in status, apart from the sync status.
    let status = w
        .run(&["--now", "2026-08-01T13:00:00.000Z", "status"])
        .success()
        .stdout;
    assert!(
        status.contains("sync:      ok (the cache is fresh)"),
        "{status}"
    );
    assert!(
        status.contains("  feed monitor:    degraded (request_failed)\n"),
        "{status}"
    );
}

#[test]
fn the_public_preset_fills_the_source_settings() {
    // --check resolves and prints the settings without fetching (no network is touched).
    let w = World::new();
    let out = w
        .run(&["sync", "--upstream", "public", "--check"])
        .success()
        .json();
    assert_eq!(
        out["source"],
        json!({"sourceId": "didcodexreset", "name": "Did Codex Reset", "url": "https://didcodexreset.com/api/status.json",
               "pageUrl": "https://didcodexreset.com/", "intervalMinutes": 60, "maxAgeMinutes": 180})
    );
    assert!(
        !w.data_dir().join("sync-state.json").exists(),
        "--check writes nothing"
    );
    let custom = w
        .run(&[
            "sync",
            "--upstream",
            "public",
            "--source-name",
            "Mirror",
            "--interval-minutes",
            "10",
            "--check",
        ])
        .success()
        .json();
    assert_eq!(custom["source"]["name"], "Mirror");
    assert_eq!(custom["source"]["maxAgeMinutes"], 30);
    assert_eq!(
        custom["fetch"],
        json!({"connectTimeoutSeconds": 10.0, "timeoutSeconds": 30.0, "maxBodyBytes": 16777216, "maxRedirects": 5})
    );
}
