//! The in-process sliding log.
//!
//! Lock-light: clients are spread over 64 shards by hash, each a
//! `Mutex<HashMap>` held only for the few instructions of one check, so two
//! requests contend only when their clients share a shard. Each client keeps
//! at most `limit` timestamps (8 bytes each) in a `VecDeque`; clients whose
//! newest request left the window are evicted by [`MemoryLimiter::evict_idle`]
//! (run periodically by the server), so memory stays bounded by the clients
//! active in the last window: about 96 bytes of map entry and deque header
//! plus 8 × limit bytes per client (≈ 260 bytes at the default 20).

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::Mutex;

use super::{retry_after_seconds, QuotaDecision, QuotaPolicy};
use crate::model::Timestamp;

const SHARDS: usize = 64;

/// The in-process quota.
#[derive(Debug)]
pub struct MemoryLimiter {
    policy: QuotaPolicy,
    hasher: RandomState,
    shards: Vec<Mutex<HashMap<IpAddr, VecDeque<i64>>>>,
}

impl MemoryLimiter {
    /// An empty limiter for `policy`.
    pub fn new(policy: QuotaPolicy) -> Self {
        Self {
            policy,
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    /// The policy.
    pub fn policy(&self) -> QuotaPolicy {
        self.policy
    }

    fn shard(&self, client: &IpAddr) -> &Mutex<HashMap<IpAddr, VecDeque<i64>>> {
        &self.shards[(self.hasher.hash_one(client) as usize) % SHARDS]
    }

    /// Counts one request of `client` at `now`.
    pub fn check(&self, client: IpAddr, now: Timestamp) -> QuotaDecision {
        let window = self.policy.window_millis();
        let limit = self.policy.limit as usize;
        let now_ms = now.as_millis();
        let mut shard = self
            .shard(&client)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let log = shard
            .entry(client)
            .or_insert_with(|| VecDeque::with_capacity(limit.min(32)));
        // A request made at `t` counts while `now < t + window`.
        while log.front().is_some_and(|&t| t + window <= now_ms) {
            log.pop_front();
        }
        if log.len() < limit {
            log.push_back(now_ms);
            let oldest = *log.front().expect("just pushed");
            QuotaDecision::Admitted {
                remaining: (limit - log.len()) as u32,
                reset_at: Timestamp::from_millis(oldest + window),
            }
        } else {
            let reset_at = Timestamp::from_millis(log.front().copied().unwrap_or(now_ms) + window);
            QuotaDecision::Limited {
                reset_at,
                retry_after: retry_after_seconds(now, reset_at),
            }
        }
    }

    /// Drops clients with no request in the window; returns how many remain.
    pub fn evict_idle(&self, now: Timestamp) -> usize {
        let window = self.policy.window_millis();
        let mut remaining = 0;
        for shard in &self.shards {
            let mut map = shard.lock().unwrap_or_else(|p| p.into_inner());
            map.retain(|_, log| log.back().is_some_and(|&t| t + window > now.as_millis()));
            remaining += map.len();
        }
        remaining
    }

    /// Clients currently tracked.
    pub fn tracked_clients(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_millis(1_800_000_000_000 + secs * 1000)
    }

    #[test]
    fn old_requests_leave_the_window_one_by_one() {
        let limiter = MemoryLimiter::new(QuotaPolicy {
            limit: 3,
            window_seconds: 10,
        });
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        assert_eq!(
            limiter.check(ip, at(0)),
            QuotaDecision::Admitted {
                remaining: 2,
                reset_at: at(10)
            }
        );
        assert_eq!(
            limiter.check(ip, at(4)),
            QuotaDecision::Admitted {
                remaining: 1,
                reset_at: at(10)
            }
        );
        assert_eq!(
            limiter.check(ip, at(6)),
            QuotaDecision::Admitted {
                remaining: 0,
                reset_at: at(10)
            }
        );
        assert_eq!(
            limiter.check(ip, at(7)),
            QuotaDecision::Limited {
                reset_at: at(10),
                retry_after: 3
            }
        );
        // 9.5 s: still 0.5 s to go, rounded up to 1.
        let half = Timestamp::from_millis(at(9).as_millis() + 500);
        assert_eq!(
            limiter.check(ip, half),
            QuotaDecision::Limited {
                reset_at: at(10),
                retry_after: 1
            }
        );
        // At 10 s only the first request has left: one slot, not a refill.
        assert_eq!(
            limiter.check(ip, at(10)),
            QuotaDecision::Admitted {
                remaining: 0,
                reset_at: at(14)
            }
        );
        assert_eq!(
            limiter.check(ip, at(11)),
            QuotaDecision::Limited {
                reset_at: at(14),
                retry_after: 3
            }
        );
        // Another client is independent.
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(
            limiter.check(other, at(11)),
            QuotaDecision::Admitted {
                remaining: 2,
                reset_at: at(21)
            }
        );
    }

    #[test]
    fn idle_clients_are_evicted() {
        let limiter = MemoryLimiter::new(QuotaPolicy {
            limit: 2,
            window_seconds: 10,
        });
        for i in 0..100u8 {
            limiter.check(IpAddr::from([10, 0, 0, i]), at(i64::from(i % 5)));
        }
        assert_eq!(limiter.tracked_clients(), 100);
        assert_eq!(
            limiter.evict_idle(at(12)),
            40,
            "clients last seen at 3 s and 4 s remain"
        );
        assert_eq!(limiter.evict_idle(at(20)), 0);
    }
}
