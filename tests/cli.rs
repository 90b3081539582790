//! CLI conventions: exit codes, settings precedence, help, completions and
//! man pages that match the clap definitions.

use crate::util::{repo_root, World};

#[test]
fn usage_errors_exit_64_and_help_exits_0() {
    let w = World::new();
    let bad = w.run(&["frobnicate"]);
    assert_eq!(bad.code, 64);
    assert!(
        bad.stderr.contains("unrecognized subcommand 'frobnicate'"),
        "{}",
        bad.stderr
    );
    let no_offset = w.run(&["--now", "2026-11-20 10:00", "status"]).code(64);
    assert!(
        no_offset
            .stderr
            .contains("\"2026-11-20 10:00\" has no UTC offset"),
        "{}",
        no_offset.stderr
    );
    let help = w.run(&["--help"]).success();
    assert!(
        help.stdout.contains("Examples:") && help.stdout.contains("Exit codes:"),
        "{}",
        help.stdout
    );
    assert!(w
        .run(&["--version"])
        .success()
        .stdout
        .starts_with("resetctl "));
}

/// The codes an "Exit codes:" text lists: the number that starts each of
/// its comma-separated items (commas inside parentheses belong to an item).
fn listed_codes(text: &str) -> Vec<u8> {
    let mut items = vec![String::new()];
    let mut depth = 0;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        items.last_mut().unwrap().push(c);
    }
    items
        .iter()
        .filter_map(|item| item.split_whitespace().next()?.parse().ok())
        .collect()
}

/// The paragraph of `text` that starts with "Exit codes:", without it.
fn exit_codes_paragraph(text: &str) -> String {
    let at = text
        .find("Exit codes:")
        .expect("an \"Exit codes:\" paragraph");
    let rest = &text[at + "Exit codes:".len()..];
    rest.split("\n\n").next().unwrap().replace('\n', " ")
}

