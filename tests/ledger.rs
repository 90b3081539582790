//! Standalone mode: the operator ledger through the real binary, a whole
//! story with a fake clock checked against the served API at each step,
//! every refusal, torn lines and SIGKILL during `record`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::{Rng, World};

fn post(id: &str) -> String {
    format!("https://x.com/ops/status/{id}")
}

/// Runs a record command at `now`; returns the published sequence.
fn record(w: &World, now: &str, args: &[&str]) -> u64 {
    let mut all = vec!["--now", now, "record"];
    all.extend_from_slice(args);
    let out = w.run(&all).success().stdout;
    out.rsplit("published snapshot ")
        .next()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn ids(body: &Value) -> Vec<String> {
    body["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

fn find(body: &Value, id: &str) -> Value {
    body["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Waits until the server serves `seq`, then returns (all, scheduled, completed) lists.
fn served(s: &Server, seq: u64) -> (Value, Value, Value) {
    s.wait_for("/healthz", Duration::from_secs(5), |r| {
        r.json()["sequence"] == seq
    });
    let get = |kind: &str| s.get(&format!("/openapi/v1/records?kind={kind}")).json();
    (get("all"), get("reset_scheduled"), get("reset_completed"))
}

#[test]
fn a_whole_story_with_a_fake_clock() {
    let w = World::new();
    let s = Server::start(&w, &["--no-rate-limit"], &[]);
    // 1. A schedule is announced: pending, first in `all`.
    let seq = record(
        &w,
        "2026-11-20T10:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post("100"),
            "--at",
            "2026-11-21 12:00 +00:00",
            "--scope-plans",
            "all",
            "--confidence",
            "0.9",
            "--text",
            "Reset tomorrow at noon UTC",
        ],
    );
    let (all, _, _) = served(&s, seq);
    assert_eq!(
        find(&all, "100"),
        json!({
            "id": "100", "kind": "reset_scheduled", "resetType": "global",
            "announcedAt": "2026-11-20T10:00:00.000Z", "effectiveAt": "2026-11-21T12:00:00.000Z",
            "text": "Reset tomorrow at noon UTC", "confidence": 0.9,
            "scope": {"plans": ["all"], "windows": ["unknown"]},
            "source": {"origin": "x", "postId": "100", "handle": "ops", "url": "https://x.com/ops/status/100"},
            "schedulePrecision": "datetime", "scheduleBasis": "explicit",
            "scheduleWindow": {"startAt": "2026-11-21T12:00:00.000Z", "endAt": "2026-11-21T12:00:00.000Z"},
            "scheduleState": "pending", "completedAt": null, "completionRecordId": null,
            "fulfillmentOrigin": null, "relatedRecordIds": []
        })
    );
    // 2. Another schedule whose window will pass, and a date schedule (civil day in a zone).
    record(
        &w,
        "2026-11-20T10:05:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post("200"),
            "--window",
            "2026-11-20T12:00:00Z",
            "2026-11-20T14:00:00Z",
        ],
    );
    let seq = record(
        &w,
        "2026-11-20T10:10:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post("300"),
            "--date",
            "2026-11-23",
            "--tz",
            "America/Los_Angeles",
            "--basis",
            "contextual_inference",
        ],
    );
    let (all, _, _) = served(&s, seq);
    assert_eq!(
        ids(&all),
        ["200", "100", "300"],
        "pending schedules, soonest window first"
    );
    assert_eq!(
        find(&all, "300")["scheduleWindow"],
        json!({"startAt": "2026-11-23T08:00:00.000Z", "endAt": "2026-11-24T08:00:00.000Z"})
    );
    assert_eq!(find(&all, "300")["schedulePrecision"], "date");

    // 3. A completion post arrives inside 100's window (+ tolerance): auto-fulfilled.
    let seq = record(
        &w,
        "2026-11-21T12:30:00.000Z",
        &[
            "completion",
            "--post-url",
            &post("101"),
            "--at",
            "2026-11-21T12:10:00Z",
        ],
    );
    let (all, scheduled, completed) = served(&s, seq);
    assert!(
        !ids(&all).contains(&"100".to_owned()),
        "a fulfilled schedule leaves `all`"
    );
    let hundred = find(&scheduled, "100");
    assert_eq!(hundred["scheduleState"], "fulfilled");
    assert_eq!(hundred["completedAt"], "2026-11-21T12:10:00.000Z");
    assert_eq!(hundred["completionRecordId"], "101");
    assert_eq!(hundred["fulfillmentOrigin"], "auto");
    assert_eq!(find(&completed, "101")["relatedRecordIds"], json!(["100"]));
    // 200's window passed with no completion: elapsed.
    assert_eq!(find(&scheduled, "200")["scheduleState"], "elapsed");
    assert_eq!(ids(&all), ["300", "101", "200"]);

    // 4. 300 is completed manually.
    let seq = record(
        &w,
        "2026-11-23T20:00:00.000Z",
        &["complete", "300", "--at", "2026-11-23T19:00:00Z"],
    );
    let (_, scheduled, completed) = served(&s, seq);
    let manual_id = "manual:entry-5";
    assert_eq!(find(&scheduled, "300")["fulfillmentOrigin"], "manual");
    assert_eq!(find(&scheduled, "300")["completionRecordId"], manual_id);
    assert_eq!(
        find(&completed, manual_id),
        json!({
            "id": manual_id, "kind": "reset_completed", "resetType": "global",
            "announcedAt": null, "effectiveAt": "2026-11-23T19:00:00.000Z", "text": null, "confidence": null, "scope": null,
            "source": {"origin": "operator", "postId": null, "handle": null, "url": null},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
            "completedAt": "2026-11-23T19:00:00.000Z", "completionRecordId": null,
            "fulfillmentOrigin": "manual", "relatedRecordIds": ["300"]
        })
    );

    // 5. A schedule is dismissed: in no filter; the ledger keeps it.
    record(
        &w,
        "2026-11-23T20:01:00.000Z",
        &[
            "schedule",
            "--operator",
            "--at",
            "2026-11-30T00:00:00Z",
            "--text",
            "Operator note: maybe",
        ],
    );
    let op_id = w
        .run(&["record", "list", "--json"])
        .success()
        .json()
        .as_array()
        .unwrap()
        .last()
        .unwrap()["record"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(op_id.starts_with("op_") && op_id.len() == 27, "{op_id}");
    let seq = record(&w, "2026-11-23T20:02:00.000Z", &["dismiss", &op_id]);
    let (all, scheduled, _) = served(&s, seq);
    assert!(!ids(&all).contains(&op_id) && !ids(&scheduled).contains(&op_id));
    let list = w.run(&["record", "list"]).success().stdout;
    assert!(
        list.lines()
            .any(|l| l.starts_with(&op_id) && l.ends_with("[dismissed (entry 7)]")),
        "{list}"
    );

    // 6. One entry is undone: the manual completion of 300 goes, 300 is pending again.
    let seq = record(&w, "2026-11-23T20:03:00.000Z", &["undo", "5"]);
    let (all, _, completed) = served(&s, seq);
    assert_eq!(find(&all, "300")["scheduleState"], "pending");
    assert_eq!(find(&completed, manual_id), Value::Null);
    let shown = w.run(&["record", "show", manual_id]).success().stdout;
    assert!(shown.starts_with("status: undone (entry 8)\n"), "{shown}");

    // 7. An operator link, then unlink (which also blocks the automatic match).
    let seq = record(&w, "2026-11-23T20:04:00.000Z", &["link", "101", "200"]);
    let (_, scheduled, completed) = served(&s, seq);
    assert_eq!(find(&scheduled, "200")["fulfillmentOrigin"], "link");
    assert_eq!(
        find(&completed, "101")["relatedRecordIds"],
        json!(["100", "200"])
    );
    let seq = record(&w, "2026-11-23T20:05:00.000Z", &["unlink", "101", "100"]);
    let (_, scheduled, completed) = served(&s, seq);
    assert_eq!(find(&scheduled, "100")["scheduleState"], "elapsed");
    assert_eq!(find(&completed, "101")["relatedRecordIds"], json!(["200"]));

    // 8. Edit and mark-checked.
    let seq = record(
        &w,
        "2026-11-23T20:06:00.000Z",
        &[
            "edit",
            "101",
            "--text",
            "Limits reset",
            "--confidence",
            "0.8",
        ],
    );
    served(&s, seq);
    let out = w
        .run(&[
            "--now",
            "2026-11-23T20:07:00.000Z",
            "mark-checked",
            "--at",
            "2026-11-23 12:06 -08:00",
        ])
        .success()
        .stdout;
    let seq: u64 = out
        .rsplit("published snapshot ")
        .next()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (_, _, completed) = served(&s, seq);
    assert_eq!(find(&completed, "101")["text"], "Limits reset");
    assert_eq!(
        completed["meta"]["lastSuccessfulCheckAt"],
        "2026-11-23T20:06:00.000Z"
    );
    assert!(completed["meta"].get("dataSource").is_none());

    // The log, newest first, with who and when.
    let log = w.run(&["record", "log"]).success().stdout;
    let first = log.lines().next().unwrap();
    assert!(
        first.starts_with("   12  2026-11-23T20:07:00.000Z")
            && first.ends_with("monitor check at 2026-11-23T20:06:00.000Z"),
        "{first}"
    );
    assert_eq!(log.lines().count(), 12);
    assert!(log
        .lines()
        .last()
        .unwrap()
        .ends_with("add reset_scheduled 100"));
}

#[test]
fn every_refusal_names_the_problem_and_changes_nothing() {
    let w = World::new();
    record(
        &w,
        "2026-11-20T10:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post("100"),
            "--at",
            "2026-11-21T12:00:00Z",
        ],
    );
    record(
        &w,
        "2026-11-20T10:00:00.000Z",
        &["completion", "--post-url", &post("101")],
    );
    let ledger = std::fs::read(w.data_dir().join("ledger.jsonl")).unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &[
                "schedule",
                "--post-url",
                "https://x.com/ops/status/102",
                "--at",
                "2026-11-21 12:00",
            ],
            64,
            "\"2026-11-21 12:00\" has no UTC offset",
        ),
        (
            &[
                "schedule",
                "--post-url",
                "https://x.com/ops/status/100",
                "--at",
                "2026-11-21T12:00:00Z",
            ],
            64,
            "a record with id 100 already exists (entry 1)",
        ),
        (
            &[
                "schedule",
                "--post-url",
                "https://example.org/p/1",
                "--at",
                "2026-11-21T12:00:00Z",
            ],
            64,
            "is not a post URL like https://x.com/HANDLE/status/1234567890",
        ),
        (
            &["schedule", "--post-url", &post("103")],
            64,
            "give one of --at TIME, --date YYYY-MM-DD --tz AREA/CITY, or --window START END",
        ),
        (
            &[
                "schedule",
                "--post-url",
                &post("103"),
                "--date",
                "2026-11-21",
                "--tz",
                "Mars/Olympus",
            ],
            64,
            "--tz \"Mars/Olympus\" is not a time zone",
        ),
        (
            &[
                "schedule",
                "--post-url",
                &post("103"),
                "--window",
                "2026-11-21T12:00:00Z",
                "2026-11-21T10:00:00Z",
            ],
            64,
            "is after END",
        ),
        (
            &[
                "schedule",
                "--post-url",
                &post("103"),
                "--at",
                "2026-11-21T12:00:00Z",
                "--confidence",
                "2",
            ],
            64,
            "--confidence must be between 0 and 1, got 2",
        ),
        (
            &[
                "schedule",
                "--post-url",
                &post("103"),
                "--at",
                "2026-11-21T12:00:00Z",
                "--type",
                "partial",
            ],
            64,
            "--type \"partial\" must be global, banked or global_and_banked",
        ),
        (
            &[
                "schedule",
                "--post-url",
                &post("103"),
                "--at",
                "2026-11-21T12:00:00Z",
                "--basis",
                "guess",
            ],
            64,
            "--basis \"guess\" must be explicit or contextual_inference",
        ),
        (
            &[
                "schedule",
                "--operator",
                "--post-url",
                &post("103"),
                "--at",
                "2026-11-21T12:00:00Z",
            ],
            64,
            "cannot be used with",
        ),
        (&["dismiss", "999"], 64, "no record with id \"999\""),
        (
            &["complete", "101"],
            64,
            "101 is a reset_completed, not a reset_scheduled (complete takes schedules)",
        ),
        (
            &["link", "100", "101"],
            64,
            "100 is a reset_scheduled, not a reset_completed (the first id is the completion)",
        ),
        (&["unlink", "101", "100"], 64, "100 is not linked to 101"),
        (&["undo", "42"], 64, "no ledger entry 42"),
        (&["edit", "100"], 64, "nothing to change"),
        (
            &["edit", "100", "--confidence", "-1"],
            64,
            "--confidence must be between 0 and 1, got -1",
        ),
    ];
    for (args, code, needle) in cases {
        let mut all = vec!["--now", "2026-11-20T11:00:00.000Z", "record"];
        all.extend_from_slice(args);
        let run = w.run(&all);
        assert_eq!(run.code, *code, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(needle),
            "{args:?}: expected {needle:?} in {}",
            run.stderr
        );
    }
    assert_eq!(
        std::fs::read(w.data_dir().join("ledger.jsonl")).unwrap(),
        ledger,
        "no refusal wrote to the ledger"
    );
    assert_eq!(
        w.run(&["snapshots", "list", "--json"])
            .success()
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Undo twice, and undoing an undo.
    record(&w, "2026-11-20T11:00:00.000Z", &["undo", "2"]);
    assert!(w
        .run(&["record", "undo", "2"])
        .code(64)
        .stderr
        .contains("entry 2 was already undone by entry 3"));
    assert!(w
        .run(&["record", "undo", "3"])
        .code(64)
        .stderr
        .contains("entry 3 is itself an undo"));
    assert!(w
        .run(&["record", "dismiss", "101"])
        .code(64)
        .stderr
        .contains("101 was undone (entry 3)"));
}

#[test]
fn a_torn_last_line_is_reported_and_cut_off_by_the_next_append() {
    let w = World::new();
    record(
        &w,
        "2026-11-20T10:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post("100"),
            "--at",
            "2026-11-21T12:00:00Z",
        ],
    );
    record(
        &w,
        "2026-11-20T10:01:00.000Z",
        &["completion", "--post-url", &post("101")],
    );
    let path = w.data_dir().join("ledger.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"entry\":3,\"at\":\"2026-11-20T10:0");
    std::fs::write(&path, &bytes).unwrap();
    let log = w.run(&["record", "log"]).success();
    assert!(log.stderr.contains("resetctl: warning: ledger.jsonl line 3 is not a complete entry (no line end: the append did not finish"), "{}", log.stderr);
    assert_eq!(log.stdout.lines().count(), 2, "entries 1 and 2 stay valid");
    // The next append cuts the torn line off (no command reported it done)
    // and goes on; the new entry's number is past the torn line's.
    record(&w, "2026-11-20T10:02:00.000Z", &["dismiss", "101"]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("{\"entry\":3,"), "{text}");
    assert!(
        text.ends_with("}\n") && text.contains("{\"entry\":4,"),
        "{text}"
    );
    let log = w.run(&["record", "log"]).success();
    assert!(
        !log.stderr.contains("not a complete entry"),
        "{}",
        log.stderr
    );
    assert_eq!(log.stdout.lines().count(), 3);
    assert!(log.stdout.lines().next().unwrap().ends_with("dismiss 101"));
}

