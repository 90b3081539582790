//! The raw layers of settings and their one precedence: flags >
//! environment (`RESETCTL_*`) > config file > defaults.
//!
//! Every key is declared once ([`FileConfig`], by `settings_keys!`): the
//! same shape holds the flags the CLI parsed, the environment (read here
//! for every key, whatever the subcommand) and the TOML config file, and
//! [`FileConfig::merge`] takes each key from the highest layer that has it,
//! remembering which. [`crate::settings`] validates the merged values into
//! typed settings. The file holds the same settings as the flags, spelled
//! the same (`data-dir`, `listen`…); an unknown key is an error that names
//! it rather than a silent typo.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

mod file_error;

/// Where a setting's value came from; ordered by precedence (a flag first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A command-line flag (or the variable clap reads for it).
    Flag,
    /// A `RESETCTL_*` environment variable.
    Env,
    /// The config file.
    File,
}

/// The layers merged: the values, and the layer each came from.
#[derive(Debug, Clone, Default)]
pub struct Merged {
    /// Each key from its highest layer.
    pub values: FileConfig,
    /// The layer of each key that has a value.
    pub sources: HashMap<&'static str, Source>,
}

impl Merged {
    /// Where `key` (snake case) came from; `None` for a default.
    pub fn source(&self, key: &str) -> Option<Source> {
        self.sources.get(key).copied()
    }
}

/// An environment variable that does not read as its setting's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}={value:?} is not {expected}")]
pub struct EnvError {
    /// The variable.
    pub variable: String,
    /// Its value ([`crate::redact::NOT_SHOWN`] for a [`Mark::Secret`] key).
    pub value: String,
    /// What the setting takes.
    pub expected: &'static str,
}

/// A mark on a row of the table of settings (`settings_keys!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A running `serve` applies a new value when its settings are read
    /// again (SIGHUP, [`crate::settings::reload`]); a change of any other
    /// key `serve` reads waits for a restart.
    Live,
    /// The value may hold a secret (a Redis password, an upstream's
    /// userinfo or token, a credential header): no error, log line or
    /// listing ever shows it ([`crate::redact`] shows it).
    Secret,
}

/// One row of the table of settings.
#[derive(Debug, PartialEq, Eq)]
pub struct Setting {
    /// The key, in snake case.
    pub key: &'static str,
    marks: &'static [Mark],
}

impl Setting {
    /// Whether the row carries `mark`.
    pub fn has(&self, mark: Mark) -> bool {
        self.marks.contains(&mark)
    }
}

/// The row of `key` (snake or kebab case), if it is a setting.
pub fn setting(key: &str) -> Option<&'static Setting> {
    let key = key.replace('-', "_");
    FileConfig::SETTINGS.iter().find(|s| s.key == key)
}

/// Whether `key`'s value may hold a secret ([`Mark::Secret`]).
pub fn is_secret(key: &str) -> bool {
    setting(key).is_some_and(|s| s.has(Mark::Secret))
}

/// A key (snake case) as the flags and the config file spell it.
pub fn kebab(key: &str) -> String {
    key.replace('_', "-")
}

/// The variable of `key` (snake case): `RESETCTL_` and the key in upper case.
pub fn env_variable(key: &str) -> String {
    format!("RESETCTL_{}", key.to_ascii_uppercase())
}

/// A setting's type as the environment spells it.
trait FromEnv: Sized {
    const EXPECTED: &'static str;
    fn from_env(text: &str, key: &str) -> Option<Self>;
}

impl FromEnv for String {
    const EXPECTED: &'static str = "text";
    fn from_env(text: &str, _: &str) -> Option<Self> {
        Some(text.to_owned())
    }
}

impl FromEnv for PathBuf {
    const EXPECTED: &'static str = "a path";
    fn from_env(text: &str, _: &str) -> Option<Self> {
        Some(PathBuf::from(text))
    }
}

impl FromEnv for bool {
    const EXPECTED: &'static str = "true or false";
    fn from_env(text: &str, _: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Some(true),
            "false" | "0" | "no" | "off" | "" => Some(false),
            _ => None,
        }
    }
}

macro_rules! from_env_number {
    ($($ty:ty => $expected:literal),*) => {$(
        impl FromEnv for $ty {
            const EXPECTED: &'static str = $expected;
            fn from_env(text: &str, _: &str) -> Option<Self> {
                text.trim().parse().ok()
            }
        }
    )*};
}
from_env_number!(u8 => "a whole number", u32 => "a whole number", u64 => "a whole number",
    usize => "a whole number", f64 => "a number");

