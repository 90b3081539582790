//! A model-based test of the quota: random request sequences on a manual
//! clock against the Redis limiter (a real redis-server) and the in-process
//! limiter, each compared with a naive sliding log: the same admissions,
//! `Remaining`, `Reset` and `Retry-After`.

use std::collections::HashMap;
use std::net::IpAddr;

use resetctl::limit::{
    retry_after_seconds, MemoryLimiter, QuotaDecision, QuotaPolicy, RedisLimiter,
};
use resetctl::model::Timestamp;

use crate::util::redis::Redis;
use crate::util::Rng;

/// The naive sliding log both limiters must agree with.
#[derive(Default)]
struct Model(HashMap<IpAddr, Vec<i64>>);

impl Model {
    fn check(&mut self, policy: QuotaPolicy, client: IpAddr, now: i64) -> QuotaDecision {
        let window = policy.window_millis();
        let log = self.0.entry(client).or_default();
        log.retain(|&t| now < t + window);
        let reset_at = |log: &Vec<i64>| Timestamp::from_millis(log[0] + window);
        if log.len() < policy.limit as usize {
            log.push(now);
            QuotaDecision::Admitted {
                remaining: policy.limit - log.len() as u32,
                reset_at: reset_at(log),
            }
        } else {
            QuotaDecision::Limited {
                reset_at: reset_at(log),
                retry_after: retry_after_seconds(Timestamp::from_millis(now), reset_at(log)),
            }
        }
    }
}

#[test]
fn both_limiters_agree_with_a_naive_sliding_log() {
    let redis = Redis::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The Redis connection manager spawns its task on the current runtime.
    let _entered = runtime.enter();
    let mut rng = Rng::from_time();
    for case in 0..60u8 {
        let policy = QuotaPolicy {
            limit: 1 + rng.below(5) as u32,
            window_seconds: 1 + rng.below(12) as u32,
        };
        let redis_limiter = RedisLimiter::new(&redis.url(), &Default::default(), policy).unwrap();
        let memory = MemoryLimiter::new(policy);
        let mut model = Model::default();
        // Fresh addresses per case, so Redis keys of earlier cases never meet these.
        let clients: Vec<IpAddr> = (0..3u8).map(|n| IpAddr::from([10, case, 0, n])).collect();
        let mut now = 1_800_000_000_000i64;
        for step in 0..150 {
            // Whole seconds often, so requests land exactly on window edges.
            now += match rng.below(3) {
                0 => rng.below(3) as i64,
                1 => rng.below(8) as i64 * 1000,
                _ => rng.below(15_000) as i64,
            };
            let client = clients[rng.below(3) as usize];
            let expected = model.check(policy, client, now);
            let at = Timestamp::from_millis(now);
            let in_redis = runtime
                .block_on(redis_limiter.check_at(client, at))
                .unwrap();
            let in_memory = memory.check(client, at).unwrap();
            assert_eq!(
                in_redis, expected,
                "Redis, case {case} {policy} step {step}"
            );
            assert_eq!(
                in_memory, expected,
                "memory, case {case} {policy} step {step}"
            );
        }
    }
}
