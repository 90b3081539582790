//! One function per subcommand; `dispatch` picks it.

mod data;
mod record;
mod serve;
mod snapshots;
mod sync;
mod webhook;

use clap::CommandFactory;

use crate::args::{Cli, Command};
use crate::exit::{CliError, Code};
use crate::output::print;
use crate::settings::Settings;

/// Runs the parsed command.
pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "resetctl", &mut out);
            print(&String::from_utf8_lossy(&out))
        }
        Command::Man { dir } => write_man_pages(&dir),
        command => {
            let settings = Settings::resolve(&cli.global)?;
            check_every_setting(&settings)?;
            crate::logging::init(settings.log.as_deref(), settings.log_format);
            match command {
                Command::Seed { file } => data::seed(&settings, file.as_deref()),
                Command::Publish => data::publish(&settings),
                Command::Export { output } => data::export(&settings, output.as_deref()),
                Command::Status { json, limits } => data::status(&settings, json, &limits),
                Command::Snapshots(sub) => snapshots::run(&settings, sub),
                Command::Serve(args) => serve::run(&settings, &args),
                Command::Sync(args) => sync::run(&settings, &args),
                Command::Convert { file } => data::convert(&settings, &file),
                Command::Record(sub) => record::run(&settings, sub),
                Command::MarkChecked { at, actor } => record::mark_checked(&settings, at, actor),
                Command::Webhook(sub) => webhook::run(&settings, sub),
                Command::Completions { .. } | Command::Man { .. } => unreachable!("handled above"),
            }
        }
    }
}

/// Resolves every command's settings from the environment and the config
/// file alone (no command-line flags), with the very functions the commands
/// use: an invalid value is the same error (exit 64) whatever the
/// subcommand, and it is found before anything runs or binds. A flag given
/// to one command does not excuse a bad value in the file.
fn check_every_setting(settings: &Settings) -> Result<(), CliError> {
    serve::resolve(settings, &from_environment::<crate::args::ServeArgs>(&[])?)?;
    let sync = from_environment::<crate::args::SyncArgs>(&["--once"])?;
    // Without an upstream, nothing of sync's is set: nothing to check.
    if sync.upstream.is_some() || settings.file.upstream.is_some() {
        sync::resolve(settings, &sync)?;
    }
    webhook::endpoint_delivery(
        settings,
        &from_environment::<crate::args::DeliveryArgs>(&[])?,
    )?;
    Ok(())
}

/// A command's arguments as clap builds them from `argv` (the minimum a
/// command requires) and the environment.
fn from_environment<A: clap::Args + clap::FromArgMatches>(argv: &[&str]) -> Result<A, CliError> {
    let invalid =
        |e: clap::Error| CliError::new(Code::Usage, e.render().to_string().trim().to_owned());
    let matches = A::augment_args(clap::Command::new("resetctl"))
        .try_get_matches_from(std::iter::once("resetctl").chain(argv.iter().copied()))
        .map_err(invalid)?;
    A::from_arg_matches(&matches).map_err(invalid)
}

fn write_man_pages(dir: &std::path::Path) -> Result<(), CliError> {
    let io = |e: std::io::Error| {
        CliError::new(
            Code::IoErr,
            format!("cannot write man pages to {}: {e}", dir.display()),
        )
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    for (name, bytes) in crate::man::render_man_pages() {
        resetctl::durable::write_atomic(&dir.join(&name), &bytes)
            .map_err(|e| CliError::new(Code::IoErr, e.to_string()))?;
    }
    Ok(())
}
