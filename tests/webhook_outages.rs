//! A receiver that was down loses nothing that is still worth telling:
//! each message expires on its own (a reminder past its time never takes
//! a later one with it), a failing endpoint is probed at least every
//! minute through its first hour, so one that is back gets its backlog,
//! in order, within a minute. Driven by `webhook deliver --once` at
//! chosen instants of the test clock.

use resetctl::model::Timestamp;
use serde_json::{json, Value};

use crate::util::receiver::{verified, Receiver};
use crate::util::World;
use crate::webhooks::{add_standard, deliver_at, schedule_at};

const T0: &str = "2026-11-20T10:00:00.000Z";
const A: &str = "2090000000000000001";
const B: &str = "2090000000000000002";
const C: &str = "2090000000000000003";

/// (type, record id, leadMinutes) of each request to `path` the receiver
/// answered 200, in arrival order: what the person was told.
fn taken(r: &Receiver, path: &str) -> Vec<(String, String, Value)> {
    r.requests_to(path)
        .iter()
        .filter(|q| q["status"] == 200)
        .map(|q| {
            let p = verified(q);
            (
                p["type"].as_str().unwrap().to_owned(),
                p["data"]["record"]["id"].as_str().unwrap().to_owned(),
                p["data"]["leadMinutes"].clone(),
            )
        })
        .collect()
}

fn told(list: &[(&str, &str, Value)]) -> Vec<(String, String, Value)> {
    list.iter()
        .map(|(t, id, lead)| ((*t).to_owned(), (*id).to_owned(), lead.clone()))
        .collect()
}

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

/// The issue's morning: reminders at 10 and 1 minutes before a 10:00
/// reset; the receiver is down from 09:50 and back at 09:57. Its cursor
/// sat on the failed 09:50 reminder, whose retry was due at 10:00:43, and
/// that reminder's expiry took the 09:59 one with it.
#[test]
fn a_receiver_back_at_0957_is_told_reset_in_1_minute_at_0959() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/r", &["--remind", "10m,1m"]);
    schedule_at(&w, T0, A, "pro", "2026-11-24 10:00 +00:00");
    deliver_at(&w, T0).success();
    // Down from 09:50: the 10-minute reminder fails, and its retries
    // (a pass at each instant the deliverer would wake) fail too.
    r.script("/r", &[], &[], 500);
    for now in [
        "2026-11-24T09:50:00.000Z",
        "2026-11-24T09:50:05.000Z",
        "2026-11-24T09:51:05.000Z",
        "2026-11-24T09:52:05.000Z",
    ] {
        deliver_at(&w, now).success();
    }
    // Back at 09:57.
    r.script("/r", &[], &[], 200);
    for now in [
        "2026-11-24T09:57:00.000Z",
        "2026-11-24T09:59:00.000Z",
        "2026-11-24T10:00:00.000Z",
        "2026-11-24T10:05:00.000Z",
    ] {
        deliver_at(&w, now).success();
    }
    assert_eq!(
        taken(&r, "/r"),
        told(&[
            ("record.created", A, Value::Null),
            ("reset.upcoming", A, json!(10)),
            ("reset.upcoming", A, json!(1)),
            ("reset.window_started", A, Value::Null),
        ])
    );
}

/// When each attempt to `id` was made, and the next retry after the last.
fn attempts(w: &World, id: &str) -> (Vec<Timestamp>, Option<Timestamp>) {
    let lines: Vec<String> = w
        .run(&["webhook", "deliveries", id, "--limit", "1000"])
        .success()
        .stdout
        .lines()
        .map(str::to_owned)
        .collect();
    // Each line starts with its attempt's time ("no delivery attempts yet" does not).
    let made = lines
        .iter()
        .filter_map(|l| Timestamp::parse(l.split_whitespace().next()?).ok())
        .collect();
    let next = lines
        .last()
        .and_then(|l| l.split("next retry ").nth(1))
        .map(|t| at(t.trim()));
    (made, next)
}