impl FromEnv for Vec<String> {
    const EXPECTED: &'static str = "a list";
    /// Comma-separated, except an upstream header (one `NAME: VALUE`,
    /// whose value may hold commas).
    fn from_env(text: &str, key: &str) -> Option<Self> {
        if key == "upstream_header" {
            return Some(vec![text.to_owned()]);
        }
        Some(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }
}

fn env_value<T: FromEnv>(
    get: &impl Fn(&str) -> Option<String>,
    key: &str,
) -> Result<Option<T>, EnvError> {
    let variable = env_variable(key);
    let Some(value) = get(&variable) else {
        return Ok(None);
    };
    T::from_env(&value, key).map(Some).ok_or_else(|| EnvError {
        variable,
        value: match is_secret(key) {
            true => crate::redact::NOT_SHOWN.to_owned(),
            false => value,
        },
        expected: T::EXPECTED,
    })
}

/// Declares every settings key once: the raw layer [`FileConfig`] (the
/// same shape for flags, the environment and the file), its keys and rows
/// (a row's marks, `[Live, Secret]`, are [`Mark`]s), how the environment
/// spells and is read for each, and the merge.
macro_rules! settings_keys {
    ($( $(#[$doc:meta])* $field:ident : $ty:ty $([$($mark:ident),*])?, )*) => {
        /// The settings a config file may hold (the same names as the long
        /// flags); also the shape of the flag and environment layers.
        #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        pub struct FileConfig {
            $( $(#[$doc])* pub $field: Option<$ty>, )*
        }

        impl FileConfig {
            /// Every key, in snake case (the config file spells `_` as `-`,
            /// the environment as `RESETCTL_` and upper case).
            pub const KEYS: &'static [&'static str] = &[$( stringify!($field) ),*];

            /// Every row of the table, in the order of [`Self::KEYS`].
            pub const SETTINGS: &'static [Setting] = &[$(
                Setting {
                    key: stringify!($field),
                    marks: &[$($(Mark::$mark),*)?],
                }
            ),*];

            /// The environment layer: `RESETCTL_<KEY>` for every key,
            /// read with `get` (the process environment, or a test's map).
            pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
                Ok(Self {
                    $( $field: env_value(&get, stringify!($field))?, )*
                })
            }

            /// Forgets `key` (snake case): the flag layer drops what clap
            /// read from the environment for a flag, which is the
            /// environment's (and is read there).
            pub fn clear(&mut self, key: &str) {
                $( if key == stringify!($field) { self.$field = None; } )*
            }

            /// `layers` merged, highest first: each key from the first
            /// layer that has it, with where it came from.
            pub fn merge(layers: &[(Source, &FileConfig)]) -> Merged {
                let mut merged = Merged::default();
                $(
                    if let Some((source, layer)) =
                        layers.iter().find(|(_, layer)| layer.$field.is_some())
                    {
                        merged.values.$field = layer.$field.clone();
                        merged.sources.insert(stringify!($field), *source);
                    }
                )*
                merged
            }
        }
    };
}

