//! Runs a [`Timeline`] against the real binary and compares what every
//! channel was told with the model: `serve` on a clock the driver moves
//! (RESETCTL_TEST_CLOCK_FILE) through every instant the model names, the
//! operator's commands at theirs (`--now`), and at each instant every
//! channel must have been told exactly what the model says by then:
//! every ready-made format in English (UTC) and Chinese (Asia/Shanghai),
//! e-mail in both, a Standard Webhooks endpoint (verified by the reference
//! library) and the record stream (read by a real SSE client, reconnecting
//! with `Last-Event-ID` after a restart).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::model::{
    self, completion_id, post, schedule_id, seeded_id, Event, Message, Op, Timeline,
};
use crate::reminders::set_clock;
use crate::stream::Client;
use crate::timelines::{link, mailed, path_of, people_told, PEOPLE};
use crate::util::receiver::{verified, Receiver};
use crate::util::server::Server;
use crate::util::smtp::Smtp;
use crate::util::World;

/// How long a channel may take to be told what is due at an instant.
const WAIT: Duration = Duration::from_secs(15);

/// The stream's path: every kind, reminded as the standard endpoint is.
const STREAM: &str = "/openapi/v1/records/stream?remind=10,1";

/// An instant as the one timestamp form.
fn iso(ms: i64) -> String {
    let seconds = crate::util::chrono_like(ms.div_euclid(1000));
    seconds.replace(".000Z", &format!(".{:03}Z", ms.rem_euclid(1000)))
}

/// The world of one run: the data dir, its receivers, its server.
struct Run {
    // Dropped first: the stream and the server, before the data dir goes.
    stream: Option<Client>,
    server: Option<Server>,
    w: World,
    r: Receiver,
    smtp: Smtp,
    clock: std::path::PathBuf,
    /// The stream's events so far, and the id of the last one.
    streamed: Vec<Event>,
    last_id: String,
    seeded: usize,
}

impl Run {
    fn new(start: i64) -> Self {
        let r = Receiver::start();
        let smtp = Smtp::start(true);
        let w = World::new();
        let timeout = ["--webhook-timeout", "10"];
        let people = |prefix: &str, extra: &[&str]| {
            for (format, target) in PEOPLE {
                let mut args = vec!["--format", format, timeout[0], timeout[1]];
                args.extend_from_slice(extra);
                crate::webhooks::add(&w, &r.url(&format!("{prefix}{target}")), &args);
            }
        };
        let en = ["--remind", "10m,1m"];
        let zh = [
            "--remind",
            "60m,10m",
            "--lang",
            "zh",
            "--tz",
            "Asia/Shanghai",
        ];
        people("/en", &en);
        people("/zh", &zh);
        crate::webhooks::add_standard(
            &w,
            &r,
            "/std",
            &["--remind", "10m,1m", timeout[0], timeout[1]],
        );
        for (to, extra) in [("en@example.org", &en[..]), ("zh@example.org", &zh[..])] {
            let mut args = vec!["--format", "email"];
            args.extend_from_slice(extra);
            crate::webhooks::add(&w, &smtp.target(true, to), &args);
        }
        // The baseline: an empty standalone instance, published.
        w.run(&["--now", &iso(start), "publish"]).success();
        let clock = w.path("clock");
        set_clock(&clock, &iso(start));
        let mut run = Run {
            w,
            r,
            smtp,
            clock,
            server: None,
            stream: None,
            streamed: Vec::new(),
            last_id: String::new(),
            seeded: 0,
        };
        run.start_server();
        run
    }

    fn start_server(&mut self) {
        let (key, value) = self.smtp.trust();
        let clock = self.clock.to_str().unwrap().to_owned();
        let s = Server::start(
            &self.w,
            &["--no-rate-limit", "--flood-guard", "off"],
            &[("RESETCTL_TEST_CLOCK_FILE", &clock), (key, &value)],
        );
        let resumed = !self.last_id.is_empty();
        let extra: Vec<&str> = if resumed {
            vec!["--last-event-id", &self.last_id]
        } else {
            Vec::new()
        };
        let stream = Client::connect(&s, STREAM, &extra);
        stream.head(200);
        let (event, id, _) = stream.event();
        assert_eq!(event, "ready");
        if !resumed {
            self.last_id = id;
        }
        self.server = Some(s);
        self.stream = Some(stream);
    }