#[test]
fn a_failing_endpoint_is_probed_every_minute_for_an_hour_and_gets_its_backlog_in_order() {
    let r = Receiver::start();
    let w = World::new();
    let down = add_standard(&w, &r, "/down", &[]);
    let back = add_standard(&w, &r, "/back", &[]);
    r.script("/down", &[], &[], 500);
    r.script("/back", &[], &[], 500);
    for (post, day) in [(A, 24), (B, 25), (C, 26)] {
        schedule_at(&w, T0, post, "pro", &format!("2026-11-{day} 10:00 +00:00"));
    }
    // A pass at each instant the deliverer would wake, through the first
    // two hours; /back answers again from 10:30.
    let start = at(T0);
    let up_at = at("2026-11-20T10:30:00.000Z");
    let mut now = start;
    let mut delivered_at = None;
    while now.as_millis() - start.as_millis() <= 7_200_000 {
        if now >= up_at {
            r.script("/back", &[], &[], 200);
        }
        deliver_at(&w, &now.to_string()).success();
        if delivered_at.is_none() && !taken(&r, "/back").is_empty() {
            delivered_at = Some(now);
        }
        let nexts = [attempts(&w, &down).1, attempts(&w, &back).1];
        let Some(next) = nexts.into_iter().flatten().min() else {
            break;
        };
        now = next;
    }
    // /back: its whole backlog, in order, at its first probe after 10:30.
    let delivered_at = delivered_at.expect("the backlog was delivered");
    assert!(
        delivered_at >= up_at && delivered_at.as_millis() - up_at.as_millis() <= 60_000,
        "within a minute of 10:30: {delivered_at}"
    );
    assert_eq!(
        taken(&r, "/back"),
        told(&[
            ("record.created", A, Value::Null),
            ("record.created", B, Value::Null),
            ("record.created", C, Value::Null),
        ])
    );
    // /down: 4 to 5 s, then every 48 to 60 s (a minute, up to 20 % sooner)
    // for the first hour, then 8 to 10 minutes.
    let (times, _) = attempts(&w, &down);
    let gaps: Vec<i64> = times
        .windows(2)
        .map(|p| (p[1].as_millis() - p[0].as_millis()) / 1000)
        .collect();
    let hour = times
        .iter()
        .position(|t| t.as_millis() - start.as_millis() >= 3_600_000)
        .expect("past the first hour");
    assert!((4..=5).contains(&gaps[0]), "{gaps:?}");
    assert!(
        gaps[1..hour].iter().all(|g| (48..=60).contains(g)),
        "every minute through the first hour: {gaps:?}"
    );
    let distinct: std::collections::HashSet<_> = gaps[1..hour].iter().collect();
    assert!(distinct.len() > 1, "the jitter is kept: {gaps:?}");
    assert!(
        gaps[hour..].iter().all(|g| (480..=600).contains(g)),
        "then every 10 minutes in the second hour: {gaps:?}"
    );
}

/// A running deliverer wakes when the message at its cursor expires, and
/// tries the next one then, not at the expired one's next retry.
#[test]
fn a_running_deliverer_drops_an_expired_message_at_its_expiry_and_goes_on() {
    let r = Receiver::start();
    let w = World::new();
    let id = add_standard(
        &w,
        &r,
        "/r",
        &["--event", "record.created,reset.window_started"],
    );
    let clock = w.path("clock");
    crate::reminders::set_clock(&clock, "2026-11-24T09:00:00.000Z");
    schedule_at(
        &w,
        "2026-11-24T09:00:00.000Z",
        A,
        "pro",
        "2026-11-24 10:00 +00:00",
    );
    let _s = crate::util::server::Server::start(
        &w,
        &["--no-rate-limit", "--flood-guard", "off"],
        &[("RESETCTL_TEST_CLOCK_FILE", clock.to_str().unwrap())],
    );
    r.wait_for("/r", 1, std::time::Duration::from_secs(20));
    // Down at 10:00: "due now" fails, and is retried until its grace ends
    // at 10:15; a new schedule queues behind it meanwhile.
    r.script("/r", &[], &[], 500);
    let attempts_made = |w: &World| attempts(w, &id).0.len();
    crate::reminders::set_clock(&clock, "2026-11-24T10:00:00.000Z");
    crate::util::wait_until(std::time::Duration::from_secs(20), "due now tried", || {
        attempts_made(&w) == 2
    });
    schedule_at(
        &w,
        "2026-11-24T10:01:00.000Z",
        B,
        "pro",
        "2026-11-25 10:00 +00:00",
    );
    let expiry = at("2026-11-24T10:15:00.000Z");
    loop {
        let next = attempts(&w, &id).1.expect("retrying");
        if next > expiry {
            break;
        }
        let made = attempts_made(&w);
        crate::reminders::set_clock(&clock, &next.to_string());
        crate::util::wait_until(std::time::Duration::from_secs(20), "the retry", || {
            attempts_made(&w) > made
        });
    }
    // Back, and the clock at the expiry: B's announcement goes now.
    r.script("/r", &[], &[], 200);
    crate::reminders::set_clock(&clock, &expiry.to_string());
    crate::util::wait_until(
        std::time::Duration::from_secs(10),
        "B announced at 10:15",
        || taken(&r, "/r").len() == 2,
    );
    assert_eq!(
        taken(&r, "/r"),
        told(&[
            ("record.created", A, Value::Null),
            ("record.created", B, Value::Null),
        ])
    );
}
