//! Crash safety: SIGKILL a publishing process at random moments inside its
//! writes; the current snapshot always loads and is a complete version.
//!
//! The binary traces its publish steps (src/testhook.rs: `publish:begin`
//! before the snapshot's temp file is written, `publish:written` once it is
//! in place, `publish:pointer-moved` once CURRENT names it), so a kill is
//! counted only when it provably landed between the first and the last.

use std::time::{Duration, Instant};

use crate::util::{generated_document, trace, wait_for_step, Rng, World};

/// Rounds of each kind: uninterrupted (measure), paused (killed exactly
/// between writing the snapshot and moving the pointer), random.
const ROUNDS: usize = 60;

#[test]
fn sigkill_during_publish_never_leaves_a_broken_current_snapshot() {
    let w = World::new();
    // A history large enough that a publish takes a while (tens of ms).
    std::fs::write(w.path("big.json"), generated_document(2000)).unwrap();
    w.run(&["seed", w.path("big.json").to_str().unwrap()])
        .success();
    let mut rng = Rng::from_time();
    let mut last = 1;
    let (mut finished, mut paused_inside, mut random_kills, mut random_inside) = (0, 0, 0, 0);
    // How long the writes take right now (begin → pointer moved), re-measured
    // every fifth round, so random kills spread over the writes however
    // loaded the machine is.
    let mut span = Duration::from_millis(100);
    for round in 0..ROUNDS {
        let path = w.path(&format!("trace-{round}"));
        let mut cmd = w.cmd();
        cmd.arg("publish")
            .env("RESETCTL_TEST_TRACE", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if round % 5 == 1 {
            cmd.env("RESETCTL_TEST_PAUSE_AT", "publish:written");
        }
        let mut child = cmd.spawn().unwrap();
        assert!(
            wait_for_step(&mut child, &path, "publish:begin"),
            "round {round}: the publish never began; trace {:?}",
            trace(&path)
        );
        let began = Instant::now();
        match round % 5 {
            0 => {
                assert!(wait_for_step(&mut child, &path, "publish:pointer-moved"));
                span = began.elapsed().max(Duration::from_millis(1));
                assert!(
                    child.wait().unwrap().success(),
                    "round {round}: an uninterrupted publish failed"
                );
                finished += 1;
            }
            1 => {
                assert!(wait_for_step(&mut child, &path, "publish:written"));
                child.kill().unwrap();
                child.wait().unwrap();
                assert_eq!(trace(&path), ["publish:begin", "publish:written"]);
                paused_inside += 1;
            }
            _ => {
                let span_us = span.as_micros() as u64 * 6 / 5;
                std::thread::sleep(Duration::from_micros(rng.below(span_us.max(1))));
                let _ = child.kill();
                child.wait().unwrap();
                random_kills += 1;
                if !trace(&path).contains(&"publish:pointer-moved".to_owned()) {
                    random_inside += 1;
                }
            }
        }
        let report = w.run(&["status", "--json"]);
        assert_eq!(
            report.code, 0,
            "round {round}: current snapshot unusable after SIGKILL:\n{}",
            report.stderr
        );
        let json = report.json();
        let seq = json["snapshot"]["sequence"].as_u64().unwrap();
        assert!(
            seq >= last,
            "round {round}: sequence went back from {last} to {seq}"
        );
        assert_eq!(
            json["snapshot"]["records"], 2000,
            "round {round}: a partial version is current"
        );
        last = seq;
    }
    eprintln!(
        "{random_inside} of {random_kills} random kills and {paused_inside} paused kills landed \
         inside a publish's writes; {finished} ran through; sequence reached {last}"
    );
    assert_eq!(paused_inside, ROUNDS / 5);
    assert!(
        random_inside >= random_kills / 2,
        "only {random_inside} of {random_kills} random kills landed inside the writes"
    );
    assert!(
        last > finished as u64,
        "the {finished} uninterrupted publishes all completed (sequence {last})"
    );
    // Every version left on disk is complete, and the next publish continues the sequence.
    let list = w.run(&["snapshots", "list", "--json"]).success().json();
    for entry in list.as_array().unwrap() {
        w.run(&["snapshots", "show", &entry["sequence"].to_string()])
            .success();
    }
    let newest = list.as_array().unwrap().last().unwrap()["sequence"]
        .as_u64()
        .unwrap();
    w.run(&["publish"]).success();
    let seq = w.run(&["status", "--json"]).success().json()["snapshot"]["sequence"]
        .as_u64()
        .unwrap();
    assert_eq!(seq, newest + 1);
}
