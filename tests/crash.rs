//! Crash safety: SIGKILL a publishing process at random moments; the
//! current snapshot always loads and is a complete version.

use std::time::Duration;

use crate::util::{generated_document, Rng, World};

#[test]
fn sigkill_during_publish_never_leaves_a_broken_current_snapshot() {
    let w = World::new();
    // A history large enough that a publish takes a while (about 250 ms in a
    // debug build); kills land anywhere from start-up to after the rename.
    std::fs::write(w.path("big.json"), generated_document(4000)).unwrap();
    w.run(&["seed", w.path("big.json").to_str().unwrap()])
        .success();
    let mut rng = Rng::from_time();
    let mut last = 1;
    let mut killed_mid_way = 0;
    for round in 0..200 {
        let mut child = w.spawn(&["publish"]);
        std::thread::sleep(Duration::from_micros(rng.below(400_000)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if !status.success() {
            killed_mid_way += 1;
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
        "{killed_mid_way} of 200 publishes were killed before finishing; sequence reached {last}"
    );
    assert!(
        last > 10,
        "only {last} publishes completed: the kills never let one finish"
    );
    assert!(
        killed_mid_way > 20,
        "only {killed_mid_way} of 200 runs were killed before finishing"
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