#[test]
fn sigkill_during_record_commands_loses_no_acknowledged_entry() {
    use crate::util::{trace, wait_for_step};
    use std::time::Instant;
    let w = World::new();
    let mut rng = Rng::from_time();
    // Entries whose append was fsynced (traced `append:done`, src/testhook.rs),
    // acknowledged (exit 0) or not.
    let mut durable = Vec::new();
    let (mut finished, mut paused_inside, mut random_kills, mut random_inside) = (0, 0, 0, 0);
    // How long a record command's writes take (append begun → pointer moved),
    // re-measured every third round.
    let mut span = Duration::from_millis(20);
    for i in 0..120u64 {
        let id = (1000 + i).to_string();
        let url = post(&id);
        let path = w.path(&format!("trace-{i}"));
        let mut cmd = w.cmd();
        cmd.args(["record", "completion", "--post-url", &url])
            .env("RESETCTL_TEST_TRACE", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if i % 6 == 1 {
            // Killed exactly after the fsync, before the command acknowledges.
            cmd.env("RESETCTL_TEST_PAUSE_AT", "append:done");
        }
        let mut child = cmd.spawn().unwrap();
        assert!(
            wait_for_step(&mut child, &path, "append:begin"),
            "{i}: the append never began; trace {:?}",
            trace(&path)
        );
        let began = Instant::now();
        match i % 3 {
            0 => {
                assert!(wait_for_step(&mut child, &path, "publish:pointer-moved"));
                span = began.elapsed().max(Duration::from_millis(1));
                assert!(
                    child.wait().unwrap().success(),
                    "{i}: an uninterrupted record failed"
                );
                finished += 1;
            }
            _ if i % 6 == 1 => {
                assert!(wait_for_step(&mut child, &path, "append:done"));
                child.kill().unwrap();
                child.wait().unwrap();
                assert_eq!(trace(&path), ["append:begin", "append:done"]);
                paused_inside += 1;
            }
            _ => {
                let span_us = span.as_micros() as u64 * 6 / 5;
                std::thread::sleep(Duration::from_micros(rng.below(span_us.max(1))));
                let _ = child.kill();
                let acknowledged = child.wait().unwrap().success();
                random_kills += 1;
                let steps = trace(&path);
                if !steps.contains(&"publish:pointer-moved".to_owned()) {
                    assert!(!acknowledged, "{i}: acknowledged before publishing");
                    random_inside += 1;
                }
            }
        }
        if trace(&path).contains(&"append:done".to_owned()) {
            durable.push(id);
        }
    }
    let list = w.run(&["record", "list", "--json"]).success().json();
    let present: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["record"]["id"].as_str().unwrap().to_owned())
        .collect();
    for id in &durable {
        assert!(present.contains(id), "fsynced entry {id} lost");
    }
    eprintln!(
        "{random_inside} of {random_kills} random kills and {paused_inside} paused kills landed \
         inside a record command's writes; {finished} ran through; {} entries fsynced",
        durable.len()
    );
    assert_eq!(finished, 40);
    assert_eq!(paused_inside, 20);
    assert!(
        random_inside >= random_kills / 2,
        "only {random_inside} of {random_kills} random kills landed inside the writes"
    );
    // The ledger still takes entries, and the current snapshot loads.
    record(
        &w,
        "2026-11-20T10:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post("9999"),
            "--at",
            "2026-11-21T12:00:00Z",
        ],
    );
    w.run(&["status"]).success();
}