/// `--help`'s table of exit codes is made from cli/src/exit.rs (one line a
/// code); the manual lists exactly those codes, and `sync --help` none
/// other.
#[test]
fn every_exit_code_told_is_one_of_the_table() {
    let w = World::new();
    let help = w.run(&["--help"]).success().stdout;
    let table: Vec<u8> = help
        .split("Exit codes:\n")
        .nth(1)
        .expect("--help has a table of exit codes")
        .lines()
        .map_while(|l| {
            l.strip_prefix("  ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(table, [0, 1, 64, 65, 66, 69, 71, 74, 75], "{help}");
    let manual = std::fs::read_to_string(repo_root().join("docs/manual/configuration.md")).unwrap();
    let mut told = listed_codes(&exit_codes_paragraph(&manual));
    told.sort_unstable();
    assert_eq!(told, table, "docs/manual/configuration.md's exit codes");
    let sync = w.run(&["sync", "--help"]).success().stdout;
    let told = listed_codes(&exit_codes_paragraph(&sync));
    assert!(told.len() >= 4, "sync --help: {told:?}");
    for code in told {
        assert!(
            table.contains(&code),
            "sync --help tells of exit code {code}"
        );
    }
}

#[test]
fn flags_beat_env_beats_config_file() {
    let w = World::new();
    let from_file = w.path("from-file");
    let from_env = w.path("from-env");
    let from_flag = w.path("from-flag");
    let config = w.path("config.toml");
    std::fs::write(
        &config,
        format!("data-dir = {:?}\n", from_file.to_str().unwrap()),
    )
    .unwrap();
    let status_dir = |cmd: &mut std::process::Command| -> String {
        let out = crate::util::Run::from(cmd.output().unwrap());
        out.json()["dataDir"].as_str().unwrap().to_owned()
    };
    // `World::cmd` passes --data-dir; build plain commands here instead.
    let base = || {
        let mut c = std::process::Command::new(crate::util::bin());
        c.env_clear()
            .env("HOME", w.path("home"))
            .env("XDG_CONFIG_HOME", w.path("home/.config"));
        c
    };
    let file_only =
        status_dir(base().args(["--config", config.to_str().unwrap(), "status", "--json"]));
    assert_eq!(file_only, from_file.to_str().unwrap());
    let env = status_dir(base().env("RESETCTL_DATA_DIR", &from_env).args([
        "--config",
        config.to_str().unwrap(),
        "status",
        "--json",
    ]));
    assert_eq!(env, from_env.to_str().unwrap());
    let flag = status_dir(base().env("RESETCTL_DATA_DIR", &from_env).args([
        "--config",
        config.to_str().unwrap(),
        "status",
        "--json",
        "--data-dir",
        from_flag.to_str().unwrap(),
    ]));
    assert_eq!(flag, from_flag.to_str().unwrap());
    // The platform default config file is read when present.
    std::fs::create_dir_all(w.path("home/.config/resetctl")).unwrap();
    std::fs::copy(&config, w.path("home/.config/resetctl/config.toml")).unwrap();
    assert_eq!(
        status_dir(base().args(["status", "--json"])),
        from_file.to_str().unwrap()
    );
    // (Without one, the system-wide file is read, then the platform data
    // dir is the last resort: system_config::, where /etc is the test's.)
}

#[test]
fn a_bad_config_file_names_the_key() {
    let w = World::new();
    let config = w.path("config.toml");
    std::fs::write(&config, "data-dri = \"/tmp/x\"\n").unwrap();
    let run = w
        .run(&["--config", config.to_str().unwrap(), "status"])
        .code(64);
    assert!(
        run.stderr
            .contains("line 1, column 1: unknown key `data-dri`; did you mean `data-dir`?"),
        "{}",
        run.stderr
    );
    let missing = w
        .run(&["--config", w.path("nope.toml").to_str().unwrap(), "status"])
        .code(64);
    assert!(
        missing.stderr.contains("cannot read config file"),
        "{}",
        missing.stderr
    );
}

/// Every subcommand that reads settings, with what it needs to run.
const EVERY_SUBCOMMAND: &[&[&str]] = &[
    &["seed"],
    &["publish"],
    &["export"],
    &["status"],
    &["snapshots", "list"],
    &["serve"],
    &[
        "sync",
        "--once",
        "--upstream",
        "http://127.0.0.1:9/doc.json",
    ],
    &["convert", "-"],
    &["record", "list"],
    &["record", "log"],
    &["mark-checked"],
    &["webhook", "list"],
    &["webhook", "deliver", "--once"],
];

#[test]
fn an_invalid_config_value_is_the_same_error_for_every_subcommand() {
    let w = World::new();
    w.seed_bundled();
    // One bad value per owner: serve's watch mode, the quota (serve and
    // status), the stream limits, sync's interval, a webhook's timeout.
    let cases = [
        ("watch = \"bogus\"", "watch = \"bogus\" is not auto or poll"),
        ("rate-limit = \"not-a-rate\"", "rate-limit"),
        (
            "stream-max = 0",
            "stream-max-per-client and stream-max must be at least 1",
        ),
        (
            "upstream = \"http://127.0.0.1:9/doc.json\"\ninterval-minutes = 1",
            "--interval-minutes must be at least 5",
        ),
        ("webhook-timeout = 0", "webhook-timeout must be"),
    ];
    for (text, needle) in cases {
        let config = w.path("config.toml");
        std::fs::write(&config, format!("{text}\n")).unwrap();
        let mut first: Option<String> = None;
        for subcommand in EVERY_SUBCOMMAND {
            let mut args = vec!["--config", config.to_str().unwrap()];
            args.extend_from_slice(subcommand);
            let run = w.run_refused(&args);
            assert_eq!(run.code, 64, "{text}: {subcommand:?}: {}", run.stderr);
            assert!(
                run.stderr.contains(needle),
                "{text}: {subcommand:?}: {}",
                run.stderr
            );
            // The same words whichever subcommand reads the file.
            match &first {
                None => first = Some(run.stderr.clone()),
                Some(first) => assert_eq!(&run.stderr, first, "{text}: {subcommand:?}"),
            }
        }
    }
    // Nothing ran: the data dir is as it was.
    assert_eq!(
        w.run(&["status", "--json"]).json()["snapshot"]["sequence"],
        1
    );
}

#[test]
fn completions_are_printed_for_each_shell() {
    let w = World::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = w.run(&["completions", shell]).success().stdout;
        assert!(
            out.contains("resetctl") && out.contains("snapshots"),
            "{shell}"
        );
    }
}

#[test]
fn committed_man_pages_match_the_clap_definitions() {
    let dir = repo_root().join("man");
    let mut stale = Vec::new();
    let pages = resetctl_cli::man::render_man_pages();
    for (name, bytes) in &pages {
        if std::fs::read(dir.join(name)).ok().as_deref() != Some(bytes.as_slice()) {
            stale.push(name.clone());
        }
    }
    let committed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".1"))
        .collect();
    for name in &committed {
        if !pages.iter().any(|(n, _)| n == name) {
            stale.push(format!("{name} (no longer generated)"));
        }
    }
    assert!(
        stale.is_empty(),
        "man pages out of date: {stale:?}; run `make man` and commit"
    );
    assert!(pages
        .iter()
        .any(|(n, _)| n == "resetctl-snapshots-rollback.1"));
}

