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
