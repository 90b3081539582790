//! Bidirectional-control characters (U+202A–U+202E, U+2066–U+2069) in a
//! record's text, a source's name or a requested id (issue 50, item 10):
//! neutralised (U+FFFD, or `\uXXXX` on a terminal) in everything a person
//! reads as it is rendered: the pages, the feeds, the chat messages and
//! e-mail, `status` and the other commands' output. The JSON API and the
//! signed webhook payload are data: they carry the text as given.

use serde_json::Value;

use crate::util::receiver::Receiver;
use crate::util::server::Server;
use crate::util::smtp::Smtp;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::World;
use crate::webhooks::add;

const T0: &str = "2026-11-20T10:00:00.000Z";
const POST: &str = "2090000000000000001";
/// "Reset done" that a right-to-left override shows as "enod teseR", and
/// an isolate that leaves its text's direction open.
const HOSTILE: &str = "Reset \u{202E}done\u{202C} at \u{2066}18:00\u{2069}";

/// Whether `text` holds any bidirectional control.
fn has_bidi(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
}

#[track_caller]
fn neutralised(what: &str, text: &str) {
    assert!(
        !has_bidi(text),
        "{what} shows a bidirectional control: {text:?}"
    );
    assert!(
        text.contains("Reset \u{FFFD}done\u{FFFD} at \u{FFFD}18:00\u{FFFD}"),
        "{what}: {text:?}"
    );
}

#[test]
fn bidirectional_controls_are_neutralised_wherever_a_person_reads_them() {
    let w = World::new();
    let slack = Receiver::start();
    let ntfy = Receiver::start();
    let smtp = Smtp::start(false);
    add(&w, &slack.url("/services/T/B/X"), &["--format", "slack"]);
    add(&w, &ntfy.url("/topic"), &["--format", "ntfy"]);
    add(
        &w,
        &smtp.target(false, "ops@example.org"),
        &["--format", "email"],
    );
    w.run(&[
        "--now",
        T0,
        "record",
        "schedule",
        "--post-url",
        &format!("https://x.com/h/status/{POST}"),
        "--at",
        "2026-11-24 10:00 -08:00",
        "--text",
        HOSTILE,
    ])
    .success();

    // Messages: each chat format and the e-mail, plain and HTML parts.
    let (key, value) = smtp.trust();
    let out = w
        .cmd()
        .env(key, value)
        .args(["--now", T0, "webhook", "deliver", "--once"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let slack_body: Value =
        serde_json::from_str(slack.requests()[0]["body"].as_str().unwrap()).unwrap();
    neutralised("the Slack message", slack_body["text"].as_str().unwrap());
    neutralised(
        "the ntfy message",
        ntfy.requests()[0]["body"].as_str().unwrap(),
    );
    let mail = &smtp.messages_to("ops@example.org")[0];
    neutralised("the e-mail's plain part", mail["plain"].as_str().unwrap());
    neutralised("the e-mail's HTML part", mail["html"].as_str().unwrap());

    // The terminal: the record as `record show` prints it.
    let listed = w.run(&["record", "show", POST]).success().stdout;
    assert!(!has_bidi(&listed), "{listed:?}");
    assert!(
        listed.contains("Reset \\u202edone\\u202c at \\u206618:00\\u2069"),
        "{listed:?}"
    );

    // Pages and feeds, served; the JSON API as given.
    let s = Server::start(&w, &["--now", T0, "--no-rate-limit"], &[]);
    let page_id = format!("/en/records/{POST}");
    for path in ["/en/", page_id.as_str(), "/openapi/v1/records.atom"] {
        let reply = s.get(path);
        assert_eq!(reply.status, 200, "{path}");
        neutralised(path, &reply.text());
    }
    let ics = s.get("/openapi/v1/records.ics").text().replace("\r\n ", "");
    neutralised("the calendar", &ics);
    let latest = s.get("/openapi/v1/records/latest").json();
    assert_eq!(latest["data"]["id"], POST);
    assert_eq!(
        latest["data"]["text"], HOSTILE,
        "the JSON API carries the text as given"
    );
    // A requested id is quoted by the not-found page.
    let missing = s.get("/en/records/x%E2%80%AEy");
    assert_eq!(missing.status, 404);
    assert!(!has_bidi(&missing.text()), "{}", missing.text());
    assert!(missing.text().contains("x\u{FFFD}y"), "{}", missing.text());
}

#[test]
fn status_shows_a_mirrors_source_name_without_its_bidirectional_controls() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&crate::util::bundled_document(T0, 3), "\"a\"");
    let w = World::new();
    w.run(&[
        "--now",
        T0,
        "sync",
        "--once",
        "--upstream",
        &up.url("/r.json"),
        "--source-name",
        "Resets \u{202E}evil",
    ])
    .success();
    let status = w.run(&["--now", T0, "status"]).success().stdout;
    assert!(!has_bidi(&status), "{status:?}");
    assert!(status.contains("(Resets \\u202eevil)"), "{status}");
}
