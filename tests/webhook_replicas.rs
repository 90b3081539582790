//! Writer and replica deliver once: a data dir that mirrors another
//! resetctl instance (its `/export.json`) takes no endpoint, and the
//! endpoints it already had send nothing while it is one, so nobody is
//! told a change twice under two ids (docs/manual/webhooks.md).

use std::time::Duration;

use crate::util::receiver::Receiver;
use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::World;
use crate::webhooks::{add_standard, deliver_at, events, schedule_at};

const T0: &str = "2026-11-20T10:00:00.000Z";
/// A schedule the writer records while the replica mirrors it.
const NEW: &str = "2090000000000000009";

/// A standalone writer with the bundled history, serving its export.
fn writer() -> (World, Server) {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(
        &w,
        &["--no-rate-limit", "--admin-listen", "127.0.0.1:0"],
        &[],
    );
    (w, s)
}

fn sync_once(w: &World, upstream: &str) {
    w.run(&["--now", T0, "sync", "--upstream", upstream, "--once"])
        .success();
}

#[test]
fn webhook_add_on_a_replica_is_refused_with_the_manuals_reason() {
    let (_writer, s) = writer();
    let replica = World::new();
    sync_once(&replica, &s.admin_url("/export.json"));
    let run = replica.run(&[
        "webhook",
        "add",
        "http://127.0.0.1:9/resets",
        "--allow-private-targets",
    ]);
    assert_eq!(run.code, 64, "{run:?}");
    let origin = format!("{}/…", s.admin_url(""));
    assert_eq!(
        run.stderr,
        format!(
            "resetctl: this data dir is a replica: it mirrors another resetctl instance ({origin}), \
             and a replica has no webhooks, since each data dir with endpoints would send every \
             change once more, under other webhook-ids; register endpoints on the instance it \
             mirrors (the writer)\n"
        )
    );
    assert_eq!(
        replica.run(&["webhook", "list"]).success().stdout,
        "no webhook endpoints\n"
    );
    // A mirror of a records document that is not another instance's
    // export (no dataSource in it) is no replica: it delivers itself.
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&crate::util::generated_document(2), "\"doc\"");
    let mirror = World::new();
    sync_once(&mirror, &up.url("/doc.json"));
    crate::webhooks::add(&mirror, "http://127.0.0.1:9/resets", &[]);
}

#[test]
fn endpoints_a_data_dir_had_before_it_became_a_replica_send_nothing_until_it_is_none() {
    let (writer_world, s) = writer();
    let r = Receiver::start();
    let replica = World::new();
    // Added while nothing said what the data dir would be.
    let id = add_standard(&replica, &r, "/r", &[]);
    // Its syncs, by a daemon whose deliverer runs meanwhile: the first
    // (the writer's sixteen records), then one more record the writer
    // publishes. None is sent.
    let daemon = crate::util::sync_daemon(&replica, &s.admin_url("/export.json"));
    let records = |w: &World| {
        let status = w.run(&["status", "--json"]).json();
        status["snapshot"]["records"].as_u64().unwrap_or(0)
    };
    crate::util::wait_until(Duration::from_secs(30), "the first sync", || {
        records(&replica) == 16
    });
    schedule_at(&writer_world, T0, NEW, "pro", "2026-11-24 10:00 +00:00");
    crate::util::wait_until(
        Duration::from_secs(30),
        "the cursor past the new record",
        || {
            let list = replica.run(&["webhook", "list", "--json"]).json();
            records(&replica) == 17 && list[0]["pending"] == 0
        },
    );
    drop(daemon);
    let outbox = std::fs::read_to_string(replica.data_dir().join("webhooks/outbox.jsonl")).unwrap();
    assert!(
        outbox.contains(NEW),
        "the new record's change is in the outbox"
    );
    deliver_at(&replica, T0).success();
    assert_eq!(r.requests_to("/r").len(), 0, "the writer tells them");
    let origin = format!("{}/…", s.admin_url(""));
    let reason = format!(
        "this data dir is a replica: it mirrors another resetctl instance ({origin}), and a \
         replica has no webhooks, since each data dir with endpoints would send every change \
         once more, under other webhook-ids; register endpoints on the instance it mirrors (the \
         writer)"
    );
    let list = replica.run(&["webhook", "list"]).success().stdout;
    assert!(
        list.starts_with(&format!(
            "held, sending nothing: {reason}\n{id}  standard  held "
        )),
        "{list}"
    );
    let status = replica.run(&["status"]).stdout;
    assert!(
        status.contains(&format!("webhooks:\n  held, sending nothing: {reason}\n")),
        "{status}"
    );
    let json = replica.run(&["status", "--json"]).json();
    assert_eq!(json["webhooks"][0]["held"], reason.as_str());
    // Pointed at a document of its own (a failover, say), it is a replica
    // no more: its endpoint goes on from the present, never with the
    // writer's past.
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&crate::util::generated_document(2), "\"own\"");
    sync_once(&replica, &up.url("/own.json"));
    deliver_at(&replica, T0).success();
    let got = events(&r, "/r");
    let created = got.iter().filter(|(t, _)| t == "record.created").count();
    let removed = got.iter().filter(|(t, _)| t == "record.removed").count();
    assert_eq!((created, removed, got.len()), (2, 17, 19), "{got:?}");
    assert_eq!(
        replica.run(&["status", "--json"]).json()["webhooks"][0]["held"],
        serde_json::Value::Null
    );
}
