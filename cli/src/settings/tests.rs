//! Settings built from an argument list, an environment map and a config
//! file's text, as the binary builds them: the precedence of every layer,
//! and one error (naming where the value came from) whatever the subcommand.

use std::collections::HashMap;
use std::time::Duration;

use super::from_parts;

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Environment variables as (name, value) pairs.
type Env<'a> = &'a [(&'a str, &'a str)];

/// Every subcommand that reads settings, with the arguments it requires.
const SUBCOMMANDS: &[&[&str]] = &[
    &["status"],
    &["serve"],
    &["sync", "--once"],
    &["publish"],
    &["snapshots", "list"],
    &["record", "list"],
    &["webhook", "list"],
    &["mark-checked"],
];

fn error(argv: &[&str], env_pairs: &[(&str, &str)], file: &str) -> String {
    let mut args = vec!["--data-dir", "/nonexistent"];
    args.extend_from_slice(argv);
    match from_parts(&args, &env(env_pairs), file) {
        Ok(_) => panic!("{argv:?} {env_pairs:?} {file:?}: accepted"),
        Err(e) => {
            assert_eq!(e.code, crate::exit::Code::Usage, "{}", e.message);
            e.message
        }
    }
}

#[test]
fn a_flag_beats_the_environment_which_beats_the_file() {
    let file = "listen = \"127.0.0.1:1\"\nkeep = 3\nrate-limit = \"5/60\"\n";
    let argv = ["--data-dir", "/d", "serve", "--listen", "127.0.0.1:3"];
    let settings = from_parts(&argv, &env(&[("RESETCTL_LISTEN", "127.0.0.1:2")]), file).unwrap();
    assert_eq!(settings.serve.listen, "127.0.0.1:3");
    let settings = from_parts(
        &["--data-dir", "/d", "serve"],
        &env(&[("RESETCTL_LISTEN", "127.0.0.1:2"), ("RESETCTL_KEEP", "4")]),
        file,
    )
    .unwrap();
    assert_eq!(settings.serve.listen, "127.0.0.1:2");
    assert_eq!(settings.keep, 4);
    let settings = from_parts(&["--data-dir", "/d", "status"], &env(&[]), file).unwrap();
    assert_eq!(settings.serve.listen, "127.0.0.1:1");
    assert_eq!(settings.keep, 3);
    let policy = settings.serve.options.limits.policy.unwrap();
    assert_eq!((policy.limit, policy.window_seconds), (5, 60));
    // Defaults where no layer says.
    let settings = from_parts(&["--data-dir", "/d", "status"], &env(&[]), "").unwrap();
    assert_eq!(settings.serve.listen, "127.0.0.1:8080");
    assert_eq!(settings.lock_timeout, Duration::from_secs(10));
    assert!(settings.sync.is_none());
}

#[test]
fn a_rate_limit_on_a_higher_layer_overrides_no_rate_limit_on_a_lower_one() {
    let off = "no-rate-limit = true\n";
    let settings = from_parts(&["--data-dir", "/d", "status"], &env(&[]), off).unwrap();
    assert_eq!(settings.serve.options.limits.policy, None);
    let settings = from_parts(
        &["--data-dir", "/d", "serve", "--rate-limit", "7/70"],
        &env(&[]),
        off,
    )
    .unwrap();
    assert_eq!(settings.serve.options.limits.policy.unwrap().limit, 7);
    let settings = from_parts(
        &["--data-dir", "/d", "status"],
        &env(&[("RESETCTL_RATE_LIMIT", "8/80")]),
        off,
    )
    .unwrap();
    assert_eq!(settings.serve.options.limits.policy.unwrap().limit, 8);
}

