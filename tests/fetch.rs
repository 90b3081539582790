//! Upstream fetch promises of the operator's manual (docs/manual/modes.md): gzip and brotli bodies, the
//! connect timeout, a chain of exactly 5 redirects, `--backoff-cap-minutes`
//! and the daemon honouring `nextAttemptAt`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::upstream::{header, Behavior, Upstream};
use crate::util::{wait_until, World};

const T1: &str = "2026-11-20T10:00:00.000Z";

fn document() -> String {
    let mut doc: Value = serde_json::from_slice(resetctl::BUNDLED_SEED_HISTORY).unwrap();
    doc["generatedAt"] = json!("2026-11-20T09:00:00.000Z");
    doc.to_string()
}

fn sync(w: &World, url: &str, extra: &[&str]) -> crate::util::Run {
    let mut args = vec!["--now", T1, "sync", "--upstream", url, "--once"];
    args.extend_from_slice(extra);
    w.run(&args)
}

/// `data` gzipped by the system's gzip (Debian essential).
fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new("gzip")
        .args(["-c", "-9"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("gzip");
    child.stdin.take().unwrap().write_all(data).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// `data` as a valid brotli stream (RFC 7932) of stored meta-blocks: a
/// 16-bit window, then for each chunk ISLAST=0, MNIBBLES=4, MLEN-1,
/// ISUNCOMPRESSED=1, padding and the raw bytes; then ISLAST=1, ISLASTEMPTY=1.
fn brotli_stored(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, chunk) in data.chunks(32_768).enumerate() {
        let (mut bits, mut n) = (0u64, 0u32);
        let mut push = |value: u64, width: u32| {
            bits |= value << n;
            n += width;
        };
        if i == 0 {
            push(0, 1); // WBITS = 16
        }
        push(0, 1); // ISLAST
        push(0, 2); // MNIBBLES = 4
        push(chunk.len() as u64 - 1, 16); // MLEN - 1
        push(1, 1); // ISUNCOMPRESSED
        for byte in 0..n.div_ceil(8) {
            out.push((bits >> (8 * byte)) as u8);
        }
        out.extend_from_slice(chunk);
    }
    out.push(0b11); // ISLAST, ISLASTEMPTY
    out
}

#[test]
fn gzip_and_brotli_bodies_are_decoded() {
    let doc = document();
    let plain = World::new();
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&doc, "\"p\"");
    sync(&plain, &up.url("/r.json"), &[]).success();
    for (encoding, body) in [
        ("gzip", gzip(doc.as_bytes())),
        ("br", brotli_stored(doc.as_bytes())),
    ] {
        assert_ne!(body, doc.as_bytes());
        let up = Upstream::start(Behavior::Encoded {
            body,
            encoding: encoding.to_owned(),
        });
        let w = World::new();
        let run = sync(&w, &up.url("/r.json"), &[]);
        assert_eq!(run.code, 0, "{encoding}: {run:?}");
        assert!(
            run.stdout.starts_with("published snapshot 1 (16 records)"),
            "{encoding}: {}",
            run.stdout
        );
        let accepted = header(&up.last_request(), "accept-encoding")
            .unwrap_or_default()
            .to_owned();
        assert!(accepted.contains(encoding), "{encoding}: {accepted}");
        // The very records a plain body gives.
        assert_eq!(
            w.run(&["export"]).success().json(),
            plain.run(&["export"]).success().json(),
            "{encoding}"
        );
    }
}

#[test]
fn a_chain_of_exactly_five_redirects_is_followed_and_six_are_not() {
    let up = Upstream::start(Behavior::Chain {
        body: document().into_bytes(),
    });
    let w = World::new();
    let five = sync(&w, &up.url("/hop5"), &[]);
    assert_eq!(five.code, 0, "{five:?}");
    assert!(
        five.stdout.starts_with("published snapshot 1 (16 records)"),
        "{}",
        five.stdout
    );
    let other = World::new();
    let six = sync(&other, &up.url("/hop6"), &[]);
    assert_eq!(six.code, 69, "{six:?}");
    assert!(
        six.stderr.contains("redirects: more than 5 or a loop"),
        "{}",
        six.stderr
    );
    // --max-redirects moves the limit.
    let more = World::new();
    let six_allowed = sync(&more, &up.url("/hop6"), &["--max-redirects", "6"]);
    assert_eq!(six_allowed.code, 0, "{six_allowed:?}");
}

#[test]
fn the_connect_timeout_bounds_a_connect_that_never_completes() {
    // A listener that never accepts, its queue filled: further connects hang.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut held = Vec::new();
    loop {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(stream) => held.push(stream),
            Err(_) => break,
        }
        assert!(held.len() < 10_000, "the accept queue never filled");
    }
    let w = World::new();
    let started = Instant::now();
    let run = sync(
        &w,
        &format!("http://{addr}/r.json"),
        &["--connect-timeout", "1", "--timeout", "30"],
    );
    let took = started.elapsed();
    assert_eq!(run.code, 69, "{run:?}");
    assert!(
        run.stderr
            .contains("the upstream did not answer in time (connect 1s, whole request 30s)"),
        "{}",
        run.stderr
    );
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "gave up after {took:?}"
    );
    drop(listener);
}

fn state(w: &World) -> Value {
    serde_json::from_slice(&std::fs::read(w.data_dir().join("sync-state.json")).unwrap()).unwrap()
}

