//! The `resetctl` command line: clap definitions, settings resolution,
//! output and exit codes. Each command translates its arguments into one
//! call to the `resetctl` library and its result into text and an exit code;
//! no domain decision is made here.

// The server's accept loop is monomorphised here with warp's route tree, one
// nested type whose layout is computed deeper than the default limit.
#![recursion_limit = "256"]

pub mod args;
mod commands;
mod exit;
mod help;
mod logging;
pub mod man;
mod output;
mod settings;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::FromArgMatches;

pub use exit::{CliError, Code};

/// Parses `argv`, runs the command and returns its exit code.
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = help::command()
        .try_get_matches_from(argv)
        .and_then(|matches| args::Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                Code::Usage
            } else {
                Code::Ok
            };
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
