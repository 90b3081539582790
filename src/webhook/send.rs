//! One attempt to deliver one event to one endpoint: the request of its
//! format (or the e-mail), sent through the outbound policy, and whether
//! the answer delivers it. The deliverer and `webhook test` both send
//! through here.

use std::time::Duration;

use super::endpoint::Endpoint;
use super::request::{render, Event};

/// Whether a receiver's answer delivers an event: any 2xx.
pub fn is_delivered(status: u16) -> bool {
    (200..300).contains(&status)
}

/// Sends one event through the outbound policy
/// ([`crate::outbound`]): the target's addresses are checked again and
/// connected to exactly; no redirect is followed (a 3xx is a failed
/// attempt). Returns the status, or why there is none.
pub async fn send(
    contact: Option<&str>,
    endpoint: &Endpoint,
    event: &Event<'_>,
) -> Result<u16, SendError> {
    let signed_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let mut event = event.clone();
    if let (Some(base), Some(record)) = (&endpoint.record_pages, event.record) {
        event.page = Some(format!(
            "{base}{}",
            crate::model::record_page_path(&record.id)
        ));
    }
    let timeout = endpoint.timeout();
    if endpoint.format == super::format::Format::Email {
        return send_email(endpoint, &event, timeout).await;
    }
    let request = render(endpoint, &event, signed_at)?;
    let policy = crate::outbound::Policy {
        reach: endpoint.reach(),
        connect_timeout: timeout,
        timeout,
        max_redirects: 0,
        user_agent: crate::outbound::user_agent(endpoint.contact(contact)),
        decompress: false,
    };
    let outgoing = crate::outbound::Outgoing {
        method: reqwest::Method::POST,
        url: request.url,
        origin_headers: Vec::new(),
        headers: request.headers,
        body: Some(request.body),
    };
    match crate::outbound::send(&policy, outgoing).await {
        Ok(answer) => Ok(answer.status().as_u16()),
        Err(crate::outbound::OutboundError::Timeout { .. }) => Err(SendError::Timeout(timeout)),
        Err(crate::outbound::OutboundError::Refused {
            host,
            address,
            kind,
            ..
        }) => Err(SendError::Private {
            host,
            address: address.to_string(),
            kind: kind.describe(),
            endpoint: endpoint.id.clone(),
        }),
        Err(e) => Err(SendError::Outbound(e)),
    }
}

/// Sends `event` to an e-mail endpoint ([`super::email`]): the SMTP
/// status of the accepted message (250), or why it was not.
async fn send_email(
    endpoint: &Endpoint,
    event: &Event<'_>,
    timeout: Duration,
) -> Result<u16, SendError> {
    let url = reqwest::Url::parse(&endpoint.url)
        .map_err(|e| super::target::TargetError::Url(e.to_string()))
        .map_err(super::request::RenderError::from)?;
    let target =
        super::target::EmailTarget::parse(&url).map_err(super::request::RenderError::from)?;
    let message = super::request::message(event, endpoint.language, endpoint.zone());
    let email = super::email::compose(
        &target,
        &message,
        (event.id, &endpoint.id),
        endpoint.language,
    )?;
    match super::email::send(&target, email, endpoint.reach(), timeout).await {
        Ok(code) => Ok(code),
        Err(super::email::EmailError::Outbound(crate::outbound::OutboundError::Refused {
            host,
            address,
            kind,
            ..
        })) => Err(SendError::Private {
            host,
            address: address.to_string(),
            kind: kind.describe(),
            endpoint: endpoint.id.clone(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Why an attempt has no HTTP status; its `Display` text is what the
/// delivery log records.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The event cannot be rendered for the endpoint.
    #[error(transparent)]
    Render(#[from] super::request::RenderError),
    /// No answer within the endpoint's timeout.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The target resolves to a private address the endpoint may not reach.
    #[error("{host} resolves to {address}, {kind}; refused (allow it with `resetctl webhook set {endpoint} --allow-private-targets`)")]
    Private {
        /// The target's host.
        host: String,
        /// The address it resolved to.
        address: String,
        /// What kind of address that is.
        kind: &'static str,
        /// The endpoint, for the command that allows it.
        endpoint: String,
    },
    /// Any other failure of the outbound request.
    #[error(transparent)]
    Outbound(crate::outbound::OutboundError),
    /// An e-mail was not accepted.
    #[error(transparent)]
    Email(#[from] super::email::EmailError),
}
