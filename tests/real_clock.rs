//! What a person is told, on the real clock against the release build:
//! the races a test clock that steps deterministically cannot meet.
//!
//! Each trial is a fresh data dir served by the optimised binary a user
//! runs ([`crate::util::release_bin`]), a Standard Webhooks endpoint that
//! asked for a one-minute reminder, and one schedule recorded a few
//! seconds before that reminder falls due, with nothing published after
//! it: the reminder scheduler must learn of the publish from the step
//! that makes it visible (the pointer move), not from the outbox append
//! that comes before it (docs/decision-records.md, "Reminders wake on the
//! pointer").

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::receiver::{verified, Receiver};
use crate::util::server::Server;
use crate::util::{release_bin, World};

/// Trials run at once (each its own data dir, server and endpoint path).
const TRIALS: usize = 12;

/// How long before its reminder falls due a schedule is recorded.
const LEAD_IN: Duration = Duration::from_millis(2500);

/// How late the reminder may arrive after it fell due on the real clock.
const LATE: Duration = Duration::from_secs(8);

/// Milliseconds since the epoch, now.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// One trial's world, served by the release build, with a standard
/// endpoint at `path` reminded one minute ahead.
struct Trial {
    w: World,
    path: String,
    _server: Server,
}

impl Trial {
    fn start(r: &Receiver, n: usize) -> Self {
        let w = World::new();
        let path = format!("/trial{n}");
        crate::webhooks::add_standard_with(&w, release_bin(), r, &path, &["--remind", "1m"]);
        let server = Server::start_with(
            w.cmd_of(release_bin()),
            &["--no-rate-limit", "--flood-guard", "off"],
        );
        server.wait_for_log("webhook deliverer running", Duration::from_secs(30));
        Trial {
            w,
            path,
            _server: server,
        }
    }

    /// Records a schedule whose one-minute reminder falls due [`LEAD_IN`]
    /// from now; returns when it falls due (ms since the epoch).
    fn record(&self) -> i64 {
        let due = now_ms() + LEAD_IN.as_millis() as i64;
        let at = resetctl::model::Timestamp::from_millis(due + 60_000).to_string();
        let out = self
            .w
            .cmd_of(release_bin())
            .args([
                "record",
                "schedule",
                "--post-url",
                "https://x.com/h/status/2090000000000000001",
                "--at",
                &at,
                "--scope-plans",
                "pro",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        due
    }
}

/// The event types `path` received, verified by the reference library.
fn types(r: &Receiver, path: &str) -> Vec<String> {
    r.requests_to(path)
        .iter()
        .map(|q| verified(q)["type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_schedule_recorded_with_nothing_after_it_gets_its_reminder_on_the_release_build() {
    let r = Receiver::start();
    let trials: Vec<Trial> = std::thread::scope(|s| {
        let started: Vec<_> = (0..TRIALS)
            .map(|n| {
                s.spawn({
                    let r = &r;
                    move || Trial::start(r, n)
                })
            })
            .collect();
        started.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let dues: Vec<i64> = std::thread::scope(|s| {
        let recorded: Vec<_> = trials.iter().map(|t| s.spawn(|| t.record())).collect();
        recorded.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let deadline = Instant::now()
        + Duration::from_millis((dues.iter().max().unwrap() - now_ms()).max(0) as u64)
        + LATE;
    let reminded = |t: &Trial| types(&r, &t.path).iter().any(|e| e == "reset.upcoming");
    while Instant::now() < deadline && !trials.iter().all(reminded) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let lost: Vec<(String, Vec<String>)> = trials
        .iter()
        .filter(|t| !reminded(t))
        .map(|t| (t.path.clone(), types(&r, &t.path)))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {TRIALS} trials lost the reminder due {LEAD_IN:?} after the schedule was recorded \
         (what they got instead, by endpoint): {lost:?}",
        lost.len()
    );
    // Each was announced first, then reminded once, and nothing else.
    for t in &trials {
        assert_eq!(types(&r, &t.path), ["record.created", "reset.upcoming"]);
        let reminder: Value = verified(&r.requests_to(&t.path)[1]);
        assert_eq!(reminder["data"]["leadMinutes"], 1);
    }
}
