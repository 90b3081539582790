//! Text from an upstream or an operator stays inside its line (issue 39,
//! item 3): a post id, a kind, an actor or a note with line breaks is shown
//! with them escaped in `status`, `convert`, `record list|show|log`,
//! `webhook list|show` and the server's log, so it cannot add a line that
//! an operator (or a script reading the output) would take for the
//! program's own.

use std::time::Duration;

use serde_json::Value;

use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{fixture, wait_until, World};

/// The lines a forged value tries to add, as they would start.
const FORGED: &[&str] = &["  last error:", "  failures:", "entry 99", "FORGED"];

/// A value that, printed raw, adds three lines of its own.
const POST_ID: &str = "1\n  last error:      none\n  failures:        0 in a row";

#[track_caller]
fn assert_no_forged_line(what: &str, text: &str, allowed: usize) {
    for forged in FORGED {
        let count = text.lines().filter(|l| l.starts_with(forged)).count();
        assert!(
            count <= allowed,
            "{what}: {count} lines start with {forged:?}:\n{text}"
        );
    }
    assert!(
        text.contains("\\u000a"),
        "{what}: the line break is not shown escaped:\n{text}"
    );
}

fn forged_feed() -> String {
    let mut feed: Value = serde_json::from_slice(
        &std::fs::read(fixture("feed/codexrunway-status-2026-07-31.json")).unwrap(),
    )
    .unwrap();
    feed["events"][0]["source"]["postId"] = POST_ID.into();
    feed.to_string()
}

#[test]
fn an_upstream_post_id_with_line_breaks_adds_no_line_to_status_or_convert() {
    let w = World::new();
    let feed = w.path("feed.json");
    std::fs::write(&feed, forged_feed()).unwrap();
    let now = "2026-07-31T23:30:00.000Z";
    let convert = w
        .run(&["--now", now, "convert", feed.to_str().unwrap()])
        .success();
    assert_no_forged_line("convert", &convert.stderr, 0);
    // Synced, the skipped event is in the sync state that `status` shows,
    // whose own `last error:` and `failures:` lines come once each.
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&forged_feed(), "\"f\"");
    w.run(&[
        "--now",
        now,
        "sync",
        "--upstream",
        &up.url("/api/status.json"),
        "--once",
    ])
    .success();
    let status = w.run(&["--now", now, "status"]).success();
    assert_no_forged_line("status", &status.stdout, 1);
    assert!(
        status
            .stdout
            .contains("skipped records: events[0] (post 1\\u000a  last error:"),
        "{}",
        status.stdout
    );
}

#[test]
fn an_operators_words_with_line_breaks_add_no_line_to_what_commands_print() {
    let w = World::new();
    let now = "2026-11-20T10:00:00.000Z";
    let actor = "ops\nentry 99 2026-11-20T10:00:00.000Z by root: undo everything";
    let text = "Reset soon\nFORGED: nothing";
    w.run(&[
        "--now",
        now,
        "record",
        "schedule",
        "--operator",
        "--at",
        "2026-11-21 12:00 +00:00",
        "--text",
        text,
        "--actor",
        actor,
    ])
    .success();
    let id = w.run(&["record", "list", "--json"]).success().json()[0]["record"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for args in [
        &["record", "log"][..],
        &["record", "list"],
        &["record", "show", &id],
    ] {
        let run = w.run(args).success();
        let shown = format!("{}{}", run.stdout, run.stderr);
        for forged in FORGED {
            assert!(
                !shown.lines().any(|l| l.trim_start().starts_with(forged)),
                "{args:?}: a line starts with {forged:?}:\n{shown}"
            );
        }
    }
    // A webhook endpoint's description is an operator's words too.
    w.run(&[
        "webhook",
        "add",
        "http://127.0.0.1:9/hook",
        "--allow-private-targets",
        "--description",
        "mine\nFORGED: secret: whsec_x",
    ])
    .success();
    let endpoint = w.run(&["webhook", "list", "--json"]).success().json()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let show = w.run(&["webhook", "show", &endpoint]).success();
    assert_no_forged_line("webhook show", &show.stdout, 0);
}

#[test]
fn an_upstream_value_in_a_server_log_line_stays_in_that_line() {
    // A served version that cannot be used is logged with the reason the
    // decoder gives, which quotes the upstream's own text.
    let w = World::new();
    w.run(&["--now", "2026-11-20T10:00:00.000Z", "seed"])
        .success();
    let s = Server::start(&w, &[], &[]);
    let dir = w.data_dir().join("snapshots");
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("000000000001.json")).unwrap()).unwrap();
    doc["sequence"] = 2.into();
    doc["records"][0]["kind"] = "reset_done\nFORGED resetctl: all good".into();
    std::fs::write(dir.join("000000000002.json"), doc.to_string()).unwrap();
    std::fs::write(dir.join("CURRENT"), b"2\n").unwrap();
    wait_until(Duration::from_secs(10), "the refusal in the log", || {
        s.log_text().contains("not serving snapshot 2")
    });
    let log = s.log_text();
    assert!(
        !log.lines().any(|l| l.starts_with("FORGED")),
        "a log line starts with the upstream's text:\n{log}"
    );
}
