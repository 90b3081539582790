//! Settings, built once: the raw layers ([`crate::config`]: flags, the
//! environment, the config file) merged by the one precedence rule, then
//! every key validated into typed settings, for every subcommand alike,
//! before anything runs or binds. An invalid key is the same error
//! whatever the subcommand; it names the key and where its value came
//! from. Commands receive [`Settings`] and never read a layer again.
//!
//! Each part is built by the module that knows its rules: [`serve`]
//! (listeners, connections, streams, pages), [`limits`] (the quota, the
//! store kind, client keys, the flood guard), [`sync`] (the upstream, its
//! presets, fetch limits), [`endpoints`] (what a new webhook endpoint keeps).

pub mod effective;
pub mod endpoints;
pub mod limits;
pub mod reload;
pub mod serve;
pub mod sync;

use std::path::PathBuf;
use std::time::Duration;

/// A key as the flags and the config file spell it (the config owns the keys).
pub use crate::config::kebab;
use crate::config::{
    default_data_dir, env_variable, seconds_setting, DurationOutOfRange, EnvError, FileConfig,
    Merged, Source,
};

/// The raw layers, highest first.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    /// What the command line gave (clap also reads the variables of the
    /// invoked subcommand's own flags).
    pub flags: FileConfig,
    /// `RESETCTL_*` for every key ([`FileConfig::from_env`]).
    pub env: FileConfig,
    /// The config file's values.
    pub file: FileConfig,
    /// The config file they were read from (what an error about one of
    /// them names).
    pub file_path: Option<PathBuf>,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Every setting, validated.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The data dir.
    pub data_dir: PathBuf,
    /// Snapshot retention.
    pub keep: usize,
    /// How long to wait for the data-dir lock.
    pub lock_timeout: Duration,
    /// Auto-fulfilment tolerance in minutes.
    pub match_tolerance_minutes: u32,
    /// The log filter; `RUST_LOG` wins over it.
    pub log: String,
    /// The log line format.
    pub log_format: LogFormat,
    /// The operator's contact in the `User-Agent` of outbound requests.
    pub user_agent_contact: Option<String>,
    /// Who records ledger changes (`None`: the command's default).
    pub actor: Option<String>,
    /// `serve` (its quota is `serve.options.limits`, which `status` shows too).
    pub serve: serve::ServeSettings,
    /// `sync`, when an upstream is configured.
    pub sync: Option<crate::sync::SyncSettings>,
    /// What `webhook add` keeps with a new endpoint.
    pub endpoints: endpoints::EndpointDefaults,
    /// Every key's merged value, its row's default when no layer gives
    /// one (what `serve --check` shows of a key its builder takes as given).
    pub values: FileConfig,
    /// Where each key's value came from (a key absent: its default).
    pub sources: std::collections::HashMap<&'static str, Source>,
}

impl Settings {
    /// The matcher's tolerance in milliseconds: how far outside a window a
    /// completion still fulfils it, and so how long after a window's end
    /// a schedule is announced as not confirmed ([`crate::remind`]).
    pub fn match_tolerance_ms(&self) -> i64 {
        minutes_ms(self.match_tolerance_minutes)
    }
}

/// `minutes` in milliseconds.
fn minutes_ms(minutes: u32) -> i64 {
    i64::from(minutes) * 60_000
}

/// A setting that cannot be used: its key, where its value came from, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// A value breaks its key's rule.
    #[error("{}{why}", origin(.key, *.layer, .file.as_deref()))]
    Invalid {
        /// The key (snake case).
        key: &'static str,
        /// Where the value came from (`None`: a default).
        layer: Option<Source>,
        /// The config file, when the value came from one.
        file: Option<PathBuf>,
        /// What is wrong, naming the key.
        why: String,
    },
    /// An environment variable that does not read as its type.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// A file a setting names is not a regular file, or is over its cap
    /// (the words name the setting and the file).
    #[error("{0}")]
    UnfitFile(String),
}

