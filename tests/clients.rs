//! The client guide's examples (`docs/clients.md`), each copied into a
//! fresh directory (or crate) with only what its section says to install,
//! and run as written against a real server: with the default quota (20 per
//! 3600 s) each asks twice and prints `200` then `304`, and the 304 spends
//! no quota; with the quota spent it prints `429`, sleeps `Retry-After`
//! seconds and then gets its `200` (a retry at once is a second 429), and
//! keeps no 429 body as the record.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use crate::util::server::{raw_request, Server};
use crate::util::{repo_root, World};

/// One example: its language, its text, and the commands its section
/// names (its inline code), which say what to install and how to run it.
struct Example {
    language: String,
    text: String,
    commands: Vec<String>,
}

/// The examples of the guide, section by section (`###`).
fn examples() -> Vec<Example> {
    let guide = std::fs::read_to_string(repo_root().join("docs/clients.md")).unwrap();
    guide
        .split("\n### ")
        .skip(1)
        .flat_map(|section| {
            let commands = inline_code(section);
            crate::deployment::blocks_in("docs/clients.md", section)
                .into_iter()
                .map(move |block| Example {
                    language: block.kind,
                    text: block.text,
                    commands: commands.clone(),
                })
        })
        .collect()
}

/// The inline code spans of Markdown `text` outside its fences, a line
/// break inside a span read as a space (as CommonMark does).
fn inline_code(text: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push(' ');
        }
    }
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.trim().to_owned())
        .collect()
}

/// The one command of `example` that starts with `prefix`, as its words.
#[track_caller]
fn command<'a>(example: &'a Example, prefix: &str) -> Vec<&'a str> {
    let found: Vec<&String> = example
        .commands
        .iter()
        .filter(|c| c.starts_with(prefix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "the {} section names one `{prefix}…`: {:?}",
        example.language,
        example.commands
    );
    found[0].split_whitespace().collect()
}

/// What `npm install --save-dev PACKAGES` leaves in `dir`: each package
/// with what it depends on, taken from the pinned versions `make test-deps`
/// installed into .browser/ (tests/browser/package-lock.json), linked into
/// `dir/node_modules`, and their commands into `node_modules/.bin`.
fn npm_install(dir: &Path, packages: &[&str]) {
    let from = crate::docs_page::browser_dir().join("node_modules");
    let to = dir.join("node_modules");
    std::fs::create_dir_all(to.join(".bin")).unwrap();
    let mut todo: Vec<(String, bool)> = packages.iter().map(|p| (p.to_string(), true)).collect();
    let mut done = HashSet::new();
    while let Some((name, required)) = todo.pop() {
        if !done.insert(name.clone()) {
            continue;
        }
        let source = from.join(&name);
        if !source.exists() {
            // Optional dependencies of another platform are not installed.
            assert!(
                !required,
                "{name} is not in {}: run `make test-deps` (tests/browser/package.json pins what the guide installs)",
                from.display()
            );
            continue;
        }
        let target = to.join(&name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&source, &target).unwrap();
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(source.join("package.json")).unwrap()).unwrap();
        for (field, required) in [("dependencies", true), ("optionalDependencies", false)] {
            if let Some(deps) = manifest[field].as_object() {
                todo.extend(deps.keys().map(|d| (d.clone(), required)));
            }
        }
        let bins: Vec<(String, String)> = match &manifest["bin"] {
            serde_json::Value::String(path) => {
                vec![(name.rsplit('/').next().unwrap().to_owned(), path.clone())]
            }
            serde_json::Value::Object(map) => map
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect(),
            _ => Vec::new(),
        };
        for (bin, path) in bins {
            std::os::unix::fs::symlink(target.join(path), to.join(".bin").join(bin)).unwrap();
        }
    }
}

