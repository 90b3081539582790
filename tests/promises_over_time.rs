//! Promises checked over time and over many inputs, through the real
//! server: the quota on a clock the test moves (RESETCTL_TEST_CLOCK_FILE),
//! compared with a naive sliding log at every request, headers included;
//! and client keys over random chains of trusted and untrusted addresses in
//! several lines of `X-Forwarded-For` and of `Forwarded`, compared with a
//! model of docs/api.md's rule. Both draw from a seeded generator
//! (`RESETCTL_TEST_SEED` replays a run).

use std::net::{IpAddr, Ipv6Addr};

use resetctl::model::Timestamp;

use crate::util::server::Server;
use crate::util::{Rng, World};

const T0: &str = "2026-11-20T10:00:00.000Z";
const LIMIT: usize = 20;
const WINDOW_MS: i64 = 3_600_000;

fn set_clock(file: &std::path::Path, at: i64) {
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, Timestamp::from_millis(at).to_string()).unwrap();
    std::fs::rename(&tmp, file).unwrap();
}

#[test]
fn the_quota_follows_a_naive_sliding_log_on_a_moving_clock() {
    let w = World::new();
    w.seed_bundled();
    let clock = w.path("clock");
    let mut now = Timestamp::parse(T0).unwrap().as_millis();
    set_clock(&clock, now);
    let s = Server::start(
        &w,
        &[],
        &[("RESETCTL_TEST_CLOCK_FILE", clock.to_str().unwrap())],
    );
    let mut rng = Rng::from_time();
    // The model: the instants of the admitted requests still in the window.
    let mut log: Vec<i64> = Vec::new();
    for step in 0..400 {
        now += match rng.below(4) {
            0 => 0,
            1 => rng.below(2_000) as i64,
            2 => rng.below(120_000) as i64,
            _ => rng.below(900_000) as i64,
        };
        set_clock(&clock, now);
        let reply = s.get("/openapi/v1/records/latest");
        log.retain(|&t| now < t + WINDOW_MS);
        let admitted = log.len() < LIMIT;
        if admitted {
            log.push(now);
        }
        let reset = Timestamp::from_millis(log[0] + WINDOW_MS).to_string();
        let what = format!("step {step} at {}", Timestamp::from_millis(now));
        assert_eq!(reply.header("x-ratelimit-limit"), Some("20"), "{what}");
        assert_eq!(reply.header("x-ratelimit-window"), Some("3600"), "{what}");
        assert_eq!(
            reply.header("x-ratelimit-reset"),
            Some(reset.as_str()),
            "{what}"
        );
        if admitted {
            assert_eq!(reply.status, 200, "{what}");
            let remaining = (LIMIT - log.len()).to_string();
            assert_eq!(
                reply.header("x-ratelimit-remaining"),
                Some(remaining.as_str()),
                "{what}"
            );
            assert_eq!(reply.header("retry-after"), None, "{what}");
        } else {
            assert_eq!(reply.status, 429, "{what}");
            let wait = ((log[0] + WINDOW_MS - now) as u64).div_ceil(1000).max(1);
            assert_eq!(reply.header("x-ratelimit-remaining"), Some("0"), "{what}");
            assert_eq!(
                reply.header("retry-after"),
                Some(wait.to_string().as_str()),
                "{what}"
            );
            assert_eq!(reply.json()["retryAfter"], wait, "{what}");
        }
    }
}

/// A hop of a forwarding chain: an address (trusted or not), or a value
/// that is not one.
#[derive(Clone, Debug)]
enum Hop {
    Ip(IpAddr),
    Garbage(&'static str),
}

fn random_hop(rng: &mut Rng) -> Hop {
    let n = |rng: &mut Rng, max: u64| rng.below(max) as u8;
    match rng.below(10) {
        // Trusted: 10.0.0.0/8 and fd00::/8.
        0..=2 => Hop::Ip(IpAddr::from([10, n(rng, 255), n(rng, 255), n(rng, 255)])),
        3 => Hop::Ip(IpAddr::V6(Ipv6Addr::new(
            0xfd00,
            0,
            0,
            0,
            0,
            0,
            0,
            rng.below(65_535) as u16,
        ))),
        // Untrusted.
        4..=6 => Hop::Ip(IpAddr::from([93, 184, n(rng, 255), n(rng, 255)])),
        7..=8 => Hop::Ip(IpAddr::V6(Ipv6Addr::new(
            0x2001,
            0xdb8,
            rng.below(65_535) as u16,
            rng.below(65_535) as u16,
            rng.below(65_535) as u16,
            0,
            0,
            rng.below(65_535) as u16,
        ))),
        _ => Hop::Garbage(["unknown", "_hidden", "not-an-ip"][rng.below(3) as usize]),
    }
}

fn trusted(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[0] == 10 || v4.is_loopback(),
        IpAddr::V6(v6) => v6.segments()[0] >> 8 == 0xfd,
    }
}