#[test]
fn serve_republish_turns_a_window_elapsed_without_a_command() {
    let w = World::new();
    let soon = chrono_now_plus(2);
    record(
        &w,
        &chrono_now_plus(0),
        &["schedule", "--post-url", &post("100"), "--at", &soon],
    );
    // Published as pending (read from the file, so how long the server takes
    // to start does not matter).
    let first = w.current_snapshot();
    assert_eq!(first["sequence"], 1);
    assert_eq!(first["records"][0]["scheduleState"], "pending");
    let s = Server::start(&w, &["--republish", "--republish-every", "0.5"], &[]);
    let reply = s.wait_for("/healthz", Duration::from_secs(10), |r| {
        r.json()["sequence"] == 2
    });
    assert_eq!(reply.status, 200);
    assert_eq!(
        s.get("/openapi/v1/records/latest").json()["data"]["scheduleState"],
        "elapsed"
    );
}

/// The system time plus `secs`, as the one timestamp form.
fn chrono_now_plus(secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    crate::util::chrono_like(now + secs)
}

/// A `record` command reads the history and the ledger once, and derives
/// what it publishes once before its entry and once after it (issue 41):
/// counted as the files it opens, under strace.
#[test]
fn a_record_command_reads_history_and_ledger_once() {
    let strace = crate::util::tool(&["strace"], "-V", "strace");
    let w = World::new();
    w.seed_bundled();
    record(
        &w,
        "2026-11-20T10:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post("200"),
            "--at",
            "2026-11-21 12:00 +00:00",
        ],
    );
    let log = w.path("strace.log");
    let run = crate::util::Run::from(
        std::process::Command::new(strace)
            .args(["-f", "-qq", "-e", "trace=open,openat", "-o"])
            .arg(&log)
            .arg(crate::util::bin())
            .args(w.cmd().get_args())
            .args([
                "--now",
                "2026-11-20T11:00:00.000Z",
                "record",
                "schedule",
                "--post-url",
                &post("201"),
                "--at",
                "2026-11-22 12:00 +00:00",
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", w.path("home"))
            .env(
                "RESETCTL_CONFIG",
                crate::util::own_config_path(w.tmp.path()),
            )
            .output()
            .unwrap(),
    )
    .success();
    assert!(run.stdout.contains("published snapshot"), "{}", run.stdout);
    let opened = std::fs::read_to_string(&log).unwrap();
    let opens = |name: &str| {
        opened
            .lines()
            .filter(|l| l.contains(&format!("/{name}\"")) && !l.contains("ENOENT"))
            .count()
    };
    assert_eq!(opens("history.json"), 1, "history.json opened:\n{opened}");
    // Read once; opened again only to append the entry.
    assert_eq!(opens("ledger.jsonl"), 2, "ledger.jsonl opened:\n{opened}");
}

/// What the matcher made of one schedule, as the snapshot serves it:
/// (scheduleState, completionRecordId, fulfillmentOrigin).
fn fulfilment(w: &World, id: &str) -> (String, Value, Value) {
    let snapshot = w.current_snapshot();
    let r = snapshot["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no record {id}"))
        .clone();
    (
        r["scheduleState"].as_str().unwrap().to_owned(),
        r["completionRecordId"].clone(),
        r["fulfillmentOrigin"].clone(),
    )
}

