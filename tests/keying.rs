//! Client keys in the running server: IPv6 by prefix, `--ipv6-prefix-len`
//! and the trusted proxies in each of their forms (flag, environment,
//! config file), and a Redis that hangs instead of refusing.

use std::time::{Duration, Instant};

use crate::util::server::{raw_request, Reply, Server};
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

/// One way of giving a setting: its name, extra args, extra env, config file text.
type Form<'a> = (
    &'a str,
    &'a [&'a str],
    &'a [(&'a str, &'a str)],
    Option<&'a str>,
);

fn seeded() -> World {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    w
}

fn get(s: &Server, xff: &str) -> Reply {
    raw_request(
        s.addr,
        "GET",
        "/openapi/v1/records",
        &[("X-Forwarded-For", xff)],
    )
}

/// Asserts the statuses a sequence of forwarded clients gets.
#[track_caller]
fn assert_statuses(s: &Server, expected: &[(&str, u16)], form: &str) {
    for (client, status) in expected {
        assert_eq!(get(s, client).status, *status, "{form}: client {client}");
    }
}

/// A server with a quota of 1 per minute, plus the given args, env and config file text.
fn one_per_minute(w: &World, args: &[&str], env: &[(&str, &str)], config: Option<&str>) -> Server {
    let mut all = vec!["--now", NOW, "--rate-limit", "1/60"];
    all.extend_from_slice(args);
    let path = w.path("config.toml");
    let mut env = env.to_vec();
    if let Some(text) = config {
        std::fs::write(&path, text).unwrap();
        env.push(("RESETCTL_CONFIG", path.to_str().unwrap()));
    }
    Server::start(w, &all, &env)
}

#[test]
fn two_ipv6_slash_64s_get_two_quotas() {
    let w = seeded();
    let s = one_per_minute(&w, &["--trust-proxy", "127.0.0.0/8"], &[], None);
    assert_statuses(
        &s,
        &[
            ("2001:db8:1:1::1", 200),
            ("2001:db8:1:1:ffff:ffff:ffff:ffff", 429),
            ("2001:db8:1:2::1", 200),
            ("2001:db8:1:2::2", 429),
        ],
        "default /64",
    );
}

#[test]
fn the_ipv6_prefix_length_changes_keying_in_every_form() {
    let w = seeded();
    let forms: [Form; 3] = [
        ("flag", &["--ipv6-prefix-len", "48"], &[], None),
        ("env", &[], &[("RESETCTL_IPV6_PREFIX_LEN", "48")], None),
        ("config", &[], &[], Some("ipv6-prefix-len = 48\n")),
    ];
    for (form, args, env, config) in forms {
        let mut args = args.to_vec();
        args.extend_from_slice(&["--trust-proxy", "127.0.0.0/8"]);
        let s = one_per_minute(&w, &args, env, config);
        assert_statuses(
            &s,
            &[
                ("2001:db8:1:1::1", 200),
                // Another /64 of the same /48: the same client now.
                ("2001:db8:1:2::1", 429),
                ("2001:db8:2:1::1", 200),
            ],
            form,
        );
    }
    // /128: every address is its own client.
    let s = one_per_minute(
        &w,
        &["--ipv6-prefix-len", "128", "--trust-proxy", "127.0.0.0/8"],
        &[],
        None,
    );
    assert_statuses(
        &s,
        &[
            ("2001:db8::1", 200),
            ("2001:db8::2", 200),
            ("2001:db8::1", 429),
        ],
        "/128",
    );
}

#[test]
fn trusted_proxies_in_every_form_change_keying() {
    let w = seeded();
    // Not trusted: the forwarding header changes nothing, the peer is the client.
    let s = one_per_minute(&w, &[], &[], None);
    assert_statuses(
        &s,
        &[("198.51.100.1", 200), ("198.51.100.2", 429)],
        "untrusted",
    );
    drop(s);
    let forms: [Form; 3] = [
        (
            "flag",
            &[
                "--trust-proxy",
                "10.0.0.0/8",
                "--trust-proxy",
                "127.0.0.1/32",
            ],
            &[],
            None,
        ),
        (
            "env",
            &[],
            &[("RESETCTL_TRUST_PROXY", "10.0.0.0/8,127.0.0.1/32")],
            None,
        ),
        (
            "config",
            &[],
            &[],
            Some("trust-proxy = [\"10.0.0.0/8\", \"127.0.0.1/32\"]\n"),
        ),
    ];
    for (form, args, env, config) in forms {
        let s = one_per_minute(&w, args, env, config);
        assert_statuses(
            &s,
            &[
                ("198.51.100.1", 200),
                ("198.51.100.2", 200),
                ("198.51.100.1", 429),
                // A trusted hop on the right is skipped.
                ("198.51.100.2, 10.9.9.9", 429),
                ("198.51.100.3, 10.9.9.9", 200),
            ],
            form,
        );
    }
}

#[test]
fn a_redis_that_hangs_is_given_300_ms_then_data_fails_closed() {
    let w = seeded();
    // Accepts connections and never answers a byte.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    let url = format!("redis://127.0.0.1:{port}/0");
    let s = Server::start(&w, &["--rate-limit-store", &url], &[]);
    for _ in 0..3 {
        let started = Instant::now();
        let reply = s.get("/openapi/v1/records");
        let took = started.elapsed();
        assert_eq!(reply.status, 503, "{}", reply.text());
        assert_eq!(reply.json()["error"], "rate_limit_unavailable");
        assert!(
            took < Duration::from_millis(1000),
            "a hanging Redis held the request for {took:?}"
        );
    }
    // Uncounted routes do not wait for Redis at all.
    for path in ["/healthz", "/openapi/v1/docs", "/openapi/v1/openapi.json"] {
        assert_eq!(s.get(path).status, 200, "{path}");
    }
}
