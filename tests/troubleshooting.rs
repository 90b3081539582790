//! The manual's Troubleshooting, as an operator meets it: each message it
//! quotes under "What resetctl says" is made to happen here, and the
//! binary's own words and exit code must be the ones quoted; every message
//! made here is quoted there. What differs from machine to machine is put
//! as the manual puts it before comparing: the data dir (`/var/lib/resetctl`),
//! the config file, the upstream's and the listener's addresses, times and
//! the seconds a lock was waited for.

use std::net::TcpListener;

use crate::util::upstream::{Behavior, Upstream};
use crate::util::{repo_root, Run, World};

const CHAPTER: &str = "docs/manual/troubleshooting.md";
const SECTION: &str = "## What resetctl says";
/// The manual's upstream, listener and lock holder.
const UPSTREAM: &str = "https://status.example.org/records.json";
const LISTEN: &str = "127.0.0.1:8080";
const HOLDER: &str = "pid 4242 (resetctl sync --once)";

/// One quoted message: its heading, its line and the exit code it names.
#[derive(Debug)]
struct Quoted {
    heading: String,
    message: String,
    code: i32,
}

/// The entries of the chapter's "What resetctl says": under each `###`, the
/// first indented line is the message and `Exit code N` the code.
fn quoted() -> Vec<Quoted> {
    let text = std::fs::read_to_string(repo_root().join(CHAPTER)).unwrap();
    let section = text
        .split_once(&format!("\n{SECTION}\n"))
        .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(""))
        .unwrap_or_else(|| panic!("{CHAPTER} has no {SECTION:?}"));
    section
        .split("\n### ")
        .skip(1)
        .map(|entry| {
            let heading = entry.lines().next().unwrap_or("").to_owned();
            let message = entry
                .lines()
                .find_map(|l| l.strip_prefix("    "))
                .unwrap_or_else(|| panic!("{CHAPTER}: {heading:?} quotes no message"))
                .to_owned();
            let code = entry
                .split_once("Exit code ")
                .and_then(|(_, rest)| {
                    rest.split(|c: char| !c.is_ascii_digit())
                        .next()?
                        .parse()
                        .ok()
                })
                .unwrap_or_else(|| panic!("{CHAPTER}: {heading:?} names no exit code"));
            Quoted {
                heading,
                message,
                code,
            }
        })
        .collect()
}

/// `text` with every UTC time (`2026-11-24T12:38:11.414Z`) as `TIME`, and
/// the seconds of a lock wait as `N`.
fn without_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        let candidate = &rest[at..];
        let len = candidate
            .find(|c: char| !(c.is_ascii_digit() || "-:.T".contains(c)))
            .unwrap_or(candidate.len());
        let word = &candidate[..len];
        out.push_str(&rest[..at]);
        if word.len() >= 19 && word.as_bytes()[10] == b'T' && candidate[len..].starts_with('Z') {
            out.push_str("TIME");
            rest = &candidate[len + 1..];
        } else {
            out.push_str(word);
            rest = &candidate[len..];
        }
    }
    out.push_str(rest);
    match out.split_once("(waited ") {
        Some((before, after)) => match after.split_once(" s)") {
            Some((_, tail)) => format!("{before}(waited N s){tail}"),
            None => out,
        },
        None => out,
    }
}

/// One way to make resetctl say something: what it said (its first line
/// of stderr) and its exit code, put as the manual puts it.
struct Said {
    message: String,
    code: i32,
}

fn said(w: &World, run: Run, replace: &[(&str, &str)]) -> Said {
    let mut message = run.stderr.lines().next().unwrap_or("").to_owned();
    // Where a deployed instance may be, on a machine that has one.
    if let Some(hint) = w.machine_hint() {
        message = message.replace(&hint, "");
    }
    let data_dir = w.data_dir().display().to_string();
    message = message.replace(&data_dir, "/var/lib/resetctl");
    for (from, to) in replace {
        message = message.replace(from, to);
    }
    Said {
        message: without_times(&message),
        code: run.code,
    }
}

/// A mirror's sync, at `now`, of `up`.
fn sync(w: &World, up: &Upstream, now: &str) -> Run {
    let url = up.url("/records.json");
    w.run(&["--now", now, "sync", "--upstream", &url, "--once"])
}

