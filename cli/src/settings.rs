//! The command line's part of settings: the flag layer read off the parsed
//! arguments ([`flags_layer`]), the environment and config file read once,
//! and one call to [`resetctl::settings::Settings::build`], which merges
//! and validates every key for every subcommand. What the command line
//! adds is the invocation's clock (`--now`).

use std::ops::Deref;

use resetctl::config::{load_config, FileConfig};
use resetctl::model::Timestamp;
use resetctl::settings::Layers;
use resetctl::snapshot::SnapshotStore;
use resetctl::standalone::PublishSettings;

use clap::parser::ValueSource;
use resetctl::config::Kind;

use crate::args::Cli;
use crate::exit::CliError;

/// The validated settings of this invocation, with its clock.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Every setting, validated.
    pub resolved: resetctl::settings::Settings,
    /// The clock: `--now` or the system time at start.
    pub now: Timestamp,
    /// `--now` as given (a frozen clock for the server), if it was.
    pub now_flag: Option<Timestamp>,
    /// The config file read (`--config`, the user's or the system-wide one), if any.
    pub config_path: Option<std::path::PathBuf>,
}

impl Deref for Settings {
    type Target = resetctl::settings::Settings;
    fn deref(&self) -> &Self::Target {
        &self.resolved
    }
}

impl Settings {
    /// The settings of `cli`: its flags, the process environment and the
    /// config file (`--config`, else the default one when it exists).
    pub fn resolve(cli: &Cli) -> Result<Self, CliError> {
        Self::reader(cli)()
    }

    /// Reads the settings of `cli` as [`Settings::resolve`] does, each
    /// time it is called: the same flags, the environment and the config
    /// file as they are then (`serve` on SIGHUP).
    pub fn reader(cli: &Cli) -> impl Fn() -> Result<Self, CliError> + Send + Sync + 'static {
        let flags = cli.flags.clone();
        let config = cli.global.config.clone();
        let now = cli.global.now;
        move || {
            let loaded = load_config(config.as_deref())?;
            let env = FileConfig::from_env(|name| std::env::var(name).ok())
                .map_err(resetctl::settings::SettingsError::from)?;
            let mut settings =
                Self::build(flags.clone(), now, env, loaded.values, loaded.path.clone())?;
            settings.config_path = loaded.path;
            Ok(settings)
        }
    }

    /// The settings of `cli` over `env` and `file` (tests give a map and a
    /// file's text: `from_parts`).
    #[cfg(test)]
    fn from_layers(
        cli: &Cli,
        env: FileConfig,
        file: FileConfig,
        file_path: Option<std::path::PathBuf>,
    ) -> Result<Self, CliError> {
        Self::build(cli.flags.clone(), cli.global.now, env, file, file_path)
    }

    /// The settings of these layers, with the clock of `--now` (`now`).
    fn build(
        flags: FileConfig,
        now: Option<Timestamp>,
        env: FileConfig,
        file: FileConfig,
        file_path: Option<std::path::PathBuf>,
    ) -> Result<Self, CliError> {
        let layers = Layers {
            flags,
            env,
            file,
            file_path,
        };
        let resolved = resetctl::settings::Settings::build(&layers)?;
        Ok(Self {
            resolved,
            now: now.unwrap_or_else(Timestamp::now),
            now_flag: now,
            config_path: None,
        })
    }

    /// The clock of long-running commands: frozen at `--now` when given, else the system's.
    pub fn clock(&self) -> std::sync::Arc<dyn resetctl::clock::Clock> {
        if let Some(file) = resetctl::testhook::clock_file() {
            return std::sync::Arc::new(resetctl::testhook::FileClock(file));
        }
        match self.now_flag {
            Some(at) => std::sync::Arc::new(resetctl::clock::ManualClock::new(at)),
            None => std::sync::Arc::new(resetctl::clock::SystemClock),
        }
    }

    /// What a delivering process brings (everything else is kept with each endpoint).
    pub fn delivery(&self) -> resetctl::webhook::deliver::DeliverSettings {
        resetctl::webhook::deliver::DeliverSettings {
            clock: self.clock(),
            lock_timeout: self.lock_timeout,
            contact: self.user_agent_contact.clone(),
            tolerance_ms: self.match_tolerance_ms(),
        }
    }

    /// The snapshot store of the data dir.
    pub fn store(&self) -> SnapshotStore {
        SnapshotStore::new(&self.data_dir)
    }

    /// What publishing commands need.
    pub fn publish(&self) -> PublishSettings {
        PublishSettings {
            now: self.now,
            keep: self.keep,
            lock_timeout: self.lock_timeout,
            match_tolerance_ms: self.match_tolerance_ms(),
        }
    }
}

/// Settings from an argument list, an environment and a config file's
/// text, as the binary would build them (for tests of the whole path).
#[cfg(test)]
pub fn from_parts(
    argv: &[&str],
    env: &std::collections::HashMap<String, String>,
    file_text: &str,
) -> Result<Settings, CliError> {
    use clap::FromArgMatches;
    let cli = crate::help::command()
        .try_get_matches_from(std::iter::once("resetctl").chain(argv.iter().copied()))
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)))
        .map_err(|e| CliError::usage(e.to_string()))?;
    let (mut cli, matches) = cli;
    cli.flags = flags_layer(&matches)?;
    let env = FileConfig::from_env(|name| env.get(name).cloned())
        .map_err(resetctl::settings::SettingsError::from)?;
    let path = std::path::Path::new("config.toml");
    let file = resetctl::config::parse_config(path, file_text)?;
    Settings::from_layers(&cli, env, file, Some(path.to_owned()))
}

/// What the command line gave, as a raw layer: every row of the table of
/// settings whose option was given on the command line, in `matches` and
/// the invoked subcommand's (a global option is in both). A value clap
/// read from the option's variable is the environment layer's, which has
/// it: the flag layer holds the command line alone, so every value says
/// where it really came from.
pub fn flags_layer(matches: &clap::ArgMatches) -> Result<FileConfig, CliError> {
    let mut layer = FileConfig::default();
    let mut level = Some(matches);
    while let Some(matches) = level {
        for row in FileConfig::SETTINGS {
            let given = matches!(
                matches.try_get_raw(row.key),
                Ok(Some(_)) if matches.value_source(row.key) == Some(ValueSource::CommandLine)
            );
            if !given {
                continue;
            }
            let values: Vec<String> = match row.kind {
                Kind::Switch => vec!["true".to_owned()],
                _ => matches
                    .get_raw(row.key)
                    .into_iter()
                    .flatten()
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect(),
            };
            layer
                .set_flag(row.key, &values)
                .map_err(|e| CliError::usage(e.to_string()))?;
        }
        level = matches.subcommand().map(|(_, sub)| sub);
    }
    Ok(layer)
}

#[cfg(test)]
mod tests;
