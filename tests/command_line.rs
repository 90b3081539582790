//! The command line: duration settings out of range, the snapshot
//! pointer, lock errors, a config key for every setting, the listen
//! address, and polling etiquette toward the upstream.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::upstream::{header, Upstream};
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn seeded() -> World {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    w
}

// Item 2 ----------------------------------------------------------------------

#[test]
fn duration_settings_out_of_range_exit_64_naming_the_setting() {
    let w = World::new();
    let up = "http://127.0.0.1:1/x";
    // (args, environment, config file, what stderr says)
    type Case<'a> = (
        Vec<&'a str>,
        Vec<(&'a str, &'a str)>,
        Option<&'a str>,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            vec!["--lock-timeout", "1e300", "status"],
            vec![],
            None,
            "lock-timeout must be",
        ),
        (
            vec!["status"],
            vec![("RESETCTL_LOCK_TIMEOUT", "1e20")],
            None,
            "lock-timeout must be",
        ),
        (
            vec!["sync", "--upstream", up, "--check", "--timeout", "1e300"],
            vec![],
            None,
            "timeout must be",
        ),
        (
            vec![
                "sync",
                "--upstream",
                up,
                "--check",
                "--connect-timeout",
                "0",
            ],
            vec![],
            None,
            "connect-timeout must be",
        ),
        (
            vec!["serve", "--republish", "--republish-every", "1e300"],
            vec![],
            None,
            "republish-every must be",
        ),
        (
            vec!["sync", "--upstream", up, "--check"],
            vec![],
            Some("timeout = -1.0\n"),
            "timeout must be",
        ),
        (
            vec!["sync", "--upstream", up, "--check"],
            vec![],
            Some("connect-timeout = inf\n"),
            "connect-timeout must be",
        ),
        (
            vec!["status"],
            vec![],
            Some("lock-timeout = nan\n"),
            "lock-timeout must be",
        ),
    ];
    for (args, env, file, needle) in cases {
        let mut cmd = w.cmd();
        if let Some(text) = file {
            let path = w.path("durations.toml");
            std::fs::write(&path, text).unwrap();
            cmd.arg("--config").arg(path);
        }
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let run = crate::util::Run::from(cmd.args(&args).output().unwrap());
        assert_eq!(
            run.code, 64,
            "{args:?} {env:?} {file:?}: expected exit 64\n{}",
            run.stderr
        );
        assert!(
            run.stderr.contains(needle) && run.stderr.contains("seconds"),
            "{args:?} {env:?} {file:?}: {}",
            run.stderr
        );
    }
}

// Item 7 ----------------------------------------------------------------------

/// Runs `resetctl ARGS` and kills it if it has not finished within 10 s.
fn run_bounded(w: &World, args: &[&str]) -> crate::util::Run {
    let mut child = w
        .cmd()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("resetctl {args:?} did not finish within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    crate::util::Run::from(child.wait_with_output().unwrap())
}

#[test]
fn the_snapshot_pointer_is_read_bounded_and_never_through_a_link() {
    let w = seeded();
    let pointer = w.data_dir().join("snapshots/CURRENT");
    // A symlink (to a file full of secrets) is refused without printing it.
    std::fs::remove_file(&pointer).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &pointer).unwrap();
    let run = run_bounded(&w, &["status"]).code(65);
    assert!(
        !run.stderr.contains("root:") && run.stderr.contains("not a regular file"),
        "{}",
        run.stderr
    );
    // A FIFO does not hang.
    std::fs::remove_file(&pointer).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&pointer)
        .status()
        .unwrap();
    assert!(made.success());
    let run = run_bounded(&w, &["status"]).code(65);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    // A huge pointer is read only in part, and not echoed whole.
    std::fs::remove_file(&pointer).unwrap();
    std::fs::write(&pointer, "1".repeat(1 << 20)).unwrap();
    let run = run_bounded(&w, &["status"]).code(65);
    assert!(run.stderr.len() < 600, "{}", run.stderr.len());
    // A sequence that cannot be incremented is refused, never wrapped.
    std::fs::write(&pointer, "18446744073709551615\n").unwrap();
    let run = run_bounded(&w, &["--now", NOW, "publish"]).code(65);
    assert!(
        run.stderr.contains("18446744073709551615") && run.stderr.contains("cannot be followed"),
        "{}",
        run.stderr
    );
}

// Item 8 ----------------------------------------------------------------------

#[test]
fn a_sync_lock_that_cannot_be_opened_is_an_io_error_not_contention() {
    let w = World::new();
    std::fs::create_dir_all(w.data_dir().join("sync.lock")).unwrap();
    let run = w
        .run(&["sync", "--upstream", "http://127.0.0.1:1/x", "--once"])
        .code(74);
    assert!(
        !run.stderr.contains("another sync is running") && run.stderr.contains("sync.lock"),
        "{}",
        run.stderr
    );
}

// Item 11 ---------------------------------------------------------------------

