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

/// Parses `argv`, runs the command and returns its exit code.
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = help::command()
        .try_get_matches_from(argv)
        .and_then(|matches| Ok((args::Cli::from_arg_matches(&matches)?, matches)));
    let (mut cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            let code = exit::clap_code(&err);
            let _ = err.print();
            return code.into();
        }
    };
    cli.flags = match settings::flags_layer(&matches) {
        Ok(flags) => flags,
        Err(err) => {
            output::warn(&err.message);
            return err.code.into();
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
