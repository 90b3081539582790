//! One function per subcommand; `dispatch` picks it.

mod data;
mod record;
mod reload;
mod serve;
mod snapshots;
mod sync;
mod webhook;

use crate::args::{Cli, Command, RecordCommand, SnapshotsCommand, WebhookCommand};
use crate::exit::CliError;
use crate::output::print;
use crate::settings::Settings;

/// Runs the parsed command.
pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut crate::help::command(), "resetctl", &mut out);
            print(&String::from_utf8_lossy(&out))
        }
        Command::Man { dir, settings } => {
            write_man_pages(&dir)?;
            match settings {
                Some(path) => resetctl::durable::write_atomic(
                    &path,
                    crate::settings_reference::render_settings_reference().as_bytes(),
                )
                .map_err(|e| CliError::io(e.to_string())),
                None => Ok(()),
            }
        }
        _ => {
            // Every setting of every subcommand, validated before anything runs.
            let settings = Settings::resolve(&cli)?;
            crate::logging::init(&settings.log, settings.log_format);
            if needs_existing_data_dir(&cli.command) {
                data::require_data_dir(&settings)?;
            }
            // A data dir whose directories are links is no command's.
            resetctl::data_dir::DataDir::of(&settings.data_dir).refuse_links()?;
            match cli.command {
                Command::Seed { file } => data::seed(&settings, file.as_deref()),
                Command::Publish => data::publish(&settings),
                Command::Restore { ref backup, .. } => record::restore(&settings, backup),
                Command::Export { output } => data::export(&settings, output.as_deref()),
                Command::Status { json, .. } => data::status(&settings, json),
                Command::Snapshots(sub) => snapshots::run(&settings, sub),
                Command::Serve(ref args) => serve::run(&settings, args, Settings::reader(&cli)),
                Command::Sync(args) => sync::run(&settings, &args),
                Command::Convert { file } => data::convert(&settings, &file),
                Command::Record(sub) => record::run(&settings, sub),
                Command::MarkChecked { at, .. } => record::mark_checked(&settings, at),
                Command::Webhook(sub) => webhook::run(&settings, sub),
                Command::Completions { .. } | Command::Man { .. } => unreachable!("handled above"),
            }
        }
    }
}

/// Whether `command` reads a data dir, or changes what is already in one:
/// on a data dir that does not exist it names it (a mistyped path, exit
/// 69) instead of answering "none" or making the dir. The commands that
/// make an instance (`seed`, `sync`, a first `record schedule`,
/// `publish`, `mark-checked`, `webhook add`) make it; `serve` makes it to
/// watch for the first snapshot and `status` reports it, both naming it.
fn needs_existing_data_dir(command: &Command) -> bool {
    match command {
        Command::Export { .. } | Command::Restore { .. } => true,
        Command::Snapshots(sub) => match sub {
            SnapshotsCommand::List { .. }
            | SnapshotsCommand::Show { .. }
            | SnapshotsCommand::Prune { .. }
            | SnapshotsCommand::Rollback { .. } => true,
        },
        Command::Record(sub) => match sub {
            RecordCommand::Schedule { .. }
            | RecordCommand::Completion { .. }
            | RecordCommand::Complete { .. } => false,
            RecordCommand::Link { .. }
            | RecordCommand::Unlink { .. }
            | RecordCommand::Dismiss { .. }
            | RecordCommand::Undo { .. }
            | RecordCommand::Move { .. }
            | RecordCommand::Edit { .. }
            | RecordCommand::List { .. }
            | RecordCommand::Show { .. }
            | RecordCommand::Log { .. } => true,
        },
        Command::Webhook(sub) => match sub {
            WebhookCommand::Add { .. } => false,
            WebhookCommand::List { .. }
            | WebhookCommand::Show { .. }
            | WebhookCommand::Remove { .. }
            | WebhookCommand::Disable { .. }
            | WebhookCommand::Enable { .. }
            | WebhookCommand::Test { .. }
            | WebhookCommand::Set(_)
            | WebhookCommand::Deliveries { .. }
            | WebhookCommand::Deliver { .. } => true,
        },
        Command::Seed { .. }
        | Command::Publish
        | Command::Status { .. }
        | Command::Serve(_)
        | Command::Sync(_)
        | Command::Convert { .. }
        | Command::MarkChecked { .. }
        | Command::Completions { .. }
        | Command::Man { .. } => false,
    }
}

fn write_man_pages(dir: &std::path::Path) -> Result<(), CliError> {
    let io = |e: std::io::Error| {
        CliError::io(format!("cannot write man pages to {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    for (name, bytes) in crate::man::render_man_pages() {
        resetctl::durable::write_atomic(&dir.join(&name), &bytes)
            .map_err(|e| CliError::io(e.to_string()))?;
    }
    Ok(())
}
