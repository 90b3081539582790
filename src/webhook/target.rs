//! Targets: what an endpoint's target is and whether it fits its format,
//! decided once for `webhook add`, every attempt and `webhook show`. An
//! `http(s)` URL with a host (Telegram's with its chat, Bark's with its
//! device key), or an e-mail target (`smtps://` or `smtp://` with a sender
//! and recipients). No I/O: whether the host may be reached is
//! [`crate::outbound`]'s to say.

use lettre::message::Mailbox;
use reqwest::Url;

use super::format::Format;

/// A target URL that does not fit its format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not a URL.
    #[error("{0}")]
    Url(String),
    /// A Telegram target without its chat.
    #[error("a telegram target needs ?chat_id=<chat> (https://api.telegram.org/bot<token>/sendMessage?chat_id=…)")]
    TelegramChat,
    /// A Bark target without its device key.
    #[error("a bark target is https://api.day.app/<device key>")]
    BarkKey,
    /// An e-mail target that cannot be used (the words say why and how
    /// one is written).
    #[error("{0}")]
    Email(String),
}

/// The URL whose host `format`'s messages go to, from an endpoint's
/// target `text`, checked as the format needs (an `http(s)` URL with a
/// host; Telegram's chat id, Bark's device key; an e-mail target's
/// sender and recipients): what `webhook add` resolves and checks, and
/// what every attempt connects to.
pub fn target_server(format: Format, text: &str) -> Result<Url, TargetError> {
    if format == Format::Email {
        let url = Url::parse(text).map_err(|_| {
            TargetError::Email(format!(
                "{} is not a URL; an e-mail target is {EMAIL_TARGET_FORMS}",
                crate::redact::redact_target(text),
            ))
        })?;
        return EmailTarget::parse(&url).map(|t| t.server_url());
    }
    let url = crate::outbound::parse_target(text).map_err(|e| TargetError::Url(e.to_string()))?;
    match format {
        Format::Telegram => telegram_parts(&url).map(|_| ())?,
        Format::Bark => bark_key(&url).map(|_| ())?,
        _ => {}
    }
    Ok(url)
}

pub(super) fn telegram_parts(url: &Url) -> Result<(Url, String), TargetError> {
    let chat_id = url
        .query_pairs()
        .find(|(k, _)| k == "chat_id")
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty())
        .ok_or(TargetError::TelegramChat)?;
    let mut endpoint = url.clone();
    endpoint.set_query(None);
    if !endpoint.path().ends_with("/sendMessage") {
        let path = format!("{}/sendMessage", endpoint.path().trim_end_matches('/'));
        endpoint.set_path(&path);
    }
    Ok((endpoint, chat_id))
}

pub(super) fn bark_key(url: &Url) -> Result<String, TargetError> {
    url.path_segments()
        .and_then(|mut s| s.next_back().map(str::to_owned))
        .filter(|k| !k.is_empty())
        .ok_or(TargetError::BarkKey)
}

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

/// How an e-mail target is written, its two forms (`webhook add --help`
/// and every refusal of one say it).
pub const EMAIL_TARGET_FORMS: &str = "smtps://USER:PASSWORD@HOST[:465]?from=ADDRESS&to=ADDRESS[,ADDRESS…] (TLS), or smtp://USER:PASSWORD@HOST:587?from=ADDRESS&to=ADDRESS[,ADDRESS…] (STARTTLS, required)";

impl EmailTarget {
    /// The target as `webhook show` prints it to its operator: every part
    /// but the password, which stands as `…` (the user is shown).
    pub fn shown(&self) -> String {
        let user = self
            .credentials
            .as_ref()
            .map(|(user, _)| format!("{user}:…@"))
            .unwrap_or_default();
        format!(
            "{}://{user}{}?from={}&to={}",
            self.scheme(),
            self.server(),
            self.from,
            self.recipients()
        )
    }

    /// The target as lists show it (`webhook list`, `status`): its server
    /// and recipients, `smtps://mail.example.org:465?to=ops@example.org`,
    /// without user or password (`webhook show` adds the user and sender).
    pub fn listed(&self) -> String {
        format!(
            "{}://{}?to={}",
            self.scheme(),
            self.server(),
            self.recipients()
        )
    }

    fn scheme(&self) -> &'static str {
        match self.security {
            Security::Implicit => "smtps",
            Security::StartTls => "smtp",
        }
    }

    /// `host:port`, an IPv6 host in brackets.
    fn server(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn recipients(&self) -> String {
        let to: Vec<String> = self.to.iter().map(ToString::to_string).collect();
        to.join(",")
    }

    /// Reads `url`; the error names what is missing or wrong.
    pub fn parse(url: &Url) -> Result<Self, TargetError> {
        let bad = |why: &str| {
            TargetError::Email(format!("{why}; an e-mail target is {EMAIL_TARGET_FORMS}"))
        };
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
