//! One test per rule, each with its exact message.

use serde_json::{json, Value};

use super::validate_records;
use crate::model::Record;

fn schedule() -> Value {
    json!({
        "id": "2086189414292865249", "kind": "reset_scheduled", "resetType": "global",
        "announcedAt": "2026-08-08T20:34:50.000Z", "effectiveAt": "2026-08-10T07:00:00.000Z",
        "text": "Monday", "confidence": 0.92, "scope": {"plans": ["all"], "windows": ["weekly"]},
        "source": {"origin": "x", "postId": "2086189414292865249", "handle": "h", "url": "https://x.com/h/status/2086189414292865249"},
        "schedulePrecision": "date", "scheduleBasis": "explicit",
        "scheduleWindow": {"startAt": "2026-08-10T07:00:00.000Z", "endAt": "2026-08-11T07:00:00.000Z"},
        "scheduleState": "elapsed", "completedAt": null, "completionRecordId": null,
        "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

fn completion() -> Value {
    json!({
        "id": "2086972802457063486", "kind": "reset_completed", "resetType": "global",
        "announcedAt": "2026-08-11T00:27:44.000Z", "effectiveAt": null, "text": "done",
        "confidence": 0.97, "scope": {"plans": ["all"], "windows": ["unknown"]},
        "source": {"origin": "x", "postId": "2086972802457063486", "handle": "h", "url": "https://x.com/h/status/2086972802457063486"},
        "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
        "completedAt": "2026-08-11T00:27:44.000Z", "completionRecordId": null,
        "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

fn manual() -> Value {
    json!({
        "id": "manual:cl_1", "kind": "reset_completed", "resetType": "global",
        "announcedAt": null, "effectiveAt": "2026-08-13T04:35:00.000Z", "text": null,
        "confidence": null, "scope": null,
        "source": {"origin": "operator", "postId": null, "handle": null, "url": null},
        "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
        "completedAt": "2026-08-13T04:35:00.000Z", "completionRecordId": null,
        "fulfillmentOrigin": "manual", "relatedRecordIds": ["2086189414292865249"]
    })
}

/// Validates `records` (after the base ones stay valid) and returns the message.
fn message(records: Vec<Value>) -> String {
    let records: Vec<Record> = records
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    validate_records(&records)
        .map(|_| "ok".to_owned())
        .unwrap_or_else(|e| e.to_string())
}

fn with(mut base: Value, pointer: &str, value: Value) -> Value {
    *base
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer}")) = value;
    base
}

#[test]
fn the_base_records_are_valid() {
    assert_eq!(message(vec![schedule(), completion(), manual()]), "ok");
}

#[test]
fn duplicate_ids() {
    assert_eq!(
        message(vec![completion(), schedule(), completion()]),
        "record 2 (id \"2086972802457063486\"): id: duplicate id (an earlier record has the same id)"
    );
}

#[test]
fn id_schemes() {
    for id in [
        "abc",
        "op_",
        "manual:",
        "12a",
        "seed:",
        "123456789012345678901",
        "op_a b",
    ] {
        let r = with(completion(), "/id", json!(id));
        assert_eq!(
            message(vec![r]),
            format!("record 0 (id {id:?}): id: follows no id scheme (a numeric post id, op_…, or manual:…, optionally after seed:)")
        );
    }
    let op = json!({"origin": "operator", "postId": "op_0123456789abcdef01234567", "handle": null, "url": null});
    let r = with(
        with(
            completion(),
            "/id",
            json!("seed:op_0123456789abcdef01234567"),
        ),
        "/source",
        op,
    );
    assert_eq!(message(vec![r]), "ok");
}

#[test]
fn confidence_between_0_and_1() {
    assert_eq!(
        message(vec![with(completion(), "/confidence", json!(1.5))]),
        "record 0 (id \"2086972802457063486\"): confidence: must be between 0 and 1, got 1.5"
    );
    assert_eq!(
        message(vec![with(completion(), "/confidence", json!(-0.1))]),
        "record 0 (id \"2086972802457063486\"): confidence: must be between 0 and 1, got -0.1"
    );
    assert_eq!(
        message(vec![with(completion(), "/confidence", json!(1))]),
        "ok"
    );
}

#[test]
fn window_start_not_after_end() {
    let r = with(
        schedule(),
        "/scheduleWindow/startAt",
        json!("2026-08-12T00:00:00.000Z"),
    );
    assert_eq!(
        message(vec![r]),
        "record 0 (id \"2086189414292865249\"): scheduleWindow.startAt: must not be after endAt (2026-08-12T00:00:00.000Z > 2026-08-11T07:00:00.000Z)"
    );
}

#[test]
fn schedule_only_fields_are_null_on_completions() {
    let cases = [
        ("/schedulePrecision", json!("date"), "schedulePrecision"),
        ("/scheduleBasis", json!("explicit"), "scheduleBasis"),
        (
            "/scheduleWindow",
            json!({"startAt": "2026-08-10T07:00:00.000Z", "endAt": "2026-08-10T07:00:00.000Z"}),
            "scheduleWindow",
        ),
        ("/scheduleState", json!("pending"), "scheduleState"),
        ("/completionRecordId", json!("1"), "completionRecordId"),
    ];
    for (pointer, value, field) in cases {
        assert_eq!(
            message(vec![with(completion(), pointer, value)]),
            format!("record 0 (id \"2086972802457063486\"): {field}: must be null on a reset_completed record")
        );
    }
}

#[test]
fn manual_completion_shape() {
    let id = "record 0 (id \"manual:cl_1\")";
    let cases = [
        (
            "/fulfillmentOrigin",
            json!("auto"),
            "fulfillmentOrigin: must be manual on a manual completion (section 2.5)",
        ),
        (
            "/announcedAt",
            json!("2026-08-13T04:35:00.000Z"),
            "announcedAt: must be null on a manual completion (section 2.5)",
        ),
        (
            "/text",
            json!("x"),
            "text: must be null on a manual completion (section 2.5)",
        ),
        (
            "/confidence",
            json!(0.5),
            "confidence: must be null on a manual completion (section 2.5)",
        ),
        (
            "/effectiveAt",
            json!(null),
            "effectiveAt: must not be null on a manual completion (section 2.5)",
        ),
        (
            "/completedAt",
            json!(null),
            "completedAt: must not be null on a manual completion (section 2.5)",
        ),
        (
            "/source/postId",
            json!("1"),
            "source.postId: must be null on a manual completion (section 2.5)",
        ),
    ];
    for (pointer, value, problem) in cases {
        assert_eq!(
            message(vec![with(manual(), pointer, value)]),
            format!("{id}: {problem}")
        );
    }
    let as_x = with(
        manual(),
        "/source",
        json!({"origin": "x", "postId": "1", "handle": null, "url": null}),
    );
    assert_eq!(
        message(vec![as_x]),
        format!("{id}: source.origin: must be operator on a manual completion (section 2.5)")
    );
    let as_schedule = with(
        with(schedule(), "/id", json!("manual:x")),
        "/source",
        json!({"origin": "operator", "postId": null, "handle": null, "url": null}),
    );
    assert_eq!(
        message(vec![as_schedule]),
        "record 0 (id \"manual:x\"): kind: a manual: record must be a reset_completed record"
    );
}

#[test]
fn source_rules() {
    let id = "record 0 (id \"2086972802457063486\")";
    let no_post = with(completion(), "/source/postId", json!(null));
    assert_eq!(
        message(vec![no_post]),
        format!("{id}: source.postId: must not be null when source.origin is x")
    );
    let other_post = with(completion(), "/source/postId", json!("99"));
    assert_eq!(
        message(vec![other_post]),
        format!("{id}: source.postId: must equal the numeric id \"2086972802457063486\" of a source-post record")
    );
    let op_with_handle = with(completion(), "/source/origin", json!("operator"));
    assert_eq!(
        message(vec![op_with_handle]),
        format!("{id}: source.handle: must be null when source.origin is operator")
    );
    let op_with_url = with(
        with(completion(), "/source/origin", json!("operator")),
        "/source/handle",
        json!(null),
    );
    assert_eq!(
        message(vec![op_with_url]),
        format!("{id}: source.url: must be null when source.origin is operator")
    );
    let op_as_x = with(completion(), "/id", json!("op_abc"));
    assert_eq!(
        message(vec![op_as_x]),
        "record 0 (id \"op_abc\"): source.origin: must be operator on an op_ record"
    );
}

#[test]
fn schedule_fields_and_states() {
    let id = "record 0 (id \"2086189414292865249\")";
    for field in ["schedulePrecision", "scheduleBasis", "scheduleState"] {
        let r = with(schedule(), &format!("/{field}"), json!(null));
        assert_eq!(
            message(vec![r]),
            format!("{id}: {field}: must not be null on a reset_scheduled record")
        );
    }
    let fulfilled = with(schedule(), "/scheduleState", json!("fulfilled"));
    assert_eq!(
        message(vec![fulfilled.clone()]),
        format!("{id}: completedAt: must not be null on a fulfilled schedule")
    );
    let fulfilled = with(fulfilled, "/completedAt", json!("2026-08-11T00:27:44.000Z"));
    assert_eq!(
        message(vec![fulfilled.clone()]),
        format!("{id}: fulfillmentOrigin: must not be null on a fulfilled schedule")
    );
    assert_eq!(
        message(vec![with(fulfilled, "/fulfillmentOrigin", json!("link"))]),
        "ok"
    );

    let pending = with(schedule(), "/scheduleState", json!("pending"));
    for (field, value) in [
        ("completedAt", json!("2026-08-11T00:27:44.000Z")),
        ("completionRecordId", json!("1")),
        ("fulfillmentOrigin", json!("auto")),
    ] {
        let r = with(pending.clone(), &format!("/{field}"), value);
        assert_eq!(
            message(vec![r]),
            format!("{id}: {field}: must be null on a pending schedule")
        );
    }
    for state in ["pending", "elapsed"] {
        let r = with(
            with(schedule(), "/scheduleState", json!(state)),
            "/scheduleWindow",
            json!(null),
        );
        assert_eq!(
            message(vec![r]),
            format!("{id}: scheduleWindow: must not be null on a {state} schedule")
        );
    }
    let unknown = with(
        with(schedule(), "/scheduleState", json!("unknown")),
        "/scheduleWindow",
        json!(null),
    );
    assert_eq!(message(vec![unknown]), "ok");
}

#[test]
fn related_ids_are_non_empty_strings() {
    let r = with(manual(), "/relatedRecordIds", json!(["1", ""]));
    assert_eq!(
        message(vec![r]),
        "record 0 (id \"manual:cl_1\"): relatedRecordIds: must not contain an empty id"
    );
}
