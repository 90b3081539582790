//! Webhooks against real receiver processes on loopback: every standard
//! request verified by the Standard Webhooks reference library (PyPI
//! `standardwebhooks`), the change types of every way of publishing,
//! filters, retries, the retry window (with `--now`), 410, `test`,
//! `deliveries`, refused targets, and delivery by `serve`.

use std::time::Duration;

use serde_json::Value;

use crate::util::receiver::{verified, Receiver};
use crate::util::server::Server;
use crate::util::{Run, World};

const T0: &str = "2026-11-20T10:00:00.000Z";
const SCHEDULE_AT: &str = "2026-11-24 10:00 -08:00";
/// Days before the schedule's window: no automatic match, so a completion
/// fulfils the schedule only when linked.
const COMPLETED_AT: &str = "2026-11-21 09:00 +00:00";

/// `webhook add URL --allow-private-targets EXTRA…` (the receiver is on
/// loopback), with `--webhook-timeout 1` unless EXTRA sets one: the id and
/// the secret.
pub fn add(w: &World, url: &str, extra: &[&str]) -> (String, Option<String>) {
    add_with(w, crate::util::bin(), url, extra)
}

/// [`add`] with another build of the binary.
pub fn add_with(w: &World, bin: &str, url: &str, extra: &[&str]) -> (String, Option<String>) {
    let mut args = vec!["webhook", "add", url, "--allow-private-targets"];
    if !extra.contains(&"--webhook-timeout") {
        args.extend(["--webhook-timeout", "1"]);
    }
    args.extend_from_slice(extra);
    let out = crate::util::Run::from(w.cmd_of(bin).args(&args).output().expect("spawn resetctl"))
        .success()
        .stdout;
    let id = out.lines().next().expect("an id line").to_owned();
    assert!(id.starts_with("ep_"), "{out}");
    let secret = out
        .lines()
        .find_map(|l| l.strip_prefix("secret: "))
        .map(str::to_owned);
    (id, secret)
}

/// Waits until every endpoint has received `n` changes and has nothing
/// pending (its cursor is saved past them), as `webhook list` says.
pub fn all_delivered(w: &World, n: u64) {
    crate::util::wait_until(
        Duration::from_secs(30),
        "every cursor past every change",
        || {
            let list = w.run(&["webhook", "list", "--json"]).json();
            list.as_array()
                .unwrap()
                .iter()
                .all(|e| e["pending"] == 0 && e["delivered"].as_u64().is_some_and(|d| d >= n))
        },
    );
}

/// Adds a standard endpoint at `path` and tells the receiver its secret.
pub fn add_standard(w: &World, r: &Receiver, path: &str, extra: &[&str]) -> String {
    add_standard_with(w, crate::util::bin(), r, path, extra)
}

/// [`add_standard`] with another build of the binary.
pub fn add_standard_with(w: &World, bin: &str, r: &Receiver, path: &str, extra: &[&str]) -> String {
    let (id, secret) = add_with(w, bin, &r.url(path), extra);
    let secret = secret.expect("the standard format prints a secret");
    assert!(secret.starts_with("whsec_"), "{secret}");
    r.secret(path, &secret);
    id
}

/// One `webhook deliver --once` pass at `now`.
pub fn deliver_at(w: &World, now: &str) -> Run {
    w.run(&["--now", now, "webhook", "deliver", "--once"])
}

pub fn schedule(w: &World, now: &str, post: &str, plans: &str) {
    schedule_at(w, now, post, plans, SCHEDULE_AT);
}

/// [`schedule`] of a reset at `at` (an operator time, with its offset).
pub fn schedule_at(w: &World, now: &str, post: &str, plans: &str, at: &str) {
    w.run(&[
        "--now",
        now,
        "record",
        "schedule",
        "--post-url",
        &format!("https://x.com/h/status/{post}"),
        "--at",
        at,
        "--scope-plans",
        plans,
        "--text",
        "Resets on Monday",
    ])
    .success();
}

pub fn completion(w: &World, now: &str, post: &str, plans: &str) {
    w.run(&[
        "--now",
        now,
        "record",
        "completion",
        "--post-url",
        &format!("https://x.com/h/status/{post}"),
        "--at",
        COMPLETED_AT,
        "--scope-plans",
        plans,
    ])
    .success();
}