/// docs/api.md's rule: from the nearest hop outwards, the first address a
/// trusted proxy did not add (stopping at anything unreadable); IPv6 by its /64.
fn model_key(peer: IpAddr, hops: &[Hop]) -> String {
    let mut client = peer;
    for hop in hops.iter().rev() {
        match hop {
            Hop::Ip(ip) => {
                client = *ip;
                if !trusted(*ip) {
                    break;
                }
            }
            Hop::Garbage(_) => break,
        }
    }
    match client {
        IpAddr::V6(v6) => Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64)).to_string(),
        v4 => v4.to_string(),
    }
}

fn xff_value(hop: &Hop) -> String {
    match hop {
        Hop::Ip(ip) => ip.to_string(),
        Hop::Garbage(g) => (*g).to_owned(),
    }
}

fn forwarded_value(hop: &Hop, rng: &mut Rng) -> String {
    match hop {
        Hop::Ip(IpAddr::V6(v6)) => format!("for=\"[{v6}]:{}\"", 1000 + rng.below(9000)),
        Hop::Ip(v4) if rng.below(2) == 0 => format!("for={v4};proto=https"),
        Hop::Ip(v4) => format!("for=\"{v4}:{}\"", 1000 + rng.below(9000)),
        Hop::Garbage(g) => format!("for={g}"),
    }
}

#[test]
fn client_keys_follow_the_rule_over_random_forwarding_chains() {
    let mut rng = Rng::from_time();
    for header in ["x-forwarded-for", "forwarded"] {
        let w = World::new();
        w.seed_bundled();
        let s = Server::start(
            &w,
            &[
                "--trust-proxy",
                "127.0.0.1/32",
                "--trust-proxy",
                "10.0.0.0/8",
                "--trust-proxy",
                "fd00::/8",
                "--client-ip-header",
                header,
                "--no-rate-limit",
                "--flood-guard",
                "off",
                "--log",
                "info",
            ],
            &[],
        );
        let mut expected = Vec::new();
        for i in 0..150 {
            let hops: Vec<Hop> = (0..1 + rng.below(6))
                .map(|_| random_hop(&mut rng))
                .collect();
            // The chain in one to three header lines, in order.
            let values: Vec<String> = hops
                .iter()
                .map(|h| {
                    if header == "forwarded" {
                        forwarded_value(h, &mut rng)
                    } else {
                        xff_value(h)
                    }
                })
                .collect();
            let mut lines: Vec<String> = Vec::new();
            for value in values {
                match lines.last_mut() {
                    Some(line) if rng.below(2) == 0 => {
                        line.push_str(", ");
                        line.push_str(&value);
                    }
                    _ => lines.push(value),
                }
            }
            let headers: Vec<(&str, &str)> = lines.iter().map(|l| (header, l.as_str())).collect();
            let reply = s.request("GET", &format!("/probe/{i}"), &headers);
            assert_eq!(reply.status, 404);
            expected.push((i, lines, model_key("127.0.0.1".parse().unwrap(), &hops)));
        }
        crate::util::wait_until(
            std::time::Duration::from_secs(10),
            "every access line",
            || s.log_text().contains("path=\"/probe/149\""),
        );
        let log = s.log_text();
        for (i, lines, key) in expected {
            let line = log
                .lines()
                .find(|l| {
                    l.contains("resetctl::access") && l.contains(&format!("path=\"/probe/{i}\" "))
                })
                .unwrap_or_else(|| panic!("no access line for probe {i}"));
            assert!(
                line.ends_with(&format!("client={key}")),
                "{header} {lines:?}: expected client={key}, got: {line}"
            );
        }
    }
}
