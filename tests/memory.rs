//! What the bodies made from a view cost in memory (issue 39, item 7): the
//! cache's bound counts what an entry really costs (its body, key, tags and
//! the entry itself), so the count `/metrics` reports, which the bound
//! limits, matches the resident memory a flood of distinct small query
//! variants takes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use crate::util::server::Server;
use crate::util::World;

/// The process's resident memory, in bytes.
fn resident(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status");
    kb * 1024
}

/// What the cache counts against its bound, from the admin listener:
/// `resetctl_view_bodies_memory_bytes` (a build before it counted only
/// its bodies, `resetctl_view_bodies_bytes`).
fn counted(s: &Server) -> u64 {
    let metrics = s.admin_get("/metrics", &[]).text();
    let gauge = |name: &str| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    gauge("resetctl_view_bodies_memory_bytes")
        .or_else(|| gauge("resetctl_view_bodies_bytes"))
        .expect("resetctl_view_bodies_memory_bytes in /metrics") as u64
}

/// Sends `paths` over one keep-alive connection, pipelined in batches, and
/// reads every answer (each must be a 200).
fn flood(s: &Server, paths: impl Iterator<Item = String>) -> usize {
    let stream = TcpStream::connect(s.addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let paths: Vec<String> = paths.collect();
    let mut answered = 0;
    for batch in paths.chunks(200) {
        let mut requests = String::new();
        for path in batch {
            requests.push_str(&format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n"));
        }
        writer.write_all(requests.as_bytes()).unwrap();
        for _ in batch {
            let mut status = String::new();
            reader.read_line(&mut status).unwrap();
            assert!(status.starts_with("HTTP/1.1 200"), "{status:?}");
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            answered += 1;
        }
    }
    answered
}

#[test]
fn the_body_cache_counts_what_its_entries_cost_in_resident_memory() {
    // A load generator of its own, and a measure that another test's
    // server must not disturb.
    let _alone = crate::util::one_at_a_time();
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(
        &w,
        &[
            "--now",
            "2026-11-20T10:00:00.000Z",
            "--no-rate-limit",
            "--flood-guard",
            "1000000/1000000",
            "--admin-listen",
            "127.0.0.1:0",
        ],
        &[],
    );
    s.settle();
    let (rss_before, counted_before) = (resident(s.child.id()), counted(&s));
    // 20,000 distinct pages past the last one: small bodies (about 250
    // bytes each), where what an entry costs beyond its body dominates.
    let n = 20_000;
    let answered = flood(
        &s,
        (0..n).map(|i| format!("/openapi/v1/records?page={}&pageSize=1", 1000 + i)),
    );
    assert_eq!(answered, n);
    let grown = resident(s.child.id()).saturating_sub(rss_before);
    let count = counted(&s).saturating_sub(counted_before);
    let mib = |b: u64| b as f64 / 1048576.0;
    eprintln!(
        "{n} entries: resident memory grew {:.1} MiB, the cache counted {:.1} MiB",
        mib(grown),
        mib(count)
    );
    // The count the bound limits is what the entries take, give or take
    // the allocator's slack: never a fraction of it.
    assert!(
        grown <= count + count / 5 + (3 << 20),
        "resident memory grew {:.1} MiB while the cache counted {:.1} MiB",
        mib(grown),
        mib(count)
    );
    assert!(
        count <= grown + grown / 2 + (3 << 20),
        "the cache counted {:.1} MiB, far more than the {:.1} MiB it took",
        mib(count),
        mib(grown)
    );
    // 20,000 more: what they cost passes the bound (32 MiB of cold
    // entries), which drops the cold entries and starts again, so what is
    // held stays under it. A bound that counted only the bodies would let
    // twice as many entries in, well past it.
    let answered = flood(
        &s,
        (n..2 * n).map(|i| format!("/openapi/v1/records?page={}&pageSize=1", 1000 + i)),
    );
    assert_eq!(answered, n);
    let held = counted(&s).saturating_sub(counted_before);
    assert!(
        held <= 32 << 20,
        "the cache holds {:.1} MiB of cold entries, past its 32 MiB bound",
        mib(held)
    );
}
