//! Resolves the global settings once: flags > env > config file > defaults.

use std::path::PathBuf;
use std::time::Duration;

use resetctl::config::{default_data_dir, layer, load_config, seconds_setting};
use resetctl::model::Timestamp;
use resetctl::snapshot::{SnapshotStore, DEFAULT_KEEP};
use resetctl::standalone::PublishSettings;

use crate::args::{GlobalArgs, LogFormat};
use crate::exit::{CliError, Code};

/// The longest lock wait accepted (a day).
const MAX_LOCK_TIMEOUT_SECONDS: f64 = 86_400.0;

/// The resolved global settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The data dir.
    pub data_dir: PathBuf,
    /// The clock: `--now` or the system time at start.
    pub now: Timestamp,
    /// `--now` as given (a frozen clock for the server), if it was.
    pub now_flag: Option<Timestamp>,
    /// Retention.
    pub keep: usize,
    /// Lock wait.
    pub lock_timeout: Duration,
    /// Auto-fulfilment tolerance in minutes.
    pub match_tolerance_minutes: u32,
    /// The log filter (`--log`, env, file); `RUST_LOG` wins over it.
    pub log: Option<String>,
    /// The log line format (`--log-format`, env, file; default text).
    pub log_format: LogFormat,
    /// The operator's contact in the `User-Agent` of outbound requests.
    pub user_agent_contact: Option<String>,
    /// The config file's values, for command-specific settings.
    pub file: resetctl::config::FileConfig,
}

impl Settings {
    /// Builds settings from the parsed global flags.
    pub fn resolve(global: &GlobalArgs) -> Result<Self, CliError> {
        let config = load_config(global.config.as_deref())?;
        let file = &config.values;
        let data_dir = match global.data_dir.clone().or_else(|| file.data_dir.clone()) {
            Some(dir) => dir,
            None => default_data_dir().ok_or_else(|| {
                CliError::new(Code::Usage, "no home directory to put the data dir in; pass --data-dir or set RESETCTL_DATA_DIR")
            })?,
        };
        let keep = layer(global.keep.map(|k| k as usize), file.keep, DEFAULT_KEEP);
        if keep == 0 {
            return Err(CliError::new(Code::Usage, "keep must be at least 1"));
        }
        let lock_timeout = seconds_setting(
            "lock-timeout",
            layer(global.lock_timeout, file.lock_timeout, 10.0),
            0.0,
            MAX_LOCK_TIMEOUT_SECONDS,
        )?;
        let log_format = match (global.log_format, file.log_format.as_deref()) {
            (Some(format), _) => format,
            (None, None | Some("text")) => LogFormat::Text,
            (None, Some("json")) => LogFormat::Json,
            (None, Some(other)) => {
                return Err(CliError::new(
                    Code::Usage,
                    format!("config file: log-format = {other:?} is not text or json"),
                ))
            }
        };
        let user_agent_contact = global
            .user_agent_contact
            .clone()
            .or_else(|| file.user_agent_contact.clone());
        if let Some(contact) = &user_agent_contact {
            resetctl::outbound::check_contact(contact)
                .map_err(|e| CliError::new(Code::Usage, e.to_string()))?;
        }
        Ok(Self {
            data_dir,
            user_agent_contact,
            log_format,
            now: global.now.unwrap_or_else(Timestamp::now),
            now_flag: global.now,
            match_tolerance_minutes: layer(
                global.match_tolerance_minutes,
                file.match_tolerance_minutes,
                180,
            ),
            keep,
            lock_timeout,
            log: global.log.clone().or_else(|| file.log.clone()),
            file: file.clone(),
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
            match_tolerance_ms: i64::from(self.match_tolerance_minutes) * 60_000,
        }
    }
}
