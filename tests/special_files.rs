//! A FIFO, a device or an oversized file where a file belongs (issue 39,
//! item 1): every command refuses it at once, naming the file, and a
//! running server logs the refusal, keeps serving, keeps reloading and
//! still stops when told.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{wait_until, Run, World};

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo (coreutils)");
    assert!(made.success());
}

/// `resetctl ARGS…` that must end within 10 s, whatever it meets.
#[track_caller]
fn bounded(w: &World, args: &[&str]) -> Run {
    let started = Instant::now();
    let run = w.run_refused(args);
    assert!(
        started.elapsed() < Duration::from_secs(10) && run.code != -1,
        "resetctl {args:?} did not finish within 10 s (it blocked on the file)"
    );
    run
}

/// Asserts that `args` exits `code` and names `path` as `kind`.
#[track_caller]
fn refused(w: &World, args: &[&str], code: i32, path: &Path, kind: &str) {
    let run = bounded(w, args).code(code);
    let named = format!("{} is {kind}, not a regular file", path.display());
    assert!(run.stderr.contains(&named), "{args:?}: {}", run.stderr);
}

fn records_document(generated_at: &str) -> String {
    let mut doc: Value = serde_json::from_slice(resetctl::BUNDLED_SEED_HISTORY).unwrap();
    doc["generatedAt"] = json!(generated_at);
    doc.to_string()
}

#[test]
fn commands_refuse_a_data_dir_file_that_is_not_a_regular_file_at_once() {
    // A standalone instance: the ledger and the history.
    let w = World::new();
    w.seed_bundled();
    let ledger = w.data_dir().join("ledger.jsonl");
    mkfifo(&ledger);
    for args in [
        &["status"][..],
        &["record", "list"],
        &["--now", NOW, "publish"],
        &[
            "--now",
            NOW,
            "record",
            "schedule",
            "--operator",
            "--at",
            "2026-11-25 12:00 +00:00",
        ],
    ] {
        refused(&w, args, 65, &ledger, "a FIFO");
    }
    std::fs::remove_file(&ledger).unwrap();
    let history = w.data_dir().join("history.json");
    mkfifo(&history);
    refused(&w, &["--now", NOW, "publish"], 65, &history, "a FIFO");
    refused(&w, &["--now", NOW, "seed"], 65, &history, "a FIFO");
    std::fs::remove_file(&history).unwrap();
    // The webhook endpoints (and their secrets).
    let endpoints = w.data_dir().join("webhooks/endpoints.json");
    std::fs::create_dir_all(endpoints.parent().unwrap()).unwrap();
    mkfifo(&endpoints);
    refused(&w, &["webhook", "list"], 65, &endpoints, "a FIFO");
    std::fs::remove_file(&endpoints).unwrap();
    // The current snapshot itself.
    let snapshot = w.data_dir().join("snapshots/000000000001.json");
    mkfifo(&snapshot);
    refused(&w, &["status"], 65, &snapshot, "a FIFO");
    refused(&w, &["export"], 65, &snapshot, "a FIFO");

    // A mirror: the sync state.
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&records_document("2026-11-20T09:00:00.000Z"), "\"a\"");
    let m = World::new();
    let sync = [
        "--now",
        NOW,
        "sync",
        "--upstream",
        &up.url("/r.json"),
        "--once",
    ];
    m.run(&sync).success();
    let state = m.data_dir().join("sync-state.json");
    mkfifo(&state);
    refused(&m, &["status"], 65, &state, "a FIFO");
    refused(&m, &sync, 65, &state, "a FIFO");
    std::fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &state).unwrap();
    let run = bounded(&m, &["status"]).code(65);
    assert!(
        run.stderr
            .contains("is a symbolic link, not a regular file")
            && !run.stderr.contains("root:"),
        "{}",
        run.stderr
    );
}

