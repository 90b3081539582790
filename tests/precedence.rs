//! Every setting's precedence, in one table (issue 39, item 17): for each
//! key, a flag beats the environment, the environment beats the config
//! file, the config file beats the default, as the settings a command uses
//! show them (`serve --check`, `sync --check`, or what the command wrote).
//! Each key's row gives three values: the flag's, the environment's and the
//! file's, each different from the one it must beat.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use crate::util::{bin, Run, World};

/// Which command shows a key's effective value when its flag is given.
#[derive(Clone, Copy, PartialEq)]
enum Shown {
    /// `serve --check`: serve's flags and the global ones.
    Serve,
    /// `sync --check`: sync's flags.
    Sync,
}

/// A key's row: the command that takes its flag, the flag's words, the
/// environment's and the file's values (TOML), and the effective value
/// each case shows: flag, env, file.
struct Row {
    key: &'static str,
    shown: Shown,
    flag: &'static [&'static str],
    env: &'static str,
    file: &'static str,
    expect: [&'static str; 3],
}

const fn row(
    key: &'static str,
    shown: Shown,
    flag: &'static [&'static str],
    env: &'static str,
    file: &'static str,
    expect: [&'static str; 3],
) -> Row {
    Row {
        key,
        shown,
        flag,
        env,
        file,
        expect,
    }
}

use Shown::{Serve, Sync};

