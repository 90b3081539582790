//! The upstream HTTP client: a conditional GET with bounded everything.
//!
//! reqwest with rustls (no system OpenSSL), gzip and brotli accepted,
//! `User-Agent: resetctl/VERSION (+REPOSITORY)` (so the operator of a feed
//! can tell who polls it and find the project), connect and whole-request timeouts, at
//! most N redirects, and a body limit enforced while streaming (the body is
//! never buffered past the limit).
//!
//! The request ([`UpstreamRequest`]) may carry secrets (userinfo or a token
//! in the URL, an `Authorization` header): none of it ever reaches an error
//! text, a log line or a file. Errors are stripped of the URL, and the
//! request prints as its [`redacted`](crate::redact::redact_url) form.

use std::time::Duration;

use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use reqwest::StatusCode;

/// Limits and timeouts of one fetch (decisions.md, "Details pinned").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchSettings {
    /// Connect timeout (default 10 s).
    pub connect_timeout: Duration,
    /// Whole-request timeout, body included (default 30 s).
    pub timeout: Duration,
    /// Largest accepted body (default 16 MiB).
    pub max_body_bytes: u64,
    /// Most redirects followed (default 5).
    pub max_redirects: usize,
}

impl Default for FetchSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body_bytes: 16 * 1024 * 1024,
            max_redirects: 5,
        }
    }
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

/// Why a fetch failed; the text becomes `dataSource.lastError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    /// The upstream answered with another status than 200 or 304.
    #[error("upstream answered HTTP {text}")]
    Status {
        /// The status code.
        code: u16,
        /// The code and its reason phrase.
        text: String,
    },
    /// No connection could be made.
    #[error("cannot connect to the upstream: {0}")]
    Connect(String),
    /// A timeout passed.
    #[error("the upstream did not answer in time ({0})")]
    Timeout(String),
    /// Too many redirects, or a loop.
    #[error("redirects: {0}")]
    Redirect(String),
    /// The body is over the limit.
    #[error("the body exceeds the limit of {0} bytes")]
    TooLarge(u64),
    /// The body broke off or could not be decoded.
    #[error("the body could not be read completely: {0}")]
    Body(String),
}

/// What every upstream request says it is: the version and a URL that
/// identifies the project (the public feed's maintainers ask mirrors to).
pub const USER_AGENT: &str = concat!(
    "resetctl/",
    env!("CARGO_PKG_VERSION"),
    " (+",
    env!("CARGO_PKG_REPOSITORY"),
    ")"
);

/// Builds the client for `settings`.
pub fn build_client(settings: &FetchSettings) -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(settings.connect_timeout)
        .timeout(settings.timeout)
        .redirect(reqwest::redirect::Policy::limited(settings.max_redirects))
        .gzip(true)
        .brotli(true)
        .build()
        .map_err(|e| FetchError::Client(chain(&e)))
}

/// The whole error chain of `e` in one line.
fn chain(e: &dyn std::error::Error) -> String {
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

fn classify(e: reqwest::Error, settings: &FetchSettings) -> FetchError {
    // The URL may carry userinfo or a token: it never goes into an error text.
    let e = e.without_url();
    if e.is_timeout() {
        FetchError::Timeout(format!(
            "connect {:?}, whole request {:?}",
            settings.connect_timeout, settings.timeout
        ))
    } else if e.is_redirect() {
        FetchError::Redirect(format!(
            "more than {} or a loop ({})",
            settings.max_redirects,
            chain(&e)
        ))
    } else if e.is_connect() {
        FetchError::Connect(chain(&e))
    } else {
        FetchError::Body(chain(&e))
    }
}

/// GETs the upstream, conditional on the stored validators.
pub async fn fetch(
    client: &reqwest::Client,
    upstream: &UpstreamRequest,
    etag: Option<&str>,
    last_modified: Option<&str>,
    settings: &FetchSettings,
) -> Result<Fetched, FetchError> {
    let mut request = client.get(&upstream.url);
    for (name, value) in &upstream.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    if let Some(etag) = etag {
        request = request.header(IF_NONE_MATCH, etag);
    }
    if let Some(last_modified) = last_modified {
        request = request.header(IF_MODIFIED_SINCE, last_modified);
    }
    let mut response = request.send().await.map_err(|e| classify(e, settings))?;
    match response.status() {
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
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .filter(|v| v.len() <= MAX_VALIDATOR_BYTES)
            .map(str::to_owned)
    };
    let (etag, last_modified) = (header(ETAG), header(LAST_MODIFIED));
    // Refuse early when the upstream declares too much (for an uncompressed body).
    if response
        .content_length()
        .is_some_and(|len| len > settings.max_body_bytes)
    {
        return Err(FetchError::TooLarge(settings.max_body_bytes));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| classify(e, settings))? {
        if bytes.len() as u64 + chunk.len() as u64 > settings.max_body_bytes {
            return Err(FetchError::TooLarge(settings.max_body_bytes));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Fetched::Body {
        bytes,
        etag,
        last_modified,
    })
}
