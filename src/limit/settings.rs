//! The quota settings of a server (and of `resetctl status`): the policy,
//! the store, client keys, the flood guard and the in-process cap, with the
//! one line per setting that the start-up log and `status` show.

use super::client::ClientKeyPolicy;
use super::redis::address::RedisAddress;
use super::{Limiter, MemoryLimiter, QuotaPolicy, RedisLimiter, RedisTlsFiles, SettingError};

/// The quota settings of a server (and of `resetctl status`). Its `Debug`
/// shows the Redis URL redacted.
#[derive(Clone, PartialEq)]
pub struct LimiterSettings {
    /// `None` with `--no-rate-limit`.
    pub policy: Option<QuotaPolicy>,
    /// `None` for the in-process store, else the Redis URL.
    pub redis_url: Option<String>,
    /// The TLS files of a `rediss…` store.
    pub redis_tls: RedisTlsFiles,
    /// Client keys.
    pub client_keys: ClientKeyPolicy,
    /// Flood guard: (per second, burst), `None` when off.
    pub flood: Option<(std::num::NonZeroU32, std::num::NonZeroU32)>,
    /// The in-process store tracks at most this many clients.
    pub max_clients: usize,
}

impl LimiterSettings {
    /// The quota store as it is shown (`serve --check`, its report):
    /// `memory`, or the Redis URL redacted.
    pub fn store_shown(&self) -> String {
        self.redis_url
            .as_deref()
            .map_or_else(|| "memory".to_owned(), crate::redact::redact_url)
    }

    /// One line per setting, for `resetctl status` and the startup log.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        let quota = match (&self.policy, &self.redis_url) {
            (None, _) => "off".to_owned(),
            (Some(p), None) => format!(
                "{} requests per {} s per client, in process (at most {} clients tracked)",
                p.limit, p.window_seconds, self.max_clients
            ),
            (Some(p), Some(url)) => format!(
                "{} requests per {} s per client, in Redis at {}{}",
                p.limit,
                p.window_seconds,
                crate::redact::redact_url(url),
                match &self.redis_tls.ca_file {
                    Some(ca) => format!(" (CA {})", ca.display()),
                    None => String::new(),
                }
            ),
        };
        let proxies = if self.client_keys.trusted_proxies.is_empty() {
            "none (forwarding headers ignored)".to_owned()
        } else {
            self.client_keys
                .trusted_proxies
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let flood = self.flood.map_or("off".to_owned(), |(rate, burst)| {
            format!("{rate}/s per client, burst {burst}")
        });
        vec![
            ("quota", quota),
            (
                "client key",
                format!("peer IP, IPv6 by /{}", self.client_keys.ipv6_prefix),
            ),
            (
                "proxy header",
                format!(
                    "{} (read only from trusted proxies)",
                    self.client_keys.header.name()
                ),
            ),
            ("trusted proxies", proxies),
            ("flood guard", flood),
        ]
    }

    /// Checks what can be checked before anything starts (the Redis URL
    /// parses into a form this build speaks; TLS files only with a TLS
    /// store, readable, a certificate with its key), so a bad setting is
    /// refused before a listener is bound.
    pub fn check(&self) -> Result<(), SettingError> {
        match &self.redis_url {
            Some(url) => self
                .redis_tls
                .for_address(&RedisAddress::parse(url)?)
                .map(drop),
            None if self.redis_tls.any() => Err(SettingError::RedisTlsUnused("memory".to_owned())),
            None => Ok(()),
        }
    }

    /// The checks of each value on its own: the store URL parses, each
    /// TLS file named reads. What holds between them (files only with a
    /// TLS store, a certificate with its key) is [`LimiterSettings::check`]'s.
    pub fn check_values(&self) -> Result<(), SettingError> {
        if let Some(url) = &self.redis_url {
            RedisAddress::parse(url)?;
        }
        self.redis_tls.read_each().map(drop)
    }

    /// Builds the limiter these settings describe; a Redis store is asked
    /// once (see [`RedisLimiter::connect`]): one that refuses us for good is
    /// an error before anything listens, and so is one that does not
    /// answer in time when `strict`.
    pub async fn connect(&self, strict: bool) -> Result<Limiter, SettingError> {
        Ok(match (&self.policy, &self.redis_url) {
            (None, _) => Limiter::Off,
            (Some(p), None) => {
                Limiter::Memory(MemoryLimiter::with_max_clients(*p, self.max_clients))
            }
            (Some(p), Some(url)) => {
                Limiter::Redis(RedisLimiter::connect(url, &self.redis_tls, *p, strict).await?)
            }
        })
    }
}

impl std::fmt::Debug for LimiterSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LimiterSettings")
            .field("policy", &self.policy)
            .field(
                "redis_url",
                &self.redis_url.as_deref().map(crate::redact::redact_url),
            )
            .field("redis_tls", &self.redis_tls)
            .field("client_keys", &self.client_keys)
            .field("flood", &self.flood)
            .field("max_clients", &self.max_clients)
            .finish()
    }
}
