//! The in-process sliding log: exact, compact and bounded.
//!
//! Lock-light: clients are spread over 64 shards by hash, each a `Mutex`
//! held only for the few instructions of one check, so two requests contend
//! only when their clients share a shard.
//!
//! Compact: a client is a 16-byte entry ([`Client`]) in a map keyed by the
//! smallest integer that holds its key (an IPv4 address in 4 bytes, an IPv6
//! prefix of up to /64 in 8, a longer prefix in 16). A client with one
//! request in the window needs nothing more: its one request is the entry's
//! anchor time, and a second request is a 4-byte offset in the same entry.
//! From the third request on, the log moves to a ring of 4-byte millisecond
//! offsets from the anchor ([`Rings`]: a fixed stride of a per-shard arena
//! for limits up to 64, so exactly 4 bytes per request it can hold). One- and two-request
//! clients (the common case, and the sprayer's) so cost about 25 bytes of
//! map slot, or up to about twice that just after the map grows.
//!
//! Bounded: at most `max_clients` clients are tracked (the setting
//! `--rate-limit-max-clients`). When the table is full a new client fails
//! closed ([`Full`], answered 503 `rate_limit_unavailable`) while clients
//! already tracked are counted as usual; idle clients are evicted by
//! [`MemoryLimiter::evict_idle`] (run every minute by the server), so room
//! comes back as the window slides.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::rings::Rings;
use super::{retry_after_seconds, QuotaDecision, QuotaPolicy, QuotaState};
use crate::model::Timestamp;

const SHARDS: usize = 64;
/// `Client::ring` of a client whose log is its anchor alone.
const NO_RING: u32 = u32::MAX;

/// The default cap on tracked clients: about 256 MiB at the measured cost
/// of a client (see docs/benchmarks.md), before counting their logs.
pub const DEFAULT_MAX_CLIENTS: usize = 4_000_000;

/// The table of tracked clients is full: a new client cannot be counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    /// The cap that was reached.
    pub max_clients: usize,
}

/// One tracked client: 16 bytes. Up to two requests live in the entry
/// itself (`anchor` and `second`); from the third on, in a ring.
#[derive(Clone, Copy, Debug)]
struct Client {
    /// Milliseconds since the epoch: the oldest request when `ring` is
    /// [`NO_RING`], else what the ring's offsets count from.
    anchor: i64,
    /// Without a ring: the second request's offset from `anchor` plus one,
    /// or 0 when there is no second request.
    second: u32,
    /// The client's ring in the shard's slab, or [`NO_RING`].
    ring: u32,
}

/// One shard: three maps by key width, and the rings.
#[derive(Debug)]
struct Shard {
    v4: HashMap<u32, Client>,
    v6: HashMap<u64, Client>,
    v6_long: HashMap<u128, Client>,
    /// Logs of clients with three or more requests: offsets from the anchor.
    rings: Rings,
}

/// The in-process quota.
#[derive(Debug)]
pub struct MemoryLimiter {
    policy: QuotaPolicy,
    /// The cap; a reload may change it without forgetting any client.
    max_clients: AtomicUsize,
    tracked: AtomicUsize,
    /// New clients refused because the table was full, in all.
    refused: AtomicUsize,
    /// When that was last logged (ms since the epoch), to log once a minute.
    last_warned: std::sync::atomic::AtomicI64,
    hasher: RandomState,
    shards: Vec<Mutex<Shard>>,
}

impl MemoryLimiter {
    /// An empty limiter for `policy` with the default cap.
    pub fn new(policy: QuotaPolicy) -> Self {
        Self::with_max_clients(policy, DEFAULT_MAX_CLIENTS)
    }

