//! The burst guard for every answer the quota does not decide (docs, OpenAPI
//! document, skill file, OPTIONS, `/healthz`, 404/405, MCP handshakes and
//! refused MCP requests; applied once, in `api::routes`, to whatever route
//! answered): a generous per-IP token bucket from `governor`,
//! entirely separate from the quota, so its 429 never touches a client's
//! quota and a flood of cheap requests cannot starve the server.

use std::net::IpAddr;
use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Per-IP burst limit for uncounted routes.
#[derive(Debug)]
pub struct FloodGuard {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
}

impl FloodGuard {
    /// `per_second` sustained, `burst` at once, per client key.
    pub fn new(per_second: NonZeroU32, burst: NonZeroU32) -> Self {
        Self {
            limiter: RateLimiter::keyed(Quota::per_second(per_second).allow_burst(burst)),
        }
    }

    /// `Ok(())` to let the request through, or `Err(seconds)` to refuse it for that long.
    pub fn check(&self, client: IpAddr) -> Result<(), u64> {
        self.limiter.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            (wait.as_millis() as u64).div_ceil(1000).max(1)
        })
    }

    /// Forgets clients whose bucket is full again (bounded memory).
    pub fn evict_idle(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}