    /// The operator's action `op` at `at`.
    fn act(&mut self, at: i64, op: &Op) {
        let now = iso(at);
        let record = |args: &[&str]| {
            let mut all = vec!["--now", &now, "record"];
            all.extend_from_slice(args);
            all.extend(["--actor", "model"]);
            self.w.run(&all).success();
        };
        let time = |start: i64, end: i64| -> Vec<String> {
            if start == end {
                vec!["--at".into(), iso(start)]
            } else {
                vec!["--window".into(), iso(start), iso(end)]
            }
        };
        match op {
            Op::Announce { s, start, end } => {
                let (id, when) = (post(&schedule_id(*s)), time(*start, *end));
                let mut args = vec!["schedule", "--post-url", &id, "--scope-plans", "pro"];
                args.extend(when.iter().map(String::as_str));
                record(&args);
            }
            Op::Complete { c, at } => record(&[
                "completion",
                "--post-url",
                &post(&completion_id(*c)),
                "--at",
                &iso(*at),
                "--scope-plans",
                "pro",
            ]),
            Op::Correct { c, at } => {
                record(&["edit", &completion_id(*c), "--effective-at", &iso(*at)])
            }
            Op::Link { c, s } => record(&["link", &completion_id(*c), &schedule_id(*s)]),
            Op::Move { s, start, end } => {
                let (id, when) = (schedule_id(*s), time(*start, *end));
                let mut args = vec!["move", id.as_str()];
                args.extend(when.iter().map(String::as_str));
                record(&args);
            }
            Op::DismissSchedule { s } => record(&["dismiss", &schedule_id(*s)]),
            Op::DismissCompletion { c } => record(&["dismiss", &completion_id(*c)]),
            Op::Seed { n, at: first } => {
                let records: Vec<Value> = (0..usize::from(*n))
                    .map(|k| {
                        let id = seeded_id(self.seeded + k).trim_start_matches("seed:").to_owned();
                        let at = iso(first + k as i64 * model::MINUTE);
                        json!({
                            "id": id, "kind": "reset_completed", "resetType": "global",
                            "announcedAt": at, "effectiveAt": at, "text": null, "confidence": 0.9,
                            "scope": {"plans": ["pro"], "windows": ["unknown"]},
                            "source": {"origin": "x", "postId": id, "handle": "h", "url": post(&id)},
                            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null,
                            "scheduleState": null, "completedAt": at, "completionRecordId": null,
                            "fulfillmentOrigin": null, "relatedRecordIds": []
                        })
                    })
                    .collect();
                self.seeded += records.len();
                let file = self.w.path("seed.json");
                std::fs::write(&file, Value::Array(records).to_string()).unwrap();
                self.w
                    .run(&["--now", &now, "seed", file.to_str().unwrap()])
                    .success();
            }
            Op::Restart => {
                self.stream = None;
                if let Some(mut s) = self.server.take() {
                    s.terminate();
                }
                self.start_server();
            }
        }
    }

    /// What the standard endpoint was told: (type, record id, lead).
    fn standard(&self) -> Vec<(String, String, Option<i64>)> {
        self.r
            .requests_to("/std")
            .iter()
            .map(|q| {
                let p = verified(q);
                (
                    p["type"].as_str().unwrap().to_owned(),
                    p["data"]["record"]["id"].as_str().unwrap().to_owned(),
                    p["data"]["leadMinutes"].as_i64(),
                )
            })
            .collect()
    }

    /// Reads the stream until it has told `n` events, or `deadline`.
    fn read_stream(&mut self, n: usize, deadline: Instant) {
        let Some(stream) = &self.stream else { return };
        while self.streamed.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some((event, id, data)) = stream.try_event(left) else {
                return;
            };
            self.last_id = id;
            let kind = match event.as_str() {
                "record.created" => "record.created",
                "record.updated" => "record.updated",
                "record.removed" => "record.removed",
                "schedule.moved" => "schedule.moved",
                "schedule.fulfilled" => "schedule.fulfilled",
                "schedule.elapsed" => "schedule.elapsed",
                "reset.upcoming" => "reset.upcoming",
                "reset.window_started" => "reset.window_started",
                "reset.window_ended" => "reset.window_ended",
                other => {
                    self.streamed.push(Event {
                        at: -1,
                        kind: "?",
                        id: other.to_owned(),
                        lead: None,
                    });
                    continue;
                }
            };
            self.streamed.push(Event {
                at: -1,
                kind,
                id: data["record"]["id"].as_str().unwrap_or_default().to_owned(),
                lead: data["leadMinutes"].as_i64(),
            });
        }
    }
}

