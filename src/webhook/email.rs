//! E-mail endpoints: the same message every ready-made format sends
//! ([`super::message::message`]), as a plain-text and an HTML part in the
//! endpoint's language, sent over SMTP with TLS from the first byte
//! (`smtps://`, port 465 by default) or after STARTTLS, which is then
//! required (`smtp://`, port 587 by default): never in plain text.
//!
//! The target is one URL, kept with the endpoint like any other target
//! (never printed whole: its password is withheld like every secret):
//!
//! ```text
//! smtps://USER:PASSWORD@smtp.example.com:465?from=resets@example.com&to=ops@example.com,oncall@example.com
//! ```
//!
//! The SMTP server's host is resolved and checked like a webhook target's
//! ([`crate::outbound::resolve`]: public addresses only unless the endpoint
//! allows private targets), and the connection goes to the checked address
//! while TLS verifies the host's name against the system's roots
//! (`SSL_CERT_FILE` names another bundle). The message's `Message-ID`
//! carries the message id and the endpoint's, so a retried mail is shown
//! once and each endpoint's mail is a message of its own.

use std::net::SocketAddr;
use std::time::Duration;

use lettre::message::{header, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use super::message::{Line, Message};
use super::target::{EmailTarget, Security};
use crate::site::i18n::Lang;

/// Why an e-mail was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum EmailError {
    /// The target's server is not one this endpoint may reach, or does not resolve.
    #[error(transparent)]
    Outbound(#[from] crate::outbound::OutboundError),
    /// The message could not be made (an address the builder refused).
    #[error("the message could not be made: {0}")]
    Build(String),
    /// The SMTP exchange failed: the server's answer or why there is none.
    #[error("SMTP: {0}")]
    Smtp(String),
}

/// The message `id` tells, as an e-mail from `endpoint` to `target`:
/// `message`'s title as the subject, its text as the plain part and as the
/// HTML part (every line escaped), in `language`. Its Message-ID is the
/// message id and the endpoint's: the same on every retry (a mail client
/// shows a resent mail once), another for each endpoint (each mail is its
/// own message, as RFC 5322 asks). Its words are neutralised first, as
/// every format's are ([`Message::neutralised`]).
pub fn compose(
    target: &EmailTarget,
    message: &Message,
    (id, endpoint): (&str, &str),
    language: Lang,
) -> Result<lettre::Message, EmailError> {
    let message = &message.clone().neutralised();
    let mut builder = lettre::Message::builder()
        .from(target.from.clone())
        .subject(message.title.clone())
        .message_id(Some(format!("<{id}.{endpoint}@resetctl>")))
        .header(ContentLanguage(language.tag().to_owned()));
    for to in &target.to {
        builder = builder.to(to.clone());
    }
    let footer = message.words.email_footer;
    let plain = format!("{}\n\n-- \n{footer}\n", message.text());
    let html = html(message, language, footer);
    builder
        .multipart(MultiPart::alternative_plain_html(plain, html))
        .map_err(|e| EmailError::Build(e.to_string()))
}

/// The HTML part: the title as a heading, a paragraph per line, the links
/// as links, the footer; everything escaped by `maud`.
fn html(message: &Message, language: Lang, footer: &str) -> String {
    maud::html! {
        (maud::DOCTYPE)
        html lang=(language.tag()) {
            head { meta charset="utf-8"; title { (message.title) } }
            body {
                h1 { (message.title) }
                @for line in &message.lines {
                    @match line {
                        Line::Text(text) => p { (text) },
                        Line::Link(label, link) => p { (label) a href=(link.as_str()) { (link.as_str()) } },
                    }
                }
                hr;
                p { small { (footer) } }
            }
        }
    }
    .into_string()
}

/// `Content-Language`, which lettre has no type for.
#[derive(Clone, Debug)]
struct ContentLanguage(String);

impl header::Header for ContentLanguage {
    fn name() -> header::HeaderName {
        header::HeaderName::new_from_ascii_str("Content-Language")
    }

    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Self(s.to_owned()))
    }

    fn display(&self) -> header::HeaderValue {
        header::HeaderValue::new(Self::name(), self.0.clone())
    }
}

/// Sends `email` to `target`'s server within `timeout`, after checking the
/// server's addresses against `reach`; the SMTP status of the accepted
/// message (250).
pub async fn send(
    target: &EmailTarget,
    email: lettre::Message,
    reach: crate::outbound::Reach,
    timeout: Duration,
) -> Result<u16, EmailError> {
    let addresses: Vec<SocketAddr> = crate::outbound::resolve(&target.server_url(), reach).await?;
    let tls =
        TlsParameters::new(target.host.clone()).map_err(|e| EmailError::Smtp(e.to_string()))?;
    let tls = match target.security {
        Security::Implicit => Tls::Wrapper(tls),
        Security::StartTls => Tls::Required(tls),
    };
    let mut last = None;
    for address in addresses {
        let mut builder =
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(address.ip().to_string())
                .port(address.port())
                .tls(tls.clone())
                .timeout(Some(timeout));
        if let Some((user, password)) = &target.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        let transport = builder.build();
        match tokio::time::timeout(timeout, transport.send(email.clone())).await {
            Ok(Ok(answer)) => {
                return Ok(answer.code().to_string().parse().unwrap_or(250));
            }
            Ok(Err(e)) => last = Some(EmailError::Smtp(smtp_error_text(&e))),
            Err(_) => last = Some(EmailError::Smtp(format!("no answer within {timeout:?}"))),
        }
    }
    Err(last.unwrap_or_else(|| EmailError::Smtp("no address to connect to".into())))
}

/// An SMTP error in one line: the server's code and words, or the kind of
/// failure (never the credentials, which lettre does not print).
fn smtp_error_text(e: &lettre::transport::smtp::Error) -> String {
    let text = e.to_string();
    let mut line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.len() > 300 {
        let mut end = 300;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push('…');
    }
    line
}