settings_keys! {
    /// `--data-dir`.
    data_dir: PathBuf,
    /// `--keep`: snapshot retention.
    keep: usize,
    /// `--lock-timeout`, seconds.
    lock_timeout: f64,
    /// `--log`: a tracing filter.
    log: String [Live],
    /// `--log-format`: `text` or `json`.
    log_format: String,
    /// `--match-tolerance-minutes`.
    match_tolerance_minutes: u32,
    /// `serve --listen`: an address or a host name with a port.
    listen: String,
    /// `serve --admin-listen`: the admin listener's address.
    admin_listen: String,
    /// `serve --watch`: `auto` or `poll`.
    watch: String,
    /// `serve --republish`.
    republish: bool,
    /// `serve --republish-every`, seconds.
    republish_every: f64,
    /// `serve --public-base-url`.
    public_base_url: String [Secret],
    /// `serve --no-site`.
    no_site: bool,
    /// `serve --site-name`: the pages' name in their header and titles.
    site_name: String [Live],
    /// `serve --mcp-allow-origin` (a list).
    mcp_allow_origin: Vec<String>,
    /// `record … --actor` and `mark-checked --actor`: who records changes.
    actor: String,
    /// `--rate-limit N/SECONDS`.
    rate_limit: String [Live],
    /// `--no-rate-limit`.
    no_rate_limit: bool [Live],
    /// `serve --header-timeout`, seconds.
    header_timeout: f64,
    /// `serve --body-timeout`, seconds.
    body_timeout: f64,
    /// `serve --max-connections`.
    max_connections: u64,
    /// `serve --max-connections-per-ip`.
    max_connections_per_ip: u64,
    /// `serve --max-head-bytes`.
    max_head_bytes: u64,
    /// `serve --listen-backlog`.
    listen_backlog: u32,
    /// `serve --stream-max-per-client`.
    stream_max_per_client: u32,
    /// `serve --stream-max`.
    stream_max: u64,
    /// `serve --stream-heartbeat`, seconds.
    stream_heartbeat: f64,
    /// `--rate-limit-max-clients`.
    rate_limit_max_clients: u64 [Live],
    /// `--rate-limit-store`.
    rate_limit_store: String [Live, Secret],
    /// `--redis-ca-file`: the private CA of a TLS quota store.
    redis_ca_file: PathBuf [Live],
    /// `--redis-cert-file`: the client certificate for a TLS quota store.
    redis_cert_file: PathBuf [Live],
    /// `--redis-key-file`: its private key.
    redis_key_file: PathBuf [Live],
    /// `--trust-proxy` (a list).
    trust_proxy: Vec<String> [Live],
    /// `--client-ip-header`.
    client_ip_header: String [Live],
    /// `--ipv6-prefix-len`.
    ipv6_prefix_len: u8 [Live],
    /// `--flood-guard`.
    flood_guard: String [Live],
    /// `sync --upstream`.
    upstream: String [Secret],
    /// `sync --upstream-header` (a list of "NAME: VALUE").
    upstream_header: Vec<String> [Secret],
    /// `sync --public-url`.
    public_url: String,
    /// `sync --page-url`.
    page_url: String,
    /// `sync --source-id`.
    source_id: String,
    /// `sync --source-name`.
    source_name: String,
    /// `sync --interval-minutes`.
    interval_minutes: u32,
    /// `sync --max-age-minutes`.
    max_age_minutes: u32,
    /// `sync --backoff-cap-minutes`.
    backoff_cap_minutes: u32,
    /// `sync --connect-timeout`.
    connect_timeout: f64,
    /// `sync --timeout`.
    timeout: f64,
    /// `sync --max-body-bytes`.
    max_body_bytes: u64,
    /// `sync --max-redirects`.
    max_redirects: usize,
    /// `webhook add --allow-private-targets`: a target on a loopback, private or link-local address.
    allow_private_targets: bool,
    /// `webhook add --webhook-timeout`, seconds.
    webhook_timeout: f64,
    /// `--user-agent-contact`: how upstream and receiver operators reach this one.
    user_agent_contact: String,
}

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The named file (`--config`, `RESETCTL_CONFIG`) does not exist.
    #[error("cannot read config file {path}: it does not exist")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file cannot be read, or is not a regular file of bounded size.
    #[error("config file: {0}")]
    Read(crate::durable::ReadError),
    /// The file is not valid TOML or has an unknown or mistyped key.
    #[error("config file {}: {message}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong: the line, the column, the key and why, in one
        /// line, never a value (`config::file_error`).
        message: String,
    },
}

/// The largest config file read (the operator's manual's is 2 kB).
pub const CONFIG_CAP: crate::durable::Cap = crate::durable::Cap::mib(1);

/// A loaded config file (or none).
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Where it came from; `None` when no file was found.
    pub path: Option<PathBuf>,
    /// Its values.
    pub values: FileConfig,
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "resetctl")
}

/// The system-wide config file of a deployed instance (the deployment
/// guide's), read when no config file is named and the user has none.
pub const SYSTEM_CONFIG_PATH: &str = "/etc/resetctl/config.toml";

/// The data dir of the shipped units and the operator's manual.
pub const SYSTEM_DATA_DIR: &str = "/var/lib/resetctl";

/// The platform's per-user config file location (`~/.config/resetctl/config.toml` on Linux).
pub fn default_config_path() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("config.toml"))
}

/// The config files read when none is named, in order: the user's own,
/// then the system-wide one. The first that exists is the file layer; the
/// files are not merged, so one file answers for every key.
pub fn default_config_paths() -> Vec<PathBuf> {
    default_config_path()
        .into_iter()
        .chain(std::iter::once(PathBuf::from(SYSTEM_CONFIG_PATH)))
        .collect()
}

/// The platform's data dir (`~/.local/share/resetctl` on Linux).
pub fn default_data_dir() -> Option<PathBuf> {
    project_dirs().map(|d| d.data_dir().to_owned())
}

