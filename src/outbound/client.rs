//! The request loop of the outbound policy: one hop at a time, each hop's
//! addresses resolved, checked and pinned, redirects followed by hand so
//! that what crosses an origin is decided here and not by the HTTP library.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use reqwest::{Method, StatusCode, Url};
use tokio::time::Instant;

use super::address::{classify, AddressKind};
use super::{chain, OutboundError};

/// Which addresses a request may reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Public addresses only, at every hop (webhook targets by default).
    Public,
    /// Any address (the operator allowed private targets).
    Any,
    /// The configured URL wherever it is (the operator chose it); a
    /// redirect only to a public address or one of the same kind as the
    /// configured host's (an upstream on the operator's own network may
    /// redirect within it).
    ConfiguredThenPublic,
}

impl Reach {
    /// A webhook target's reach: any address when the operator allowed
    /// private targets for it, else public only.
    pub fn for_target(allow_private: bool) -> Self {
        if allow_private {
            Reach::Any
        } else {
            Reach::Public
        }
    }
}

/// Limits and identity of outbound requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Where requests may go.
    pub reach: Reach,
    /// Connect timeout, per hop.
    pub connect_timeout: Duration,
    /// One deadline for the whole exchange: every hop and the body.
    pub timeout: Duration,
    /// Redirects followed; with 0 a redirect is the answer.
    pub max_redirects: usize,
    /// The `User-Agent` ([`super::user_agent`]).
    pub user_agent: String,
    /// Accept gzip and brotli bodies (decoded before [`Answer::body`] sees them).
    pub decompress: bool,
}

/// One request to make.
#[derive(Clone, Debug)]
pub struct Outgoing {
    /// The method.
    pub method: Method,
    /// The configured URL; its userinfo goes to its own origin only.
    pub url: Url,
    /// The operator's headers (credentials, tokens): sent to the origin of
    /// `url` only.
    pub origin_headers: Vec<(String, String)>,
    /// Headers sent to every hop (validators, a content type, signatures).
    pub headers: Vec<(String, String)>,
    /// The body, if any (dropped when a redirect turns the method into GET).
    pub body: Option<Vec<u8>>,
}

/// An answer, and what is left of the exchange's deadline for its body.
#[derive(Debug)]
pub struct Answer {
    /// The response of the last hop (its body only through [`Answer::body`]).
    response: reqwest::Response,
    deadline: Instant,
    connect_timeout: Duration,
    timeout: Duration,
}

impl Answer {
    /// The status of the last hop.
    pub fn status(&self) -> StatusCode {
        self.response.status()
    }

    /// The headers of the last hop.
    pub fn headers(&self) -> &reqwest::header::HeaderMap {
        self.response.headers()
    }

    /// Reads the body, refusing it past `max_bytes` while streaming (the
    /// declared length is checked first) and past the exchange's deadline.
    pub async fn body(mut self, max_bytes: u64) -> Result<Vec<u8>, OutboundError> {
        if self
            .response
            .content_length()
            .is_some_and(|len| len > max_bytes)
        {
            return Err(OutboundError::TooLarge(max_bytes));
        }
        let timeout = OutboundError::Timeout {
            connect: self.connect_timeout,
            whole: self.timeout,
        };
        let mut bytes = Vec::new();
        loop {
            let chunk = tokio::time::timeout_at(self.deadline, self.response.chunk())
                .await
                .map_err(|_| timeout.clone())?
                .map_err(|e| classify_error(e, self.connect_timeout, self.timeout))?;
            let Some(chunk) = chunk else {
                return Ok(bytes);
            };
            if bytes.len() as u64 + chunk.len() as u64 > max_bytes {
                return Err(OutboundError::TooLarge(max_bytes));
            }
            bytes.extend_from_slice(&chunk);
        }
    }
}

/// Parses a URL that requests may be made to: absolute `http` or `https`
/// with a host. The error names the URL by its origin only (a webhook
/// target's token may be in its path).
pub fn parse_target(text: &str) -> Result<Url, OutboundError> {
    let fail = || OutboundError::Scheme(crate::redact::redact_target(text));
    let url = Url::parse(text).map_err(|_| fail())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(fail());
    }
    Ok(url)
}

/// Resolves `url`'s host and checks every address against `reach` (for a
/// configured target: [`Reach::ConfiguredThenPublic`] allows it anywhere);
/// returns the addresses to connect to.
pub async fn resolve(url: &Url, reach: Reach) -> Result<Vec<SocketAddr>, OutboundError> {
    let addresses = lookup(url).await?;
    check(url, &addresses, reach, None)?;
    Ok(addresses)
}

