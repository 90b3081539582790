//! Replayed timelines: what a person (and a program) is told, message by
//! message, from the moment a reset is announced until it is completed,
//! moved, withdrawn or passes unconfirmed. Each timeline is run on a clock
//! the test sets (`--now` for `webhook deliver --once`), with endpoints of
//! every ready-made format in English and Chinese, a standard endpoint
//! verified by the Standard Webhooks reference library, and an e-mail
//! endpoint sending to a real SMTP server; what each receiver got is read
//! as the person reads it (the title and text a chat app shows, the
//! subject and body of a mail) and compared whole.

use serde_json::Value;

use crate::reminders::{served, set_clock};
use crate::util::receiver::{verified, Receiver};
use crate::util::smtp::Smtp;
use crate::util::World;
use crate::webhooks::{add, add_standard, events};

const A: &str = "2090000000000000001";
const B: &str = "2090000000000000002";
const C: &str = "2090000000000000003";

/// The ready-made formats people read, each with a receiver path.
pub(crate) const PEOPLE: [(&str, &str); 6] = [
    ("discord", "/api/webhooks/1/tok"),
    ("ntfy", "/ntfy/resets"),
    ("slack", "/services/T0/B0/X"),
    ("telegram", "/bot1:A/sendMessage?chat_id=-100"),
    ("bark", "/DeviceKey"),
    ("feishu", "/open-apis/bot/v2/hook/abc"),
];

/// What a person reads from one request of `format`: its title (when the
/// service shows one) and text, links as the service shows them.
pub fn shown(format: &str, request: &Value) -> String {
    let body = || -> Value { serde_json::from_str(request["body"].as_str().unwrap()).unwrap() };
    match format {
        "discord" => body()["content"].as_str().unwrap().replace('\\', ""),
        "ntfy" => format!(
            "{}\n{}",
            header_words(request["headers"]["title"].as_str().unwrap()),
            request["body"].as_str().unwrap()
        ),
        "slack" | "telegram" => body()["text"].as_str().unwrap().to_owned(),
        "bark" => {
            let b = body();
            format!(
                "{}\n{}",
                b["title"].as_str().unwrap(),
                b["body"].as_str().unwrap()
            )
        }
        "feishu" => {
            let b = body();
            let post = b["content"]["post"]
                .as_object()
                .unwrap()
                .values()
                .next()
                .unwrap()
                .clone();
            format!(
                "{}\n{}",
                post["title"].as_str().unwrap(),
                crate::webhook_formats::feishu_text(&post)
            )
        }
        other => panic!("no reading of {other}"),
    }
}