#[test]
fn the_manuals_list_of_every_setting_is_made_from_the_declarations() {
    let path = repo_root().join(resetctl_cli::settings_reference::PATH);
    let page = resetctl_cli::settings_reference::render_settings_reference();
    assert!(
        std::fs::read_to_string(&path).ok().as_deref() == Some(page.as_str()),
        "{} is out of date; run `make man` and commit",
        path.display()
    );
    // Every key, with its variable, its flag and its whole text.
    for key in resetctl::config::FileConfig::KEYS {
        let kebab = key.replace('_', "-");
        let variable = resetctl::config::env_variable(key);
        assert!(
            page.contains(&format!("\n### `{kebab}`\n\n`--{kebab}"))
                && page.contains(&format!("`{variable}`")),
            "{kebab} is not listed with its flag and {variable}"
        );
    }
    assert!(page.contains("Default: 20/3600"), "{page}");
}

/// Every command, with its `resetctl …` words.
fn every_command() -> Vec<(Vec<String>, clap::Command)> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, words: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
        out.push((words.clone(), cmd.clone()));
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut words = words.clone();
            words.push(sub.get_name().to_owned());
            walk(sub, words, out);
        }
    }
    let mut root = resetctl_cli::help::with_settings(resetctl_cli::args::Cli::command());
    root.build();
    let mut out = Vec::new();
    walk(&root, Vec::new(), &mut out);
    out
}

#[test]
fn help_examples_are_never_broken_across_lines() {
    let w = World::new();
    let mut checked = 0;
    for (words, cmd) in every_command() {
        let Some(examples) = cmd.get_after_help().map(|s| s.to_string()) else {
            continue;
        };
        let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
        args.push("--help");
        // An 80-column terminal: clap wraps its help to COLUMNS when not on a terminal.
        let help = w.cmd().args(&args).env("COLUMNS", "80").output().unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        for line in examples.lines() {
            assert!(
                line.chars().count() <= 80,
                "`resetctl {}` example line over 80 columns: {line:?}",
                words.join(" ")
            );
            assert!(
                help.lines().any(|l| l == line),
                "`resetctl {} --help` broke the line {line:?}:\n{help}",
                words.join(" ")
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} example lines found");
}

#[test]
fn man_pages_name_each_variable_and_keep_examples_unfilled() {
    let pages = resetctl_cli::man::render_man_pages();
    for (words, cmd) in every_command() {
        if cmd.is_hide_set() {
            continue;
        }
        let name = std::iter::once("resetctl".to_owned())
            .chain(words.iter().cloned())
            .collect::<Vec<_>>()
            .join("-");
        let Some((_, page)) = pages.iter().find(|(n, _)| *n == format!("{name}.1")) else {
            continue;
        };
        let page = String::from_utf8_lossy(page).replace("\\-", "-");
        // Hidden arguments are the moved ones: they only warn, and the
        // page names their new home instead.
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(env) = crate::util::variable_of(arg) {
                assert!(page.contains(&*env), "{name}.1 does not name {env}");
            }
        }
        if let Some(extra) = page.split(".SH EXTRA\n").nth(1) {
            assert!(extra.starts_with(".nf\n"), "{name}.1: examples are filled");
            let section = extra.split("\n.SH ").next().unwrap();
            assert!(section.ends_with(".fi"), "{name}.1: no-fill is not ended");
        }
    }
}

/// The options of `-h` for `words`, each with the lines it takes.
fn short_help_entries(help: &str) -> Vec<(String, usize)> {
    let mut entries: Vec<(String, usize)> = Vec::new();
    for line in help.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.starts_with('-') && indent <= 6 {
            entries.push((trimmed.split_whitespace().next().unwrap().to_owned(), 1));
        } else if indent > 6 && !trimmed.is_empty() {
            if let Some(last) = entries.last_mut() {
                last.1 += 1;
            }
        }
    }
    entries
}

