//! The per-client quota (spec section 8, docs/spec/decisions.md "Rate limiting").
//!
//! An exact sliding log: a request is admitted when fewer than `limit` of
//! the client's admitted requests fall in the last `window`. Two backends
//! answer the same question: [`MemoryLimiter`] (in process, the default) and
//! [`RedisLimiter`] (shared by several instances, atomic per request). The
//! client key and trusted-proxy rules live in [`client`]; the separate burst
//! guard for uncounted routes in [`flood`]; the settings that build them in
//! [`LimiterSettings`]. Decisions are plain enums: this
//! runs on every request.

pub mod client;
pub mod flood;
mod memory;
pub mod redis;
mod rings;
mod settings;

use std::fmt;
use std::net::IpAddr;

pub use self::memory::{Full, MemoryLimiter, DEFAULT_MAX_CLIENTS};
pub use self::redis::connection::RedisTlsFiles;
pub use self::redis::RedisLimiter;
pub use self::settings::LimiterSettings;

use crate::model::Timestamp;

/// `N` requests per `window_seconds` (default 20 per 3600).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuotaPolicy {
    /// Admitted requests per window.
    pub limit: u32,
    /// The sliding window, in seconds.
    pub window_seconds: u32,
}

impl Default for QuotaPolicy {
    fn default() -> Self {
        Self {
            limit: 20,
            window_seconds: 3600,
        }
    }
}

/// A quota setting that cannot be used; each names the text it was given
/// (a Redis URL in its redacted form) and what is expected instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// Not `N/SECONDS`.
    #[error("{0:?} is not a rate limit like 20/3600 (requests per seconds, both at least 1)")]
    Rate(String),
    /// Not an address or a range of them.
    #[error("{0:?} is not an address range like 10.0.0.0/8 or 2001:db8::/32")]
    Range(String),
    /// A range of trusted proxies that holds every address.
    #[error(
        "{0:?} holds every address: trusting it would let every client name its own \
         address in a forwarding header and so choose its own quota; list your proxies' \
         addresses or networks instead"
    )]
    TrustsEveryone(String),
    /// Not a header name.
    #[error("{0:?} is not a header name like x-forwarded-for, forwarded or x-real-ip")]
    Header(String),
    /// A Redis URL the client library refuses.
    #[error("bad Redis URL {url}: {why}")]
    RedisUrl {
        /// The URL, redacted.
        url: String,
        /// The library's words.
        why: String,
    },
    /// A TLS file of the Redis store that cannot be read.
    #[error("{key} {}: {why}", .path.display())]
    RedisTlsFile {
        /// The setting (`redis-ca-file`, …).
        key: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        why: String,
        /// Whether the file is unfit to read (not a regular file, over
        /// its cap) rather than missing or unreadable.
        unfit: bool,
    },
    /// A client certificate without its key, or a key without its certificate.
    #[error(
        "redis-cert-file and redis-key-file go together: give both for mutual TLS, or neither"
    )]
    RedisTlsPair,
    /// TLS files for a store URL without TLS.
    #[error(
        "redis-ca-file, redis-cert-file and redis-key-file are for a TLS store, but the quota \
         store is {0}; use rediss:// (or rediss+cluster://, rediss+sentinel://)"
    )]
    RedisTlsUnused(String),
    /// A store that refuses us for good at start: its TLS handshake fails
    /// or it refuses the credentials.
    #[error("the quota store at {url} refuses the connection: {why}")]
    RedisRefused {
        /// The URL, redacted.
        url: String,
        /// What failed, in the library's words.
        why: String,
    },
    /// A store that does not answer a `PING` and load the quota script in
    /// time, where it must (`serve --check`, a reload).
    #[error("the quota store at {url} does not answer: {why}")]
    RedisUnavailable {
        /// The URL, redacted.
        url: String,
        /// What failed, in the library's words.
        why: String,
    },
    /// A Redis client that cannot be set up.
    #[error("cannot set up Redis at {url}: {why}")]
    RedisSetup {
        /// The URL, redacted.
        url: String,
        /// The library's words.
        why: String,
    },
}