/// How an error says where a value came from.
fn origin(key: &str, source: Option<Source>, file: Option<&std::path::Path>) -> String {
    match (source, file) {
        (Some(Source::File), Some(path)) => format!("config file {}: ", path.display()),
        (Some(Source::File), None) => "config file: ".to_owned(),
        (Some(Source::Env), _) => format!("{}: ", env_variable(key)),
        (Some(Source::Flag) | None, _) => String::new(),
    }
}

/// What the builders of each part read: the merged values and their
/// sources, the config file's name, and whether these are the layers
/// below the flags checked on their own.
pub struct Raw<'a> {
    merged: &'a Merged,
    file: Option<&'a std::path::Path>,
    alone: bool,
}

impl Raw<'_> {
    /// The merged values.
    pub fn values(&self) -> &FileConfig {
        &self.merged.values
    }

    /// Where `key`'s value came from (`None`: a default).
    pub fn source(&self, key: &str) -> Option<Source> {
        self.merged.source(key)
    }

    /// An error about `key`, naming where its value came from.
    pub fn invalid(&self, key: &'static str, why: impl Into<String>) -> SettingsError {
        let layer = self.merged.source(key);
        SettingsError::Invalid {
            key,
            layer,
            file: (layer == Some(Source::File))
                .then(|| self.file.map(ToOwned::to_owned))
                .flatten(),
            why: why.into(),
        }
    }

    /// Whether rules between two keys apply: on the merged settings, not
    /// on the layers below the flags checked alone (a TLS file in the
    /// config file with the store URL given as a flag is one setting).
    pub fn across_keys(&self) -> bool {
        !self.alone
    }

    /// The range of `key`'s row (a row without one is a defect of the table).
    fn range(key: &str) -> (f64, f64) {
        crate::config::setting(key)
            .and_then(|row| row.range)
            .unwrap_or_else(|| unreachable!("a row without its range: {key}"))
    }

    /// Whether `value` is within the range of `key`'s row (for a builder
    /// that says it in words of its own).
    pub fn within(&self, key: &str, value: f64) -> bool {
        let (min, max) = Self::range(key);
        value >= min && value <= max
    }

    /// A duration setting in seconds, within its row's range.
    pub fn seconds(&self, key: &'static str, value: f64) -> Result<Duration, SettingsError> {
        let (min, max) = Self::range(key);
        seconds_setting(&kebab(key), value, min, max)
            .map_err(|e: DurationOutOfRange| self.invalid(key, e.to_string()))
    }

    /// A whole number within its row's range: `KEY must be at least N`, or
    /// `KEY must be N to M, got V`.
    pub fn whole(&self, key: &'static str, value: u64) -> Result<u64, SettingsError> {
        if self.within(key, value as f64) {
            return Ok(value);
        }
        let row = crate::config::setting(key).expect("a row: its range was read");
        let range = row.range_said().unwrap_or_default();
        Err(self.invalid(
            key,
            match row.range.is_some_and(|(_, max)| max.is_finite()) {
                true => format!("{} must be {range}, got {value}", kebab(key)),
                false => format!("{} must be {range}", kebab(key)),
            },
        ))
    }

    /// A count within its row's range ([`Self::whole`]).
    pub fn count(&self, key: &'static str, value: u64) -> Result<usize, SettingsError> {
        self.whole(key, value).map(|n| n as usize)
    }

    /// Every row with a range holds a value within it: the builders check
    /// what they read, and this the rest (a row read as given by the code
    /// that uses it).
    fn within_ranges(&self) -> Result<(), SettingsError> {
        for row in FileConfig::SETTINGS
            .iter()
            .filter(|row| row.range.is_some())
        {
            let Some(text) = self.values().text_of(row.key) else {
                continue;
            };
            let value: f64 = text.parse().unwrap_or(f64::NAN);
            match row.kind {
                crate::config::Kind::Number => self.seconds(row.key, value).map(drop)?,
                _ => self.whole(row.key, value as u64).map(drop)?,
            }
        }
        Ok(())
    }
}