fn minutes_after_t1(timestamp: &Value) -> f64 {
    let t = resetctl::model::Timestamp::parse(timestamp.as_str().unwrap()).unwrap();
    let t1 = resetctl::model::Timestamp::parse(T1).unwrap();
    (t.as_millis() - t1.as_millis()) as f64 / 60_000.0
}

#[test]
fn the_backoff_cap_bounds_the_wait_after_failures() {
    let up = Upstream::start(Behavior::Status(500));
    let url = up.url("/r.json");
    for (form, args, env) in [
        ("flag", vec!["--backoff-cap-minutes", "7"], vec![]),
        ("env", vec![], vec![("RESETCTL_BACKOFF_CAP_MINUTES", "7")]),
    ] {
        let w = World::new();
        for failures in 1..=5u32 {
            let mut all = vec![
                "--now",
                T1,
                "sync",
                "--upstream",
                &url,
                "--once",
                "--force",
                "--interval-minutes",
                "5",
            ];
            all.extend_from_slice(&args);
            let mut cmd = w.cmd();
            for (k, v) in &env {
                cmd.env(k, v);
            }
            let run = crate::util::Run::from(cmd.args(&all).output().unwrap());
            assert_ne!(run.code, 0, "{form}");
            let st = state(&w);
            assert_eq!(st["consecutiveFailures"], failures, "{form}: {st}");
            let wait = minutes_after_t1(&st["nextAttemptAt"]);
            // interval 5 × 2^(failures-1), capped at 7, times a jitter in [½, 1].
            let raw = (5.0 * f64::from(1u32 << (failures - 1))).min(7.0);
            assert!(
                wait >= raw / 2.0 - 0.001 && wait <= raw + 0.001,
                "{form}: failure {failures}: next attempt {wait} min after, expected [{}, {raw}]",
                raw / 2.0
            );
        }
    }
}

#[test]
fn the_daemon_waits_for_next_attempt_at() {
    let up = Upstream::start(Behavior::Status(500));
    let w = World::new();
    // One failed sync on the real clock leaves a back-off.
    let failed = w.run(&["sync", "--upstream", &up.url("/r.json"), "--once"]);
    assert_ne!(failed.code, 0);
    assert_eq!(up.request_count(), 1);
    // Bring the next attempt to 3 s from now, and make the upstream good.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let next_attempt = now + 3;
    let mut st = state(&w);
    st["nextAttemptAt"] = json!(crate::util::chrono_like(next_attempt));
    std::fs::write(
        w.data_dir().join("sync-state.json"),
        serde_json::to_vec_pretty(&st).unwrap(),
    )
    .unwrap();
    up.serve(&document(), "\"d\"");
    let mut daemon = w
        .cmd()
        .args(["sync", "--upstream", &up.url("/r.json"), "--daemon"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(15), "the daemon's fetch", || {
        up.request_count() == 2
    });
    let fetched_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        fetched_at >= next_attempt * 1000,
        "the daemon fetched {} ms before nextAttemptAt",
        next_attempt * 1000 - fetched_at
    );
    wait_until(Duration::from_secs(10), "the sync state turns ok", || {
        state(&w)["status"] == "ok"
    });
    std::process::Command::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status()
        .unwrap();
    assert!(daemon.wait().unwrap().success());
    let _ = daemon.stderr.take();
    assert_eq!(up.request_count(), 2);
}

/// `bytes` zeros gzipped by the system's gzip, streamed (never held whole).
fn gzip_zeros(bytes: u64) -> Vec<u8> {
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("head -c {bytes} /dev/zero | gzip -c -1")])
        .output()
        .expect("sh, head and gzip");
    assert!(out.status.success());
    out.stdout
}

#[test]
fn a_compressed_body_that_inflates_past_the_limit_is_refused_while_decoding() {
    // A few MB of gzip (well under the 16 MiB body limit) that inflates to 1 GiB.
    let bomb = gzip_zeros(1 << 30);
    assert!(bomb.len() < 8 << 20, "{} bytes", bomb.len());
    let up = Upstream::start(Behavior::Encoded {
        body: bomb,
        encoding: "gzip".into(),
    });
    let w = World::new();
    // Under an address-space limit far below 1 GiB: the body is never held whole.
    let out = std::process::Command::new("prlimit")
        .arg("--as=536870912")
        .arg("--")
        .arg(crate::util::bin())
        .args(["--data-dir"])
        .arg(w.data_dir())
        .args([
            "--now",
            T1,
            "sync",
            "--upstream",
            &up.url("/bomb.json"),
            "--once",
        ])
        .env_clear()
        .env("HOME", w.path("home"))
        .env(
            "RESETCTL_CONFIG",
            crate::util::own_config_path(w.tmp.path()),
        )
        .output()
        .expect("prlimit (util-linux)");
    let run = crate::util::Run::from(out).code(69);
    assert!(
        run.stderr
            .contains("the body exceeds the limit of 16777216 bytes"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_body_that_drips_is_cut_by_the_whole_request_timeout() {
    let up = Upstream::start(Behavior::Drip { declared: 1000 });
    let w = World::new();
    let started = std::time::Instant::now();
    let run = sync(&w, &up.url("/drip.json"), &["--timeout", "2"]).code(69);
    let took = started.elapsed();
    assert!(
        run.stderr.contains("the upstream did not answer in time"),
        "{}",
        run.stderr
    );
    assert!(
        took >= std::time::Duration::from_millis(1900) && took < std::time::Duration::from_secs(6),
        "cut after {took:?}"
    );
}