    /// An empty limiter for `policy` tracking at most `max_clients` clients.
    pub fn with_max_clients(policy: QuotaPolicy, max_clients: usize) -> Self {
        Self {
            policy,
            max_clients: AtomicUsize::new(max_clients),
            tracked: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
            last_warned: std::sync::atomic::AtomicI64::new(i64::MIN),
            hasher: RandomState::new(),
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        v4: HashMap::new(),
                        v6: HashMap::new(),
                        v6_long: HashMap::new(),
                        rings: Rings::new(policy.limit as usize),
                    })
                })
                .collect(),
        }
    }

    /// The policy.
    pub fn policy(&self) -> QuotaPolicy {
        self.policy
    }

    /// Counts one request of `client` at `now`; a new client when the
    /// table is full is refused with [`Full`].
    pub fn check(&self, client: IpAddr, now: Timestamp) -> Result<QuotaDecision, Full> {
        let index = (self.hasher.hash_one(client) as usize) % SHARDS;
        let mut shard = self.shards[index].lock().unwrap_or_else(|p| p.into_inner());
        let shard = &mut *shard;
        let (policy, tracked) = (self.policy, &self.tracked);
        let max = self.max_clients.load(Ordering::Relaxed);
        let result = match client {
            IpAddr::V4(v4) => check_in(
                &mut shard.v4,
                &mut shard.rings,
                u32::from(v4),
                policy,
                now,
                tracked,
                max,
            ),
            IpAddr::V6(v6) => {
                let bits = u128::from(v6);
                if bits & u128::from(u64::MAX) == 0 {
                    // A prefix of /64 or shorter: the low half is zero.
                    let key = (bits >> 64) as u64;
                    check_in(
                        &mut shard.v6,
                        &mut shard.rings,
                        key,
                        policy,
                        now,
                        tracked,
                        max,
                    )
                } else {
                    check_in(
                        &mut shard.v6_long,
                        &mut shard.rings,
                        bits,
                        policy,
                        now,
                        tracked,
                        max,
                    )
                }
            }
        };
        if result.is_err() {
            self.note_refusal(now);
        }
        result
    }

    /// What the quota stands at for `client` at `now`, counting nothing
    /// (the headers of an uncounted answer, a 304): requests left and when
    /// the oldest counted one leaves the window (`now` when none counts).
    pub fn peek(&self, client: IpAddr, now: Timestamp) -> QuotaState {
        let index = (self.hasher.hash_one(client) as usize) % SHARDS;
        let shard = self.shards[index].lock().unwrap_or_else(|p| p.into_inner());
        let found = match client {
            IpAddr::V4(v4) => shard.v4.get(&u32::from(v4)),
            IpAddr::V6(v6) => {
                let bits = u128::from(v6);
                if bits & u128::from(u64::MAX) == 0 {
                    shard.v6.get(&((bits >> 64) as u64))
                } else {
                    shard.v6_long.get(&bits)
                }
            }
        };
        let (window, now_ms) = (self.policy.window_millis(), now.as_millis());
        // The times of the client's requests still in the window, oldest first.
        let mut counted = 0u32;
        let mut oldest = None;
        if let Some(c) = found {
            let mut see = |at: i64| {
                if at + window > now_ms {
                    counted += 1;
                    oldest = Some(oldest.map_or(at, |o: i64| o.min(at)));
                }
            };
            if c.ring == NO_RING {
                see(c.anchor);
                if c.second != 0 {
                    see(c.anchor + i64::from(c.second - 1));
                }
            } else {
                for i in 0..shard.rings.len(c.ring, c.second) {
                    if let Some(off) = shard.rings.get(c.ring, c.second, i) {
                        see(c.anchor + i64::from(off));
                    }
                }
            }
        }
        QuotaState {
            remaining: self.policy.limit.saturating_sub(counted),
            reset_at: Timestamp::from_millis(oldest.map_or(now_ms, |o| o + window)),
        }
    }

    /// Counts a refusal for a full table and logs it at most once a minute.
    fn note_refusal(&self, now: Timestamp) {
        let refused = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        let last = self.last_warned.load(Ordering::Relaxed);
        if now.as_millis().saturating_sub(last) >= 60_000
            && self
                .last_warned
                .compare_exchange(last, now.as_millis(), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                "the quota table is full ({} clients, --rate-limit-max-clients): new clients get 503 rate_limit_unavailable \
                 until idle ones leave the window; {refused} refused so far",
                self.max_clients.load(Ordering::Relaxed)
            );
        }
    }

    /// Tracks at most `max_clients` clients from now on (a reload): every
    /// client tracked keeps its count; past a lower cap, new clients wait
    /// for idle ones to leave.
    pub fn set_max_clients(&self, max_clients: usize) {
        self.max_clients.store(max_clients, Ordering::Relaxed);
    }

    /// New clients refused because the table was full, in all.
    pub fn refused_clients(&self) -> usize {
        self.refused.load(Ordering::Relaxed)
    }

    /// Drops clients with no request in the window; returns how many remain.
    pub fn evict_idle(&self, now: Timestamp) -> usize {
        let window = self.policy.window_millis();
        let now = now.as_millis();
        let mut remaining = 0;
        let mut removed = 0;
        for shard in &self.shards {
            let mut guard = shard.lock().unwrap_or_else(|p| p.into_inner());
            let shard = &mut *guard;
            let rings = &mut shard.rings;
            let mut keep = |c: &mut Client| {
                let newest = if c.ring == NO_RING {
                    c.anchor + i64::from(c.second.saturating_sub(1))
                } else {
                    c.anchor + i64::from(rings.back(c.ring, c.second).unwrap_or(0))
                };
                let alive = newest + window > now;
                if !alive && c.ring != NO_RING {
                    rings.release(c.ring);
                }
                alive
            };
            let before = shard.v4.len() + shard.v6.len() + shard.v6_long.len();
            shard.v4.retain(|_, c| keep(c));
            shard.v6.retain(|_, c| keep(c));
            shard.v6_long.retain(|_, c| keep(c));
            shard.v4.shrink_to_fit();
            shard.v6.shrink_to_fit();
            shard.v6_long.shrink_to_fit();
            let after = shard.v4.len() + shard.v6.len() + shard.v6_long.len();
            removed += before - after;
            remaining += after;
        }
        self.tracked.fetch_sub(removed, Ordering::Relaxed);
        remaining
    }

    /// Clients currently tracked.
    pub fn tracked_clients(&self) -> usize {
        self.tracked.load(Ordering::Relaxed)
    }
}

