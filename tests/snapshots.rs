//! `resetctl snapshots …`, `status`, retention, corrupt files and
//! concurrent publishers.

use crate::util::World;

fn sequences(w: &World) -> Vec<u64> {
    let list = w.run(&["snapshots", "list", "--json"]).success().json();
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect()
}

fn current(w: &World) -> u64 {
    w.run(&["status", "--json"]).success().json()["snapshot"]["sequence"]
        .as_u64()
        .unwrap()
}

#[test]
fn a_data_dir_without_versions_lists_none() {
    let w = World::new();
    // No data dir at all: a mistyped path, named (every reader's rule,
    // tests/cli.rs), not "none".
    let run = w.run(&["snapshots", "list"]).code(69);
    assert!(
        run.stderr.contains(" does not exist: is the path right?"),
        "{}",
        run.stderr
    );
    // With the data dir there but no version yet (a sync that never succeeded).
    std::fs::create_dir_all(w.data_dir()).unwrap();
    let run = w.run(&["snapshots", "list"]).success();
    assert_eq!(run.stdout, "no snapshots published\n");
}

#[test]
fn status_reports_mode_snapshot_age_and_counts() {
    let w = World::new();
    let empty = w.run(&["status"]).code(69);
    let limits = "limits:\n  quota:           20 requests per 3600 s per client, in process (at most 4000000 clients tracked)\n  client key:      peer IP, IPv6 by /64\n  proxy header:    x-forwarded-for (read only from trusted proxies)\n  trusted proxies: none (forwarding headers ignored)\n  flood guard:     50/s per client, burst 200\n";
    assert_eq!(
        empty.stdout,
        format!(
            "data dir:  {}\nsnapshot:  none published\n{limits}",
            w.data_dir().display()
        )
    );
    let empty_json = w.run(&["status", "--json"]).code(69).json();
    assert_eq!(empty_json["snapshot"], serde_json::Value::Null);
    assert_eq!(empty_json["mode"], serde_json::Value::Null);

    w.seed_bundled();
    let run = w
        .run(&["--now", "2026-11-20T12:30:00.000Z", "status"])
        .success();
    let path = w.data_dir().join("snapshots/000000000001.json");
    assert_eq!(
        run.stdout,
        format!(
            "data dir:  {}\nmode:      standalone\nsnapshot:  #1 ({})\ngenerated: 2026-11-20T10:00:00.000Z (2h ago)\npublished: 2026-11-20T10:00:00.000Z\nchecked:   never\nrecords:   16 (reset_completed 8, reset_scheduled 8)\nschedules: elapsed 4, fulfilled 3, pending 0, unknown 1\nversions:  1 on disk\n{limits}",
            w.data_dir().display(),
            path.display()
        )
    );
    let json = w
        .run(&["--now", "2026-11-20T10:01:01.000Z", "status", "--json"])
        .success()
        .json();
    assert_eq!(json["snapshot"]["ageSeconds"], 61);
    assert_eq!(json["snapshot"]["byKind"]["reset_scheduled"], 8);
    assert_eq!(json["snapshot"]["byScheduleState"]["pending"], 0);
}

#[test]
fn list_show_prune_and_rollback() {
    let w = World::new();
    w.seed_bundled();
    for _ in 0..4 {
        w.run(&["publish"]).success();
    }
    assert_eq!(sequences(&w), [1, 2, 3, 4, 5]);
    let list = w.run(&["snapshots", "list"]).success().stdout;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(
        lines[0], "     SEQ  PUBLISHED                 MODE        RECORDS       BYTES  FILE",
        "{list}"
    );
    let bytes = std::fs::metadata(w.data_dir().join("snapshots/000000000005.json"))
        .unwrap()
        .len();
    assert_eq!(
        lines[5],
        format!(
            "*      5  {}  standalone  {:>7}  {bytes:>10}  {}",
            w.run(&["snapshots", "show", "5", "--json"])
                .success()
                .json()["publishedAt"]
                .as_str()
                .unwrap(),
            w.run(&["export"]).success().json()["records"]
                .as_array()
                .unwrap()
                .len(),
            w.data_dir().join("snapshots/000000000005.json").display()
        ),
        "{list}"
    );
    let json = w.run(&["snapshots", "list", "--json"]).success().json();
    assert_eq!(json[0]["publishedAt"], "2026-11-20T10:00:00.000Z");
    assert_eq!(json[0]["mode"], "standalone");
    assert_eq!(json[0]["records"], json[4]["records"]);

    let show = w.run(&["snapshots", "show", "1"]).success().stdout;
    assert!(
        show.starts_with(
            "sequence:  1\nmode:      standalone\npublished: 2026-11-20T10:00:00.000Z\n"
        ),
        "{show}"
    );
    let full = w
        .run(&["snapshots", "show", "1", "--json"])
        .success()
        .json();
    assert_eq!(full["sequence"], 1);
    assert_eq!(full["format"], "resetctl-snapshot/1");
    assert_eq!(
        w.run(&["snapshots", "show", "9"]).code(64).stderr,
        "resetctl: no snapshot with sequence 9\n"
    );

    w.run(&["snapshots", "rollback", "2"]).success();
    assert_eq!(current(&w), 2);
    // Prune keeps the newest 2 and never the current one (2).
    let pruned = w.run(&["snapshots", "prune", "--keep", "2"]).success();
    assert_eq!(pruned.stdout, "removed 2 version(s): 1, 3\n");
    assert_eq!(sequences(&w), [2, 4, 5]);
    // The next publish continues after the newest on disk, never reusing a number.
    w.run(&["publish"]).success();
    assert_eq!(current(&w), 6);
    assert_eq!(
        w.run(&["snapshots", "prune", "--keep", "0"]).code(64).code,
        64
    );
}