const ROWS: &[Row] = &[
    row("keep", Serve, &["--keep", "3"], "4", "5", ["3", "4", "5"]),
    row(
        "lock-timeout",
        Serve,
        &["--lock-timeout", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "log",
        Serve,
        &["--log", "warn"],
        "error",
        "\"debug\"",
        ["warn", "error", "debug"],
    ),
    row(
        "log-format",
        Serve,
        &["--log-format", "json"],
        "text",
        "\"json\"",
        ["json", "text", "json"],
    ),
    row(
        "match-tolerance-minutes",
        Serve,
        &["--match-tolerance-minutes", "10"],
        "20",
        "30",
        ["10", "20", "30"],
    ),
    row(
        "listen",
        Serve,
        &["--listen", "127.0.0.1:1001"],
        "127.0.0.1:1002",
        "\"127.0.0.1:1003\"",
        ["127.0.0.1:1001", "127.0.0.1:1002", "127.0.0.1:1003"],
    ),
    row(
        "admin-listen",
        Serve,
        &["--admin-listen", "127.0.0.1:2001"],
        "127.0.0.1:2002",
        "\"127.0.0.1:2003\"",
        ["127.0.0.1:2001", "127.0.0.1:2002", "127.0.0.1:2003"],
    ),
    row(
        "watch",
        Serve,
        &["--watch", "poll"],
        "auto",
        "\"poll\"",
        ["poll", "auto", "poll"],
    ),
    row(
        "republish",
        Serve,
        &["--republish"],
        "false",
        "true",
        ["true", "false", "true"],
    ),
    row(
        "republish-every",
        Serve,
        &["--republish-every", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "drain-timeout",
        Serve,
        &["--drain-timeout", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "public-base-url",
        Serve,
        &["--public-base-url", "https://f.example/"],
        "https://e.example/",
        "\"https://c.example/\"",
        [
            "https://f.example/",
            "https://e.example/",
            "https://c.example/",
        ],
    ),
    row(
        "no-site",
        Serve,
        &["--no-site"],
        "false",
        "true",
        ["true", "false", "true"],
    ),
    row(
        "site-name",
        Serve,
        &["--site-name", "Flag"],
        "Env",
        "\"File\"",
        ["Flag", "Env", "File"],
    ),
    row(
        "mcp-allow-origin",
        Serve,
        &["--mcp-allow-origin", "https://f.example"],
        "https://e.example",
        "[\"https://c.example\"]",
        [
            "https://f.example",
            "https://e.example",
            "https://c.example",
        ],
    ),
    row(
        "rate-limit",
        Serve,
        &["--rate-limit", "5/60"],
        "6/60",
        "\"7/60\"",
        ["5/60", "6/60", "7/60"],
    ),
    row(
        "no-rate-limit",
        Serve,
        &["--no-rate-limit"],
        "false",
        "true",
        ["true", "false", "true"],
    ),
    row(
        "header-timeout",
        Serve,
        &["--header-timeout", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "body-timeout",
        Serve,
        &["--body-timeout", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "max-connections",
        Serve,
        &["--max-connections", "11"],
        "12",
        "13",
        ["11", "12", "13"],
    ),
    row(
        "max-connections-per-ip",
        Serve,
        &["--max-connections-per-ip", "11"],
        "12",
        "13",
        ["11", "12", "13"],
    ),
    row(
        "max-head-bytes",
        Serve,
        &["--max-head-bytes", "9001"],
        "9002",
        "9003",
        ["9001", "9002", "9003"],
    ),
    row(
        "listen-backlog",
        Serve,
        &["--listen-backlog", "11"],
        "12",
        "13",
        ["11", "12", "13"],
    ),
    row(
        "stream-max-per-client",
        Serve,
        &["--stream-max-per-client", "3"],
        "4",
        "5",
        ["3", "4", "5"],
    ),
    row(
        "stream-max",
        Serve,
        &["--stream-max", "11"],
        "12",
        "13",
        ["11", "12", "13"],
    ),
    row(
        "stream-heartbeat",
        Serve,
        &["--stream-heartbeat", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "rate-limit-max-clients",
        Serve,
        &["--rate-limit-max-clients", "11"],
        "12",
        "13",
        ["11", "12", "13"],
    ),
    row(
        "rate-limit-store",
        Serve,
        &["--rate-limit-store", "memory"],
        "redis://127.0.0.1:1/0",
        "\"redis://127.0.0.1:2/0\"",
        ["memory", "redis://127.0.0.1:1/0", "redis://127.0.0.1:2/0"],
    ),
    row(
        "trust-proxy",
        Serve,
        &["--trust-proxy", "10.0.0.1"],
        "10.0.0.2",
        "[\"10.0.0.3\"]",
        ["10.0.0.1/32", "10.0.0.2/32", "10.0.0.3/32"],
    ),
    row(
        "client-ip-header",
        Serve,
        &["--client-ip-header", "x-real-ip"],
        "forwarded",
        "\"x-client\"",
        ["x-real-ip", "forwarded", "x-client"],
    ),
    row(
        "ipv6-prefix-len",
        Serve,
        &["--ipv6-prefix-len", "48"],
        "56",
        "60",
        ["48", "56", "60"],
    ),
    row(
        "flood-guard",
        Serve,
        &["--flood-guard", "1/2"],
        "3/4",
        "\"5/6\"",
        ["1/2", "3/4", "5/6"],
    ),
    row(
        "user-agent-contact",
        Serve,
        &["--user-agent-contact", "f@example.org"],
        "e@example.org",
        "\"c@example.org\"",
        ["f@example.org", "e@example.org", "c@example.org"],
    ),
    row(
        "upstream",
        Sync,
        &["--upstream", "http://127.0.0.1:9/f"],
        "http://127.0.0.1:9/e",
        "\"http://127.0.0.1:9/c\"",
        [
            "http://127.0.0.1:9/f",
            "http://127.0.0.1:9/e",
            "http://127.0.0.1:9/c",
        ],
    ),
    row(
        "upstream-header",
        Sync,
        &["--upstream-header", "X-F: 1"],
        "X-E: 2",
        "[\"X-C: 3\"]",
        ["X-F: (not shown)", "X-E: (not shown)", "X-C: (not shown)"],
    ),
    row(
        "public-url",
        Sync,
        &["--public-url", "https://f.example/d"],
        "https://e.example/d",
        "\"https://c.example/d\"",
        [
            "https://f.example/d",
            "https://e.example/d",
            "https://c.example/d",
        ],
    ),
    row(
        "page-url",
        Sync,
        &["--page-url", "https://f.example/"],
        "https://e.example/",
        "\"https://c.example/\"",
        [
            "https://f.example/",
            "https://e.example/",
            "https://c.example/",
        ],
    ),
    row(
        "source-id",
        Sync,
        &["--source-id", "f"],
        "e",
        "\"c\"",
        ["f", "e", "c"],
    ),
    row(
        "source-name",
        Sync,
        &["--source-name", "F"],
        "E",
        "\"C\"",
        ["F", "E", "C"],
    ),
    row(
        "interval-minutes",
        Sync,
        &["--interval-minutes", "11"],
        "12",
        "13",
        ["11", "12", "13"],
    ),
    row(
        "max-age-minutes",
        Sync,
        &["--max-age-minutes", "21"],
        "22",
        "23",
        ["21", "22", "23"],
    ),
    row(
        "backoff-cap-minutes",
        Sync,
        &["--backoff-cap-minutes", "31"],
        "32",
        "33",
        ["31", "32", "33"],
    ),
    row(
        "connect-timeout",
        Sync,
        &["--connect-timeout", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "timeout",
        Sync,
        &["--timeout", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
    row(
        "max-body-bytes",
        Sync,
        &["--max-body-bytes", "1001"],
        "1002",
        "1003",
        ["1001", "1002", "1003"],
    ),
    row(
        "max-redirects",
        Sync,
        &["--max-redirects", "1"],
        "2",
        "3",
        ["1", "2", "3"],
    ),
];

/// The keys whose flag belongs to a command that shows no settings: each
/// has its own case below.
const ELSEWHERE: &[&str] = &[
    "data-dir",
    "redis-ca-file",
    "redis-cert-file",
    "redis-key-file",
    "actor",
    "allow-private-targets",
    "webhook-timeout",
];

/// `resetctl ARGS…` with exactly `env` (and a home of the world's), run.
fn run(w: &World, env: &[(String, String)], args: &[&str]) -> Run {
    let mut cmd = Command::new(bin());
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .env("XDG_CONFIG_HOME", w.path("home/.config"))
        .env("XDG_DATA_HOME", w.path("home/.local/share"));
    crate::util::own_config(&mut cmd, w.tmp.path())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(args)
        .stdin(std::process::Stdio::null());
    Run::from(cmd.output().unwrap())
}

/// The effective settings a command shows: key → (value, source).
fn shown(
    w: &World,
    how: Shown,
    env: &[(String, String)],
    config: &Path,
    flag: &[&str],
) -> HashMap<String, (String, String)> {
    let data = w.data_dir();
    let mut args = vec![
        "--data-dir",
        data.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ];
    match how {
        Shown::Serve => {
            args.push("serve");
            args.extend_from_slice(flag);
            args.push("--check");
            let run = run(w, env, &args);
            // The settings are printed before what start would try; the
            // rows' Redis stores answer nobody, which the check refuses (69).
            let unanswered = run.code == 69 && run.stderr.contains("does not answer");
            let out = match unanswered {
                true => run.stdout,
                false => run.success().stdout,
            };
            out.lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| {
                    let (setting, source) = l.split_once("# ").unwrap();
                    let (key, value) = setting.trim_end().split_once(" = ").unwrap();
                    (key.to_owned(), (value.to_owned(), source.to_owned()))
                })
                .collect()
        }
        Shown::Sync => {
            args.push("sync");
            args.extend_from_slice(flag);
            args.push("--check");
            let json = run(w, env, &args).success().json();
            json["settings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["key"].as_str().unwrap().to_owned(),
                        (
                            e["value"].as_str().unwrap().to_owned(),
                            e["source"].as_str().unwrap().to_owned(),
                        ),
                    )
                })
                .collect()
        }
    }
}

fn var(key: &str) -> String {
    format!("RESETCTL_{}", key.replace('-', "_").to_ascii_uppercase())
}

#[test]
fn every_setting_takes_the_flag_over_the_environment_over_the_file_over_the_default() {
    let w = World::new();
    let config = w.path("config.toml");
    let defaults_file = w.path("empty.toml");
    std::fs::write(&defaults_file, "").unwrap();
    // A sync needs an upstream, from a layer below the one tested.
    let upstream_env = |row: &Row| -> Vec<(String, String)> {
        if row.shown == Sync && row.key != "upstream" {
            vec![("RESETCTL_UPSTREAM".into(), "http://127.0.0.1:9/u".into())]
        } else {
            Vec::new()
        }
    };
    let file_source = format!("config file {}", config.display());
    for row in ROWS {
        let mut env = upstream_env(row);
        std::fs::write(&config, format!("{} = {}\n", row.key, row.file)).unwrap();
        env.push((var(row.key), row.env.to_owned()));
        // All three: the flag's value.
        let all = shown(&w, row.shown, &env, &config, row.flag);
        assert_eq!(
            all[row.key],
            (row.expect[0].to_owned(), "flag".to_owned()),
            "{}: flag over env over file",
            row.key
        );
        // The environment and the file: the environment's.
        let lower = shown(&w, row.shown, &env, &config, &[]);
        assert_eq!(
            lower[row.key],
            (row.expect[1].to_owned(), format!("env {}", var(row.key))),
            "{}: env over file",
            row.key
        );
        // The file alone: the file's.
        let file_only = shown(&w, row.shown, &upstream_env(row), &config, &[]);
        assert_eq!(
            file_only[row.key],
            (row.expect[2].to_owned(), file_source.clone()),
            "{}: file over default",
            row.key
        );
        // Nothing: the default, not the file's.
        // (`serve --check`, which shows every key, with or without an upstream.)
        let none = shown(&w, Serve, &upstream_env(row), &defaults_file, &[]);
        assert_eq!(none[row.key].1, "default", "{}", row.key);
        assert_ne!(
            none[row.key].0, row.expect[2],
            "{}: the default differs from the file's",
            row.key
        );
    }
    // Every key is in the table or has its own case.
    let keys: Vec<String> = shown(&w, Serve, &[], &defaults_file, &[])
        .into_keys()
        .collect();
    for key in keys {
        assert!(
            ROWS.iter().any(|r| r.key == key) || ELSEWHERE.contains(&key.as_str()),
            "{key} has no row"
        );
    }
}

/// Two keys, one setting: a quota given on a higher layer wins over
/// `no-rate-limit` below it, and the other way round (the mutant that let
/// the environment's `no-rate-limit` beat a flag's `--rate-limit`).
#[test]
fn the_quota_and_no_quota_follow_the_layer_they_come_from() {
    let w = World::new();
    let empty = w.path("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let env = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
    let a = shown(
        &w,
        Serve,
        &env("RESETCTL_NO_RATE_LIMIT", "true"),
        &empty,
        &["--rate-limit", "5/60"],
    );
    assert_eq!(
        a["rate-limit"].0, "5/60",
        "a flag's quota over the environment's no-rate-limit"
    );
    let b = shown(
        &w,
        Serve,
        &env("RESETCTL_RATE_LIMIT", "5/60"),
        &empty,
        &["--no-rate-limit"],
    );
    assert_eq!(
        b["rate-limit"].0, "(off)",
        "a flag's no-rate-limit over the environment's quota"
    );
    let config = w.path("config.toml");
    std::fs::write(&config, "no-rate-limit = true\n").unwrap();
    let c = shown(&w, Serve, &env("RESETCTL_RATE_LIMIT", "6/60"), &config, &[]);
    assert_eq!(
        c["rate-limit"].0, "6/60",
        "the environment's quota over the file's no-rate-limit"
    );
}

/// The keys whose flags belong to commands that write rather than show:
/// their effect, with a lower layer giving another value.
#[test]
fn the_actor_the_data_dir_and_the_endpoint_defaults_take_the_flag_too() {
    let w = World::new();
    let empty = w.path("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let now = "2026-11-20T10:00:00.000Z";
    // --actor over RESETCTL_ACTOR.
    let mut cmd = w.cmd();
    cmd.env("RESETCTL_ACTOR", "env-actor").args([
        "--now",
        now,
        "mark-checked",
        "--actor",
        "flag-actor",
    ]);
    Run::from(cmd.output().unwrap()).success();
    let log = w.run(&["record", "log", "--json"]).success().stdout;
    assert!(
        log.contains("\"flag-actor\"") && !log.contains("env-actor"),
        "{log}"
    );
    // RESETCTL_ACTOR over the file's, shown by serve --check.
    let config = w.path("config.toml");
    std::fs::write(&config, "actor = \"file-actor\"\n").unwrap();
    let shown_actor = shown(
        &w,
        Serve,
        &[("RESETCTL_ACTOR".into(), "env-actor".into())],
        &config,
        &[],
    );
    assert_eq!(shown_actor["actor"].0, "env-actor");
    // --data-dir over RESETCTL_DATA_DIR over the file's.
    std::fs::write(
        &config,
        format!("data-dir = {:?}\n", w.path("file-dir").to_str().unwrap()),
    )
    .unwrap();
    let env = vec![(
        "RESETCTL_DATA_DIR".to_owned(),
        w.path("env-dir").to_str().unwrap().to_owned(),
    )];
    let out = run(
        &w,
        &env,
        &[
            "--config",
            config.to_str().unwrap(),
            "--data-dir",
            w.path("flag-dir").to_str().unwrap(),
            "serve",
            "--check",
        ],
    )
    .success()
    .stdout;
    assert!(
        out.contains(&format!("data-dir = {} ", w.path("flag-dir").display())),
        "{out}"
    );
    let out = run(
        &w,
        &env,
        &["--config", config.to_str().unwrap(), "serve", "--check"],
    )
    .success()
    .stdout;
    assert!(
        out.contains(&format!("data-dir = {} ", w.path("env-dir").display())),
        "{out}"
    );
    // webhook add's flags over the environment's, kept with the endpoint.
    let mut cmd = w.cmd();
    cmd.env("RESETCTL_WEBHOOK_TIMEOUT", "7")
        .env("RESETCTL_ALLOW_PRIVATE_TARGETS", "false")
        .args([
            "webhook",
            "add",
            "http://127.0.0.1:9/hook",
            "--webhook-timeout",
            "3",
            "--allow-private-targets",
        ]);
    Run::from(cmd.output().unwrap()).success();
    let endpoint = &w.run(&["webhook", "list", "--json"]).success().json()[0];
    let show = w
        .run(&[
            "webhook",
            "show",
            endpoint["id"].as_str().unwrap(),
            "--json",
        ])
        .success()
        .json();
    assert_eq!(show["timeoutSeconds"], 3.0, "{show}");
    assert_eq!(show["allowPrivateTargets"], true, "{show}");
}

/// The TLS files of the quota store: flag over environment over file, as
/// `serve --check` prints them before it sets up the store (with these
/// placeholder certificates it then fails, as serve would).
#[test]
fn the_quota_stores_files_take_the_flag_too() {
    let w = World::new();
    let pem = |name: &str| {
        let path = w.path(name);
        std::fs::write(
            &path,
            "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (flag, env, file) = (pem("flag.pem"), pem("env.pem"), pem("file.pem"));
    let config = w.path("config.toml");
    std::fs::write(&config, format!("redis-ca-file = {file:?}\n")).unwrap();
    let printed = |env_pairs: Vec<(String, String)>, flags: &[&str]| {
        let data = w.data_dir();
        let mut args = vec![
            "--data-dir",
            data.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "serve",
        ];
        args.extend_from_slice(flags);
        args.extend(["--rate-limit-store", "rediss://127.0.0.1:1/0", "--check"]);
        let run = run(&w, &env_pairs, &args);
        assert_ne!(run.code, 0, "{}", run.stderr);
        run.stdout
            .lines()
            .find_map(|l| l.strip_prefix("redis-ca-file = "))
            .unwrap_or_else(|| panic!("no redis-ca-file line:\n{}", run.stdout))
            .to_owned()
    };
    let env_pair = vec![("RESETCTL_REDIS_CA_FILE".to_owned(), env.clone())];
    assert!(printed(env_pair.clone(), &["--redis-ca-file", &flag]).starts_with(&format!("{flag} ")));
    assert!(printed(env_pair, &[]).starts_with(&format!("{env} ")));
    assert!(printed(Vec::new(), &[]).starts_with(&format!("{file} ")));
}