/// A header value as ntfy shows it: RFC 2047 encoded words (how a title
/// beyond ASCII travels in a header) decoded, as ntfy's server does with
/// Go's `mime.WordDecoder`; here with Python's `email.header`.
fn header_words(value: &str) -> String {
    let out = std::process::Command::new(crate::util::python())
        .args([
            "-c",
            "import sys, email.header as h; print(str(h.make_header(h.decode_header(sys.argv[1]))), end='')",
            value,
        ])
        .output()
        .expect("run python");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The path part of a receiver target (no query).
pub(crate) fn path_of(target: &str) -> &str {
    target.split('?').next().unwrap()
}

/// Endpoints of every people format at `prefix`, with `extra` options.
fn add_people(w: &World, r: &Receiver, prefix: &str, extra: &[&str]) {
    for (format, target) in PEOPLE {
        let mut args = vec!["--format", format, "--webhook-timeout", "10"];
        args.extend_from_slice(extra);
        add(w, &r.url(&format!("{prefix}{target}")), &args);
    }
}

/// What each people endpoint at `prefix` was told, by format, in order.
pub(crate) fn people_told(r: &Receiver, prefix: &str) -> Vec<(&'static str, Vec<String>)> {
    PEOPLE
        .iter()
        .map(|(format, target)| {
            let path = format!("{prefix}{}", path_of(target));
            (
                *format,
                r.requests_to(&path)
                    .iter()
                    .map(|q| shown(format, q))
                    .collect(),
            )
        })
        .collect()
}

fn post(id: &str) -> String {
    format!("https://x.com/h/status/{id}")
}

/// `record schedule --at AT` of `id` (plans pro), at `now`.
fn schedule_exact(w: &World, now: &str, id: &str, at: &str) {
    w.run(&[
        "--now",
        now,
        "record",
        "schedule",
        "--post-url",
        &post(id),
        "--at",
        at,
        "--scope-plans",
        "pro",
    ])
    .success();
}

/// `record completion` of `id` at `at` (plans pro), recorded at `now`.
fn complete(w: &World, now: &str, id: &str, at: &str) {
    w.run(&[
        "--now",
        now,
        "record",
        "completion",
        "--post-url",
        &post(id),
        "--at",
        at,
        "--scope-plans",
        "pro",
    ])
    .success();
}

/// The `scheduleState` record `id` is served with.
fn state_of(w: &World, id: &str) -> String {
    w.current_snapshot()["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .and_then(|r| r["scheduleState"].as_str())
        .unwrap_or_else(|| panic!("no schedule {id}"))
        .to_owned()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// A link as `format` writes it: Discord's angle brackets keep a preview
/// from unfurling.
pub(crate) fn link(format: &str, url: &str) -> String {
    if format == "discord" {
        format!("<{url}>")
    } else {
        url.to_owned()
    }
}

/// One message as a person reads it: the title line, then the lines.
fn said(title: &str, lines: &[&str]) -> String {
    std::iter::once(title)
        .chain(lines.iter().copied())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `webhook deliver --once` at `now`, trusting `smtp`'s certificate.
fn deliver_trusting(w: &World, smtp: &Smtp, now: &str) {
    let (key, value) = smtp.trust();
    let out = w
        .cmd()
        .env(key, value)
        .args(["--now", now, "webhook", "deliver", "--once"])
        .output()
        .expect("run resetctl");
    assert!(out.status.success(), "{out:?}");
}

/// (subject, plain text) of each mail to `to`.
pub(crate) fn mailed(smtp: &Smtp, to: &str) -> Vec<(String, String)> {
    smtp.messages_to(to)
        .iter()
        .map(|m| {
            (
                m["subject"].as_str().unwrap().to_owned(),
                m["plain"]
                    .as_str()
                    .unwrap()
                    .replace("\r\n", "\n")
                    .trim_end()
                    .to_owned(),
            )
        })
        .collect()
}

/// The timeline of the report: an exact-time schedule for 15:29, reminders
/// 10 and 5 minutes before, and the completion recorded 18 seconds after
/// the time. Every person is told five things, each once: announced, in
/// 10 minutes, in 5 minutes, due now, completed (naming the time it was
/// scheduled for); never "withdrawn", "ended unconfirmed" or "elapsed",
/// and no schedule state. A program is told the same moments by name,
/// the completion before the fulfilment it causes.
#[test]
fn an_exact_time_completed_eighteen_seconds_late_is_told_as_due_then_completed() {
    let r = Receiver::start();
    let smtp = Smtp::start(true);
    let w = World::new();
    let timeout = ["--webhook-timeout", "10"];
    add_people(&w, &r, "/en", &["--remind", "10m,5m"]);
    add_people(
        &w,
        &r,
        "/zh",
        &[
            "--remind",
            "10m,5m",
            "--lang",
            "zh",
            "--tz",
            "Asia/Shanghai",
        ],
    );
    add_standard(
        &w,
        &r,
        "/std",
        &["--remind", "10m,5m", timeout[0], timeout[1]],
    );
    for (to, lang) in [("en@example.org", "en"), ("zh@example.org", "zh")] {
        add(
            &w,
            &smtp.target(true, to),
            &["--format", "email", "--remind", "10m,5m", "--lang", lang],
        );
    }
    schedule_exact(&w, "2026-11-27T15:00:00.000Z", A, "2026-11-27 15:29 +00:00");
    for now in [
        "2026-11-27T15:00:00.000Z",
        "2026-11-27T15:19:00.000Z",
        "2026-11-27T15:24:00.000Z",
        "2026-11-27T15:29:00.000Z",
        "2026-11-27T15:29:01.000Z",
    ] {
        deliver_trusting(&w, &smtp, now);
    }
    complete(
        &w,
        "2026-11-27T15:29:18.000Z",
        C,
        "2026-11-27 15:29:18 +00:00",
    );
    assert_eq!(state_of(&w, A), "fulfilled", "the completion matched");
    for now in [
        "2026-11-27T15:29:18.000Z",
        // Past the match tolerance (180 minutes), and a day later.
        "2026-11-27T18:40:00.000Z",
        "2026-11-28T15:29:00.000Z",
    ] {
        deliver_trusting(&w, &smtp, now);
    }
    let (a, c) = (post(A), post(C));
    for (format, told) in people_told(&r, "/en") {
        let (a, c) = (link(format, &a), link(format, &c));
        let source = |url: &str| format!("Source: {url}");
        let at = "2026-11-27 15:29 UTC";
        assert_eq!(
            told,
            [
                said(
                    &format!("Reset announced: {at}"),
                    &["Global reset · Pro", &source(&a)]
                ),
                said(
                    &format!("Reset in 10 minutes: {at}"),
                    &["Global reset · Pro", &source(&a)]
                ),
                said(
                    &format!("Reset in 5 minutes: {at}"),
                    &["Global reset · Pro", &source(&a)]
                ),
                said(
                    &format!("Reset due now: {at}"),
                    &["Global reset · Pro", &source(&a)]
                ),
                said(
                    &format!("Reset completed: {at}"),
                    &[
                        "Global reset · Pro",
                        &format!("Scheduled for: {at}"),
                        &source(&c)
                    ]
                ),
            ],
            "{format}, en"
        );
    }
    for (format, told) in people_told(&r, "/zh") {
        let (a, c) = (link(format, &a), link(format, &c));
        let source = |url: &str| format!("来源：{url}");
        let at = "2026-11-27 23:29 北京时间（2026-11-27 15:29 UTC）";
        assert_eq!(
            told,
            [
                said(
                    &format!("已公布重置：{at}"),
                    &["全局重置 · Pro", &source(&a)]
                ),
                said(
                    &format!("10 分钟后重置：{at}"),
                    &["全局重置 · Pro", &source(&a)]
                ),
                said(
                    &format!("5 分钟后重置：{at}"),
                    &["全局重置 · Pro", &source(&a)]
                ),
                said(
                    &format!("现在应当重置：{at}"),
                    &["全局重置 · Pro", &source(&a)]
                ),
                said(
                    &format!("重置已完成：{at}"),
                    &["全局重置 · Pro", &format!("原计划时间：{at}"), &source(&c)]
                ),
            ],
            "{format}, zh"
        );
    }
    for (to, subjects) in [
        (
            "en@example.org",
            [
                "Reset announced: 2026-11-27 15:29 UTC",
                "Reset in 10 minutes: 2026-11-27 15:29 UTC",
                "Reset in 5 minutes: 2026-11-27 15:29 UTC",
                "Reset due now: 2026-11-27 15:29 UTC",
                "Reset completed: 2026-11-27 15:29 UTC",
            ],
        ),
        (
            "zh@example.org",
            [
                "已公布重置：2026-11-27 15:29 UTC",
                "10 分钟后重置：2026-11-27 15:29 UTC",
                "5 分钟后重置：2026-11-27 15:29 UTC",
                "现在应当重置：2026-11-27 15:29 UTC",
                "重置已完成：2026-11-27 15:29 UTC",
            ],
        ),
    ] {
        let got = mailed(&smtp, to);
        let got_subjects: Vec<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(got_subjects, subjects, "{to}");
        // The body: the same lines as a chat message, then why it came.
        let (subject, plain) = got.last().unwrap();
        assert!(plain.starts_with(&format!("{subject}\n")), "{plain}");
        assert!(
            plain.contains("\n\n-- \n"),
            "a signature separator: {plain}"
        );
    }
    // The mails themselves: sent over TLS with the endpoint's credentials,
    // each with its own Message-ID and its language.
    let mails = smtp.messages();
    assert_eq!(mails.len(), 10);
    for mail in &mails {
        assert_eq!(mail["tls"], true, "{mail}");
        assert_eq!(mail["auth"], crate::util::smtp::USER);
        assert!(mail["html"].is_string(), "a plain and an HTML part: {mail}");
    }
    let ids: std::collections::HashSet<&str> = mails
        .iter()
        .map(|m| m["messageId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 10, "{ids:?}");
    for (to, lang) in [("en@example.org", "en"), ("zh@example.org", "zh-Hans")] {
        for mail in smtp.messages_to(to) {
            assert_eq!(mail["contentLanguage"], lang, "{mail}");
        }
    }
    assert_eq!(
        mailed(&smtp, "en@example.org").last().unwrap().1,
        format!(
            "Reset completed: 2026-11-27 15:29 UTC\nGlobal reset · Pro\n\
             Scheduled for: 2026-11-27 15:29 UTC\nSource: {c}\n\n-- \n\
             You receive this because this address subscribes to reset \
             notifications from resetctl; its operator can stop them."
        )
    );
    assert_eq!(
        events(&r, "/std"),
        pairs(&[
            ("record.created", A),
            ("reset.upcoming", A),
            ("reset.upcoming", A),
            ("reset.window_started", A),
            ("record.created", C),
            ("schedule.fulfilled", A),
        ])
    );
    // The fulfilment names the completion; the completion, what it fulfils.
    let last = verified(r.requests_to("/std").last().unwrap());
    assert_eq!(last["data"]["completion"]["id"], C, "{last}");
    assert_eq!(last["data"]["record"]["scheduleState"], "fulfilled");
    let _ = B;
}

/// One timeline on one schedule: a discord endpoint in English (reminded
/// 10 minutes before), one in Chinese, a standard endpoint; `steps` run in
/// order (an instant to deliver at, or a completion recorded then). What
/// the English and Chinese readers were told, and the standard types.
struct Told {
    en: Vec<String>,
    zh: Vec<String>,
    standard: Vec<String>,
}

enum Step<'a> {
    Deliver(&'a str),
    /// A completion (id C) effective `at`, recorded at `now`.
    Complete {
        now: &'a str,
        at: &'a str,
    },
}

fn window_timeline(window: (&str, &str), steps: &[Step]) -> Told {
    let r = Receiver::start();
    let w = World::new();
    let timeout = ["--webhook-timeout", "10"];
    add(
        &w,
        &r.url("/en"),
        &[
            "--format", "discord", "--remind", "10m", timeout[0], timeout[1],
        ],
    );
    add(
        &w,
        &r.url("/zh"),
        &[
            "--format", "discord", "--lang", "zh", "--remind", "10m", timeout[0], timeout[1],
        ],
    );
    add_standard(&w, &r, "/std", &["--remind", "10m", timeout[0], timeout[1]]);
    w.run(&[
        "--now",
        "2026-12-01T08:00:00.000Z",
        "record",
        "schedule",
        "--post-url",
        &post(A),
        "--window",
        window.0,
        window.1,
        "--scope-plans",
        "pro",
    ])
    .success();
    for step in steps {
        match step {
            Step::Deliver(now) => {
                crate::webhooks::deliver_at(&w, now).success();
            }
            Step::Complete { now, at } => complete(&w, now, C, at),
        }
    }
    let texts = |path: &str| -> Vec<String> {
        r.requests_to(path)
            .iter()
            .map(|q| shown("discord", q))
            .collect()
    };
    Told {
        en: texts("/en"),
        zh: texts("/zh"),
        standard: events(&r, "/std").into_iter().map(|(t, _)| t).collect(),
    }
}

/// Each message's first line (its headline and time).
fn headlines(messages: &[String]) -> Vec<&str> {
    messages.iter().map(|m| m.lines().next().unwrap()).collect()
}

const WINDOW: (&str, &str) = ("2026-12-01 16:00 +00:00", "2026-12-01 20:00 +00:00");
const WINDOW_EN: &str = "2026-12-01 16:00 to 2026-12-01 20:00 UTC";
const WINDOW_ZH: &str = "2026-12-01 16:00 至 2026-12-01 20:00 UTC";

/// A window completed inside it: open, then completed; nothing about its
/// end.
#[test]
fn a_window_completed_inside_it_is_told_open_then_completed() {
    let told = window_timeline(
        WINDOW,
        &[
            Step::Deliver("2026-12-01T08:00:00.000Z"),
            Step::Deliver("2026-12-01T15:50:00.000Z"),
            Step::Deliver("2026-12-01T16:00:00.000Z"),
            Step::Complete {
                now: "2026-12-01T17:00:00.000Z",
                at: "2026-12-01 17:00 +00:00",
            },
            Step::Deliver("2026-12-01T17:00:00.000Z"),
            Step::Deliver("2026-12-01T20:00:00.000Z"),
            Step::Deliver("2026-12-01T23:30:00.000Z"),
        ],
    );
    assert_eq!(
        headlines(&told.en),
        [
            format!("Reset announced: {WINDOW_EN}"),
            format!("Reset in 10 minutes: {WINDOW_EN}"),
            format!("Reset window open: {WINDOW_EN}"),
            "Reset completed: 2026-12-01 17:00 UTC".to_owned(),
        ]
    );
    assert_eq!(
        told.en.last().unwrap(),
        &format!(
            "Reset completed: 2026-12-01 17:00 UTC\nGlobal reset · Pro\nScheduled for: {WINDOW_EN}\nSource: <{}>",
            post(C)
        ),
    );
    assert_eq!(
        headlines(&told.zh),
        [
            format!("已公布重置：{WINDOW_ZH}"),
            format!("10 分钟后重置：{WINDOW_ZH}"),
            format!("重置窗口已开始：{WINDOW_ZH}"),
            "重置已完成：2026-12-01 17:00 UTC".to_owned(),
        ]
    );
    assert_eq!(
        told.standard,
        [
            "record.created",
            "reset.upcoming",
            "reset.window_started",
            "record.created",
            "schedule.fulfilled"
        ]
    );
}

/// A window that passes without a completion: open, closed with "no
/// completion recorded yet", and "not confirmed" only once the match
/// tolerance (180 minutes) has passed.
#[test]
fn a_window_never_completed_is_told_unconfirmed_only_after_the_tolerance() {
    let told = window_timeline(
        WINDOW,
        &[
            Step::Deliver("2026-12-01T08:00:00.000Z"),
            Step::Deliver("2026-12-01T15:50:00.000Z"),
            Step::Deliver("2026-12-01T16:00:00.000Z"),
            Step::Deliver("2026-12-01T20:00:00.000Z"),
            Step::Deliver("2026-12-01T22:59:59.000Z"),
            Step::Deliver("2026-12-01T23:00:00.000Z"),
            Step::Deliver("2026-12-02T23:00:00.000Z"),
        ],
    );
    assert_eq!(
        headlines(&told.en),
        [
            format!("Reset announced: {WINDOW_EN}"),
            format!("Reset in 10 minutes: {WINDOW_EN}"),
            format!("Reset window open: {WINDOW_EN}"),
            "Reset window closed, no completion recorded yet: 2026-12-01 20:00 UTC".to_owned(),
            format!("Scheduled reset not confirmed: {WINDOW_EN}"),
        ]
    );
    assert_eq!(
        told.en.last().unwrap(),
        &format!(
            "Scheduled reset not confirmed: {WINDOW_EN}\nGlobal reset · Pro\n\
             No completion has been recorded since the scheduled time.\nSource: <{}>",
            post(A)
        ),
    );
    assert_eq!(
        headlines(&told.zh),
        [
            format!("已公布重置：{WINDOW_ZH}"),
            format!("10 分钟后重置：{WINDOW_ZH}"),
            format!("重置窗口已开始：{WINDOW_ZH}"),
            "重置窗口已结束，尚未记录到完成：2026-12-01 20:00 UTC".to_owned(),
            format!("计划重置未得到确认：{WINDOW_ZH}"),
        ]
    );
    assert_eq!(
        told.standard,
        [
            "record.created",
            "reset.upcoming",
            "reset.window_started",
            "reset.window_ended",
            "schedule.elapsed"
        ]
    );
}

/// A completion after the window's end but inside the tolerance: the
/// close was told, "not confirmed" never is; the next message says
/// "completed".
#[test]
fn a_window_completed_late_within_the_tolerance_is_never_told_unconfirmed() {
    let told = window_timeline(
        WINDOW,
        &[
            Step::Deliver("2026-12-01T08:00:00.000Z"),
            Step::Deliver("2026-12-01T16:00:00.000Z"),
            Step::Deliver("2026-12-01T20:00:00.000Z"),
            Step::Complete {
                now: "2026-12-01T21:00:00.000Z",
                at: "2026-12-01 21:00 +00:00",
            },
            Step::Deliver("2026-12-01T21:00:00.000Z"),
            Step::Deliver("2026-12-01T23:00:00.000Z"),
            Step::Deliver("2026-12-02T23:00:00.000Z"),
        ],
    );
    assert_eq!(
        headlines(&told.en),
        [
            format!("Reset announced: {WINDOW_EN}"),
            format!("Reset window open: {WINDOW_EN}"),
            "Reset window closed, no completion recorded yet: 2026-12-01 20:00 UTC".to_owned(),
            "Reset completed: 2026-12-01 21:00 UTC".to_owned(),
        ]
    );
    assert_eq!(
        told.standard,
        [
            "record.created",
            "reset.window_started",
            "reset.window_ended",
            "record.created",
            "schedule.fulfilled"
        ]
    );
}

/// One completion fulfilling two schedules is one message naming both
/// times (the standard endpoint gets the completion and each fulfilment);
/// a schedule moved is told with where it was; a dismissed one, withdrawn.
#[test]
fn fulfilled_twice_moved_and_withdrawn_are_each_told_as_what_happened() {
    let r = Receiver::start();
    let w = World::new();
    let timeout = ["--webhook-timeout", "10"];
    add(
        &w,
        &r.url("/en"),
        &["--format", "slack", timeout[0], timeout[1]],
    );
    add(
        &w,
        &r.url("/zh"),
        &["--format", "slack", "--lang", "zh", timeout[0], timeout[1]],
    );
    add_standard(&w, &r, "/std", &[timeout[0], timeout[1]]);
    let now = "2026-12-01T08:00:00.000Z";
    schedule_exact(&w, now, A, "2026-12-05 10:00 +00:00");
    schedule_exact(&w, now, B, "2026-12-06 10:00 +00:00");
    deliver_at_each(&w, &[now]);
    w.run(&[
        "--now",
        "2026-12-01T09:00:00.000Z",
        "record",
        "complete",
        A,
        B,
        "--at",
        "2026-12-01 09:00 +00:00",
        "--actor",
        "ops",
    ])
    .success();
    deliver_at_each(&w, &["2026-12-01T09:00:00.000Z"]);
    let en: Vec<String> = r
        .requests_to("/en")
        .iter()
        .map(|q| shown("slack", q))
        .collect();
    let zh: Vec<String> = r
        .requests_to("/zh")
        .iter()
        .map(|q| shown("slack", q))
        .collect();
    assert_eq!(
        en[2..],
        ["Reset completed: 2026-12-01 09:00 UTC\nGlobal reset\n\
          Scheduled for: 2026-12-05 10:00 UTC\nScheduled for: 2026-12-06 10:00 UTC"
            .to_owned()]
    );
    assert_eq!(
        zh[2..],
        ["重置已完成：2026-12-01 09:00 UTC\n全局重置\n\
          原计划时间：2026-12-05 10:00 UTC\n原计划时间：2026-12-06 10:00 UTC"
            .to_owned()]
    );
    let standard = events(&r, "/std");
    let manual = standard[2].1.clone();
    assert!(manual.starts_with("manual:"), "{standard:?}");
    assert_eq!(
        standard[2..],
        pairs(&[
            ("record.created", &manual),
            ("schedule.fulfilled", A),
            ("schedule.fulfilled", B),
        ])
    );
    // Withdrawn: the operator dismisses E.
    const E: &str = "2090000000000000005";
    schedule_exact(&w, "2026-12-01T12:00:00.000Z", E, "2026-12-08 10:00 +00:00");
    w.run(&[
        "--now",
        "2026-12-01T12:30:00.000Z",
        "record",
        "dismiss",
        E,
        "--actor",
        "ops",
    ])
    .success();
    deliver_at_each(&w, &["2026-12-01T12:30:00.000Z"]);
    let en: Vec<String> = r
        .requests_to("/en")
        .iter()
        .map(|q| shown("slack", q))
        .collect();
    let zh: Vec<String> = r
        .requests_to("/zh")
        .iter()
        .map(|q| shown("slack", q))
        .collect();
    assert_eq!(
        headlines(&en[3..]),
        [
            "Reset announced: 2026-12-08 10:00 UTC",
            "Scheduled reset withdrawn: 2026-12-08 10:00 UTC"
        ]
    );
    assert_eq!(
        headlines(&zh[zh.len() - 1..]),
        ["计划重置已撤回：2026-12-08 10:00 UTC"]
    );
    let withdrawn = verified(r.requests_to("/std").last().unwrap());
    assert_eq!(withdrawn["type"], "record.removed");
    assert_eq!(withdrawn["data"]["record"]["id"], E);
    // Moved: the publisher names another time for D.
    const D: &str = "2090000000000000004";
    schedule_exact(&w, "2026-12-01T13:00:00.000Z", D, "2026-12-07 10:00 +00:00");
    let mut record = served(&w, D);
    record["scheduleWindow"] = serde_json::json!({"startAt": "2026-12-07T12:00:00.000Z", "endAt": "2026-12-07T12:00:00.000Z"});
    record["effectiveAt"] = "2026-12-07T12:00:00.000Z".into();
    let others: Vec<Value> = w.current_snapshot()["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] != D)
        .cloned()
        .chain([record])
        .collect();
    w.publish_records(&others, "2026-12-01T14:00:00.000Z");
    deliver_at_each(&w, &["2026-12-01T14:00:00.000Z"]);
    let en: Vec<String> = r
        .requests_to("/en")
        .iter()
        .map(|q| shown("slack", q))
        .collect();
    assert_eq!(
        en[5..],
        [
            format!(
                "Reset announced: 2026-12-07 10:00 UTC\nGlobal reset · Pro\nSource: {}",
                post(D)
            ),
            format!(
                "Scheduled reset moved: 2026-12-07 12:00 UTC\nGlobal reset · Pro\n\
                 Was: 2026-12-07 10:00 UTC\nSource: {}",
                post(D)
            ),
        ]
    );
    let moved = verified(r.requests_to("/std").last().unwrap());
    assert_eq!(moved["type"], "schedule.moved");
    assert_eq!(
        moved["data"]["previousWindow"],
        serde_json::json!({"startAt": "2026-12-07T10:00:00.000Z", "endAt": "2026-12-07T10:00:00.000Z"})
    );
}

/// (webhook-id, type) of each verified standard request.
fn ids_and_types(requests: &[Value]) -> Vec<(String, String)> {
    requests
        .iter()
        .map(|q| {
            let p = verified(q);
            (
                q["headers"]["webhook-id"].as_str().unwrap().to_owned(),
                p["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn deliver_at_each(w: &World, instants: &[&str]) {
    for now in instants {
        crate::webhooks::deliver_at(w, now).success();
    }
}

/// A data dir restored from a copy takes a new outbox identity: its
/// message ids never repeat one the original sent (a receiver that
/// de-duplicates by id drops nothing new), and a time event that fell due
/// before the restore is not told again.
#[test]
fn a_restored_copy_neither_reuses_a_message_id_nor_retells_what_was_due_before_it() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(
        &w,
        &r,
        "/std",
        &["--remind", "10m", "--webhook-timeout", "10"],
    );
    schedule_exact(&w, "2026-11-27T15:00:00.000Z", A, "2026-11-27 15:29 +00:00");
    deliver_at_each(
        &w,
        &["2026-11-27T15:00:00.000Z", "2026-11-27T15:19:00.000Z"],
    );
    // The backup: a copy of the data dir, taken with cp -a.
    let copy = World::new();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(w.data_dir())
        .arg(copy.data_dir())
        .status()
        .unwrap();
    assert!(status.success());
    // The original goes on: due now at 15:29, a completion at 15:40.
    deliver_at_each(&w, &["2026-11-27T15:29:00.000Z"]);
    complete(&w, "2026-11-27T15:40:00.000Z", C, "2026-11-27 15:40 +00:00");
    deliver_at_each(&w, &["2026-11-27T15:40:00.000Z"]);
    let original = ids_and_types(&r.requests_to("/std"));
    assert_eq!(
        original.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        [
            "record.created",
            "reset.upcoming",
            "reset.window_started",
            "record.created",
            "schedule.fulfilled"
        ]
    );
    // The original is lost; the copy is restored at 16:00 and records
    // another completion.
    drop(w);
    deliver_at_each(&copy, &["2026-11-27T16:00:00.000Z"]);
    assert_eq!(
        r.requests_to("/std").len(),
        original.len(),
        "nothing due before the restore is told again"
    );
    complete(
        &copy,
        "2026-11-27T16:05:00.000Z",
        B,
        "2026-11-27 15:45 +00:00",
    );
    deliver_at_each(&copy, &["2026-11-27T16:05:00.000Z"]);
    let after = ids_and_types(&r.requests_to("/std")[original.len()..]);
    assert_eq!(
        after.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        ["record.created", "schedule.fulfilled"]
    );
    for (id, _) in &after {
        assert!(
            original.iter().all(|(seen, _)| seen != id),
            "{id} was already sent by the original: {original:?}"
        );
    }
}

/// Every event, in every ready-made format, in both languages, read as a
/// person reads it: no identifier a person would not say (a wire value, a
/// field or event name) appears outside a link.
#[test]
fn no_message_in_any_format_or_language_shows_an_identifier() {
    let r = Receiver::start();
    let w = World::new();
    add_people(&w, &r, "/en", &["--remind", "10m"]);
    add_people(
        &w,
        &r,
        "/zh",
        &["--remind", "10m", "--lang", "zh", "--tz", "Asia/Shanghai"],
    );
    add_standard(
        &w,
        &r,
        "/std",
        &["--remind", "10m", "--webhook-timeout", "10"],
    );
    // An exact time completed; a window that passes unconfirmed; a
    // completion edited then withdrawn; a schedule withdrawn; a move.
    schedule_exact(&w, "2026-12-01T08:00:00.000Z", A, "2026-12-01 10:00 +00:00");
    w.run(&[
        "--now",
        "2026-12-01T08:00:00.000Z",
        "record",
        "schedule",
        "--post-url",
        &post(B),
        "--window",
        "2026-12-02 10:00 +00:00",
        "2026-12-02 12:00 +00:00",
        "--scope-plans",
        "pro,max",
        "--scope-windows",
        "five_hour,weekly",
        "--basis",
        "contextual_inference",
        "--type",
        "global_and_banked",
    ])
    .success();
    deliver_at_each(
        &w,
        &[
            "2026-12-01T08:00:00.000Z",
            "2026-12-01T09:50:00.000Z",
            "2026-12-01T10:00:00.000Z",
        ],
    );
    complete(&w, "2026-12-01T10:05:00.000Z", C, "2026-12-01 10:05 +00:00");
    deliver_at_each(&w, &["2026-12-01T10:05:00.000Z"]);
    w.run(&[
        "--now",
        "2026-12-01T10:10:00.000Z",
        "record",
        "edit",
        C,
        "--text",
        "Limits are back",
        "--actor",
        "ops",
    ])
    .success();
    deliver_at_each(&w, &["2026-12-01T10:10:00.000Z"]);
    w.run(&[
        "--now",
        "2026-12-01T10:20:00.000Z",
        "record",
        "dismiss",
        C,
        "--actor",
        "ops",
    ])
    .success();
    deliver_at_each(
        &w,
        &[
            "2026-12-01T10:20:00.000Z",
            "2026-12-02T09:50:00.000Z",
            "2026-12-02T10:00:00.000Z",
            "2026-12-02T12:00:00.000Z",
            "2026-12-02T15:00:00.000Z",
        ],
    );
    const D: &str = "2090000000000000004";
    schedule_exact(&w, "2026-12-03T08:00:00.000Z", D, "2026-12-05 10:00 +00:00");
    let mut record = served(&w, D);
    record["scheduleWindow"] = serde_json::json!({"startAt": "2026-12-05T12:00:00.000Z", "endAt": "2026-12-05T12:00:00.000Z"});
    let all: Vec<Value> = w.current_snapshot()["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] != D)
        .cloned()
        .chain([record])
        .collect();
    w.publish_records(&all, "2026-12-03T09:00:00.000Z");
    deliver_at_each(&w, &["2026-12-03T09:00:00.000Z"]);
    w.run(&[
        "--now",
        "2026-12-03T09:30:00.000Z",
        "record",
        "dismiss",
        D,
        "--actor",
        "ops",
    ])
    .success();
    deliver_at_each(&w, &["2026-12-03T09:30:00.000Z"]);
    for id in w
        .run(&["webhook", "list", "--json"])
        .json()
        .as_array()
        .unwrap()
    {
        w.run(&["webhook", "test", id["id"].as_str().unwrap()])
            .success();
    }
    // Every kind of event was told.
    let mut types: Vec<String> = events(&r, "/std").into_iter().map(|(t, _)| t).collect();
    types.sort();
    types.dedup();
    assert_eq!(
        types,
        [
            "record.created",
            "record.removed",
            "record.updated",
            "reset.upcoming",
            "reset.window_ended",
            "reset.window_started",
            "schedule.elapsed",
            "schedule.fulfilled",
            "schedule.moved",
            "webhook.test",
        ]
    );
    const IDENTIFIERS: &[&str] = &[
        "reset_scheduled",
        "reset_completed",
        "global",
        "global_and_banked",
        "datetime",
        "explicit",
        "contextual_inference",
        "pending",
        "elapsed",
        "fulfilled",
        "unknown",
        "auto",
        "manual",
        "rss",
        "github",
        "five_hour",
        "max",
        "pro",
        "record.created",
        "record.removed",
        "record.updated",
        "schedule.moved",
        "schedule.fulfilled",
        "schedule.elapsed",
        "reset.upcoming",
        "reset.window_started",
        "reset.window_ended",
        "webhook.test",
        "scheduleState",
        "resetType",
        "scheduleWindow",
        "kind",
        "null",
        "true",
        "false",
        "None",
        "Some",
    ];
    let mut read = 0;
    for prefix in ["/en", "/zh"] {
        for (format, told) in people_told(&r, prefix) {
            assert!(told.len() >= 14, "{format} {prefix}: {told:#?}");
            for message in told {
                read += 1;
                let words: Vec<&str> = message
                    .split_whitespace()
                    .filter(|piece| !piece.contains("://"))
                    .flat_map(|piece| {
                        piece.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                    })
                    .map(|w| w.trim_matches('.'))
                    .collect();
                for identifier in IDENTIFIERS {
                    assert!(
                        !words.contains(identifier),
                        "{format} {prefix} shows {identifier:?}:\n{message}"
                    );
                }
            }
        }
    }
    assert!(read >= 12 * 14, "{read}");
}

/// The record stream tells the same moments, read by a real SSE client
/// (httpx-sse): a `kind=all` client that asked for no reminder is told a
/// fulfilled schedule is `schedule.fulfilled` (after the completion), never
/// removed, and a window that passes unconfirmed is `schedule.elapsed`
/// once the tolerance has passed, not at its end.
#[test]
fn the_stream_tells_a_fulfilment_as_such_and_unconfirmed_only_after_the_tolerance() {
    use crate::stream::Client;
    let w = World::new();
    let clock = w.path("clock");
    set_clock(&clock, "2026-11-27T15:00:00.000Z");
    schedule_exact(&w, "2026-11-27T15:00:00.000Z", A, "2026-11-27 15:29 +00:00");
    let s = crate::util::server::Server::start(
        &w,
        &["--no-rate-limit", "--flood-guard", "off"],
        &[("RESETCTL_TEST_CLOCK_FILE", clock.to_str().unwrap())],
    );
    let all = Client::connect(&s, "/openapi/v1/records/stream?kind=all", &[]);
    all.head(200);
    assert_eq!(all.event().0, "ready");
    let reminded = Client::connect(
        &s,
        "/openapi/v1/records/stream?kind=reset_scheduled&remind=10",
        &[],
    );
    reminded.head(200);
    assert_eq!(reminded.event().0, "ready");
    // 15:29: the reminded stream hears "due now"; the other nothing.
    set_clock(&clock, "2026-11-27T15:29:00.000Z");
    let (event, _, data) = reminded.event();
    assert_eq!(
        (event.as_str(), &data["record"]["id"]),
        ("reset.window_started", &Value::from(A))
    );
    // 15:29:18: the completion; then, for every stream, the completion
    // and the fulfilment naming it (a reset_scheduled stream: the
    // fulfilment only).
    set_clock(&clock, "2026-11-27T15:29:18.000Z");
    complete(
        &w,
        "2026-11-27T15:29:18.000Z",
        C,
        "2026-11-27 15:29:18 +00:00",
    );
    let sequence = w.current_snapshot()["sequence"].as_u64().unwrap();
    let (first, first_id, first_data) = all.event();
    let (second, second_id, second_data) = all.event();
    assert_eq!(
        [
            (first.as_str(), &first_data["record"]["id"]),
            (second.as_str(), &second_data["record"]["id"])
        ],
        [
            ("record.created", &Value::from(C)),
            ("schedule.fulfilled", &Value::from(A))
        ]
    );
    assert_eq!(second_data["completion"]["id"], C, "{second_data}");
    assert_eq!(second_data["record"]["scheduleState"], "fulfilled");
    for id in [&first_id, &second_id] {
        assert_eq!(crate::stream::sequence_of(id), Some(sequence), "{id}");
    }
    let (event, _, data) = reminded.event();
    assert_eq!(
        (event.as_str(), &data["record"]["id"]),
        ("schedule.fulfilled", &Value::from(A))
    );
    // A window that passes unconfirmed: its end is no event for the plain
    // stream; the tolerance's end is, for both.
    w.run(&[
        "--now",
        "2026-11-27T15:30:00.000Z",
        "record",
        "schedule",
        "--post-url",
        &post(B),
        "--window",
        "2026-11-28 16:00 +00:00",
        "2026-11-28 17:00 +00:00",
        "--scope-plans",
        "pro",
    ])
    .success();
    let (created, created_id, _) = all.event();
    assert_eq!(created, "record.created");
    assert_eq!(reminded.event().0, "record.created");
    set_clock(&clock, "2026-11-28T15:50:00.000Z");
    assert_eq!(reminded.event().0, "reset.upcoming");
    set_clock(&clock, "2026-11-28T16:00:00.000Z");
    assert_eq!(reminded.event().0, "reset.window_started");
    set_clock(&clock, "2026-11-28T17:00:00.000Z");
    assert_eq!(reminded.event().0, "reset.window_ended");
    set_clock(&clock, "2026-11-28T20:00:00.000Z");
    let (event, id, data) = all.event();
    assert_eq!(
        (event.as_str(), &data["record"]["id"], &data["at"]),
        (
            "schedule.elapsed",
            &Value::from(B),
            &Value::from("2026-11-28T17:00:00.000Z")
        ),
        "the plain stream's first event after the creation: {data}"
    );
    assert_eq!(
        id.split_once('~').map(|(place, _)| place),
        Some(created_id.as_str()),
        "schedule.elapsed keeps the client's place (and says when it fell due): {id}"
    );
    assert_eq!(reminded.event().0, "schedule.elapsed");
}

/// A Slack reader in English (UTC) at `/en`, and one in Chinese at `/zh`
/// (in `zone` when given).
fn slack_readers(w: &World, r: &Receiver, zone: Option<&str>) {
    add(
        w,
        &r.url("/en"),
        &["--format", "slack", "--webhook-timeout", "10"],
    );
    let mut zh = vec![
        "--format",
        "slack",
        "--lang",
        "zh",
        "--webhook-timeout",
        "10",
    ];
    if let Some(zone) = zone {
        zh.extend(["--tz", zone]);
    }
    add(w, &r.url("/zh"), &zh);
}

/// What the Slack reader at `path` was told, as Slack shows it.
fn slack_told(r: &Receiver, path: &str) -> Vec<String> {
    r.requests_to(path)
        .iter()
        .map(|q| shown("slack", q))
        .collect()
}

/// `resetctl --now NOW record ARGS…`, which must succeed.
fn record_at(w: &World, now: &str, args: &[&str]) {
    let mut all = vec!["--now", now, "record"];
    all.extend_from_slice(args);
    all.extend(["--actor", "ops"]);
    w.run(&all).success();
}

/// The B2 day (issue 49): a completion at 07:30:18, then a schedule for
/// 09:30 announced at 08:00 (not fulfilled by the earlier reset: it gets
/// every reminder and its "due now"), its real completion at 09:31, the
/// first completion's time corrected, a reset announced 2 min 16 s before
/// its time (inside every lead: the announcement says the time left, and
/// no stale reminder follows), a link, and a move. Each action is one
/// message that says what happened, in English and in Chinese (北京时间).
#[test]
fn the_b2_day_is_told_one_message_per_action_with_every_reminder() {
    const C1: &str = "2090000000000000011";
    const S1: &str = "2090000000000000012";
    const C2: &str = "2090000000000000013";
    const S2: &str = "2090000000000000014";
    const S3: &str = "2090000000000000015";
    const C3: &str = "2090000000000000016";
    let r = Receiver::start();
    let w = World::new();
    let timeout = ["--webhook-timeout", "10"];
    add_people(&w, &r, "/en", &["--remind", "10m,1m"]);
    add_people(
        &w,
        &r,
        "/zh",
        &[
            "--remind",
            "60m,10m",
            "--lang",
            "zh",
            "--tz",
            "Asia/Shanghai",
        ],
    );
    add_standard(
        &w,
        &r,
        "/std",
        &["--remind", "10m,1m", timeout[0], timeout[1]],
    );
    let step = |now: &str, args: &[&str]| {
        if !args.is_empty() {
            record_at(&w, now, args);
        }
        deliver_at_each(&w, &[now]);
    };
    step(
        "2026-12-01T07:31:00.000Z",
        &[
            "completion",
            "--post-url",
            &post(C1),
            "--at",
            "2026-12-01T07:30:18Z",
            "--scope-plans",
            "pro",
        ],
    );
    step(
        "2026-12-01T08:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post(S1),
            "--at",
            "2026-12-01T09:30:00Z",
            "--scope-plans",
            "pro",
        ],
    );
    assert_eq!(
        state_of(&w, S1),
        "pending",
        "announced after the completion"
    );
    for now in [
        "2026-12-01T08:30:00.000Z",
        "2026-12-01T09:20:00.000Z",
        "2026-12-01T09:29:00.000Z",
        "2026-12-01T09:30:00.000Z",
    ] {
        step(now, &[]);
    }
    step(
        "2026-12-01T09:31:10.000Z",
        &[
            "completion",
            "--post-url",
            &post(C2),
            "--at",
            "2026-12-01T09:31:00Z",
            "--scope-plans",
            "pro",
        ],
    );
    step(
        "2026-12-01T09:40:00.000Z",
        &["edit", C1, "--effective-at", "2026-12-01T07:30:00Z"],
    );
    step(
        "2026-12-01T09:57:44.000Z",
        &[
            "schedule",
            "--post-url",
            &post(S2),
            "--at",
            "2026-12-01T10:00:00Z",
            "--scope-plans",
            "pro",
        ],
    );
    for now in ["2026-12-01T09:59:00.000Z", "2026-12-01T10:00:00.000Z"] {
        step(now, &[]);
    }
    step(
        "2026-12-01T10:10:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post(S3),
            "--at",
            "2026-12-01T13:00:00Z",
            "--scope-plans",
            "pro",
        ],
    );
    step(
        "2026-12-01T10:11:00.000Z",
        &[
            "completion",
            "--post-url",
            &post(C3),
            "--at",
            "2026-12-01T10:01:00Z",
            "--scope-plans",
            "pro",
        ],
    );
    step(
        "2026-12-01T10:13:00.000Z",
        &["move", S3, "--at", "2026-12-01T14:00:00Z"],
    );
    step("2026-12-01T10:14:00.000Z", &["link", C3, S3]);
    let told = |prefix: &str, format: &str| -> Vec<String> {
        r.requests_to(&format!(
            "{prefix}{}",
            path_of(PEOPLE.iter().find(|(f, _)| *f == format).unwrap().1)
        ))
        .iter()
        .map(|q| shown(format, q))
        .collect()
    };
    let src = |id: &str| format!("Source: {}", post(id));
    let en = [
        said(
            "Reset completed: 2026-12-01 07:30 UTC",
            &["Global reset · Pro", &src(C1)],
        ),
        said(
            "Reset announced: 2026-12-01 09:30 UTC",
            &["Global reset · Pro", &src(S1)],
        ),
        said(
            "Reset in 10 minutes: 2026-12-01 09:30 UTC",
            &["Global reset · Pro", &src(S1)],
        ),
        said(
            "Reset in 1 minute: 2026-12-01 09:30 UTC",
            &["Global reset · Pro", &src(S1)],
        ),
        said(
            "Reset due now: 2026-12-01 09:30 UTC",
            &["Global reset · Pro", &src(S1)],
        ),
        said(
            "Reset completed: 2026-12-01 09:31 UTC",
            &[
                "Global reset · Pro",
                "Scheduled for: 2026-12-01 09:30 UTC",
                &src(C2),
            ],
        ),
        said(
            "Completion time corrected: 2026-12-01 07:30:18 UTC → 2026-12-01 07:30:00 UTC",
            &["Global reset · Pro", &src(C1)],
        ),
        said(
            "Reset announced: in 2 minutes, at 2026-12-01 10:00 UTC",
            &["Global reset · Pro", &src(S2)],
        ),
        said(
            "Reset in 1 minute: 2026-12-01 10:00 UTC",
            &["Global reset · Pro", &src(S2)],
        ),
        said(
            "Reset due now: 2026-12-01 10:00 UTC",
            &["Global reset · Pro", &src(S2)],
        ),
        said(
            "Reset announced: 2026-12-01 13:00 UTC",
            &["Global reset · Pro", &src(S3)],
        ),
        said(
            "Reset completed: 2026-12-01 10:01 UTC",
            &[
                "Global reset · Pro",
                "Scheduled for: 2026-12-01 10:00 UTC",
                &src(C3),
            ],
        ),
        said(
            "Scheduled reset moved: 2026-12-01 14:00 UTC",
            &["Global reset · Pro", "Was: 2026-12-01 13:00 UTC", &src(S3)],
        ),
        said(
            "Scheduled reset completed: 2026-12-01 10:01 UTC",
            &[
                "Global reset · Pro",
                "Scheduled for: 2026-12-01 14:00 UTC",
                &src(S3),
            ],
        ),
    ];
    assert_eq!(told("/en", "slack"), en, "English, Slack");
    let zsrc = |id: &str| format!("来源：{}", post(id));
    let zh = [
        said("重置已完成：2026-12-01 15:30 北京时间（2026-12-01 07:30 UTC）", &["全局重置 · Pro", &zsrc(C1)]),
        said("已公布重置：2026-12-01 17:30 北京时间（2026-12-01 09:30 UTC）", &["全局重置 · Pro", &zsrc(S1)]),
        said("1 小时后重置：2026-12-01 17:30 北京时间（2026-12-01 09:30 UTC）", &["全局重置 · Pro", &zsrc(S1)]),
        said("10 分钟后重置：2026-12-01 17:30 北京时间（2026-12-01 09:30 UTC）", &["全局重置 · Pro", &zsrc(S1)]),
        said("现在应当重置：2026-12-01 17:30 北京时间（2026-12-01 09:30 UTC）", &["全局重置 · Pro", &zsrc(S1)]),
        said("重置已完成：2026-12-01 17:31 北京时间（2026-12-01 09:31 UTC）", &["全局重置 · Pro", "原计划时间：2026-12-01 17:30 北京时间（2026-12-01 09:30 UTC）", &zsrc(C2)]),
        said("重置完成时间已更正：2026-12-01 15:30:18 北京时间（2026-12-01 07:30:18 UTC） → 2026-12-01 15:30:00 北京时间（2026-12-01 07:30:00 UTC）", &["全局重置 · Pro", &zsrc(C1)]),
        said("已公布重置：2 分钟后，2026-12-01 18:00 北京时间（2026-12-01 10:00 UTC）", &["全局重置 · Pro", &zsrc(S2)]),
        said("现在应当重置：2026-12-01 18:00 北京时间（2026-12-01 10:00 UTC）", &["全局重置 · Pro", &zsrc(S2)]),
        said("已公布重置：2026-12-01 21:00 北京时间（2026-12-01 13:00 UTC）", &["全局重置 · Pro", &zsrc(S3)]),
        said("重置已完成：2026-12-01 18:01 北京时间（2026-12-01 10:01 UTC）", &["全局重置 · Pro", "原计划时间：2026-12-01 18:00 北京时间（2026-12-01 10:00 UTC）", &zsrc(C3)]),
        said("计划重置时间已更改：2026-12-01 22:00 北京时间（2026-12-01 14:00 UTC）", &["全局重置 · Pro", "原定：2026-12-01 21:00 北京时间（2026-12-01 13:00 UTC）", &zsrc(S3)]),
        said("计划重置已完成：2026-12-01 18:01 北京时间（2026-12-01 10:01 UTC）", &["全局重置 · Pro", "原计划时间：2026-12-01 22:00 北京时间（2026-12-01 14:00 UTC）", &zsrc(S3)]),
    ];
    assert_eq!(told("/zh", "slack"), zh, "Chinese, Slack");
    // Every other format tells the same messages (its own links).
    for (format, messages) in people_told(&r, "/en") {
        assert_eq!(messages.len(), en.len(), "{format}: {messages:#?}");
    }
    for (format, messages) in people_told(&r, "/zh") {
        assert_eq!(messages.len(), zh.len(), "{format}: {messages:#?}");
    }
    // Programs get every change of every record, and no reminder the
    // announcement covered.
    assert_eq!(
        events(&r, "/std"),
        pairs(&[
            ("record.created", C1),
            ("record.created", S1),
            ("reset.upcoming", S1),
            ("reset.upcoming", S1),
            ("reset.window_started", S1),
            ("record.created", C2),
            ("schedule.fulfilled", S1),
            ("record.updated", C1),
            ("record.created", S2),
            ("reset.upcoming", S2),
            ("reset.window_started", S2),
            ("record.created", S3),
            ("record.created", C3),
            ("schedule.fulfilled", S2),
            ("schedule.moved", S3),
            ("record.updated", C3),
            ("schedule.fulfilled", S3),
        ])
    );
}

/// A schedule announced for `at` with id `id` (plans pro), as a record a
/// publisher serves.
fn announced_record(id: &str, at: &str, announced: &str) -> Value {
    serde_json::json!({
        "id": id, "kind": "reset_scheduled", "resetType": "global",
        "announcedAt": announced, "effectiveAt": at, "text": null, "confidence": 0.9,
        "scope": {"plans": ["pro"], "windows": ["unknown"]},
        "source": {"origin": "x", "postId": id, "handle": "h", "url": post(id)},
        "schedulePrecision": "datetime", "scheduleBasis": "explicit",
        "scheduleWindow": {"startAt": at, "endAt": at}, "scheduleState": "pending",
        "completedAt": null, "completionRecordId": null, "fulfillmentOrigin": null,
        "relatedRecordIds": []
    })
}

/// What one publish changes is one message per person: two changes are
/// one message that tells each (the first in its title, "(+1 more)"),
/// and more than ten are one digest (how many of each kind, and the status
/// page); a program still gets one event per record.
#[test]
fn many_changes_in_one_publish_are_one_message_and_past_ten_a_digest() {
    let r = Receiver::start();
    let w = World::new();
    let site = ["--public-base-url", "https://resets.example.org"];
    add(
        &w,
        &r.url("/en"),
        &[
            "--format",
            "slack",
            "--webhook-timeout",
            "10",
            site[0],
            site[1],
        ],
    );
    add(
        &w,
        &r.url("/zh"),
        &[
            "--format",
            "ntfy",
            "--lang",
            "zh",
            "--webhook-timeout",
            "10",
            site[0],
            site[1],
        ],
    );
    add_standard(&w, &r, "/std", &["--webhook-timeout", "10"]);
    let announced = "2026-12-01T08:00:00.000Z";
    // The first version is the baseline; what comes after it is news.
    w.publish_records(&[], "2026-12-01T07:00:00.000Z");
    let first = announced_record("2090000000000000101", "2026-12-02T10:00:00.000Z", announced);
    w.publish_records(std::slice::from_ref(&first), announced);
    // Two at once: one message.
    let two: Vec<Value> = [
        first.clone(),
        announced_record("2090000000000000102", "2026-12-03T10:00:00.000Z", announced),
        announced_record("2090000000000000103", "2026-12-04T10:00:00.000Z", announced),
    ]
    .to_vec();
    w.publish_records(&two, "2026-12-01T08:10:00.000Z");
    deliver_at_each(&w, &["2026-12-01T08:10:00.000Z"]);
    let page = |id: &str| format!("Details: https://resets.example.org/records/{id}");
    let en: Vec<String> = r
        .requests_to("/en")
        .iter()
        .map(|q| shown("slack", q))
        .collect();
    assert_eq!(
        en,
        [
            said(
                "Reset announced: 2026-12-02 10:00 UTC",
                &[
                    "Global reset · Pro",
                    &page("2090000000000000101"),
                    &format!("Source: {}", post("2090000000000000101"))
                ]
            ),
            said(
                "Reset announced: 2026-12-03 10:00 UTC (+1 more)",
                &[
                    "Global reset · Pro",
                    &page("2090000000000000102"),
                    &format!("Source: {}", post("2090000000000000102")),
                    "",
                    "Reset announced: 2026-12-04 10:00 UTC",
                    "Global reset · Pro",
                    &page("2090000000000000103"),
                    &format!("Source: {}", post("2090000000000000103")),
                ]
            ),
        ]
    );
    // Twelve changes at once: a digest, in the reader's language.
    let mut many = two.clone();
    many.retain(|r| r["id"] != "2090000000000000103");
    for i in 0..11 {
        let id = format!("20900000000000002{i:02}");
        many.push(announced_record(&id, "2026-12-05T10:00:00.000Z", announced));
    }
    w.publish_records(&many, "2026-12-01T08:20:00.000Z");
    deliver_at_each(&w, &["2026-12-01T08:20:00.000Z"]);
    let en: Vec<String> = r
        .requests_to("/en")
        .iter()
        .map(|q| shown("slack", q))
        .collect();
    assert_eq!(
        en[2..],
        [said(
            "12 changes to reset records",
            &[
                "1 × Scheduled reset withdrawn",
                "11 × Reset announced",
                "Status page: https://resets.example.org/"
            ]
        )]
    );
    let zh: Vec<String> = r
        .requests_to("/zh")
        .iter()
        .map(|q| shown("ntfy", q))
        .collect();
    assert_eq!(
        zh[2..],
        [said(
            "重置记录有 12 项变化",
            &[
                "1 × 计划重置已撤回",
                "11 × 已公布重置",
                "状态页：https://resets.example.org/"
            ]
        )]
    );
    assert_eq!(
        r.requests_to("/std").len(),
        1 + 2 + 12,
        "one event per record"
    );
}

/// An edit, an unlink, a link and an undo are each one message that says
/// what changed: the parts an edit changed, a schedule no longer
/// completed, which schedule a link completes, and the schedule a
/// withdrawn completion leaves open again.
#[test]
fn corrections_are_told_as_what_changed() {
    const S: &str = "2090000000000000021";
    const C: &str = "2090000000000000022";
    let r = Receiver::start();
    let w = World::new();
    slack_readers(&w, &r, None);
    let step = |now: &str, args: &[&str]| {
        record_at(&w, now, args);
        deliver_at_each(&w, &[now]);
    };
    step(
        "2026-12-01T08:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post(S),
            "--at",
            "2026-12-01T10:00:00Z",
        ],
    );
    step(
        "2026-12-01T10:02:00.000Z",
        &[
            "completion",
            "--post-url",
            &post(C),
            "--at",
            "2026-12-01T10:01:00Z",
        ],
    );
    step(
        "2026-12-01T10:03:00.000Z",
        &[
            "edit",
            S,
            "--text",
            "Moved up by an hour",
            "--confidence",
            "0.5",
        ],
    );
    step("2026-12-01T10:04:00.000Z", &["unlink", C, S]);
    step("2026-12-01T10:05:00.000Z", &["link", C, S]);
    step("2026-12-01T10:06:00.000Z", &["undo", "2"]);
    let slack = |path: &str| slack_told(&r, path);
    let (s, c) = (
        format!("Source: {}", post(S)),
        format!("Source: {}", post(C)),
    );
    assert_eq!(
        slack("/en")[2..],
        [
            said(
                "Scheduled reset updated: 2026-12-01 10:00 UTC",
                &[
                    "Global reset",
                    "Changed: text, confidence",
                    "Moved up by an hour",
                    &s
                ]
            ),
            said(
                "Scheduled reset no longer completed: 2026-12-01 10:00 UTC",
                &["Global reset", "Moved up by an hour", &s]
            ),
            said(
                "Scheduled reset completed: 2026-12-01 10:01 UTC",
                &[
                    "Global reset",
                    "Scheduled for: 2026-12-01 10:00 UTC",
                    "Moved up by an hour",
                    &s
                ]
            ),
            said(
                "Completed reset withdrawn: 2026-12-01 10:01 UTC",
                &["Global reset", "Open again: 2026-12-01 10:00 UTC", &c]
            ),
        ]
    );
    let (s, c) = (format!("来源：{}", post(S)), format!("来源：{}", post(C)));
    assert_eq!(
        slack("/zh")[2..],
        [
            said(
                "计划重置已更新：2026-12-01 10:00 UTC",
                &["全局重置", "变更：文字、置信度", "Moved up by an hour", &s]
            ),
            said(
                "计划重置不再标记为已完成：2026-12-01 10:00 UTC",
                &["全局重置", "Moved up by an hour", &s]
            ),
            said(
                "计划重置已完成：2026-12-01 10:01 UTC",
                &[
                    "全局重置",
                    "原计划时间：2026-12-01 10:00 UTC",
                    "Moved up by an hour",
                    &s
                ]
            ),
            said(
                "重置完成记录已撤回：2026-12-01 10:01 UTC",
                &["全局重置", "重新待定：2026-12-01 10:00 UTC", &c]
            ),
        ]
    );
}

/// `resetctl restore DIR` (a backup taken as the manual says, then
/// extracted): what subscribers were told after the backup and the backup
/// no longer has is told once, as withdrawn "restored from a backup of …";
/// recorded again, it is announced again; entry numbers go on.
#[test]
fn a_restore_tells_what_it_withdraws_once() {
    const S1: &str = "2090000000000000031";
    const S2: &str = "2090000000000000032";
    let r = Receiver::start();
    let w = World::new();
    slack_readers(&w, &r, Some("Asia/Shanghai"));
    add_standard(&w, &r, "/std", &["--webhook-timeout", "10"]);
    record_at(
        &w,
        "2026-12-01T08:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post(S1),
            "--at",
            "2026-12-02T10:00:00Z",
        ],
    );
    deliver_at_each(&w, &["2026-12-01T08:00:00.000Z"]);
    // The backup, as the manual's backup unit takes it.
    let data = w.data_dir();
    let archive = w.path("backup.tar.gz");
    let status = std::process::Command::new("flock")
        .arg(data.join("resetctl.lock"))
        .args(["tar", "-C"])
        .arg(&data)
        .args(["--exclude=./webhooks/deliveries.jsonl", "-czf"])
        .arg(&archive)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
    record_at(
        &w,
        "2026-12-01T09:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post(S2),
            "--at",
            "2026-12-03T10:00:00Z",
        ],
    );
    deliver_at_each(&w, &["2026-12-01T09:00:00.000Z"]);
    // The operator restores that backup.
    let extracted = w.path("restore");
    std::fs::create_dir(&extracted).unwrap();
    let status = std::process::Command::new("tar")
        .arg("-C")
        .arg(&extracted)
        .arg("-xzf")
        .arg(&archive)
        .status()
        .unwrap();
    assert!(status.success());
    let out = w
        .run(&[
            "--now",
            "2026-12-01T10:00:00.000Z",
            "restore",
            extracted.to_str().unwrap(),
            "--actor",
            "ops",
        ])
        .success();
    assert_eq!(
        out.stdout,
        "restored 1 ledger entry and 0 seeded records from a backup of 2026-12-01T08:00:00.000Z; published snapshot 3 (1 record)\n"
    );
    let ids: Vec<String> = w.current_snapshot()["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, [S1]);
    for now in ["2026-12-01T10:00:00.000Z", "2026-12-01T10:05:00.000Z"] {
        deliver_at_each(&w, &[now]);
    }
    let slack = |path: &str| slack_told(&r, path);
    assert_eq!(
        slack("/en")[2..],
        [said(
            "Scheduled reset withdrawn: 2026-12-03 10:00 UTC",
            &[
                "Global reset",
                "No longer announced: restored from a backup of 2026-12-01 08:00 UTC",
                &format!("Source: {}", post(S2))
            ]
        )]
    );
    assert_eq!(
        slack("/zh")[2..],
        [said(
            "计划重置已撤回：2026-12-03 18:00 北京时间（2026-12-03 10:00 UTC）",
            &[
                "全局重置",
                "不再公布：已从备份恢复，备份时间 2026-12-01 16:00 北京时间（2026-12-01 08:00 UTC）",
                &format!("来源：{}", post(S2))
            ]
        )]
    );
    assert_eq!(
        events(&r, "/std"),
        pairs(&[
            ("record.created", S1),
            ("record.created", S2),
            ("record.removed", S2)
        ])
    );
    // Recorded again: announced again, under a new entry number.
    record_at(
        &w,
        "2026-12-01T11:00:00.000Z",
        &[
            "schedule",
            "--post-url",
            &post(S2),
            "--at",
            "2026-12-03T10:00:00Z",
        ],
    );
    deliver_at_each(&w, &["2026-12-01T11:00:00.000Z"]);
    assert_eq!(
        headlines(&slack("/en")[3..]),
        ["Reset announced: 2026-12-03 10:00 UTC"]
    );
    let log = w.run(&["record", "log", "--json"]).success().stdout;
    let numbers: Vec<u64> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["entry"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(
        numbers,
        [4, 3, 1],
        "newest first: the new S2, the restore, S1: {log}"
    );
    assert!(log.contains("\"restore\""), "{log}");
}
