//! Conditional requests (docs/spec/decisions.md, "Beyond the spec"): every data 200
//! carries a strong `ETag` and `Last-Modified`; a matching `If-None-Match`
//! (or, without it, an `If-Modified-Since` of exactly that second) is
//! answered 304 with no body, its `ETag` and `Vary` (no `Last-Modified`:
//! RFC 9110 section 15.4.5), CORS and the quota headers unchanged, and is
//! never counted.

use std::time::Duration;

use crate::util::server::{Reply, Server};
use crate::util::upstream::{Behavior, Upstream};
use crate::util::{bundled_document, World};

const NOW: &str = "2026-11-20T10:00:00.000Z";
/// `Last-Modified` of the bundled seed published at NOW.
const SEEDED: &str = "Fri, 20 Nov 2026 10:00:00 GMT";
const DATA_PATHS: [&str; 9] = [
    "/openapi/v1/records",
    "/openapi/v1/records?kind=reset_scheduled",
    "/openapi/v1/records?kind=reset_completed&page=2&pageSize=3",
    "/openapi/v1/records/latest",
    "/openapi/v1/records/latest?kind=reset_completed",
    "/openapi/v1/records.atom",
    "/openapi/v1/records.atom?kind=reset_scheduled&plan=pro",
    "/openapi/v1/records.ics",
    "/openapi/v1/records.ics?kind=reset_completed&alarm=15",
];

fn seeded_server(args: &[&str]) -> (World, Server) {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    let mut all = vec!["--now", NOW];
    all.extend_from_slice(args);
    let s = Server::start(&w, &all, &[]);
    (w, s)
}

fn remaining(reply: &Reply) -> Option<&str> {
    reply.header("x-ratelimit-remaining")
}

#[track_caller]
fn assert_not_modified(reply: &Reply, etag: &str, remaining_left: &str, what: &str) {
    assert_eq!(reply.status, 304, "{what}: {reply:?}");
    assert!(reply.body.is_empty(), "{what}: a 304 has no body");
    assert_eq!(reply.header("etag"), Some(etag), "{what}");
    // RFC 9110 section 15.4.5: with an ETag, a 304 does not repeat Last-Modified.
    assert_eq!(reply.header("last-modified"), None, "{what}");
    assert_eq!(reply.header("cache-control"), Some("no-cache"), "{what}");
    assert_eq!(reply.header("vary"), Some("Accept-Encoding"), "{what}");
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("*"),
        "{what}"
    );
    assert!(
        reply
            .header("access-control-expose-headers")
            .is_some_and(|h| h.ends_with("Retry-After, ETag, Last-Modified")),
        "{what}: {reply:?}"
    );
    assert_eq!(remaining(reply), Some(remaining_left), "{what}");
    assert_eq!(reply.header("x-ratelimit-limit"), Some("20"), "{what}");
    assert_eq!(reply.header("x-ratelimit-window"), Some("3600"), "{what}");
    assert_eq!(reply.header("content-length"), None, "{what}");
}

#[test]
fn every_data_answer_carries_a_strong_etag_last_modified_and_no_cache() {
    let (_w, s) = seeded_server(&[]);
    let mut tags = Vec::new();
    for path in DATA_PATHS {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}");
        let tag = r.header("etag").expect("an ETag").to_owned();
        assert!(
            tag.starts_with('"') && tag.ends_with('"') && tag.len() > 10,
            "a strong, quoted tag: {tag}"
        );
        assert_eq!(r.header("last-modified"), Some(SEEDED), "{path}");
        assert_eq!(r.header("cache-control"), Some("no-cache"), "{path}");
        let head = s.request("HEAD", path, &[]);
        assert_eq!(head.header("etag"), Some(tag.as_str()), "HEAD {path}");
        tags.push(tag);
    }
    // The JSON bodies are a function of the data alone: one view, one tag.
    // A feed's bytes also depend on the base of its links, which its tag
    // covers (issue 39, item 4): one tag per feed form.
    let (json, feeds) = tags.split_at(5);
    assert!(json.windows(2).all(|w| w[0] == w[1]), "{tags:?}");
    assert_eq!(feeds[0], feeds[1], "{tags:?}");
    assert_eq!(feeds[2], feeds[3], "{tags:?}");
    assert!(
        json[0] != feeds[0] && json[0] != feeds[2] && feeds[0] != feeds[2],
        "{tags:?}"
    );
    // Refusals have no validators.
    let bad = s.get("/openapi/v1/records?page=0");
    assert_eq!(bad.status, 422);
    assert_eq!(bad.header("etag"), None);
    assert_eq!(bad.header("cache-control"), Some("no-cache"));
}

