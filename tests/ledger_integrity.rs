//! The operator ledger never holds what it must not: a failed append, an
//! entry whose records cannot be published, a duplicated id or entry
//! number; an appended entry that did not publish is said, shown and healed;
//! and nothing an operator or upstream typed can drive the terminal.

use serde_json::Value;

use crate::util::disk::{world_on, SmallDisk};
use crate::util::server::Server;
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn record(w: &World, args: &[&str]) -> crate::util::Run {
    let mut all = vec!["--now", NOW, "record"];
    all.extend_from_slice(args);
    w.run(&all)
}

fn ledger(w: &World) -> Vec<u8> {
    std::fs::read(w.data_dir().join("ledger.jsonl")).unwrap_or_default()
}

fn log_entries(w: &World) -> Vec<Value> {
    let out = w
        .run(&["--now", NOW, "record", "log", "--json"])
        .success()
        .stdout;
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// An operator text that makes the first ledger line end just short of a
/// page, so the next append must take a new page from the disk.
fn padding(target_line: usize) -> String {
    "x".repeat(target_line)
}

#[test]
fn a_failed_append_leaves_the_ledger_as_it_was_and_numbers_stay_unique() {
    let disk = SmallDisk::mount(128);
    let w = world_on(&disk);
    let data = w.data_dir();
    let schedule = |text: &str| {
        w.run(&[
            "--now",
            NOW,
            "record",
            "schedule",
            "--operator",
            "--at",
            "2026-11-21T10:00:00Z",
            "--text",
            text,
        ])
    };
    schedule("first").success();
    // Pad the ledger to just under one page: the next line needs a new page.
    let len = std::fs::metadata(data.join("ledger.jsonl")).unwrap().len() as usize;
    let line = len; // one line so far
    let pad = padding(4096 - 2 * line - 40);
    schedule(&pad).success();
    let before = std::fs::read_to_string(data.join("ledger.jsonl")).unwrap();
    assert!(
        before.len() < 4096 && before.len() > 3000,
        "{}",
        before.len()
    );
    let filler = disk.fill();
    let failed = schedule(&"y".repeat(600)).code(74);
    assert!(
        failed.stderr.contains("No space left on device"),
        "{}",
        failed.stderr
    );
    let after =
        String::from_utf8_lossy(&std::fs::read(data.join("ledger.jsonl")).unwrap()).into_owned();
    assert!(
        after == before,
        "the failed append left bytes behind: {:?}",
        &after[before.len().min(after.len())..]
    );
    std::fs::remove_file(filler).unwrap();
    schedule("after the disk was freed").success();
    w.run(&["--now", NOW, "record", "undo", "3"]).success();
    let log = w
        .run(&["--now", NOW, "record", "log", "--json"])
        .success()
        .stdout;
    let numbers: Vec<u64> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["entry"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(numbers, [4, 3, 2, 1], "unique numbers, newest first");
    let list = w
        .run(&["--now", NOW, "record", "list", "--json"])
        .success()
        .json();
    let undone = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"].as_str().unwrap().starts_with("undone"))
        .count();
    assert_eq!(undone, 1, "undo 3 undid exactly one record: {list}");
}

#[test]
fn an_entry_that_did_not_publish_is_said_shown_and_healed() {
    let disk = SmallDisk::mount(128);
    let w = world_on(&disk);
    let run = |args: &[&str]| {
        let mut all = vec!["--now", NOW];
        all.extend_from_slice(args);
        w.run(&all)
    };
    run(&[
        "record",
        "schedule",
        "--post-url",
        "https://x.com/ops/status/2090000000000000001",
        "--at",
        "2026-11-21T10:00:00Z",
    ])
    .success();
    // The ledger's page has room for one more line; the snapshot needs new pages.
    let filler = disk.fill();
    let failed = run(&[
        "record",
        "schedule",
        "--post-url",
        "https://x.com/ops/status/2090000000000000002",
        "--at",
        "2026-11-22T10:00:00Z",
    ])
    .code(74);
    assert!(
        failed
            .stderr
            .contains("entry 2 recorded; publishing failed:")
            && failed.stderr.contains("run `resetctl publish`"),
        "{}",
        failed.stderr
    );
    let list = run(&["record", "list"]).success().stdout;
    let line = list
        .lines()
        .find(|l| l.contains("2090000000000000002"))
        .unwrap();
    assert!(line.contains("recorded, not published yet"), "{list}");
    let status = run(&["status", "--json"]).success().json();
    assert_eq!(status["ledger"]["unpublished"], 1, "{status}");
    assert_eq!(status["ledger"]["publishedThrough"], 1);
    assert!(run(&["status"])
        .success()
        .stdout
        .contains("1 entries recorded but not published"));
    std::fs::remove_file(filler).unwrap();
    // The retry is refused (the entry exists), but the instance heals: any
    // standalone command publishes what the ledger holds.
    let retry = run(&[
        "record",
        "schedule",
        "--post-url",
        "https://x.com/ops/status/2090000000000000002",
        "--at",
        "2026-11-22T10:00:00Z",
    ])
    .code(64);
    assert!(
        retry.stderr.contains("already exists (entry 2)"),
        "{}",
        retry.stderr
    );
    run(&["seed"]).success();
    let status = run(&["status", "--json"]).success().json();
    assert_eq!(status["ledger"]["unpublished"], 0, "{status}");
    let list = run(&["record", "list"]).success().stdout;
    assert!(!list.contains("not published"), "{list}");
    let s = Server::start(&w, &["--now", NOW], &[]);
    let body = s.get("/openapi/v1/records?kind=reset_scheduled").json();
    let ids: Vec<&str> = body["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"2090000000000000002"), "{ids:?}");
}

#[test]
fn the_server_republish_heals_an_unpublished_entry() {
    let w = World::new();
    record(
        &w,
        &["schedule", "--operator", "--at", "2026-11-21T10:00:00Z"],
    )
    .success();
    // An entry appended by a command that died before publishing.
    let entry = r#"{"entry":2,"at":"2026-11-20T10:00:00.000Z","actor":"ops","action":{"type":"checked","at":"2026-11-20T09:59:00.000Z"}}"#;
    let mut bytes = ledger(&w);
    bytes.extend_from_slice(entry.as_bytes());
    bytes.push(b'\n');
    std::fs::write(w.data_dir().join("ledger.jsonl"), bytes).unwrap();
    let s = Server::start(
        &w,
        &["--now", NOW, "--republish", "--republish-every", "0.2"],
        &[],
    );
    let healed = s.wait_for(
        "/openapi/v1/records/latest",
        std::time::Duration::from_secs(10),
        |r| r.json()["meta"]["lastSuccessfulCheckAt"] == "2026-11-20T09:59:00.000Z",
    );
    assert_eq!(healed.status, 200);
}

#[test]
fn concurrent_manual_completions_get_distinct_ids_and_the_instance_stays_usable() {
    let w = World::new();
    let mut schedules = Vec::new();
    for i in 1..=6 {
        let id = format!("209000000000000000{i}");
        record(
            &w,
            &[
                "schedule",
                "--post-url",
                &format!("https://x.com/ops/status/{id}"),
                "--at",
                "2026-11-21T10:00:00Z",
            ],
        )
        .success();
        schedules.push(id);
    }
    let children: Vec<_> = schedules
        .iter()
        .map(|id| {
            w.cmd()
                .args([
                    "--now",
                    NOW,
                    "--lock-timeout",
                    "60",
                    "record",
                    "complete",
                    id,
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = crate::util::Run::from(child.wait_with_output().unwrap());
        out.success();
    }
    let entries = log_entries(&w);
    let mut manual_ids: Vec<String> = entries
        .iter()
        .filter(|e| e["action"]["type"] == "complete")
        .map(|e| e["action"]["id"].as_str().unwrap().to_owned())
        .collect();
    manual_ids.sort();
    manual_ids.dedup();
    assert_eq!(manual_ids.len(), 6, "{manual_ids:?}");
    w.run(&["--now", NOW, "publish"]).success();
    record(
        &w,
        &["schedule", "--operator", "--at", "2026-11-23T10:00:00Z"],
    )
    .success();
}

#[test]
fn a_schedule_whose_window_cannot_be_written_is_refused_and_numbers_are_not_reused() {
    let w = World::new();
    let refused = record(
        &w,
        &[
            "schedule",
            "--operator",
            "--date",
            "9999-12-31",
            "--tz",
            "UTC",
        ],
    )
    .code(64);
    assert!(
        refused.stderr.contains("nothing was recorded")
            && refused.stderr.contains("scheduleWindow.endAt"),
        "{}",
        refused.stderr
    );
    assert!(ledger(&w).is_empty(), "nothing appended");
    record(
        &w,
        &["schedule", "--operator", "--at", "2026-11-21T10:00:00Z"],
    )
    .success();
    let entries = log_entries(&w);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["entry"], 1);
    w.run(&["--now", NOW, "status"]).success();
    w.run(&["export"]).success();
}

#[test]
fn control_characters_from_operators_are_escaped_in_human_output() {
    let w = World::new();
    let actor = "ops\u{1b}[2J\u{1b}[31mFAKE\u{9b}";
    record(
        &w,
        &[
            "schedule",
            "--operator",
            "--at",
            "2026-11-21T10:00:00Z",
            "--actor",
            actor,
            "--text",
            "bell\u{7}",
        ],
    )
    .success();
    for args in [
        vec!["--now", NOW, "record", "log"],
        vec!["--now", NOW, "record", "list"],
        vec!["--now", NOW, "record", "log", "--json"],
    ] {
        let out = w.run(&args).success().stdout;
        assert!(
            !out.chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{args:?} printed a control character: {out:?}"
        );
    }
    let log = w.run(&["--now", NOW, "record", "log"]).success().stdout;
    assert!(log.contains("ops\\u001b[2J\\u001b[31mFAKE\\u009b"), "{log}");
    // JSON output stays JSON with the same meaning.
    let json = w
        .run(&["--now", NOW, "record", "log", "--json"])
        .success()
        .stdout;
    let entry: Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(entry["actor"], actor);
    let id = entry["action"]["record"]["id"].as_str().unwrap().to_owned();
    let show = w
        .run(&["--now", NOW, "record", "show", &id])
        .success()
        .stdout;
    assert!(
        show.contains("bell\\u0007") && !show.contains('\u{7}'),
        "{show}"
    );
}

#[test]
fn an_entry_line_spaced_by_hand_still_reserves_its_number() {
    let w = World::new();
    record(
        &w,
        &["schedule", "--operator", "--at", "2026-11-21T10:00:00Z"],
    )
    .success();
    // An operator repaired a line by hand: valid JSON, but not in the writer's spacing.
    let mut bytes = ledger(&w);
    bytes.extend_from_slice(
        br#"{ "entry": 9, "at": "2026-11-20T10:00:00.000Z", "actor": "ops", "action": {"type": "checked", "at": "2026-11-20T09:59:00.000Z"}}"#,
    );
    bytes.push(b'\n');
    std::fs::write(w.data_dir().join("ledger.jsonl"), bytes).unwrap();
    record(
        &w,
        &[
            "complete",
            log_entries(&w)[1]["action"]["record"]["id"]
                .as_str()
                .unwrap(),
        ],
    )
    .success();
    let numbers: Vec<u64> = log_entries(&w)
        .iter()
        .map(|e| e["entry"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [10, 9, 1]);
    let completion = &log_entries(&w)[0]["action"]["id"];
    assert_eq!(completion, "manual:entry-10");
}

/// One changed byte in a middle line is corruption, not a torn append: every
/// command that publishes refuses (exit 65, naming the line and what to
/// do), nothing is published or announced, `status` says so, and `record
/// log` still shows the ledger for the repair.
#[test]
fn a_corrupt_middle_line_refuses_every_publishing_command_and_announces_nothing() {
    let w = World::new();
    w.seed_bundled();
    let receiver = crate::util::receiver::Receiver::start();
    crate::webhooks::add(&w, &receiver.url("/hook"), &[]);
    for (post, at) in [
        ("700", "2026-11-24T10:00:00Z"),
        ("701", "2026-11-25T10:00:00Z"),
    ] {
        record(
            &w,
            &[
                "schedule",
                "--post-url",
                &format!("https://x.com/h/status/{post}"),
                "--at",
                at,
            ],
        )
        .success();
    }
    let path = w.data_dir().join("ledger.jsonl");
    let mut bytes = ledger(&w);
    let first_line_end = bytes.iter().position(|b| *b == b'\n').unwrap();
    let inside = bytes[..first_line_end]
        .windows(4)
        .position(|w| w == b"h/st")
        .expect("the first entry names its post");
    bytes[inside] = 0;
    std::fs::write(&path, &bytes).unwrap();
    let snapshots_before = std::fs::read_dir(w.data_dir().join("snapshots"))
        .unwrap()
        .count();
    let outbox = w.data_dir().join("webhooks/outbox.jsonl");
    let outbox_before = std::fs::read(&outbox).unwrap_or_default();
    for args in [
        &["publish"][..],
        &["seed"][..],
        &["mark-checked"][..],
        &["record", "dismiss", "700"][..],
        &[
            "record",
            "schedule",
            "--post-url",
            "https://x.com/h/status/702",
            "--at",
            "2026-11-26T10:00:00Z",
        ][..],
    ] {
        let mut all = vec!["--now", NOW];
        all.extend_from_slice(args);
        let refused = w.run(&all).code(65);
        assert!(
            refused.stderr.contains("ledger.jsonl line 1 is corrupt")
                && refused
                    .stderr
                    .contains("Restore ledger.jsonl from a backup"),
            "{args:?}: {}",
            refused.stderr
        );
    }
    assert_eq!(ledger(&w), bytes, "nothing appended");
    assert_eq!(
        std::fs::read_dir(w.data_dir().join("snapshots"))
            .unwrap()
            .count(),
        snapshots_before,
        "nothing published"
    );
    assert_eq!(
        std::fs::read(&outbox).unwrap_or_default(),
        outbox_before,
        "nothing announced"
    );
    let status = w.run(&["--now", NOW, "status"]);
    assert!(
        status
            .stdout
            .contains("CORRUPT:         ledger.jsonl line 1 is corrupt"),
        "{}",
        status.stdout
    );
    let json = w.run(&["--now", NOW, "status", "--json"]).json();
    assert!(
        json["ledger"]["corrupt"]
            .as_str()
            .unwrap()
            .contains("line 1"),
        "{json}"
    );
    assert_eq!(
        json["ledger"]["tornLines"], 0,
        "it is not called a torn append"
    );
    let log = w.run(&["--now", NOW, "record", "log"]).success();
    assert!(log.stderr.contains("line 1 is corrupt"), "{}", log.stderr);
    assert_eq!(
        log.stdout.lines().count(),
        1,
        "the intact entry: {}",
        log.stdout
    );
    // A middle line cut short (its closing brace gone) is corrupt too, not
    // a torn append: only the last line can be one.
    bytes[inside] = b'h';
    let mut cut = bytes.clone();
    cut.remove(first_line_end - 1);
    std::fs::write(&path, &cut).unwrap();
    let refused = w.run(&["--now", NOW, "publish"]).code(65);
    assert!(
        refused.stderr.contains("ledger.jsonl line 1 is corrupt"),
        "{}",
        refused.stderr
    );
    // Repaired, everything publishes again.
    std::fs::write(&path, &bytes).unwrap();
    w.run(&["--now", NOW, "publish"]).success();
}

/// Issue 39, item 6: one changed digit in an entry's date is corruption,
/// found by the check every line carries: every command that publishes
/// refuses naming the line, and nothing of the changed entry is served.
/// A ledger written before checks (or a line corrected by hand, its check
/// removed) is read, and the next append writes a check on every line.
#[test]
fn a_changed_byte_fails_its_lines_check_and_unchecked_lines_get_one() {
    let w = World::new();
    record(
        &w,
        &["schedule", "--operator", "--at", "2026-12-21 12:00 +00:00"],
    )
    .success();
    w.run(&["--now", NOW, "mark-checked", "--at", "2026-11-20T09:59:00Z"])
        .success();
    let path = w.data_dir().join("ledger.jsonl");
    let text = String::from_utf8(ledger(&w)).unwrap();
    std::fs::write(&path, text.replacen("2026-12-21T12", "2026-12-28T12", 1)).unwrap();
    for args in [&["--now", NOW, "publish"][..], &["record", "list"]] {
        let refused = w.run(args).code(65);
        assert!(
            refused.stderr.contains("ledger.jsonl line 1 is corrupt")
                && refused.stderr.contains("do not match its check"),
            "{args:?}: {}",
            refused.stderr
        );
    }
    let status = w.run(&["status"]);
    assert!(status.stdout.contains("CORRUPT:"), "{}", status.stdout);
    let served = w.run(&["export"]).success().stdout;
    assert!(
        served.contains("2026-12-21T12") && !served.contains("2026-12-28"),
        "the changed date was published"
    );

    assert!(
        text.lines()
            .all(|l| l.contains(",\"check\":\"") && l.ends_with("\"}")),
        "{text}"
    );
    // The same ledger as an older version wrote it: no checks.
    let unchecked: String = text
        .lines()
        .map(|l| {
            let at = l.rfind(",\"check\":\"").unwrap();
            format!("{}}}\n", &l[..at])
        })
        .collect();
    std::fs::write(&path, &unchecked).unwrap();
    w.run(&["--now", NOW, "publish"]).success();
    w.run(&["--now", NOW, "mark-checked", "--at", "2026-11-20T09:59:30Z"])
        .success();
    let upgraded = String::from_utf8(ledger(&w)).unwrap();
    assert_eq!(upgraded.lines().count(), 3, "{upgraded}");
    assert!(
        upgraded.lines().all(|l| l.contains(",\"check\":\"")),
        "{upgraded}"
    );
    assert!(upgraded.starts_with(&unchecked.lines().next().unwrap()[..40]));
    // Now checked, a changed byte in an old line is found too.
    std::fs::write(
        &path,
        upgraded.replacen("2026-12-21T12", "2026-12-28T12", 1),
    )
    .unwrap();
    w.run(&["--now", NOW, "publish"]).code(65);
}

/// A line whose check member is damaged (a digit that is not hex) is
/// corruption, never read as a line without a check: otherwise a changed
/// byte plus a damaged check would publish the changed entry.
#[test]
fn a_damaged_check_member_is_corruption_not_an_unchecked_line() {
    let w = World::new();
    record(
        &w,
        &["schedule", "--operator", "--at", "2026-12-21 12:00 +00:00"],
    )
    .success();
    let path = w.data_dir().join("ledger.jsonl");
    let text = String::from_utf8(ledger(&w)).unwrap();
    let at = text.find(",\"check\":\"").unwrap() + ",\"check\":\"".len();
    let mut damaged = text.replacen("2026-12-21T12", "2026-12-28T12", 1);
    damaged.replace_range(at..at + 1, "g");
    std::fs::write(&path, damaged).unwrap();
    for args in [&["--now", NOW, "publish"][..], &["record", "list"]] {
        let refused = w.run(args).code(65);
        assert!(
            refused.stderr.contains("ledger.jsonl line 1 is corrupt")
                && refused
                    .stderr
                    .contains("it has no valid check, and a member \"check\" no entry has"),
            "{args:?}: {}",
            refused.stderr
        );
    }
    let served = w.run(&["export"]).success().stdout;
    assert!(
        !served.contains("2026-12-28"),
        "the changed date was published"
    );
}