/// (type, record id) of each verified request to `path`.
pub fn events(r: &Receiver, path: &str) -> Vec<(String, String)> {
    r.requests_to(path)
        .iter()
        .map(|req| {
            let p = verified(req);
            (
                p["type"].as_str().unwrap().to_owned(),
                p["data"]["record"]["id"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect()
}

fn ev(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(t, id)| ((*t).to_owned(), (*id).to_owned()))
        .collect()
}

const A: &str = "2090000000000000001";
const B: &str = "2090000000000000002";

#[test]
fn standard_requests_verify_for_every_change_and_every_way_of_publishing() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/std", &[]);
    schedule(&w, T0, A, "pro"); // 1: created
    w.run(&[
        "--now",
        "2026-11-20T11:00:00.000Z",
        "record",
        "edit",
        A,
        "--text",
        "edited",
    ])
    .success(); // 2: updated (an edit)
    w.run(&["--now", "2026-11-25T00:00:00.000Z", "publish"])
        .success(); // 3: the window elapsed on a republish: no change to tell
                    // (schedule.elapsed tells it, once the tolerance has passed)
    w.run(&["--now", "2026-11-25T01:00:00.000Z", "record", "dismiss", A])
        .success(); // 4: removed
    w.run(&["snapshots", "rollback", "3"]).success(); // created again
    deliver_at(&w, "2026-11-25T02:00:00.000Z").success();

    let requests = r.requests_to("/std");
    let payloads: Vec<Value> = requests.iter().map(verified).collect();
    let types: Vec<&str> = payloads
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "record.created",
            "record.updated",
            "record.removed",
            "record.created"
        ]
    );
    let sequences: Vec<u64> = payloads
        .iter()
        .map(|p| p["data"]["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(sequences, [1, 2, 4, 3], "the rollback names its target");
    assert_eq!(payloads[1]["data"]["record"]["text"], "edited");
    assert_eq!(
        payloads[2]["data"]["record"]["scheduleState"], "elapsed",
        "the removal carries the record as last served"
    );
    for p in &payloads {
        assert_eq!(p["data"]["record"]["id"], A);
        assert!(p["timestamp"].as_str().unwrap().ends_with('Z'), "{p}");
        assert!(
            p["data"]["generatedAt"].as_str().unwrap().ends_with('Z'),
            "{p}"
        );
        let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3, "{p}");
    }
    let ids: std::collections::HashSet<&str> = requests
        .iter()
        .map(|r| r["headers"]["webhook-id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 4, "one message id per change");
    // Everything was delivered: another pass sends nothing.
    deliver_at(&w, "2026-11-25T03:00:00.000Z").success();
    assert_eq!(r.requests_to("/std").len(), 4);
}

#[test]
fn a_seed_is_a_baseline_in_an_empty_data_dir_and_announced_in_a_served_one() {
    let r = Receiver::start();
    let w = World::new();
    // An endpoint added to an empty data dir: the history seeded there is
    // the baseline, not news.
    add_standard(&w, &r, "/seed", &[]);
    w.seed_bundled();
    deliver_at(&w, T0).success();
    assert_eq!(events(&r, "/seed"), []);
    // History seeded into a data dir already served is told, every record
    // (a `kind=all` endpoint hears of every record, whatever list the API
    // shows it in).
    std::fs::write(w.path("more.json"), crate::util::generated_document(3)).unwrap();
    w.run(&["--now", T0, "seed", w.path("more.json").to_str().unwrap()])
        .success();
    deliver_at(&w, T0).success();
    let got = events(&r, "/seed");
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        got.iter()
            .all(|(t, id)| t == "record.created" && id.starts_with("seed:")),
        "{got:?}"
    );
}

#[test]
fn endpoints_get_only_their_kind_events_and_plan() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/completed", &["--kind", "reset_completed"]);
    add_standard(&w, &r, "/scheduled", &["--kind", "reset_scheduled"]);
    add_standard(&w, &r, "/removed", &["--event", "record.removed"]);
    add_standard(&w, &r, "/pro", &["--plan", "pro"]);
    schedule(&w, T0, A, "pro");
    completion(&w, "2026-11-20T11:00:00.000Z", B, "team");
    // The operator links them: the schedule is fulfilled (it leaves `all`).
    w.run(&["--now", "2026-11-20T12:00:00.000Z", "record", "link", B, A])
        .success();
    // Dismissing the completion un-fulfils the schedule: pending again.
    w.run(&["--now", "2026-11-20T13:00:00.000Z", "record", "dismiss", B])
        .success();
    deliver_at(&w, "2026-11-20T14:00:00.000Z").success();
    assert_eq!(
        events(&r, "/completed"),
        ev(&[
            ("record.created", B),
            ("record.updated", B),
            ("record.removed", B)
        ])
    );
    assert_eq!(
        events(&r, "/scheduled"),
        ev(&[
            ("record.created", A),
            ("schedule.fulfilled", A),
            ("record.updated", A)
        ]),
        "fulfilled, then pending again"
    );
    assert_eq!(
        events(&r, "/removed"),
        ev(&[("record.removed", B)]),
        "only removals: the dismissed completion (the fulfilled schedule was never removed)"
    );
    assert_eq!(
        events(&r, "/pro"),
        ev(&[
            ("record.created", A),
            ("schedule.fulfilled", A),
            ("record.updated", A)
        ]),
        "the team-only completion is not for pro; the schedule is told fulfilled, then pending again"
    );
}

#[test]
fn an_endpoint_kept_with_a_plan_the_rule_refuses_sends_nothing_until_given_one() {
    let r = Receiver::start();
    let w = World::new();
    let id = add_standard(&w, &r, "/team", &["--plan", "pro"]);
    // An older version took 1 to 64 of [a-z0-9_.-]: it kept "team-a".
    let file = w.data_dir().join("webhooks/endpoints.json");
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(kept.contains(r#""plan": "pro""#), "{kept}");
    std::fs::write(
        &file,
        kept.replace(r#""plan": "pro""#, r#""plan": "team-a""#),
    )
    .unwrap();
    let fix = format!(
        "its plan filter \"team-a\" is not a plan id of 1 to 32 characters a-z, 0-9 or _ (such as plus or pro): give it one with `resetctl webhook set {id} --plan PLAN` (or --no-plan for every plan), then enable it"
    );
    let show = w.run(&["webhook", "show", &id]).success().stdout;
    assert!(
        show.contains("plan:        \"team-a\", refused: see status\n"),
        "{show}"
    );
    assert!(
        show.contains(&format!("status:      disabled ({fix})\n")),
        "{show}"
    );
    let listed = w.run(&["webhook", "list", "--json"]).json();
    assert_eq!(listed[0]["enabled"], false, "{listed}");
    assert_eq!(listed[0]["disabledReason"], fix.as_str(), "{listed}");

    // Read disabled: it sends nothing, not every plan's records.
    schedule(&w, T0, A, "team_a");
    deliver_at(&w, "2026-11-20T10:30:00.000Z").success();
    assert_eq!(events(&r, "/team"), ev(&[]));
    // It cannot be enabled without a filter the rule takes.
    let enable = w.run(&["webhook", "enable", &id]);
    assert_eq!(enable.code, 64, "{enable:?}");
    assert!(enable.stderr.contains(&fix), "{}", enable.stderr);
    let bad = w.run(&["webhook", "set", &id, "--plan", "team-b"]);
    assert_eq!(bad.code, 64, "{bad:?}");
    assert!(
        bad.stderr
            .contains("\"team-b\" is not a plan id of 1 to 32 characters a-z, 0-9 or _"),
        "{}",
        bad.stderr
    );

    // Given one, and enabled: it resumes at its cursor, with that filter.
    w.run(&["webhook", "set", &id, "--plan", "team_a"])
        .success();
    let show = w.run(&["webhook", "show", &id]).success().stdout;
    assert!(show.contains("plan:        team_a\n"), "{show}");
    assert!(
        show.contains(&format!("status:      disabled (disabled while its plan filter \"team-a\" was refused; it has one now: `resetctl webhook enable {id}` resumes it)\n")),
        "{show}"
    );
    w.run(&["webhook", "enable", &id]).success();
    completion(&w, "2026-11-20T11:00:00.000Z", B, "pro");
    deliver_at(&w, "2026-11-20T11:30:00.000Z").success();
    assert_eq!(
        events(&r, "/team"),
        ev(&[("record.created", A)]),
        "the team_a schedule, kept while it was disabled; not the pro completion"
    );
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains(r#""plan": "team_a""#), "{saved}");
    assert!(!saved.contains("refusedPlan"), "{saved}");
}

#[test]
fn retries_through_500s_and_a_timeout_keep_the_message_id() {
    let r = Receiver::start();
    let w = World::new();
    let id = add_standard(&w, &r, "/r", &[]);
    // 500, then an answer slower than the 1 s timeout, then 200.
    r.script("/r", &[500, 200, 200], &[0.0, 3.0, 0.0], 200);
    schedule(&w, T0, A, "pro");
    deliver_at(&w, "2026-11-20T10:00:01.000Z").success();
    assert_eq!(r.requests_to("/r").len(), 1);
    // Not due yet (about 5 s after the failure): nothing is sent.
    deliver_at(&w, "2026-11-20T10:00:02.000Z").success();
    assert_eq!(r.requests_to("/r").len(), 1);
    deliver_at(&w, "2026-11-20T10:00:10.000Z").success();
    assert_eq!(r.requests_to("/r").len(), 2);
    // The second retry is about a minute later.
    deliver_at(&w, "2026-11-20T10:00:30.000Z").success();
    assert_eq!(r.requests_to("/r").len(), 2);
    deliver_at(&w, "2026-11-20T10:02:00.000Z").success();
    let requests = r.requests_to("/r");
    assert_eq!(requests.len(), 3);
    let ids: Vec<&str> = requests
        .iter()
        .map(|r| r["headers"]["webhook-id"].as_str().unwrap())
        .collect();
    assert!(
        ids.iter().all(|i| *i == ids[0]),
        "one webhook-id across retries: {ids:?}"
    );
    for request in &requests {
        verified(request);
    }
    let shown = w.run(&["webhook", "deliveries", &id]).success().stdout;
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert!(
        lines[0].contains("record.created")
            && lines[0].contains("retrying")
            && lines[0].contains(" 500"),
        "{shown}"
    );
    assert!(
        lines[0].contains("next retry 2026-11-20T10:00:0"),
        "about 5 s later: {shown}"
    );
    // The second delay is a minute, up to 20 % sooner (the jitter), after
    // the attempt at 10:00:10.
    let next = lines[1]
        .split("next retry ")
        .nth(1)
        .map(str::trim)
        .unwrap_or_else(|| panic!("no next retry: {shown}"));
    assert!(lines[1].contains("timed out"), "{shown}");
    assert!(
        ("2026-11-20T10:00:58.000Z"..="2026-11-20T10:01:10.000Z").contains(&next),
        "48 to 60 s after 10:00:10: {shown}"
    );
    assert!(
        lines[2].contains("delivered")
            && lines[2].contains(" 200")
            && !lines[2].contains("next retry"),
        "{shown}"
    );
    let json = w.run(&["webhook", "deliveries", "--json"]).success().stdout;
    let last: Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
    assert_eq!(last["status"], 200);
    assert_eq!(last["message"], ids[0]);
}

#[test]
fn a_message_failing_for_24_hours_is_marked_failed_and_the_endpoint_moves_on() {
    let r = Receiver::start();
    let w = World::new();
    let id = add_standard(&w, &r, "/f", &[]);
    r.script("/f", &[], &[], 500);
    schedule(&w, T0, A, "pro");
    deliver_at(&w, "2026-11-20T10:00:00.000Z").success();
    deliver_at(&w, "2026-11-21T09:00:00.000Z").success();
    assert_eq!(r.requests_to("/f").len(), 2);
    let shown = w.run(&["webhook", "deliveries"]).success().stdout;
    assert!(
        shown.lines().last().unwrap().contains("retrying"),
        "still within the window: {shown}"
    );
    // The window closes 24 h after the first attempt.
    deliver_at(&w, "2026-11-21T10:00:00.000Z").success();
    assert_eq!(r.requests_to("/f").len(), 3);
    let shown = w.run(&["webhook", "deliveries"]).success().stdout;
    assert!(shown.lines().last().unwrap().contains("failed"), "{shown}");
    let status = w.run(&["status"]).success().stdout;
    assert!(
        status.contains(&id) && status.contains("1 failed"),
        "status shows the failed delivery: {status}"
    );
    let json = w.run(&["status", "--json"]).success().json();
    assert_eq!(json["webhooks"][0]["failed"], 1, "{json}");
    // The endpoint goes on with the next change.
    r.script("/f", &[], &[], 200);
    completion(&w, "2026-11-21T11:00:00.000Z", B, "pro");
    deliver_at(&w, "2026-11-21T11:00:00.000Z").success();
    let got = events(&r, "/f");
    assert_eq!(
        got.last().unwrap(),
        &("record.created".to_owned(), B.to_owned())
    );
    assert_eq!(got.len(), 4);
}

#[test]
fn gone_disables_the_endpoint_until_enabled() {
    let r = Receiver::start();
    let w = World::new();
    let id = add_standard(&w, &r, "/g", &[]);
    r.script("/g", &[410], &[], 200);
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    assert_eq!(r.requests_to("/g").len(), 1);
    let list = w.run(&["webhook", "list"]).success().stdout;
    assert!(list.contains(&id) && list.contains("disabled"), "{list}");
    let show = w.run(&["webhook", "show", &id]).success().stdout;
    assert!(show.contains("410 Gone"), "{show}");
    completion(&w, "2026-11-20T11:00:00.000Z", B, "pro");
    deliver_at(&w, "2026-11-20T12:00:00.000Z").success();
    assert_eq!(
        r.requests_to("/g").len(),
        1,
        "a disabled endpoint gets nothing"
    );
    w.run(&["webhook", "enable", &id]).success();
    deliver_at(&w, "2026-11-20T12:00:00.000Z").success();
    assert_eq!(
        events(&r, "/g"),
        ev(&[
            ("record.created", A),
            ("record.created", A),
            ("record.created", B)
        ]),
        "enabled again, it resumes where it stopped"
    );
}

#[test]
fn test_sends_a_signed_webhook_test_event() {
    let r = Receiver::start();
    let w = World::new();
    let id = add_standard(&w, &r, "/t", &[]);
    let out = w.run(&["webhook", "test", &id]).success().stdout;
    assert!(
        out.contains("webhook.test") && out.contains("answered 200"),
        "{out}"
    );
    let requests = r.requests_to("/t");
    assert_eq!(requests.len(), 1);
    let payload = verified(&requests[0]);
    assert_eq!(payload["type"], "webhook.test");
    assert!(payload["data"]["record"].is_null());
    let shown = w.run(&["webhook", "deliveries", &id]).success().stdout;
    assert!(
        shown.contains("webhook.test") && shown.contains("200"),
        "{shown}"
    );
    r.script("/t", &[200, 500], &[], 200);
    let failed = w.run(&["webhook", "test", &id]);
    assert_eq!(failed.code, 69, "{failed:?}");
    assert!(failed.stderr.contains("answered 500"), "{failed:?}");
    // A person's format: the test message names its message id, in words.
    let (slack, _) = add(&w, &r.url("/people"), &["--format", "slack"]);
    let out = w.run(&["webhook", "test", &slack]).success().stdout;
    let message = out
        .split_whitespace()
        .find(|word| word.starts_with("msg_test_"))
        .unwrap_or_else(|| panic!("no message id in {out:?}"))
        .trim_end_matches([',', ':', ')', '.']);
    let told = crate::timelines::shown("slack", &r.requests_to("/people")[0]);
    assert_eq!(
        told,
        format!(
            "resetctl test notification\nThis endpoint receives resetctl changes (message {message})."
        )
    );
}

#[test]
fn endpoints_are_listed_shown_disabled_and_removed() {
    let r = Receiver::start();
    let w = World::new();
    let (id, secret) = add(
        &w,
        &r.url("/m?token=abc"),
        &["--description", "ops channel", "--event", "record.created"],
    );
    let secret = secret.unwrap();
    let list = w.run(&["webhook", "list"]).success().stdout;
    assert!(list.contains(&id) && list.contains("enabled"), "{list}");
    assert!(
        !list.contains(&secret) && !list.contains("token=abc"),
        "list hides secrets: {list}"
    );
    let show = w.run(&["webhook", "show", &id]).success().stdout;
    assert!(
        show.contains(&secret) && show.contains("ops channel") && show.contains("record.created"),
        "{show}"
    );
    w.run(&["webhook", "disable", &id]).success();
    assert!(w
        .run(&["webhook", "list"])
        .success()
        .stdout
        .contains("disabled"));
    w.run(&["webhook", "remove", &id]).success();
    assert!(w
        .run(&["webhook", "list"])
        .success()
        .stdout
        .contains("no webhook endpoints"));
    let missing = w.run(&["webhook", "show", &id]);
    assert_eq!(missing.code, 64);
    assert!(
        missing.stderr.contains("no webhook endpoint"),
        "{missing:?}"
    );
    let bad = w.run(&[
        "webhook",
        "add",
        &r.url("/x"),
        "--allow-private-targets",
        "--event",
        "record.exploded",
    ]);
    assert_eq!(bad.code, 64, "{bad:?}");
}

#[test]
fn non_http_and_private_targets_are_refused_unless_allowed() {
    let r = Receiver::start();
    let w = World::new();
    for url in ["ftp://example.com/hook", "file:///etc/passwd", "not a url"] {
        let run = w.run(&["webhook", "add", url]);
        assert_eq!(run.code, 64, "{url}: {run:?}");
        assert!(
            run.stderr.contains("http://") || run.stderr.contains("is not a URL"),
            "{url}: {run:?}"
        );
    }
    for url in [
        r.url("/p"),
        "http://localhost:9/x".to_owned(),
        "http://10.0.0.1/x".to_owned(),
        "http://169.254.169.254/latest".to_owned(),
        "http://[::1]:9/x".to_owned(),
    ] {
        let run = w.run(&["webhook", "add", &url]);
        assert_eq!(run.code, 64, "{url}: {run:?}");
        assert!(
            run.stderr
                .contains("refused (allow such a target with --allow-private-targets)"),
            "{url}: {run:?}"
        );
    }
    // A refused add leaves nothing behind, not even a data dir.
    assert!(!w.data_dir().exists(), "a refused add made the data dir");
    // The environment and the config file allow them too.
    let mut cmd = w.cmd();
    let out = cmd
        .env("RESETCTL_ALLOW_PRIVATE_TARGETS", "true")
        .args(["webhook", "add", &r.url("/env")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::write(w.path("config.toml"), "allow-private-targets = true\n").unwrap();
    let config = w.path("config.toml");
    let run = w.run(&[
        "--config",
        config.to_str().unwrap(),
        "webhook",
        "add",
        &r.url("/file"),
    ]);
    let id = run.success().stdout.lines().next().unwrap().to_owned();
    // The setting is kept with the endpoint; checked again at each
    // delivery. Taken away (`webhook set`), nothing is sent, whichever
    // process delivers and whatever its config says.
    w.run(&["webhook", "set", &id, "--no-allow-private-targets"])
        .success();
    schedule(&w, T0, A, "pro");
    w.run(&[
        "--config",
        config.to_str().unwrap(),
        "--now",
        T0,
        "webhook",
        "deliver",
        "--once",
    ])
    .success();
    assert!(r.requests_to("/file").is_empty(), "{:?}", r.requests());
    let shown = w.run(&["webhook", "deliveries", &id]).success().stdout;
    assert!(
        shown.contains(&format!(
            "a loopback address; refused (allow it with `resetctl webhook set {id} --allow-private-targets`)"
        )),
        "{shown}"
    );
    // Given back, the next pass (once the retry is due) delivers.
    w.run(&["webhook", "set", &id, "--allow-private-targets"])
        .success();
    w.run(&[
        "--now",
        "2026-11-20T10:01:00.000Z",
        "webhook",
        "deliver",
        "--once",
    ])
    .success();
    assert_eq!(r.requests_to("/file").len(), 1);
}

/// Delivery settings live with the endpoint: whichever process holds the
/// deliverer lock (here a `serve` and a `sync --daemon` started without
/// any delivery flag, and a config-less `webhook deliver`) delivers alike.
#[test]
fn an_endpoints_delivery_settings_are_honoured_by_whichever_process_delivers() {
    let r = Receiver::start();
    let w = World::new();
    let config = w.path("config.toml");
    std::fs::write(&config, "webhook-timeout = 0.5\n").unwrap();
    let out = w
        .run(&[
            "--config",
            config.to_str().unwrap(),
            "webhook",
            "add",
            &r.url("/slow"),
            "--allow-private-targets",
        ])
        .success()
        .stdout;
    let id = out.lines().next().unwrap().to_owned();
    let shown = w.run(&["webhook", "show", &id, "--json"]).success().json();
    assert_eq!(shown["allowPrivateTargets"], true, "{shown}");
    assert_eq!(shown["timeoutSeconds"], 0.5, "{shown}");
    // The receiver answers after 2 s: past the endpoint's 0.5 s, whatever
    // the delivering process was started with.
    r.script("/slow", &[], &[2.0], 200);
    schedule(&w, T0, A, "pro");
    w.run(&["--now", T0, "webhook", "deliver", "--once"])
        .success();
    let attempts = w.run(&["webhook", "deliveries", &id]).success().stdout;
    assert!(attempts.contains("timed out after 500ms"), "{attempts}");
    // A serve started without any delivery flag delivers to the private target.
    let _s = Server::start(&w, &["--log", "warn"], &[]);
    r.wait_for("/slow", 2, Duration::from_secs(30));
}

#[test]
fn the_user_agent_contact_is_kept_with_the_endpoint_whichever_process_delivers() {
    let r = Receiver::start();
    let w = World::new();
    let (id, _) = add(
        &w,
        &r.url("/ua"),
        &["--user-agent-contact", "mailto:ops@example.org"],
    );
    let deliver = |now: &str| {
        w.run(&[
            "--now",
            now,
            "--user-agent-contact",
            "https://deliverer.example/contact",
            "webhook",
            "deliver",
            "--once",
        ])
        .success();
    };
    let agent = |n: usize| {
        let got = r.wait_for("/ua", n, Duration::from_secs(10));
        got[n - 1]["headers"]["user-agent"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    schedule(&w, T0, "1001", "pro");
    deliver(T0);
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        agent(1),
        format!("resetctl/{version} (+mailto:ops@example.org)")
    );
    let shown = w.run(&["webhook", "show", &id]).success().stdout;
    assert!(
        shown.contains("contact:     mailto:ops@example.org"),
        "{shown}"
    );
    // Set to none: the deliverer's own contact does not come back.
    w.run(&["webhook", "set", &id, "--no-contact"]).success();
    completion(&w, T0, "1002", "pro");
    deliver(T0);
    assert_eq!(agent(2), format!("resetctl/{version}"));
    let refused = w.run_refused(&["webhook", "set", &id, "--contact", "not a contact"]);
    assert_eq!(refused.code, 64, "{}", refused.stderr);
}

#[test]
fn an_endpoint_links_to_record_pages_only_while_the_pages_are_served_whatever_says_so() {
    let r = Receiver::start();
    let w = World::new();
    let config = w.path("config.toml");
    std::fs::write(&config, "public-base-url = \"https://status.example\"\n").unwrap();
    let add = |env: &[(&str, &str)]| {
        let mut cmd = w.cmd();
        cmd.args(["--config", config.to_str().unwrap(), "webhook", "add"]);
        cmd.args([r.url("/x").as_str(), "--allow-private-targets"]);
        for (name, value) in env {
            cmd.env(name, value);
        }
        let out = crate::util::Run::from(cmd.output().unwrap())
            .success()
            .stdout;
        let id = out.lines().next().unwrap().to_owned();
        w.run(&["webhook", "show", &id, "--json"]).success().json()["recordPages"].clone()
    };
    assert_eq!(add(&[]), "https://status.example");
    // `no-site` from the environment, as from the file or the flag of serve:
    // the pages are not served, so nothing links to them.
    assert_eq!(
        add(&[("RESETCTL_NO_SITE", "true")]),
        serde_json::Value::Null
    );
}

#[test]
fn serve_delivers_in_order_and_a_slow_endpoint_does_not_delay_another() {
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/slow", &["--webhook-timeout", "10"]);
    add_standard(&w, &r, "/fast", &[]);
    r.script("/slow", &[], &[1.5, 1.5, 1.5, 1.5, 1.5], 200);
    let _s = Server::start(&w, &["--log", "warn"], &[]);
    let posts: Vec<String> = (1..=5).map(|i| format!("209000000000000010{i}")).collect();
    for (i, post) in posts.iter().enumerate() {
        schedule(&w, &format!("2026-11-20T10:0{i}:00.000Z"), post, "pro");
    }
    let fast = r.wait_for("/fast", 5, Duration::from_secs(20));
    assert!(
        r.requests_to("/slow").len() < 5,
        "the fast endpoint got everything while the slow one was still busy"
    );
    let slow = r.wait_for("/slow", 5, Duration::from_secs(30));
    for got in [fast, slow] {
        let ids: Vec<String> = got
            .iter()
            .map(|r| {
                verified(r)["data"]["record"]["id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(ids, posts, "in publish order");
    }
}

#[test]
fn a_redirect_is_not_followed_but_retried_at_the_endpoint() {
    let r = Receiver::start();
    let w = World::new();
    let id = add_standard(&w, &r, "/r", &[]);
    r.secret("/elsewhere", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    r.redirect("/r", 307, &r.url("/elsewhere"));
    schedule(&w, T0, A, "pro");
    deliver_at(&w, "2026-11-20T10:00:01.000Z").success();
    deliver_at(&w, "2026-11-20T10:00:10.000Z").success();
    assert_eq!(r.requests_to("/r").len(), 2, "the endpoint itself, retried");
    assert!(
        r.requests_to("/elsewhere").is_empty(),
        "a 307 is never followed (it would re-POST the signed body elsewhere)"
    );
    let shown = w.run(&["webhook", "deliveries", &id]).success().stdout;
    assert!(
        shown
            .lines()
            .all(|l| l.contains("retrying") && l.contains(" 307")),
        "{shown}"
    );
}

#[test]
fn a_sync_daemon_delivers_what_it_publishes() {
    use crate::util::upstream::{Behavior, Upstream};
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/sync", &[]);
    let up = Upstream::start(Behavior::Status(500));
    up.serve(
        &crate::util::bundled_document("2026-11-20T09:00:00.000Z", 3),
        "\"d1\"",
    );
    let daemon = crate::util::sync_daemon(&w, &up.url("/records.json"));
    // The first sync is the baseline: the upstream's history is not news.
    crate::util::wait_until(Duration::from_secs(20), "the first sync", || {
        w.run(&["status", "--json"]).json()["snapshot"]["sequence"] == 1
    });
    // Then every one of the next sync's new records is told (one is a
    // fulfilled schedule, which the API lists under `reset_scheduled`
    // only: an endpoint of `all` hears of every record).
    up.serve(
        &crate::util::bundled_document("2026-11-20T10:00:00.000Z", 6),
        "\"d2\"",
    );
    let got = r.wait_for("/sync", 3, Duration::from_secs(30));
    // Its cursor is past them: nothing more is on its way.
    all_delivered(&w, 3);
    drop(daemon);
    let got_all = r.requests_to("/sync");
    assert_eq!(got_all.len(), 3, "{got:?}");
    let mut ids = std::collections::HashSet::new();
    for request in &got_all {
        let body = verified(request);
        assert_eq!(body["type"], "record.created", "{body}");
        ids.insert(body["data"]["record"]["id"].as_str().unwrap().to_owned());
    }
    let doc: serde_json::Value = serde_json::from_str(&crate::util::bundled_document(
        "2026-11-20T10:00:00.000Z",
        6,
    ))
    .unwrap();
    let new: std::collections::HashSet<String> = doc["records"].as_array().unwrap()[3..]
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, new, "only the records the second sync brought");
}

/// The endpoints file holds the secrets: at every step of writing it (the
/// temp file created, written, renamed), and after a SIGKILL at each, every
/// copy on disk is owner-only, under the most permissive umask.
#[test]
fn the_secrets_file_is_never_readable_by_others_at_any_step_or_after_a_kill() {
    use std::os::unix::fs::PermissionsExt;
    let r = Receiver::start();
    let w = World::new();
    add_standard(&w, &r, "/first", &[]);
    let webhooks = w.data_dir().join("webhooks");
    let modes = || -> Vec<(String, u32)> {
        std::fs::read_dir(&webhooks)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains("endpoints"))
            .map(|e| {
                let mode = e.metadata().unwrap().permissions().mode() & 0o777;
                (e.file_name().to_string_lossy().into_owned(), mode)
            })
            .collect()
    };
    for step in ["private:created", "private:written", "private:renamed"] {
        let trace = w.path(&format!("trace-{}", step.replace(':', "-")));
        let mut cmd = w.cmd();
        let program = crate::util::bin();
        // `umask 000`, then the real command line: no mode from the umask.
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("umask 000; exec \"$0\" \"$@\"")
            .arg(program)
            .args(cmd.get_args())
            .args([
                "webhook",
                "add",
                &r.url("/second"),
                "--allow-private-targets",
            ])
            .env_clear()
            .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env("RESETCTL_TEST_TRACE", &trace)
            .env("RESETCTL_TEST_PAUSE_AT", step)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let _ = &mut cmd;
        assert!(
            crate::util::wait_for_step(&mut child, &trace, step),
            "{step}"
        );
        let seen = modes();
        assert!(
            seen.iter().any(|(name, _)| name.starts_with(".tmp-")) || step == "private:renamed",
            "{step}: the temp file is there: {seen:?}"
        );
        for (name, mode) in &seen {
            assert_eq!(*mode, 0o600, "{step}: {name} is {mode:o}");
        }
        child.kill().unwrap();
        child.wait().unwrap();
        for (name, mode) in modes() {
            assert_eq!(mode, 0o600, "after a kill at {step}: {name} is {mode:o}");
        }
        // The next writer takes over; still owner-only.
        w.run(&["webhook", "list"]).success();
    }
    add_standard(&w, &r, "/third", &[]);
    assert_eq!(modes(), [("endpoints.json".to_owned(), 0o600)]);
}

/// `resetctl ARGS…` on `w`'s data dir under strace, which logs every file
/// it opens to `log` (the child is strace).
fn traced(w: &World, args: &[&str], log: &std::path::Path) -> std::process::Child {
    let strace = crate::util::tool(&["strace"], "-V", "strace");
    std::process::Command::new(strace)
        .args(["-f", "-qq", "-e", "trace=open,openat", "-o"])
        .arg(log)
        .arg(crate::util::bin())
        .args(w.cmd().get_args())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .env(
            "RESETCTL_CONFIG",
            crate::util::own_config_path(w.tmp.path()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// How many of `log`'s opens succeeded on a file `counts` picks by its
/// path.
fn opens(log: &std::path::Path, counts: impl Fn(&str) -> bool) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter(|l| !l.contains("ENOENT"))
        .filter_map(|l| l.split('"').nth(1))
        .filter(|path| counts(path))
        .count()
}

/// Waits for a traced command's first look (an open `counts` picks), then
/// for it to end (a second without one), and counts such opens over
/// `idle`.
fn opens_while_idle(log: &std::path::Path, counts: impl Fn(&str) -> bool, idle: Duration) -> usize {
    crate::util::wait_until(Duration::from_secs(20), "the first look", || {
        opens(log, &counts) > 0
    });
    let mut before = opens(log, &counts);
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let now = opens(log, &counts);
        if now == before {
            break;
        }
        before = now;
    }
    std::thread::sleep(idle);
    opens(log, &counts) - before
}

/// Stops a command run by [`traced`]: strace keeps fatal signals from the
/// command it runs to itself, so its child is told to stop, and strace
/// ends with it.
fn stop_traced(mut traced: std::process::Child) {
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", traced.id()))
        .unwrap_or_default();
    for pid in children.split_whitespace() {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", pid])
            .status();
    }
    let _ = traced.wait();
}

/// Whether `r` got more than `before` requests to `path` within 10 s.
fn delivered_soon(r: &Receiver, path: &str, before: usize) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if r.requests_to(path).len() > before {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A running deliverer learns of a publish from the data dir's file
/// events, not by reading it five times a second (issue 41): idle for 4 s it
/// opens neither the outbox, the endpoints nor the pointer, and a publish
/// is still delivered at once.
#[test]
fn an_idle_deliverer_rests_and_wakes_on_a_publish() {
    let w = World::new();
    w.seed_bundled();
    let r = Receiver::start();
    add_standard(&w, &r, "/hook", &[]);
    let log = w.path("strace.log");
    let deliverer = traced(&w, &["webhook", "deliver"], &log);
    let looked_at = |path: &str| {
        path.ends_with("/outbox.jsonl")
            || path.ends_with("/endpoints.json")
            || path.ends_with("/CURRENT")
    };
    let idle = opens_while_idle(&log, looked_at, Duration::from_secs(4));
    schedule(&w, T0, "900", "all");
    let delivered = delivered_soon(&r, "/hook", 0);
    stop_traced(deliverer);
    assert!(delivered, "the publish was not delivered within 10 s");
    // It learns of a publish from file events and of the time from its
    // clock: an idle deliverer reads nothing of the data dir.
    assert_eq!(
        idle, 0,
        "an idle deliverer opened the outbox, the endpoints or the pointer {idle} times in 4 s"
    );
}

/// The same of `serve`'s deliverer (issue 51): an idle server with one
/// endpoint, what its outbox held delivered, opens no file of `webhooks/`
/// in 6 s, and a publish is still delivered at once.
#[test]
fn an_idle_server_with_an_endpoint_opens_no_webhook_file() {
    let w = World::new();
    w.seed_bundled();
    let r = Receiver::start();
    add_standard(&w, &r, "/hook", &[]);
    schedule(&w, T0, "900", "all");
    let log = w.path("strace.log");
    let server = traced(&w, &["serve", "--listen", "127.0.0.1:0"], &log);
    let webhooks = format!("{}/", w.data_dir().join("webhooks").display());
    let of_webhooks = |path: &str| path.starts_with(&webhooks);
    // The first look delivers what the outbox held.
    let idle = opens_while_idle(&log, of_webhooks, Duration::from_secs(6));
    let first = r.requests_to("/hook").len();
    schedule(&w, T0, "901", "all");
    let delivered = delivered_soon(&r, "/hook", first);
    let opened = std::fs::read_to_string(&log).unwrap_or_default();
    stop_traced(server);
    assert!(first > 0, "what the outbox held was not delivered at start");
    assert!(delivered, "the publish was not delivered within 10 s");
    assert_eq!(
        idle,
        0,
        "an idle server opened files of webhooks/ {idle} times in 6 s:\n{}",
        opened
            .lines()
            .filter(|l| l.contains(&webhooks))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
