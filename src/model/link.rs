//! Which URLs become links, in any output: the one rule every renderer
//! follows (the status and record pages, the Atom feed, the calendar, the
//! webhook formats). A record's `source.url` is data from an upstream or an
//! operator; only an absolute `http://` or `https://` URL with a host is
//! ever made a link (never `javascript:`, `data:`, an app's own scheme, a
//! relative reference, or a URL with userinfo, which reads as another host), and it is used in the form the URL parser writes,
//! where spaces, quotes and angle brackets are percent-encoded.
//!
//! The record keeps the URL as given (the API serves it unchanged); only
//! what outputs make clickable passes through here.
//!
//! Links to this instance's own pages are made here too: the public base
//! URL ([`BaseUrl`]) and the stable path of a record's page
//! ([`record_page_path`]), which the pages, the feeds and the webhook
//! formats all use.

/// A URL that may be made a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link(String);

impl Link {
    /// `text` as a link, when it is an absolute `http(s)` URL with a host.
    pub fn parse(text: &str) -> Option<Self> {
        if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return None;
        }
        let url = url::Url::parse(text).ok()?;
        // Userinfo reads as a host to a person (`https://x.com@evil.example/`).
        let plain = url.username().is_empty() && url.password().is_none();
        (matches!(url.scheme(), "http" | "https")
            && url.host_str().is_some_and(|h| !h.is_empty())
            && plain)
            .then(|| Link(url.into()))
    }

    /// The link's URL.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl super::Source {
    /// The source post's URL when it may be a link ([`Link`]).
    pub fn link(&self) -> Option<Link> {
        self.url.as_deref().and_then(Link::parse)
    }
}

/// Why a configured base URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseUrlError {
    /// Not an absolute URL.
    #[error("not an absolute URL: {0}")]
    NotAbsolute(String),
    /// Another scheme than http or https.
    #[error("the scheme must be http or https, not {0}")]
    Scheme(String),
    /// No host.
    #[error("it has no host")]
    NoHost,
    /// User info (`user:pass@`).
    #[error("it must not carry user info")]
    UserInfo,
    /// A query.
    #[error("it must not have a query (?…)")]
    Query,
    /// A fragment.
    #[error("it must not have a fragment (#…)")]
    Fragment,
}

/// The public base URL of the feeds' links: configured (`--public-base-url`),
/// derived from the request's `Host`, or empty (links relative to the
/// feed's own address) when the `Host` is not a plain authority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl(String);

impl BaseUrl {
    /// Validates a configured base: an absolute `http` or `https` URL with
    /// a host, without user info, query or fragment. A path is kept (for a
    /// server behind a proxy's path prefix), without its trailing slash.
    pub fn parse(text: &str) -> Result<Self, BaseUrlError> {
        let url = url::Url::parse(text).map_err(|e| BaseUrlError::NotAbsolute(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(BaseUrlError::Scheme(url.scheme().to_owned()));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(BaseUrlError::NoHost);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(BaseUrlError::UserInfo);
        }
        if url.query().is_some() {
            return Err(BaseUrlError::Query);
        }
        if url.fragment().is_some() {
            return Err(BaseUrlError::Fragment);
        }
        Ok(Self(url.as_str().trim_end_matches('/').to_owned()))
    }

    /// `http://` and the request's `Host` when it is a plain authority (a
    /// DNS name or IP address, an optional port); otherwise no base at all,
    /// so the links are relative and a hostile `Host` never reaches a feed.
    pub fn from_host(host: Option<&str>) -> Self {
        match host.filter(|h| plain_authority(h)) {
            Some(host) => Self(format!("http://{}", host.to_ascii_lowercase())),
            None => Self(String::new()),
        }
    }

    /// The base followed by `path` (which starts with `/`).
    pub fn join(&self, path: &str) -> String {
        format!("{}{path}", self.0)
    }

    /// The base as text (empty: relative links).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `host[:port]` where host is a DNS name (letters, digits, `-`, `.`) or a
/// bracketed IPv6 literal, and port 1 to 5 digits.
fn plain_authority(text: &str) -> bool {
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => (host, Some(port)),
        _ => (text, None),
    };
    let port_ok =
        port.is_none_or(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    let host_ok = if let Some(literal) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        literal.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        (1..=253).contains(&host.len())
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
    };
    port_ok && host_ok
}

/// The base a record's links to its page use: the configured public base
/// URL while the pages are served (a base taken from a request's `Host`
/// is not fixed, and feeds and webhooks keep what they link to).
pub fn record_pages_base(
    public_base_url: Option<&BaseUrl>,
    pages_served: bool,
) -> Option<&BaseUrl> {
    public_base_url.filter(|_| pages_served)
}

/// The stable path of the page of the record `id` (in the default
/// language; the pages prefix a language's segment).
pub fn record_page_path(id: &str) -> String {
    format!(
        "/records/{}",
        percent_encoding::utf8_percent_encode(id, ID_SET)
    )
}

/// Everything but unreserved characters is percent-encoded in a record's path.
const ID_SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[cfg(test)]
mod tests {
    use super::Link;

    #[test]
    fn only_web_addresses_are_links() {
        for good in [
            "https://x.com/handle/status/123",
            "http://example.org/a?b=c#d",
            "HTTPS://Example.org/",
        ] {
            assert!(Link::parse(good).is_some(), "{good}");
        }
        for bad in [
            "javascript:alert(document.domain)",
            "JavaScript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:x",
            "ntfy://topic",
            "mailto:a@example.org",
            "//example.org/x",
            "/relative",
            "https://",
            "http://exa mple.org/",
            "https://example.org/\u{0}x",
            "https://x.com@evil.example/",
            "https://user:pw@example.org/",
            "",
        ] {
            assert_eq!(Link::parse(bad), None, "{bad:?}");
        }
        assert_eq!(
            Link::parse("https://example.org/a\"b<c>").unwrap().as_str(),
            "https://example.org/a%22b%3Cc%3E"
        );
    }
}