/// Time's arrow (docs/decision-records.md, "A completion fulfils only what
/// was announced before it"): with the default tolerance of 180 minutes,
/// every order of announcing a schedule for 09:30 and recording a
/// completion, and every place of the completion around the widened
/// window. Only a completion recorded after the announcement, of a reset
/// no earlier than the announcement and within the tolerance, fulfils it
/// by itself; `link` and `complete` keep their meaning either way.
#[test]
fn a_completion_fulfils_by_itself_only_a_schedule_announced_before_it_was_recorded() {
    const S: &str = "2090000000000000001";
    const C: &str = "2090000000000000002";
    let schedule = |w: &World, now: &str| {
        record(
            w,
            now,
            &[
                "schedule",
                "--post-url",
                &post(S),
                "--at",
                "2026-12-01T09:30:00Z",
            ],
        );
    };
    let complete = |w: &World, now: &str, at: &str| {
        record(w, now, &["completion", "--post-url", &post(C), "--at", at]);
    };
    let fulfilled = |origin: &str| ("fulfilled".to_owned(), json!(C), json!(origin));
    let pending = || ("pending".to_owned(), Value::Null, Value::Null);
    // (what happened, in order, at which instant) → the schedule's state.
    struct Case {
        name: &'static str,
        announce_at: &'static str,
        complete_at: &'static str,
        reset_at: &'static str,
        announce_first: bool,
    }
    let cases = [
        // Announced, then completed inside the window or the tolerance.
        Case {
            name: "on time",
            announce_at: "2026-12-01T08:00:00Z",
            complete_at: "2026-12-01T09:31:00Z",
            reset_at: "2026-12-01T09:30:40Z",
            announce_first: true,
        },
        Case {
            name: "early within the tolerance",
            announce_at: "2026-12-01T06:00:00Z",
            complete_at: "2026-12-01T06:31:00Z",
            reset_at: "2026-12-01T06:30:00Z",
            announce_first: true,
        },
        Case {
            name: "late within the tolerance",
            announce_at: "2026-12-01T08:00:00Z",
            complete_at: "2026-12-01T12:31:00Z",
            reset_at: "2026-12-01T12:30:00Z",
            announce_first: true,
        },
        // Announced first but the completion outside the widened window.
        Case {
            name: "early past the tolerance",
            announce_at: "2026-12-01T06:00:00Z",
            complete_at: "2026-12-01T06:29:00Z",
            reset_at: "2026-12-01T06:29:59Z",
            announce_first: true,
        },
        Case {
            name: "late past the tolerance",
            announce_at: "2026-12-01T08:00:00Z",
            complete_at: "2026-12-01T12:31:00Z",
            reset_at: "2026-12-01T12:30:01Z",
            announce_first: true,
        },
        // Recorded after the announcement, but of a reset before it.
        Case {
            name: "a reset before the announcement",
            announce_at: "2026-12-01T08:00:00Z",
            complete_at: "2026-12-01T08:10:00Z",
            reset_at: "2026-12-01T07:30:18Z",
            announce_first: true,
        },
        // The B2 order: a completion at 07:30:18, a schedule for 09:30 announced at 08:00.
        Case {
            name: "announced after the completion (B2)",
            announce_at: "2026-12-01T08:00:00Z",
            complete_at: "2026-12-01T07:31:00Z",
            reset_at: "2026-12-01T07:30:18Z",
            announce_first: false,
        },
        Case {
            name: "announced after a completion inside the window",
            announce_at: "2026-12-01T09:40:00Z",
            complete_at: "2026-12-01T09:35:00Z",
            reset_at: "2026-12-01T09:30:00Z",
            announce_first: false,
        },
    ];
    for case in &cases {
        let w = World::new();
        if case.announce_first {
            schedule(&w, case.announce_at);
            complete(&w, case.complete_at, case.reset_at);
        } else {
            complete(&w, case.complete_at, case.reset_at);
            schedule(&w, case.announce_at);
        }
        let expected = match case.name {
            "on time" | "early within the tolerance" | "late within the tolerance" => {
                fulfilled("auto")
            }
            _ => pending(),
        };
        // States are evaluated at the last command's instant: 09:30 has
        // not ended for the cases before it; those after it publish again
        // at 09:00 so every case reads the schedule before its window ends.
        w.run(&["--now", "2026-12-01T09:00:00.000Z", "publish"])
            .success();
        assert_eq!(fulfilment(&w, S), expected, "{}", case.name);
        // An operator's link says so whatever the order.
        if expected == pending() {
            record(&w, "2026-12-01T09:00:00Z", &["link", C, S]);
            assert_eq!(
                fulfilment(&w, S),
                fulfilled("link"),
                "{}: linked",
                case.name
            );
        }
    }
}

