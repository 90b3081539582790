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
        Err(_) => "(not a URL)".to_owned(),
    }
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
    }
}
