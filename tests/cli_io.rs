//! CLI promises about output and settings: a closed stdout pipe is success,
//! a write error is 74; `RESETCTL_CONFIG` names the config file; `RUST_LOG`
//! wins over `--log`.

use std::io::BufRead;
use std::process::Stdio;

use crate::util::{fixture, Run, World};

const NOW: &str = "2026-11-20T10:00:00.000Z";

/// Commands that print (some of them a lot) to stdout.
fn printing_commands() -> Vec<Vec<String>> {
    let feed = fixture("feed/codexrunway-status-2026-08-01.json");
    [
        vec!["export"],
        vec!["status"],
        vec!["status", "--json"],
        vec!["snapshots", "list", "--json"],
        vec!["snapshots", "show", "1"],
        vec!["record", "list"],
        vec!["--now", NOW, "convert", feed.to_str().unwrap()],
    ]
    .iter()
    .map(|args| args.iter().map(|a| a.to_string()).collect())
    .collect()
}

#[test]
fn a_closed_stdout_pipe_is_success() {
    let w = World::new();
    w.seed_bundled();
    for args in printing_commands() {
        // The reading end is closed before the command starts: every write is EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = w
            .cmd()
            .args(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let run = Run::from(out);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        assert_eq!(run.stderr, "", "{args:?}");
    }
}

#[test]
fn a_stdout_write_error_exits_74() {
    let w = World::new();
    w.seed_bundled();
    for args in printing_commands() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = w
            .cmd()
            .args(&args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let run = Run::from(out);
        assert_eq!(run.code, 74, "{args:?}: {run:?}");
        assert!(
            run.stderr.starts_with("resetctl: "),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn resetctl_config_names_the_config_file() {
    let w = World::new();
    let (from_env_file, from_flag_file) = (w.path("env-dir"), w.path("flag-dir"));
    let (env_config, flag_config) = (w.path("env.toml"), w.path("flag.toml"));
    std::fs::write(
        &env_config,
        format!("data-dir = {:?}\n", from_env_file.to_str().unwrap()),
    )
    .unwrap();
    std::fs::write(
        &flag_config,
        format!("data-dir = {:?}\n", from_flag_file.to_str().unwrap()),
    )
    .unwrap();
    let data_dir = |cmd: &mut std::process::Command| -> String {
        // Nothing is published there: status exits 69, and still names the data dir.
        Run::from(cmd.output().unwrap()).code(69).json()["dataDir"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let base = || {
        let mut c = std::process::Command::new(crate::util::bin());
        c.env_clear()
            .env("HOME", w.path("home"))
            .env("XDG_CONFIG_HOME", w.path("home/.config"))
            .env("RESETCTL_CONFIG", &env_config);
        c
    };
    assert_eq!(
        data_dir(base().args(["status", "--json"])),
        from_env_file.to_str().unwrap()
    );
    // --config beats RESETCTL_CONFIG.
    assert_eq!(
        data_dir(base().args([
            "--config",
            flag_config.to_str().unwrap(),
            "status",
            "--json"
        ])),
        from_flag_file.to_str().unwrap()
    );
    // A RESETCTL_CONFIG that names no file is an error, like --config.
    let missing = Run::from(
        base()
            .env("RESETCTL_CONFIG", w.path("nope.toml"))
            .args(["status"])
            .output()
            .unwrap(),
    )
    .code(64);
    assert!(
        missing.stderr.contains("cannot read config file"),
        "{}",
        missing.stderr
    );
}

/// Runs `serve` with `args` and `env`, makes one request that logs at
/// `resetctl::access` (info), stops it with SIGTERM and returns its whole stderr.
fn serve_log(w: &World, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = w.cmd();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr: std::net::SocketAddr = first
        .trim()
        .strip_prefix("listening on http://")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        crate::util::server::raw_request(addr, "GET", "/healthz", &[]).status,
        200
    );
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn rust_log_wins_over_the_log_flag() {
    let w = World::new();
    w.seed_bundled();
    let access = "resetctl::access: method=GET path=\"/healthz\" status=200";
    // --log alone: info shows the access line, warn hides it.
    let info = serve_log(&w, &["--log", "info"], &[]);
    assert!(info.contains(access), "{info}");
    let warn = serve_log(&w, &["--log", "warn"], &[]);
    assert!(!warn.contains(" INFO "), "{warn}");
    // RUST_LOG wins both ways.
    let raised = serve_log(
        &w,
        &["--log", "warn"],
        &[("RUST_LOG", "resetctl::access=info")],
    );
    assert!(raised.contains(access), "{raised}");
    let lowered = serve_log(&w, &["--log", "info"], &[("RUST_LOG", "warn")]);
    assert!(!lowered.contains(" INFO "), "{lowered}");
    // And over RESETCTL_LOG too.
    let env = serve_log(&w, &[], &[("RESETCTL_LOG", "info"), ("RUST_LOG", "warn")]);
    assert!(!env.contains(" INFO "), "{env}");
}
