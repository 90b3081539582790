//! Runs a [`Timeline`] against the real binary and compares what every
//! channel was told with the model: `serve` on a clock the driver moves
//! (RESETCTL_TEST_CLOCK_FILE) through every instant the model names, the
//! operator's commands at theirs (`--now`), and at each instant every
//! channel must have been told exactly what the model says by then:
//! every ready-made format in English (UTC) and Chinese (Asia/Shanghai),
//! e-mail in both, a Standard Webhooks endpoint (verified by the reference
//! library) and the record stream (read by a real SSE client, reconnecting
//! with `Last-Event-ID` after a restart).
//!
//! On the real clock ([`real_differences`]) the release build runs with
//! the system clock: the driver sleeps until each action's instant, and
//! each message must arrive within [`REAL_LATE`] of its own.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::model::{self, completion_id, post, schedule_id, seeded_id, Message, Op, Timeline};
use crate::reminders::set_clock;
use crate::stream::Client;
use crate::timelines::{link, mailed, path_of, shown, PEOPLE};
use crate::util::receiver::{verified, Receiver};
use crate::util::server::Server;
use crate::util::smtp::Smtp;
use crate::util::World;

/// How long a channel may take to be told what is due at an instant.
const WAIT: Duration = Duration::from_secs(15);

/// How late, on the real clock, a message may arrive after its instant.
const REAL_LATE: Duration = Duration::from_secs(5);

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
    /// The test clock's file; none on the real clock.
    clock: Option<std::path::PathBuf>,
    /// The binary run.
    bin: &'static str,
    /// The matcher's tolerance, in minutes, every command is given.
    tolerance: String,
    /// The stream's events so far ([`machine_line`]), and the id of the last one.
    streamed: Vec<String>,
    last_id: String,
    seeded: usize,
}

