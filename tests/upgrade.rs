//! Upgrades from data an earlier version wrote (issue 52): the data dir in
//! `tests/fixtures/upgrade/0.1.0-2619bbb/` was written by the last release
//! (0.1.0, commit 2619bbb) with its own binary (`make.sh` beside it says
//! how), and the binary under test takes it over as an operator's upgrade
//! does, in place: it reports it, serves it, records into it (the ledger's
//! lines of the old form, without a check, are read and rewritten with
//! one), delivers what was pending to a real receiver exactly once, under
//! ids never used before, and keeps the reminders the old version held;
//! and the backup that version made restores. Each later change of a data
//! format adds a fixture here, made by its previous release.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::util::receiver::Receiver;
use crate::util::server::Server;
use crate::util::{fixture, World};

/// The endpoints' port in the fixture (`make.sh`): free in this test's own
/// network namespace.
const PORT: u16 = 47951;

/// The fixture's endpoints: every change with reminders, and completions
/// only (disabled by the operator).
const EVERY_CHANGE: &str = "ep_c1c0d9d1fd3db5b3";
const COMPLETIONS: &str = "ep_9bd8b13e2a8b1689";

/// The data dir of `fixture`, copied into `w`'s.
fn take_over(w: &World, fixture: &Path) {
    let status = Command::new("cp")
        .arg("-r")
        .arg(fixture.join("data"))
        .arg(w.data_dir())
        .status()
        .expect("cp");
    assert!(status.success());
}