/// Loads `explicit` (which must exist) or else the first of
/// [`default_config_paths`] that exists.
pub fn load_config(explicit: Option<&Path>) -> Result<Config, ConfigError> {
    let candidates = match explicit {
        Some(path) => return read_config(path.to_owned(), true),
        None => default_config_paths(),
    };
    for path in candidates {
        let config = read_config(path, false)?;
        if config.path.is_some() {
            return Ok(config);
        }
    }
    Ok(Config::default())
}

/// Reads one config file; a missing one that is not `required` is none.
fn read_config(path: PathBuf, required: bool) -> Result<Config, ConfigError> {
    let bytes = match crate::durable::read_file(&path, CONFIG_CAP) {
        Ok(Some(bytes)) => bytes,
        Ok(None) if !required => return Ok(Config::default()),
        Ok(None) => return Err(ConfigError::Missing { path }),
        Err(e) => return Err(ConfigError::Read(e)),
    };
    let text = String::from_utf8(bytes).map_err(|_| ConfigError::Invalid {
        path: path.clone(),
        message: "not UTF-8 text".to_owned(),
    })?;
    let values = parse_config(&path, &text)?;
    Ok(Config {
        path: Some(path),
        values,
    })
}

/// Where an operator's data may be when `data_dir` has nothing published:
/// the system-wide config file when it exists and was not the one read
/// (`config_read`), and the units' data dir when it exists and is not
/// `data_dir`. One sentence naming each, or `None`.
pub fn elsewhere_hint(data_dir: &Path, config_read: Option<&Path>) -> Option<String> {
    let system_config = Path::new(SYSTEM_CONFIG_PATH);
    let system_data = Path::new(SYSTEM_DATA_DIR);
    let mut found = Vec::new();
    if system_config.is_file() && config_read != Some(system_config) {
        found.push(format!(
            "{SYSTEM_CONFIG_PATH} exists but was not read (pass --config {SYSTEM_CONFIG_PATH})"
        ));
    }
    if system_data.is_dir() && data_dir != system_data {
        found.push(format!(
            "the units' data dir {SYSTEM_DATA_DIR} exists (pass --data-dir {SYSTEM_DATA_DIR}, as the resetctl user: sudo -u resetctl resetctl …)"
        ));
    }
    (!found.is_empty()).then(|| found.join("; "))
}

/// The file layer of `text` (a config file's contents), `path` naming it
/// in errors: one line naming the line, the column and the key, never a
/// value (`config::file_error`).
pub fn parse_config(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Invalid {
        path: path.to_owned(),
        message: file_error::describe(&e, text),
    })
}

/// A duration setting outside its range (or not a number at all).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{setting} must be between {min} and {max} seconds, got {}", shown(*.value))]
pub struct DurationOutOfRange {
    /// The setting's name, as the long flag and config key spell it.
    pub setting: String,
    /// The value given.
    pub value: f64,
    /// The smallest accepted value.
    pub min: f64,
    /// The largest accepted value.
    pub max: f64,
}

/// A value as the operator would recognise it (`1e300`, not 301 digits).
fn shown(value: f64) -> String {
    if value.is_finite() && value.abs() < 1e9 {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

/// Seconds as a [`std::time::Duration`] when `min <= seconds <= max`; otherwise an
/// error naming `setting` (NaN, infinities and anything a `Duration`
/// cannot hold are out of range, never a panic).
pub fn seconds_setting(
    setting: &str,
    seconds: f64,
    min: f64,
    max: f64,
) -> Result<std::time::Duration, DurationOutOfRange> {
    if seconds >= min && seconds <= max {
        if let Ok(duration) = std::time::Duration::try_from_secs_f64(seconds) {
            return Ok(duration);
        }
    }
    Err(DurationOutOfRange {
        setting: setting.to_owned(),
        value: seconds,
        min,
        max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_checked_against_their_range() {
        assert_eq!(
            seconds_setting("t", 1.5, 0.0, 10.0),
            Ok(std::time::Duration::from_millis(1500))
        );
        for bad in [1e300, -1.0, f64::NAN, f64::INFINITY, 10.5] {
            assert!(seconds_setting("t", bad, 0.0, 10.0).is_err(), "{bad}");
        }
        assert_eq!(
            seconds_setting("lock-timeout", 1e300, 0.0, 86400.0)
                .unwrap_err()
                .to_string(),
            "lock-timeout must be between 0 and 86400 seconds, got 1e300"
        );
    }
}
