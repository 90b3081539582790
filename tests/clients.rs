//! The client guide's examples (`docs/clients.md`), each run as written
//! against a real server with the default quota (20 per 3600 s): each asks
//! twice and prints `200` then `304`, and the 304 spends no quota.

use std::path::PathBuf;
use std::process::Command;

use crate::util::server::{raw_request, Server};
use crate::util::{repo_root, World};

/// The fenced blocks of the guide, as (language, text).
fn examples() -> Vec<(String, String)> {
    let guide = std::fs::read_to_string(repo_root().join("docs/clients.md")).unwrap();
    crate::deployment::blocks_in("docs/clients.md", &guide)
        .into_iter()
        .map(|block| (block.kind, block.text))
        .collect()
}

/// The Rust example as cargo built it (`cargo test` builds the examples).
fn rust_example() -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    let path = deps
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/poll");
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build --examples`",
        path.display()
    );
    path
}

/// The TypeScript example compiled by the pinned `tsc` (`make test-deps`
/// installs it into .browser/ with tests/browser/package-lock.json),
/// strictly, as `poll.mts`; node to run what it made.
fn typescript(text: &str, dir: &std::path::Path) -> Command {
    let browser = crate::docs_page::browser_dir();
    std::fs::write(dir.join("poll.mts"), text).unwrap();
    let tsc = browser.join("node_modules/.bin/tsc");
    let out = Command::new(&tsc)
        .args(["--strict", "--noEmitOnError", "--target", "es2022"])
        .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
        .args(["--lib", "es2022,dom", "--types", "node", "--typeRoots"])
        .arg(browser.join("node_modules/@types"))
        .arg("poll.mts")
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("run {} ({e}): run `make test-deps`", tsc.display()));
    assert!(
        out.status.success(),
        "tsc refused the TypeScript example:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut node = Command::new("node");
    node.arg(dir.join("poll.mjs"));
    node
}

/// The Go example as `poll.go`, as Go's own tools hold it (`gofmt` finds
/// nothing to change, `go vet` nothing to report), then `go run` (the
/// Debian package golang-go, which `make test-deps` installs); its build
/// cache in `dir`.
fn go(text: &str, dir: &std::path::Path) -> Command {
    std::fs::write(dir.join("poll.go"), text).unwrap();
    let go_tool = |tool: &str, args: &[&str]| {
        let out = Command::new(tool)
            .args(args)
            .current_dir(dir)
            .env("GOCACHE", dir.join(".gocache"))
            .env("GOPATH", dir.join(".gopath"))
            .output()
            .unwrap_or_else(|e| {
                panic!("run {tool} ({e}): run `make test-deps` (apt-get install golang-go)")
            });
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "{tool} {args:?} on the Go example:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    go_tool("gofmt", &["-l", "poll.go"]);
    go_tool("go", &["vet", "poll.go"]);
    let mut run = Command::new("go");
    run.args(["run", "poll.go"])
        .env("GOCACHE", dir.join(".gocache"))
        .env("GOPATH", dir.join(".gopath"));
    run
}

#[test]
fn every_example_of_the_client_guide_polls_conditionally_and_spends_one_request() {
    let examples = examples();
    let languages: Vec<&str> = examples.iter().map(|(info, _)| info.as_str()).collect();
    assert_eq!(
        languages,
        ["sh", "python", "go", "typescript", "rust"],
        "the guide's examples"
    );
    for (language, text) in &examples {
        let w = World::new();
        w.seed_bundled();
        let s = Server::start(&w, &[], &[]);
        let url = format!("http://{}", s.addr);
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = match language.as_str() {
            "sh" => {
                let mut c = Command::new("bash");
                c.args(["-e", "-o", "pipefail", "-c", text]);
                c
            }
            "python" => {
                let mut c = Command::new("python3");
                c.args(["-c", text]);
                c
            }
            "go" => go(text, dir.path()),
            "typescript" => typescript(text, dir.path()),
            "rust" => {
                let file =
                    std::fs::read_to_string(repo_root().join("cli/examples/poll.rs")).unwrap();
                assert_eq!(text, &file, "the guide shows cli/examples/poll.rs as it is");
                Command::new(rust_example())
            }
            other => panic!("an example in {other}, which the test does not run"),
        };
        let out = cmd
            .env("RESETCTL_URL", &url)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && printed == "200\n304\n",
            "the {language} example ({}): {printed:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // The 304 was free: one request counted, and this one.
        let probe = raw_request(s.addr, "GET", "/openapi/v1/records/latest", &[]);
        assert_eq!(
            probe.header("x-ratelimit-remaining"),
            Some("18"),
            "the {language} example spent more than its one 200"
        );
    }
}