/// The receiver's requests as (path, webhook-id, type, record id).
fn received(r: &Receiver) -> Vec<(String, String, String, String)> {
    r.requests()
        .iter()
        .map(|q| {
            assert!(q["verified"].is_object(), "not verified: {q}");
            let body: Value = serde_json::from_str(q["body"].as_str().unwrap()).unwrap();
            (
                q["path"].as_str().unwrap().to_owned(),
                q["headers"]["webhook-id"].as_str().unwrap().to_owned(),
                body["type"].as_str().unwrap().to_owned(),
                body["data"]["record"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

/// `webhook deliver --once` at `now`.
fn deliver(w: &World, now: &str) -> String {
    w.run(&["--now", now, "webhook", "deliver", "--once"])
        .success()
        .stdout
}

#[test]
fn a_data_dir_of_0_1_0_is_served_recorded_into_delivered_and_restored() {
    if crate::util::namespace::inside() {
        return upgrade_in_this_namespace();
    }
    crate::util::namespace::run_test_again(
        "upgrade::a_data_dir_of_0_1_0_is_served_recorded_into_delivered_and_restored",
        &["--net"],
        "root for `unshare --net` and `ip` from iproute2",
    );
}

fn upgrade_in_this_namespace() {
    let status = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status()
        .expect("ip (iproute2)");
    assert!(status.success());
    let fixture = fixture("upgrade/0.1.0-2619bbb");
    let w = World::new();
    take_over(&w, &fixture);
    let before: BTreeSet<String> = std::fs::read_to_string(fixture.join("delivered-ids.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split_once(' ').unwrap().1.to_owned())
        .collect();
    assert_eq!(before.len(), 1, "the fixture delivered one message");

    // status reports it: the version, the endpoints' delivery state.
    let status = w
        .run(&["--now", "2026-11-21T09:00:00Z", "status"])
        .success()
        .stdout;
    assert!(status.contains("snapshot:  #5 "), "{status}");
    let line = |id: &str| {
        status
            .lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("no line of {id}: {status}"))
            .to_owned()
    };
    assert!(
        line(EVERY_CHANGE).contains("enabled: delivered 1, pending 2, 0 failed"),
        "{status}"
    );
    assert!(
        line(COMPLETIONS).contains("disabled: delivered 0, pending 1, 0 failed"),
        "{status}"
    );

    // serve answers it: the old version's records (19, of which 3
    // fulfilled schedules the list of all folds into their completions),
    // the pending schedules first.
    assert!(status.contains("records:   19 "), "{status}");
    // (On a copy of its own: serve runs a deliverer, whose messages a kill
    // may leave unrecorded, to be sent again under their ids; no receiver
    // listens yet.)
    let served = World::new();
    take_over(&served, &fixture);
    let server = Server::start(&served, &[], &[]);
    let page = server
        .get("/openapi/v1/records?kind=all&pageSize=10")
        .json();
    assert_eq!(page["ok"], true, "{page}");
    assert_eq!(page["data"]["total"], 16, "{page}");
    let first: Vec<&str> = page["data"]["items"].as_array().unwrap()[..3]
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        first,
        [
            "2091000000000000001",
            "2091000000000000003",
            "2091000000000000002"
        ],
        "{page}"
    );
    drop(server);

    let r = Receiver::start_on(PORT);
    let endpoints: Value = serde_json::from_slice(
        &std::fs::read(fixture.join("data/webhooks/endpoints.json")).unwrap(),
    )
    .unwrap();
    for e in endpoints["endpoints"].as_array().unwrap() {
        let path = e["url"].as_str().unwrap().rsplit_once('/').unwrap().1;
        r.secret(&format!("/{path}"), e["secret"].as_str().unwrap());
    }

    // What was pending goes out, once.
    assert_eq!(
        deliver(&w, "2026-11-21T09:00:00Z").trim(),
        "delivered 2, failed 0"
    );
    assert_eq!(
        deliver(&w, "2026-11-21T09:01:00Z").trim(),
        "delivered 0, failed 0"
    );

    // Recording into it: the ledger's unchecked lines are read and
    // rewritten with a check each.
    let ledger_before = std::fs::read_to_string(w.data_dir().join("ledger.jsonl")).unwrap();
    assert_eq!(
        ledger_before
            .lines()
            .filter(|l| !l.contains("\"check\":"))
            .count(),
        2,
        "the fixture's ledger has two lines of the old form"
    );
    let recorded = w.run(&[
        "--now",
        "2026-11-21T10:00:00Z",
        "record",
        "completion",
        "--post-url",
        "https://x.com/h/status/2091000000000000004",
        "--at",
        "2026-11-21T09:55:00Z",
        "--text",
        "after the upgrade",
        "--actor",
        "test",
    ]);
    let recorded = recorded.success().stdout;
    assert!(
        recorded
            .starts_with("entry 5: add reset_completed 2091000000000000004; published snapshot 6"),
        "{recorded}"
    );
    let ledger = std::fs::read_to_string(w.data_dir().join("ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 5);
    assert!(
        ledger.lines().all(|l| l.contains(",\"check\":\"")),
        "{ledger}"
    );
    w.run(&[
        "--now",
        "2026-11-21T10:01:00Z",
        "webhook",
        "enable",
        COMPLETIONS,
    ])
    .success();
    assert_eq!(
        deliver(&w, "2026-11-21T10:02:00Z").trim(),
        "delivered 3, failed 0"
    );
    // The reminder the old version held for Monday's reset, at its lead.
    deliver(&w, "2026-11-23T17:00:30Z");

    let got = received(&r);
    let expected: Vec<(&str, &str, &str)> = vec![
        ("/a", "record.created", "2091000000000000002"),
        ("/a", "record.created", "2091000000000000003"),
        ("/a", "record.created", "2091000000000000004"),
        ("/a", "reset.upcoming", "2091000000000000001"),
        ("/b", "record.created", "2091000000000000002"),
        ("/b", "record.created", "2091000000000000004"),
    ];
    let mut seen: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(p, _, t, id)| (p.as_str(), t.as_str(), id.as_str()))
        .collect();
    seen.sort();
    assert_eq!(
        seen, expected,
        "each pending message once, none lost: {got:?}"
    );
    // A message id names one message: the same message to two endpoints
    // shares it, two messages never do, and none is one the old version
    // used for another.
    let mut by_id: std::collections::BTreeMap<&str, BTreeSet<(&str, &str)>> = Default::default();
    for (_, id, t, record) in &got {
        by_id.entry(id).or_default().insert((t, record));
    }
    for (id, messages) in &by_id {
        assert_eq!(messages.len(), 1, "{id} names {messages:?}");
        assert!(!before.contains(*id), "{id} was used before the upgrade");
    }

    // The backup the old version made restores into the upgraded dir.
    let restore = w.path("restore");
    std::fs::create_dir(&restore).unwrap();
    let status = Command::new("tar")
        .arg("-C")
        .arg(&restore)
        .arg("-xzf")
        .arg(fixture.join("backup.tar.gz"))
        .status()
        .expect("tar");
    assert!(status.success());
    let restored = w
        .run(&[
            "--now",
            "2026-11-23T18:30:00Z",
            "restore",
            restore.to_str().unwrap(),
        ])
        .success()
        .stdout;
    assert!(restored.contains("snapshot 7"), "{restored}");
    let snapshots = w.data_dir().join("snapshots");
    let sequence: u64 = std::fs::read_to_string(snapshots.join("CURRENT"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(sequence, 7);
    let current: Value = serde_json::from_slice(
        &std::fs::read(snapshots.join(format!("{sequence:012}.json"))).unwrap(),
    )
    .unwrap();
    let ids: BTreeSet<&str> = current["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 19, "the backup's records: {ids:?}");
    assert!(!ids.contains("2091000000000000004"));
    // The record the backup does not have is withdrawn, once, under a new id.
    deliver(&w, "2026-11-23T18:31:00Z");
    deliver(&w, "2026-11-23T18:32:00Z");
    let after = received(&r);
    let withdrawn: Vec<_> = after[got.len()..]
        .iter()
        .filter(|(_, _, t, _)| t == "record.removed")
        .collect();
    let mut withdrawn: Vec<(&str, &str)> = withdrawn
        .iter()
        .map(|(p, _, _, id)| (p.as_str(), id.as_str()))
        .collect();
    withdrawn.sort();
    assert_eq!(
        withdrawn,
        [("/a", "2091000000000000004"), ("/b", "2091000000000000004")],
        "{after:?}"
    );
    for (_, id, _, _) in &after[got.len()..] {
        assert!(
            !before.contains(id) && !by_id.contains_key(id.as_str()),
            "{id} reused"
        );
    }
    // Wait for nothing else: no late duplicate.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(received(&r).len(), after.len());
}