/// Checks a `log` filter strictly: each comma-separated directive is a
/// level (`error`, `warn`, `info`, `debug`, `trace`, `off`) or
/// `TARGET=LEVEL`; anything else is an error naming the directive, never a
/// filter quietly replaced by `info` (which turned a dropped access log
/// back on).
fn log_filter(filter: &str) -> Result<(), String> {
    const LEVELS: &str = "error, warn, info, debug, trace or off";
    for directive in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let is_level = |text: &str| {
            !text.is_empty() && text.parse::<tracing::level_filters::LevelFilter>().is_ok()
        };
        let named_target = |target: &str| {
            let name = target.split('[').next().unwrap_or("");
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_:-".contains(c))
                && (name.len() == target.len() || target.ends_with(']'))
        };
        let known = match directive.rsplit_once('=') {
            Some((target, level)) => named_target(target.trim()) && is_level(level.trim()),
            None => is_level(directive),
        };
        if !known {
            return Err(format!(
                "log: unknown directive `{directive}`: a directive is a level ({LEVELS}) or \
                 TARGET=LEVEL (`info,resetctl::access=warn`)"
            ));
        }
    }
    Ok(())
}

impl Settings {
    /// Merges `layers` and validates every key. The environment and the
    /// config file are validated on their own first: a flag given to one
    /// command does not excuse a bad value below it, so every subcommand
    /// gives the same answer about the same file and environment. A rule
    /// between two keys is checked on the merged settings only, where
    /// each key has its one value.
    pub fn build(layers: &Layers) -> Result<Self, SettingsError> {
        let file = layers.file_path.as_deref();
        let below = FileConfig::merge(&[(Source::Env, &layers.env), (Source::File, &layers.file)]);
        // The data dir may come from a flag alone: it is no fault of the layers below.
        let placeholder = below.values.data_dir.is_none().then(PathBuf::new);
        let alone = Raw {
            merged: &below,
            file,
            alone: true,
        };
        Self::from_raw(&alone, placeholder)?;
        let merged = FileConfig::merge(&[
            (Source::Flag, &layers.flags),
            (Source::Env, &layers.env),
            (Source::File, &layers.file),
        ]);
        let raw = Raw {
            merged: &merged,
            file,
            alone: false,
        };
        Self::from_raw(&raw, None)
    }

    /// Validates `raw` into settings; `data_dir` stands in for a data
    /// dir none of its layers gives.
    fn from_raw(raw: &Raw, data_dir: Option<PathBuf>) -> Result<Self, SettingsError> {
        let v = raw.values();
        let data_dir = match v.data_dir.clone().or(data_dir) {
            Some(dir) => dir,
            None => default_data_dir().ok_or_else(|| {
                raw.invalid(
                    "data_dir",
                    "no home directory to put the data dir in; pass --data-dir or set RESETCTL_DATA_DIR",
                )
            })?,
        };
        let keep = raw.count("keep", v.keep() as u64)?;
        let lock_timeout = raw.seconds("lock_timeout", v.lock_timeout())?;
        let log_format = match v.log_format().as_str() {
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            other => {
                return Err(raw.invalid(
                    "log_format",
                    format!("log-format = {other:?} is not text or json"),
                ))
            }
        };
        let log = v.log();
        log_filter(&log).map_err(|why| raw.invalid("log", why))?;
        if let Some(contact) = &v.user_agent_contact {
            crate::outbound::check_contact(contact)
                .map_err(|e| raw.invalid("user_agent_contact", e.to_string()))?;
        }
        let match_tolerance_minutes = v.match_tolerance_minutes();
        let serve = serve::ServeSettings::build(raw, &data_dir, match_tolerance_minutes)?;
        let endpoints = endpoints::EndpointDefaults::build(raw, &serve.options)?;
        let sync = sync::build(raw, keep, lock_timeout)?;
        raw.within_ranges()?;
        Ok(Self {
            keep,
            lock_timeout,
            match_tolerance_minutes,
            log,
            log_format,
            user_agent_contact: v.user_agent_contact.clone(),
            actor: v.actor.clone(),
            sync,
            serve,
            endpoints,
            data_dir,
            values: raw.merged.values.clone(),
            sources: raw.merged.sources.clone(),
        })
    }
}

#[cfg(test)]
mod tests;
