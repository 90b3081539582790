//! A server no idle loop or hostile client can exhaust (issue 15): an idle
//! server rests.

use std::time::Duration;

use crate::util::server::Server;
use crate::util::World;

/// (CPU seconds used, read syscalls made) by `pid` so far, from /proc.
fn cpu_and_reads(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) start after ") ".
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    let reads = io
        .lines()
        .find_map(|l| l.strip_prefix("syscr: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (ticks as f64 / 100.0, reads)
}

#[test]
fn an_idle_server_rests() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--log", "warn"], &[]);
    assert_eq!(s.get("/healthz").status, 200);
    std::thread::sleep(Duration::from_millis(500));
    let (cpu_before, reads_before) = cpu_and_reads(s.child.id());
    std::thread::sleep(Duration::from_secs(10));
    let (cpu_after, reads_after) = cpu_and_reads(s.child.id());
    let (cpu, reads) = (cpu_after - cpu_before, reads_after - reads_before);
    // The safety poll checks every 2 s (a read or two of the pointer and the sync state).
    assert!(reads <= 40, "{reads} read syscalls in 10 idle seconds");
    assert!(cpu < 0.05, "{cpu:.3} s of CPU in 10 idle seconds");
    // A publish is still noticed at once (file events still work).
    let published = w
        .run(&["--now", "2026-11-21T10:00:00.000Z", "publish"])
        .success();
    assert!(
        published.stdout.contains("snapshot 2"),
        "{}",
        published.stdout
    );
    s.wait_for("/healthz", Duration::from_millis(500), |r| {
        r.json()["sequence"] == 2
    });
}

/// Resident memory of `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap()
}

#[test]
fn a_full_quota_table_refuses_new_clients_only() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(
        &w,
        &[
            "--log",
            "warn",
            "--rate-limit",
            "5/3600",
            "--rate-limit-max-clients",
            "2",
            "--trust-proxy",
            "127.0.0.1",
        ],
        &[],
    );
    let get = |client: &str| {
        crate::util::server::raw_request(
            s.addr,
            "GET",
            "/openapi/v1/records",
            &[("X-Forwarded-For", client)],
        )
    };
    assert_eq!(get("198.51.100.1").status, 200);
    assert_eq!(get("198.51.100.2").status, 200);
    let refused = get("198.51.100.3");
    assert_eq!(refused.status, 503);
    let body = refused.json();
    assert_eq!(body["error"], "rate_limit_unavailable");
    assert_eq!(refused.header("x-ratelimit-remaining"), None);
    // Clients already tracked are counted as usual.
    assert_eq!(
        get("198.51.100.1").header("x-ratelimit-remaining"),
        Some("3")
    );
    // Thousands of new clients: refused, logged once, and memory stays flat.
    let before = rss_kib(s.child.id());
    for n in 0..3000u32 {
        let ip = format!("10.{}.{}.{}", n >> 16, (n >> 8) & 255, n & 255);
        assert_eq!(get(&ip).status, 503);
    }
    let grown = rss_kib(s.child.id()).saturating_sub(before);
    assert!(grown < 2048, "RSS grew by {grown} KiB for refused clients");
    let log = s.log_text();
    assert_eq!(
        log.matches("(2 clients, --rate-limit-max-clients): new clients get 503")
            .count(),
        1,
        "{log}"
    );
    assert!(
        log.lines().count() < 10,
        "no line per refused request:\n{log}"
    );
}
