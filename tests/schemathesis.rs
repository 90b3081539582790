//! Schemathesis (from PyPI) fuzzes the real server from its own served
//! OpenAPI document, rate limiting off: no server error, statuses, content
//! types, headers and bodies as documented, bad input rejected.

use std::process::Command;

use crate::util::server::Server;
use crate::util::World;

fn schemathesis() -> std::path::PathBuf {
    crate::util::venv_bin("schemathesis", "SCHEMATHESIS")
}

/// Hypothesis' health checks (data generation too slow, …) judge the test
/// generator, not the server; on a loaded 2-core machine they fail at
/// random, so they are suppressed. Every response check stays on.
#[test]
fn schemathesis_finds_no_issue_in_the_served_document() {
    let st = schemathesis();
    let w = World::new();
    w.run(&["--now", "2026-11-20T10:00:00.000Z", "seed"])
        .success();
    let s = Server::start(
        &w,
        &["--log", "warn", "--no-rate-limit", "--flood-guard", "off"],
        &[],
    );
    let out = Command::new(st)
        .args([
            "run",
            &s.url("/openapi/v1/openapi.json"),
            "--checks",
            "all",
            "--max-examples",
            "100",
            "--suppress-health-check",
            "all",
            "--workers",
            "2",
            // A standalone instance mirrors no status feed: that path is a 404
            // by design here (tests/status_feed.rs checks both of its sides).
            "--exclude-path",
            "/api/status.json",
            // A stream never ends, so it cannot be checked as a response;
            // tests/stream.rs reads it with a real SSE client.
            "--exclude-path",
            "/records/stream",
        ])
        // Schemathesis keeps a cache in its working directory: keep it out of the repository.
        .current_dir(w.tmp.path())
        .env("NO_COLOR", "1")
        .env("SCHEMATHESIS_TELEMETRY", "false")
        .output()
        .expect("run schemathesis");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{report}");
    assert!(
        out.status.success(),
        "schemathesis reported issues:\n{report}"
    );
    assert!(report.contains("No issues found"), "{report}");
    assert!(
        // 12 operations, less the two excluded paths above.
        report.contains("Selected: 10/12") && report.contains("Tested: 10"),
        "every operation was tested:\n{report}"
    );
}
