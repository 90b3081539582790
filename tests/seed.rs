//! `resetctl seed` and `resetctl export`: the bundled history, idempotence,
//! conflicts, bad files, and the export → re-import round trip.

use serde_json::{json, Value};

use crate::util::{fixture, World};

fn records(snapshot: &Value) -> &Vec<Value> {
    snapshot["records"].as_array().expect("records array")
}

fn by_id<'a>(snapshot: &'a Value, id: &str) -> &'a Value {
    records(snapshot)
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no record {id}"))
}

#[test]
fn bundled_history_has_every_shape_with_seed_markers() {
    let w = World::new();
    let run = w
        .run(&["--now", "2026-11-20T10:00:00.000Z", "seed"])
        .success();
    assert_eq!(
        run.stdout,
        "seeded from bundled history: 16 added, 0 already present; snapshot 1 is current (16 records)\n"
    );
    let snap = w.current_snapshot();
    assert_eq!(snap["mode"], "standalone");
    assert_eq!(snap["generatedAt"], "2026-11-20T10:00:00.000Z");
    let recs = records(&snap);
    assert!(recs.len() >= 15);
    assert!(
        recs.iter()
            .all(|r| r["id"].as_str().unwrap().starts_with("seed:")),
        "every id carries seed:"
    );

    let count = |f: &dyn Fn(&Value) -> bool| recs.iter().filter(|r| f(r)).count();
    assert_eq!(count(&|r| r["kind"] == "reset_scheduled"), 8);
    assert_eq!(count(&|r| r["kind"] == "reset_completed"), 8);
    assert_eq!(count(&|r| r["scheduleState"] == "elapsed"), 4);
    assert_eq!(count(&|r| r["scheduleState"] == "fulfilled"), 3);
    assert_eq!(count(&|r| r["scheduleState"] == "unknown"), 1);
    assert_eq!(count(&|r| r["scheduleState"] == "pending"), 0);
    for reset_type in ["global", "banked", "global_and_banked"] {
        assert!(
            count(&|r| r["resetType"] == reset_type) > 0,
            "resetType {reset_type}"
        );
    }
    for origin in ["auto", "link", "manual"] {
        assert!(
            count(&|r| r["kind"] == "reset_scheduled" && r["fulfillmentOrigin"] == origin) > 0,
            "fulfillmentOrigin {origin}"
        );
    }
    assert!(count(&|r| r["schedulePrecision"] == "date") > 0);
    assert!(count(&|r| r["schedulePrecision"] == "datetime") > 0);
    // Heatmap-only history: a completion from a source with confidence and scope null.
    assert!(
        count(&|r| r["kind"] == "reset_completed"
            && r["confidence"].is_null()
            && r["scope"].is_null()
            && !r["id"].as_str().unwrap().starts_with("seed:manual:"))
            > 0
    );

    // A real fulfilled schedule from the 2026-08-13 feed, with its link in both directions.
    let schedule = by_id(&snap, "seed:2086189414292865249");
    assert_eq!(schedule["scheduleState"], "fulfilled");
    assert_eq!(schedule["schedulePrecision"], "date");
    assert_eq!(
        schedule["scheduleWindow"],
        json!({"startAt": "2026-08-10T07:00:00.000Z", "endAt": "2026-08-11T07:00:00.000Z"})
    );
    assert_eq!(schedule["completionRecordId"], "seed:2086972802457063486");
    assert_eq!(schedule["fulfillmentOrigin"], "auto");
    let completion = by_id(&snap, "seed:2086972802457063486");
    assert_eq!(
        completion["relatedRecordIds"],
        json!(["seed:2086189414292865249"])
    );
    assert_eq!(completion["source"]["postId"], "2086972802457063486");

    // The manual completion of section 2.5.
    let manual = by_id(&snap, "seed:manual:cl_abd57edf90eb450aa54bd48c010854af");
    assert_eq!(
        manual,
        &json!({
            "id": "seed:manual:cl_abd57edf90eb450aa54bd48c010854af",
            "kind": "reset_completed", "resetType": "global",
            "announcedAt": null, "effectiveAt": "2026-08-13T04:35:00.000Z", "text": null,
            "confidence": null, "scope": null,
            "source": {"origin": "operator", "postId": null, "handle": null, "url": null},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
            "completedAt": "2026-08-13T04:35:00.000Z", "completionRecordId": null,
            "fulfillmentOrigin": "manual", "relatedRecordIds": ["seed:2087706104814023111"]
        })
    );
}

