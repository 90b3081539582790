//! The `resetctl` command line: clap definitions, settings resolution,
//! output and exit codes. Each command translates its arguments into one
//! call to the `resetctl` library and its result into text and an exit code;
//! no domain decision is made here.

// The server's accept loop is monomorphised here with warp's route tree, one
// nested type whose layout is computed deeper than the default limit.
#![recursion_limit = "256"]
// The limit on a function's length (clippy.toml) is for the code, not
// its unit tests.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod args;
mod commands;
mod exit;
pub mod help;
mod logging;
pub mod man;
mod output;
mod service_manager;
mod settings;
pub mod settings_reference;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::FromArgMatches;

pub use exit::{CliError, Code};

/// The ids of the arguments whose value clap took from the environment,
/// in `matches` and its subcommands' (a flag's variable is also a key's,
/// which the environment layer reads: the flag layer must not claim it).
fn from_env(matches: &clap::ArgMatches) -> Vec<String> {
    let mut ids: Vec<String> = matches
        .ids()
        .filter(|id| {
            matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::EnvVariable)
        })
        .map(|id| id.as_str().to_owned())
        .collect();
    if let Some((_, sub)) = matches.subcommand() {
        ids.extend(from_env(sub));
    }
    ids
}

/// Parses `argv`, runs the command and returns its exit code.
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = help::command()
        .try_get_matches_from(argv)
        .and_then(|matches| {
            let mut cli = args::Cli::from_arg_matches(&matches)?;
            cli.from_env = from_env(&matches);
            Ok(cli)
        });
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) => {
            let code = exit::clap_code(&err);
            let _ = err.print();
            return code.into();
        }
    };
    match commands::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            output::warn(&err.message);
            err.code.into()
        }
    }
}
