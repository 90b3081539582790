//! The shared quota on the Redis deployments operators run: one server
//! over TLS (a private CA, a client certificate), a Redis Cluster whose
//! slots move under load, a master behind sentinels that fails over, and
//! a check whose answer is lost on the wire. Every Redis here is a real
//! process on loopback started by the test.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::pki::Pki;
use crate::util::redis::{DroppingProxy, Redis, RedisCluster, RedisSentinels};
use crate::util::server::{raw_request, Reply, Server};
use crate::util::World;

const NOW: &str = "2026-11-20T12:00:00Z";

fn seeded() -> World {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    w
}

fn remaining(reply: &Reply) -> Option<&str> {
    reply.header("x-ratelimit-remaining")
}

#[test]
fn a_check_whose_answer_is_lost_on_the_wire_counts_once() {
    let redis = Redis::start();
    let proxy = DroppingProxy::start(redis.port);
    let w = seeded();
    let url = format!("redis://127.0.0.1:{}/0", proxy.port);
    let s = Server::start(&w, &["--log", "warn", "--rate-limit-store", &url], &[]);
    proxy.arm();
    let first = s.get("/openapi/v1/records/latest");
    assert_eq!(proxy.dropped(), 1, "the script's first answer was dropped");
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(
        remaining(&first),
        Some("19"),
        "the retry counted nothing more"
    );
    let key = "{resetctl:20/3600:127.0.0.1}:log";
    assert_eq!(redis.cli(&["ZCARD", key]), "1", "one entry in the log");
    let second = s.get("/openapi/v1/records/latest");
    assert_eq!(remaining(&second), Some("18"));
    assert_eq!(redis.cli(&["ZCARD", key]), "2");
}

#[test]
fn a_tls_store_counts_with_a_private_ca_and_a_client_certificate_from_each_layer() {
    let pki = Pki::new();
    let redis = Redis::start_tls(
        &pki.path("server.pem"),
        &pki.path("server.key"),
        &pki.path("ca.pem"),
        "yes",
    );
    let url = format!("rediss://127.0.0.1:{}/0", redis.tls_port.unwrap());
    let w = seeded();
    let key = "{resetctl:20/3600:127.0.0.1}:log";
    // Flags.
    let by_flags = Server::start(
        &w,
        &[
            "--log",
            "warn",
            "--rate-limit-store",
            &url,
            "--redis-ca-file",
            &pki.arg("ca.pem"),
            "--redis-cert-file",
            &pki.arg("client.pem"),
            "--redis-key-file",
            &pki.arg("client.key"),
        ],
        &[],
    );
    let reply = by_flags.get("/openapi/v1/records/latest");
    assert_eq!(
        (reply.status, remaining(&reply)),
        (200, Some("19")),
        "{}",
        reply.text()
    );
    assert_eq!(redis.cli(&["ZCARD", key]), "1", "counted in the TLS server");
    drop(by_flags);
    // The environment.
    let by_env = Server::start(
        &w,
        &["--log", "warn"],
        &[
            ("RESETCTL_RATE_LIMIT_STORE", &url),
            ("RESETCTL_REDIS_CA_FILE", &pki.arg("ca.pem")),
            ("RESETCTL_REDIS_CERT_FILE", &pki.arg("client.pem")),
            ("RESETCTL_REDIS_KEY_FILE", &pki.arg("client.key")),
        ],
    );
    let reply = by_env.get("/openapi/v1/records/latest");
    assert_eq!((reply.status, remaining(&reply)), (200, Some("18")));
    drop(by_env);
    // The config file.
    let config = w.path("resetctl.toml");
    std::fs::write(
        &config,
        format!(
            "rate-limit-store = {url:?}\nredis-ca-file = {:?}\nredis-cert-file = {:?}\nredis-key-file = {:?}\n",
            pki.arg("ca.pem"),
            pki.arg("client.pem"),
            pki.arg("client.key")
        ),
    )
    .unwrap();
    let by_file = Server::start(
        &w,
        &["--log", "warn", "--config", config.to_str().unwrap()],
        &[],
    );
    let reply = by_file.get("/openapi/v1/records/latest");
    assert_eq!((reply.status, remaining(&reply)), (200, Some("17")));
    assert_eq!(redis.cli(&["ZCARD", key]), "3");
}

