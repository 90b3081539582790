//! Hot reload against the real binary: new versions are served without a
//! restart, under load, never mixed, never replaced by a corrupt file.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::World;

/// Version `k`: `k + 1` completion records and generatedAt = base + k seconds,
/// so a response's total and meta must name the same version.
fn version(k: usize) -> (Vec<Value>, String) {
    let records = (0..=k)
        .map(|i| {
            let id = (1000 + i).to_string();
            json!({
                "id": id, "kind": "reset_completed", "resetType": "global",
                "announcedAt": "2026-11-01T00:00:00.000Z", "effectiveAt": null, "text": format!("v{k}"),
                "confidence": null, "scope": null,
                "source": {"origin": "x", "postId": id, "handle": null, "url": null},
                "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
                "completedAt": "2026-11-01T00:00:00.000Z", "completionRecordId": null,
                "fulfillmentOrigin": null, "relatedRecordIds": []
            })
        })
        .collect();
    (records, crate::util::chrono_like(1_790_000_000 + k as i64))
}

#[test]
fn one_hundred_publishes_under_load_give_no_failed_or_mixed_response() {
    let w = World::new();
    let (records, at) = version(0);
    w.publish_records(&records, &at);
    let s = Server::start(&w, &["--log", "warn", "--no-rate-limit"], &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let checked = Arc::new(AtomicUsize::new(0));
    let addr = s.addr;
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (stop, checked) = (stop.clone(), checked.clone());
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::new();
                let url = format!("http://{addr}/openapi/v1/records?pageSize=10");
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let reply = client
                        .get(&url)
                        .send()
                        .expect("request failed during reload");
                    assert_eq!(reply.status(), 200);
                    let body: Value = reply.json().unwrap();
                    let total = body["data"]["total"].as_u64().unwrap() as usize;
                    let k = total - 1;
                    assert_eq!(
                        body["meta"]["generatedAt"],
                        crate::util::chrono_like(1_790_000_000 + k as i64),
                        "mixed version"
                    );
                    for item in body["data"]["items"].as_array().unwrap() {
                        assert_eq!(item["text"], format!("v{k}"), "an item of another version");
                    }
                    seen.push(k);
                    checked.fetch_add(1, Ordering::Relaxed);
                }
                seen
            })
        })
        .collect();
    for k in 1..=100 {
        let (records, at) = version(k);
        w.publish_records(&records, &at);
        std::thread::sleep(Duration::from_millis(10));
    }
    s.wait_for("/openapi/v1/records", Duration::from_secs(5), |r| {
        r.json()["data"]["total"] == 101
    });
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        let seen = client
            .join()
            .expect("a client saw a failed or mixed response");
        assert!(
            seen.windows(2).all(|p| p[0] <= p[1]),
            "a client went back to an older version"
        );
    }
    assert!(
        checked.load(Ordering::Relaxed) > 200,
        "too few requests checked"
    );
}

#[test]
fn a_new_version_is_served_promptly() {
    let w = World::new();
    let (records, at) = version(0);
    w.publish_records(&records, &at);
    let s = Server::start(&w, &[], &[]);
    let (records, at) = version(1);
    w.publish_records(&records, &at);
    let started = Instant::now();
    s.wait_for("/healthz", Duration::from_secs(5), |r| {
        r.json()["sequence"] == 2
    });
    eprintln!("new snapshot served after {:?}", started.elapsed());
}