impl Run {
    /// A run on the test clock (`real`: false, starting at `start`) or on
    /// the real clock against the release build.
    fn new(start: i64, real: bool, cfg: &model::Config) -> Self {
        let r = Receiver::start();
        let smtp = Smtp::start(true);
        let w = World::new();
        let bin = if real {
            crate::util::release_bin()
        } else {
            crate::util::bin()
        };
        let minutes = |leads: &[i64]| {
            let text: Vec<String> = leads.iter().map(|l| format!("{l}m")).collect();
            text.join(",")
        };
        let (en_leads, zh_leads) = (minutes(cfg.en.leads), minutes(cfg.zh.leads));
        let machine_leads = minutes(cfg.machine);
        let timeout = ["--webhook-timeout", "10"];
        let people = |prefix: &str, extra: &[&str]| {
            for (format, target) in PEOPLE {
                let mut args = vec!["--format", format, timeout[0], timeout[1]];
                args.extend_from_slice(extra);
                let url = r.url(&format!("{prefix}{target}"));
                crate::webhooks::add_with(&w, bin, &url, &args);
            }
        };
        let en = ["--remind", &en_leads];
        let zh = [
            "--remind",
            &zh_leads,
            "--lang",
            "zh",
            "--tz",
            "Asia/Shanghai",
        ];
        people("/en", &en);
        people("/zh", &zh);
        let std_args = ["--remind", &machine_leads, timeout[0], timeout[1]];
        crate::webhooks::add_standard_with(&w, bin, &r, "/std", &std_args);
        for (to, extra) in [("en@example.org", &en[..]), ("zh@example.org", &zh[..])] {
            let mut args = vec!["--format", "email"];
            args.extend_from_slice(extra);
            crate::webhooks::add_with(&w, bin, &smtp.target(true, to), &args);
        }
        // The baseline: an empty standalone instance, published.
        let mut publish = w.cmd_of(bin);
        if !real {
            publish.args(["--now", &iso(start)]);
        }
        crate::util::Run::from(publish.arg("publish").output().unwrap()).success();
        let clock = (!real).then(|| w.path("clock"));
        if let Some(clock) = &clock {
            set_clock(clock, &iso(start));
        }
        let mut run = Run {
            w,
            r,
            smtp,
            clock,
            bin,
            tolerance: (cfg.tolerance / model::MINUTE).to_string(),
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
        let mut cmd = self.w.cmd_of(self.bin);
        cmd.env(key, value);
        if let Some(clock) = &self.clock {
            cmd.env("RESETCTL_TEST_CLOCK_FILE", clock);
        }
        let tolerance = ["--match-tolerance-minutes", &self.tolerance];
        let s = Server::start_with(
            cmd,
            &[
                "--no-rate-limit",
                "--flood-guard",
                "off",
                tolerance[0],
                tolerance[1],
            ],
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
        // The operator's clock: the test clock's instant, or the system's.
        let run = |args: &[&str]| {
            let mut cmd = self.w.cmd_of(self.bin);
            if self.clock.is_some() {
                cmd.args(["--now", &now]);
            }
            cmd.args(["--match-tolerance-minutes", &self.tolerance]);
            crate::util::Run::from(cmd.args(args).output().unwrap()).success();
        };
        let record = |args: &[&str]| {
            let mut all = vec!["record"];
            all.extend_from_slice(args);
            all.extend(["--actor", "model"]);
            run(&all);
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
                run(&["seed", file.to_str().unwrap()]);
            }
            Op::ReceiverDown | Op::ReceiverUp => {
                let status = if *op == Op::ReceiverDown { 503 } else { 200 };
                let slack = PEOPLE.iter().find(|(f, _)| *f == "slack").expect("slack").1;
                self.r
                    .script(&format!("/en{}", path_of(slack)), &[], &[], status);
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

    /// What the standard endpoint was told: (type, record id, lead, at).
    fn standard(&self) -> Vec<(String, String, Option<i64>, Option<String>)> {
        self.r
            .requests_to("/std")
            .iter()
            .map(|q| {
                let p = verified(q);
                (
                    p["type"].as_str().unwrap().to_owned(),
                    p["data"]["record"]["id"].as_str().unwrap().to_owned(),
                    p["data"]["leadMinutes"].as_i64(),
                    p["data"]["at"].as_str().map(str::to_owned),
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
                    self.streamed.push(format!("? {other}"));
                    continue;
                }
            };
            self.streamed.push(machine_line(
                kind,
                data["record"]["id"].as_str().unwrap_or_default(),
                data["leadMinutes"].as_i64(),
                data["at"].as_str(),
            ));
        }
    }
}

/// Runs `timeline` on the test clock and returns what differs from the
/// model (none: all agree).
pub fn differences(timeline: &Timeline) -> Option<String> {
    run_day(timeline, false, &model::TEST_CLOCK)
}

/// Runs `timeline` (instants on the system clock, from a little after
/// now) on the real clock against the release build.
pub fn real_differences(timeline: &Timeline) -> Option<String> {
    run_day(timeline, true, &model::REAL_CLOCK)
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn run_day(timeline: &Timeline, real: bool, cfg: &model::Config) -> Option<String> {
    let told = model::told(timeline, cfg);
    let mut run = Run::new(timeline.start, real, cfg);
    let mut ops = timeline.ops.iter().peekable();
    for &at in &told.instants {
        // A receiver goes down or comes back before the clock moves on.
        while let Some((_, op)) =
            ops.next_if(|(when, op)| *when == at && matches!(op, Op::ReceiverDown | Op::ReceiverUp))
        {
            run.act(at, op);
        }
        match &run.clock {
            Some(clock) => set_clock(clock, &iso(at)),
            None => {
                let wait = at - now_ms();
                if wait > 0 {
                    std::thread::sleep(Duration::from_millis(wait as u64));
                }
            }
        }
        while let Some((_, op)) = ops.next_if(|(when, _)| *when == at) {
            run.act(at, op);
        }
        let deadline = match real {
            true => {
                Instant::now() + Duration::from_millis((at - now_ms()).max(0) as u64) + REAL_LATE
            }
            false => Instant::now() + WAIT,
        };
        if let Some(difference) = run.told_by(at, &told, deadline) {
            return Some(difference);
        }
    }
    // Nothing more comes.
    std::thread::sleep(Duration::from_millis(700));
    if let Some(stream) = &run.stream {
        if let Some(extra) = stream.try_event(Duration::from_millis(300)) {
            return Some(format!("the stream was told more: {extra:?}"));
        }
    }
    compare(&run, &told).or_else(|| real.then(|| late(&run, &told)).flatten())
}

impl Run {
    /// Waits until every channel was told what is due by `at` (until
    /// `deadline`); what differs, if it was not.
    fn told_by(&mut self, at: i64, told: &model::Told, deadline: Instant) -> Option<String> {
        let due = |list: &[Message]| list.iter().filter(|m| m.at <= at).count();
        let (en, zh) = (due(&told.en), due(&told.zh));
        let machine = told.machine.iter().filter(|e| e.at <= at).count();
        let counts = |run: &Run| {
            let people = |prefix: &str| {
                PEOPLE
                    .iter()
                    .map(|(_, target)| {
                        delivered(run, &format!("{prefix}{}", path_of(target))).len()
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
        let en_each: Vec<usize> = PEOPLE
            .iter()
            .map(|(format, _)| due(model::english_of(told, format)))
            .collect();
        let expected = (en_each.clone(), vec![zh; 6], machine, en, zh);
        // On the test clock nothing more may have come; on the real clock
        // what falls due next may come any moment (its arrival is checked
        // against its own instant at the end).
        let real = self.clock.is_none();
        let reached = |(a, b, c, d, e): &(Vec<usize>, Vec<usize>, usize, usize, usize)| {
            a.iter().zip(&en_each).all(|(n, want)| n >= want)
                && b.iter().all(|n| *n >= zh)
                && *c >= machine
                && *d >= en
                && *e >= zh
        };
        let done = |got: &_| if real { reached(got) } else { *got == expected };
        while !done(&counts(self)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        // The stream gets its own moment: the webhooks may have used the wait.
        self.read_stream(
            machine,
            deadline.max(Instant::now() + Duration::from_secs(3)),
        );
        let got = counts(self);
        (!done(&got) || self.streamed.len() < machine || (!real && self.streamed.len() != machine))
            .then(|| {
                format!(
                    "at {}: expected (en per format, zh per format, standard, mail en, mail zh) \
                 {expected:?} and {machine} stream events, got {got:?} and {}\n{}",
                    iso(at),
                    self.streamed.len(),
                    compare(self, told).unwrap_or_default()
                )
            })
    }
}

/// On the real clock: a webhook that arrived before its instant, or more
/// than [`REAL_LATE`] after it.
fn late(run: &Run, told: &model::Told) -> Option<String> {
    let mut out = Vec::new();
    let mut check = |path: String, instants: Vec<i64>| {
        for (request, at) in run.r.requests_to(&path).iter().zip(instants) {
            let arrived = (request["at"].as_f64().unwrap_or_default() * 1000.0) as i64;
            if arrived < at - 200 || arrived > at + REAL_LATE.as_millis() as i64 {
                out.push(format!("{path}: due {}, arrived {}", iso(at), iso(arrived)));
            }
        }
    };
    for (prefix, zh) in [("/en", false), ("/zh", true)] {
        for (format, target) in PEOPLE {
            let list = if zh {
                &told.zh
            } else {
                model::english_of(told, format)
            };
            check(
                format!("{prefix}{}", path_of(target)),
                list.iter().map(|m| m.at).collect(),
            );
        }
    }
    check(
        "/std".to_owned(),
        told.machine.iter().map(|e| e.at).collect(),
    );
    (!out.is_empty()).then(|| out.join("\n"))
}

/// What each channel was told against the model, the first difference of each.
fn compare(run: &Run, told: &model::Told) -> Option<String> {
    let mut out = Vec::new();
    for (prefix, zh) in [("/en", false), ("/zh", true)] {
        for (format, target) in PEOPLE {
            let expected = if zh {
                &told.zh
            } else {
                model::english_of(told, format)
            };
            let got: Vec<String> = delivered(run, &format!("{prefix}{}", path_of(target)))
                .iter()
                .map(|q| shown(format, q))
                .collect();
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
        .map(|e| machine_line(e.kind, &e.id, e.lead, e.refers.map(iso).as_deref()))
        .collect();
    let got: Vec<String> = run
        .standard()
        .iter()
        .map(|(k, id, l, at)| machine_line(k, id, *l, at.as_deref()))
        .collect();
    if let Some(d) = first_difference(&want, &got) {
        out.push(format!("standard: {d}"));
    }
    let got: Vec<String> = run.streamed.clone();
    if let Some(d) = first_difference(&want, &got) {
        out.push(format!(
            "stream: {d}\n  expected all: {want:?}\n  got all: {got:?}"
        ));
    }
    (!out.is_empty()).then(|| out.join("\n"))
}

/// The requests to `path` its receiver took (answered 2xx).
fn delivered(run: &Run, path: &str) -> Vec<Value> {
    run.r
        .requests_to(path)
        .into_iter()
        .filter(|q| {
            q["status"]
                .as_u64()
                .is_some_and(|s| (200..300).contains(&s))
        })
        .collect()
}

/// A program's event as compared: type, record, lead and the instant it
/// refers to.
fn machine_line(kind: &str, id: &str, lead: Option<i64>, at: Option<&str>) -> String {
    format!("{kind} {id} {lead:?} {}", at.unwrap_or("-"))
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
