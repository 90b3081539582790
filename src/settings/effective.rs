//! What the settings are, as an operator reads them: every key's
//! effective value, spelled as the config file would spell it, and where
//! it came from (a flag, the environment, the config file, or its
//! default). Made from the validated [`Settings`], so what is shown is what
//! a command uses; a value that may hold a secret is shown redacted
//! ([`crate::redact`]). `serve --check` prints it; the precedence of every
//! key is tested through it.

use super::Settings;
use crate::config::{FileConfig, Kind, Mark, Source};

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

/// The value of `key` (snake case) in `settings`, as a command uses it:
/// a key whose value is made from other keys, the machine or a preset,
/// or is redacted, shows that ([`shown_as_used`]); a key only `sync` reads
/// shows `(no upstream)` without an upstream; every other key shows its
/// merged value (its row's default included) as the config file spells
/// it, `false` for a switch that is off, `(none)` for no value, and
/// `(not shown)` for a value its row marks [`Mark::Secret`].
fn value_of(settings: &Settings, key: &str) -> String {
    if let Some(value) = shown_as_used(settings, key) {
        return value;
    }
    let row =
        crate::config::setting(key).unwrap_or_else(|| unreachable!("a key without its row: {key}"));
    if row.commands == ["sync"] && settings.sync.is_none() {
        return NO_UPSTREAM.to_owned();
    }
    match settings.values.text_of(key) {
        Some(_) if row.has(Mark::Secret) => crate::redact::NOT_SHOWN.to_owned(),
        Some(value) => value,
        None if row.kind == Kind::Switch => "false".to_owned(),
        None => "(none)".to_owned(),
    }
}

/// What `--check` shows of a sync key without an upstream.
const NO_UPSTREAM: &str = "(no upstream)";

/// The value of a key whose shown value is not its merged one: made from
/// other keys or the machine (the data dir, the quota and its store,
/// presets of the sync), normalised by its builder (client keys, the
/// site's name), or redacted; `None` for every other key.
fn shown_as_used(settings: &Settings, key: &str) -> Option<String> {
    let options = &settings.serve.options;
    let limits = &options.limits;
    Some(match key {
        "data_dir" => settings.data_dir.display().to_string(),
        "actor" => settings
            .actor
            .clone()
            .unwrap_or_else(|| "($USER@hostname)".to_owned()),
        "admin_listen" => settings
            .serve
            .admin_listen
            .clone()
            .unwrap_or_else(|| "(off)".to_owned()),
        "public_base_url" => or_none(
            options
                .public_base_url
                .as_ref()
                .map(|b| crate::redact::redact_url(b.as_str())),
        ),
        "site_name" => options.site_name.clone(),
        "rate_limit" => limits
            .policy
            .map_or_else(|| "(off)".to_owned(), |p| p.to_string()),
        "no_rate_limit" => limits.policy.is_none().to_string(),
        "rate_limit_store" => limits.store_shown(),
        "trust_proxy" => list(
            limits
                .client_keys
                .trusted_proxies
                .iter()
                .map(ToString::to_string),
        ),
        "client_ip_header" => limits.client_keys.header.name().to_owned(),
        "flood_guard" => limits.flood.map_or_else(
            || "off".to_owned(),
            |(rate, burst)| format!("{rate}/{burst}"),
        ),
        _ => return of_sync(settings, key),
    })
}

/// The value of a key of the upstream sync made from the upstream or its
/// preset (`(no upstream)` without one), or `None` for another key.
fn of_sync(settings: &Settings, key: &str) -> Option<String> {
    let synced = |f: &dyn Fn(&crate::sync::SyncSettings) -> String| {
        settings
            .sync
            .as_ref()
            .map_or_else(|| NO_UPSTREAM.to_owned(), f)
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
        "max_age_minutes" => synced(&|s| s.source.max_age_minutes.to_string()),
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
