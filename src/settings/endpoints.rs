//! What `webhook add` keeps with a new endpoint, so that every process
//! that delivers agrees: whether it may reach private addresses, its
//! request timeout, the base of the record pages its messages link to
//! (none while the pages are not served), and the contact in its
//! requests' `User-Agent`.

use super::{Raw, SettingsError};
use crate::api::ServeOptions;
use crate::model::record_pages_base;
use crate::webhook::endpoint::check_timeout;

/// A new endpoint's delivery settings.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointDefaults {
    /// Whether a target on a loopback, private or link-local address is allowed.
    pub allow_private_targets: bool,
    /// The request timeout, in seconds.
    pub timeout_seconds: f64,
    /// The base of the record pages, when they are served.
    pub record_pages: Option<String>,
    /// The contact in the `User-Agent` of its requests.
    pub user_agent_contact: Option<String>,
}

impl EndpointDefaults {
    pub(super) fn build(raw: &Raw, serve: &ServeOptions) -> Result<Self, SettingsError> {
        let v = raw.values();
        let timeout_seconds = v.webhook_timeout();
        check_timeout(timeout_seconds)
            .map_err(|e| raw.invalid("webhook_timeout", e.to_string()))?;
        let record_pages = record_pages_base(serve.public_base_url.as_ref(), serve.site)
            .map(|base| base.as_str().to_owned());
        Ok(Self {
            allow_private_targets: v.allow_private_targets.unwrap_or(false),
            timeout_seconds,
            record_pages,
            user_agent_contact: v.user_agent_contact.clone(),
        })
    }
}