#[test]
fn a_corrupt_version_never_replaces_the_served_one() {
    let w = World::new();
    let (records, at) = version(3);
    w.publish_records(&records, &at);
    let s = Server::start(&w, &[], &[]);
    assert_eq!(s.get("/healthz").json()["sequence"], 1);
    // Someone drops a broken version 2 and points CURRENT at it.
    let dir = w.data_dir().join("snapshots");
    std::fs::write(
        dir.join("000000000002.json"),
        b"{\"format\":\"resetctl-snapshot/1\",\"sequence\":2,",
    )
    .unwrap();
    std::fs::write(dir.join("CURRENT"), b"2\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !s
        .log_text()
        .contains("not serving snapshot 2, keeping the current one")
    {
        assert!(
            Instant::now() < deadline,
            "no log of the refused snapshot:\n{}",
            s.log_text()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let reply = s.get("/openapi/v1/records");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["data"]["total"], 4);
    assert_eq!(s.get("/healthz").json()["sequence"], 1);
    // The next good publish is picked up.
    let (records, at) = version(5);
    w.publish_records(&records, &at);
    s.wait_for("/healthz", Duration::from_secs(5), |r| {
        r.json()["sequence"] == 3
    });
    assert_eq!(s.get("/openapi/v1/records").json()["data"]["total"], 6);
}

#[test]
fn polling_mode_reloads_too() {
    let w = World::new();
    let s = Server::start(&w, &["--watch", "poll"], &[]);
    assert!(
        s.log_text().contains("by polling") || {
            std::thread::sleep(Duration::from_millis(200));
            s.log_text().contains("by polling")
        }
    );
    let (records, at) = version(2);
    w.publish_records(&records, &at);
    s.wait_for("/healthz", Duration::from_secs(3), |r| r.status == 200);
    assert_eq!(s.get("/openapi/v1/records").json()["data"]["total"], 3);
}

#[test]
fn when_the_watch_cannot_be_set_up_the_server_polls_and_says_so() {
    let w = World::new();
    // The data dir's parent is a file, so the directory cannot exist and no watch can be set up.
    let parent = w.path("blocked");
    std::fs::write(&parent, b"not a directory").unwrap();
    let data_dir = parent.join("data");
    let mut cmd = std::process::Command::new(crate::util::bin());
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .arg("--data-dir")
        .arg(&data_dir);
    let s = crate::util::server::Server::start_with(cmd, &[]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !s.log_text().contains("polling every 200ms instead") {
        assert!(
            Instant::now() < deadline,
            "no fallback logged:\n{}",
            s.log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(s.get("/openapi/v1/records").status, 503);
    // Once the directory can exist and a snapshot lands, polling serves it.
    std::fs::remove_file(&parent).unwrap();
    let (records, at) = version(1);
    publish_into(&data_dir, &records, &at);
    s.wait_for("/healthz", Duration::from_secs(5), |r| r.status == 200);
    assert_eq!(s.get("/openapi/v1/records").json()["data"]["total"], 2);
}

fn publish_into(data_dir: &std::path::Path, records: &[Value], generated_at: &str) {
    use resetctl::snapshot::{Draft, Mode, SnapshotStore};
    let records: Vec<resetctl::model::Record> = records
        .iter()
        .map(|r| serde_json::from_value(r.clone()).unwrap())
        .collect();
    let store = SnapshotStore::new(data_dir);
    let lock = store.lock(Duration::from_secs(5), "test").unwrap();
    let at = resetctl::model::Timestamp::parse(generated_at).unwrap();
    store
        .publish(
            &lock,
            Draft {
                mode: Mode::Standalone,
                generated_at: at,
                last_successful_check_at: None,
                ledger_entry: None,
                sync: None,
                records,
            },
            at,
            10,
        )
        .unwrap();
}

#[test]
fn sigterm_lets_an_in_flight_request_finish() {
    use std::io::{Read, Write};
    let w = World::new();
    let (records, at) = version(2);
    w.publish_records(&records, &at);
    let mut s = crate::util::server::Server::start(&w, &[], &[]);
    // A request whose head is only half sent when the signal arrives.
    let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
    stream
        .write_all(b"GET /openapi/v1/records HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    std::process::Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    stream.write_all(b"Connection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
    assert!(reply.contains("\"total\":3"), "{reply}");
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // New connections are refused once it has stopped.
    assert!(std::net::TcpStream::connect(s.addr).is_err());
}