/// `record move`: a schedule's window changes (precision with it), the
/// move is one ledger entry that `undo` reverts, and what cannot move is
/// refused by name with nothing recorded.
#[test]
fn record_move_changes_a_schedules_window_and_undo_puts_it_back() {
    const S: &str = "2090000000000000001";
    const C: &str = "2090000000000000002";
    let w = World::new();
    record(
        &w,
        "2026-12-01T06:00:00Z",
        &[
            "schedule",
            "--post-url",
            &post(S),
            "--at",
            "2026-12-01T09:30:00Z",
        ],
    );
    let window = |w: &World| {
        let snapshot = w.current_snapshot();
        let r = snapshot["records"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == S)
            .unwrap()
            .clone();
        (
            r["scheduleWindow"].clone(),
            r["schedulePrecision"].clone(),
            r["effectiveAt"].clone(),
        )
    };
    record(
        &w,
        "2026-12-01T07:00:00Z",
        &["move", S, "--date", "2026-12-02", "--tz", "Asia/Shanghai"],
    );
    assert_eq!(
        window(&w),
        (
            json!({"startAt": "2026-12-01T16:00:00.000Z", "endAt": "2026-12-02T16:00:00.000Z"}),
            json!("date"),
            json!("2026-12-01T16:00:00.000Z")
        )
    );
    let log = w.run(&["record", "log"]).success().stdout;
    assert!(
        log.contains(
            "move 2090000000000000001 to 2026-12-01T16:00:00.000Z – 2026-12-02T16:00:00.000Z"
        ),
        "{log}"
    );
    record(&w, "2026-12-01T07:01:00Z", &["undo", "2"]);
    assert_eq!(
        window(&w),
        (
            json!({"startAt": "2026-12-01T09:30:00.000Z", "endAt": "2026-12-01T09:30:00.000Z"}),
            json!("datetime"),
            json!("2026-12-01T09:30:00.000Z")
        )
    );
    // Refusals: the same window, not a schedule, a fulfilled schedule, no time.
    record(
        &w,
        "2026-12-01T09:31:00Z",
        &[
            "completion",
            "--post-url",
            &post(C),
            "--at",
            "2026-12-01T09:30:30Z",
        ],
    );
    let entries = || {
        w.run(&["record", "log", "--json"])
            .success()
            .stdout
            .lines()
            .count()
    };
    let before = entries();
    for (args, needle) in [
        (vec!["move", C, "--at", "2026-12-01T10:00:00Z"], "2090000000000000002 is a reset_completed, not a reset_scheduled (move takes a schedule)"),
        (vec!["move", S, "--at", "2026-12-01T10:00:00Z"], "2090000000000000001 is fulfilled by 2090000000000000002: a fulfilled schedule keeps its window (unlink or undo first)"),
        (vec!["move", S], "give one of --at TIME, --date YYYY-MM-DD --tz AREA/CITY, or --window START END"),
    ] {
        let mut all = vec!["--now", "2026-12-01T09:40:00Z", "record"];
        all.extend(args.iter().copied());
        let out = w.run(&all);
        assert_ne!(out.code, 0, "{args:?}: {}", out.stdout);
        assert!(out.stderr.contains(needle), "{needle:?} not in {:?}", out.stderr);
    }
    record(&w, "2026-12-01T09:41:00Z", &["unlink", C, S]);
    let out = w.run(&[
        "--now",
        "2026-12-01T09:42:00Z",
        "record",
        "move",
        S,
        "--at",
        "2026-12-01T09:30:00Z",
    ]);
    assert!(
        out.stderr
            .contains("2090000000000000001 is already scheduled for that window"),
        "{}",
        out.stderr
    );
    assert_eq!(entries(), before + 1, "only the unlink was recorded");
}

