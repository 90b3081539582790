//! Help for people: `-h` fits a screen, `--help` and the man pages keep
//! the detail; and the options that are settings, made from the table of
//! settings (`resetctl::config`'s `config/table.rs`, [`with_settings`]).
//!
//! Every option's help opens with a sentence that says what the option
//! is; one that takes a value says its default. A setting's option gets
//! its default from its row (`Default: X`, `Setting::help`); any other
//! option, or a setting whose default is a rule, closes its text with
//! `Default:` in words (`tests/command_line.rs` holds every `-h` to it).
//! `-h` shows that first sentence and the default, `--help` the whole
//! text. The global options are one line of every `-h`, and whole in
//! `--help`. Options are grouped under headings (a setting's from its
//! row; the others' declared on their structs in `args.rs`), so a
//! command's own options are not interleaved with the global ones.

use clap::CommandFactory;
use resetctl::config::{env_variable, kebab, FileConfig, Kind, Mark, Setting};

use crate::args::Cli;

/// The command line as it is documented in the man pages: every option
/// with its whole text.
pub fn documented() -> clap::Command {
    summarized(with_settings(Cli::command()))
}

/// The command line as it is parsed, helped (`-h`, `--help`) and completed.
pub fn command() -> clap::Command {
    let cli = with_settings(Cli::command());
    let globals: Vec<String> = cli
        .get_arguments()
        .filter(|a| a.is_global_set())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let line = format!(
        "Global options, before or after any command: {}; see `resetctl --help`.",
        globals.join(", ")
    );
    with_globals_summarised(summarized(cli), &line)
}

/// `cmd` with every row of the table of settings
/// ([`resetctl::config::FileConfig::SETTINGS`]) as an option of each
/// command the row names (`global`: the top command, for every command),
/// in the table's order, each made by `setting_arg`.
pub fn with_settings(mut cmd: clap::Command) -> clap::Command {
    for row in FileConfig::SETTINGS {
        for &path in row.commands {
            let arg = setting_arg(row);
            cmd = match path {
                "global" => cmd.arg(arg.global(true)),
                path => with_arg_at(cmd, &path.split(' ').collect::<Vec<_>>(), arg),
            };
        }
    }
    cmd
}

/// `cmd` with `arg` added to its subcommand at `path` (`["record", "move"]`).
fn with_arg_at(cmd: clap::Command, path: &[&str], arg: clap::Arg) -> clap::Command {
    match path {
        [] => cmd.arg(arg),
        [first, rest @ ..] => {
            assert!(
                cmd.find_subcommand(first).is_some(),
                "the table of settings names a command there is not: {first}"
            );
            cmd.mut_subcommand(*first, |sub| with_arg_at(sub, rest, arg))
        }
    }
}

/// The option of a row: its long flag (the key in kebab case), its help
/// (`-h`: its first sentence; `--help`: all of it, with its default and
/// its variable), heading and value name, and what it takes by its kind: a
/// switch, a list (repeatable, split at commas unless [`Mark::Unsplit`]),
/// a choice, or one value checked by its type. A value that may hold a
/// secret ([`Mark::Secret`]) is taken whole, even when it starts with `-`.
/// clap is not told the variable: the environment layer reads it
/// (`FileConfig::from_env`), and names it when its value is wrong.
fn setting_arg(row: &Setting) -> clap::Arg {
    let full = row.help();
    let mut arg = clap::Arg::new(row.key)
        .long(kebab(row.key))
        .help(summary(&full))
        .long_help(with_variable(&full, &env_variable(row.key)));
    if let Some(heading) = row.heading {
        arg = arg.help_heading(heading);
    }
    if let Some(name) = row.value_name {
        arg = arg.value_name(name);
    }
    if row.has(Mark::Secret) {
        arg = arg.allow_hyphen_values(true);
    }
    if !row.choices.is_empty() {
        return arg
            .value_parser(clap::builder::PossibleValuesParser::new(row.choices))
            .hide_possible_values(true);
    }
    match row.kind {
        Kind::Switch => arg.action(clap::ArgAction::SetTrue),
        Kind::List if row.has(Mark::Unsplit) => arg.action(clap::ArgAction::Append),
        Kind::List => arg.action(clap::ArgAction::Append).value_delimiter(','),
        Kind::Text => arg,
        Kind::Path => arg.value_parser(clap::value_parser!(std::path::PathBuf)),
        Kind::U8 => arg.value_parser(clap::value_parser!(u8)),
        Kind::U32 => arg.value_parser(clap::value_parser!(u32)),
        Kind::U64 => arg.value_parser(clap::value_parser!(u64)),
        Kind::Usize => arg.value_parser(clap::value_parser!(usize)),
        Kind::Number => arg.value_parser(clap::value_parser!(f64)),
    }
}

