//! Several instances, as the operator's manual (docs/manual/sizing.md) runs them, all on loopback: a
//! real upstream; a writer (`sync --daemon`) owning a data dir; two `serve`
//! replicas on that data dir (one with the admin listener); a replica with
//! its own data dir kept by `sync --daemon` from the writer's
//! `/export.json`, and its `serve`; one real `redis-server` holding the
//! quota; a real nginx balancing round robin over the three `serve`s.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::nginx::Nginx;
use crate::util::redis::Redis;
use crate::util::server::{raw_request, Server};
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{sync_daemon, World};

/// The address nginx connects from: the one proxy the servers trust.
const PROXY: &str = "127.0.0.5";

fn document(generated_at: &str) -> Vec<u8> {
    json!({
        "generatedAt": generated_at,
        "lastSuccessfulCheckAt": generated_at,
        "records": [{
            "id": "2090000000000000001", "kind": "reset_completed", "resetType": "global",
            "announcedAt": "2026-11-24T08:00:00.000Z", "effectiveAt": "2026-11-24T08:00:00.000Z",
            "text": "reset done", "confidence": 0.9, "scope": null,
            "source": {"origin": "x", "postId": "2090000000000000001", "handle": "h",
                       "url": "https://x.com/h/status/2090000000000000001"},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null,
            "scheduleState": null, "completedAt": null, "completionRecordId": null,
            "fulfillmentOrigin": null, "relatedRecordIds": [],
        }],
    })
    .to_string()
    .into_bytes()
}

fn generated_at(s: &Server) -> Option<String> {
    let health = s.get("/healthz");
    (health.status == 200).then(|| health.json()["generatedAt"].as_str().unwrap().to_owned())
}

#[test]
fn three_instances_behind_nginx_share_one_quota_and_one_version() {
    let up = Upstream::start(Behavior::Serve {
        body: document("2026-11-24T09:00:00.000Z"),
        etag: Some("\"v1\"".into()),
        last_modified: None,
    });
    let mut redis = Redis::start();
    let writer = World::new();
    let _writer_sync = sync_daemon(&writer, &up.url("/records.json"));
    crate::util::wait_until(
        Duration::from_secs(10),
        "the writer's first publish",
        || writer.run(&["status"]).code == 0,
    );
    let store = redis.url();
    let serve_args = |admin: bool| {
        let mut args = vec![
            "--rate-limit-store",
            store.as_str(),
            "--trust-proxy",
            "127.0.0.5/32",
        ];
        if admin {
            args.extend(["--admin-listen", "127.0.0.1:0"]);
        }
        args
    };
    let a = Server::start(&writer, &serve_args(true), &[]);
    let b = Server::start(&writer, &serve_args(false), &[]);
    let replica = World::new();
    let export = format!("http://{}/export.json", a.admin.unwrap());
    let _replica_sync = sync_daemon(&replica, &export);
    let mut c = Server::start(&replica, &serve_args(false), &[]);
    crate::util::wait_until(
        Duration::from_secs(10),
        "the replica's first snapshot",
        || generated_at(&c).is_some(),
    );
    let lb = Nginx::balance(&[a.addr, b.addr, c.addr], PROXY);
    let lb_addr: std::net::SocketAddr = format!("127.0.0.1:{}", lb.port).parse().unwrap();

    // 1. One quota across the balancer: 200 concurrent requests, 20 admitted.
    // Every other one is refused: 429, or, when the machine is so loaded
    // that a check misses the store's 300 ms, 503 rate_limit_unavailable
    // (fail closed, never counted: it cannot take a place of the twenty).
    let start = Arc::new(Barrier::new(200));
    let replies: Vec<(u16, Value)> = (0..200)
        .map(|_| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                let reply = raw_request(lb_addr, "GET", "/openapi/v1/records/latest", &[]);
                let code = match reply.status {
                    200 => Value::Null,
                    _ => reply.json()["error"].clone(),
                };
                (reply.status, code)
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let statuses: Vec<u16> = replies.iter().map(|(s, _)| *s).collect();
    let admitted = statuses.iter().filter(|s| **s == 200).count();
    let refused = replies
        .iter()
        .filter(|(s, code)| {
            (*s == 429 && code == "rate_limited") || (*s == 503 && code == "rate_limit_unavailable")
        })
        .count();
    assert_eq!((admitted, refused), (20, 180), "{replies:?}");

    // 2. A new upstream version is served by all three within 2 s.
    up.set(Behavior::Serve {
        body: document("2026-11-24T10:00:00.000Z"),
        etag: Some("\"v2\"".into()),
        last_modified: None,
    });
    let changed = Instant::now();
    crate::util::wait_until(Duration::from_secs(10), "every instance on v2", || {
        [&a, &b, &c]
            .iter()
            .all(|s| generated_at(s).as_deref() == Some("2026-11-24T10:00:00.000Z"))
    });
    let took = changed.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "the new version took {took:?} to reach every instance"
    );

    // 3. Redis down: every instance fails closed; back without restarts.
    redis.kill();
    for s in [&a, &b, &c] {
        let reply = s.get("/openapi/v1/records/latest");
        assert_eq!(reply.status, 503, "{}", s.addr);
        assert_eq!(reply.json()["error"], "rate_limit_unavailable");
        assert_eq!(s.get("/healthz").status, 200);
    }
    redis.restart();
    for s in [&a, &b, &c] {
        s.wait_for("/openapi/v1/records/latest", Duration::from_secs(10), |r| {
            r.status == 200
        });
    }

    // 4. SIGKILL of a replica loses no request: nginx retries on another.
    let mut seen = Vec::new();
    for i in 0..300 {
        if i == 100 {
            c.child.kill().unwrap();
            c.child.wait().unwrap();
        }
        seen.push(raw_request(lb_addr, "GET", "/openapi/v1/records/latest", &[]).status);
    }
    let unexpected: Vec<_> = seen.iter().filter(|s| !matches!(s, 200 | 429)).collect();
    assert!(unexpected.is_empty(), "non-2xx other than 429: {seen:?}");
    assert!(seen.contains(&200) && seen.contains(&429), "{seen:?}");
}