#[test]
fn if_none_match_is_honoured_as_rfc_9110_says() {
    let (_w, s) = seeded_server(&[]);
    // Each path's own tag (the feeds' differ from the JSON bodies'): 11 left.
    let tags: Vec<String> = DATA_PATHS
        .iter()
        .map(|path| s.get(path).header("etag").unwrap().to_owned())
        .collect();
    for (path, tag) in DATA_PATHS.iter().zip(&tags) {
        let weak = format!("W/{tag}");
        let listed = format!("\"nope\", {tag}, \"other\"");
        for (value, what) in [
            (tag.as_str(), "the same tag"),
            (listed.as_str(), "a list holding it"),
            (
                weak.as_str(),
                "its weak form (If-None-Match compares weakly)",
            ),
            ("*", "*"),
        ] {
            let r = s.request("GET", path, &[("If-None-Match", value)]);
            assert_not_modified(&r, tag, "11", &format!("{what} on {path}"));
        }
    }
    let path = "/openapi/v1/records";
    let tag = tags[0].clone();
    let head = s.request("HEAD", path, &[("If-None-Match", &tag)]);
    assert_not_modified(&head, &tag, "11", "HEAD");
    // Two header lines make one list.
    let lines = s.request(
        "GET",
        path,
        &[("If-None-Match", "\"nope\""), ("If-None-Match", &tag)],
    );
    assert_not_modified(&lines, &tag, "11", "a list over two lines");
    // A coding this server never makes is not a form of its tag (issue 39,
    // item 17: a matcher that stripped any suffix answered this 304).
    let deflate = format!("{}-deflate\"", &tag[..tag.len() - 1]);
    let gzip_gzip = format!("{}-gzip-gzip\"", &tag[..tag.len() - 1]);
    for (value, what) in [
        ("\"0123456789abcdef\"", "a stale tag"),
        ("W/\"0123456789abcdef\"", "a stale weak tag"),
        ("not a tag", "an unreadable header"),
        (deflate.as_str(), "a coding never made"),
        (gzip_gzip.as_str(), "a coding twice"),
    ] {
        let r = s.request("GET", path, &[("If-None-Match", value)]);
        assert_eq!(r.status, 200, "{what}");
        assert_eq!(r.header("etag"), Some(tag.as_str()), "{what}");
        assert!(!r.body.is_empty(), "{what}");
    }
    assert_eq!(remaining(&s.get(path)), Some("5"), "the five 200s counted");
}

#[test]
fn if_modified_since_matches_its_exact_second_and_if_none_match_wins() {
    let (_w, s) = seeded_server(&[]);
    let path = "/openapi/v1/records/latest";
    let tag = s.get(path).header("etag").unwrap().to_owned();
    let exact = s.request("GET", path, &[("If-Modified-Since", SEEDED)]);
    assert_not_modified(&exact, &tag, "19", "the exact Last-Modified");
    for (date, what) in [
        ("Fri, 20 Nov 2026 09:59:59 GMT", "a second before"),
        (
            "Fri, 20 Nov 2026 10:00:01 GMT",
            "a second after (exact match only: a rollback to older data must show)",
        ),
        ("yesterday", "not an HTTP date"),
    ] {
        let r = s.request("GET", path, &[("If-Modified-Since", date)]);
        assert_eq!(r.status, 200, "{what}");
    }
    // Both present: If-None-Match decides, whatever the date says.
    let stale_tag = s.request(
        "GET",
        path,
        &[
            ("If-None-Match", "\"stale\""),
            ("If-Modified-Since", SEEDED),
        ],
    );
    assert_eq!(
        stale_tag.status, 200,
        "a stale tag wins over a matching date"
    );
    let fresh_tag = s.request(
        "GET",
        path,
        &[
            ("If-None-Match", &tag),
            ("If-Modified-Since", "Thu, 01 Jan 2026 00:00:00 GMT"),
        ],
    );
    assert_not_modified(
        &fresh_tag,
        &tag,
        "15",
        "a matching tag wins over an old date",
    );
}

#[test]
fn a_304_is_not_counted_even_when_the_quota_is_used_up() {
    let (_w, s) = seeded_server(&[]);
    let path = "/openapi/v1/records";
    let first = s.get(path);
    let tag = first.header("etag").unwrap().to_owned();
    let reset = first.header("x-ratelimit-reset").unwrap().to_owned();
    for n in 0..20 {
        let r = s.request("GET", path, &[("If-None-Match", &tag)]);
        assert_not_modified(&r, &tag, "19", &format!("conditional request {n}"));
        assert_eq!(r.header("x-ratelimit-reset"), Some(reset.as_str()));
    }
    for _ in 0..19 {
        assert_eq!(s.get(path).status, 200);
    }
    let limited = s.get(path);
    assert_eq!(limited.status, 429, "the quota is used up");
    let free = s.request("GET", path, &[("If-None-Match", &tag)]);
    assert_not_modified(&free, &tag, "0", "a matching tag past the quota");
    let refused = s.request("GET", path, &[("If-None-Match", "\"stale\"")]);
    assert_eq!(refused.status, 429, "a non-matching tag needs quota");
    assert_eq!(refused.header("etag"), None);
}