/// Runs `words` (a command the guide names) in `dir`, which must succeed.
#[track_caller]
fn run_in(dir: &Path, words: &[&str], env: &[(&str, &Path)]) {
    let out = Command::new(words[0])
        .args(&words[1..])
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("run {words:?}: {e}"));
    assert!(
        out.status.success(),
        "{} (in {}):\n{}{}",
        words.join(" "),
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The TypeScript example as its section says: `npm install` of what it
/// names into a new directory, saved as `poll.mts`, compiled by the
/// section's `npx tsc …` (today's TypeScript, pinned in
/// tests/browser/package.json), and run by its `node …`.
fn typescript(example: &Example, dir: &Path) -> Command {
    let install = command(example, "npm install");
    assert_eq!(&install[..3], ["npm", "install", "--save-dev"]);
    npm_install(dir, &install[3..]);
    std::fs::write(dir.join("poll.mts"), &example.text).unwrap();
    run_in(dir, &command(example, "npx tsc"), &[]);
    let node = command(example, "node ");
    let mut cmd = Command::new(node[0]);
    cmd.args(&node[1..]);
    cmd
}

/// The Go example as `poll.go`, as Go's own tools hold it (`gofmt` finds
/// nothing to change, `go vet` nothing to report), built as `go run` would
/// (the Debian package golang-go, which `make test-deps` installs); its
/// build cache in `dir`.
fn go(text: &str, dir: &Path) -> Command {
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
    // Built first, so the quota's clock runs only while it polls.
    go_tool("go", &["build", "-o", "poll", "poll.go"]);
    Command::new(dir.join("poll"))
}

/// The Rust example in a new crate, as its section says: `cargo new`,
/// then its `cargo add` lines (offline, with this workspace's Cargo.lock
/// so the versions are the ones already fetched), the example as
/// `src/main.rs`, built (into target/client-guide/, kept between runs).
fn rust(example: &Example, dir: &Path) -> Command {
    let new = command(example, "cargo new");
    run_in(dir, &[&new[..], &["--vcs", "none"]].concat(), &[]);
    let krate = dir.join(new.last().unwrap());
    std::fs::copy(repo_root().join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    let adds: Vec<&String> = example
        .commands
        .iter()
        .filter(|c| c.starts_with("cargo add"))
        .collect();
    assert!(!adds.is_empty(), "the Rust section names what to add");
    for add in adds {
        let words: Vec<&str> = add.split_whitespace().collect();
        run_in(
            &krate,
            &[&words[..], &["--offline", "--quiet"]].concat(),
            &[],
        );
    }
    std::fs::write(krate.join("src/main.rs"), &example.text).unwrap();
    let target = repo_root().join("target/client-guide");
    run_in(
        &krate,
        &["cargo", "build", "--offline", "--quiet"],
        &[("CARGO_TARGET_DIR", &target)],
    );
    Command::new(target.join("debug").join(new.last().unwrap()))
}

/// The example's command in a fresh `dir`, ready to run.
fn prepared(example: &Example, dir: &Path) -> Command {
    match example.language.as_str() {
        "sh" => {
            let mut c = Command::new("bash");
            c.args(["-e", "-o", "pipefail", "-c", &example.text]);
            c
        }
        // The standard library only: the section installs nothing.
        "python" => {
            let mut c = Command::new("python3");
            c.args(["-c", &example.text]);
            c
        }
        "go" => go(&example.text, dir),
        "typescript" => typescript(example, dir),
        "rust" => rust(example, dir),
        other => panic!("an example in {other}, which the test does not run"),
    }
}

/// Runs `cmd` against `s` in `dir`: what it printed.
fn polled(cmd: &mut Command, s: &Server, dir: &Path, language: &str) -> String {
    let out = cmd
        .env("RESETCTL_URL", format!("http://{}", s.addr))
        .current_dir(dir)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the {language} example ({}): {printed:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    printed
}

#[test]
fn every_example_of_the_client_guide_polls_conditionally_and_honours_retry_after() {
    let examples = examples();
    let languages: Vec<&str> = examples.iter().map(|e| e.language.as_str()).collect();
    assert_eq!(
        languages,
        ["sh", "python", "go", "typescript", "rust"],
        "the guide's examples"
    );
    let w = World::new();
    w.seed_bundled();
    for example in &examples {
        let language = &example.language;
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = prepared(example, dir.path());

        // A fresh quota: 200, then a free 304.
        let s = Server::start(&w, &[], &[]);
        let printed = polled(&mut cmd, &s, dir.path(), language);
        assert_eq!(printed, "200\n304\n", "the {language} example");
        // The 304 was free: one request counted, and this one.
        let probe = raw_request(s.addr, "GET", "/openapi/v1/records/latest", &[]);
        assert_eq!(
            probe.header("x-ratelimit-remaining"),
            Some("18"),
            "the {language} example spent more than its one 200"
        );
        drop(s);

        // The quota spent (one request per 4 s, used): a 429 whose
        // Retry-After is slept before the next request, which is then
        // admitted (asked at once, it would be a second 429).
        let s = Server::start(&w, &["--rate-limit", "1/4"], &[]);
        let spend = raw_request(s.addr, "GET", "/openapi/v1/records/latest", &[]);
        assert_eq!(spend.status, 200);
        let printed = polled(&mut cmd, &s, dir.path(), language);
        assert_eq!(
            printed, "429\n200\n",
            "the {language} example with the quota spent"
        );
        if language == "sh" {
            let kept: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.path().join("latest.json")).unwrap())
                    .unwrap();
            assert_eq!(
                kept["ok"], true,
                "latest.json holds the record, not a 429: {kept}"
            );
        }
    }
}