#[test]
fn reseeding_is_idempotent_and_writes_nothing() {
    let w = World::new();
    w.seed_bundled();
    let history = std::fs::read(w.data_dir().join("history.json")).unwrap();
    let again = w.run(&["seed"]).success();
    assert_eq!(
        again.stdout,
        "seeded from bundled history: 0 added, 16 already present; snapshot 1 is current (16 records)\n"
    );
    assert_eq!(
        std::fs::read(w.data_dir().join("history.json")).unwrap(),
        history
    );
    assert_eq!(
        w.run(&["snapshots", "list", "--json"])
            .success()
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_conflicting_record_is_reported_and_nothing_is_imported() {
    let w = World::new();
    w.seed_bundled();
    let history = std::fs::read(w.data_dir().join("history.json")).unwrap();
    // The same id as a bundled record, with another text, plus one new record.
    let mut doc: Value = serde_json::from_slice(resetctl::BUNDLED_SEED_HISTORY).unwrap();
    let recs = doc["records"].as_array_mut().unwrap();
    let index = recs
        .iter()
        .position(|r| r["id"] == "2083395449814229287")
        .unwrap();
    recs[index]["text"] = json!("edited text");
    let mut extra = recs[index].clone();
    extra["id"] = json!("1");
    extra["source"]["postId"] = json!("1");
    recs.push(extra);
    let file = w.path("conflict.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();

    let run = w.run(&["seed", file.to_str().unwrap()]).code(65);
    assert_eq!(
        run.stderr,
        format!("resetctl: 1 record(s) conflict with stored history, nothing was imported: record {index} (id \"seed:2083395449814229287\") differs in text\n")
    );
    assert_eq!(
        std::fs::read(w.data_dir().join("history.json")).unwrap(),
        history,
        "history untouched"
    );
    assert_eq!(
        w.run(&["snapshots", "list", "--json"])
            .success()
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn bad_seed_files_name_the_problem_and_change_nothing() {
    let w = World::new();
    w.seed_bundled();
    let cases: &[(&str, &str)] = &[
        ("{\"generatedAt\": \"2026-11-20T10:00:00.000Z\", \"records\": [", "resetctl: bad.json: not valid JSON: EOF while parsing a list at line 1 column 56\n"),
        (
            r#"[{"id":"5","kind":"reset_later","resetType":"global"}]"#,
            "resetctl: bad.json: record 0 (id \"5\"): kind: unknown variant `reset_later`, expected `reset_scheduled` or `reset_completed`\n",
        ),
        (
            r#"{"records": []}"#,
            "resetctl: bad.json: generatedAt: missing field `generatedAt`\n",
        ),
    ];
    for (body, expected) in cases {
        std::fs::write(w.path("bad.json"), body).unwrap();
        let run = w
            .cmd()
            .current_dir(w.tmp.path())
            .args(["seed", "bad.json"])
            .output()
            .unwrap();
        let run = crate::util::Run::from(run).code(65);
        assert_eq!(&run.stderr, expected);
    }
    let missing = w
        .run(&["seed", w.path("nope.json").to_str().unwrap()])
        .code(74);
    assert!(
        missing.stderr.contains("cannot read") && missing.stderr.contains("nope.json"),
        "{}",
        missing.stderr
    );
    assert_eq!(
        w.run(&["snapshots", "list", "--json"])
            .success()
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_bare_array_seeds_and_keeps_seed_prefixed_ids() {
    let w = World::new();
    let doc: Value = serde_json::from_slice(resetctl::BUNDLED_SEED_HISTORY).unwrap();
    let mut recs = doc["records"].as_array().unwrap().clone();
    recs.truncate(3);
    recs[0]["id"] = json!(format!("seed:{}", recs[0]["id"].as_str().unwrap()));
    std::fs::write(w.path("arr.json"), serde_json::to_vec(&recs).unwrap()).unwrap();
    w.run(&["seed", w.path("arr.json").to_str().unwrap()])
        .success();
    let snap = w.current_snapshot();
    let ids: Vec<&str> = records(&snap)
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.iter()
            .all(|id| id.starts_with("seed:") && !id.starts_with("seed:seed:")),
        "{ids:?}"
    );
}

#[test]
fn export_then_reimport_gives_the_same_records() {
    let first = World::new();
    first.seed_bundled();
    let out = first.path("export.json");
    first
        .run(&["export", "-o", out.to_str().unwrap()])
        .success();
    let exported: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(
        exported.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["generatedAt", "lastSuccessfulCheckAt", "records"]
    );
    assert_eq!(exported["records"], first.current_snapshot()["records"]);
    // Stdout export is the same document.
    let stdout: Value = first.run(&["export"]).success().json();
    assert_eq!(stdout, exported);

    let second = World::new();
    second
        .run(&[
            "--now",
            "2026-11-20T10:00:00.000Z",
            "seed",
            out.to_str().unwrap(),
        ])
        .success();
    second
        .run(&["export", "-o", second.path("again.json").to_str().unwrap()])
        .success();
    let again: Value =
        serde_json::from_slice(&std::fs::read(second.path("again.json")).unwrap()).unwrap();
    assert_eq!(again, exported);
}

#[test]
fn export_with_nothing_published_exits_69() {
    let w = World::new();
    // A data dir that does not exist is named as such (issue 39, item 13).
    let run = w.run(&["export"]).code(69);
    assert_eq!(
        run.stderr,
        format!(
            "resetctl: the data dir {} does not exist: is the path right? (`--data-dir`, `RESETCTL_DATA_DIR` or `data-dir` in the config file){}\n",
            w.data_dir().display(),
            w.machine_hint().unwrap_or_default()
        )
    );
    // One that exists but is empty: the plain advice.
    std::fs::create_dir_all(w.data_dir()).unwrap();
    let run = w.run(&["export"]).code(69);
    assert_eq!(
        run.stderr,
        format!(
            "resetctl: nothing is published yet in {}{}\n",
            w.data_dir().display(),
            w.machine_hint().unwrap_or_else(|| "; run `resetctl seed` (a standalone instance) or `resetctl sync --upstream URL --once` (a mirror)".to_owned())
        )
    );
    assert_eq!(run.stdout, "");
}

#[test]
fn the_feed_fixtures_are_in_the_repository() {
    // The bundled history is built from these; the project never reads ../shared.
    for name in [
        "codexrunway-status-2026-07-29.json",
        "codexrunway-status-2026-07-31.json",
        "codexrunway-status-2026-08-01.json",
        "fixture-live-status-2026-08-01.json",
        "fixture-official-timeline-2026-08-13.json",
    ] {
        let bytes = std::fs::read(fixture(&format!("feed/{name}"))).unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(doc["schemaVersion"], 1, "{name}");
    }
}
