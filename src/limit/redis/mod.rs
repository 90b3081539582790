//! The Redis sliding log, for several instances sharing one quota.
//!
//! One round trip per request: a Lua script (atomic in Redis) trims the
//! client's sorted set to the window, counts it, adds this request if there
//! is room and returns the decision. It reads Redis's own clock (`TIME`), so
//! instances with skewed clocks agree. Keys expire with the window. The
//! store may be one server, a Redis Cluster or a master behind sentinels,
//! over TLS or not ([`address`], [`connection`]); calls of concurrent
//! requests share one multiplexed connection per node. A short timeout
//! bounds every call; when Redis cannot answer the caller fails closed, and
//! the connection is picked up again when Redis returns, without a restart.
//!
//! Each check carries an id of its own, and the log's member is that id: a
//! script sent again after its answer was lost on the wire finds its id in
//! the log and answers what the first run decided, counting nothing more.
//! So a call is retried (once by us after a dead connection; by the
//! cluster client on a redirect or a reconnect) without ever counting a
//! request twice.
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

pub mod address;
pub mod connection;

use std::net::IpAddr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::Script;

use self::address::RedisAddress;
use self::connection::{ProbeFailure, RedisTlsFiles, StoreConnection};
use super::{
    retry_after_seconds, LimiterUnavailable, QuotaDecision, QuotaPolicy, QuotaState, SettingError,
};
use crate::model::Timestamp;

/// What both scripts start with: `clock(given)` is the time in
/// milliseconds on Redis's clock (`TIME`), or `given` (the injected time of
/// tests) when there is one.
const CLOCK: &str = r#"
local function clock(given)
  if given then
    return tonumber(given)
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
"#;

/// The sliding log in Lua, after [`CLOCK`]. KEYS[1] = the log (a sorted set of check ids
/// scored by time, in milliseconds). ARGV[1] = the limit, ARGV[2] = the
/// window (ms), ARGV[3] = the caller's deadline on Redis's clock (ms),
/// ARGV[4] = this check's id. A check whose id is already in the log was
/// counted by an earlier run whose answer was lost: it is answered as
/// admitted and nothing is written. Otherwise a script that starts after
/// the deadline writes nothing and returns admitted = -1 (the caller has
/// already answered 503, so the request must not count). ARGV[5], when
/// given, is the time to use instead of Redis's clock (the injectable
/// clock of [`RedisLimiter::check_at`], for tests).
/// Returns {admitted (1/0/-1), count after, oldest score, now} in milliseconds.
const SLIDING_LOG: &str = r#"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = clock(ARGV[5])
local admitted = 1
local count
local first = now
local counted = redis.call('ZSCORE', KEYS[1], ARGV[4])
if counted then
  count = redis.call('ZCARD', KEYS[1])
else
  if now > tonumber(ARGV[3]) then
    return {-1, 0, 0, now}
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  count = redis.call('ZCARD', KEYS[1])
  if count < limit then
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    redis.call('PEXPIRE', KEYS[1], window)
    count = count + 1
  else
    admitted = 0
  end
end
if counted or count > 1 or admitted == 0 then
  first = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
end
return {admitted, count, first, now}
"#;

/// Reads a client's log without writing, after [`CLOCK`]: KEYS[1] = the
/// log. ARGV[1] = the window (ms); ARGV[2], when given, the time to use
/// instead of Redis's clock. Returns {requests in the window, oldest
/// score, now}.
const PEEK: &str = r#"
local window = tonumber(ARGV[1])
local now = clock(ARGV[2])
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
    connection: StoreConnection,
    script: Script,
    peek_script: Script,
    /// Redis's clock minus ours, in ms, as last observed (0 until the first reply).
    clock_offset_ms: AtomicI64,
    /// The next check's id. It starts at a random point, so the ids of
    /// instances sharing a Redis do not meet (2^64 apart on average).
    next_id: AtomicU64,
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

/// How long [`RedisLimiter::connect`] waits for the store's first answer.
const PROBE_WAIT: Duration = Duration::from_secs(3);

impl RedisLimiter {
    /// A limiter on `url` (any form [`address`] reads), with `tls`'s
    /// files for a `rediss…` URL. Connects lazily: a Redis that is down at
    /// start only makes data requests fail closed until it is up.
    pub fn new(url: &str, tls: &RedisTlsFiles, policy: QuotaPolicy) -> Result<Self, SettingError> {
        Self::with_address(RedisAddress::parse(url)?, tls, policy)
    }

