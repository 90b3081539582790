//! Secrets stay secret in every error (issue 39, item 2): random secrets
//! fed through malformed (and well-formed) values of every setting that
//! may carry one are never found, not even in part, on stderr, in a
//! server's log, or in `status`.

use proptest::prelude::*;

use crate::util::{Run, World};

/// Every setting value that may carry `secret`, each as the environment
/// gives it to `status` (which reads and checks every setting), and what
/// should be refused (`Some(true)`), accepted (`Some(false)`), or either
/// (`None`: a random secret may make the value well-formed).
fn shapes(secret: &str) -> Vec<(&'static str, String, Option<bool>)> {
    let s = secret;
    // In a well-formed URL the secret is percent-encoded, as it must be.
    let e = &encoded(secret);
    vec![
        // The quota store: a password that breaks the URL's shape.
        (
            "RESETCTL_RATE_LIMIT_STORE",
            format!("redis://default:{s}/x@host:6379"),
            Some(true),
        ),
        (
            "RESETCTL_RATE_LIMIT_STORE",
            format!("redis:/app:{s}@h"),
            Some(true),
        ),
        (
            "RESETCTL_RATE_LIMIT_STORE",
            format!("redis://:{s}@h:notaport"),
            Some(true),
        ),
        (
            "RESETCTL_RATE_LIMIT_STORE",
            format!("redis://u:{s}@[::1"),
            Some(true),
        ),
        (
            "RESETCTL_RATE_LIMIT_STORE",
            format!("rediss+sentinel://u:{s}@a:1,b:2"),
            Some(true),
        ),
        (
            "RESETCTL_RATE_LIMIT_STORE",
            format!("redis+cluster://:{s}@a:7000,b"),
            Some(true),
        ),
        ("RESETCTL_RATE_LIMIT_STORE", s.to_owned(), Some(true)),
        // ...and one that is well-formed: shown redacted by `status`.
        (
            "RESETCTL_RATE_LIMIT_STORE",
            format!("redis://u:{e}@127.0.0.1:1/0"),
            Some(false),
        ),
        // The upstream and its public address.
        (
            "RESETCTL_UPSTREAM",
            format!("http://u:{s}@host:bad/feed"),
            Some(true),
        ),
        (
            "RESETCTL_UPSTREAM",
            format!("http://u:{s}/x@host/feed"),
            Some(true),
        ),
        ("RESETCTL_UPSTREAM", format!("ftp:/u:{s}@h"), Some(true)),
        (
            "RESETCTL_UPSTREAM",
            format!("https://u:{e}@example.org/feed?token={e}"),
            Some(false),
        ),
        (
            "RESETCTL_PUBLIC_URL",
            format!("http://u:{s}@h:bad/"),
            may_parse(s),
        ),
        // Upstream headers, mistyped.
        ("RESETCTL_UPSTREAM_HEADER", format!("X-Key={s}"), Some(true)),
        (
            "RESETCTL_UPSTREAM_HEADER",
            format!("X-Key={s}:v"),
            Some(true),
        ),
        (
            "RESETCTL_UPSTREAM_HEADER",
            format!("X-Key: {s}\u{7f}"),
            Some(true),
        ),
        // A bare secret: refused unless it happens to read as `NAME: VALUE`.
        (
            "RESETCTL_UPSTREAM_HEADER",
            s.to_owned(),
            Some(!reads_as_header(s)),
        ),
    ]
}

/// Whether `secret` can turn a malformed URL template into a well-formed
/// one (a `?` or `#` ends the authority before the `@` that was meant to).
fn may_parse(secret: &str) -> Option<bool> {
    (!secret.contains(['?', '#'])).then_some(true)
}

/// `text` percent-encoded but for URL-safe characters.
fn encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Whether `text` happens to be a valid `NAME: VALUE` (a random secret
/// with a colon after a token may be).
fn reads_as_header(text: &str) -> bool {
    text.split_once(':').is_some_and(|(name, value)| {
        !name.trim().is_empty()
            && name
                .trim()
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            && value
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
    })
}

/// A part of `secret` found in `text`: any six characters of it (the
/// whole of a shorter one).
fn leaked<'a>(secret: &'a str, text: &str) -> Option<&'a str> {
    let chars: Vec<(usize, char)> = secret.char_indices().collect();
    let width = chars.len().min(6);
    (0..=chars.len() - width).find_map(|i| {
        let start = chars[i].0;
        let end = chars.get(i + width).map_or(secret.len(), |c| c.0);
        let part = &secret[start..end];
        text.contains(part).then_some(part)
    })
}