async fn lookup(url: &Url) -> Result<Vec<SocketAddr>, OutboundError> {
    let host = url.host_str().unwrap_or_default().to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| OutboundError::Resolve {
                host: host.clone(),
                why: e.to_string(),
            })?
            .collect(),
    };
    if addresses.is_empty() {
        return Err(OutboundError::Resolve {
            host,
            why: "no address".into(),
        });
    }
    Ok(addresses)
}

/// Checks `addresses` of `url`'s host. `allowed` is the set of kinds a
/// redirect may reach (none for the configured target itself).
fn check(
    url: &Url,
    addresses: &[SocketAddr],
    reach: Reach,
    allowed: Option<&HashSet<AddressKind>>,
) -> Result<(), OutboundError> {
    for address in addresses {
        let kind = classify(address.ip());
        let ok = match (reach, allowed) {
            (Reach::Any, _) => true,
            (Reach::Public, _) => kind == AddressKind::Public,
            (Reach::ConfiguredThenPublic, None) => true,
            (Reach::ConfiguredThenPublic, Some(allowed)) => allowed.contains(&kind),
        };
        if !ok {
            return Err(OutboundError::Refused {
                host: url.host_str().unwrap_or_default().to_owned(),
                address: address.ip(),
                kind,
                redirect: allowed.is_some(),
            });
        }
    }
    Ok(())
}

/// Sends `request` under `policy`, following redirects by its rules.
pub async fn send(policy: &Policy, request: Outgoing) -> Result<Answer, OutboundError> {
    let deadline = Instant::now() + policy.timeout;
    let timeout = OutboundError::Timeout {
        connect: policy.connect_timeout,
        whole: policy.timeout,
    };
    tokio::time::timeout_at(deadline, exchange(policy, request, deadline))
        .await
        .map_err(|_| timeout)?
}

async fn exchange(
    policy: &Policy,
    request: Outgoing,
    deadline: Instant,
) -> Result<Answer, OutboundError> {
    let configured = request.url.origin();
    let mut url = request.url.clone();
    let mut method = request.method.clone();
    let mut body = request.body.clone();
    let mut allowed: Option<HashSet<AddressKind>> = None;
    let mut seen = HashSet::new();
    loop {
        let addresses = lookup(&url).await?;
        check(&url, &addresses, policy.reach, allowed.as_ref())?;
        if allowed.is_none() {
            allowed = Some(redirect_kinds(&addresses));
        }
        let own_origin = url.origin() == configured;
        let mut hop_url = url.clone();
        if !own_origin {
            // Userinfo is the configured origin's credential only.
            let _ = hop_url.set_username("");
            let _ = hop_url.set_password(None);
        }
        let client = client_for(policy, &hop_url, &addresses)?;
        let mut call = client.request(method.clone(), hop_url);
        if own_origin {
            for (name, value) in &request.origin_headers {
                call = call.header(name.as_str(), value.as_str());
            }
        }
        for (name, value) in &request.headers {
            call = call.header(name.as_str(), value.as_str());
        }
        if let Some(bytes) = &body {
            call = call.body(bytes.clone());
        }
        let response = call
            .send()
            .await
            .map_err(|e| classify_error(e, policy.connect_timeout, policy.timeout))?;
        let status = response.status();
        if !status.is_redirection()
            || status == StatusCode::NOT_MODIFIED
            || policy.max_redirects == 0
        {
            return Ok(Answer {
                response,
                deadline,
                connect_timeout: policy.connect_timeout,
                timeout: policy.timeout,
            });
        }
        seen.insert(url.to_string());
        if seen.len() > policy.max_redirects {
            return Err(OutboundError::TooManyRedirects(policy.max_redirects));
        }
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok());
        let next = next_hop(&url, location)?;
        if seen.contains(next.as_str()) {
            return Err(OutboundError::TooManyRedirects(policy.max_redirects));
        }
        if status == StatusCode::SEE_OTHER
            || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                && method == Method::POST)
        {
            method = Method::GET;
            body = None;
        }
        url = next;
    }
}

/// The kinds a redirect may reach from a configured host with these
/// addresses: public ones, and the host's own kind when every address it
/// has is of that one kind. A host whose names answer with mixed kinds (a
/// public address beside a metadata one, say) gets public only, so its DNS
/// cannot open the operator's network to its redirects.
fn redirect_kinds(addresses: &[SocketAddr]) -> HashSet<AddressKind> {
    let kinds: HashSet<AddressKind> = addresses.iter().map(|a| classify(a.ip())).collect();
    let mut allowed = HashSet::from([AddressKind::Public]);
    if kinds.len() == 1 {
        allowed.extend(kinds);
    }
    allowed
}

/// Where a redirect from `current` to `location` leads: an `http(s)` URL
/// with a host, never from `https` down to `http`.
fn next_hop(current: &Url, location: Option<&str>) -> Result<Url, OutboundError> {
    let next = location
        .and_then(|location| current.join(location).ok())
        .ok_or(OutboundError::BadLocation)?;
    if !matches!(next.scheme(), "http" | "https") || next.host_str().is_none() {
        return Err(OutboundError::RedirectScheme);
    }
    if current.scheme() == "https" && next.scheme() == "http" {
        return Err(OutboundError::Downgrade);
    }
    Ok(next)
}