/// One check in one map of a shard.
#[allow(clippy::too_many_arguments)]
fn check_in<K: Hash + Eq>(
    map: &mut HashMap<K, Client>,
    rings: &mut Rings,
    key: K,
    policy: QuotaPolicy,
    now: Timestamp,
    tracked: &AtomicUsize,
    max_clients: usize,
) -> Result<QuotaDecision, Full> {
    let (window, limit, now_ms) = (
        policy.window_millis(),
        policy.limit as usize,
        now.as_millis(),
    );
    let client = match map.get_mut(&key) {
        Some(client) => client,
        None => {
            // Reserve a place in the table first, so concurrent shards never overshoot the cap.
            if tracked.fetch_add(1, Ordering::Relaxed) >= max_clients {
                tracked.fetch_sub(1, Ordering::Relaxed);
                return Err(Full { max_clients });
            }
            map.insert(
                key,
                Client {
                    anchor: now_ms,
                    second: 0,
                    ring: NO_RING,
                },
            );
            return Ok(admitted(limit, 1, now_ms, window));
        }
    };
    if client.ring == NO_RING {
        // A request made at `t` counts while `now < t + window`.
        if client.anchor + window <= now_ms {
            if client.second == 0 {
                client.anchor = now_ms;
                return Ok(admitted(limit, 1, now_ms, window));
            }
            client.anchor += i64::from(client.second - 1);
            client.second = 0;
            if client.anchor + window <= now_ms {
                client.anchor = now_ms;
                return Ok(admitted(limit, 1, now_ms, window));
            }
        }
        let count = if client.second == 0 { 1 } else { 2 };
        if count >= limit {
            return Ok(limited(client.anchor, now, window));
        }
        if count == 1 {
            client.second = offset(now_ms - client.anchor).saturating_add(1);
            return Ok(admitted(limit, 2, client.anchor, window));
        }
        // A third request: the log moves to a ring.
        let entries = [0, client.second - 1, offset(now_ms - client.anchor)];
        client.ring = rings.alloc(&entries, &mut client.second);
        return Ok(admitted(limit, 3, client.anchor, window));
    }
    let (slot, meta) = (client.ring, &mut client.second);
    while rings
        .front(slot, *meta)
        .is_some_and(|off| client.anchor + i64::from(off) + window <= now_ms)
    {
        rings.pop_front(slot, meta);
    }
    let len = rings.len(slot, *meta);
    if len >= limit {
        let oldest = client.anchor + i64::from(rings.front(slot, *meta).unwrap_or(0));
        return Ok(limited(oldest, now, window));
    }
    if now_ms - client.anchor > i64::from(u32::MAX - 1) {
        // Offsets are 4 bytes: move the anchor up to the oldest kept request.
        match rings.front(slot, *meta) {
            Some(shift) => {
                rings.shift(slot, *meta, shift);
                client.anchor += i64::from(shift);
            }
            None => client.anchor = now_ms,
        }
    }
    rings.push_back(slot, meta, offset(now_ms - client.anchor));
    let oldest = client.anchor + i64::from(rings.front(slot, *meta).unwrap_or(0));
    Ok(admitted(limit, len + 1, oldest, window))
}

