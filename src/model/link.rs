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
