//! Back-off after failed syncs: exponential, starting at the interval,
//! capped, with jitter so many instances do not retry in step.

use std::time::Duration;

/// The delay before attempt `failures + 1`, given `failures` consecutive
/// failures (≥ 1): `interval × 2^(failures-1)`, capped at `cap`, then
/// scaled by `jitter` in [0.5, 1.0] (callers pass [`random_jitter`]; tests
/// pass a fixed value).
pub fn backoff_delay(interval: Duration, cap: Duration, failures: u32, jitter: f64) -> Duration {
    let exponent = failures.saturating_sub(1).min(30);
    let raw = interval.saturating_mul(1u32 << exponent).min(cap);
    raw.mul_f64(jitter.clamp(0.5, 1.0))
}

/// A jitter factor in [0.5, 1.0].
pub fn random_jitter() -> f64 {
    0.5 + 0.5 * crate::random::random_unit()
}

/// The wait before the next regular sync: the interval plus up to a tenth
/// of it (at most 5 minutes), scaled by `unit` in [0, 1). Many mirrors
/// started together (a deploy, a reboot) thus spread out instead of
/// hitting the feed in the same second, and never poll more often than
/// the interval.
pub fn interval_with_jitter(interval: Duration, unit: f64) -> Duration {
    let spread = (interval / 10).min(Duration::from_secs(300));
    interval + spread.mul_f64(unit.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_the_interval_up_to_the_cap() {
        let min = Duration::from_secs(60);
        let five = 5 * min;
        let cap = 360 * min;
        let delays: Vec<u64> = (1..=9)
            .map(|n| backoff_delay(five, cap, n, 1.0).as_secs() / 60)
            .collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 320, 360, 360]);
        assert_eq!(backoff_delay(five, cap, 1, 0.5), Duration::from_secs(150));
        assert_eq!(backoff_delay(five, cap, 200, 1.0), cap);
        let hour = 60 * min;
        assert_eq!(interval_with_jitter(hour, 0.0), hour);
        assert_eq!(
            interval_with_jitter(hour, 0.5),
            hour + Duration::from_secs(150)
        );
        assert_eq!(
            interval_with_jitter(five, 1.0),
            five + Duration::from_secs(30)
        );
        assert_eq!(interval_with_jitter(24 * hour, 1.0), 24 * hour + five);
        for _ in 0..100 {
            let j = random_jitter();
            assert!((0.5..=1.0).contains(&j), "{j}");
        }
    }
}
