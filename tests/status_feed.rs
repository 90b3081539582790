//! `GET /api/status.json`: in upstream mode with the public status feed as
//! upstream, the last good feed byte for byte (ETag, 304, CORS, not counted,
//! flood-guarded); elsewhere a JSON 404 that says why.

use std::time::Duration;

use crate::util::fixture;
use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::World;

const T1: &str = "2026-07-31T23:20:00.000Z";
const T2: &str = "2026-07-31T23:40:00.000Z";
const T3: &str = "2026-08-01T03:00:00.000Z";

fn sync(w: &World, upstream: &Upstream, now: &str) -> crate::util::Run {
    w.run(&[
        "--now",
        now,
        "sync",
        "--upstream",
        &upstream.url("/api/status.json"),
        "--once",
    ])
}

#[test]
fn the_mirror_serves_the_last_good_feed_byte_for_byte_and_never_a_rejected_one() {
    let first = std::fs::read(fixture("feed/codexrunway-status-2026-07-31.json")).unwrap();
    let second = std::fs::read(fixture("feed/codexrunway-status-2026-08-01.json")).unwrap();
    let up = Upstream::start(Behavior::Status(500));
    up.set(Behavior::Serve {
        body: first.clone(),
        etag: Some("\"f1\"".into()),
        last_modified: None,
    });
    let w = World::new();
    sync(&w, &up, T1).success();
    let trace_file = w.path("serve-trace");
    let s = Server::start(
        &w,
        &["--now", T1],
        &[("RESETCTL_TEST_TRACE", trace_file.to_str().unwrap())],
    );
    let applied = || {
        crate::util::trace(&trace_file)
            .iter()
            .filter(|s| *s == "reload:applied")
            .count()
    };
    let path = "/api/status.json";
    let mirrored = s.wait_for(path, Duration::from_secs(5), |r| r.status == 200);
    assert_eq!(mirrored.body, first, "byte for byte what the upstream sent");
    assert_eq!(
        mirrored.body,
        std::fs::read(w.data_dir().join("upstream-feed.json")).unwrap(),
        "and what the sync kept"
    );
    assert_eq!(mirrored.header("content-type"), Some("application/json"));
    assert_eq!(mirrored.header("access-control-allow-origin"), Some("*"));
    assert_eq!(mirrored.header("cache-control"), Some("no-cache"));
    assert_eq!(
        mirrored.header("x-ratelimit-remaining"),
        None,
        "not counted"
    );
    let tag = mirrored.header("etag").expect("a tag").to_owned();
    assert!(tag.starts_with('"') && tag.len() == 34, "{tag}");

    // 304 on a matching tag; 30 reads, the records quota untouched.
    for _ in 0..30 {
        let again = s.request("GET", path, &[("If-None-Match", &tag)]);
        assert_eq!(again.status, 304);
        assert!(again.body.is_empty());
        assert_eq!(again.header("etag"), Some(tag.as_str()));
        assert_eq!(again.header("access-control-allow-origin"), Some("*"));
    }
    let head = s.request("HEAD", path, &[]);
    assert_eq!(
        (head.status, head.header("etag")),
        (200, Some(tag.as_str()))
    );
    assert_eq!(
        s.get("/openapi/v1/records").header("x-ratelimit-remaining"),
        Some("19"),
        "mirror reads never count"
    );

    // A rejected feed (not JSON) changes nothing that is served.
    up.set(Behavior::Serve {
        body: b"{\"not\": \"a feed\"".to_vec(),
        etag: Some("\"bad\"".into()),
        last_modified: None,
    });
    let taken_in = applied();
    let rejected = sync(&w, &up, T2);
    assert_ne!(rejected.code, 0, "{}", rejected.stderr);
    // The server has taken in what the failed sync wrote (its sync state,
    // with the error) before the feed is checked.
    crate::util::wait_until(
        Duration::from_secs(10),
        "the failed sync's state taken in",
        || applied() > taken_in,
    );
    let still = s.get(path);
    assert_eq!(still.body, first, "still the previous good feed");
    assert_eq!(still.header("etag"), Some(tag.as_str()));

    // A new good feed replaces it.
    up.set(Behavior::Serve {
        body: second.clone(),
        etag: Some("\"f2\"".into()),
        last_modified: None,
    });
    sync(&w, &up, T3).success();
    let replaced = s.wait_for(path, Duration::from_secs(5), |r| r.body == second);
    assert_ne!(replaced.header("etag"), Some(tag.as_str()));
    let stale = s.request("GET", path, &[("If-None-Match", &tag)]);
    assert_eq!((stale.status, stale.body.clone()), (200, second));
}

#[test]
fn a_feed_on_disk_that_the_sync_state_does_not_record_is_not_served() {
    let first = std::fs::read(fixture("feed/codexrunway-status-2026-07-31.json")).unwrap();
    let up = Upstream::start(Behavior::Status(500));
    up.set(Behavior::Serve {
        body: first.clone(),
        etag: None,
        last_modified: None,
    });
    let w = World::new();
    sync(&w, &up, T1).success();
    // What a sync killed between writing the feed and its state leaves.
    std::fs::write(w.data_dir().join("upstream-feed.json"), b"{\"half\": true}").unwrap();
    let s = Server::start(&w, &["--now", T1], &[]);
    let reply = s.get("/api/status.json");
    assert_eq!(reply.status, 404, "{}", reply.text());
    assert_eq!(reply.json()["error"], "not_found");
}

#[test]
fn elsewhere_the_path_is_a_json_404_that_says_why() {
    let w = World::new();
    let s = Server::start(&w, &[], &[]);
    let before = s.get("/api/status.json");
    assert_eq!(before.status, 503, "nothing published yet");
    assert_eq!(before.json()["error"], "data_unavailable");
    w.seed_bundled();
    let standalone = s.wait_for("/api/status.json", Duration::from_secs(5), |r| {
        r.status != 503
    });
    assert_eq!(standalone.status, 404);
    assert_eq!(standalone.json()["error"], "not_found");
    assert_eq!(
        standalone.json()["detail"],
        "this instance runs in standalone mode: it has no upstream status feed to mirror"
    );

    let up = Upstream::start(Behavior::Status(500));
    up.serve(
        &crate::util::bundled_document("2026-11-20T09:00:00.000Z", 16),
        "\"r1\"",
    );
    let w2 = World::new();
    w2.run(&[
        "--now",
        "2026-11-20T10:00:00.000Z",
        "sync",
        "--upstream",
        &up.url("/records.json"),
        "--once",
    ])
    .success();
    let s2 = Server::start(&w2, &[], &[]);
    let records = s2.get("/api/status.json");
    assert_eq!(records.status, 404);
    assert!(
        records.json()["detail"]
            .as_str()
            .unwrap()
            .starts_with("this instance's upstream is not the public status feed"),
        "{}",
        records.text()
    );
}
