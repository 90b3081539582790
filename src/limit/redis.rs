//! The Redis sliding log, for several instances sharing one quota.
//!
//! One round trip per request: a Lua script (atomic in Redis) trims the
//! client's sorted set to the window, counts it, adds this request if there
//! is room and returns the decision. It reads Redis's own clock (`TIME`), so
//! instances with skewed clocks agree. Keys expire with the window. A short
//! timeout bounds every call; when Redis cannot answer the caller fails
//! closed, and the lazily reconnecting connection manager picks Redis up
//! again when it returns, without a restart.
//!
//! A request answered 503 must never count, not even later: a script sent
//! to a stalled Redis still runs when Redis resumes. So each call carries
//! its deadline on Redis's clock (100 ms before we give up, so that the
//! answer of a script that started in time still reaches us), and the script
//! refuses itself, writing nothing, when it starts after it. Our estimate of Redis's clock is
//! learned from every reply (its `TIME` minus our clock on receipt, exact
//! to a round trip); a first call refused by a skewed estimate is retried
//! at once with the learned offset. A connection found dead (Redis
//! restarted) is replaced and the call retried once within the same
//! deadline, so the first request after a restart is answered.

use std::net::IpAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::Script;

use super::{
    retry_after_seconds, LimiterUnavailable, QuotaDecision, QuotaPolicy, QuotaState, SettingError,
};
use crate::model::Timestamp;

/// The sliding log in Lua. KEYS[1] = the log (sorted set), KEYS[2] = its
/// member counter; both share a hash tag so the script is cluster-safe.
/// ARGV[3] = the caller's deadline on Redis's clock (ms): a script that
/// starts later writes nothing and returns admitted = -1 (the caller has
/// already answered 503, so the request must not count). ARGV[4], when
/// given, is the time to use instead of Redis's clock (the injectable
/// clock of [`RedisLimiter::check_at`], for tests).
/// Returns {admitted (1/0/-1), count after, oldest score, now} in milliseconds.
const SLIDING_LOG: &str = r#"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local deadline = tonumber(ARGV[3])
local now
if ARGV[4] then
  now = tonumber(ARGV[4])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
if now > deadline then
  return {-1, 0, 0, now}
end
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

/// Reads a client's log without writing: KEYS[1] = the log. ARGV[1] =
/// the window (ms); ARGV[2], when given, the time to use instead of
/// Redis's clock. Returns {requests in the window, oldest score, now}.
const PEEK: &str = r#"
local window = tonumber(ARGV[1])
local now
if ARGV[2] then
  now = tonumber(ARGV[2])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local inside = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local count = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')
local first = now - window
if inside[2] then first = tonumber(inside[2]) end
return {count, first, now}
"#;

/// How long one quota check may take before the request fails closed.
const TIMEOUT: Duration = Duration::from_millis(300);

/// How long before [`TIMEOUT`] the script stops accepting to start: a
/// script that starts in time must also get its answer back to us before we
/// give up, or we would answer 503 for a request Redis counted.
const REPLY_MARGIN: Duration = Duration::from_millis(100);

/// The Redis quota.
pub struct RedisLimiter {
    policy: QuotaPolicy,
    /// The URL without its password, for messages.
    url: String,
    manager: ConnectionManager,
    script: Script,
    peek_script: Script,
    /// Redis's clock minus ours, in ms, as last observed (0 until the first reply).
    clock_offset_ms: AtomicI64,
}

/// What one run of the script said.
enum ScriptReply {
    /// It ran in time and decided.
    Decided(QuotaDecision),
    /// It started after the deadline and wrote nothing.
    Late,
}

