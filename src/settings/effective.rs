//! What the settings are, as an operator reads them: every key's
//! effective value, spelled as the config file would spell it, and where
//! it came from (a flag, the environment, the config file, or its
//! default). Made from the validated [`Settings`], so what is shown is what
//! a command uses; a value that may hold a secret is shown redacted
//! ([`crate::redact`]). `serve --check` prints it; the precedence of every
//! key is tested through it.

use std::time::Duration;

use super::Settings;
use crate::config::{FileConfig, Source};

/// One key's effective value and its origin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Effective {
    /// The key as the config file and the long flag spell it (`listen`).
    pub key: String,
    /// Its value in the config file's spelling; words in parentheses for
    /// what is not a value (`(none)`, `(no upstream)`).
    pub value: String,
    /// `flag`, `env RESETCTL_…`, `config file PATH` or `default`.
    pub source: String,
}

/// Every key of [`FileConfig::KEYS`], in that order, as `settings` has it.
pub fn effective(settings: &Settings, config_file: Option<&std::path::Path>) -> Vec<Effective> {
    FileConfig::KEYS
        .iter()
        .map(|key| Effective {
            key: super::kebab(key),
            value: value_of(settings, key),
            source: match settings.sources.get(key) {
                Some(Source::Flag) => "flag".to_owned(),
                Some(Source::Env) => format!("env {}", crate::config::env_variable(key)),
                Some(Source::File) => match config_file {
                    Some(path) => format!("config file {}", path.display()),
                    None => "config file".to_owned(),
                },
                None => "default".to_owned(),
            },
        })
        .collect()
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        s.to_string()
    }
}

fn or_none(value: Option<String>) -> String {
    value.unwrap_or_else(|| "(none)".to_owned())
}

fn list(values: impl Iterator<Item = String>) -> String {
    let values: Vec<String> = values.collect();
    if values.is_empty() {
        "(none)".to_owned()
    } else {
        values.join(",")
    }
}

/// Keys whose default is made from another setting or the machine (the
/// home directory, the upstream's URL): their help says it in words.
const SAID_IN_WORDS: &[&str] = &[
    "data_dir",
    "upstream",
    "public_url",
    "page_url",
    "source_id",
    "source_name",
    "max_age_minutes",
];

/// The default of `key` (snake case), spelled as the config file spells
/// it: the value a command uses when no layer gives the key (for the sync
/// keys, with an upstream named), or `None` when the default is not a value
/// (`(none)`, `(off)`, a flag that is off): its help says in words what
/// happens then. It is read off settings built from no layer at all, so a
/// default is declared once, where its builder applies it; `--help`, the
/// man pages and `serve --check` all show it from here.
pub fn default_of(key: &str) -> Option<String> {
    static BUILT: std::sync::OnceLock<Option<(Settings, Settings)>> = std::sync::OnceLock::new();
    let built = BUILT.get_or_init(|| {
        // A data dir is given: its default depends on the home directory
        // and is said in words.
        let flags = FileConfig {
            data_dir: Some(std::path::PathBuf::from("/")),
            ..FileConfig::default()
        };
        let build = |file: FileConfig| {
            Settings::build(&super::Layers {
                flags: flags.clone(),
                env: FileConfig::default(),
                file,
                file_path: None,
            })
            .ok()
        };
        let mirror = FileConfig {
            upstream: Some("public".to_owned()),
            ..FileConfig::default()
        };
        Some((build(FileConfig::default())?, build(mirror)?))
    });
    let (plain, mirror) = built.as_ref()?;
    if SAID_IN_WORDS.contains(&key) || !FileConfig::KEYS.contains(&key) {
        return None;
    }
    let value = match value_of(plain, key) {
        value if value == "(no upstream)" => value_of(mirror, key),
        value => value,
    };
    (!value.starts_with('(') && value != "false").then_some(value)
}

/// The value of `key` (snake case) in `settings`: the keys of every
/// command, then `serve`'s, its quota's and the sync's.
fn value_of(settings: &Settings, key: &str) -> String {
    of_every_command(settings, key)
        .or_else(|| of_serve(settings, key))
        .or_else(|| of_quota(settings, key))
        .or_else(|| of_sync(settings, key))
        .unwrap_or_else(|| unreachable!("a key without its effective value: {key}"))
}

/// The value of a key every command reads, or `None` for another key.
fn of_every_command(settings: &Settings, key: &str) -> Option<String> {
    Some(match key {
        "data_dir" => settings.data_dir.display().to_string(),
        "keep" => settings.keep.to_string(),
        "lock_timeout" => seconds(settings.lock_timeout),
        "log" => settings.log.clone().unwrap_or_else(|| "info".to_owned()),
        "log_format" => match settings.log_format {
            super::LogFormat::Text => "text".to_owned(),
            super::LogFormat::Json => "json".to_owned(),
        },
        "match_tolerance_minutes" => settings.match_tolerance_minutes.to_string(),
        "actor" => settings
            .actor
            .clone()
            .unwrap_or_else(|| "($USER@hostname)".to_owned()),
        "allow_private_targets" => settings.endpoints.allow_private_targets.to_string(),
        "webhook_timeout" => settings.endpoints.timeout_seconds.to_string(),
        "user_agent_contact" => or_none(settings.user_agent_contact.clone()),
        _ => return None,
    })
}

