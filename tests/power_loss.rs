//! Power loss, not only SIGKILL: each durable write path runs once under
//! strace, and every state a power loss could leave at every moment of it
//! (tests/util/powerloss.rs, docs/crash-testing.md) is read back with the
//! commands an operator runs. Each reader must see what it saw before the
//! command or what it sees after it, never a third thing; once the command
//! has reported success, every state must read as after it (nothing a
//! command reported done is lost). A kill keeps the page cache, so it can
//! never show a missing fsync or a write in place; these states can.

use std::collections::HashMap;

use crate::util::powerloss::{Recording, State};
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{bundled_document, World};

const T0: &str = "2026-11-20T10:00:00.000Z";
const T1: &str = "2026-11-20T11:00:00.000Z";
const T2: &str = "2026-11-20T12:00:00.000Z";

/// An operator's `record schedule` (a ledger append and a publish).
const SCHEDULE: &[&str] = &[
    "record",
    "schedule",
    "--operator",
    "--at",
    "2026-11-21 12:00 +00:00",
    "--scope-plans",
    "all",
    "--text",
    "Reset tomorrow at noon UTC",
];

/// What an operator sees of one part of the data dir.
struct Reader {
    name: &'static str,
    read: fn(&World) -> String,
}

fn exit_and_stdout(w: &World, args: &[&str]) -> String {
    let mut all = vec!["--now", T2];
    all.extend_from_slice(args);
    let out = w.run(&all);
    format!("exit {}\n{}", out.code, out.stdout)
}

/// The snapshot served (the bytes of `export`, or why there is none).
const SERVED: Reader = Reader {
    name: "export (the snapshot served)",
    read: |w| exit_and_stdout(w, &["export"]),
};

/// The ledger's entries; a ledger that is not whole lines is corrupt
/// unless only its last line is torn (an append no command reported).
const LEDGER: Reader = Reader {
    name: "record log (the ledger)",
    read: |w| {
        let status = w.run(&["--now", T2, "status", "--json"]);
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&status.stdout) {
            assert_eq!(json["ledger"]["corrupt"], serde_json::Value::Null, "{json}");
        }
        exit_and_stdout(w, &["record", "log", "--json"])
    },
};

/// The webhook endpoints and how their deliveries stand.
const ENDPOINTS: Reader = Reader {
    name: "webhook list (endpoints and delivery state)",
    read: |w| exit_and_stdout(w, &["webhook", "list", "--json"]),
};

/// The versions on disk.
const VERSIONS: Reader = Reader {
    name: "snapshots list (the versions on disk)",
    read: |w| exit_and_stdout(w, &["snapshots", "list"]),
};

/// The sync state (`status --json`'s `sync`).
const SYNC_STATE: Reader = Reader {
    name: "status's sync state",
    read: |w| {
        let out = w.run(&["--now", T2, "status", "--json"]);
        let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_default();
        format!("{}", json["sync"])
    },
};

