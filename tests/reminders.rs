//! Reminders before a reset (`reset.upcoming`, `reset.window_started`,
//! `reset.window_ended`) on every push channel, on a clock the test sets:
//! `--now` for `webhook deliver --once`, RESETCTL_TEST_CLOCK_FILE for a
//! running server. Webhooks are verified with the Standard Webhooks
//! reference library (tests/util/webhook_receiver.py), streams read with
//! httpx-sse (tests/sse_client.py), and each ready-made format checked
//! against the request shape its service documents.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{json, Value};

use crate::stream::Client;
use crate::util::receiver::{verified, Receiver};
use crate::util::server::Server;
use crate::util::{wait_for_step, Rng, World};
use crate::webhooks::{add, add_standard, deliver_at, schedule, schedule_at};

const T0: &str = "2026-11-20T10:00:00.000Z";
/// The schedule `schedule()` records: 2026-11-24 10:00 -08:00.
const START: &str = "2026-11-24T18:00:00.000Z";
const A: &str = "2090000000000000001";
const B: &str = "2090000000000000002";
const C: &str = "2090000000000000003";

/// (type, record id, leadMinutes, at) of each verified standard request to `path`.
fn received(r: &Receiver, path: &str) -> Vec<(String, String, Value, Value)> {
    r.requests_to(path)
        .iter()
        .map(|request| {
            let payload = verified(request);
            (
                payload["type"].as_str().unwrap().to_owned(),
                payload["data"]["record"]["id"].as_str().unwrap().to_owned(),
                payload["data"]["leadMinutes"].clone(),
                payload["data"]["at"].clone(),
            )
        })
        .collect()
}

fn reminder(event: &str, id: &str, lead: Value, at: &str) -> (String, String, Value, Value) {
    (event.to_owned(), id.to_owned(), lead, json!(at))
}

/// The served record `id`, as the current snapshot holds it.
pub(crate) fn served(w: &World, id: &str) -> Value {
    w.current_snapshot()["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no record {id}"))
        .clone()
}

/// The reminder lines of the outbox: their keys.
fn outbox_reminder_keys(w: &World) -> Vec<String> {
    std::fs::read_to_string(w.data_dir().join("webhooks/outbox.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["reminder"]["key"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_standard_endpoint_is_reminded_at_each_instant_once_and_only_of_what_it_asked_for() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/remind", &["--remind", "60m,10m"]);
    add_standard(&w, &r, "/changes", &[]);
    add_standard(
        &w,
        &r,
        "/ten",
        &["--remind", "10m", "--events", "reset.upcoming"],
    );
    schedule(&w, T0, A, "pro");
    let record = served(&w, A);
    assert_eq!(record["scheduleState"], "pending");
    deliver_at(&w, "2026-11-24T16:59:59.999Z").success();
    let created = (
        "record.created".to_owned(),
        A.to_owned(),
        Value::Null,
        Value::Null,
    );
    assert_eq!(received(&r, "/remind"), std::slice::from_ref(&created));
    // At the instant of each lead, then of the window (an exact time: one
    // moment, "due now", never a start and an end); a second pass at an
    // instant sends nothing new.
    for now in [
        "2026-11-24T17:00:00.000Z",
        "2026-11-24T17:00:30.000Z",
        "2026-11-24T17:50:00.000Z",
        "2026-11-24T18:00:00.000Z",
        "2026-11-24T18:05:00.000Z",
    ] {
        deliver_at(&w, now).success();
    }
    assert_eq!(
        received(&r, "/remind"),
        [
            created.clone(),
            reminder("reset.upcoming", A, json!(60), START),
            reminder("reset.upcoming", A, json!(10), START),
            reminder("reset.window_started", A, Value::Null, START),
        ]
    );
    assert_eq!(received(&r, "/changes"), [created]);
    assert_eq!(
        received(&r, "/ten"),
        [reminder("reset.upcoming", A, json!(10), START)]
    );
    // The payload: the record exactly as served, the lead, the instant,
    // the snapshot it is served from; sent when it fell due.
    let requests = r.requests_to("/remind");
    let first = verified(&requests[1]);
    assert_eq!(first["timestamp"], "2026-11-24T17:00:00.000Z");
    let data = first["data"].as_object().unwrap();
    let mut keys: Vec<&str> = data.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["at", "generatedAt", "leadMinutes", "record", "sequence"]
    );
    assert_eq!(data["record"], record);
    assert_eq!(data["sequence"], w.current_snapshot()["sequence"]);
    // Three reminders appended once each, however many passes ran.
    let keys = outbox_reminder_keys(&w);
    assert_eq!(keys.len(), 3, "{keys:?}");
    // webhook list and show tell each endpoint's reminders.
    let list = w.run(&["webhook", "list"]).success().stdout;
    assert!(list.contains("reminders 60m,10m, en, UTC"), "{list}");
    assert!(list.contains("reminders off, en, UTC"), "{list}");
    let json = w.run(&["webhook", "list", "--json"]).success().json();
    let remind: Vec<Value> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["remind"].clone())
        .collect();
    assert_eq!(remind, [json!([60, 10]), Value::Null, json!([10])]);
}