#[test]
fn a_client_that_never_counted_sees_its_whole_quota_on_a_304() {
    let (_w, s) = seeded_server(&["--trust-proxy", "127.0.0.1/32"]);
    let path = "/openapi/v1/records";
    let tag = s
        .request("GET", path, &[("X-Forwarded-For", "192.0.2.1")])
        .header("etag")
        .unwrap()
        .to_owned();
    let other = s.request(
        "GET",
        path,
        &[("X-Forwarded-For", "192.0.2.2"), ("If-None-Match", &tag)],
    );
    assert_eq!(other.status, 304);
    assert_eq!(remaining(&other), Some("20"));
    assert_eq!(
        other.header("x-ratelimit-reset"),
        Some(NOW),
        "nothing to leave the window"
    );
}

#[test]
fn conditionals_never_turn_a_refusal_into_a_304() {
    let w = World::new();
    let s = Server::start(&w, &["--now", NOW], &[]);
    let before = s.request("GET", "/openapi/v1/records", &[("If-None-Match", "*")]);
    assert_eq!(before.status, 503, "no snapshot yet: {before:?}");
    assert_eq!(before.header("etag"), None);
    w.run(&["--now", NOW, "seed"]).success();
    s.wait_for("/healthz", Duration::from_secs(5), |r| r.status == 200);
    let bad = s.request(
        "GET",
        "/openapi/v1/records?kind=nope",
        &[("If-None-Match", "*")],
    );
    assert_eq!(bad.status, 422);
}

#[test]
fn a_new_publish_changes_the_tag_and_a_stale_one_gets_the_new_body() {
    let (w, s) = seeded_server(&[]);
    let path = "/openapi/v1/records/latest";
    let old = s.get(path).header("etag").unwrap().to_owned();
    w.run(&["--now", "2026-11-20T10:30:00.000Z", "publish"])
        .success();
    let fresh = s.wait_for(path, Duration::from_secs(5), |r| {
        r.header("etag").is_some_and(|t| t != old)
    });
    let new = fresh.header("etag").unwrap().to_owned();
    assert_eq!(
        fresh.header("last-modified"),
        Some("Fri, 20 Nov 2026 10:30:00 GMT")
    );
    let stale = s.request("GET", path, &[("If-None-Match", &old)]);
    assert_eq!(stale.status, 200, "the old tag no longer matches");
    assert_eq!(stale.body, fresh.body);
    let again = s.request("GET", path, &[("If-None-Match", &new)]);
    assert_eq!(again.status, 304);
}

#[test]
fn an_upstream_304_that_only_moves_synced_at_changes_the_tag() {
    const T1: &str = "2026-11-20T10:00:00.000Z";
    const T2: &str = "2026-11-20T10:05:00.000Z";
    let up = Upstream::start(Behavior::Status(500));
    up.serve(&bundled_document("2026-11-20T09:00:00.000Z", 16), "\"v1\"");
    let w = World::new();
    let sync = |now: &str| {
        w.run(&[
            "--now",
            now,
            "sync",
            "--upstream",
            &up.url("/records.json"),
            "--interval-minutes",
            "5",
            "--once",
        ])
        .success()
    };
    sync(T1);
    let s = Server::start(&w, &["--now", T2], &[]);
    let path = "/openapi/v1/records";
    let first = s.get(path);
    let old = first.header("etag").unwrap().to_owned();
    assert_eq!(first.json()["meta"]["dataSource"]["syncedAt"], T1);
    let run = sync(T2);
    assert!(run.stdout.contains("not modified (304)"), "{}", run.stdout);
    let moved = s.wait_for(path, Duration::from_secs(5), |r| {
        r.json()["meta"]["dataSource"]["syncedAt"] == T2
    });
    assert_ne!(
        moved.header("etag"),
        Some(old.as_str()),
        "syncedAt moved: a new tag"
    );
    assert_eq!(
        moved.header("last-modified"),
        Some("Fri, 20 Nov 2026 10:05:00 GMT")
    );
    let revalidated = s.request("GET", path, &[("If-None-Match", &old)]);
    assert_eq!(revalidated.status, 200, "a 304 must never hide a change");
    assert_eq!(
        revalidated.json()["meta"]["dataSource"]["syncedAt"],
        T2,
        "the client gets the new meta"
    );
}

