//! How fast a receiver is asked, on the deliverer's clock: each endpoint
//! keeps its format's pace (src/webhook/pace.rs, docs/manual/webhooks.md),
//! so a flood of records never becomes thousands of requests in seconds;
//! the pace is kept across `webhook deliver --once` passes and by a
//! running server, counted in requests per window of the test clock.

use std::time::Duration;

use crate::reminders::set_clock;
use crate::util::receiver::Receiver;
use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::World;
use crate::webhooks::{add, add_standard, deliver_at, schedule_at};

const T0: &str = "2026-11-20T10:00:00.000Z";

/// The instant of the mirror's first sync, long before the flood.
const BEFORE: &str = "2026-11-19T10:00:00.000Z";

/// Syncs a records document of `n` new records into `w` at `now`: one
/// publish, `n` changes (what a mirror saw when its upstream suddenly
/// served 24,000 records). A first sync of one record comes before it,
/// delivered at once: a flood is a later publish (a mirror's first sync
/// may be a baseline), and this way a test counts only the flood.
/// Returns the upstream and the requests `r` got before the flood.
fn flood(w: &World, r: &Receiver, n: usize, now: &str) -> (Upstream, usize) {
    let up = Upstream::start(Behavior::Status(500));
    let sync = |at: &str| {
        w.run(&[
            "--now",
            at,
            "sync",
            "--upstream",
            &up.url("/doc.json"),
            "--once",
        ])
        .success();
    };
    up.serve(&crate::util::generated_document(1), "\"first\"");
    sync(BEFORE);
    deliver_at(w, BEFORE).success();
    let before = r.requests().len();
    up.serve(&crate::util::generated_document(n + 1), "\"flood\"");
    sync(now);
    (up, before)
}

#[test]
fn a_flood_of_standard_events_goes_out_at_the_formats_pace_pass_after_pass() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/std", &[]);
    let (_up, before) = flood(&w, &r, 100, T0);
    // Twenty at once (the burst), then ten a second of the clock; after a
    // quiet minute a burst again, never more.
    let mut got = Vec::new();
    for now in [
        T0,
        T0,
        "2026-11-20T10:00:00.950Z",
        "2026-11-20T10:00:01.000Z",
        "2026-11-20T10:00:03.000Z",
        "2026-11-20T10:01:00.000Z",
        "2026-11-20T10:01:01.000Z",
        "2026-11-20T10:01:03.000Z",
    ] {
        deliver_at(&w, now).success();
        got.push(r.requests_to("/std").len() - before);
    }
    assert_eq!(
        got,
        [20, 20, 29, 30, 50, 70, 80, 100],
        "requests after each pass"
    );
    // Each record once.
    let ids: Vec<String> = r.requests_to("/std")[before..]
        .iter()
        .map(|q| {
            crate::util::receiver::verified(q)["data"]["record"]["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 100, "each record once");
}

#[test]
fn a_chat_endpoint_gets_its_messages_at_the_services_pace() {
    let r = Receiver::start();
    let w = World::new();
    let target = format!("{}?chat_id=5", r.url("/bot1:A/sendMessage"));
    add(&w, &target, &["--format", "telegram"]);
    // Five schedules, each its own publish: five messages.
    for i in 0..5 {
        schedule_at(
            &w,
            T0,
            &format!("209000000000000000{i}"),
            "pro",
            &format!("2026-11-2{} 10:00 +00:00", i + 1),
        );
    }
    // Telegram: at most 20 a minute to a group, so one every 3 s, 3 at once.
    let mut got = Vec::new();
    for now in [
        T0,
        "2026-11-20T10:00:02.999Z",
        "2026-11-20T10:00:03.000Z",
        "2026-11-20T10:00:06.000Z",
    ] {
        deliver_at(&w, now).success();
        got.push(r.requests_to("/bot1:A/sendMessage").len());
    }
    assert_eq!(got, [3, 3, 4, 5], "messages after each pass");
}

#[test]
fn a_running_server_keeps_the_pace_on_its_clock() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/std", &[]);
    let clock = w.path("clock");
    set_clock(&clock, T0);
    let (_up, before) = flood(&w, &r, 60, T0);
    let _s = Server::start(
        &w,
        &["--no-rate-limit", "--flood-guard", "off"],
        &[("RESETCTL_TEST_CLOCK_FILE", clock.to_str().unwrap())],
    );
    // The burst, and nothing more while the clock stands still.
    let settled = |n: usize| {
        r.wait_for("/std", before + n, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(700));
        r.requests_to("/std").len() - before
    };
    assert_eq!(settled(20), 20, "the burst at 10:00:00");
    set_clock(&clock, "2026-11-20T10:00:01.000Z");
    assert_eq!(settled(30), 30, "ten more by 10:00:01");
    set_clock(&clock, "2026-11-20T10:00:02.500Z");
    assert_eq!(settled(45), 45, "fifteen more by 10:00:02.5");
    set_clock(&clock, "2026-11-20T10:01:00.000Z");
    assert_eq!(settled(60), 60, "the rest");
}

#[test]
fn a_pass_on_the_system_clock_waits_out_the_pace_and_sends_everything() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/std", &[]);
    let (_up, before) = flood(&w, &r, 30, T0);
    // No --now: the pass runs on the system clock, and ten events wait one
    // second of it behind the burst.
    let started = std::time::Instant::now();
    let run = w.run(&["webhook", "deliver", "--once"]).success();
    assert_eq!(run.stdout, "delivered 30, failed 0\n");
    assert_eq!(r.requests_to("/std").len() - before, 30);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "paced: {:?}",
        started.elapsed()
    );
}

