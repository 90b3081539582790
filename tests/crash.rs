//! Crash safety: SIGKILL a publishing process at random moments; the
//! current snapshot always loads and is a complete version.

use std::time::Duration;

use crate::util::{generated_document, Rng, World};

#[test]
fn sigkill_during_publish_never_leaves_a_broken_current_snapshot() {
    let w = World::new();
    // A history large enough that a publish takes a while (about 250 ms in
    // a quiet debug build, much more on a loaded machine).
    std::fs::write(w.path("big.json"), generated_document(4000)).unwrap();
    w.run(&["seed", w.path("big.json").to_str().unwrap()])
        .success();
    let mut rng = Rng::from_time();
    let mut last = 1;
    let mut killed_mid_way = 0;
    // Every fourth round runs to the end and measures how long a publish
    // takes right now; the others are killed at a random moment within 1.2 ×
    // that, so kills land anywhere from start-up to after the rename however
    // loaded the machine is.
    let mut duration = Duration::from_millis(250);
    for round in 0..200 {
        let started = std::time::Instant::now();
        let mut child = w.spawn(&["publish"]);
        if round % 4 == 0 {
            assert!(
                child.wait().unwrap().success(),
                "round {round}: an uninterrupted publish failed"
            );
            duration = started.elapsed();
        } else {
            let span = (duration.as_micros() as u64 * 6 / 5).max(1);
            std::thread::sleep(Duration::from_micros(rng.below(span)));
            let _ = child.kill();
            if !child.wait().unwrap().success() {
                killed_mid_way += 1;
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
            json["snapshot"]["records"], 4000,
            "round {round}: a partial version is current"
        );
        last = seq;
    }
    eprintln!(
        "{killed_mid_way} of 150 publishes were killed before finishing; sequence reached {last}"
    );
    assert!(
        last > 50,
        "the 50 uninterrupted publishes all completed (sequence {last})"
    );
    assert!(
        killed_mid_way > 50,
        "only {killed_mid_way} of 150 kills interrupted a publish"
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
