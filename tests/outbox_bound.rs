//! A flapping upstream cannot fill the disk through the webhook outbox: it
//! holds what an enabled endpoint still needs (nothing without one), and
//! stays under its documented bound (32 MiB plus one publish's changes)
//! while the only endpoint is down; its size is a metric.

use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::World;

const MIB: u64 = 1024 * 1024;
/// `src/webhook/outbox.rs`'s `MAX_BYTES`, as docs/manual/operations.md documents it.
const BOUND: u64 = 32 * MIB;
/// About 1.6 MB of changes each: past the bound after 22, so the outbox is
/// compacted at least once.
const PUBLISHES: usize = 30;

/// A records document of about 1 MB whose every record changes with `version`.
pub fn document(version: usize) -> Vec<u8> {
    crate::util::generated_document(1700)
        .replace(
            "Generated record",
            &format!("Version {version} of a generated record with some words to make it longer, as real posts are; record"),
        )
        .into_bytes()
}

/// Syncs `PUBLISHES` changing documents into `w`, calling `after` with the
/// outbox's size after each.
fn flap(w: &World, mut after: impl FnMut(usize, Option<u64>)) {
    let up = Upstream::start(Behavior::Status(500));
    let outbox = w.data_dir().join("webhooks/outbox.jsonl");
    for version in 0..PUBLISHES {
        up.set(Behavior::Serve {
            body: document(version),
            etag: None,
            last_modified: None,
        });
        let now = format!("2026-11-20T10:{:02}:{:02}.000Z", version / 60, version % 60);
        w.run(&[
            "--now",
            &now,
            "--keep",
            "2",
            "sync",
            "--upstream",
            &up.url("/doc.json"),
            "--once",
        ])
        .success();
        after(version, std::fs::metadata(&outbox).ok().map(|m| m.len()));
    }
}

#[test]
fn without_an_endpoint_the_outbox_holds_nothing() {
    assert!(document(0).len() > 1_000_000, "about 1 MB");
    let w = World::new();
    flap(&w, |version, size| {
        assert_eq!(
            size, None,
            "publish {version}: no outbox without an endpoint"
        );
    });
}

#[test]
fn with_its_only_endpoint_down_the_outbox_stays_under_its_bound() {
    let w = World::new();
    // Nothing listens on port 9: every delivery would fail; none runs here.
    crate::webhooks::add(&w, "http://127.0.0.1:9/down", &[]);
    let mut largest = 0;
    flap(&w, |version, size| {
        let size = size.expect("an endpoint needs an outbox");
        largest = largest.max(size);
        assert!(
            size <= BOUND + 2 * MIB,
            "publish {version}: the outbox holds {size} bytes"
        );
    });
    assert!(
        largest > BOUND / 2,
        "the bound was reached: largest {largest}"
    );
    // The newest changes are kept (the endpoint goes on from the oldest kept one).
    let text = std::fs::read_to_string(w.data_dir().join("webhooks/outbox.jsonl")).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert!(header["first"].as_u64().unwrap() > 0, "{header}");
    assert!(text.contains(&format!("Version {} of", PUBLISHES - 1)));
    // Its size is a metric, read by Prometheus's own parser.
    let size = std::fs::metadata(w.data_dir().join("webhooks/outbox.jsonl"))
        .unwrap()
        .len();
    let s = Server::start(&w, &["--admin-listen", "127.0.0.1:0"], &[]);
    let parsed = crate::metrics::parse("text", &s.admin_get("/metrics", &[]).body);
    assert_eq!(
        crate::metrics::value(
            &parsed,
            "resetctl_webhook_outbox_bytes",
            "resetctl_webhook_outbox_bytes",
            &[]
        ),
        Some(size as f64)
    );
}

/// A compaction keeps the keys of the reminders it drops until they expire:
/// a reminder already delivered is not appended (and sent) again after the
/// outbox was rewritten past its bound.
#[test]
fn a_compaction_never_makes_a_delivered_reminder_due_again() {
    let r = crate::util::receiver::Receiver::start();
    let w = World::new();
    // Hears of schedules only: the completions that fill the outbox are
    // passed over, not sent.
    crate::webhooks::add_standard(
        &w,
        &r,
        "/a",
        &["--remind", "10m", "--kind", "reset_scheduled"],
    );
    let schedule = serde_json::json!({
        "id": "2090000000000000001", "kind": "reset_scheduled", "resetType": "global",
        "announcedAt": "2026-11-20T09:00:00.000Z", "effectiveAt": "2026-11-20T12:00:00.000Z",
        "text": null, "confidence": 0.9, "scope": {"plans": ["pro"], "windows": ["unknown"]},
        "source": {"origin": "x", "postId": "2090000000000000001", "handle": "h",
                   "url": "https://x.com/h/status/2090000000000000001"},
        "schedulePrecision": "datetime", "scheduleBasis": "explicit",
        "scheduleWindow": {"startAt": "2026-11-20T12:00:00.000Z", "endAt": "2026-11-20T12:00:00.000Z"},
        "scheduleState": "pending", "completedAt": null, "completionRecordId": null,
        "fulfillmentOrigin": null, "relatedRecordIds": []
    });
    let up = Upstream::start(Behavior::Status(500));
    let sync = |version: usize, now: &str| {
        let mut doc: serde_json::Value = serde_json::from_slice(&document(version)).unwrap();
        doc["records"]
            .as_array_mut()
            .unwrap()
            .push(schedule.clone());
        up.set(Behavior::Serve {
            body: doc.to_string().into_bytes(),
            etag: None,
            last_modified: None,
        });
        w.run(&[
            "--now",
            now,
            "sync",
            "--upstream",
            &up.url("/doc.json"),
            "--once",
        ])
        .success();
    };
    let deliver = |now: &str| {
        w.run(&["--now", now, "webhook", "deliver", "--once"])
            .success();
    };
    let outbox = w.data_dir().join("webhooks/outbox.jsonl");
    sync(0, "2026-11-20T10:00:00.000Z");
    sync(1, "2026-11-20T11:00:00.000Z");
    sync(2, "2026-11-20T11:49:00.000Z");
    deliver("2026-11-20T11:50:00.000Z");
    let upcoming = || {
        r.requests_to("/a")
            .iter()
            .filter(|q| crate::util::receiver::verified(q)["type"] == "reset.upcoming")
            .count()
    };
    assert_eq!(upcoming(), 1, "the 10-minute reminder, at its instant");
    // The next publish compacts the outbox: every change before it was
    // passed or sent, so the file is rewritten without them.
    let before = std::fs::metadata(&outbox).unwrap().len();
    sync(3, "2026-11-20T11:51:00.000Z");
    let after = std::fs::metadata(&outbox).unwrap().len();
    assert!(after < before, "compacted: {before} bytes, then {after}");
    // Still within the reminder's grace: it is not due again.
    deliver("2026-11-20T11:52:00.000Z");
    assert_eq!(
        upcoming(),
        1,
        "the reminder was sent again after the compaction"
    );
}