#[test]
fn a_reminder_is_sent_late_only_within_its_grace_and_never_after_its_event() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &["--remind", "60m,10m"]);
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    // Nothing ran from 16:00 until 17:56: the 60-minute reminder's grace
    // (15 minutes) is over, the 10-minute one is sent late.
    deliver_at(&w, "2026-11-24T17:56:00.000Z").success();
    assert_eq!(
        received(&r, "/a")[1..],
        [reminder("reset.upcoming", A, json!(10), START)]
    );
    // The window's start falls due while the receiver fails: appended,
    // retried, and never sent once its grace is over.
    r.script("/a", &[], &[], 500);
    deliver_at(&w, "2026-11-24T18:00:00.000Z").success();
    assert_eq!(r.requests_to("/a").len(), 3, "one failed attempt");
    r.script("/a", &[], &[], 200);
    deliver_at(&w, "2026-11-24T18:15:00.000Z").success();
    // After a long stop nothing is sent at all.
    deliver_at(&w, "2026-11-25T09:00:00.000Z").success();
    let got = received(&r, "/a");
    assert_eq!(got.len(), 3, "nothing after the grace: {got:?}");
    let w2 = World::new();
    let r2 = Receiver::start();
    add_standard(&w2, &r2, "/b", &["--remind", "60m,10m"]);
    schedule(&w2, T0, A, "pro");
    deliver_at(&w2, "2026-11-25T09:00:00.000Z").success();
    assert_eq!(
        received(&r2, "/b"),
        [(
            "record.created".to_owned(),
            A.to_owned(),
            Value::Null,
            Value::Null
        )],
        "a stop past every instant sends no reminder"
    );
}

#[test]
fn a_moved_schedule_is_reminded_again_and_a_fulfilled_one_no_more() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &["--remind", "60m,10m"]);
    schedule(&w, T0, A, "pro");
    deliver_at(&w, "2026-11-24T17:00:00.000Z").success();
    // The announcement moves the reset an hour later.
    let mut record = served(&w, A);
    record["scheduleWindow"] =
        json!({"startAt": "2026-11-24T19:00:00.000Z", "endAt": "2026-11-24T19:00:00.000Z"});
    w.publish_records(&[record], "2026-11-24T17:05:00.000Z");
    for now in [
        "2026-11-24T17:50:00.000Z",
        "2026-11-24T18:00:00.000Z",
        "2026-11-24T18:50:00.000Z",
    ] {
        deliver_at(&w, now).success();
    }
    let later = "2026-11-24T19:00:00.000Z";
    let got = received(&r, "/a");
    assert_eq!(
        got[1..],
        [
            reminder("reset.upcoming", A, json!(60), START),
            (
                "schedule.moved".to_owned(),
                A.to_owned(),
                Value::Null,
                Value::Null
            ),
            reminder("reset.upcoming", A, json!(60), later),
            reminder("reset.upcoming", A, json!(10), later),
        ],
        "the old instant's reminders are gone, the new one's armed"
    );

    // Fulfilled: what is not sent yet is cancelled, also a reminder already
    // in the outbox that the receiver has not taken.
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &["--remind", "60m,10m"]);
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    r.script("/a", &[], &[], 503);
    deliver_at(&w, "2026-11-24T17:50:00.000Z").success();
    assert_eq!(
        r.requests_to("/a").len(),
        2,
        "the 10-minute reminder failed once"
    );
    r.script("/a", &[], &[], 200);
    w.run(&[
        "--now",
        "2026-11-24T17:52:00.000Z",
        "record",
        "complete",
        A,
        "--at",
        "2026-11-24 09:51 -08:00",
    ])
    .success();
    for now in [
        "2026-11-24T17:53:00.000Z",
        "2026-11-24T18:00:00.000Z",
        "2026-11-24T18:10:00.000Z",
    ] {
        deliver_at(&w, now).success();
    }
    let types: Vec<String> = received(&r, "/a")[2..]
        .iter()
        .map(|(t, ..)| t.clone())
        .collect();
    assert!(
        !types.iter().any(|t| t.starts_with("reset.")),
        "no reminder after the fulfilment: {types:?}"
    );
    assert!(types.iter().any(|t| t.starts_with("record.")), "{types:?}");
}