/// A millisecond offset within one window, in 4 bytes: exact for windows
/// up to 49.7 days (longer ones saturate, erring towards refusing).
fn offset(millis: i64) -> u32 {
    u32::try_from(millis.max(0))
        .unwrap_or(u32::MAX - 1)
        .min(u32::MAX - 1)
}

fn admitted(limit: usize, count: usize, oldest: i64, window: i64) -> QuotaDecision {
    QuotaDecision::Admitted {
        remaining: (limit - count) as u32,
        reset_at: Timestamp::from_millis(oldest + window),
    }
}

fn limited(oldest: i64, now: Timestamp, window: i64) -> QuotaDecision {
    let reset_at = Timestamp::from_millis(oldest + window);
    QuotaDecision::Limited {
        reset_at,
        retry_after: retry_after_seconds(now, reset_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_millis(1_800_000_000_000 + secs * 1000)
    }

    fn check(limiter: &MemoryLimiter, ip: IpAddr, now: Timestamp) -> QuotaDecision {
        limiter.check(ip, now).expect("room in the table")
    }

    #[test]
    fn old_requests_leave_the_window_one_by_one() {
        let limiter = MemoryLimiter::new(QuotaPolicy {
            limit: 3,
            window_seconds: 10,
        });
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        assert_eq!(
            check(&limiter, ip, at(0)),
            QuotaDecision::Admitted {
                remaining: 2,
                reset_at: at(10)
            }
        );
        assert_eq!(
            check(&limiter, ip, at(4)),
            QuotaDecision::Admitted {
                remaining: 1,
                reset_at: at(10)
            }
        );
        assert_eq!(
            check(&limiter, ip, at(6)),
            QuotaDecision::Admitted {
                remaining: 0,
                reset_at: at(10)
            }
        );
        assert_eq!(
            check(&limiter, ip, at(7)),
            QuotaDecision::Limited {
                reset_at: at(10),
                retry_after: 3
            }
        );
        // 9.5 s: still 0.5 s to go, rounded up to 1.
        let half = Timestamp::from_millis(at(9).as_millis() + 500);
        assert_eq!(
            check(&limiter, ip, half),
            QuotaDecision::Limited {
                reset_at: at(10),
                retry_after: 1
            }
        );
        // At 10 s only the first request has left: one slot, not a refill.
        assert_eq!(
            check(&limiter, ip, at(10)),
            QuotaDecision::Admitted {
                remaining: 0,
                reset_at: at(14)
            }
        );
        assert_eq!(
            check(&limiter, ip, at(11)),
            QuotaDecision::Limited {
                reset_at: at(14),
                retry_after: 3
            }
        );
        // Another client is independent.
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(
            check(&limiter, other, at(11)),
            QuotaDecision::Admitted {
                remaining: 2,
                reset_at: at(21)
            }
        );
    }

    #[test]
    fn a_limit_of_one_and_long_ipv6_prefixes() {
        let limiter = MemoryLimiter::new(QuotaPolicy {
            limit: 1,
            window_seconds: 10,
        });
        let long: IpAddr = "2001:db8::1".parse().unwrap();
        let short: IpAddr = "2001:db8::".parse().unwrap();
        assert!(matches!(
            check(&limiter, long, at(0)),
            QuotaDecision::Admitted { remaining: 0, .. }
        ));
        assert!(matches!(
            check(&limiter, long, at(1)),
            QuotaDecision::Limited { retry_after: 9, .. }
        ));
        assert!(matches!(
            check(&limiter, short, at(1)),
            QuotaDecision::Admitted { .. }
        ));
        assert!(matches!(
            check(&limiter, long, at(10)),
            QuotaDecision::Admitted { .. }
        ));
    }

    #[test]
    fn idle_clients_are_evicted() {
        let limiter = MemoryLimiter::new(QuotaPolicy {
            limit: 2,
            window_seconds: 10,
        });
        for i in 0..100u8 {
            check(&limiter, IpAddr::from([10, 0, 0, i]), at(i64::from(i % 5)));
            if i % 2 == 0 {
                check(&limiter, IpAddr::from([10, 0, 0, i]), at(i64::from(i % 5)));
            }
        }
        assert_eq!(limiter.tracked_clients(), 100);
        assert_eq!(
            limiter.evict_idle(at(12)),
            40,
            "clients last seen at 3 s and 4 s remain"
        );
        assert_eq!(limiter.evict_idle(at(20)), 0);
    }

    /// The naive sliding log the limiter must agree with.
    #[derive(Default)]
    struct Model(std::collections::HashMap<IpAddr, Vec<i64>>);

    impl Model {
        fn check(&mut self, policy: QuotaPolicy, client: IpAddr, now: i64) -> QuotaDecision {
            let window = policy.window_millis();
            let log = self.0.entry(client).or_default();
            log.retain(|&t| now < t + window);
            if log.len() < policy.limit as usize {
                log.push(now);
                QuotaDecision::Admitted {
                    remaining: policy.limit - log.len() as u32,
                    reset_at: Timestamp::from_millis(log[0] + window),
                }
            } else {
                let reset_at = Timestamp::from_millis(log[0] + window);
                QuotaDecision::Limited {
                    reset_at,
                    retry_after: retry_after_seconds(Timestamp::from_millis(now), reset_at),
                }
            }
        }
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// Random request sequences on a manual clock: the same admissions,
        /// `Remaining`, `Reset` and `Retry-After` as the naive model.
        #[test]
        fn agrees_with_a_naive_sliding_log(
            limit in 1u32..6,
            window_seconds in 1u32..20,
            // Whole seconds often, so requests land exactly on window edges.
            steps in proptest::collection::vec(
                (0usize..5, proptest::prop_oneof![0i64..3, (0i64..8).prop_map(|s| s * 1000), 0i64..15_000]),
                1..300,
            ),
        ) {
            let policy = QuotaPolicy { limit, window_seconds };
            let limiter = MemoryLimiter::new(policy);
            let mut model = Model::default();
            let clients: [IpAddr; 5] = [
                "192.0.2.1".parse().unwrap(),
                "192.0.2.2".parse().unwrap(),
                "2001:db8:1::".parse().unwrap(),
                "2001:db8::1".parse().unwrap(),
                "::ffff:192.0.2.1".parse().unwrap(),
            ];
            let mut now = 1_800_000_000_000i64;
            for (client, advance) in steps {
                now += advance;
                let ip = clients[client];
                let got = limiter.check(ip, Timestamp::from_millis(now)).unwrap();
                proptest::prop_assert_eq!(got, model.check(policy, ip, now));
                if advance % 7 == 0 {
                    limiter.evict_idle(Timestamp::from_millis(now));
                }
            }
        }
    }

    proptest::proptest! {
        /// The same for limits above the arena's, whose rings are deques.
        #[test]
        fn agrees_with_a_naive_sliding_log_for_large_limits(
            limit in 65u32..70,
            window_seconds in 1u32..5,
            steps in proptest::collection::vec(
                (0usize..2, proptest::prop_oneof![0i64..3, 0i64..200, (0i64..3).prop_map(|s| s * 1000)]),
                1..400,
            ),
        ) {
            let policy = QuotaPolicy { limit, window_seconds };
            let limiter = MemoryLimiter::new(policy);
            let mut model = Model::default();
            let clients: [IpAddr; 2] = ["192.0.2.1".parse().unwrap(), "2001:db8::".parse().unwrap()];
            let mut now = 1_800_000_000_000i64;
            for (client, advance) in steps {
                now += advance;
                let ip = clients[client];
                let got = limiter.check(ip, Timestamp::from_millis(now)).unwrap();
                proptest::prop_assert_eq!(got, model.check(policy, ip, now));
            }
        }
    }

    #[test]
    fn a_full_table_refuses_new_clients_only_until_idle_ones_leave() {
        let limiter = MemoryLimiter::with_max_clients(
            QuotaPolicy {
                limit: 5,
                window_seconds: 10,
            },
            3,
        );
        let ip = |n: u8| IpAddr::from([10, 0, 0, n]);
        for n in 0..3 {
            check(&limiter, ip(n), at(0));
        }
        assert_eq!(limiter.check(ip(9), at(1)), Err(Full { max_clients: 3 }));
        assert!(matches!(
            check(&limiter, ip(0), at(1)),
            QuotaDecision::Admitted { remaining: 3, .. }
        ));
        assert_eq!(
            limiter.evict_idle(at(10)),
            1,
            "only the client seen at 1 s stays"
        );
        assert!(limiter.check(ip(9), at(10)).is_ok());
    }
}
