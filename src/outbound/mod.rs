//! Every request this program makes to a URL it was given (an upstream, a
//! webhook target) goes through here: the one outbound-request policy.
//!
//! It decides, for every hop of a request:
//!
//! - **where it may go** ([`Reach`], by [`address::classify`]): a webhook
//!   target only to public addresses unless the operator allowed private
//!   ones; an upstream anywhere the operator configured it, but a redirect
//!   only to a public address or one of the same kind as the configured
//!   upstream's (so a hostile upstream cannot turn a sync into a request to
//!   the metadata service or the operator's own network). The request
//!   connects to exactly the addresses checked, so a name that changes its
//!   answer in between (DNS rebinding) gains nothing.
//! - **what crosses an origin**: the operator's headers and the URL's
//!   userinfo go to the configured origin (scheme, host and port) only; a
//!   redirect to another origin is followed without them. No `Referer` is
//!   ever sent (it would carry the configured URL, query included). A
//!   redirect from `https` to `http` is refused.
//! - **how long it may take**: a connect timeout per hop and one deadline
//!   for the whole exchange, redirects and body included, with a body cap
//!   enforced while streaming ([`Answer::body`]).
//!
//! Requests connect directly: a proxy from the environment is not used,
//! since it would connect somewhere other than the addresses checked.
//!
//! Errors have two forms: the full one (for the operator's log, `status`
//! and the local state) and [`OutboundError::public_text`], which names the
//! kind of problem only (no host, address or URL), for what is published.

pub mod address;
mod client;

pub use address::{classify, AddressKind};
pub use client::{parse_target, resolve, send, Answer, Outgoing, Policy, Reach};

use std::net::IpAddr;
use std::time::Duration;

/// The `User-Agent` of every outbound request: `resetctl/VERSION`, and the
/// operator's contact (`--user-agent-contact`) when set, so the operator of
/// a feed or a receiver can tell who is calling and whom to ask.
pub fn user_agent(contact: Option<&str>) -> String {
    let version = concat!("resetctl/", env!("CARGO_PKG_VERSION"));
    match contact {
        Some(contact) => format!("{version} (+{contact})"),
        None => version.to_owned(),
    }
}

/// Checks an operator's contact for the `User-Agent`: an `http(s)://` URL,
/// a `mailto:` URL or an e-mail address, printable ASCII without spaces or
/// parentheses, at most 200 characters.
pub fn check_contact(text: &str) -> Result<(), ContactError> {
    let printable = !text.is_empty()
        && text.len() <= 200
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"()\\".contains(&b));
    let lower = text.to_ascii_lowercase();
    let shaped = ((lower.starts_with("https://") || lower.starts_with("http://"))
        && url::Url::parse(text).is_ok_and(|u| u.host_str().is_some()))
        || lower.starts_with("mailto:")
        || text.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty() && host.contains('.') && !host.contains('@')
        });
    if printable && shaped {
        Ok(())
    } else {
        Err(ContactError(text.to_owned()))
    }
}

/// A `user-agent-contact` that is not a URL or an e-mail address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "user-agent-contact {0:?} must be an http(s):// URL, a mailto: URL or an e-mail address \
     (printable, no spaces or parentheses, at most 200 characters)"
)]
pub struct ContactError(pub String);

/// Why an outbound request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutboundError {
    /// The URL is not an absolute `http://` or `https://` URL with a host.
    #[error("{0} is not an http:// or https:// URL with a host")]
    Scheme(String),
    /// The host does not resolve.
    #[error("cannot resolve {host}: {why}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        why: String,
    },
    /// An address the policy does not allow.
    #[error("{host} resolves to {address}, {}; refused{}", kind.describe(), if *redirect { " as a redirect target" } else { "" })]
    Refused {
        /// The host.
        host: String,
        /// The address.
        address: IpAddr,
        /// Its kind.
        kind: AddressKind,
        /// Whether a redirect led there (else it is the configured target).
        redirect: bool,
    },
    /// A redirect from `https` to `http`.
    #[error("a redirect from https:// to http:// was refused")]
    Downgrade,
    /// A redirect to something other than `http(s)`.
    #[error("a redirect to a URL that is not http:// or https:// was refused")]
    RedirectScheme,
    /// More redirects than allowed, or a loop.
    #[error("redirects: more than {0} or a loop")]
    TooManyRedirects(usize),
    /// A redirect without a usable `Location`.
    #[error("a redirect without a usable Location header")]
    BadLocation,
    /// No connection could be made.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The deadline passed.
    #[error("no answer in time (connect {connect:?}, whole request {whole:?})")]
    Timeout {
        /// The connect timeout.
        connect: Duration,
        /// The whole-request deadline.
        whole: Duration,
    },
    /// The body is over the limit.
    #[error("the body exceeds the limit of {0} bytes")]
    TooLarge(u64),
    /// The body broke off or could not be decoded.
    #[error("the body could not be read completely: {0}")]
    Body(String),
    /// Another failure of the HTTP exchange.
    #[error("{0}")]
    Http(String),
    /// The client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

impl OutboundError {
    /// The error as it may be published: the kind of problem, never a
    /// host, an address, a URL or a library's own text.
    pub fn public_text(&self) -> String {
        match self {
            OutboundError::Scheme(_) => "the URL is not an http:// or https:// URL".into(),
            OutboundError::Resolve { .. } => "cannot resolve the host".into(),
            OutboundError::Refused {
                kind,
                redirect: true,
                ..
            } => format!("a redirect to {} was refused", kind.describe()),
            OutboundError::Refused { kind, .. } => {
                format!("the target is {}; refused", kind.describe())
            }
            OutboundError::Connect(_) => "cannot connect".into(),
            OutboundError::Body(_) => "the body could not be read completely".into(),
            OutboundError::Http(_) => "the HTTP exchange failed".into(),
            OutboundError::Client(_) => "cannot set up the HTTP client".into(),
            // These texts hold only this program's own words and settings.
            e @ (OutboundError::Downgrade
            | OutboundError::RedirectScheme
            | OutboundError::TooManyRedirects(_)
            | OutboundError::BadLocation
            | OutboundError::Timeout { .. }
            | OutboundError::TooLarge(_)) => e.to_string(),
        }
    }
}

/// The whole error chain of `e` in one line, without repeats.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let part = inner.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contacts_are_urls_or_addresses() {
        for good in [
            "https://example.org/ops",
            "mailto:ops@example.org",
            "ops@example.org",
        ] {
            assert_eq!(check_contact(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "ftp://example.org",
            "just words",
            "https://",
            "ops@localhost",
            "https://example.org/(x)",
            "a\u{7}b@example.org",
        ] {
            assert!(check_contact(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            user_agent(Some("ops@example.org")),
            concat!(
                "resetctl/",
                env!("CARGO_PKG_VERSION"),
                " (+ops@example.org)"
            )
        );
        assert_eq!(
            user_agent(None),
            concat!("resetctl/", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn public_texts_name_no_host_or_address() {
        let refused = OutboundError::Refused {
            host: "internal.example".into(),
            address: "127.0.0.1".parse().unwrap(),
            kind: AddressKind::Loopback,
            redirect: true,
        };
        assert_eq!(
            refused.public_text(),
            "a redirect to a loopback address was refused"
        );
        assert!(refused.to_string().contains("internal.example"));
        let resolve = OutboundError::Resolve {
            host: "secret.internal".into(),
            why: "nope".into(),
        };
        assert!(!resolve.public_text().contains("secret"));
    }
}
