//! The upstream HTTP client: a conditional GET with bounded everything.
//!
//! The request goes through the one outbound policy ([`crate::outbound`]):
//! gzip and brotli accepted, `User-Agent: resetctl/VERSION (+CONTACT)`,
//! connect and whole-request timeouts, at most N redirects (to public
//! addresses or the upstream's own kind, never https to http, without the
//! operator's headers and userinfo once off the upstream's origin, never
//! with a `Referer`), and a body limit enforced while streaming.
//!
//! The request ([`UpstreamRequest`]) may carry secrets (userinfo or a token
//! in the URL, an `Authorization` header): none of it ever reaches an error
//! text, a log line or a file. Errors are stripped of the URL, and the
//! request prints as its [`redacted`](crate::redact::redact_url) form.

use std::time::Duration;

use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use reqwest::StatusCode;

use crate::outbound::{OutboundError, Outgoing, Policy, Reach};

/// Limits and timeouts of one fetch (docs/spec/decisions.md, "Details pinned").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchSettings {
    /// Connect timeout (default 10 s).
    pub connect_timeout: Duration,
    /// Whole-request timeout, body included (default 30 s).
    pub timeout: Duration,
    /// Largest accepted body (default 16 MiB).
    pub max_body_bytes: u64,
    /// Most redirects followed (default 5).
    pub max_redirects: usize,
    /// The operator's contact for the `User-Agent` (`--user-agent-contact`).
    pub contact: Option<String>,
}

/// Longest validator (`ETag`, `Last-Modified`) kept and sent back: a
/// longer one is dropped, so an upstream cannot make every later request
/// too large to answer.
pub const MAX_VALIDATOR_BYTES: usize = 1024;

/// The upstream request: its URL and extra headers, both possibly secret.
#[derive(Clone, PartialEq, Eq)]
pub struct UpstreamRequest {
    /// The URL fetched (may hold userinfo or a token).
    pub url: String,
    /// Extra request headers (`--upstream-header`), such as `Authorization`.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for UpstreamRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("UpstreamRequest")
            .field("url", &crate::redact::redact_url(&self.url))
            .field("headers", &names)
            .finish()
    }
}

impl UpstreamRequest {
    /// A request for `url` with no extra headers.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// Identifies the request without revealing it (validators belong to
    /// the request they came from). Stable across runs of one build.
    pub fn fingerprint(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.url.hash(&mut hasher);
        self.headers.hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }
}

/// What the upstream answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// 304: the cached document is still current.
    NotModified,
    /// 200 with a body and its validators.
    Body {
        /// The body, decompressed.
        bytes: Vec<u8>,
        /// `ETag`, weak or strong, as sent.
        etag: Option<String>,
        /// `Last-Modified`, as sent.
        last_modified: Option<String>,
    },
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// The upstream answered with another status than 200 or 304.
    Status {
        /// The status code.
        code: u16,
        /// The code and its reason phrase.
        text: String,
    },
    /// The request itself failed: connecting, a timeout, a redirect the
    /// outbound policy refused, the body ([`crate::outbound`]).
    Outbound(OutboundError),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Outbound(OutboundError::Connect(why)) => {
                write!(f, "cannot connect to the upstream: {why}")
            }
            // The public text of these is already the whole story.
            FetchError::Outbound(OutboundError::Timeout { .. }) | FetchError::Status { .. } => {
                f.write_str(&self.public_text())
            }
            FetchError::Outbound(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FetchError {}

impl FetchError {
    /// The error as `dataSource.lastError` publishes it: the kind of
    /// problem, never a host, an address or a library's detail.
    pub fn public_text(&self) -> String {
        match self {
            FetchError::Status { text, .. } => format!("upstream answered HTTP {text}"),
            FetchError::Outbound(OutboundError::Connect(_)) => {
                "cannot connect to the upstream".into()
            }
            FetchError::Outbound(OutboundError::Timeout { connect, whole }) => format!(
                "the upstream did not answer in time (connect {connect:?}, whole request {whole:?})"
            ),
            FetchError::Outbound(e) => e.public_text(),
        }
    }
}

/// The outbound policy of a sync: the configured upstream wherever the
/// operator put it, redirects to public addresses or the upstream's own
/// kind only (see [`crate::outbound`]).
pub fn policy(settings: &FetchSettings) -> Policy {
    Policy {
        reach: Reach::ConfiguredThenPublic,
        connect_timeout: settings.connect_timeout,
        timeout: settings.timeout,
        max_redirects: settings.max_redirects,
        user_agent: crate::outbound::user_agent(settings.contact.as_deref()),
        decompress: true,
    }
}

/// GETs the upstream, conditional on the stored validators. The
/// operator's headers and the URL's userinfo go to the upstream's own
/// origin only; the validators go to every hop.
pub async fn fetch(
    upstream: &UpstreamRequest,
    etag: Option<&str>,
    last_modified: Option<&str>,
    settings: &FetchSettings,
) -> Result<Fetched, FetchError> {
    let url = crate::outbound::parse_target(&upstream.url).map_err(FetchError::Outbound)?;
    let mut headers = Vec::new();
    if let Some(etag) = etag {
        headers.push((IF_NONE_MATCH.as_str().to_owned(), etag.to_owned()));
    }
    if let Some(last_modified) = last_modified {
        headers.push((
            IF_MODIFIED_SINCE.as_str().to_owned(),
            last_modified.to_owned(),
        ));
    }
    let request = Outgoing {
        method: reqwest::Method::GET,
        url,
        origin_headers: upstream.headers.clone(),
        headers,
        body: None,
    };
    let answer = crate::outbound::send(&policy(settings), request)
        .await
        .map_err(FetchError::Outbound)?;
    match answer.status() {
        StatusCode::NOT_MODIFIED => return Ok(Fetched::NotModified),
        StatusCode::OK => {}
        other => {
            return Err(FetchError::Status {
                code: other.as_u16(),
                text: other.to_string(),
            })
        }
    }
    let header = |name| {
        answer
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .filter(|v| v.len() <= MAX_VALIDATOR_BYTES)
            .map(str::to_owned)
    };
    let (etag, last_modified) = (header(ETAG), header(LAST_MODIFIED));
    let bytes = answer
        .body(settings.max_body_bytes)
        .await
        .map_err(FetchError::Outbound)?;
    Ok(Fetched::Body {
        bytes,
        etag,
        last_modified,
    })
}
