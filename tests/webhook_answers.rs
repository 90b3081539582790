//! What a receiver's answer means: a refusal in the body of a 2xx answer
//! (Feishu's `code`, Slack's and Telegram's `ok: false`, Bark's `code`) is
//! a failure, retried and logged with the receiver's own reason; the
//! standard format reads no body. Receivers on loopback answer as each
//! service documents (src/webhook/send.rs names the documents).

use crate::util::receiver::{Answer, Receiver};
use crate::util::World;
use crate::webhooks::{add, add_standard, deliver_at, schedule};

const T0: &str = "2026-11-20T10:00:00.000Z";
const A: &str = "2090000000000000001";

const FEISHU: &str = "/open-apis/bot/v2/hook/abc";
const SLACK: &str = "/services/T0/B0/X";
const TELEGRAM: &str = "/bot1:A/sendMessage";
const BARK: &str = "/DeviceKey123";
const STANDARD: &str = "/std";

/// The lines of `webhook deliveries ID`, oldest first.
pub(crate) fn deliveries(w: &World, id: &str) -> Vec<String> {
    w.run(&["webhook", "deliveries", id])
        .success()
        .stdout
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What the line of one attempt says after its message id: the attempt's
/// number, its outcome and the answer (without the next retry's time).
fn said(line: &str) -> String {
    let after = line.split("  attempt ").nth(1).unwrap_or(line);
    let answer = after.split("  next retry ").next().unwrap_or(after);
    format!("attempt {answer}")
}

#[test]
fn a_refusal_in_the_body_is_a_failure_retried_and_logged_in_the_receivers_words() {
    let r = Receiver::start();
    let w = World::new();
    let (feishu, _) = add(&w, &r.url(FEISHU), &["--format", "feishu"]);
    let (slack, _) = add(&w, &r.url(SLACK), &["--format", "slack"]);
    let telegram_target = format!("{}?chat_id=5", r.url(TELEGRAM));
    let (telegram, _) = add(&w, &telegram_target, &["--format", "telegram"]);
    let (bark, _) = add(&w, &r.url(BARK), &["--format", "bark"]);
    let standard = add_standard(&w, &r, STANDARD, &[]);
    // Feishu's custom bot answers 200 and says in `code` whether it took
    // the message (its guide: 19001 for a hook whose token is wrong).
    r.answer(
        FEISHU,
        &[Answer::new(
            200,
            r#"{"code":19001,"data":{},"msg":"param invalid: incoming webhook access token invalid"}"#,
        )],
        Answer::new(
            200,
            r#"{"StatusCode":0,"StatusMessage":"success","code":0,"data":{},"msg":"success"}"#,
        ),
    );
    // Slack: `ok: false` where its API answers JSON, a text reason with a
    // 4xx from an incoming webhook, "ok" when posted.
    r.answer(
        SLACK,
        &[
            Answer::new(200, r#"{"ok":false,"error":"invalid_blocks"}"#),
            Answer::new(400, "invalid_payload"),
        ],
        Answer::new(200, "ok"),
    );
    r.answer(
        TELEGRAM,
        &[Answer::new(
            400,
            r#"{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}"#,
        )],
        Answer::new(200, r#"{"ok":true,"result":{"message_id":7}}"#),
    );
    // bark-server answers with its status in `code` as well.
    r.answer(
        BARK,
        &[Answer::new(
            200,
            r#"{"code":400,"message":"failed to get device token: not registered"}"#,
        )],
        Answer::new(200, r#"{"code":200,"message":"success"}"#),
    );
    // The standard format defines no body: any 2xx delivers.
    r.answer(
        STANDARD,
        &[],
        Answer::new(200, r#"{"ok":false,"code":19001}"#),
    );
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    // The first retry is due about 5 s later, the second about a minute.
    deliver_at(&w, "2026-11-20T10:00:10.000Z").success();
    deliver_at(&w, "2026-11-20T10:02:00.000Z").success();
    let counts: Vec<usize> = [FEISHU, SLACK, TELEGRAM, BARK, STANDARD]
        .iter()
        .map(|p| r.requests_to(p).len())
        .collect();
    assert_eq!(counts, [2, 3, 2, 2, 1], "requests to each receiver");
    let expect = |id: &str, lines: &[&str]| {
        let got: Vec<String> = deliveries(&w, id).iter().map(|l| said(l)).collect();
        assert_eq!(got, lines, "webhook deliveries {id}");
    };
    expect(
        &feishu,
        &[
            "attempt 1  retrying  200 refused: param invalid: incoming webhook access token invalid (code 19001)",
            "attempt 2  delivered  200",
        ],
    );
    expect(
        &slack,
        &[
            "attempt 1  retrying  200 refused: invalid_blocks",
            "attempt 2  retrying  400 refused: invalid_payload",
            "attempt 3  delivered  200",
        ],
    );
    expect(
        &telegram,
        &[
            "attempt 1  retrying  400 refused: Bad Request: chat not found (code 400)",
            "attempt 2  delivered  200",
        ],
    );
    expect(
        &bark,
        &[
            "attempt 1  retrying  200 refused: failed to get device token: not registered (code 400)",
            "attempt 2  delivered  200",
        ],
    );
    expect(&standard, &["attempt 1  delivered  200"]);
    // The log keeps the status and the receiver's words apart.
    let json = w
        .run(&["webhook", "deliveries", "--json", &feishu])
        .success();
    let first: serde_json::Value =
        serde_json::from_str(json.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["status"], 200);
    assert_eq!(
        first["error"],
        "refused: param invalid: incoming webhook access token invalid (code 19001)"
    );
}

#[test]
fn webhook_test_reports_a_refusal_in_the_body_as_a_failure() {
    let r = Receiver::start();
    let w = World::new();
    let (feishu, _) = add(&w, &r.url(FEISHU), &["--format", "feishu"]);
    r.answer(
        FEISHU,
        &[],
        Answer::new(200, r#"{"code":19024,"msg":"Key Words Not Found"}"#),
    );
    let run = w.run(&["webhook", "test", &feishu]);
    assert_eq!(run.code, 69, "{run:?}");
    assert!(
        run.stderr
            .contains("answered 200, refused: Key Words Not Found (code 19024)"),
        "{run:?}"
    );
}

/// The time of the next retry `webhook deliveries` names on `line`.
fn next_retry(line: &str) -> &str {
    line.split("next retry ").nth(1).map_or("-", str::trim)
}

#[test]
fn a_429_or_503_with_retry_after_is_tried_again_no_sooner_than_it_asks() {
    let r = Receiver::start();
    let w = World::new();
    let seconds = add_standard(&w, &r, "/seconds", &[]);
    let date = add_standard(&w, &r, "/date", &[]);
    let telegram_target = format!("{}?chat_id=5", r.url(TELEGRAM));
    let (telegram, _) = add(&w, &telegram_target, &["--format", "telegram"]);
    let far = add_standard(&w, &r, "/far", &[]);
    // Two minutes in seconds; an HTTP date; Telegram's flood control says
    // it in the body only (`parameters.retry_after`, in seconds).
    r.answer(
        "/seconds",
        &[Answer::new(429, "slow down").header("retry-after", "120")],
        Answer::new(200, ""),
    );
    r.answer(
        "/date",
        &[Answer::new(503, "").header("retry-after", "Fri, 20 Nov 2026 10:05:00 GMT")],
        Answer::new(200, ""),
    );
    r.answer(
        TELEGRAM,
        &[Answer::new(
            429,
            r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 30","parameters":{"retry_after":30}}"#,
        )],
        Answer::new(200, r#"{"ok":true,"result":{}}"#),
    );
    // Longer than the message's retry window: honoured up to its end.
    r.answer(
        "/far",
        &[Answer::new(429, "").header("retry-after", "200000")],
        Answer::new(200, ""),
    );
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    let first = |id: &str| next_retry(&deliveries(&w, id)[0]).to_owned();
    assert_eq!(first(&seconds), "2026-11-20T10:02:00.000Z");
    assert_eq!(first(&date), "2026-11-20T10:05:00.000Z");
    assert_eq!(first(&telegram), "2026-11-20T10:00:30.000Z");
    assert_eq!(first(&far), "2026-11-21T10:00:00.000Z");
    // Not before each instant (the schedule alone would retry after 5 s).
    let mut got = Vec::new();
    for now in [
        "2026-11-20T10:00:29.999Z",
        "2026-11-20T10:00:30.000Z",
        "2026-11-20T10:01:59.999Z",
        "2026-11-20T10:02:00.000Z",
        "2026-11-20T10:04:59.999Z",
        "2026-11-20T10:05:00.000Z",
    ] {
        deliver_at(&w, now).success();
        got.push(["/seconds", "/date", TELEGRAM, "/far"].map(|p| r.requests_to(p).len()));
    }
    assert_eq!(
        got,
        [
            [1, 1, 1, 1],
            [1, 1, 2, 1],
            [1, 1, 2, 1],
            [2, 1, 2, 1],
            [2, 1, 2, 1],
            [2, 2, 2, 1],
        ],
        "requests to /seconds, /date, Telegram, /far after each pass"
    );
    for id in [&seconds, &date, &telegram] {
        let lines = deliveries(&w, id);
        assert!(lines[1].contains("  delivered  200"), "{lines:?}");
    }
}

/// A `Retry-After` holds the endpoint, not only the message it answered:
/// a reminder that expires meanwhile is dropped, and the next message
/// still waits for the receiver's instant.
#[test]
fn retry_after_holds_the_next_message_too_when_the_first_expires() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(
        &w,
        &r,
        STANDARD,
        &[
            "--remind",
            "10m",
            "--event",
            "record.created,reset.upcoming,reset.window_started",
        ],
    );
    crate::webhooks::schedule_at(&w, T0, A, "pro", "2026-11-24 10:00 +00:00");
    // The announcement is taken; "in 10 minutes" gets a 429 asking for 15.
    r.answer(
        STANDARD,
        &[
            Answer::new(200, ""),
            Answer::new(429, "").header("retry-after", "900"),
        ],
        Answer::new(200, ""),
    );
    let mut got = Vec::new();
    for now in [
        T0,
        "2026-11-24T09:50:00.000Z",
        "2026-11-24T10:00:00.000Z",
        "2026-11-24T10:04:59.999Z",
        "2026-11-24T10:05:00.000Z",
    ] {
        deliver_at(&w, now).success();
        got.push(r.requests_to(STANDARD).len());
    }
    assert_eq!(got, [1, 2, 2, 2, 3], "requests after each pass");
    let types: Vec<String> = r
        .requests_to(STANDARD)
        .iter()
        .map(|q| {
            crate::util::receiver::verified(q)["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        types,
        ["record.created", "reset.upcoming", "reset.window_started"]
    );
}
