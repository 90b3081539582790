//! One attempt to deliver one event to one endpoint: the request of its
//! format (or the e-mail), sent through the outbound policy, and whether
//! the answer delivers it. The deliverer and `webhook test` both send
//! through here.

use std::time::Duration;

use super::endpoint::Endpoint;
use super::message::Message;
use super::request::{render, render_message, Event};

/// Whether a receiver's answer delivers an event: any 2xx.
pub fn is_delivered(status: u16) -> bool {
    (200..300).contains(&status)
}

/// Sends one signed event to a standard endpoint through the outbound
/// policy ([`crate::outbound`]): the target's addresses are checked again
/// and connected to exactly; no redirect is followed (a 3xx is a failed
/// attempt). Returns the status, or why there is none.
pub async fn send(
    contact: Option<&str>,
    endpoint: &Endpoint,
    event: &Event<'_>,
) -> Result<u16, SendError> {
    let signed_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let request = render(endpoint, event, signed_at)?;
    post(contact, endpoint, request).await
}

/// Sends `message` (message id `id`) to an endpoint of a ready-made
/// format, or as an e-mail, as [`send`] does.
pub async fn send_message(
    contact: Option<&str>,
    endpoint: &Endpoint,
    message: &Message,
    id: &str,
) -> Result<u16, SendError> {
    if endpoint.format == super::format::Format::Email {
        return send_email(endpoint, message, id, endpoint.timeout()).await;
    }
    let request = render_message(endpoint, message)?;
    post(contact, endpoint, request).await
}

/// One request through the outbound policy; its status.
async fn post(
    contact: Option<&str>,
    endpoint: &Endpoint,
    request: super::request::Request,
) -> Result<u16, SendError> {
    let timeout = endpoint.timeout();
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

/// Sends `message` to an e-mail endpoint ([`super::email`]): the SMTP
/// status of the accepted message (250), or why it was not.
async fn send_email(
    endpoint: &Endpoint,
    message: &Message,
    id: &str,
    timeout: Duration,
) -> Result<u16, SendError> {
    let url = reqwest::Url::parse(&endpoint.url)
        .map_err(|e| super::target::TargetError::Url(e.to_string()))
        .map_err(super::request::RenderError::from)?;
    let target =
        super::target::EmailTarget::parse(&url).map_err(super::request::RenderError::from)?;
    let email = super::email::compose(&target, message, (id, &endpoint.id), endpoint.language)?;
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
