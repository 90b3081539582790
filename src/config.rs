//! Layered settings: flags > environment (`RESETCTL_*`) > config file > defaults.
//!
//! clap merges flags with the environment (each flag names its variable);
//! this module reads the TOML config file and supplies the defaults, so the
//! CLI can resolve every setting with one call to [`layer`]. The file holds
//! the same settings as the flags, spelled the same (`data-dir`, `listen`…);
//! an unknown key is an error that names it rather than a silent typo.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The settings a config file may hold (the same names as the long flags).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct FileConfig {
    /// `--data-dir`.
    pub data_dir: Option<PathBuf>,
    /// `--keep`: snapshot retention.
    pub keep: Option<usize>,
    /// `--lock-timeout`, seconds.
    pub lock_timeout: Option<f64>,
    /// `--log`: a tracing filter.
    pub log: Option<String>,
    /// `--log-format`: `text` or `json`.
    pub log_format: Option<String>,
    /// `--match-tolerance-minutes`.
    pub match_tolerance_minutes: Option<u32>,
    /// `serve --listen`: an address or a host name with a port.
    pub listen: Option<String>,
    /// `serve --admin-listen`: the admin listener's address.
    pub admin_listen: Option<String>,
    /// `serve --watch`: `auto` or `poll`.
    pub watch: Option<String>,
    /// `serve --republish`.
    pub republish: Option<bool>,
    /// `serve --republish-every`, seconds.
    pub republish_every: Option<f64>,
    /// `serve --public-base-url`.
    pub public_base_url: Option<String>,
    /// `serve --no-site`.
    pub no_site: Option<bool>,
    /// `serve --mcp-allow-origin` (a list).
    pub mcp_allow_origin: Option<Vec<String>>,
    /// `record … --actor` and `mark-checked --actor`: who records changes.
    pub actor: Option<String>,
    /// `--rate-limit N/SECONDS`.
    pub rate_limit: Option<String>,
    /// `--no-rate-limit`.
    pub no_rate_limit: Option<bool>,
    /// `serve --header-timeout`, seconds.
    pub header_timeout: Option<f64>,
    /// `serve --body-timeout`, seconds.
    pub body_timeout: Option<f64>,
    /// `serve --max-connections`.
    pub max_connections: Option<u64>,
    /// `serve --max-connections-per-ip`.
    pub max_connections_per_ip: Option<u64>,
    /// `serve --max-head-bytes`.
    pub max_head_bytes: Option<u64>,
    /// `serve --listen-backlog`.
    pub listen_backlog: Option<u32>,
    /// `serve --stream-max-per-client`.
    pub stream_max_per_client: Option<u32>,
    /// `serve --stream-max`.
    pub stream_max: Option<u64>,
    /// `serve --stream-heartbeat`, seconds.
    pub stream_heartbeat: Option<f64>,
    /// `--rate-limit-max-clients`.
    pub rate_limit_max_clients: Option<u64>,
    /// `--rate-limit-store`.
    pub rate_limit_store: Option<String>,
    /// `--trust-proxy` (a list).
    pub trust_proxy: Option<Vec<String>>,
    /// `--client-ip-header`.
    pub client_ip_header: Option<String>,
    /// `--ipv6-prefix-len`.
    pub ipv6_prefix_len: Option<u8>,
    /// `--flood-guard`.
    pub flood_guard: Option<String>,
    /// `sync --upstream`.
    pub upstream: Option<String>,
    /// `sync --upstream-header` (a list of "NAME: VALUE").
    pub upstream_header: Option<Vec<String>>,
    /// `sync --public-url`.
    pub public_url: Option<String>,
    /// `sync --page-url`.
    pub page_url: Option<String>,
    /// `sync --source-id`.
    pub source_id: Option<String>,
    /// `sync --source-name`.
    pub source_name: Option<String>,
    /// `sync --interval-minutes`.
    pub interval_minutes: Option<u32>,
    /// `sync --max-age-minutes`.
    pub max_age_minutes: Option<u32>,
    /// `sync --backoff-cap-minutes`.
    pub backoff_cap_minutes: Option<u32>,
    /// `sync --connect-timeout`.
    pub connect_timeout: Option<f64>,
    /// `sync --timeout`.
    pub timeout: Option<f64>,
    /// `sync --max-body-bytes`.
    pub max_body_bytes: Option<u64>,
    /// `sync --max-redirects`.
    pub max_redirects: Option<usize>,
    /// `webhook add --allow-private-targets`: a target on a loopback, private or link-local address.
    pub allow_private_targets: Option<bool>,
    /// `webhook add --webhook-timeout`, seconds.
    pub webhook_timeout: Option<f64>,
    /// `--user-agent-contact`: how upstream and receiver operators reach this one.
    pub user_agent_contact: Option<String>,
}

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The named file does not exist or cannot be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file is not valid TOML or has an unknown or mistyped key.
    #[error("config file {path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, as the TOML parser says it (with line and column).
        message: String,
    },
}

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

/// The platform's config file location (`~/.config/resetctl/config.toml` on Linux).
pub fn default_config_path() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("config.toml"))
}

/// The platform's data dir (`~/.local/share/resetctl` on Linux).
pub fn default_data_dir() -> Option<PathBuf> {
    project_dirs().map(|d| d.data_dir().to_owned())
}

/// Loads `explicit` (which must exist) or else the default file if it exists.
pub fn load_config(explicit: Option<&Path>) -> Result<Config, ConfigError> {
    let (path, required) = match explicit {
        Some(path) => (path.to_owned(), true),
        None => match default_config_path() {
            Some(path) => (path, false),
            None => return Ok(Config::default()),
        },
    };
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound && !required => return Ok(Config::default()),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let values = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        path: path.clone(),
        message: e.to_string().trim().to_owned(),
    })?;
    Ok(Config {
        path: Some(path),
        values,
    })
}

/// The one precedence rule: the flag-or-env value, else the file's, else the default.
pub fn layer<T>(flag_or_env: Option<T>, file: Option<T>, default: T) -> T {
    flag_or_env.or(file).unwrap_or(default)
}

/// A duration setting outside its range (or not a number at all).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{setting} must be between {min} and {max} seconds, got {}", shown(*.value))]
pub struct DurationOutOfRange {
    /// The setting's name, as the long flag and config key spell it.
    pub setting: &'static str,
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
    setting: &'static str,
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
        setting,
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