#[test]
fn a_tls_store_that_cannot_be_trusted_stops_the_start() {
    let pki = Pki::new();
    let good = Redis::start_tls(
        &pki.path("server.pem"),
        &pki.path("server.key"),
        &pki.path("ca.pem"),
        "optional",
    );
    let expired = Redis::start_tls(
        &pki.path("expired.pem"),
        &pki.path("expired.key"),
        &pki.path("ca.pem"),
        "optional",
    );
    let needs_client = Redis::start_tls(
        &pki.path("server.pem"),
        &pki.path("server.key"),
        &pki.path("ca.pem"),
        "yes",
    );
    let tls = |redis: &Redis| format!("rediss://:s3cret@127.0.0.1:{}/0", redis.tls_port.unwrap());
    let w = seeded();
    let cases = [
        (
            "a CA that signed nothing here",
            tls(&good),
            "other-ca.pem",
            "UnknownIssuer",
        ),
        (
            "an expired certificate",
            tls(&expired),
            "ca.pem",
            "certificate expired",
        ),
        (
            "a plain-TCP server behind rediss://",
            format!("rediss://:s3cret@127.0.0.1:{}/0", good.port),
            "ca.pem",
            "accepts TCP connections but completed no TLS handshake",
        ),
        (
            "a server that wants a client certificate",
            tls(&needs_client),
            "ca.pem",
            "CertificateRequired",
        ),
    ];
    for (what, url, ca, why) in cases {
        let refused = w
            .run_refused(&[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--rate-limit-store",
                &url,
                "--redis-ca-file",
                &pki.arg(ca),
            ])
            .code(69);
        assert_eq!(refused.stdout, "", "{what}: nothing listened");
        assert!(
            refused
                .stderr
                .contains("the quota store at rediss://127.0.0.1:")
                && refused.stderr.contains("refuses the connection")
                && refused.stderr.contains(why),
            "{what}: {}",
            refused.stderr
        );
        assert!(!refused.stderr.contains("s3cret"), "{}", refused.stderr);
    }
    // TLS files for a store without TLS, and half a client identity: usage errors.
    let plain = format!("redis://127.0.0.1:{}/0", good.port);
    for (args, why) in [
        (
            vec![
                "--rate-limit-store",
                &plain,
                "--redis-ca-file",
                "/nonexistent/ca.pem",
            ],
            "are for a TLS store",
        ),
        (
            vec![
                "--rate-limit-store",
                &tls(&good),
                "--redis-cert-file",
                "/x.pem",
            ],
            "go together",
        ),
        (
            vec![
                "--rate-limit-store",
                &tls(&good),
                "--redis-ca-file",
                "/nonexistent/ca.pem",
            ],
            "redis-ca-file /nonexistent/ca.pem",
        ),
    ] {
        let mut full = vec!["serve", "--listen", "127.0.0.1:0"];
        full.extend(args);
        let refused = w.run_refused(&full).code(64);
        assert!(refused.stderr.contains(why), "{full:?}: {}", refused.stderr);
    }
}

#[test]
fn a_tls_cluster_counts_through_rediss_cluster() {
    let pki = Pki::new();
    let cluster = RedisCluster::start_tls(3, &pki);
    let w = seeded();
    let s = Server::start(
        &w,
        &[
            "--log",
            "warn",
            "--rate-limit-store",
            &cluster.tls_url(),
            "--redis-ca-file",
            &pki.arg("ca.pem"),
            "--trust-proxy",
            "127.0.0.1",
        ],
        &[],
    );
    // Clients on every master: the client library follows the cluster's
    // TLS ports (CLUSTER SLOTS over TLS names them), never the plain ones.
    let mut masters = std::collections::BTreeSet::new();
    for i in 1..=30 {
        let client = format!("198.51.100.{i}");
        let headers = [("X-Forwarded-For", client.as_str())];
        let first = s.request("GET", "/openapi/v1/records/latest", &headers);
        let second = s.request("GET", "/openapi/v1/records/latest", &headers);
        assert_eq!(
            (first.status, remaining(&first), remaining(&second)),
            (200, Some("19"), Some("18")),
            "{client}: {}",
            first.text()
        );
        let key = format!("{{resetctl:20/3600:{client}}}:log");
        let (owner, _) = cluster.owner(cluster.slot(&key));
        assert_eq!(cluster.nodes[owner].cli(&["ZCARD", &key]), "2", "{client}");
        masters.insert(owner);
    }
    assert_eq!(masters.len(), 3, "clients landed on every master");
}