/// Each message the chapter explains, made to happen.
fn everything_said() -> Vec<Said> {
    let mut all = Vec::new();

    // A data dir that is not there (a typo, or a command without the config).
    let w = World::new();
    all.push(said(&w, w.run(&["status"]), &[]));

    // A typo in the config file.
    let w = World::new();
    let config = w.path("config.toml");
    std::fs::write(
        &config,
        "# /etc/resetctl/config.toml\nlisen = \"127.0.0.1:8080\"\n",
    )
    .unwrap();
    let config = config.display().to_string();
    all.push(said(
        &w,
        w.run(&["--config", &config, "status"]),
        &[(config.as_str(), "/etc/resetctl/config.toml")],
    ));

    // Another writer holds the data dir's lock.
    let w = World::new();
    w.seed_bundled();
    let lock = w.data_dir().join("resetctl.lock");
    let file = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
    file.try_lock().unwrap();
    std::fs::write(&lock, HOLDER).unwrap();
    all.push(said(&w, w.run(&["--lock-timeout", "0.3", "publish"]), &[]));
    drop(file);

    // A standalone instance nobody marked checked for more than 30 hours.
    w.run(&[
        "--now",
        "2026-11-20T10:00:00.000Z",
        "mark-checked",
        "--actor",
        "alice",
    ])
    .success();
    all.push(said(
        &w,
        w.run(&["--now", "2026-11-21T18:00:00.000Z", "status"]),
        &[],
    ));

    // The address is taken (another server, or the socket unit holds it).
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let sport = format!("sport = :{}", taken.local_addr().unwrap().port());
    all.push(said(
        &w,
        w.run_refused(&["serve", "--listen", &addr]),
        &[(addr.as_str(), LISTEN), (sport.as_str(), "sport = :8080")],
    ));
    drop(taken);

    // A standalone command in a mirror's data dir.
    let up = crate::operations::upstream();
    let url = up.url("/records.json");
    let m = World::new();
    sync(&m, &up, "2026-11-24T09:30:00.000Z").success();
    all.push(said(&m, m.run(&["seed"]), &[]));

    // A mirror gone stale: no good sync for longer than max-age-minutes.
    all.push(said(
        &m,
        m.run(&["--now", "2026-11-24T13:00:00.000Z", "status"]),
        &[],
    ));

    // A mirror whose upstream fails: stale at once, though still served.
    up.set(Behavior::Status(503));
    sync(&m, &up, "2026-11-24T13:05:00.000Z");
    all.push(said(
        &m,
        m.run(&["--now", "2026-11-24T13:06:00.000Z", "status"]),
        &[],
    ));

    // A new mirror whose upstream fails: nothing published, then a back-off.
    let n = World::new();
    let first = sync(&n, &up, "2026-11-24T12:00:00.000Z");
    all.push(said(&n, first, &[(url.as_str(), UPSTREAM)]));
    all.push(said(
        &n,
        n.run(&["--now", "2026-11-24T12:01:00.000Z", "status"]),
        &[(url.as_str(), UPSTREAM)],
    ));
    all.push(said(
        &n,
        sync(&n, &up, "2026-11-24T12:05:00.000Z"),
        &[(url.as_str(), UPSTREAM)],
    ));
    all
}

#[test]
fn every_message_troubleshooting_quotes_is_the_binarys_own_with_its_exit_code() {
    let quoted = quoted();
    let said = everything_said();
    let mut problems = Vec::new();
    for s in &said {
        match quoted
            .iter()
            .find(|q| without_times(&q.message) == s.message)
        {
            None => problems.push(format!(
                "resetctl says this (exit {}), and {CHAPTER} does not quote it:\n    {}",
                s.code, s.message
            )),
            Some(q) if q.code != s.code => problems.push(format!(
                "{CHAPTER}: {:?} says exit code {}; it is {}",
                q.heading, q.code, s.code
            )),
            Some(_) => {}
        }
    }
    for q in &quoted {
        if !said.iter().any(|s| s.message == without_times(&q.message)) {
            problems.push(format!(
                "{CHAPTER}: {:?} quotes what resetctl does not say (or no test makes it say):\n    {}",
                q.heading, q.message
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert_eq!(quoted.len(), said.len(), "one entry per message");
}
