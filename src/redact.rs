//! Keeping secrets out of everything resetctl shows: the one owner of
//! how a value that may hold a secret is shown.
//!
//! An upstream URL may carry userinfo (`user:pass@`) or a token in its
//! query, a Redis URL a password, a webhook target a token in its path
//! (Discord, Slack, Telegram), an upstream header a credential. Whatever
//! is printed, logged, published or put in an error message about such a
//! value is made here, and an error about a malformed one never quotes any
//! part of it: a mistyped URL cannot be split into a safe part and a
//! secret one (`redis://u:pa/ss@h` reads as host `u`, port `pa`).
//!
//! - [`redact_url`]: a URL as published (`dataSource.url`), printed or
//!   logged: no userinfo, no query, no fragment;
//! - [`redact_target`]: a webhook target: its origin only;
//! - [`header_name`]: an `upstream-header` by its name only;
//! - [`NOT_SHOWN`]: what stands for a value that is not a well-formed URL;
//! - an e-mail target's password is never printed, not even to its
//!   operator: `webhook show` prints [`crate::webhook::shown_target`], and
//!   lists [`crate::webhook::listed_target`] (its server and recipients).

/// What stands in an error for a value that may hold a secret and is not
/// a well-formed URL: none of it is shown.
pub const NOT_SHOWN: &str = "(the value is withheld: it may hold credentials)";

/// `url` without userinfo, query or fragment; a text that is not a
/// well-formed URL with an authority (`scheme://host…`) becomes
/// [`NOT_SHOWN`] (it may be a secret mistyped as a URL).
pub fn redact_url(url: &str) -> String {
    match parse_with_authority(url) {
        Some(mut parsed) => {
            // Both fail only for URLs that cannot have userinfo at all.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        None => redact_node_list(url).unwrap_or_else(|| NOT_SHOWN.to_owned()),
    }
}

/// A webhook target as lists and errors show it: the origin only (with
/// `/…` when there is more), since chat services put their tokens in the
/// path or the query.
pub fn redact_target(url: &str) -> String {
    match parse_with_authority(url) {
        Some(parsed) if parsed.path() == "/" && parsed.query().is_none() => {
            parsed.origin().ascii_serialization()
        }
        Some(parsed) => format!("{}/…", parsed.origin().ascii_serialization()),
        None => NOT_SHOWN.to_owned(),
    }
}

/// An `upstream-header` value (`NAME: VALUE`) as errors show it: its name,
/// when the text has a colon and what precedes it is a header name; else
/// nothing of it (`X-Key=secret:…` is not a name, and may be the secret).
pub fn header_name(text: &str) -> Option<&str> {
    let (name, _) = text.split_once(':')?;
    let name = name.trim();
    (!name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)))
    .then_some(name)
}

/// `url` parsed, when it is written `scheme://authority…` and its parts
/// are where the URL standard puts them. A text without `//` after its
/// scheme (`redis:/app:PW@h`) parses as a path, which would be shown whole;
/// one whose userinfo is followed by another `@` further on
/// (`redis://u:pa@ss/wd@host`) had a `/`, `?` or `#` in its password, which
/// ended the authority early and left the rest of it in the host, the path
/// or the query.
fn parse_with_authority(url: &str) -> Option<reqwest::Url> {
    let (scheme, rest) = url.split_once(':')?;
    let rest = rest.strip_prefix("//")?;
    if scheme.is_empty() {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if rest[..end].contains('@') && rest[end..].contains('@') {
        return None;
    }
    let parsed = reqwest::Url::parse(url).ok()?;
    parsed.has_host().then_some(parsed)
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
    use super::*;

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
        assert_eq!(redact_url("s3cret"), NOT_SHOWN);
        assert_eq!(redact_url("redis:/app:s3cret@h"), NOT_SHOWN);
        assert_eq!(redact_url("redis://default:s3cr/et@host:6379"), NOT_SHOWN);
        assert_eq!(
            redact_url("redis://default:P@=.+!/Z9/x@host:6379"),
            NOT_SHOWN
        );
        assert_eq!(redact_url("https://u:p?w@d@host/feed"), NOT_SHOWN);
        assert_eq!(
            redact_url("https://host.example/@user/feed"),
            "https://host.example/@user/feed"
        );
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

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn a_target_is_shown_by_its_origin_and_a_header_by_its_name() {
        assert_eq!(
            redact_target("https://discord.com/api/webhooks/1/T0KEN"),
            "https://discord.com/…"
        );
        assert_eq!(redact_target("https://ntfy.sh/"), "https://ntfy.sh");
        assert_eq!(redact_target("ftp:/x/T0KEN"), NOT_SHOWN);
        assert_eq!(header_name("X-Key: s3cret"), Some("X-Key"));
        assert_eq!(header_name("X-Key=s3cret: x"), None);
        assert_eq!(header_name("s3cret"), None);
    }
}