#[test]
fn listen_takes_a_host_name_and_a_port_in_use_has_its_own_exit_code() {
    let w = seeded();
    let mut child = w
        .cmd()
        .args(["serve", "--listen", "localhost:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    assert!(
        first.starts_with("listening on http://127.0.0.1:")
            || first.starts_with("listening on http://[::1]:"),
        "{first:?} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let run = w.run(&["serve", "--listen", &addr]).code(71);
    assert!(
        run.stderr.contains(&format!("cannot listen on {addr}")),
        "{}",
        run.stderr
    );
}

// Item 13 ---------------------------------------------------------------------

#[test]
fn polling_defaults_to_hourly_and_identifies_the_project() {
    let w = World::new();
    let check = w
        .run(&["sync", "--upstream", "http://127.0.0.1:1/x", "--check"])
        .success()
        .json();
    assert_eq!(check["source"]["intervalMinutes"], 60);
    assert_eq!(check["source"]["maxAgeMinutes"], 180);
    let up = Upstream::start(crate::util::upstream::Behavior::Status(500));
    up.serve(&crate::util::generated_document(1), "\"v1\"");
    w.run(&[
        "--now",
        NOW,
        "sync",
        "--upstream",
        &up.url("/records.json"),
        "--once",
        "--user-agent-contact",
        "https://ops.example.org/resetctl",
    ])
    .success();
    let seen = up.last_request();
    assert_eq!(
        header(&seen, "user-agent"),
        Some(
            format!(
                "resetctl/{} (+https://ops.example.org/resetctl)",
                env!("CARGO_PKG_VERSION")
            )
            .as_str()
        )
    );
}

/// Every setting's default is declared once, in its row of the table of
/// settings (`resetctl::config::Setting::default`): `--help` and the man
/// pages show it from there, every setting option says its default (a
/// value, or in words), `serve --check` uses it, and the operator's
/// manual's tables of flags say the same (issue 41).
#[test]
fn every_settings_default_is_shown_as_the_settings_apply_it() {
    fn default_of(key: &str) -> Option<String> {
        resetctl::config::setting(key).and_then(resetctl::config::Setting::default)
    }
    fn walk(cmd: &clap::Command, found: &mut Vec<(String, String)>) {
        for arg in cmd.get_arguments() {
            // A hidden option is a moved one, accepted only to warn.
            if arg.is_hide_set() {
                continue;
            }
            let (Some(long), Some(env)) = (arg.get_long(), crate::util::variable_of(arg)) else {
                continue;
            };
            let key = long.replace('-', "_");
            if env != resetctl::config::env_variable(&key)
                || !resetctl::config::FileConfig::KEYS.contains(&key.as_str())
                || !arg.get_action().takes_values()
            {
                continue;
            }
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(ToString::to_string)
                .unwrap_or_default();
            found.push((key, help));
        }
        for sub in cmd.get_subcommands() {
            walk(sub, found);
        }
    }
    let mut options = Vec::new();
    walk(&resetctl_cli::help::documented(), &mut options);
    assert!(options.len() >= 40, "{} setting options", options.len());
    let mut wrong = Vec::new();
    for (key, help) in &options {
        let said: Vec<&str> = help
            .match_indices("Default: ")
            .map(|(at, _)| &help[at..])
            .collect();
        match default_of(key) {
            Some(value) => {
                let shown = format!("Default: {value}");
                if said.len() != 1 || !said[0].starts_with(&shown) {
                    wrong.push(format!("--{key}: {help:?} should say {shown:?}"));
                }
            }
            None if said.len() != 1 => wrong.push(format!("--{key}: {help:?} says no default")),
            None => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // What a run uses is that value.
    let w = World::new();
    let check = w.run(&["serve", "--check"]).success().stdout;
    let upstream = w
        .cmd()
        .env("RESETCTL_UPSTREAM", "public")
        .args(["serve", "--check"])
        .output()
        .unwrap();
    let check = check + &String::from_utf8_lossy(&upstream.stdout);
    let mut checked = 0;
    for key in resetctl::config::FileConfig::KEYS {
        let Some(value) = default_of(key) else {
            continue;
        };
        let kebab = key.replace('_', "-");
        let line = check
            .lines()
            .find(|l| l.starts_with(&format!("{kebab} = ")) && !l.contains("(no upstream)"))
            .unwrap_or_else(|| panic!("serve --check lists no {kebab}:\n{check}"));
        assert!(
            line.starts_with(&format!("{kebab} = {value} ")) && line.ends_with("# default"),
            "{line}"
        );
        checked += 1;
    }
    assert!(checked >= 25, "{checked} defaults checked");

    // The operator's manual says each default once, in its list of every
    // setting (made by `make man`), and says the same.
    let mut said = 0;
    for (file, text) in crate::deployment::chapters() {
        if file.ends_with("/settings.md") {
            continue;
        }
        for line in text.lines().filter(|l| l.starts_with("| `--")) {
            let flag = line["| `--".len()..].split([' ', '`']).next().unwrap_or("");
            assert!(
                default_of(&flag.replace('-', "_")).is_none(),
                "{file}: a table restates the setting {flag}; link docs/manual/settings.md instead:\n{line}"
            );
        }
    }
    let settings =
        std::fs::read_to_string(crate::util::repo_root().join("docs/manual/settings.md")).unwrap();
    for key in resetctl::config::FileConfig::KEYS {
        let Some(value) = default_of(key) else {
            continue;
        };
        let kebab = key.replace('_', "-");
        let section = settings
            .split_once(&format!("\n### `{kebab}`\n"))
            .map(|(_, rest)| rest.split("\n### ").next().unwrap_or(""))
            .unwrap_or_else(|| panic!("docs/manual/settings.md has no {kebab}"));
        assert!(
            section.contains(&format!("Default: {value}")),
            "docs/manual/settings.md: the default of {kebab} is {value}:\n{section}"
        );
        said += 1;
    }
    assert!(
        said >= 25,
        "{said} defaults of docs/manual/settings.md checked"
    );
}