/// Requests of one client (a forwarded address) sent by `threads` threads
/// until `stop`, each reply noted with when it was sent and received.
struct Load {
    stop: Arc<AtomicBool>,
    replies: Arc<Mutex<Vec<(Instant, Instant, Reply)>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(addr: std::net::SocketAddr, client: &str, threads: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let replies = Arc::new(Mutex::new(Vec::new()));
        let threads = (0..threads)
            .map(|_| {
                let (stop, replies, client) = (stop.clone(), replies.clone(), client.to_owned());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let sent = Instant::now();
                        let reply = raw_request(
                            addr,
                            "GET",
                            "/openapi/v1/records/latest",
                            &[("X-Forwarded-For", &client)],
                        );
                        replies.lock().unwrap().push((sent, Instant::now(), reply));
                    }
                })
            })
            .collect();
        Load {
            stop,
            replies,
            threads,
        }
    }

    fn admitted(&self) -> usize {
        let replies = self.replies.lock().unwrap();
        replies.iter().filter(|(_, _, r)| r.status == 200).count()
    }

    fn wait_admitted(&self, at_least: usize) {
        crate::util::wait_until(Duration::from_secs(30), "requests to be admitted", || {
            self.admitted() >= at_least
        });
    }

    fn finish(self) -> Vec<(Instant, Instant, Reply)> {
        self.stop.store(true, Ordering::SeqCst);
        for thread in self.threads {
            thread.join().unwrap();
        }
        Arc::try_unwrap(self.replies).unwrap().into_inner().unwrap()
    }
}

/// Every reply is 200, 429, or the documented 503 `rate_limit_unavailable`.
fn only_documented_statuses(replies: &[(Instant, Instant, Reply)]) {
    for (_, _, reply) in replies {
        match reply.status {
            200 | 429 => {}
            503 => assert_eq!(
                reply.json()["error"],
                "rate_limit_unavailable",
                "{}",
                reply.text()
            ),
            other => panic!("status {other}: {}", reply.text()),
        }
    }
}

#[test]
fn a_cluster_counts_exactly_while_the_hot_clients_slot_moves_between_masters() {
    let _alone = crate::util::one_at_a_time();
    let cluster = RedisCluster::start(3);
    let w = seeded();
    let limit = 4000;
    let s = Server::start(
        &w,
        &[
            "--log",
            "warn",
            "--rate-limit",
            &format!("{limit}/3600"),
            "--rate-limit-store",
            &cluster.url(),
            "--trust-proxy",
            "127.0.0.1",
        ],
        &[],
    );
    s.settle();
    // A hot client whose keys live on the first master.
    let (client, key, slot) = (1..=250)
        .map(|i| {
            let client = format!("198.51.100.{i}");
            let key = format!("{{resetctl:{limit}/3600:{client}}}:log");
            let slot = cluster.slot(&key);
            (client, key, slot)
        })
        .find(|(_, _, slot)| cluster.owner(*slot).0 == 0)
        .expect("a client on the first master");
    let (from, to) = (cluster.id(0), cluster.id(1));
    let slot_text = slot.to_string();
    let load = Load::start(s.addr, &client, 6);
    load.wait_admitted(200);
    // By hand, the steps `redis-cli --cluster reshard` takes, each held
    // under load: the slot migrating with its key still on the source,
    // then with the key moved (clients are sent on with ASK), then owned
    // by the target.
    cluster.nodes[1].cli(&["CLUSTER", "SETSLOT", &slot_text, "IMPORTING", &from]);
    cluster.nodes[0].cli(&["CLUSTER", "SETSLOT", &slot_text, "MIGRATING", &to]);
    // Each step is held until the load has had requests admitted in it
    // (an event, not a bet on how long a step takes).
    const PER_STEP: usize = 50;
    let before_migrating = load.admitted();
    load.wait_admitted(before_migrating + PER_STEP);
    let port = cluster.nodes[1].port.to_string();
    cluster.nodes[0].cli(&["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS", &key]);
    let migrated = load.admitted();
    load.wait_admitted(migrated + PER_STEP);
    // The target first, as redis-cli does: a source that gave the slot up
    // before the target took it would send clients back and forth.
    for i in [1, 0, 2] {
        cluster.nodes[i].cli(&["CLUSTER", "SETSLOT", &slot_text, "NODE", &to]);
    }
    let moved = load.admitted();
    assert!(
        migrated > before_migrating && moved > migrated,
        "requests were admitted while the slot was migrating ({before_migrating} → {migrated} → {moved})"
    );
    assert_eq!(
        cluster.owner(slot).0,
        1,
        "the slot moved to the second master"
    );
    load.wait_admitted(moved + PER_STEP);
    // And back, by `redis-cli --cluster reshard` itself: the slot is the
    // lowest the second master holds, so moving one slot moves it.
    let before_reshard = load.admitted();
    crate::util::redis::redis_cli(
        cluster.nodes[0].port,
        &[
            "--cluster",
            "reshard",
            &format!("127.0.0.1:{}", cluster.nodes[0].port),
            "--cluster-from",
            &to,
            "--cluster-to",
            &from,
            "--cluster-slots",
            "1",
            "--cluster-yes",
        ],
    );
    assert_eq!(
        cluster.owner(slot).0,
        0,
        "the slot is back on the first master"
    );
    assert!(
        load.admitted() > before_reshard,
        "admitted during the reshard"
    );
    // Then the client uses up its quota.
    crate::util::wait_until(Duration::from_secs(120), "the quota to be used up", || {
        let replies = load.replies.lock().unwrap();
        replies.iter().filter(|(_, _, r)| r.status == 429).count() >= 50
    });
    let replies = load.finish();
    only_documented_statuses(&replies);
    let admitted = replies.iter().filter(|(_, _, r)| r.status == 200).count();
    let refused = replies.iter().filter(|(_, _, r)| r.status == 503).count();
    eprintln!(
        "cluster: {} requests, {admitted} admitted, {refused} refused 503",
        replies.len()
    );
    assert_eq!(
        refused, 0,
        "a master owned the slot at every moment: no request is refused"
    );
    assert_eq!(admitted, limit, "exactly the policy's number admitted");
    assert_eq!(
        cluster.nodes[0].cli(&["ZCARD", &key]),
        limit.to_string(),
        "each admitted request is one entry, on the master that owns the slot"
    );
}

