//! Memory of the in-process quota per tracked client (issue 15's goal: at
//! most 64 bytes per client plus 4 bytes per logged request), measured as
//! the process's resident memory before and after 1,000,000 distinct
//! clients of one request each, then two, then twenty (the default limit).
//! Run by `make bench`; prints one Markdown table.

use std::net::IpAddr;

use resetctl::limit::{MemoryLimiter, QuotaPolicy};
use resetctl::model::Timestamp;

const CLIENTS: u32 = 1_000_000;

/// Resident memory of this process, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .expect("VmRSS");
    kib * 1024
}

fn main() {
    // `cargo bench` passes --bench; anything else (a filter) is ignored.
    let limiter = MemoryLimiter::new(QuotaPolicy::default());
    let now = Timestamp::from_millis(1_800_000_000_000);
    let ip = |n: u32| IpAddr::from((0x0a00_0000 | n).to_be_bytes());
    let before = rss();
    for n in 0..CLIENTS {
        limiter
            .check(ip(n), now)
            .expect("room for a million clients");
    }
    let one = rss();
    for n in 0..CLIENTS {
        limiter.check(ip(n), now.add_millis(1000)).unwrap();
    }
    let two = rss();
    for second in 2..20 {
        for n in 0..CLIENTS {
            limiter.check(ip(n), now.add_millis(1000 * second)).unwrap();
        }
    }
    let twenty = rss();
    let per = |bytes: u64| bytes as f64 / f64::from(CLIENTS);
    println!(
        "| in-process quota, {CLIENTS} distinct IPv4 clients | resident memory | per client |"
    );
    println!("|---|---|---|");
    println!(
        "| one request each | {:.1} MiB | {:.1} B (goal ≤ 68) |",
        (one - before) as f64 / 1048576.0,
        per(one - before)
    );
    println!(
        "| two requests each | {:.1} MiB | {:.1} B (goal ≤ 72) |",
        (two - before) as f64 / 1048576.0,
        per(two - before)
    );
    println!(
        "| twenty requests each (the default limit, the worst case) | {:.1} MiB | {:.1} B (goal ≤ 144) |",
        (twenty - before) as f64 / 1048576.0,
        per(twenty - before)
    );
    assert_eq!(limiter.tracked_clients(), CLIENTS as usize);
}