#[test]
fn files_an_operator_names_are_read_only_when_regular_and_within_their_cap() {
    let w = World::new();
    let fifo = w.path("input.fifo");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    for (path, kind) in [("/dev/zero", "a character device"), (fifo, "a FIFO")] {
        let path_ = Path::new(path);
        let run = bounded(&w, &["--config", path, "status"]).code(65);
        assert!(
            run.stderr
                .contains(&format!("config file: {path} is {kind}")),
            "{}",
            run.stderr
        );
        refused(&w, &["--now", NOW, "seed", path], 65, path_, kind);
        refused(&w, &["--now", NOW, "convert", path], 65, path_, kind);
        let serve = [
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--rate-limit-store",
            "rediss://127.0.0.1:1",
            "--redis-ca-file",
            path,
        ];
        let run = bounded(&w, &serve).code(65);
        assert!(
            run.stderr.contains(&format!(
                "redis-ca-file {path}: it is {kind}, not a regular file"
            )),
            "{}",
            run.stderr
        );
    }
    // Larger than the cap: refused without reading it all (the seed file
    // is sparse: 256 MiB and one byte of nothing).
    let config = w.path("big.toml");
    std::fs::write(&config, vec![b'#'; 1024 * 1024 + 1]).unwrap();
    let run = bounded(&w, &["--config", config.to_str().unwrap(), "status"]).code(65);
    assert!(
        run.stderr.contains("is larger than 1048576 bytes"),
        "{}",
        run.stderr
    );
    let seed = w.path("big.json");
    std::fs::File::create(&seed)
        .unwrap()
        .set_len(256 * 1024 * 1024 + 1)
        .unwrap();
    let run = bounded(&w, &["--now", NOW, "seed", seed.to_str().unwrap()]).code(65);
    assert!(
        run.stderr.contains("is larger than 268435456 bytes"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_server_logs_a_fifo_keeps_reloading_after_it_and_still_stops() {
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&records_document("2026-11-20T09:00:00.000Z"), "\"a\"");
    let w = World::new();
    let sync = |now: &str| {
        w.run(&[
            "--now",
            now,
            "sync",
            "--upstream",
            &up.url("/r.json"),
            "--once",
        ])
        .success();
    };
    sync(NOW);
    let mut s = Server::start(&w, &["--no-rate-limit"], &[]);
    assert_eq!(s.get("/healthz").json()["sequence"], 1);
    // The sync state is a FIFO for a while: the reloader meets it (its
    // creation is an event it watches) and says so.
    let state = w.data_dir().join("sync-state.json");
    let kept = std::fs::read(&state).unwrap();
    mkfifo(&state);
    let named = format!("{} is a FIFO, not a regular file", state.display());
    wait_until(Duration::from_secs(10), "the refusal in the log", || {
        s.log_text().contains(&named)
    });
    assert_eq!(s.get("/healthz").json()["sequence"], 1);
    assert_eq!(s.get("/openapi/v1/records").status, 200);
    // Put back, later versions are applied as before.
    std::fs::remove_file(&state).unwrap();
    std::fs::write(&state, kept).unwrap();
    for (n, generated) in [
        (2, "2026-11-20T09:30:00.000Z"),
        (3, "2026-11-20T09:45:00.000Z"),
    ] {
        up.serve(&records_document(generated), &format!("\"v{n}\""));
        sync(NOW);
        s.wait_for("/healthz", Duration::from_secs(10), |r| {
            r.json()["sequence"] == n
        });
    }
    assert_eq!(
        s.get("/openapi/v1/records/latest").json()["meta"]["generatedAt"],
        "2026-11-20T09:45:00.000Z"
    );
    // And it stops within its shutdown limit.
    let asked = Instant::now();
    let status = s.terminate();
    assert!(status.success(), "{status:?}");
    assert!(
        asked.elapsed() < Duration::from_secs(12),
        "{:?}",
        asked.elapsed()
    );
}

/// Issue 50, item 10: `snapshots/` or `webhooks/` that is a symbolic link
/// is refused, as a link in place of `CURRENT` is: nothing is read through
/// it, nothing written or removed where it leads.
#[test]
fn a_data_dir_directory_that_is_a_symbolic_link_is_refused() {
    let w = World::new();
    w.seed_bundled();
    let data = w.data_dir();
    // The versions moved elsewhere, a link left in their place.
    let elsewhere = w.path("elsewhere");
    std::fs::rename(data.join("snapshots"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, data.join("snapshots")).unwrap();
    let before = std::fs::read_dir(&elsewhere).unwrap().count();
    let message = format!(
        "resetctl: {}/snapshots is a symbolic link; the data dir's directories are never links, so it is not followed: put the directory itself there\n",
        data.display()
    );
    for args in [
        &["status"][..],
        &["snapshots", "list"],
        &["snapshots", "prune", "--keep", "1"],
        &["record", "list"],
        &["--now", NOW, "publish"],
        &["export"],
    ] {
        let run = bounded(&w, args).code(65);
        assert_eq!(run.stderr, message, "{args:?}");
    }
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        before,
        "nothing written or removed where the link leads"
    );
    std::fs::remove_file(data.join("snapshots")).unwrap();
    std::fs::rename(&elsewhere, data.join("snapshots")).unwrap();
    w.run(&["status"]).success();
    // webhooks/ as a link: every command refuses it too.
    let hooks = w.path("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::os::unix::fs::symlink(&hooks, data.join("webhooks")).unwrap();
    let run = bounded(&w, &["webhook", "list"]).code(65);
    assert_eq!(
        run.stderr,
        format!(
            "resetctl: {}/webhooks is a symbolic link; the data dir's directories are never links, so it is not followed: put the directory itself there\n",
            data.display()
        )
    );
    let run = bounded(
        &w,
        &[
            "webhook",
            "add",
            "https://hooks.example.org/x",
            "--format",
            "slack",
        ],
    )
    .code(65);
    assert!(
        run.stderr.contains("/webhooks is a symbolic link"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_dir(&hooks).unwrap().count(),
        0,
        "nothing written there"
    );
}
