//! Keeping secrets out of everything resetctl shows.
//!
//! An upstream URL may carry userinfo (`user:pass@`) or a token in its
//! query, and a Redis URL a password. [`redact_url`] is the one form such a
//! URL takes wherever it is published (`dataSource.url` by default),
//! printed or logged: no userinfo, no query, no fragment.

/// `url` without userinfo, query or fragment; a text that is not a URL
/// becomes a placeholder (it may be a secret mistyped as a URL).
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            // Both fail only for URLs that cannot have userinfo at all.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => redact_node_list(url).unwrap_or_else(|| "(not a URL)".to_owned()),
    }
}

/// A URL naming several nodes (`redis+cluster://:pw@a:1,b:2/0`), which
/// the URL standard does not read, redacted the same way.
fn redact_node_list(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let hosts = authority
        .rsplit_once('@')
        .map_or(authority, |(_, hosts)| hosts);
    let well_formed = |text: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    };
    (well_formed(scheme) && hosts.contains(',')).then(|| format!("{scheme}://{hosts}{path}"))
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn userinfo_query_and_fragment_are_removed() {
        assert_eq!(
            redact_url("http://user:s3cret@example.org:8080/feed?token=abc123#x"),
            "http://example.org:8080/feed"
        );
        assert_eq!(
            redact_url("redis://:hunter2@127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(
            redact_url("https://didcodexreset.com/api/status.json"),
            "https://didcodexreset.com/api/status.json"
        );
        assert_eq!(redact_url("s3cret"), "(not a URL)");
        assert_eq!(
            redact_url("rediss+sentinel://u:s3cret@a:26379,b:26379/mymaster/0?x=s3cret"),
            "rediss+sentinel://a:26379,b:26379/mymaster/0"
        );
        assert_eq!(
            redact_url("redis+cluster://:s3cret@a:7000,[::1]:7001"),
            "redis+cluster://a:7000,[::1]:7001"
        );
    }
}
