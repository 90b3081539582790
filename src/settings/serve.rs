//! `serve`'s settings: listeners, file watching, republishing, the pages,
//! MCP origins, connection caps and timeouts, record stream caps.

use std::path::Path;
use std::time::Duration;

use super::{Raw, SettingsError};
use crate::api::{ConnectionLimits, ServeOptions, StreamLimits};
use crate::model::BaseUrl;
use crate::reload::WatchMode;

/// What `serve` runs with.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// The public listener: an address or a host name with a port.
    pub listen: String,
    /// The admin listener, when one is wanted.
    pub admin_listen: Option<String>,
    /// The listen backlog.
    pub backlog: u32,
    /// How often a standalone instance republishes (`None`: it does not).
    pub republish: Option<Duration>,
    /// `republish-every`, also when republishing is off (what the settings say).
    pub republish_every: Duration,
    /// What the server itself is given.
    pub options: ServeOptions,
}

impl ServeSettings {
    pub(super) fn build(
        raw: &Raw,
        data_dir: &Path,
        match_tolerance_minutes: u32,
    ) -> Result<Self, SettingsError> {
        let v = raw.values();
        let watch = match v.watch().as_str() {
            "auto" => WatchMode::Auto,
            "poll" => WatchMode::Poll,
            other => {
                return Err(raw.invalid("watch", format!("watch = {other:?} is not auto or poll")))
            }
        };
        // Checked whether or not republishing is on: a bad value is found now.
        let every = raw.seconds("republish_every", v.republish_every())?;
        let public_base_url = v
            .public_base_url
            .as_deref()
            .map(|text| public_base_url(raw, text))
            .transpose()?;
        let site = !v.no_site.unwrap_or(false);
        let site_name = site_name(raw, &v.site_name())?;
        let backlog = raw.whole("listen_backlog", u64::from(v.listen_backlog()))? as u32;
        Ok(Self {
            listen: v.listen(),
            admin_listen: v.admin_listen.clone(),
            backlog,
            republish: v.republish.unwrap_or(false).then_some(every),
            republish_every: every,
            options: ServeOptions {
                data_dir: data_dir.to_owned(),
                watch,
                limits: super::limits::build(raw)?,
                mcp_allowed_origins: v.mcp_allow_origin.clone().unwrap_or_default(),
                connections: connection_limits(raw)?,
                public_base_url,
                streams: stream_limits(raw)?,
                site,
                site_name,
                match_tolerance_ms: super::minutes_ms(match_tolerance_minutes),
            },
        })
    }
}

/// A `public-base-url` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("public-base-url {shown:?} must be an absolute http:// or https:// URL without query or fragment: {why}")]
pub struct PublicBaseUrlError {
    /// The value, redacted (it may carry user info).
    pub shown: String,
    /// What is wrong.
    pub why: crate::model::BaseUrlError,
}

/// `public-base-url`: the one check and message (the setting, `webhook set`).
pub fn parse_public_base_url(text: &str) -> Result<BaseUrl, PublicBaseUrlError> {
    BaseUrl::parse(text).map_err(|why| PublicBaseUrlError {
        shown: crate::redact::redact_url(text),
        why,
    })
}

fn public_base_url(raw: &Raw, text: &str) -> Result<BaseUrl, SettingsError> {
    parse_public_base_url(text).map_err(|e| raw.invalid("public_base_url", e.to_string()))
}

/// The longest `site-name`, in characters.
const MAX_SITE_NAME: usize = 80;

/// `site-name`: 1 to [`MAX_SITE_NAME`] characters once trimmed, none a
/// control character (it is shown in every page's header and title).
fn site_name(raw: &Raw, text: &str) -> Result<String, SettingsError> {
    let name = text.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_SITE_NAME || name.chars().any(char::is_control) {
        return Err(raw.invalid(
            "site_name",
            format!(
                "site-name must be 1 to {MAX_SITE_NAME} characters without control characters, got {text:?}"
            ),
        ));
    }
    Ok(name.to_owned())
}

/// The record stream's caps and heartbeat.
fn stream_limits(raw: &Raw) -> Result<StreamLimits, SettingsError> {
    let v = raw.values();
    let heartbeat = raw.seconds("stream_heartbeat", v.stream_heartbeat())?;
    let per_client = v.stream_max_per_client();
    if !raw.within("stream_max_per_client", f64::from(per_client)) {
        return Err(raw.invalid(
            "stream_max_per_client",
            "stream-max-per-client and stream-max must be at least 1",
        ));
    }
    let total = v.stream_max() as usize;
    if !raw.within("stream_max", total as f64) {
        return Err(raw.invalid(
            "stream_max",
            "stream-max-per-client and stream-max must be at least 1",
        ));
    }
    Ok(StreamLimits {
        per_client,
        total,
        heartbeat,
    })
}

/// The connection caps and timeouts.
fn connection_limits(raw: &Raw) -> Result<ConnectionLimits, SettingsError> {
    let v = raw.values();
    let max_head_bytes = raw.count("max_head_bytes", v.max_head_bytes())?;
    Ok(ConnectionLimits {
        header_timeout: raw.seconds("header_timeout", v.header_timeout())?,
        body_timeout: raw.seconds("body_timeout", v.body_timeout())?,
        max_connections: raw.count("max_connections", v.max_connections())?,
        max_connections_per_ip: raw.count("max_connections_per_ip", v.max_connections_per_ip())?,
        max_head_bytes,
    })
}