/// `header` decoded by Python's `email.header` (RFC 2047).
fn rfc2047_decoded(header: &str) -> String {
    let out = std::process::Command::new(crate::util::python())
        .args([
            "-c",
            "import sys, email.header; print(str(email.header.make_header(email.header.decode_header(sys.argv[1]))), end='')",
            header,
        ])
        .output()
        .expect("run python");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The text a ready-made request shows, per its format's documented shape.
fn shown_text(format: &str, request: &Value, lang: &str) -> String {
    let body = || -> Value { serde_json::from_str(request["body"].as_str().unwrap()).unwrap() };
    match format {
        "ntfy" => {
            let title = request["headers"]["title"].as_str().unwrap();
            // A title that is not ASCII is an RFC 2047 encoded word, read
            // here by Python's own decoder (ntfy's is Go's mime package).
            let title = if title.starts_with("=?") {
                rfc2047_decoded(title)
            } else {
                title.to_owned()
            };
            assert_eq!(request["headers"]["tags"], "alarm_clock");
            format!("{title}\n{}", request["body"].as_str().unwrap())
        }
        "discord" => {
            let body = body();
            assert_eq!(body["allowed_mentions"], json!({ "parse": [] }));
            body["content"].as_str().unwrap().replace('\\', "")
        }
        "slack" => body()["text"].as_str().unwrap().to_owned(),
        "telegram" => {
            let body = body();
            assert_eq!(body["chat_id"], "-100");
            body["text"].as_str().unwrap().to_owned()
        }
        "bark" => {
            let body = body();
            assert_eq!(body["group"], "resetctl");
            format!(
                "{}\n{}",
                body["title"].as_str().unwrap(),
                body["body"].as_str().unwrap()
            )
        }
        "feishu" => {
            let body = body();
            assert_eq!(body["msg_type"], "post");
            let locale = if lang == "zh" { "zh_cn" } else { "en_us" };
            let post = &body["content"]["post"][locale];
            let mut text = post["title"].as_str().unwrap().to_owned();
            for paragraph in post["content"].as_array().unwrap() {
                text.push('\n');
                for element in paragraph.as_array().unwrap() {
                    text.push_str(element["text"].as_str().unwrap());
                }
            }
            text
        }
        other => panic!("{other}"),
    }
}

#[test]
fn every_ready_made_format_reminds_in_the_endpoints_language_with_local_and_utc_time() {
    let r = Receiver::start();
    let w = World::new();
    let formats = [
        ("ntfy", "/ntfy"),
        ("discord", "/api/webhooks/1/t"),
        ("slack", "/services/T/B/X"),
        ("telegram", "/bot1:A/sendMessage?chat_id=-100"),
        ("bark", "/DeviceKey"),
        ("feishu", "/open-apis/bot/v2/hook/x"),
    ];
    for (format, path) in formats {
        for (lang, zone) in [("en", None), ("zh", Some("Asia/Shanghai"))] {
            let target = format!("{}{path}", r.url(&format!("/{lang}")));
            let mut extra = vec![
                "--format",
                format,
                "--remind",
                "10m",
                "--event",
                "reset.upcoming",
                "--lang",
                lang,
                // Twelve requests at once to one receiver: more than the helper's 1 s.
                "--webhook-timeout",
                "10",
            ];
            if let Some(zone) = zone {
                extra.extend(["--tz", zone]);
            }
            add(&w, &target, &extra);
        }
    }
    schedule(&w, T0, A, "pro");
    deliver_at(&w, "2026-11-24T17:50:00.000Z").success();
    let requests = r.requests();
    assert_eq!(
        requests.len(),
        12,
        "{requests:#?}\n{}",
        w.run(&["webhook", "deliveries"]).stdout
    );
    for (format, path) in formats {
        for lang in ["en", "zh"] {
            let path = format!("/{lang}{}", path.split('?').next().unwrap());
            let request = requests
                .iter()
                .find(|q| q["path"] == path)
                .unwrap_or_else(|| panic!("nothing to {path}"));
            let text = shown_text(format, request, lang);
            let expected: &[&str] = if lang == "en" {
                &[
                    "Reset in 10 minutes: 2026-11-24 18:00 UTC\n",
                    "\nGlobal reset · Pro\n",
                ]
            } else {
                &[
                    "10 分钟后重置：2026-11-25 02:00 北京时间（2026-11-24 18:00 UTC）\n",
                    "\n全局重置 · Pro\n",
                ]
            };
            for part in expected {
                assert!(
                    text.contains(part),
                    "{format} {lang}: {part:?} missing from {text:?}"
                );
            }
            assert!(
                !text.contains("State:") && !text.contains("状态："),
                "{format} {lang}: {text}"
            );
        }
    }
}

#[test]
fn killed_and_racing_deliverers_append_and_send_each_reminder_under_one_id() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &["--remind", "60m,10m"]);
    schedule_at(&w, T0, A, "pro", "2026-11-24 10:00 -08:00");
    // Five minutes apart: when one falls due, the one before is still in
    // its grace (a pass sees reminders it has sent beside new ones).
    schedule_at(&w, T0, B, "pro", "2026-11-24 10:05 -08:00");
    schedule_at(&w, T0, C, "pro", "2026-11-24 10:10 -08:00");
    let mut rng = Rng::from_time();
    let steps = ["outbox:remind", "outbox:reminded", "deliver:answered"];
    let (mut paused, mut runs) = (0, 0);
    // Every 5 minutes from 16:55 to 19:20: a deliverer killed at a step of
    // its work (when it gets there), then two that start at once.
    for i in 0..30 {
        let minutes = 16 * 60 + 55 + 5 * i;
        let now = format!("2026-11-24T{:02}:{:02}:00.000Z", minutes / 60, minutes % 60);
        let trace_file = w.path(&format!("trace-{i}"));
        let step = steps[(i + rng.below(2) as usize) % steps.len()];
        let spawn = |pause: Option<&str>, trace_file: &std::path::Path| {
            let mut cmd = w.cmd();
            cmd.args([
                "--log", "warn", "--now", &now, "webhook", "deliver", "--once",
            ])
            .env("RESETCTL_TEST_TRACE", trace_file)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
            if let Some(step) = pause {
                cmd.env("RESETCTL_TEST_PAUSE_AT", step);
            }
            cmd.spawn().unwrap()
        };
        let mut victim = spawn(Some(step), &trace_file);
        if wait_for_step(&mut victim, &trace_file, step) {
            paused += 1;
        }
        victim.kill().unwrap();
        victim.wait().unwrap();
        let racing = [
            spawn(None, &w.path(&format!("trace-{i}-a"))),
            spawn(None, &w.path(&format!("trace-{i}-b"))),
        ];
        for mut child in racing {
            assert!(child.wait().unwrap().success(), "{now}");
        }
        runs += 3;
    }
    // A last pass sends what a kill left.
    deliver_at(&w, "2026-11-24T19:20:00.000Z").success();
    eprintln!("{runs} deliverers, {paused} killed inside a step");
    assert!(paused >= 5, "the kills did not land in the steps: {paused}");
    let mut ids: HashMap<(String, String, Value, Value), HashSet<String>> = HashMap::new();
    for request in r.requests_to("/a") {
        let payload = verified(&request);
        let key = (
            payload["type"].as_str().unwrap().to_owned(),
            payload["data"]["record"]["id"].as_str().unwrap().to_owned(),
            payload["data"]["leadMinutes"].clone(),
            payload["data"]["at"].clone(),
        );
        ids.entry(key).or_default().insert(
            request["headers"]["webhook-id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let mut expected: HashSet<(String, String, Value, Value)> = HashSet::new();
    for (id, start) in [
        (A, "2026-11-24T18:00:00.000Z"),
        (B, "2026-11-24T18:05:00.000Z"),
        (C, "2026-11-24T18:10:00.000Z"),
    ] {
        expected.insert(("record.created".into(), id.into(), Value::Null, Value::Null));
        expected.insert(reminder("reset.upcoming", id, json!(60), start));
        expected.insert(reminder("reset.upcoming", id, json!(10), start));
        // An exact time is one moment: its start, never also its end.
        expected.insert(reminder("reset.window_started", id, Value::Null, start));
    }
    let got: HashSet<_> = ids.keys().cloned().collect();
    assert_eq!(got, expected);
    for (key, ids) in &ids {
        assert_eq!(ids.len(), 1, "{key:?} arrived under several ids: {ids:?}");
    }
    let keys = outbox_reminder_keys(&w);
    let distinct: HashSet<&String> = keys.iter().collect();
    assert_eq!(
        (keys.len(), distinct.len()),
        (9, 9),
        "each reminder appended once: {keys:?}"
    );
}

/// Sets the server's clock (RESETCTL_TEST_CLOCK_FILE) to `at`.
pub(crate) fn set_clock(file: &std::path::Path, at: &str) {
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, at).unwrap();
    std::fs::rename(tmp, file).unwrap();
}

#[test]
fn a_server_reminds_its_streams_and_endpoints_when_its_clock_reaches_each_instant() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &["--remind", "60m"]);
    let clock = w.path("clock");
    set_clock(&clock, T0);
    let s = Server::start(
        &w,
        &[
            "--no-rate-limit",
            "--flood-guard",
            "off",
            "--admin-listen",
            "127.0.0.1:0",
        ],
        &[("RESETCTL_TEST_CLOCK_FILE", clock.to_str().unwrap())],
    );
    // Published while the server runs: its scheduler wakes and arms.
    schedule(&w, T0, A, "pro");
    r.wait_for("/a", 1, Duration::from_secs(20));
    let reminded = Client::connect(&s, "/openapi/v1/records/stream?remind=60,10", &[]);
    reminded.head(200);
    let plain = Client::connect(&s, "/openapi/v1/records/stream", &[]);
    plain.head(200);
    let (ready, ready_id, _) = reminded.event();
    assert_eq!(ready, "ready");
    assert_eq!(plain.event().0, "ready");
    // 17:00: the 60-minute reminder, on the stream and to the endpoint.
    set_clock(&clock, "2026-11-24T17:00:00.000Z");
    let (event, id, data) = reminded.event();
    assert_eq!(
        (
            event.as_str(),
            data["leadMinutes"].clone(),
            data["at"].clone()
        ),
        ("reset.upcoming", json!(60), json!(START)),
        "{data}"
    );
    assert_eq!(
        id,
        format!("{ready_id}~{}", millis("2026-11-24T17:00:00.000Z")),
        "a reminder keeps the client's place and says when it fell due"
    );
    assert_eq!(data["record"], served(&w, A));
    let got = r.wait_for("/a", 2, Duration::from_secs(20));
    let payload = verified(&got[1]);
    assert_eq!(payload["type"], "reset.upcoming");
    assert_eq!(payload["data"]["leadMinutes"], 60);
    // 17:50 and 18:00: the stream's other lead, then the window.
    set_clock(&clock, "2026-11-24T17:50:00.000Z");
    let (event, _, data) = reminded.event();
    assert_eq!(
        (event.as_str(), data["leadMinutes"].clone()),
        ("reset.upcoming", json!(10))
    );
    set_clock(&clock, START);
    // An exact time: one moment, its start.
    assert_eq!(reminded.event().0, "reset.window_started");
    let got = r.wait_for("/a", 3, Duration::from_secs(20));
    let types: Vec<Value> = got.iter().map(|q| verified(q)["type"].clone()).collect();
    assert_eq!(
        types,
        ["record.created", "reset.upcoming", "reset.window_started"]
    );
    // A stream that did not ask sees no reminder: its next event is the
    // next publish's change.
    schedule_at(&w, T0, B, "pro", "2026-11-25 10:00 -08:00");
    let sequence = w.current_snapshot()["sequence"].as_u64().unwrap();
    plain.nothing_before(sequence);
    // /metrics counts them by channel and event.
    let metrics = s.admin_get("/metrics", &[]).text();
    for line in [
        r#"resetctl_reminders_sent_total{channel="stream",event="reset.upcoming"} 2"#,
        r#"resetctl_reminders_sent_total{channel="stream",event="reset.window_started"} 1"#,
        r#"resetctl_reminders_sent_total{channel="webhook",event="reset.upcoming"} 1"#,
        r#"resetctl_reminders_sent_total{channel="webhook",event="reset.window_started"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} missing from:\n{metrics}");
    }
}