/// `cmd` whose `-h` lists the global options once, as `line` after its own
/// text, instead of a section of their own on every command's screen;
/// `--help` (and the man pages) keep them whole.
fn with_globals_summarised(cmd: clap::Command, line: &str) -> clap::Command {
    let after = cmd.get_after_help().map(ToString::to_string);
    let short = match &after {
        Some(text) => format!("{text}\n\n{line}"),
        None => line.to_owned(),
    };
    let cmd = cmd
        .mut_args(|arg| {
            if arg.is_global_set() {
                arg.hide_short_help(true)
            } else {
                arg
            }
        })
        .after_help(short);
    // `--help` keeps the text it had (it lists the global options whole).
    let cmd = match after {
        Some(text) => cmd.after_long_help(text),
        None => cmd,
    };
    cmd.mut_subcommands(|sub| with_globals_summarised(sub, line))
}

/// `cmd` with every option's short help cut to its summary, the whole text
/// (and the option's environment variable, which `-h` leaves out) kept as
/// its long help; the same for every subcommand. (A setting's option has
/// both already: `setting_arg`.)
fn summarized(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        if arg.get_long_help().is_some() {
            return arg;
        }
        let Some(full) = arg.get_help().map(ToString::to_string) else {
            return arg;
        };
        let short = summary(&full);
        match arg.get_env().map(|e| e.to_string_lossy().into_owned()) {
            Some(env) => arg
                .hide_env(true)
                .long_help(with_variable(&full, &env))
                .help(short),
            None if short != full => arg.long_help(full).help(short),
            None => arg,
        }
    })
    .mut_subcommands(summarized)
}

/// An option's whole help with the variable it is read from, as
/// `--help` and the man pages say it (`-h` leaves it out).
fn with_variable(help: &str, variable: &str) -> String {
    format!("{help} [env: {variable}]")
}

/// The first sentence of `help`, shortened at its first parenthesis or
/// semicolon when it is long, with its default (`Default: X`) when that
/// is short enough to keep the line short.
pub fn summary(help: &str) -> String {
    let mut first = first_sentence(help);
    for cut in [" (", "; "] {
        if first.len() > SHORT {
            if let Some(at) = first.find(cut).filter(|&at| at >= 12) {
                first = &first[..at];
            }
        }
    }
    match default_of(help) {
        Some(default) => format!("{first} [default: {}]", short_default(default)),
        None => first.to_owned(),
    }
}

/// A default as `-h` shows it: whole when short, else up to its first
/// clause (`60 (the public feed's maintainers ask…)` → `60`).
fn short_default(default: &str) -> &str {
    let mut shown = default;
    for cut in [" (", "; ", ", "] {
        if shown.len() > 28 {
            if let Some(at) = shown.find(cut) {
                shown = &shown[..at];
            }
        }
    }
    shown
}

/// A summary longer than this is cut at a clause.
const SHORT: usize = 60;

/// Up to the first full stop that ends a sentence (followed by the end, or
/// by a space and anything but a lower-case letter or a digit, so `e.g. x`
/// does not end one), without the stop.
fn first_sentence(help: &str) -> &str {
    let bytes = help.as_bytes();
    for (i, _) in help.match_indices('.') {
        let next = bytes.get(i + 1).copied();
        let after = bytes.get(i + 2).copied();
        let ends = match next {
            None => true,
            Some(b' ' | b'\n') => {
                after.is_some_and(|c| !c.is_ascii_lowercase() && !c.is_ascii_digit())
            }
            _ => false,
        };
        if ends {
            return &help[..i];
        }
    }
    help.trim_end_matches('.')
}

/// The `X` of a `Default: X` sentence.
fn default_of(help: &str) -> Option<&str> {
    let (_, rest) = help.split_once("Default: ")?;
    let end = rest.find(". ").unwrap_or(rest.len());
    Some(rest[..end].trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn a_summary_is_the_first_sentence_and_a_short_default() {
        assert_eq!(
            summary("Data directory (snapshots, history, locks). Default: the platform data dir"),
            "Data directory (snapshots, history, locks) [default: the platform data dir]"
        );
        assert_eq!(
            summary("Seconds to wait for the lock. It is held briefly. Default: 10"),
            "Seconds to wait for the lock [default: 10]"
        );
        assert_eq!(
            summary("Address to listen on: IP:PORT or HOST:PORT (every address the name resolves to is tried)"),
            "Address to listen on: IP:PORT or HOST:PORT"
        );
        assert_eq!(
            summary("Turn it off (e.g. for tests)"),
            "Turn it off (e.g. for tests)"
        );
        assert_eq!(
            summary(
                "Minutes between syncs. Default: 60 (the public feed's maintainers ask for it)."
            ),
            "Minutes between syncs [default: 60]"
        );
    }
}