#[track_caller]
fn assert_kept(secret: &str, what: &str, run: &Run) {
    let text = format!("{}\n{}", run.stdout, run.stderr);
    let encoded = encoded(secret);
    for form in [secret, encoded.as_str()] {
        if let Some(part) = leaked(form, &text) {
            panic!("{what}: the secret {form:?} shows ({part:?}):\n{text}");
        }
    }
}

fn check(secret: &str) {
    let w = World::new();
    w.seed_bundled();
    for (variable, value, refused) in shapes(secret) {
        let mut cmd = w.cmd();
        cmd.env(variable, &value);
        if variable != "RESETCTL_UPSTREAM" && variable != "RESETCTL_RATE_LIMIT_STORE" {
            cmd.env("RESETCTL_UPSTREAM", "https://example.org/feed");
        }
        let run = Run::from(cmd.arg("status").output().unwrap());
        if let Some(refused) = refused {
            assert_eq!(
                run.code == 64,
                refused,
                "{variable}={value:?}: exit {}\n{}",
                run.code,
                run.stderr
            );
        }
        let refused = run.code == 64;
        assert_kept(secret, &format!("status with {variable}"), &run);
        // The same value as a flag of the command that uses it, whose
        // log is stderr: refused at once, or (well-formed) failing later.
        let flag = match variable {
            "RESETCTL_RATE_LIMIT_STORE" => {
                vec!["serve", "--listen", "127.0.0.1:0", "--rate-limit-store"]
            }
            "RESETCTL_UPSTREAM" => vec!["sync", "--once", "--upstream"],
            "RESETCTL_PUBLIC_URL" => {
                vec![
                    "sync",
                    "--once",
                    "--upstream",
                    "http://127.0.0.1:1/",
                    "--public-url",
                ]
            }
            _ => vec![
                "sync",
                "--once",
                "--upstream",
                "http://127.0.0.1:1/",
                "--upstream-header",
            ],
        };
        if refused {
            let mut args = flag.clone();
            args.push(&value);
            let run = w.run_refused(&args);
            assert_eq!(run.code, 64, "{args:?}\n{}", run.stderr);
            assert_kept(secret, &format!("{args:?}"), &run);
        }
    }
    // A webhook target with its token in the path: refused when not an
    // http(s) URL, kept and shown by its origin only when it is one.
    for (target, refused) in [
        (format!("ftp://93.184.216.34/api/webhooks/1/{secret}"), true),
        (format!("93.184.216.34/api/webhooks/1/{secret}"), true),
        (
            format!("https://93.184.216.34/api/webhooks/1/{}", encoded(secret)),
            false,
        ),
    ] {
        let run = w.run(&["webhook", "add", &target, "--format", "discord"]);
        assert_eq!(run.code == 64, refused, "{target}: {}", run.stderr);
        assert_kept(secret, &format!("webhook add {target}"), &run);
    }
    for args in [
        &["webhook", "list"][..],
        &["webhook", "list", "--json"],
        &["status"],
        &["status", "--json"],
    ] {
        assert_kept(secret, &format!("{args:?}"), &w.run(args).success());
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_error_shows_any_part_of_a_secret(
        secret in "[A-Z][A-Za-z0-9+/=_.~!$%@:?#-]{6,18}[0-9]"
    ) {
        check(&secret);
    }
}

#[test]
fn the_reported_cases_show_nothing_of_their_secret() {
    check("Pa55+wOrd");
    check("PW9");
}

/// Each key that may hold a secret, with a well-formed TOML value of its
/// own carrying `secret` (percent-encoded where it sits in a URL).
fn secret_keys(secret: &str) -> Vec<(&'static str, String)> {
    let e = encoded(secret);
    vec![
        (
            "rate-limit-store",
            format!("\"redis://:{e}@127.0.0.1:1/0\""),
        ),
        ("upstream", format!("\"https://u:{e}@example.org/feed\"")),
        ("upstream-header", format!("[\"X-Key: {secret}\"]")),
        ("public-base-url", format!("\"https://u:{e}@example.org/\"")),
    ]
}

/// Config files that break `key` (whose good value is `value`, holding
/// `secret`) in each kind of way: an unterminated string, a wrong type, a
/// duplicate key, an unknown key beside it (on the next line and on the
/// same one).
fn broken_files(key: &str, value: &str, secret: &str) -> Vec<(&'static str, String)> {
    let unterminated = match value.strip_prefix('[') {
        Some(list) => format!(
            "{key} = [{}\n",
            list.trim_end_matches(']').trim_end_matches('"')
        ),
        None => format!("{key} = {}\n", value.trim_end_matches('"')),
    };
    let wrong_type = match value.strip_prefix('[') {
        Some(list) => format!("{key} = {}\n", list.trim_end_matches(']')),
        None => format!("{key} = [{value}]\n"),
    };
    vec![
        (
            "an unterminated string",
            format!("keep = 3\n{unterminated}"),
        ),
        ("a wrong type", wrong_type),
        (
            "a duplicate key",
            format!("{key} = {value}\n{key} = {}\n", value.replace(secret, "x")),
        ),
        (
            "an unknown key on the next line",
            format!("{key} = {value}\nlisen = \"x\"\n"),
        ),
        (
            "an unknown key on the same line",
            format!("{key} = {value} lisen = \"x\"\n"),
        ),
    ]
}

/// Issue 50, item 3: a parse or type error of the config file on a line
/// that holds a secret names the key, the file, the line and the column,
/// and shows nothing of the secret (the TOML parser's message quoted the
/// line whole, password included), in `status`, in `serve --check` and in
/// a running server's reload; its line breaks are not `\u000a`. A secret
/// given as a flag's value that starts with `-` is not quoted either.
fn check_files(secret: &str) {
    let w = World::new();
    w.seed_bundled();
    let config = w.path("config.toml");
    std::fs::write(&config, "").unwrap();
    let mut cmd = w.cmd();
    cmd.arg("--config").arg(&config);
    let s = crate::util::server::Server::start_with(cmd, &["--flood-guard", "off"]);
    let mut refusals = 0;
    for (key, value) in secret_keys(secret) {
        for (kind, text) in broken_files(key, &value, secret) {
            let what = format!("{key} with {kind}");
            std::fs::write(&config, &text).unwrap();
            let path = config.to_str().unwrap();
            for args in [
                &["--config", path, "status"][..],
                &[
                    "--config",
                    path,
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--check",
                ],
            ] {
                let run = w.run_refused(args);
                assert_eq!(run.code, 64, "{what}: {args:?}\n{}", run.stderr);
                assert_kept(secret, &format!("{what}: {args:?}"), &run);
                let said = run.stderr.lines().find(|l| l.starts_with("resetctl: "));
                let said = said.unwrap_or_else(|| panic!("{what}: no exit message"));
                assert!(
                    said.starts_with(&format!("resetctl: config file {path}: line "))
                        && !said.contains("\\u000a"),
                    "{what}: {said}"
                );
            }
            // A running server's reload refuses it, in one log line.
            refusals += 1;
            let pid = s.child.id().to_string();
            assert!(std::process::Command::new("kill")
                .args(["-HUP", &pid])
                .status()
                .unwrap()
                .success());
            crate::util::wait_until(std::time::Duration::from_secs(10), "the refusal", || {
                s.log_text().matches("reload refused").count() == refusals
            });
            let log = Run {
                code: 0,
                stdout: String::new(),
                stderr: s.log_text(),
            };
            assert_kept(secret, &format!("{what}: the reload's log"), &log);
        }
    }
    // A flag's value that starts with `-` is the value, refused unquoted
    // (the header's name has a space, so no secret makes it a good one).
    let dashed = format!("-{secret}");
    let dashed_header = format!("-Bad Name: {secret}");
    for args in [
        &["serve", "--check", "--rate-limit-store", &dashed][..],
        &["serve", "--check", "--public-base-url", &dashed],
        &["sync", "--check", "--upstream", &dashed],
        &[
            "sync",
            "--check",
            "--upstream",
            "http://127.0.0.1:1/",
            "--upstream-header",
            &dashed_header,
        ],
    ] {
        let run = w.run_refused(args);
        assert_eq!(run.code, 64, "{args:?}\n{}", run.stderr);
        assert_kept(secret, &format!("{args:?}"), &run);
        // Taken as the value, not read as flags (clap quotes a flag it
        // does not know).
        assert!(
            !run.stderr.contains("unexpected argument"),
            "{args:?}: the value was read as flags\n{}",
            run.stderr
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_config_file_error_shows_any_part_of_a_secret(
        secret in "[A-Z][A-Za-z0-9+/=_.~!$%@:?#-]{6,18}[0-9]"
    ) {
        check_files(&secret);
    }
}

#[test]
fn the_reported_config_file_cases_show_nothing_of_their_secret() {
    check_files("s3cretPW9");
}