#[test]
fn reminder_settings_and_stream_queries_that_cannot_be_used_are_refused_by_name() {
    let w = World::new();
    for (args, needle) in [
        (vec!["--remind", "0m"], "\"0m\" is not a lead"),
        (vec!["--remind", "25h"], "\"25h\" is not a lead"),
        (vec!["--remind", "10m,10"], "given twice"),
        (
            vec!["--remind", "10m", "--event", "record.created"],
            "--remind sends reminder events, which --event record.created leaves out",
        ),
        (vec!["--event", "reset.soon"], "is not one of"),
        (vec!["--lang", "fr"], "\"fr\" is not en or zh"),
        (vec!["--tz", "Mars/Base"], "not a time zone"),
        // The plan id rule of the feeds' `plan` (model::PlanId), not a
        // looser one of its own.
        (
            vec!["--plan", "team-a"],
            "\"team-a\" is not a plan id of 1 to 32 characters a-z, 0-9 or _",
        ),
        (
            vec!["--plan", &"a".repeat(33)],
            "is not a plan id of 1 to 32",
        ),
    ] {
        let mut all = vec!["webhook", "add", "https://hooks.example.org/r"];
        all.extend(&args);
        let run = w.run(&all);
        assert_eq!(run.code, 64, "{args:?}: {run:?}");
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
    assert!(
        !w.data_dir().join("webhooks/endpoints.json").exists(),
        "nothing was added"
    );
    // An endpoint that takes only reminders cannot have them turned off.
    let (id, _) = add(&w, "http://127.0.0.1:9/r", &["--event", "reset.upcoming"]);
    let run = w.run(&["webhook", "set", &id, "--no-remind"]);
    assert_eq!(run.code, 64, "{run:?}");
    assert!(
        run.stderr
            .contains("--no-remind would leave this endpoint nothing to send"),
        "{}",
        run.stderr
    );
    let shown = w.run(&["webhook", "show", &id, "--json"]).success().json();
    assert_eq!(shown["remind"], json!([60, 10]), "the default leads, kept");
    w.seed_bundled();
    let s = Server::start(&w, &["--no-rate-limit"], &[]);
    for (query, detail) in [
        ("remind=", "query parameter \"remind\" is empty"),
        (
            "remind=0",
            "query parameter \"remind\" must be 1 to 5 leads",
        ),
        (
            "remind=60,60",
            "query parameter \"remind\" must be 1 to 5 leads",
        ),
        (
            "remind=1,2,3,4,5,6",
            "query parameter \"remind\" must be 1 to 5 leads",
        ),
        (
            "remind=10&remind=20",
            "query parameter \"remind\" is given more than once",
        ),
        (
            "alarm=10",
            "unknown query parameter \"alarm\"; this endpoint accepts kind, remind",
        ),
    ] {
        let client = Client::connect(&s, &format!("/openapi/v1/records/stream?{query}"), &[]);
        client.head(422);
        let detail_got = client.body()["detail"].as_str().unwrap().to_owned();
        assert!(detail_got.starts_with(detail), "{query}: {detail_got}");
    }
}

#[test]
fn the_status_page_the_docs_and_the_openapi_document_explain_reminders() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &[], &[]);
    // Each language's page links the docs page in its language (issue 43).
    for (path, words, docs) in [
        ("/en/", "Reminders before a reset", "/openapi/v1/docs/en"),
        ("/zh/", "重置前提醒", "/openapi/v1/docs/zh"),
    ] {
        let page = s.get(path).text();
        let section = page
            .split("id=\"subscribe-heading\"")
            .nth(1)
            .unwrap_or_else(|| panic!("{path}: no subscribe section"));
        assert!(
            section.contains(&format!("href=\"{docs}#reminders\"")) && section.contains(words),
            "{path}: {section}"
        );
        assert!(
            section.contains("/openapi/v1/records/stream?remind=60,10"),
            "{path}"
        );
    }
    let docs = s.get("/openapi/v1/docs").text();
    let reminders = docs
        .split("<h2 id=\"reminders\">")
        .nth(1)
        .expect("a reminders section");
    for event in [
        "reset.upcoming",
        "reset.window_started",
        "reset.window_ended",
        "--remind 60m,10m",
    ] {
        assert!(reminders.contains(event), "{event}");
    }
    let openapi = s.get("/openapi/v1/openapi.json").json();
    let stream = &openapi["paths"]["/records/stream"]["get"];
    assert!(
        stream["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "remind" && p["in"] == "query"),
        "{stream}"
    );
    let description = stream["description"].as_str().unwrap();
    for event in [
        "`reset.upcoming`",
        "`reset.window_started`",
        "`reset.window_ended`",
        "\"leadMinutes\"",
    ] {
        assert!(description.contains(event), "{event}");
    }
}

