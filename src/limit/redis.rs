//! The Redis sliding log, for several instances sharing one quota.
//!
//! One round trip per request: a Lua script (atomic in Redis) trims the
//! client's sorted set to the window, counts it, adds this request if there
//! is room and returns the decision. It reads Redis's own clock (`TIME`), so
//! instances with skewed clocks agree. Keys expire with the window. A short
//! timeout bounds every call; when Redis cannot answer the caller fails
//! closed, and the lazily reconnecting connection manager picks Redis up
//! again when it returns, without a restart.

use std::net::IpAddr;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::Script;

use super::{retry_after_seconds, LimiterUnavailable, QuotaDecision, QuotaPolicy};
use crate::model::Timestamp;

/// The sliding log in Lua. KEYS[1] = the log (sorted set), KEYS[2] = its
/// member counter; both share a hash tag so the script is cluster-safe.
/// Returns {admitted (1/0), count after, oldest score, now} in milliseconds.
const SLIDING_LOG: &str = r#"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
if count < limit then
  local n = redis.call('INCR', KEYS[2])
  redis.call('ZADD', KEYS[1], now, now .. '-' .. n)
  redis.call('PEXPIRE', KEYS[1], window)
  redis.call('PEXPIRE', KEYS[2], window)
  count = count + 1
  admitted = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local first = now
if oldest[2] then first = tonumber(oldest[2]) end
return {admitted, count, first, now}
"#;

/// How long one quota check may take before the request fails closed.
const TIMEOUT: Duration = Duration::from_millis(300);

/// The Redis quota.
pub struct RedisLimiter {
    policy: QuotaPolicy,
    /// The URL without its password, for messages.
    url: String,
    manager: ConnectionManager,
    script: Script,
}

impl std::fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLimiter")
            .field("policy", &self.policy)
            .field("url", &self.url)
            .finish()
    }
}

impl RedisLimiter {
    /// A limiter on `url` (`redis://HOST:PORT/DB`). Connects lazily: a Redis
    /// that is down at start only makes data requests fail closed until it is up.
    pub fn new(url: &str, policy: QuotaPolicy) -> Result<Self, String> {
        let shown = crate::redact::redact_url(url);
        let client = redis::Client::open(url).map_err(|e| format!("bad Redis URL {shown}: {e}"))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(250)))
            .set_response_timeout(Some(Duration::from_millis(250)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let manager = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| format!("cannot set up Redis at {shown}: {e}"))?;
        Ok(Self {
            policy,
            url: shown,
            manager,
            script: Script::new(SLIDING_LOG),
        })
    }

    /// The policy.
    pub fn policy(&self) -> QuotaPolicy {
        self.policy
    }

    /// Counts one request of `client`, on Redis's clock.
    pub async fn check(&self, client: IpAddr) -> Result<QuotaDecision, LimiterUnavailable> {
        // The policy is part of the key: instances with different policies
        // on one Redis keep separate logs instead of trimming each other's.
        let tag = format!(
            "{{resetctl:{}/{}:{client}}}",
            self.policy.limit, self.policy.window_seconds
        );
        let mut invocation = self.script.prepare_invoke();
        invocation
            .key(format!("{tag}:log"))
            .key(format!("{tag}:n"))
            .arg(self.policy.limit)
            .arg(self.policy.window_millis());
        let mut connection = self.manager.clone();
        let reply: (i64, i64, i64, i64) =
            tokio::time::timeout(TIMEOUT, invocation.invoke_async(&mut connection))
                .await
                .map_err(|_| {
                    LimiterUnavailable(format!(
                        "Redis at {} did not answer within {TIMEOUT:?}",
                        self.url
                    ))
                })?
                .map_err(|e| LimiterUnavailable(format!("Redis at {}: {e}", self.url)))?;
        let (admitted, count, oldest, now) = reply;
        let reset_at = Timestamp::from_millis(oldest + self.policy.window_millis());
        Ok(if admitted == 1 {
            QuotaDecision::Admitted {
                remaining: self.policy.limit.saturating_sub(count as u32),
                reset_at,
            }
        } else {
            QuotaDecision::Limited {
                reset_at,
                retry_after: retry_after_seconds(Timestamp::from_millis(now), reset_at),
            }
        })
    }
}