/// A server counting in the master `group`'s sentinels name (a policy
/// no load here reaches, clients by a forwarded address), settled.
fn counting_behind(group: &RedisSentinels) -> (World, Server) {
    let w = seeded();
    let s = Server::start(
        &w,
        &[
            "--log",
            "warn",
            "--rate-limit",
            "1000000/3600",
            "--rate-limit-store",
            &group.url(),
            "--trust-proxy",
            "127.0.0.1",
        ],
        &[],
    );
    s.settle();
    (w, s)
}

#[test]
fn a_sentinel_failover_is_followed_and_refused_requests_never_count() {
    let _alone = crate::util::one_at_a_time();
    let mut group = RedisSentinels::start();
    let (_w, s) = counting_behind(&group);
    let client = "198.51.100.9";
    let key = format!("{{resetctl:1000000/3600:{client}}}:log");
    let load = Load::start(s.addr, client, 4);
    load.wait_admitted(200);
    group.master.kill();
    let killed = Instant::now();
    // What the replica holds once its master is gone: all it will ever get of the old log.
    let replicated: usize = group.replica.cli(&["ZCARD", &key]).parse().unwrap();
    crate::util::wait_until(
        Duration::from_secs(60),
        "the sentinels to promote the replica",
        || group.master_port() == group.replica.port,
    );
    let promoted = Instant::now();
    crate::util::wait_until(Duration::from_secs(30), "counting to resume", || {
        let replies = load.replies.lock().unwrap();
        replies
            .iter()
            .filter(|(sent, _, r)| *sent > promoted && r.status == 200)
            .count()
            >= 100
    });
    let replies = load.finish();
    only_documented_statuses(&replies);
    let refused = replies.iter().filter(|(_, _, r)| r.status == 503).count();
    assert!(
        refused > 0,
        "the failover was answered 503 while no master was known"
    );
    let after = replies
        .iter()
        .filter(|(sent, _, r)| *sent > killed && r.status == 200)
        .count();
    let in_flight = replies
        .iter()
        .filter(|(sent, received, r)| *sent <= killed && *received > killed && r.status == 200)
        .count();
    let now_held: usize = group.replica.cli(&["ZCARD", &key]).parse().unwrap();
    eprintln!(
        "sentinel: {} requests, {refused} refused 503, failover {:?} after the kill; \
         replicated {replicated}, admitted since {after}, in flight {in_flight}, held {now_held}",
        replies.len(),
        promoted - killed
    );
    assert!(
        now_held >= replicated + after && now_held <= replicated + after + in_flight,
        "the new master holds what was replicated ({replicated}) plus every request admitted \
         since the kill ({after}, and at most the {in_flight} in flight then), nothing refused: {now_held}"
    );
}

#[test]
fn a_master_cut_off_without_closing_is_left_for_the_one_the_sentinels_promote() {
    let _alone = crate::util::one_at_a_time();
    let group = RedisSentinels::start();
    let (_w, s) = counting_behind(&group);
    let load = Load::start(s.addr, "198.51.100.10", 2);
    load.wait_admitted(50);
    // SIGSTOP: the connection stays open and nothing answers on it, as
    // when a network cuts the master off.
    group.master.pause();
    crate::util::wait_until(
        Duration::from_secs(60),
        "the sentinels to promote the replica",
        || group.master_port() == group.replica.port,
    );
    let promoted = Instant::now();
    crate::util::wait_until(
        Duration::from_secs(30),
        "counting to resume on the new master",
        || {
            let replies = load.replies.lock().unwrap();
            replies
                .iter()
                .filter(|(sent, _, r)| *sent > promoted && r.status == 200)
                .count()
                >= 50
        },
    );
    let replies = load.finish();
    only_documented_statuses(&replies);
}