#[test]
fn an_endpoint_added_after_the_last_publish_is_reminded_too() {
    let r = Receiver::start();
    let w = World::new();
    // Published while no endpoint existed: the data dir has no outbox yet.
    schedule(&w, T0, A, "pro");
    assert!(!w.data_dir().join("webhooks/outbox.jsonl").exists());
    add_standard(&w, &r, "/a", &["--remind", "60m"]);
    deliver_at(&w, "2026-11-24T17:00:00.000Z").success();
    assert_eq!(
        received(&r, "/a"),
        [reminder("reset.upcoming", A, json!(60), START)]
    );
    // The next publish still measures its changes from the served version.
    schedule_at(&w, T0, B, "pro", "2026-11-25 10:00 -08:00");
    deliver_at(&w, "2026-11-24T17:01:00.000Z").success();
    assert_eq!(
        received(&r, "/a")[1..],
        [(
            "record.created".to_owned(),
            B.to_owned(),
            Value::Null,
            Value::Null
        )]
    );
}

#[test]
fn a_reminder_given_up_at_its_expiry_leaves_no_retry_to_hold_back_the_next() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(
        &w,
        &r,
        "/a",
        &[
            "--remind",
            "60m",
            "--event",
            "reset.window_started,reset.window_ended",
        ],
    );
    schedule_at(&w, T0, A, "pro", "2026-11-24 10:00 -08:00");
    schedule_at(&w, T0, B, "pro", "2026-11-24 11:00 -08:00");
    // A's start fails four times within its grace (a pass at or after
    // each retry: about 5 s, then every minute); its retries stop with it.
    r.script("/a", &[500, 500, 500, 500], &[], 200);
    for now in [
        "2026-11-24T18:00:00.000Z",
        "2026-11-24T18:00:10.000Z",
        "2026-11-24T18:01:30.000Z",
        "2026-11-24T18:13:30.000Z",
    ] {
        deliver_at(&w, now).success();
    }
    assert_eq!(r.requests_to("/a").len(), 4);
    // Past its grace A's start is dropped; B's is announced at its
    // instant, not held back by A's retries.
    deliver_at(&w, "2026-11-24T18:20:00.000Z").success();
    deliver_at(&w, "2026-11-24T19:00:00.000Z").success();
    let got = received(&r, "/a");
    assert_eq!(
        got[4..],
        [reminder(
            "reset.window_started",
            B,
            Value::Null,
            "2026-11-24T19:00:00.000Z"
        )],
        "{got:?}"
    );
}