/// A client for one hop: no redirects, no `Referer`, no proxy, and the
/// host pinned to the addresses just checked.
fn client_for(
    policy: &Policy,
    url: &Url,
    addresses: &[SocketAddr],
) -> Result<reqwest::Client, OutboundError> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .no_proxy()
        .connect_timeout(policy.connect_timeout)
        .user_agent(policy.user_agent.as_str())
        .gzip(policy.decompress)
        .brotli(policy.decompress);
    let host = url.host_str().unwrap_or_default();
    if !host.starts_with('[') && host.parse::<IpAddr>().is_err() {
        builder = builder.resolve_to_addrs(host, addresses);
    }
    builder
        .build()
        .map_err(|e| OutboundError::Client(chain(&e)))
}

/// The error of a failed exchange, without its URL (which may carry
/// userinfo or a token).
fn classify_error(e: reqwest::Error, connect: Duration, whole: Duration) -> OutboundError {
    let e = &e.without_url();
    if e.is_timeout() {
        OutboundError::Timeout { connect, whole }
    } else if e.is_connect() {
        OutboundError::Connect(chain(e))
    } else if e.is_body() || e.is_decode() {
        OutboundError::Body(chain(e))
    } else {
        OutboundError::Http(chain(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_targets() {
        assert!(parse_target("https://example.com/hook").is_ok());
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "not a url",
            "http://",
        ] {
            assert!(
                matches!(parse_target(bad), Err(OutboundError::Scheme(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn redirects_lead_to_http_or_https_and_never_down_from_https() {
        let https = Url::parse("https://a.example/feed?token=Q").unwrap();
        let http = Url::parse("http://a.example/feed").unwrap();
        assert_eq!(
            next_hop(&https, Some("http://b.example/doc")),
            Err(OutboundError::Downgrade)
        );
        assert_eq!(
            next_hop(&https, Some("//a.example:80/doc"))
                .unwrap()
                .as_str(),
            "https://a.example:80/doc",
            "a scheme-relative location keeps https"
        );
        assert_eq!(
            next_hop(&http, Some("https://b.example/doc"))
                .unwrap()
                .as_str(),
            "https://b.example/doc"
        );
        assert_eq!(
            next_hop(&https, Some("/doc")).unwrap().as_str(),
            "https://a.example/doc",
            "a relative location stays on the origin and drops the query"
        );
        for refused in ["file:///etc/passwd", "javascript:alert(1)", "gopher://x/"] {
            assert_eq!(
                next_hop(&http, Some(refused)),
                Err(OutboundError::RedirectScheme),
                "{refused}"
            );
        }
        assert_eq!(next_hop(&http, None), Err(OutboundError::BadLocation));
    }

    #[test]
    fn a_redirect_reaches_public_addresses_and_the_configured_kind_only() {
        let url = Url::parse("http://h.example/").unwrap();
        let at = |ip: &str| vec![SocketAddr::new(ip.parse().unwrap(), 80)];
        let loopback: HashSet<_> = [AddressKind::Loopback, AddressKind::Public].into();
        let public: HashSet<_> = [AddressKind::Public].into();
        let reach = Reach::ConfiguredThenPublic;
        // The configured target itself: anywhere.
        assert!(check(&url, &at("169.254.169.254"), reach, None).is_ok());
        // From a loopback upstream: loopback and public, nothing else.
        assert!(check(&url, &at("127.0.0.2"), reach, Some(&loopback)).is_ok());
        assert!(check(&url, &at("93.184.216.34"), reach, Some(&loopback)).is_ok());
        assert!(check(&url, &at("10.0.0.1"), reach, Some(&loopback)).is_err());
        // From a public upstream: public only, whatever form the address takes.
        for refused in [
            "127.0.0.1",
            "169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "fec0::1",
        ] {
            let err = check(&url, &at(refused), reach, Some(&public)).unwrap_err();
            assert!(
                matches!(err, OutboundError::Refused { redirect: true, .. }),
                "{refused}: {err}"
            );
        }
        // A configured host that answers with mixed kinds opens nothing but public.
        let mixed = [at("93.184.216.34"), at("169.254.169.254")].concat();
        assert_eq!(redirect_kinds(&mixed), public);
        assert_eq!(redirect_kinds(&at("127.0.0.1")), loopback);
        // Webhook targets: public only, unless allowed.
        assert!(check(&url, &at("127.0.0.1"), Reach::Public, None).is_err());
        assert!(check(&url, &at("127.0.0.1"), Reach::Any, None).is_ok());
    }
}