/// Runs `args` under strace in `w`, then checks every power-loss state
/// with `readers`. Returns (crash points, distinct states) for the caller
/// to report.
fn every_state_reads_as_before_or_after(
    w: &World,
    args: &[&str],
    readers: &[Reader],
) -> (usize, usize) {
    let mut cmd = w.cmd();
    cmd.args(args);
    let (recording, output) = Recording::run(&w.data_dir(), cmd, &w.path("strace.log"));
    assert!(
        output.status.success(),
        "{args:?} failed under strace: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read_all = |w: &World| readers.iter().map(|r| (r.read)(w)).collect::<Vec<_>>();
    // The model must agree with the disk: rebuilt, the final state reads
    // exactly as the real one.
    let real_after = read_all(w);
    recording.materialize(&recording.after());
    assert_eq!(
        read_all(w),
        real_after,
        "the replay model disagrees with the disk"
    );
    recording.materialize(&recording.before());
    let before = read_all(w);
    let after = real_after;
    assert_ne!(before, after, "{args:?} changed nothing the readers see");
    let mut seen: HashMap<State, Vec<String>> = HashMap::new();
    let n = recording.ops.len();
    for k in 0..=n {
        for state in recording.crash_states(k) {
            let got = seen
                .entry(state.clone())
                .or_insert_with(|| {
                    recording.materialize(&state);
                    read_all(w)
                })
                .clone();
            let moment = if k == n {
                "after the command reported success".to_owned()
            } else {
                format!(
                    "before operation {k} of {n} ({:?})",
                    short(&recording.ops[k])
                )
            };
            for (i, reader) in readers.iter().enumerate() {
                if k == n {
                    assert!(
                        got[i] == after[i],
                        "{args:?}: a power loss {moment} loses what it reported done: {} reads\n{}\ninstead of\n{}\n(state {})",
                        reader.name,
                        clip(&got[i]),
                        clip(&after[i]),
                        recording.describe(&state)
                    );
                } else {
                    assert!(
                        got[i] == before[i] || got[i] == after[i],
                        "{args:?}: a power loss {moment} leaves a state that is neither old nor new: {} reads\n{}\n(before:\n{}\nafter:\n{})\n(state {})",
                        reader.name,
                        clip(&got[i]),
                        clip(&before[i]),
                        clip(&after[i]),
                        recording.describe(&state)
                    );
                }
            }
        }
    }
    eprintln!(
        "{args:?}: {} operations, {} distinct power-loss states",
        n,
        seen.len()
    );
    (n, seen.len())
}

/// The start of a reader's output, for messages.
fn clip(text: &str) -> String {
    match text.char_indices().nth(600) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn short(op: &crate::util::powerloss::Op) -> String {
    use crate::util::powerloss::Op;
    match op {
        Op::Write { ino, offset, data } => {
            format!("write {} bytes at {offset} of inode {ino}", data.len())
        }
        other => format!("{other:?}"),
    }
}

#[test]
fn seeding_a_new_data_dir_survives_power_loss() {
    let w = World::new();
    let (ops, states) =
        every_state_reads_as_before_or_after(&w, &["--now", T0, "seed"], &[SERVED, LEDGER]);
    assert!(ops > 5 && states > 3, "{ops} operations, {states} states");
}

#[test]
fn recording_publishing_to_the_outbox_and_pruning_survive_power_loss() {
    let w = World::new();
    w.seed_bundled();
    w.run(&[
        "webhook",
        "add",
        "http://127.0.0.1:9/hook",
        "--allow-private-targets",
    ])
    .success();
    // Two versions on disk, so `--keep 2` prunes one.
    w.run(&["--now", T0, "publish"]).success();
    every_state_reads_as_before_or_after(
        &w,
        &[&["--now", T1, "--keep", "2"][..], SCHEDULE].concat(),
        &[SERVED, LEDGER, ENDPOINTS],
    );
}

#[test]
fn adding_the_first_webhook_endpoint_survives_power_loss() {
    let w = World::new();
    w.seed_bundled();
    every_state_reads_as_before_or_after(
        &w,
        &[
            "webhook",
            "add",
            "http://127.0.0.1:9/hook",
            "--allow-private-targets",
        ],
        &[ENDPOINTS],
    );
}

#[test]
fn a_delivery_pass_survives_power_loss() {
    let receiver = crate::util::receiver::Receiver::start();
    let w = World::new();
    w.seed_bundled();
    crate::webhooks::add(&w, &receiver.url("/hook"), &["--format", "ntfy"]);
    w.run(&[&["--now", T1][..], SCHEDULE].concat()).success();
    every_state_reads_as_before_or_after(
        &w,
        &["--now", T1, "webhook", "deliver", "--once"],
        &[ENDPOINTS],
    );
    assert!(!receiver.requests().is_empty(), "nothing was delivered");
}

#[test]
fn a_sync_that_publishes_survives_power_loss() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&bundled_document("2026-11-20T09:00:00.000Z", 12), "\"v1\"");
    let w = World::new();
    let url = up.url("/records.json");
    w.run(&["--now", T0, "sync", "--once", "--upstream", &url])
        .success();
    up.serve(&bundled_document("2026-11-20T10:30:00.000Z", 14), "\"v2\"");
    every_state_reads_as_before_or_after(
        &w,
        &["--now", T1, "sync", "--once", "--upstream", &url],
        &[SERVED, SYNC_STATE],
    );
}

#[test]
fn rollback_and_prune_survive_power_loss() {
    let w = World::new();
    w.seed_bundled();
    w.run(&["--now", T0, "publish"]).success();
    w.run(&["--now", T1, "publish"]).success();
    every_state_reads_as_before_or_after(
        &w,
        &["--now", T2, "snapshots", "rollback", "1"],
        &[SERVED],
    );
    every_state_reads_as_before_or_after(
        &w,
        &["snapshots", "prune", "--keep", "1"],
        &[SERVED, VERSIONS],
    );
}

#[test]
fn an_outbox_compaction_survives_power_loss() {
    let up = Upstream::start(Behavior::Status(500));
    let w = World::new();
    let url = up.url("/records.json");
    let sync = |version: usize, at: &str| {
        up.set(Behavior::Serve {
            body: crate::outbox_bound::document(version),
            etag: None,
            last_modified: None,
        });
        vec![
            "--now".to_owned(),
            at.to_owned(),
            "--keep".to_owned(),
            "2".to_owned(),
            "sync".to_owned(),
            "--once".to_owned(),
            "--upstream".to_owned(),
            url.clone(),
        ]
    };
    let (id, _) = crate::webhooks::add(&w, "http://127.0.0.1:9/hook", &[]);
    // The first sync is the baseline; the next two are told.
    for (version, at) in [
        (0, "2026-11-20T10:00:00.000Z"),
        (1, "2026-11-20T10:01:00.000Z"),
        (2, "2026-11-20T10:02:00.000Z"),
    ] {
        let args = sync(version, at);
        w.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .success();
    }
    // The only endpoint that still needed those changes goes; a new one
    // needs only what comes next, so the next publish compacts the outbox.
    w.run(&["webhook", "remove", &id]).success();
    crate::webhooks::add(&w, "http://127.0.0.1:9/other", &[]);
    let outbox = w.data_dir().join("webhooks/outbox.jsonl");
    let before = std::fs::metadata(&outbox).unwrap().len();
    let args = sync(3, T1);
    every_state_reads_as_before_or_after(
        &w,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[SERVED, ENDPOINTS],
    );
    let after = std::fs::metadata(&outbox).unwrap().len();
    assert!(
        before > 1024 * 1024 && after < before,
        "the outbox was not compacted: {before} bytes, then {after}"
    );
}