    fn with_address(
        address: RedisAddress,
        tls: &RedisTlsFiles,
        policy: QuotaPolicy,
    ) -> Result<Self, SettingError> {
        let connection = StoreConnection::new(&address, tls)?;
        let mut seed = [0u8; 8];
        crate::random::fill(&mut seed).map_err(|e| SettingError::RedisSetup {
            url: address.shown.clone(),
            why: format!("no randomness for check ids: {e}"),
        })?;
        Ok(Self {
            policy,
            url: address.shown,
            connection,
            script: Script::new(&[CLOCK, SLIDING_LOG].concat()),
            peek_script: Script::new(&[CLOCK, PEEK].concat()),
            clock_offset_ms: AtomicI64::new(0),
            next_id: AtomicU64::new(u64::from_le_bytes(seed)),
        })
    }

    /// [`new`](Self::new), then one `PING` and the scripts loaded within
    /// 3 s: a store that refuses us for good (a TLS handshake that fails,
    /// credentials refused) is an error. One that does not answer in time
    /// is an error too when `strict` (`serve --check`, a reload: a file
    /// they pass must run); otherwise (a start) it is only logged, and data
    /// requests fail closed until it answers.
    pub async fn connect(
        url: &str,
        tls: &RedisTlsFiles,
        policy: QuotaPolicy,
        strict: bool,
    ) -> Result<Self, SettingError> {
        let address = RedisAddress::parse(url)?;
        let limiter = Self::with_address(address.clone(), tls, policy)?;
        let scripts = [&limiter.script, &limiter.peek_script];
        match limiter
            .connection
            .probe(&address, PROBE_WAIT, &scripts)
            .await
        {
            Ok(()) => {}
            Err(ProbeFailure::Refused(why)) => {
                return Err(SettingError::RedisRefused {
                    url: limiter.url.clone(),
                    why,
                })
            }
            Err(ProbeFailure::Unreachable(why)) if strict => {
                return Err(SettingError::RedisUnavailable {
                    url: limiter.url.clone(),
                    why,
                })
            }
            Err(ProbeFailure::Unreachable(why)) => tracing::warn!(
                "the quota store at {} does not answer yet ({why}); data requests are \
                 answered 503 until it does",
                limiter.url
            ),
        }
        Ok(limiter)
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
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        match self
            .run_script(client, id, None, Some(now.as_millis()))
            .await
        {
            Ok(ScriptReply::Decided(decision)) => Ok(decision),
            Ok(ScriptReply::Late) => unreachable!("no deadline was set"),
            Err(e) => Err(LimiterUnavailable(format!("Redis at {}: {e}", self.url))),
        }
    }

    /// Runs the script, and once more (with the same id) if the first try
    /// met a dead connection or a stale clock estimate.
    async fn check_until(
        &self,
        client: IpAddr,
        deadline: Instant,
    ) -> Result<QuotaDecision, LimiterUnavailable> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut retried = false;
        loop {
            match self.run_script(client, id, Some(deadline), None).await {
                Ok(ScriptReply::Decided(decision)) => return Ok(decision),
                Ok(ScriptReply::Late) if !retried => {}
                Ok(ScriptReply::Late) => {
                    return Err(LimiterUnavailable(format!(
                        "Redis at {} ran the quota script after its deadline",
                        self.url
                    )))
                }
                // After a dead connection, the script may have run with
                // its answer lost on the way: the retry carries the same
                // id, so it answers what that run decided and counts
                // nothing twice.
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
            let mut eval = redis::cmd("EVALSHA");
            eval.arg(self.peek_script.get_hash())
                .arg(1)
                .arg(self.log_key(client))
                .arg(self.policy.window_millis());
            if let Some(now) = now {
                eval.arg(now.as_millis());
            }
            let (count, oldest, _now): (i64, i64, i64) =
                self.connection.eval(&self.peek_script, &eval).await?;
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

    /// The key of `client`'s log, in a hash tag of its own (one cluster
    /// slot per client). The policy is part of it: instances with different
    /// policies on one Redis keep separate logs instead of trimming each
    /// other's.
    fn log_key(&self, client: IpAddr) -> String {
        format!(
            "{{resetctl:{}/{}:{client}}}:log",
            self.policy.limit, self.policy.window_seconds
        )
    }

    /// One run of the script for check `id` with `deadline` passed on
    /// Redis's clock (none: no deadline), at `now` (none: Redis's clock).
    async fn run_script(
        &self,
        client: IpAddr,
        id: u64,
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
        let mut eval = redis::cmd("EVALSHA");
        eval.arg(self.script.get_hash())
            .arg(1)
            .arg(self.log_key(client))
            .arg(self.policy.limit)
            .arg(self.policy.window_millis())
            .arg(redis_deadline)
            .arg(&id.to_be_bytes()[..]);
        if let Some(now) = now {
            eval.arg(now);
        }
        let (admitted, count, oldest, now): (i64, i64, i64, i64) =
            self.connection.eval(&self.script, &eval).await?;
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