/// The value of a key of `serve` (its listeners, pages, connections and
/// streams), or `None` for another key.
fn of_serve(settings: &Settings, key: &str) -> Option<String> {
    let serve = &settings.serve;
    let options = &serve.options;
    let connections = &options.connections;
    let streams = &options.streams;
    Some(match key {
        "listen" => serve.listen.clone(),
        "admin_listen" => serve
            .admin_listen
            .clone()
            .unwrap_or_else(|| "(off)".to_owned()),
        "watch" => match options.watch {
            crate::reload::WatchMode::Auto => "auto".to_owned(),
            crate::reload::WatchMode::Poll => "poll".to_owned(),
        },
        "republish" => serve.republish.is_some().to_string(),
        "republish_every" => seconds(serve.republish_every),
        "public_base_url" => or_none(
            options
                .public_base_url
                .as_ref()
                .map(|b| crate::redact::redact_url(b.as_str())),
        ),
        "no_site" => (!options.site).to_string(),
        "site_name" => options.site_name.clone(),
        "mcp_allow_origin" => list(options.mcp_allowed_origins.iter().cloned()),
        "header_timeout" => seconds(connections.header_timeout),
        "body_timeout" => seconds(connections.body_timeout),
        "max_connections" => connections.max_connections.to_string(),
        "max_connections_per_ip" => connections.max_connections_per_ip.to_string(),
        "max_head_bytes" => connections.max_head_bytes.to_string(),
        "listen_backlog" => serve.backlog.to_string(),
        "stream_max_per_client" => streams.per_client.to_string(),
        "stream_max" => streams.total.to_string(),
        "stream_heartbeat" => seconds(streams.heartbeat),
        _ => return None,
    })
}

/// The value of a key of `serve`'s quota (its store, client keys and flood
/// guard), or `None` for another key.
fn of_quota(settings: &Settings, key: &str) -> Option<String> {
    let limits = &settings.serve.options.limits;
    Some(match key {
        "rate_limit" => limits
            .policy
            .map_or_else(|| "(off)".to_owned(), |p| p.to_string()),
        "no_rate_limit" => limits.policy.is_none().to_string(),
        "rate_limit_max_clients" => limits.max_clients.to_string(),
        "rate_limit_store" => limits
            .redis_url
            .as_deref()
            .map_or_else(|| "memory".to_owned(), crate::redact::redact_url),
        "redis_ca_file" => or_none(
            limits
                .redis_tls
                .ca_file
                .as_ref()
                .map(|p| p.display().to_string()),
        ),
        "redis_cert_file" => or_none(
            limits
                .redis_tls
                .cert_file
                .as_ref()
                .map(|p| p.display().to_string()),
        ),
        "redis_key_file" => or_none(
            limits
                .redis_tls
                .key_file
                .as_ref()
                .map(|p| p.display().to_string()),
        ),
        "trust_proxy" => list(
            limits
                .client_keys
                .trusted_proxies
                .iter()
                .map(ToString::to_string),
        ),
        "client_ip_header" => limits.client_keys.header.name().to_owned(),
        "ipv6_prefix_len" => limits.client_keys.ipv6_prefix.to_string(),
        "flood_guard" => limits.flood.map_or_else(
            || "off".to_owned(),
            |(rate, burst)| format!("{rate}/{burst}"),
        ),
        _ => return None,
    })
}

/// The value of a key of the upstream sync (`(no upstream)` without one),
/// or `None` for another key.
fn of_sync(settings: &Settings, key: &str) -> Option<String> {
    let synced = |f: &dyn Fn(&crate::sync::SyncSettings) -> String| {
        settings
            .sync
            .as_ref()
            .map_or_else(|| "(no upstream)".to_owned(), f)
    };
    Some(match key {
        "upstream" => synced(&|s| crate::redact::redact_url(&s.upstream.url)),
        // Names only: the values are where secrets go.
        "upstream_header" => synced(&|s| {
            list(
                s.upstream
                    .headers
                    .iter()
                    .map(|(name, _)| format!("{name}: (not shown)")),
            )
        }),
        "public_url" => synced(&|s| s.source.url.clone()),
        "page_url" => synced(&|s| s.source.page_url.clone()),
        "source_id" => synced(&|s| s.source.source_id.clone()),
        "source_name" => synced(&|s| s.source.name.clone()),
        "interval_minutes" => synced(&|s| s.source.interval_minutes.to_string()),
        "max_age_minutes" => synced(&|s| s.source.max_age_minutes.to_string()),
        "backoff_cap_minutes" => synced(&|s| (s.backoff_cap.as_secs() / 60).to_string()),
        "connect_timeout" => synced(&|s| seconds(s.fetch.connect_timeout)),
        "timeout" => synced(&|s| seconds(s.fetch.timeout)),
        "max_body_bytes" => synced(&|s| s.fetch.max_body_bytes.to_string()),
        "max_redirects" => synced(&|s| s.fetch.max_redirects.to_string()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key has its line: a key added to the table without one
    /// fails here, not in an operator's `serve --check`.
    #[test]
    fn every_key_has_an_effective_value() {
        let layers = super::super::Layers {
            flags: FileConfig {
                data_dir: Some("/d".into()),
                ..FileConfig::default()
            },
            ..Default::default()
        };
        let settings = Settings::build(&layers).unwrap();
        let shown = effective(&settings, None);
        assert_eq!(shown.len(), FileConfig::KEYS.len());
        assert_eq!(shown[0].value, "/d");
        assert_eq!(shown[0].source, "flag");
        assert!(shown.iter().skip(1).all(|e| e.source == "default"));
    }
}
