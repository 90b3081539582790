//! One attempt to deliver one event to one endpoint: the request of its
//! format (or the e-mail), sent through the outbound policy, and whether
//! the answer delivers it. The deliverer and `webhook test` both send
//! through here.

use std::time::Duration;

use serde_json::Value;

use super::endpoint::Endpoint;
use super::format::Format;
use super::message::Message;
use super::request::{render, render_message, Event};

/// The most of an answer's body read: refusals are a few hundred bytes, and
/// a longer body is not read (its status decides alone).
const BODY_CAP: u64 = 64 * 1024;
/// The most of a receiver's reason kept for the log, in characters.
const REASON_CHARS: usize = 200;

/// What a receiver answered: its status, the start of its body and the
/// wait it asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status (an SMTP server's reply code for e-mail).
    pub status: u16,
    /// The body, up to 64 KiB (empty when longer or unreadable).
    pub body: Vec<u8>,
    /// Its `Retry-After` header, as sent.
    pub retry_after: Option<String>,
}

impl Answer {
    /// An answer that is only a status (an SMTP reply).
    pub fn status(status: u16) -> Self {
        Self {
            status,
            ..Self::default()
        }
    }

    /// The receiver's reason for not taking a message, in its words: a
    /// JSON body's description (`description`, `error`, `message`, `msg`,
    /// `StatusMessage`) with its code (`error_code`, `code`,
    /// `StatusCode`), or a short text body (Slack's `invalid_payload`).
    /// Control characters are dropped and it is cut to 200 characters:
    /// the delivery log and `webhook deliveries` show it.
    pub fn reason(&self) -> Option<String> {
        let text = match json_object(&self.body) {
            Some(body) => {
                let first = |keys: &[&str]| {
                    keys.iter().find_map(|k| match body.get(*k) {
                        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                        Some(Value::Number(n)) => Some(n.to_string()),
                        _ => None,
                    })
                };
                let words = first(&["description", "error", "message", "msg", "StatusMessage"]);
                let code = first(&["error_code", "code", "StatusCode"]);
                match (words, code) {
                    (Some(words), Some(code)) => format!("{words} (code {code})"),
                    (Some(words), None) => words,
                    (None, Some(code)) => format!("code {code}"),
                    (None, None) => return None,
                }
            }
            // A text reason is one short line (Slack's `invalid_payload`),
            // never an error page.
            None => {
                let text = String::from_utf8_lossy(&self.body);
                let text = text.trim();
                if text.contains('\n') || text.starts_with('<') {
                    return None;
                }
                text.to_owned()
            }
        };
        let text: String = text
            .chars()
            .filter(|c| !c.is_control())
            .take(REASON_CHARS)
            .collect();
        (!text.is_empty()).then_some(text)
    }
}

/// The body as a JSON object, if it is one.
fn json_object(body: &[u8]) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Whether a receiver's answer delivers a message to an endpoint of
/// `format`: a 2xx (an SMTP 250 for e-mail), unless the body of that 2xx
/// says the service refused it, where the service defines such a body:
///
/// - Feishu custom bots answer 200 with a `code` other than 0 (and, in
///   older answers, `StatusCode`) when they refuse: 19001 for a wrong
///   token, 19021 a bad signature, 19024 no keyword, 11232 over the limit
///   ("Custom bot usage guide",
///   <https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot>);
/// - Telegram: every Bot API answer is an object whose `ok` says whether
///   the request succeeded (<https://core.telegram.org/bots/api#making-requests>);
/// - Slack: an incoming webhook answers `ok` as text, a refusal with a 4xx
///   and a text reason (`invalid_payload`, `no_service`; "Sending messages
///   using incoming webhooks", <https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks>),
///   and Slack's JSON answers carry `ok: false` when they refuse
///   (<https://docs.slack.dev/apis/web-api/#responses>);
/// - Bark: bark-server answers `{"code": …, "message": …}` with its status
///   in `code` (`route_push.go`), so a `code` other than 200 is a refusal.
///
/// Standard Webhooks define no body (any 2xx delivers), nor do Discord's
/// webhooks (204, or 200 with the message) or ntfy (200 with the message).
pub fn is_delivered(format: Format, answer: &Answer) -> bool {
    if !(200..300).contains(&answer.status) {
        return false;
    }
    let Some(body) = json_object(&answer.body) else {
        return true;
    };
    let is = |key: &str, value: i64| body.get(key).is_none_or(|v| *v == value);
    match format {
        Format::Feishu => is("code", 0) && is("StatusCode", 0),
        Format::Slack | Format::Telegram => body.get("ok") != Some(&Value::Bool(false)),
        Format::Bark => is("code", 200),
        Format::Standard | Format::Discord | Format::Ntfy | Format::Email => true,
    }
}

/// What an attempt's answer (or its failure) comes to, for the log and
/// whoever goes on from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether it delivered the message ([`is_delivered`]).
    pub delivered: bool,
    /// The status, when there was an answer.
    pub status: Option<u16>,
    /// Why not: the failure, or the receiver's reason (`refused: …`).
    pub error: Option<String>,
}

/// The [`Verdict`] of `answer` from an endpoint of `format`.
pub fn verdict(format: Format, answer: &Result<Answer, SendError>) -> Verdict {
    match answer {
        Ok(answer) => {
            let delivered = is_delivered(format, answer);
            Verdict {
                delivered,
                status: Some(answer.status),
                error: (!delivered)
                    .then(|| answer.reason().map(|r| format!("refused: {r}")))
                    .flatten(),
            }
        }
        Err(e) => Verdict {
            delivered: false,
            status: None,
            error: Some(e.to_string()),
        },
    }
}

/// Sends one signed event to a standard endpoint through the outbound
/// policy ([`crate::outbound`]): the target's addresses are checked again
/// and connected to exactly; no redirect is followed (a 3xx is a failed
/// attempt). Returns the status, or why there is none.
pub async fn send(
    contact: Option<&str>,
    endpoint: &Endpoint,
    event: &Event<'_>,
) -> Result<Answer, SendError> {
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
) -> Result<Answer, SendError> {
    if endpoint.format == Format::Email {
        return send_email(endpoint, message, id, endpoint.timeout())
            .await
            .map(Answer::status);
    }
    let request = render_message(endpoint, message)?;
    post(contact, endpoint, request).await
}

/// One request through the outbound policy; its answer.
async fn post(
    contact: Option<&str>,
    endpoint: &Endpoint,
    request: super::request::Request,
) -> Result<Answer, SendError> {
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
        Ok(answer) => {
            let status = answer.status().as_u16();
            let retry_after = answer
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // A body that cannot be read (too long, too slow) says nothing:
            // the status decides.
            let body = answer.body(BODY_CAP).await.unwrap_or_default();
            Ok(Answer {
                status,
                body,
                retry_after,
            })
        }
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
