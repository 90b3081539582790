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
mod logging;
pub mod man;
mod output;
mod settings;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

pub use exit::{CliError, Code};

/// Parses `argv`, runs the command and returns its exit code.
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match args::Cli::try_parse_from(argv) {
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