#[test]
fn retention_keeps_the_newest_50_by_default() {
    let w = World::new();
    w.seed_bundled();
    for _ in 0..52 {
        w.run(&["publish"]).success();
    }
    let seqs = sequences(&w);
    assert_eq!(seqs, (4..=53).collect::<Vec<_>>());
    w.run(&["--keep", "3", "publish"]).success();
    assert_eq!(sequences(&w), [52, 53, 54]);
}

#[test]
fn a_corrupt_snapshot_is_refused_and_never_made_current() {
    let w = World::new();
    w.seed_bundled();
    w.run(&["publish"]).success();
    // Truncate version 2 (the current one) as a broken disk or hand edit would.
    let path = w.data_dir().join("snapshots/000000000002.json");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let status = w.run(&["status"]).code(65);
    assert!(
        status.stderr.starts_with(&format!(
            "resetctl: snapshot {} is unusable: not valid JSON: EOF while parsing",
            path.display()
        )),
        "{}",
        status.stderr
    );
    // Going back to the good version works; going to the corrupt one is refused.
    w.run(&["snapshots", "rollback", "1"]).success();
    assert_eq!(current(&w), 1);
    let refused = w.run(&["snapshots", "rollback", "2"]).code(65);
    assert!(refused.stderr.contains("is unusable"), "{}", refused.stderr);
    assert_eq!(current(&w), 1, "the pointer stays on the good version");
    // A schema-invalid but well-formed file is refused too, naming record, id and field.
    let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    doc["records"][3]["confidence"] = serde_json::json!(7);
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let id = doc["records"][3]["id"].as_str().unwrap().to_owned();
    let refused = w.run(&["snapshots", "rollback", "2"]).code(65);
    assert_eq!(
        refused.stderr,
        format!("resetctl: snapshot {} is unusable: record 3 (id {id:?}): confidence: must be between 0 and 1, got 7\n", path.display())
    );
}

#[test]
fn concurrent_publishers_never_lose_or_duplicate_a_sequence() {
    let w = World::new();
    w.seed_bundled();
    let children: Vec<_> = (0..16)
        .map(|_| w.spawn(&["--lock-timeout", "60", "publish"]))
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(sequences(&w), (1..=17).collect::<Vec<_>>());
    assert_eq!(current(&w), 17);
    for seq in 1..=17 {
        w.run(&["snapshots", "show", &seq.to_string()]).success();
    }
}

#[test]
fn a_held_lock_makes_a_writer_exit_75_naming_the_holder() {
    let w = World::new();
    w.seed_bundled();
    let lock_path = w.data_dir().join("resetctl.lock");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&lock_path)
        .unwrap();
    file.try_lock().unwrap();
    std::fs::write(&lock_path, "pid 4242 (test holder)").unwrap();
    let run = w.run(&["--lock-timeout", "0.2", "publish"]).code(75);
    assert!(
        run.stderr.starts_with(&format!(
            "resetctl: {} is locked by pid 4242 (test holder) (waited 0.",
            lock_path.display()
        )) && run.stderr.ends_with(" s); try again later\n"),
        "{}",
        run.stderr
    );
    drop(file);
    w.run(&["publish"]).success();
}