/// Our clock in Unix milliseconds.
fn local_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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
    pub fn new(url: &str, policy: QuotaPolicy) -> Result<Self, SettingError> {
        let shown = crate::redact::redact_url(url);
        let client = Self::client(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(250)))
            // No response timeout of its own: ours (TIMEOUT) governs, and the
            // script's deadline is set from it.
            .set_response_timeout(None)
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let manager = ConnectionManager::new_lazy_with_config(client, config).map_err(|e| {
            SettingError::RedisSetup {
                url: shown.clone(),
                why: e.to_string(),
            }
        })?;
        Ok(Self {
            policy,
            url: shown,
            manager,
            script: Script::new(SLIDING_LOG),
            peek_script: Script::new(PEEK),
            clock_offset_ms: AtomicI64::new(0),
        })
    }

    /// Whether `url` is a Redis URL this build can use (nothing is
    /// connected); the error names the URL by its redacted form.
    pub fn check_url(url: &str) -> Result<(), SettingError> {
        Self::client(url).map(drop)
    }

    fn client(url: &str) -> Result<redis::Client, SettingError> {
        redis::Client::open(url).map_err(|e| SettingError::RedisUrl {
            url: crate::redact::redact_url(url),
            why: e.to_string(),
        })
    }

    /// The policy.
    pub fn policy(&self) -> QuotaPolicy {
        self.policy
    }

    /// Counts one request of `client`, on Redis's clock, within 300 ms.
    /// An error means the request was not counted and never will be.
    pub async fn check(&self, client: IpAddr) -> Result<QuotaDecision, LimiterUnavailable> {
        let deadline = Instant::now() + TIMEOUT;
        tokio::time::timeout_at(deadline.into(), self.check_until(client, deadline))
            .await
            .unwrap_or_else(|_| {
                Err(LimiterUnavailable(format!(
                    "Redis at {} did not answer within {TIMEOUT:?}",
                    self.url
                )))
            })
    }

    /// Counts one request of `client` at `now` instead of Redis's clock,
    /// with no deadline: the injectable clock for tests that compare the
    /// script with a model. The rest of the script is the one
    /// [`check`](Self::check) runs.
    pub async fn check_at(
        &self,
        client: IpAddr,
        now: Timestamp,
    ) -> Result<QuotaDecision, LimiterUnavailable> {
        match self.run_script(client, None, Some(now.as_millis())).await {
            Ok(ScriptReply::Decided(decision)) => Ok(decision),
            Ok(ScriptReply::Late) => unreachable!("no deadline was set"),
            Err(e) => Err(LimiterUnavailable(format!("Redis at {}: {e}", self.url))),
        }
    }

    /// Runs the script, and once more if the first try met a dead
    /// connection or a stale clock estimate.
    async fn check_until(
        &self,
        client: IpAddr,
        deadline: Instant,
    ) -> Result<QuotaDecision, LimiterUnavailable> {
        let mut retried = false;
        loop {
            match self.run_script(client, Some(deadline), None).await {
                Ok(ScriptReply::Decided(decision)) => return Ok(decision),
                Ok(ScriptReply::Late) if !retried => {}
                Ok(ScriptReply::Late) => {
                    return Err(LimiterUnavailable(format!(
                        "Redis at {} ran the quota script after its deadline",
                        self.url
                    )))
                }
                // Never after a timeout: that script may still run (and
                // count) within its deadline. After a dead connection the
                // script most likely never ran; if the connection broke
                // while the reply was on its way, the retry counts the
                // request twice, which errs towards refusing, never
                // towards letting a client through.
                Err(e)
                    if !retried
                        && !e.is_timeout()
                        && (e.is_unrecoverable_error() || e.is_io_error()) =>
                {
                    // The manager is already replacing the connection; the
                    // retry waits for the new one.
                    tracing::debug!("Redis at {}: {e}; retrying once", self.url);
                }
                Err(e) => return Err(LimiterUnavailable(format!("Redis at {}: {e}", self.url))),
            }
            retried = true;
        }
    }

    /// Where `client`'s quota stands, counting nothing, within 300 ms, at
    /// `now` (none: Redis's clock).
    pub async fn peek(
        &self,
        client: IpAddr,
        now: Option<Timestamp>,
    ) -> Result<QuotaState, LimiterUnavailable> {
        let read = async {
            let mut invocation = self.peek_script.prepare_invoke();
            invocation
                .key(format!("{}:log", self.key_tag(client)))
                .arg(self.policy.window_millis());
            if let Some(now) = now {
                invocation.arg(now.as_millis());
            }
            let mut connection = self.manager.clone();
            let (count, oldest, _now): (i64, i64, i64) =
                invocation.invoke_async(&mut connection).await?;
            Ok::<_, redis::RedisError>(QuotaState {
                remaining: self.policy.limit.saturating_sub(count as u32),
                reset_at: Timestamp::from_millis(oldest + self.policy.window_millis()),
            })
        };
        match tokio::time::timeout(TIMEOUT, read).await {
            Ok(Ok(state)) => Ok(state),
            Ok(Err(e)) => Err(LimiterUnavailable(format!("Redis at {}: {e}", self.url))),
            Err(_) => Err(LimiterUnavailable(format!(
                "Redis at {} did not answer within {TIMEOUT:?}",
                self.url
            ))),
        }
    }

    /// The hash tag of `client`'s keys. The policy is part of it: instances
    /// with different policies on one Redis keep separate logs instead of
    /// trimming each other's.
    fn key_tag(&self, client: IpAddr) -> String {
        format!(
            "{{resetctl:{}/{}:{client}}}",
            self.policy.limit, self.policy.window_seconds
        )
    }

    /// One run of the script with `deadline` passed on Redis's clock (none:
    /// no deadline), at `now` (none: Redis's clock).
    async fn run_script(
        &self,
        client: IpAddr,
        deadline: Option<Instant>,
        now: Option<i64>,
    ) -> Result<ScriptReply, redis::RedisError> {
        let redis_deadline = deadline.map_or(i64::MAX, |deadline| {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .saturating_sub(REPLY_MARGIN)
                .as_millis() as i64;
            local_millis() + self.clock_offset_ms.load(Ordering::Relaxed) + left
        });
        let tag = self.key_tag(client);
        let mut invocation = self.script.prepare_invoke();
        invocation
            .key(format!("{tag}:log"))
            .key(format!("{tag}:n"))
            .arg(self.policy.limit)
            .arg(self.policy.window_millis())
            .arg(redis_deadline);
        if let Some(now) = now {
            invocation.arg(now);
        }
        let mut connection = self.manager.clone();
        let (admitted, count, oldest, now): (i64, i64, i64, i64) =
            invocation.invoke_async(&mut connection).await?;
        // Redis read `now` before we received it, so this errs by at most
        // the round trip, towards refusing late scripts a little early.
        if deadline.is_some() {
            self.clock_offset_ms
                .store(now - local_millis(), Ordering::Relaxed);
        }
        let reset_at = Timestamp::from_millis(oldest + self.policy.window_millis());
        Ok(match admitted {
            1 => ScriptReply::Decided(QuotaDecision::Admitted {
                remaining: self.policy.limit.saturating_sub(count as u32),
                reset_at,
            }),
            0 => ScriptReply::Decided(QuotaDecision::Limited {
                reset_at,
                retry_after: retry_after_seconds(Timestamp::from_millis(now), reset_at),
            }),
            _ => ScriptReply::Late,
        })
    }
}