#[test]
fn each_endpoint_gets_the_latest_of_its_own_leads_when_several_fell_due() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/twenty", &["--remind", "20m"]);
    add_standard(&w, &r, "/ten", &["--remind", "10m"]);
    schedule(&w, T0, A, "pro");
    // Nothing ran between 17:40 and 17:52: both leads are due at once.
    deliver_at(&w, "2026-11-24T17:52:00.000Z").success();
    assert_eq!(
        received(&r, "/twenty")[1..],
        [reminder("reset.upcoming", A, json!(20), START)]
    );
    assert_eq!(
        received(&r, "/ten")[1..],
        [reminder("reset.upcoming", A, json!(10), START)]
    );
}

/// Milliseconds since the epoch of `at`.
fn millis(at: &str) -> i64 {
    resetctl::model::Timestamp::parse(at).unwrap().as_millis()
}

/// A stream that reconnects with `Last-Event-ID` is sent the reminders it
/// would have been sent while it was away, within their grace, and none it
/// was sent before; a stream that opens without one is sent none that fell
/// due before it opened.
#[test]
fn a_resumed_stream_is_sent_the_reminders_it_missed_within_their_grace_and_none_twice() {
    let w = World::new();
    let clock = w.path("clock");
    set_clock(&clock, T0);
    let s = Server::start(
        &w,
        &["--no-rate-limit", "--flood-guard", "off"],
        &[("RESETCTL_TEST_CLOCK_FILE", clock.to_str().unwrap())],
    );
    schedule(&w, T0, A, "pro");
    let path = "/openapi/v1/records/stream?remind=60,10";
    s.wait_for("/healthz", Duration::from_secs(10), |r| {
        r.json()["sequence"] == 1
    });
    let first = Client::connect(&s, path, &[]);
    first.head(200);
    let (_, ready_id, _) = first.event();
    drop(first);
    // Away while the 60-minute reminder falls due; back 5 minutes later.
    set_clock(&clock, "2026-11-24T17:05:00.000Z");
    let resumed = Client::connect(&s, path, &["--last-event-id", &ready_id]);
    resumed.head(200);
    assert_eq!(resumed.event().0, "ready");
    let (event, id, data) = resumed.event();
    assert_eq!(
        (event.as_str(), data["leadMinutes"].clone()),
        ("reset.upcoming", json!(60)),
        "{data}"
    );
    assert_eq!(
        id,
        format!("{ready_id}~{}", millis("2026-11-24T17:00:00.000Z"))
    );
    drop(resumed);
    // Back again from that reminder: it is not sent twice; the next one is.
    set_clock(&clock, "2026-11-24T17:51:00.000Z");
    let again = Client::connect(&s, path, &["--last-event-id", &id]);
    again.head(200);
    assert_eq!(again.event().0, "ready");
    let (event, _, data) = again.event();
    assert_eq!(
        (event.as_str(), data["leadMinutes"].clone()),
        ("reset.upcoming", json!(10)),
        "{data}"
    );
    // A stream that opens without one hears nothing that fell due before.
    let fresh = Client::connect(&s, path, &[]);
    fresh.head(200);
    assert_eq!(fresh.event().0, "ready");
    set_clock(&clock, START);
    assert_eq!(fresh.event().0, "reset.window_started");
}