#[test]
fn every_entity_tag_has_the_one_form() {
    let (_w, s) = seeded_server(&["--admin-listen", "127.0.0.1:0", "--no-rate-limit"]);
    let one_form = |tag: &str, what: &str| {
        let hex = tag
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{what}: {tag:?} is not a strong tag"));
        assert!(
            hex.len() == 32
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
            "{what}: {tag:?} is not 128 bits of lower-case hex"
        );
    };
    for path in [
        "/openapi/v1/records/latest",
        "/openapi/v1/records.atom",
        "/",
        "/openapi/v1/badge.json",
    ] {
        let reply = s.get(path);
        assert_eq!(reply.status, 200, "{path}");
        one_form(reply.header("etag").expect("an ETag"), path);
    }
    let export = s.admin_get("/export.json", &[]);
    one_form(export.header("etag").expect("an ETag"), "/export.json");
}

/// Issue 39, item 4: a feed's tag covers what its bytes depend on besides
/// the data: the base of its links (`Host`, `--public-base-url`) and the
/// record pages it links to (`--no-site`). A client revalidating after any
/// of them changed gets the new bytes, not a 304 for the old ones.
#[test]
fn a_feeds_tag_changes_with_the_base_of_its_links() {
    let get = |s: &Server, path: &str, headers: &[(&str, &str)]| s.request("GET", path, headers);
    let atom = "/openapi/v1/records.atom";
    let ics = "/openapi/v1/records.ics";
    let (w, s) = seeded_server(&["--no-rate-limit"]);
    // The request's host makes the links: each host its own tag.
    let a = get(&s, atom, &[("Host", "a.example")]);
    let tag_a = a.header("etag").unwrap().to_owned();
    assert!(a.text().contains("http://a.example/"), "{}", a.text());
    let b = get(
        &s,
        atom,
        &[("Host", "b.example"), ("If-None-Match", &tag_a)],
    );
    assert_eq!(b.status, 200, "the links name another host: {b:?}");
    assert!(b.text().contains("http://b.example/"));
    assert_ne!(b.header("etag"), Some(tag_a.as_str()));
    let again = get(
        &s,
        atom,
        &[("Host", "a.example"), ("If-None-Match", &tag_a)],
    );
    assert_eq!(again.status, 304, "the same host revalidates: {again:?}");
    let calendar = get(&s, ics, &[]);
    let tag_ics = calendar.header("etag").unwrap().to_owned();
    drop(s);
    // The operator sets --public-base-url: the feeds link to it and to the
    // record pages, and yesterday's tags no longer match.
    let base = "https://status.example/";
    let with_base = |extra: &[&str]| {
        let mut args = vec!["--now", NOW, "--no-rate-limit", "--public-base-url", base];
        args.extend_from_slice(extra);
        Server::start(&w, &args, &[])
    };
    let s = with_base(&[]);
    let feed = get(
        &s,
        atom,
        &[("Host", "a.example"), ("If-None-Match", &tag_a)],
    );
    assert_eq!(feed.status, 200, "{feed:?}");
    assert!(feed.text().contains("https://status.example/records/"));
    let tag_based = feed.header("etag").unwrap().to_owned();
    let calendar = get(&s, ics, &[("If-None-Match", &tag_ics)]);
    assert_eq!(calendar.status, 200, "{calendar:?}");
    assert!(calendar.text().contains("https://status.example/records/"));
    let tag_ics_based = calendar.header("etag").unwrap().to_owned();
    drop(s);
    // Without the pages, the feeds no longer link to them.
    let s = with_base(&["--no-site"]);
    for (path, tag) in [(atom, &tag_based), (ics, &tag_ics_based)] {
        let reply = get(&s, path, &[("If-None-Match", tag)]);
        assert_eq!(reply.status, 200, "{path} with --no-site: {reply:?}");
        assert!(!reply.text().contains("https://status.example/records/"));
    }
    drop(s);
    // The pages are tagged by their bytes: a new --site-name is a new tag.
    let page = |name: &str| {
        let s = Server::start(&w, &["--now", NOW, "--site-name", name], &[]);
        let reply = get(&s, "/en/", &[]);
        (reply.header("etag").unwrap().to_owned(), s)
    };
    let (tag_one, _one) = page("One");
    let (_, two) = page("Two");
    let reply = get(&two, "/en/", &[("If-None-Match", &tag_one)]);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.text().contains("Two"));
}