#[test]
fn an_invalid_key_is_one_error_for_every_subcommand_naming_where_it_came_from() {
    let cases: &[(Env, &str, &str)] = &[
        (
            &[],
            "watch = \"bogus\"",
            "config file config.toml: watch = \"bogus\" is not auto or poll",
        ),
        (
            &[("RESETCTL_WATCH", "bogus")],
            "",
            "RESETCTL_WATCH: watch = \"bogus\" is not auto or poll",
        ),
        (
            &[],
            "max-head-bytes = 99999999",
            "config file config.toml: max-head-bytes must be 8192 to 16777216",
        ),
        (
            &[],
            "listen-backlog = 70000",
            "config file config.toml: listen-backlog must be 1 to 65535",
        ),
        (
            &[("RESETCTL_MAX_CONNECTIONS", "many")],
            "",
            "RESETCTL_MAX_CONNECTIONS=\"many\" is not a whole number",
        ),
        (
            &[],
            "republish-every = 0",
            "config file config.toml: republish-every must be between 0.1",
        ),
        (
            &[],
            "upstream = \"http://127.0.0.1:9/x.json\"\nbackoff-cap-minutes = 0",
            "config file config.toml: --backoff-cap-minutes must be at least 1",
        ),
        (
            &[],
            "public-base-url = \"ftp://x\"",
            "config file config.toml: public-base-url \"ftp://x/\" must be",
        ),
        (
            &[],
            "rate-limit-store = \"memcached://x\"",
            "must be \"memory\" or a Redis URL",
        ),
    ];
    for (env_pairs, file, needle) in cases {
        let first = error(SUBCOMMANDS[0], env_pairs, file);
        assert!(first.contains(needle), "{env_pairs:?} {file:?}: {first}");
        for argv in &SUBCOMMANDS[1..] {
            assert_eq!(
                error(argv, env_pairs, file),
                first,
                "{argv:?} {env_pairs:?} {file:?}"
            );
        }
    }
}

#[test]
fn a_flag_error_names_no_layer_and_a_flag_does_not_excuse_a_bad_lower_layer() {
    assert_eq!(
        error(
            &["serve", "--watch", "poll", "--max-connections", "0"],
            &[],
            ""
        ),
        "max-connections must be at least 1"
    );
    // A good flag over a bad file value: the file is still wrong, for every subcommand.
    assert_eq!(
        error(&["serve", "--stream-max", "5"], &[], "stream-max = 0\n"),
        "config file config.toml: stream-max-per-client and stream-max must be at least 1"
    );
    // With a good file, the flag decides.
    let settings = from_parts(
        &["--data-dir", "/d", "serve", "--stream-max", "5"],
        &env(&[]),
        "stream-max = 7\n",
    )
    .unwrap();
    assert_eq!(settings.serve.options.streams.total, 5);
}

#[test]
fn webhook_endpoints_get_the_merged_delivery_settings_and_no_pages_without_the_site() {
    let file = "public-base-url = \"https://resets.example.org\"\nwebhook-timeout = 5\n";
    let settings = from_parts(
        &[
            "--data-dir",
            "/d",
            "webhook",
            "add",
            "https://hooks.example.org/x",
        ],
        &env(&[("RESETCTL_ALLOW_PRIVATE_TARGETS", "true")]),
        file,
    )
    .unwrap();
    assert!(settings.endpoints.allow_private_targets);
    assert_eq!(settings.endpoints.timeout_seconds, 5.0);
    assert_eq!(
        settings.endpoints.record_pages.as_deref(),
        Some("https://resets.example.org")
    );
    // `--no-site` from the environment too (it was read from the file only).
    let settings = from_parts(
        &[
            "--data-dir",
            "/d",
            "webhook",
            "add",
            "https://hooks.example.org/x",
        ],
        &env(&[("RESETCTL_NO_SITE", "1")]),
        file,
    )
    .unwrap();
    assert_eq!(settings.endpoints.record_pages, None);
}

#[test]
fn sync_settings_come_from_a_preset_or_a_url() {
    let settings = from_parts(
        &["--data-dir", "/d", "sync", "--once", "--upstream", "public"],
        &env(&[]),
        "",
    )
    .unwrap();
    let sync = settings.sync.clone().unwrap();
    assert_eq!(sync.source.source_id, "didcodexreset");
    assert_eq!(sync.source.page_url, "https://didcodexreset.com/");
    assert_eq!(sync.source.interval_minutes, 60);
    let settings = from_parts(
        &["--data-dir", "/d", "status"],
        &env(&[("RESETCTL_UPSTREAM", "https://u:p@feeds.example.org/s.json")]),
        "",
    )
    .unwrap();
    let sync = settings.sync.clone().unwrap();
    assert_eq!(sync.source.source_id, "feeds.example.org");
    assert!(!sync.source.url.contains(":p@"), "{}", sync.source.url);
}