/// Runs `timeline` and returns what differs from the model (none: all agree).
pub fn differences(timeline: &Timeline) -> Option<String> {
    let told = model::told(timeline);
    let mut run = Run::new(timeline.start);
    let mut ops = timeline.ops.iter().peekable();
    for &at in &told.instants {
        set_clock(&run.clock, &iso(at));
        while let Some((_, op)) = ops.next_if(|(when, _)| *when == at) {
            run.act(at, op);
        }
        let due = |list: &[Message]| list.iter().filter(|m| m.at <= at).count();
        let (en, zh) = (due(&told.en), due(&told.zh));
        let machine = told.machine.iter().filter(|e| e.at <= at).count();
        let deadline = Instant::now() + WAIT;
        let counts = |run: &Run| {
            let people = |prefix: &str| {
                PEOPLE
                    .iter()
                    .map(|(_, target)| {
                        run.r
                            .requests_to(&format!("{prefix}{}", path_of(target)))
                            .len()
                    })
                    .collect::<Vec<_>>()
            };
            (
                people("/en"),
                people("/zh"),
                run.r.requests_to("/std").len(),
                run.smtp.messages_to("en@example.org").len(),
                run.smtp.messages_to("zh@example.org").len(),
            )
        };
        let expected = (vec![en; 6], vec![zh; 6], machine, en, zh);
        while counts(&run) != expected && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        run.read_stream(machine, deadline);
        let got = counts(&run);
        if got != expected || run.streamed.len() != machine {
            return Some(format!(
                "at {}: expected (en per format, zh per format, standard, mail en, mail zh) {expected:?} \
                 and {machine} stream events, got {got:?} and {}\n{}",
                iso(at),
                run.streamed.len(),
                compare(&run, &told).unwrap_or_default()
            ));
        }
    }
    // Nothing more comes.
    std::thread::sleep(Duration::from_millis(700));
    if let Some(stream) = &run.stream {
        if let Some(extra) = stream.try_event(Duration::from_millis(300)) {
            return Some(format!("the stream was told more: {extra:?}"));
        }
    }
    compare(&run, &told)
}

/// What each channel was told against the model, the first difference of each.
fn compare(run: &Run, told: &model::Told) -> Option<String> {
    let mut out = Vec::new();
    for (prefix, expected) in [("/en", &told.en), ("/zh", &told.zh)] {
        for (format, got) in people_told(&run.r, prefix) {
            let want: Vec<String> = expected
                .iter()
                .map(|m| m.shown(|u| link(format, u)))
                .collect();
            if let Some(d) = first_difference(&want, &got) {
                out.push(format!("{prefix} {format}: {d}"));
            }
        }
    }
    for (to, expected) in [("en@example.org", &told.en), ("zh@example.org", &told.zh)] {
        // The subject, then the plain part before the signature.
        let want: Vec<String> = expected
            .iter()
            .map(|m| format!("{} | {}", m.title, m.shown(|u| u.to_owned())))
            .collect();
        let got: Vec<String> = mailed(&run.smtp, to)
            .into_iter()
            .map(|(subject, plain)| {
                let body = plain
                    .split("\n\n-- \n")
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                format!("{subject} | {body}")
            })
            .collect();
        if let Some(d) = first_difference(&want, &got) {
            out.push(format!("mail {to}: {d}"));
        }
    }
    let want: Vec<String> = told
        .machine
        .iter()
        .map(|e| format!("{} {} {:?}", e.kind, e.id, e.lead))
        .collect();
    let got: Vec<String> = run
        .standard()
        .iter()
        .map(|(k, id, l)| format!("{k} {id} {l:?}"))
        .collect();
    if let Some(d) = first_difference(&want, &got) {
        out.push(format!("standard: {d}"));
    }
    let got: Vec<String> = run
        .streamed
        .iter()
        .map(|e| format!("{} {} {:?}", e.kind, e.id, e.lead))
        .collect();
    if let Some(d) = first_difference(&want, &got) {
        out.push(format!("stream: {d}"));
    }
    (!out.is_empty()).then(|| out.join("\n"))
}

/// Where two lists first differ, said side by side.
fn first_difference(want: &[String], got: &[String]) -> Option<String> {
    let i = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i))?;
    Some(format!(
        "message {} of {} (got {}):\n  expected: {:?}\n  got:      {:?}",
        i + 1,
        want.len(),
        got.len(),
        want.get(i),
        got.get(i)
    ))
}
