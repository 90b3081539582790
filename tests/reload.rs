//! Hot reload against the real binary: new versions are served without a
//! restart, under load, never mixed, never replaced by a corrupt file.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::{wait_until, World};

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
    // The watch reacts at once; 1 s is half the safety poll's 2 s, so a
    // broken watch (served only by that poll) fails here.
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the new snapshot was served only after {took:?}"
    );
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
    wait_until(Duration::from_secs(5), "the polling log line", || {
        s.log_text().contains("by polling")
    });
    let (records, at) = version(2);
    w.publish_records(&records, &at);
    s.wait_for("/healthz", Duration::from_secs(3), |r| r.status == 200);
    assert_eq!(s.get("/openapi/v1/records").json()["data"]["total"], 3);
}

#[test]
fn when_the_watch_cannot_be_set_up_the_server_polls_and_says_so() {
    let w = World::new();
    let data_dir = w.path("data");
    // The kernel refuses every inotify instance (strace makes
    // inotify_init1 fail with EMFILE, as when the user's instances run
    // out), so no watch can be set up.
    let strace = crate::util::tool(&["strace"], "-V", "strace");
    let mut cmd = std::process::Command::new(strace);
    cmd.args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=inotify_init1"])
        .args(["-e", "inject=inotify_init1:error=EMFILE"])
        .arg(crate::util::bin())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .arg("--data-dir")
        .arg(&data_dir);
    crate::util::own_config(&mut cmd, w.tmp.path());
    let s = crate::util::server::Server::start_with(cmd, &[]);
    // strace's tracee: stopped by the test, not left running.
    let children = format!("/proc/{0}/task/{0}/children", s.child.id());
    let serve = std::fs::read_to_string(children).unwrap();
    let _serve = KilledOnDrop(serve.split_whitespace().next().unwrap().to_owned());
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
    // When a snapshot lands, polling serves it.
    let (records, at) = version(1);
    publish_into(&data_dir, &records, &at);
    s.wait_for("/healthz", Duration::from_secs(5), |r| r.status == 200);
    assert_eq!(s.get("/openapi/v1/records").json()["data"]["total"], 2);
}

/// A process (by pid) killed when the test ends, passed or not.
struct KilledOnDrop(String);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &self.0])
            .status();
    }
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
    resetctl::publish::publish(
        &store,
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

/// A server whose `GET /openapi/v1/records?pageSize=3` is held in its
/// handler (src/testhook.rs) until the file `release` exists.
struct Held {
    s: Server,
    trace: std::path::PathBuf,
    release: std::path::PathBuf,
}

fn held_server(w: &World) -> Held {
    held_server_with(w, &[])
}

/// [`held_server`] started with `args`.
fn held_server_with(w: &World, args: &[&str]) -> Held {
    let (records, at) = version(2);
    w.publish_records(&records, &at);
    let (trace, release) = (w.path("trace"), w.path("release"));
    let s = Server::start(
        w,
        args,
        &[
            ("RESETCTL_TEST_TRACE", trace.to_str().unwrap()),
            ("RESETCTL_TEST_HOLD_QUERY", "pageSize=3"),
            ("RESETCTL_TEST_RELEASE", release.to_str().unwrap()),
        ],
    );
    Held { s, trace, release }
}

impl Held {
    /// Sends the whole held request and waits until its handler is holding it.
    fn request_in_flight(&self) -> std::net::TcpStream {
        use std::io::Write;
        let mut stream = std::net::TcpStream::connect(self.s.addr).unwrap();
        stream
            .write_all(b"GET /openapi/v1/records?pageSize=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        wait_until(
            Duration::from_secs(10),
            "the handler holds the request",
            || crate::util::trace(&self.trace).contains(&"serve:held".to_owned()),
        );
        stream
    }

    /// Sends `signal` and waits until the server has logged that it stops.
    fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.s.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        wait_until(Duration::from_secs(10), "the shutdown log line", || {
            self.s
                .log_text()
                .contains("shutting down: no new connections, finishing in-flight requests")
        });
    }
}

fn read_all(stream: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply).into_owned()
}

fn a_signal_lets_an_in_flight_request_finish(signal: &str) {
    let w = World::new();
    let mut held = held_server(&w);
    let mut stream = held.request_in_flight();
    held.signal(signal);
    // The signal has been handled while the request is provably in flight:
    // the server stops accepting, but keeps running for the held request.
    wait_until(Duration::from_secs(10), "new connections refused", || {
        std::net::TcpStream::connect(held.s.addr).is_err()
    });
    assert!(
        held.s.child.try_wait().unwrap().is_none(),
        "the server exited with a request in flight"
    );
    std::fs::write(&held.release, b"").unwrap();
    let reply = read_all(&mut stream);
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    let body = &reply[reply.find("\r\n\r\n").unwrap() + 4..];
    let body: Value = serde_json::from_str(body).expect("the whole JSON body");
    assert_eq!(body["data"]["total"], 3);
    assert_eq!(body["data"]["items"].as_array().unwrap().len(), 3);
    let status = held.s.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        !held.s.log_text().contains("connections still open"),
        "{}",
        held.s.log_text()
    );
}

#[test]
fn sigterm_lets_an_in_flight_request_finish() {
    a_signal_lets_an_in_flight_request_finish("TERM");
}

#[test]
fn sigint_lets_an_in_flight_request_finish() {
    a_signal_lets_an_in_flight_request_finish("INT");
}

/// `drain-timeout` is how long a stopping server waits for it.
#[test]
fn a_request_that_never_finishes_is_cut_after_the_drain_timeout() {
    let w = World::new();
    let mut held = held_server_with(&w, &["--drain-timeout", "1.5"]);
    let mut stream = held.request_in_flight();
    held.signal("TERM");
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = held.s.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(8),
            "still running 8 s after SIGTERM with --drain-timeout 1.5"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let waited = signalled.elapsed();
    assert!(
        waited >= Duration::from_millis(1_400),
        "exited {waited:?} after SIGTERM, before the 1.5 s drain limit"
    );
    assert!(status.success(), "{status:?}");
    assert!(
        held.s
            .log_text()
            .contains("connections still open after 1.5s; exiting"),
        "{}",
        held.s.log_text()
    );
    assert_eq!(read_all(&mut stream), "");
}

#[test]
fn a_request_that_never_finishes_is_cut_after_ten_seconds() {
    let w = World::new();
    let mut held = held_server(&w);
    let mut stream = held.request_in_flight();
    held.signal("TERM");
    let signalled = Instant::now();
    // Never released: the server waits 10 s for it, then exits anyway.
    let deadline = signalled + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = held.s.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running 20 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let waited = signalled.elapsed();
    assert!(
        waited >= Duration::from_millis(9_900) && waited < Duration::from_secs(13),
        "exited {waited:?} after SIGTERM, not after the 10 s drain limit"
    );
    assert!(status.success(), "{status:?}");
    assert!(
        held.s
            .log_text()
            .contains("connections still open after 10s; exiting"),
        "{}",
        held.s.log_text()
    );
    // The held request got no answer.
    assert_eq!(read_all(&mut stream), "");
}