impl QuotaPolicy {
    /// The window in milliseconds.
    pub fn window_millis(self) -> i64 {
        i64::from(self.window_seconds) * 1000
    }

    /// Parses `N/SECONDS` (both at least 1).
    pub fn parse(text: &str) -> Result<Self, SettingError> {
        let fail = || SettingError::Rate(text.to_owned());
        let (n, secs) = text.split_once('/').ok_or_else(fail)?;
        let limit: u32 = n.trim().parse().map_err(|_| fail())?;
        let window_seconds: u32 = secs.trim().parse().map_err(|_| fail())?;
        if limit == 0 || window_seconds == 0 {
            return Err(fail());
        }
        Ok(Self {
            limit,
            window_seconds,
        })
    }
}

impl fmt::Display for QuotaPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.limit, self.window_seconds)
    }
}

/// What the quota says about one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuotaDecision {
    /// Counted and let through.
    Admitted {
        /// Requests left in the window after this one.
        remaining: u32,
        /// When the oldest counted request leaves the window.
        reset_at: Timestamp,
    },
    /// Refused (not counted).
    Limited {
        /// When the oldest counted request leaves the window.
        reset_at: Timestamp,
        /// Whole seconds until then, rounded up, at least 1.
        retry_after: u64,
    },
}

/// Where a client's quota stands, read without counting (the headers of
/// an uncounted answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuotaState {
    /// Requests the client may still make in the window.
    pub remaining: u32,
    /// When the oldest counted request leaves the window (now when none counts).
    pub reset_at: Timestamp,
}

/// The quota's backing store could not answer (fail closed: 503).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimiterUnavailable(pub String);

/// Whole seconds from `now` until `at`, rounded up, at least 1.
pub fn retry_after_seconds(now: Timestamp, at: Timestamp) -> u64 {
    let millis = (at.as_millis() - now.as_millis()).max(0) as u64;
    millis.div_ceil(1000).max(1)
}

/// The configured quota: off, in process, or in Redis.
#[derive(Debug)]
pub enum Limiter {
    /// `--no-rate-limit`: nothing is counted, no headers are sent.
    Off,
    /// The in-process sliding log.
    Memory(MemoryLimiter),
    /// The Redis sliding log.
    Redis(RedisLimiter),
}

impl Limiter {
    /// The policy, or `None` when limiting is off.
    pub fn policy(&self) -> Option<QuotaPolicy> {
        match self {
            Limiter::Off => None,
            Limiter::Memory(m) => Some(m.policy()),
            Limiter::Redis(r) => Some(r.policy()),
        }
    }

    /// Where `client`'s quota stands at `now`, counting nothing (the Redis
    /// backend uses Redis's clock); `None` when limiting is off.
    pub async fn peek(
        &self,
        client: IpAddr,
        now: Timestamp,
    ) -> Result<Option<QuotaState>, LimiterUnavailable> {
        match self {
            Limiter::Off => Ok(None),
            Limiter::Memory(m) => Ok(Some(m.peek(client, now))),
            Limiter::Redis(r) => r.peek(client, None).await.map(Some),
        }
    }

    /// Counts one request of `client` at `now` (the Redis backend uses Redis's clock).
    pub async fn check(
        &self,
        client: IpAddr,
        now: Timestamp,
    ) -> Result<Option<QuotaDecision>, LimiterUnavailable> {
        match self {
            Limiter::Off => Ok(None),
            Limiter::Memory(m) => m.check(client, now).map(Some).map_err(|full| {
                LimiterUnavailable(format!(
                    "the quota table is full ({} clients tracked)",
                    full.max_clients
                ))
            }),
            Limiter::Redis(r) => r.check(client).await.map(Some),
        }
    }
}