/// The options of `-h`, each as one line of text (its wrapped lines joined).
fn short_help_texts(help: &str) -> Vec<(String, usize)> {
    let mut entries: Vec<(String, usize)> = Vec::new();
    for line in help.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.starts_with('-') && indent <= 6 {
            entries.push((trimmed.to_owned(), 1));
        } else if indent > 6 && !trimmed.is_empty() {
            if let Some(last) = entries.last_mut() {
                last.0.push(' ');
                last.0.push_str(trimmed);
                last.1 += 1;
            }
        }
    }
    entries
}

#[test]
fn short_help_fits_a_screen_grouped_and_long_help_keeps_the_detail() {
    let w = World::new();
    for (words, cmd) in every_command() {
        if cmd.is_hide_set() {
            continue;
        }
        let run = |flag: &str| {
            let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
            args.push(flag);
            let out = w.cmd().args(&args).env("COLUMNS", "100").output().unwrap();
            assert!(out.status.success(), "resetctl {args:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let (short, long) = (run("-h"), run("--help"));
        // The options, without the examples after them.
        let options = match cmd.get_after_help().map(|h| h.to_string()) {
            Some(examples) => short
                .split(examples.lines().next().unwrap_or_default())
                .next()
                .unwrap_or_default()
                .to_owned(),
            None => short.clone(),
        };
        // The long help's words, however the terminal wrapped them.
        let long_words = long.split_whitespace().collect::<Vec<_>>().join(" ");
        let name = format!("resetctl {}", words.join(" "));
        // One screen (issue 39, item 16: it was 80 lines for serve).
        assert!(
            short.lines().count() <= 60,
            "`{name} -h` is {} lines:\n{short}",
            short.lines().count()
        );
        for (option, lines) in short_help_entries(&short) {
            assert!(
                lines <= 2,
                "`{name} -h`: {option} takes {lines} lines:\n{short}"
            );
        }
        // The global options are one line of `-h`, whole in `--help`.
        assert!(
            !short.contains("\nGlobal options:\n") && !short.contains("--lock-timeout <SECONDS>"),
            "`{name} -h` lists the global options:\n{short}"
        );
        assert_eq!(
            short
                .matches("Global options, before or after any command")
                .count(),
            1,
            "`{name} -h`:\n{short}"
        );
        assert!(
            long.contains("\nGlobal options:\n") && long.contains("--data-dir <DIR>"),
            "`{name} --help`:\n{long}"
        );
        // Every option that takes a value shows its default, but for what
        // the usage line names (required, alone or as one of a group).
        let usage = short
            .lines()
            .find(|l| l.starts_with("Usage:"))
            .unwrap_or_default();
        for (entry, _) in short_help_texts(&short) {
            let option = entry.split("  ").next().unwrap_or_default();
            let long_name = option
                .split([' ', ','])
                .find(|w| w.starts_with("--"))
                .unwrap_or_default();
            if option.contains('<') && !usage.contains(long_name) {
                assert!(
                    entry.contains("[default: "),
                    "`{name} -h`: no default shown: {entry}"
                );
            }
        }
        // `-h` names no variable; `--help` names every one, with the whole text.
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(env) = crate::util::variable_of(arg) {
                assert!(!options.contains(&*env), "`{name} -h` names {env}");
                assert!(
                    long_words.contains(&format!("[env: {env}]")),
                    "`{name} --help` lacks {env}"
                );
            }
        }
        assert!(
            long.len() > short.len(),
            "`{name} --help` is no longer than -h"
        );
    }
    let serve = w.cmd().args(["serve", "-h"]).output().unwrap();
    let serve = String::from_utf8(serve.stdout).unwrap();
    for heading in ["Serving:", "Connections:", "Record stream:", "Quota:"] {
        assert!(
            serve.lines().any(|l| l == heading),
            "`serve -h` lacks {heading}\n{serve}"
        );
    }
}

#[test]
fn man_pages_show_value_placeholders_and_refer_only_to_pages_that_exist() {
    let pages = resetctl_cli::man::render_man_pages();
    let names: Vec<String> = pages.iter().map(|(n, _)| n.replace(".1", "")).collect();
    for (name, page) in &pages {
        let page = String::from_utf8_lossy(page).replace("\\-", "-");
        let mut rest = page.as_str();
        while let Some(at) = rest.find("resetctl-") {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(tail.len());
            if tail[end..].starts_with("(1)") {
                let target = &tail[..end];
                assert!(
                    names.iter().any(|n| n == target),
                    "{name} refers to {target}(1), which does not exist"
                );
            }
            rest = &tail[end..];
        }
    }
    let serve = pages
        .iter()
        .find(|(n, _)| n == "resetctl-serve.1")
        .map(|(_, p)| String::from_utf8_lossy(p).into_owned())
        .unwrap();
    let synopsis = serve
        .split(".SH SYNOPSIS\n")
        .nth(1)
        .and_then(|s| s.lines().next())
        .unwrap();
    for option in [
        "[\\fB\\-\\-listen\\fR \\fIADDR\\fR]",
        "[\\fB\\-\\-rate\\-limit\\fR \\fIN/SECONDS\\fR]",
        "[\\fB\\-\\-data\\-dir\\fR \\fIDIR\\fR]",
        "[\\fB\\-\\-no\\-site\\fR]",
    ] {
        assert!(synopsis.contains(option), "no {option} in {synopsis}");
    }
}

#[test]
fn every_command_that_reads_a_data_dir_names_one_that_does_not_exist() {
    let w = World::new();
    let missing = format!(
        "resetctl: the data dir {} does not exist: is the path right? (`--data-dir`, `RESETCTL_DATA_DIR` or `data-dir` in the config file){}\n",
        w.data_dir().display(),
        w.machine_hint().unwrap_or_default()
    );
    // What reads a data dir, or changes what is already in one: a mistyped
    // path is named, never answered "none" (or made, by taking its lock).
    let readers: &[&[&str]] = &[
        &["export"],
        &["snapshots", "list"],
        &["snapshots", "show", "1"],
        &["snapshots", "prune", "--keep", "3"],
        &["snapshots", "rollback", "1"],
        &["record", "list"],
        &["record", "show", "x"],
        &["record", "log"],
        &["record", "link", "x", "y", "--actor", "a"],
        &["record", "unlink", "x", "y", "--actor", "a"],
        &["record", "dismiss", "x", "--actor", "a"],
        &["record", "undo", "1", "--actor", "a"],
        &["record", "edit", "x", "--text", "t", "--actor", "a"],
        &["webhook", "list"],
        &["webhook", "show", "x"],
        &["webhook", "remove", "x"],
        &["webhook", "disable", "x"],
        &["webhook", "enable", "x"],
        &["webhook", "test", "x"],
        &["webhook", "set", "x", "--webhook-timeout", "5"],
        &["webhook", "deliveries", "x"],
        &["webhook", "deliver", "--once"],
    ];
    for args in readers {
        let run = w.run(args);
        assert_eq!(
            (run.code, run.stderr.as_str(), run.stdout.as_str()),
            (69, missing.as_str(), ""),
            "resetctl {}",
            args.join(" ")
        );
        assert!(
            !w.data_dir().exists(),
            "resetctl {} made the data dir",
            args.join(" ")
        );
    }
    // `status` reports it too, after what it can say.
    let status = w.run(&["status"]).code(69);
    assert!(status.stderr.ends_with(&missing), "{}", status.stderr);
    // What makes an instance makes its data dir.
    w.run(&["record", "list"]).code(69);
    w.seed_bundled();
    assert!(w
        .run(&["record", "list"])
        .success()
        .stdout
        .contains("seed:"));
}
