//! E-mail endpoints: the same message every ready-made format sends
//! ([`super::request::message`]), as a plain-text and an HTML part in the
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

use lettre::message::{header, Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use reqwest::Url;

use super::request::{Message, TargetError};
use crate::site::i18n::Lang;

/// How the connection is secured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Security {
    /// TLS from the first byte (`smtps://`).
    Implicit,
    /// A plain connection upgraded with STARTTLS, which must succeed (`smtp://`).
    StartTls,
}

/// An e-mail target, read from its URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmailTarget {
    /// How the connection is secured.
    pub security: Security,
    /// The SMTP server's host (the name TLS verifies).
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The user and password, when the server wants them.
    pub credentials: Option<(String, String)>,
    /// The sender.
    pub from: Mailbox,
    /// The recipients.
    pub to: Vec<Mailbox>,
}

/// How an e-mail target is written (every refusal of one says it).
pub const EMAIL_TARGET_RULE: &str = "an e-mail target is smtps://USER:PASSWORD@HOST[:465]?from=ADDRESS&to=ADDRESS[,ADDRESS…] (TLS), or smtp://…:587?… (STARTTLS, required)";

impl EmailTarget {
    /// The target as `webhook show` prints it to its operator: every part
    /// but the password, which stands as `…` (the user is shown).
    pub fn shown(&self) -> String {
        let scheme = match self.security {
            Security::Implicit => "smtps",
            Security::StartTls => "smtp",
        };
        let user = self
            .credentials
            .as_ref()
            .map(|(user, _)| format!("{user}:…@"))
            .unwrap_or_default();
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let to: Vec<String> = self.to.iter().map(ToString::to_string).collect();
        format!(
            "{scheme}://{user}{host}:{}?from={}&to={}",
            self.port,
            self.from,
            to.join(",")
        )
    }

    /// Reads `url`; the error names what is missing or wrong.
    pub fn parse(url: &Url) -> Result<Self, TargetError> {
        let bad = |why: &str| TargetError::Email(format!("{why}; {EMAIL_TARGET_RULE}"));
        let security = match url.scheme() {
            "smtps" => Security::Implicit,
            "smtp" => Security::StartTls,
            _ => return Err(bad("the scheme is not smtps:// or smtp://")),
        };
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("no SMTP server host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = url.port().unwrap_or(match security {
            Security::Implicit => 465,
            Security::StartTls => 587,
        });
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(text)
                .decode_utf8()
                .map(|t| t.into_owned())
                .map_err(|_| bad("the user or password is not UTF-8 once decoded"))
        };
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            (user, Some(password)) if !user.is_empty() => Some((decode(user)?, decode(password)?)),
            _ => return Err(bad("a user needs a password, and a password a user")),
        };
        let mut from = None;
        let mut to = Vec::new();
        for (key, value) in url.query_pairs() {
            match key.as_ref() {
                "from" if from.is_none() => {
                    from =
                        Some(value.parse::<Mailbox>().map_err(|_| {
                            bad(&format!("from={value:?} is not an e-mail address"))
                        })?)
                }
                "to" => {
                    for address in value.split(',').filter(|a| !a.trim().is_empty()) {
                        to.push(address.trim().parse::<Mailbox>().map_err(|_| {
                            bad(&format!("to={address:?} is not an e-mail address"))
                        })?);
                    }
                }
                other => {
                    return Err(bad(&format!(
                        "{other}= is not a parameter of it (from and to are, from once)"
                    )))
                }
            }
        }
        let from = from.ok_or_else(|| bad("no from= sender"))?;
        if to.is_empty() {
            return Err(bad("no to= recipient"));
        }
        Ok(Self {
            security,
            host,
            port,
            credentials,
            from,
            to,
        })
    }

    /// The URL of its server (scheme, host, port), to resolve and check.
    pub fn server_url(&self) -> Url {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let scheme = match self.security {
            Security::Implicit => "smtps",
            Security::StartTls => "smtp",
        };
        Url::parse(&format!("{scheme}://{host}:{}", self.port)).expect("a server URL parses")
    }
}

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
/// own message, as RFC 5322 asks).
pub fn compose(
    target: &EmailTarget,
    message: &Message,
    (id, endpoint): (&str, &str),
    language: Lang,
) -> Result<lettre::Message, EmailError> {
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
                @for line in &message.lines { p { (line) } }
                @for (label, link) in message.links() {
                    p { (label) a href=(link.as_str()) { (link.as_str()) } }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<EmailTarget, TargetError> {
        EmailTarget::parse(&Url::parse(text).unwrap())
    }

    #[test]
    fn a_target_names_its_server_security_sender_and_recipients() {
        let t = parse("smtps://u%40x:p%2Fw@mail.example.com?from=a@example.com&to=b@example.com,c@example.com").unwrap();
        assert_eq!(t.security, Security::Implicit);
        assert_eq!((t.host.as_str(), t.port), ("mail.example.com", 465));
        assert_eq!(t.credentials, Some(("u@x".into(), "p/w".into())));
        assert_eq!(t.to.len(), 2);
        let t = parse("smtp://mail.example.com?from=a@example.com&to=b@example.com").unwrap();
        assert_eq!(
            (t.security, t.port, t.credentials),
            (Security::StartTls, 587, None)
        );
        for (bad, says) in [
            (
                "https://mail.example.com?from=a@example.com&to=b@example.com",
                "scheme",
            ),
            ("smtps://mail.example.com?to=b@example.com", "no from="),
            ("smtps://mail.example.com?from=a@example.com", "no to="),
            (
                "smtps://mail.example.com?from=nobody&to=b@example.com",
                "from=\"nobody\"",
            ),
            (
                "smtps://u@mail.example.com?from=a@example.com&to=b@example.com",
                "needs a password",
            ),
            (
                "smtps://mail.example.com?from=a@example.com&to=b@example.com&cc=c@example.com",
                "cc=",
            ),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(says) && e.contains("smtps://USER:PASSWORD@HOST"),
                "{bad}: {e}"
            );
        }
    }
}
