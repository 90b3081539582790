//! `sync`'s settings: the upstream (a URL or a preset's name), its
//! headers, how it is shown in `dataSource`, the interval and staleness,
//! fetch limits, back-off. `None` without an upstream: nothing of sync's
//! is then set, and `sync` itself says what to pass.

use std::time::Duration;

use super::{Raw, SettingsError};
use crate::redact::redact_url;
use crate::sync::fetch::{FetchSettings, UpstreamRequest};
use crate::sync::state::SourceSettings;
use crate::sync::SyncSettings;
use crate::upstream::PUBLIC_FEED;

/// What `sync` is told when no upstream is set.
pub const NO_UPSTREAM: &str =
    "no upstream: pass --upstream URL (or set RESETCTL_UPSTREAM, or upstream = \"…\" in the config file)";

pub(super) fn build(
    raw: &Raw,
    keep: usize,
    lock_timeout: Duration,
) -> Result<Option<SyncSettings>, SettingsError> {
    let v = raw.values();
    let Some(given) = v.upstream.clone() else {
        return Ok(None);
    };
    let preset = (given == PUBLIC_FEED.name).then_some(PUBLIC_FEED);
    let url_text = preset.map_or(given, |p| p.url.to_owned());
    // The URL may carry a secret: errors name its redacted form only.
    let shown = redact_url(&url_text);
    let url = reqwest::Url::parse(&url_text)
        .map_err(|e| raw.invalid("upstream", format!("--upstream {shown} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(raw.invalid(
            "upstream",
            format!("--upstream {shown} must be an http:// or https:// URL"),
        ));
    }
    let public_url = v.public_url.clone().unwrap_or_else(|| shown.clone());
    let public = reqwest::Url::parse(&public_url).map_err(|e| {
        raw.invalid(
            "public_url",
            format!("--public-url {} is not a URL: {e}", redact_url(&public_url)),
        )
    })?;
    if public.password().is_some() || !public.username().is_empty() {
        return Err(raw.invalid(
            "public_url",
            "--public-url must not carry userinfo: it is published as dataSource.url",
        ));
    }
    let host = url.host_str().unwrap_or_default().to_owned();
    let interval_minutes = v.interval_minutes();
    let got = format!(" (the spec's minimum), got {interval_minutes}");
    minutes(raw, "interval_minutes", interval_minutes, &got)?;
    let max_age_minutes = v
        .max_age_minutes
        .unwrap_or(interval_minutes.saturating_mul(3));
    minutes(raw, "max_age_minutes", max_age_minutes, "")?;
    let page_url = v
        .page_url
        .clone()
        .or_else(|| preset.map(|p| p.page_url.to_owned()))
        .unwrap_or(format!("{}/", url.origin().ascii_serialization()));
    reqwest::Url::parse(&page_url).map_err(|e| {
        raw.invalid(
            "page_url",
            format!("--page-url {page_url:?} is not a URL: {e}"),
        )
    })?;
    let cap_minutes = minutes(raw, "backoff_cap_minutes", v.backoff_cap_minutes(), "")?;
    Ok(Some(SyncSettings {
        source: SourceSettings {
            source_id: v
                .source_id
                .clone()
                .or_else(|| preset.map(|p| p.source_id.to_owned()))
                .unwrap_or_else(|| host.clone()),
            name: v
                .source_name
                .clone()
                .or_else(|| preset.map(|p| p.source_name.to_owned()))
                .unwrap_or(host),
            url: public_url,
            page_url,
            interval_minutes,
            max_age_minutes,
        },
        upstream: UpstreamRequest {
            url: url_text,
            headers: upstream_headers(raw)?,
        },
        fetch: fetch(raw)?,
        backoff_cap: Duration::from_secs(u64::from(cap_minutes) * 60),
        force: false,
        lock_timeout,
        keep,
    }))
}

/// Fetch timeouts and limits.
fn fetch(raw: &Raw) -> Result<FetchSettings, SettingsError> {
    let v = raw.values();
    Ok(FetchSettings {
        connect_timeout: raw.seconds("connect_timeout", v.connect_timeout())?,
        timeout: raw.seconds("timeout", v.timeout())?,
        max_body_bytes: v.max_body_bytes(),
        max_redirects: v.max_redirects(),
        contact: v.user_agent_contact.clone(),
    })
}

/// `upstream-header "NAME: VALUE"`, checked; a bad one is named by its
/// header name only (its value may be a secret).
fn upstream_headers(raw: &Raw) -> Result<Vec<(String, String)>, SettingsError> {
    let invalid = |why: String| raw.invalid("upstream_header", why);
    raw.values()
        .upstream_header
        .iter()
        .flatten()
        .map(|text| {
            // Named by its name only, and only when it has one: the rest
            // may be the secret (`X-Key=secret` is not a name).
            let name = crate::redact::header_name(text).ok_or_else(|| {
                invalid(format!(
                    "--upstream-header must look like \"NAME: VALUE\" (for example \"Authorization: Bearer …\"), with a header name before the colon; {}",
                    crate::redact::NOT_SHOWN
                ))
            })?;
            let value = text.split_once(':').map_or("", |(_, value)| value).trim();
            reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| invalid(format!("--upstream-header: {name} is not a header name")))?;
            reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                invalid(format!("--upstream-header {name}: the value is not a valid header value"))
            })?;
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// `value` of the sync's `key`, within its row's range, or the sync's
/// error naming its flag: `--KEY must be RANGE` and `more`.
fn minutes(raw: &Raw, key: &'static str, value: u32, more: &str) -> Result<u32, SettingsError> {
    if raw.within(key, f64::from(value)) {
        return Ok(value);
    }
    let range = crate::config::setting(key).and_then(crate::config::Setting::range_said);
    Err(raw.invalid(
        key,
        format!(
            "--{} must be {}{more}",
            super::kebab(key),
            range.unwrap_or_default()
        ),
    ))
}
