//! The deliverer's guarantees under process death and competition: SIGKILL
//! at any moment loses nothing (at worst a duplicate with the same
//! `webhook-id`), and several `serve` processes on one data dir deliver
//! each change once per endpoint.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::Value;

use crate::util::receiver::{verified, Receiver};
use crate::util::server::Server;
use crate::util::{trace, wait_for_step, Rng, World};
use crate::webhooks::{add_standard, all_delivered, schedule};

const T0: &str = "2026-11-20T10:00:00.000Z";

fn post(i: usize) -> String {
    format!("{}", 2_090_000_000_000_000_100u64 + i as u64)
}

/// The outbox position of a message id (`msg_<outbox>_<n>_<digest>`).
fn position(id: &str) -> u64 {
    id.split('_').nth(2).unwrap().parse().unwrap()
}

/// Checks what `path` received: every expected record (in order, no gap),
/// positions never going back, and every duplicate a true re-send (same
/// id, same payload; no change under two ids). Returns the duplicates.
#[track_caller]
fn check_at_least_once_in_order(r: &Receiver, path: &str, expected: &[String]) -> usize {
    let requests = r.requests_to(path);
    let mut last = 0;
    let mut first_seen: Vec<String> = Vec::new();
    let mut bodies: HashMap<String, Value> = HashMap::new();
    let mut ids_of_change: HashMap<(String, String, u64), HashSet<String>> = HashMap::new();
    let mut duplicates = 0;
    for request in &requests {
        let payload = verified(request);
        let id = request["headers"]["webhook-id"]
            .as_str()
            .unwrap()
            .to_owned();
        let n = position(&id);
        assert!(n >= last, "{path}: position {n} after {last}: out of order");
        last = n;
        let record = payload["data"]["record"]["id"].as_str().unwrap().to_owned();
        ids_of_change
            .entry((
                payload["type"].as_str().unwrap().to_owned(),
                record.clone(),
                payload["data"]["sequence"].as_u64().unwrap(),
            ))
            .or_default()
            .insert(id.clone());
        match bodies.get(&id) {
            Some(before) => {
                duplicates += 1;
                assert_eq!(before, &payload, "{path}: a duplicate of {id} differs");
            }
            None => {
                bodies.insert(id, payload);
                first_seen.push(record);
            }
        }
    }
    assert_eq!(
        first_seen, expected,
        "{path}: every change, in order, no gap"
    );
    for (change, ids) in ids_of_change {
        assert_eq!(
            ids.len(),
            1,
            "{path}: {change:?} arrived under several ids {ids:?}"
        );
    }
    duplicates
}

#[test]
fn sigkill_of_the_deliverer_loses_nothing_and_duplicates_share_the_id() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &[]);
    add_standard(&w, &r, "/b", &[]);
    let deliverer = |pause: Option<&str>, trace_file: &str| {
        let mut cmd = w.cmd();
        cmd.args(["--log", "warn", "webhook", "deliver"])
            .env("RESETCTL_TEST_TRACE", w.path(trace_file))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(step) = pause {
            cmd.env("RESETCTL_TEST_PAUSE_AT", step);
        }
        cmd.spawn().expect("spawn the deliverer")
    };
    // Killed after an answer, before the cursor is saved: sent again, same id.
    schedule(&w, T0, &post(0), "pro");
    let mut child = deliverer(Some("deliver:answered"), "trace");
    assert!(
        wait_for_step(&mut child, &w.path("trace"), "deliver:answered"),
        "{:?}",
        trace(&w.path("trace"))
    );
    child.kill().unwrap();
    child.wait().unwrap();

    // Then killed at random moments while publishes happen.
    let publishes = 24;
    let publisher = {
        let data_dir = w.data_dir();
        let home = w.tmp.path().to_owned();
        std::thread::spawn(move || {
            for i in 1..=publishes {
                let out = std::process::Command::new(crate::util::bin())
                    .env_clear()
                    .env("HOME", home.join("home"))
                    .env("RESETCTL_CONFIG", crate::util::own_config_path(&home))
                    .arg("--data-dir")
                    .arg(&data_dir)
                    .args([
                        "--now",
                        &format!("2026-11-20T11:{i:02}:00.000Z"),
                        "record",
                        "schedule",
                    ])
                    .args(["--post-url", &format!("https://x.com/h/status/{}", post(i))])
                    .args(["--at", "2026-11-24 10:00 -08:00", "--scope-plans", "pro"])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{out:?}");
                std::thread::sleep(Duration::from_millis(30));
            }
        })
    };
    let mut rng = Rng::from_time();
    // Where each kill landed, from the deliverer's own trace: before it
    // held the lock, while it held it, or after it had sent something.
    let (mut kills, mut holding, mut after_sending) = (0, 0, 0);
    while !publisher.is_finished() {
        let trace_file = format!("trace-kill-{kills}");
        let mut child = deliverer(None, &trace_file);
        std::thread::sleep(Duration::from_millis(100 + rng.below(400)));
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
        let steps = trace(&w.path(&trace_file));
        if steps.iter().any(|s| s == "deliver:locked") {
            holding += 1;
        }
        if steps.iter().any(|s| s == "deliver:answered") {
            after_sending += 1;
        }
    }
    publisher.join().unwrap();
    // A last run drains what is left.
    w.run(&["--now", T0, "webhook", "deliver", "--once"])
        .success();
    let expected: Vec<String> = (0..=publishes).map(post).collect();
    let duplicates = check_at_least_once_in_order(&r, "/a", &expected)
        + check_at_least_once_in_order(&r, "/b", &expected);
    assert!(
        duplicates >= 1,
        "the kill after an answer re-sends that message"
    );
    eprintln!(
        "{kills} kills: {holding} while holding the deliverer lock, {after_sending} after sending; {duplicates} duplicates"
    );
    assert!(
        holding >= 2 && after_sending >= 1,
        "the kills did not land inside deliveries: {kills} kills, {holding} while holding the lock, {after_sending} after sending"
    );
}

#[test]
fn two_serve_processes_deliver_each_change_once_per_endpoint() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/a", &[]);
    add_standard(&w, &r, "/b", &["--kind", "reset_scheduled"]);
    let args = ["--log", "warn"];
    let mut first = Server::start(&w, &args, &[]);
    let _second = Server::start(&w, &args, &[]);
    for i in 0..6 {
        schedule(&w, &format!("2026-11-20T10:0{i}:00.000Z"), &post(i), "pro");
    }
    let expected: Vec<String> = (0..6).map(post).collect();
    for path in ["/a", "/b"] {
        r.wait_for(path, 6, Duration::from_secs(30));
    }
    // Both cursors are past every change: nothing is left to send, so
    // whatever was sent twice has arrived by now.
    all_delivered(&w, 6);
    for path in ["/a", "/b"] {
        assert_eq!(
            check_at_least_once_in_order(&r, path, &expected),
            0,
            "{path}: no duplicates"
        );
    }
    // One of them dies: the other takes the deliverer lock over.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    for i in 6..9 {
        schedule(&w, &format!("2026-11-20T10:0{i}:00.000Z"), &post(i), "pro");
    }
    let expected: Vec<String> = (0..9).map(post).collect();
    for path in ["/a", "/b"] {
        r.wait_for(path, 9, Duration::from_secs(30));
    }
    all_delivered(&w, 9);
    for path in ["/a", "/b"] {
        assert_eq!(
            check_at_least_once_in_order(&r, path, &expected),
            0,
            "{path}: no duplicates"
        );
    }
}