/// Each time event ends with the moment it announces (src/remind.rs's
/// table): an upcoming reminder that failed is not retried once the window
/// started; a longer window's start is not sent once it ended; a window's
/// end is not sent once the schedule is unconfirmed (a tolerance shorter
/// than the grace); and each says the instant it refers to.
#[test]
fn a_time_event_is_never_sent_after_the_moment_it_announces() {
    // An upcoming reminder failing at its instant, the receiver back after
    // the window started: the start is sent, never "in 10 minutes" again.
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &["--remind", "10m"]);
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    // The receiver's second request (the reminder) fails.
    r.script("/a", &[200, 500], &[], 200);
    deliver_at(&w, "2026-11-24T17:50:00.000Z").success();
    deliver_at(&w, "2026-11-24T18:01:00.000Z").success();
    assert_eq!(
        received(&r, "/a")[1..],
        [
            reminder("reset.upcoming", A, json!(10), START),
            reminder("reset.window_started", A, Value::Null, START)
        ],
        "the failed upcoming reminder, then only the start"
    );
    // A ten-minute window: nothing ran from its start until after its
    // end (within the start's grace). Its start is not sent any more; its
    // end is, naming the end.
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/b", &["--remind", "10m"]);
    let window = ["--window", "2026-11-24T18:00:00Z", "2026-11-24T18:10:00Z"];
    let post = ["--post-url", "https://x.com/h/status/2090000000000000002"];
    w.run(&[&["--now", T0, "record", "schedule"][..], &post, &window].concat())
        .success();
    deliver_at(&w, T0).success();
    deliver_at(&w, "2026-11-24T18:12:00.000Z").success();
    assert_eq!(
        received(&r, "/b")[1..],
        [reminder(
            "reset.window_ended",
            B,
            Value::Null,
            "2026-11-24T18:10:00.000Z"
        )]
    );
    // A tolerance of one minute: past it, only "not confirmed", never the
    // window's end (sent late, it would follow an unconfirmed moment).
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/c", &["--remind", "10m"]);
    let tolerance = ["--match-tolerance-minutes", "1"];
    let post = ["--post-url", "https://x.com/h/status/2090000000000000003"];
    let schedule = [
        &["--now", T0][..],
        &tolerance,
        &["record", "schedule"],
        &post,
        &window,
    ];
    w.run(&schedule.concat()).success();
    for now in [T0, "2026-11-24T18:05:00.000Z", "2026-11-24T18:12:00.000Z"] {
        w.run(
            &[
                &["--now", now][..],
                &tolerance,
                &["webhook", "deliver", "--once"],
            ]
            .concat(),
        )
        .success();
    }
    assert_eq!(
        received(&r, "/c")[1..],
        [
            reminder("reset.window_started", C, Value::Null, START),
            reminder(
                "schedule.elapsed",
                C,
                Value::Null,
                "2026-11-24T18:10:00.000Z"
            ),
        ]
    );
}
