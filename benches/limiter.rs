//! One in-process quota check (`MemoryLimiter::check`), the work the quota
//! adds to every data request: for a client that is admitted, for one that
//! is refused, and spread over 10,000 clients.

use std::hint::black_box;
use std::net::IpAddr;

use criterion::{criterion_group, criterion_main, Criterion};
use resetctl::limit::{MemoryLimiter, QuotaPolicy};
use resetctl::model::Timestamp;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("memory_limiter_check");
    let now = Timestamp::from_millis(1_800_000_000_000);
    let generous = MemoryLimiter::new(QuotaPolicy {
        limit: 20,
        window_seconds: 3600,
    });
    let mut tick = 0i64;
    group.bench_function("admitted (window slides every call)", |b| {
        b.iter(|| {
            // Advance 3 minutes per call so each call drops one old entry and admits one.
            tick += 180_000;
            black_box(
                generous
                    .check(IpAddr::from([192, 0, 2, 1]), now.add_millis(tick))
                    .ok(),
            )
        })
    });
    let full = MemoryLimiter::new(QuotaPolicy::default());
    for _ in 0..20 {
        let _ = full.check(IpAddr::from([192, 0, 2, 2]), now);
    }
    group.bench_function("refused (client at its limit)", |b| {
        b.iter(|| black_box(full.check(IpAddr::from([192, 0, 2, 2]), now).ok()))
    });
    let many = MemoryLimiter::new(QuotaPolicy {
        limit: 1_000_000_000,
        window_seconds: 3600,
    });
    let mut n = 0u32;
    group.bench_function("10,000 distinct clients", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            let ip = IpAddr::from((0x0a00_0000 | (n % 10_000)).to_be_bytes());
            black_box(many.check(ip, now).ok())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