/// The flood: an upstream that suddenly serves 24,000 records (the
/// mirror's first sync was the baseline, so the flood is all anyone hears).
/// Each person gets one digest of it (how many, and the status page), in
/// their language; a program gets one event per record at its format's
/// pace, and a receiver that answers 429 with `Retry-After` is not asked
/// again before then.
#[test]
fn a_flood_of_twenty_four_thousand_records_is_one_digest_a_person_and_a_429_is_waited_out() {
    use crate::util::receiver::Answer;
    let r = Receiver::start();
    let w = World::new();
    let site = ["--public-base-url", "https://resets.example.org"];
    add(&w, &r.url("/en"), &["--format", "slack", site[0], site[1]]);
    let zh = ["--format", "ntfy", "--lang", "zh", site[0], site[1]];
    add(&w, &r.url("/zh"), &zh);
    // The tests' 1 s request timeout is too short for a receiver on a busy
    // machine while a 24,000-event outbox is read: a timeout is not the 429.
    add_standard(&w, &r, "/std", &["--webhook-timeout", "10"]);
    // The first request of the flood is answered 429: wait two minutes.
    let wait = Answer::new(429, "slow down").header("Retry-After", "120");
    r.answer("/std", &[wait], Answer::new(200, "ok"));
    let (_up, _) = flood(&w, &r, 24_000, T0);
    deliver_at(&w, T0).success();
    let told = |path: &str, format: &str| -> Vec<String> {
        r.requests_to(path)
            .iter()
            .map(|q| crate::timelines::shown(format, q))
            .collect()
    };
    assert_eq!(
        told("/en", "slack"),
        ["24000 changes to reset records\n24000 × Reset completed\nStatus page: https://resets.example.org/"]
    );
    assert_eq!(
        told("/zh", "ntfy"),
        ["重置记录有 24000 项变化\n24000 × 重置已完成\n状态页：https://resets.example.org/"]
    );
    // The program: one request answered 429, then nothing until 10:02.
    let asked = || r.requests_to("/std").len();
    assert_eq!(asked(), 1);
    deliver_at(&w, "2026-11-20T10:01:00.000Z").success();
    assert_eq!(asked(), 1, "asked again within Retry-After");
    deliver_at(&w, "2026-11-20T10:02:01.000Z").success();
    let after = asked();
    assert!(
        (2..=1 + 25).contains(&after),
        "after the wait, at the format's pace (a burst, not thousands): {after} requests"
    );
}