/// `restore` refuses what it cannot use, by name, and changes nothing: a
/// directory with no backup in it, the data dir itself, a backup whose
/// ledger is damaged, a mirror.
#[test]
fn restore_refuses_what_it_cannot_use_and_changes_nothing() {
    let w = World::new();
    record(
        &w,
        "2026-12-01T08:00:00Z",
        &[
            "schedule",
            "--post-url",
            &post("2090000000000000041"),
            "--at",
            "2026-12-02T10:00:00Z",
        ],
    );
    let ledger = std::fs::read(w.data_dir().join("ledger.jsonl")).unwrap();
    let empty = w.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let damaged = w.path("damaged");
    std::fs::create_dir(&damaged).unwrap();
    let mut bad = ledger.clone();
    let at = bad.windows(4).position(|w| w == b"2026").unwrap();
    bad[at + 3] = b'7';
    std::fs::write(damaged.join("ledger.jsonl"), &bad).unwrap();
    let data = w.data_dir();
    for (dir, code, needle) in [
        (&empty, 66, "holds no ledger.jsonl or history.json of a standalone instance; extract the backup there first (tar -C DIR -xzf ARCHIVE)"),
        (&data, 64, "is the data dir itself; name the directory a backup was extracted into"),
        (&damaged, 65, "ledger.jsonl"),
    ] {
        let out = w.run(&["restore", dir.to_str().unwrap()]);
        assert_eq!(out.code, code, "{}: {}", dir.display(), out.stderr);
        assert!(out.stderr.contains(needle), "{needle:?} not in {:?}", out.stderr);
        assert_eq!(std::fs::read(w.data_dir().join("ledger.jsonl")).unwrap(), ledger);
    }
    // A mirror is rebuilt by its next sync, never restored.
    let mirror = World::new();
    mirror.publish_records(&[], "2026-12-01T08:00:00.000Z");
    std::fs::write(mirror.data_dir().join("sync-state.json"), b"{}").unwrap();
    let out = mirror.run(&["restore", data.to_str().unwrap()]);
    assert_eq!(out.code, 64, "{}", out.stderr);
    assert!(
        out.stderr.contains("is an upstream mirror"),
        "{}",
        out.stderr
    );
}
