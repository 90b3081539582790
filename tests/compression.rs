//! Compressed representations (issue 30): every body a client reads
//! repeatedly is offered as br, zstd and gzip, negotiated by
//! `Accept-Encoding` (RFC 9110 section 12.5.3), and the decoders real
//! clients use read back exactly the identity body: curl `--compressed`,
//! Python's httpx (with brotli and zstandard), the exact headers of Go's
//! `net/http`, Python `requests` and Node's `fetch`, and chromium through
//! playwright. A shared cache (nginx's `proxy_cache`, keyed by URL and
//! `Vary`) never serves a coding to a client that did not ask for it; each
//! form has its own tag and `If-None-Match` with any of them is a 304.

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::util::nginx::Nginx;
use crate::util::server::{Reply, Server};
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn server(args: &[&str]) -> (World, Server) {
    let w = World::new();
    w.run(&["--now", NOW, "seed"]).success();
    let mut all = vec!["--now", NOW, "--public-base-url", "https://resets.example"];
    all.extend_from_slice(args);
    let s = Server::start(&w, &all, &[]);
    // The hot set is compressed off the request path once the view is
    // served; until then it is answered as it is.
    s.settle();
    (w, s)
}

/// Every negotiable path: hot bodies (made at publish) and cold ones (made
/// on first request), the feeds, the pages, the badge, the fixed documents.
fn paths(s: &Server) -> Vec<String> {
    let id = s.get("/openapi/v1/records/latest").json()["data"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    [
        "/openapi/v1/records",
        "/openapi/v1/records?kind=reset_completed&page=2&pageSize=3",
        "/openapi/v1/records/latest",
        "/openapi/v1/records.atom",
        "/openapi/v1/records.atom?plan=pro",
        "/openapi/v1/records.ics",
        "/openapi/v1/records.ics?alarm=15",
        "/openapi/v1/openapi.json",
        "/openapi/v1/docs",
        "/openapi/v1/skill.md",
        "/openapi/v1/badge.json",
        "/",
        "/zh/",
    ]
    .iter()
    .map(|p| (*p).to_owned())
    .chain([format!("/en/records/{id}")])
    .collect()
}

/// The identity body of `path` (no `Accept-Encoding`), checked to be one.
#[track_caller]
fn identity(s: &Server, path: &str) -> Reply {
    let r = s.get(path);
    assert_eq!(r.status, 200, "{path}: {r:?}");
    assert_eq!(
        r.header("content-encoding"),
        None,
        "{path}: identity without Accept-Encoding"
    );
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str()),
        "{path}"
    );
    let vary = r.header("vary").unwrap_or_default();
    assert!(vary.ends_with("Accept-Encoding"), "{path}: Vary {vary:?}");
    r
}

/// The coding a client that sends `accept` must get for a body this big.
fn expected(accept: &str, body_len: usize) -> Option<&'static str> {
    if body_len < 512 {
        return None; // small bodies stay identity
    }
    ["br", "zstd", "gzip"]
        .into_iter()
        .find(|c| accept.split(',').any(|t| t.trim() == *c))
}

#[test]
fn real_clients_decode_exactly_the_identity_body() {
    let (_w, s) = server(&["--no-rate-limit"]);
    let paths = paths(&s);
    let identities: Vec<(String, Reply)> =
        paths.iter().map(|p| (p.clone(), identity(&s, p))).collect();
    let digest_of = |path: &str| hex(&identities.iter().find(|(p, _)| p == path).unwrap().1.body);
    let mut failed = Vec::new();

    // curl --compressed: asks for every coding its build decodes.
    let curl_accept = {
        let out = Command::new("curl")
            .args([
                "-sS",
                "--compressed",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "-v",
            ])
            .arg(s.url("/healthz"))
            .output()
            .expect("curl (run `make test-deps`)");
        let log = String::from_utf8_lossy(&out.stderr).to_string();
        log.lines()
            .find_map(|l| l.strip_prefix("> Accept-Encoding: "))
            .unwrap_or_else(|| panic!("curl sent no Accept-Encoding:\n{log}"))
            .trim()
            .to_owned()
    };
    for (path, id) in &identities {
        let out = Command::new("curl")
            .args(["-sS", "--compressed", "-D", "-", "-o", "-"])
            .arg(s.url(path))
            .output()
            .unwrap();
        assert!(out.status.success(), "curl {path}");
        let text = out.stdout;
        let split = text.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8_lossy(&text[..split]).to_lowercase();
        let got = head
            .lines()
            .find_map(|l| l.strip_prefix("content-encoding: "))
            .map(str::trim);
        let want = expected(&curl_accept, id.body.len());
        if got != want || hex(&text[split..]) != hex(&id.body) {
            failed.push(format!(
                "curl ({curl_accept}) {path}: coding {got:?} (want {want:?}), body equal: {}",
                hex(&text[split..]) == hex(&id.body)
            ));
        }
    }

    // httpx and the exact headers of Go, requests and Node's fetch.
    let out = crate::util::python_json(
        "compression_check.py",
        &format!("http://{}", s.addr),
        serde_json::to_string(&paths).unwrap().as_bytes(),
    );
    assert_eq!(
        out["httpxDefault"], "gzip, deflate, br, zstd",
        "httpx with brotli and zstandard"
    );
    let accepts = [
        ("httpx", "gzip, deflate, br, zstd"),
        ("go net/http", "gzip"),
        ("python requests", "gzip, deflate"),
        ("node fetch", "gzip, deflate, br"),
    ];
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), paths.len() * accepts.len());
    for r in results {
        let path = r["path"].as_str().unwrap();
        let client = r["client"].as_str().unwrap();
        let accept = accepts.iter().find(|(c, _)| *c == client).unwrap().1;
        let id_len = identities
            .iter()
            .find(|(p, _)| p == path)
            .unwrap()
            .1
            .body
            .len();
        let want = expected(accept, id_len);
        let got = r["contentEncoding"].as_str();
        if r["status"] != 200 || got != want || r["sha256"] != digest_of(path) {
            failed.push(format!("{client} ({accept}) {path}: {r}"));
        }
        if r["contentLength"].as_str().map(str::parse::<u64>)
            != Some(Ok(r["wireBytes"].as_u64().unwrap()))
        {
            failed.push(format!(
                "{client} {path}: Content-Length is not the bytes on the wire: {r}"
            ));
        }
        if want.is_some() && r["wireBytes"].as_u64().unwrap() as usize >= id_len {
            failed.push(format!(
                "{client} {path}: {} bytes coded, {id_len} identity",
                r["wireBytes"]
            ));
        }
    }

    // chromium: the page by navigation, the rest by fetch() from it.
    let fetched: Vec<&String> = paths.iter().filter(|p| p.starts_with("/openapi")).collect();
    let browser_dir = crate::docs_page::browser_dir();
    let scratch = tempfile::tempdir().unwrap();
    let report = crate::docs_page::run_browser(
        "compression.mjs",
        &format!("http://{}", s.addr),
        scratch.path(),
        &browser_dir,
        scratch.path(),
        &[&serde_json::to_string(&fetched).unwrap()],
    );
    eprintln!("chromium {}", report["browser"]);
    let chromium: Vec<Value> = report["results"].as_array().unwrap().clone();
    assert_eq!(chromium.len(), fetched.len() + 1, "{report}");
    for r in &chromium {
        let path = r["path"].as_str().unwrap();
        let accept = r["acceptEncoding"].as_str().unwrap_or_default();
        assert!(
            accept.contains("gzip"),
            "chromium sent Accept-Encoding {accept:?} for {path}"
        );
        let id = identity(&s, path);
        let want = expected(accept, id.body.len());
        if r["status"] != 200
            || r["contentEncoding"].as_str() != want
            || r["sha256"] != hex(&id.body)
        {
            failed.push(format!("chromium ({accept}) {path}: want {want:?}: {r}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn negotiation_follows_rfc_9110_with_a_tag_per_form() {
    let (_w, s) = server(&[]);
    let path = "/openapi/v1/records";
    let ask = |accept: &str| s.request("GET", path, &[("Accept-Encoding", accept)]);
    let plain = s.get(path); // 19 left
    let tag = plain.header("etag").unwrap().to_owned();
    let coded = |accept: &str| {
        let r = ask(accept);
        assert_eq!(r.status, 200, "{accept}: {r:?}");
        (r.header("content-encoding").map(str::to_owned), r)
    };
    // q-values rank; q=0 refuses; equal weights: br, zstd, gzip; identity last.
    for (accept, want) in [
        ("gzip, deflate, br, zstd", Some("br")),
        ("gzip", Some("gzip")),
        ("br;q=0.5, gzip", Some("gzip")),
        ("br;q=0, zstd;q=0.2, gzip;q=0.1", Some("zstd")),
        ("identity", None),
        ("gzip;q=0.5, identity", None),
        ("*", Some("br")),
        ("*;q=0, gzip", Some("gzip")),
        ("deflate", None),
        ("", None),
    ] {
        let (got, r) = coded(accept);
        assert_eq!(got.as_deref(), want, "Accept-Encoding: {accept}");
        assert_eq!(r.header("vary"), Some("Accept-Encoding"), "{accept}");
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str()),
            "{accept}"
        );
        // Each form its own strong tag: the identity tag, coding appended.
        let want_tag = match want {
            Some(c) => format!("{}-{c}\"", &tag[..tag.len() - 1]),
            None => tag.clone(),
        };
        assert_eq!(r.header("etag"), Some(want_tag.as_str()), "{accept}");
    }
    let remaining = |r: &Reply| r.header("x-ratelimit-remaining").map(str::to_owned);
    // Everything refused: 406, counted like any admitted request.
    let refused = ask("identity;q=0, *;q=0");
    assert_eq!(refused.status, 406, "{refused:?}");
    assert_eq!(refused.json()["error"], "not_acceptable");
    assert_eq!(remaining(&refused).as_deref(), Some("8"));
    // HEAD: GET's headers, no body.
    let get = coded("br").1;
    let head = s.request("HEAD", path, &[("Accept-Encoding", "br")]);
    assert!(head.body.is_empty());
    for name in [
        "content-encoding",
        "content-length",
        "etag",
        "vary",
        "content-type",
    ] {
        assert_eq!(head.header(name), get.header(name), "HEAD {name}");
    }
    // If-None-Match works whichever form the client saw first; the 304
    // names the form this request would get, and carries nothing else
    // than a cache and a client use (RFC 9110 section 15.4.5).
    let br_tag = get.header("etag").unwrap().to_owned();
    let before = remaining(&head).unwrap();
    for (seen, accept, want) in [
        (
            br_tag.as_str(),
            "gzip",
            format!("{}-gzip\"", &tag[..tag.len() - 1]),
        ),
        (tag.as_str(), "br", br_tag.clone()),
        (br_tag.as_str(), "", tag.clone()),
    ] {
        let r = s.request(
            "GET",
            path,
            &[("If-None-Match", seen), ("Accept-Encoding", accept)],
        );
        assert_eq!(r.status, 304, "{seen} then {accept:?}: {r:?}");
        assert_eq!(r.header("etag"), Some(want.as_str()));
        assert_eq!(
            remaining(&r).as_deref(),
            Some(before.as_str()),
            "not counted"
        );
        let names: BTreeSet<String> = r.headers.iter().map(|(k, _)| k.to_lowercase()).collect();
        let lean: BTreeSet<String> = [
            "access-control-allow-origin",
            "access-control-expose-headers",
            "cache-control",
            "connection",
            "date",
            "etag",
            "vary",
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
            "x-ratelimit-window",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        assert_eq!(names, lean, "the headers of a 304");
    }
    // A small body stays identity, and still varies.
    let badge = s.request(
        "GET",
        "/openapi/v1/badge.json",
        &[("Accept-Encoding", "br")],
    );
    assert!(badge.body.len() < 512, "{}", badge.body.len());
    assert_eq!(badge.header("content-encoding"), None);
    assert_eq!(badge.header("vary"), Some("Accept-Encoding"));
    let refused = s.request(
        "GET",
        "/openapi/v1/badge.json",
        &[("Accept-Encoding", "br, identity;q=0")],
    );
    assert_eq!(
        refused.status, 406,
        "nothing acceptable is offered for a small body"
    );
    // The fixed documents are negotiated and revalidated too.
    let docs = s.request("GET", "/openapi/v1/docs", &[("Accept-Encoding", "gzip")]);
    assert_eq!(docs.header("content-encoding"), Some("gzip"));
    let again = s.request(
        "GET",
        "/openapi/v1/docs",
        &[("If-None-Match", docs.header("etag").unwrap())],
    );
    assert_eq!(again.status, 304);
}

#[test]
fn a_shared_cache_never_serves_a_coding_to_a_client_that_did_not_ask() {
    let (_w, s) = server(&["--no-rate-limit"]);
    let cache = Nginx::caching_proxy_to(s.addr);
    let via = |path: &str, accept: Option<&str>| {
        let headers: Vec<(&str, &str)> =
            accept.map(|a| ("Accept-Encoding", a)).into_iter().collect();
        crate::util::server::raw_request(
            std::net::SocketAddr::from(([127, 0, 0, 1], cache.port)),
            "GET",
            path,
            &headers,
        )
    };
    for path in ["/openapi/v1/records", "/openapi/v1/records.atom", "/en/"] {
        let identity_body = identity(&s, path).body;
        let br = via(path, Some("gzip, deflate, br"));
        assert_eq!(br.header("content-encoding"), Some("br"), "{path}");
        let again = via(path, Some("gzip, deflate, br"));
        assert_eq!(
            again.header("x-cache"),
            Some("HIT"),
            "{path}: the cache stores the br answer"
        );
        assert_eq!(again.body, br.body);
        for (accept, want) in [
            (None, None),
            (Some("gzip"), Some("gzip")),
            (Some("identity"), None),
        ] {
            let r = via(path, accept);
            assert_eq!(r.status, 200, "{path} {accept:?}");
            assert_eq!(
                r.header("content-encoding"),
                want,
                "{path}: a client sending {accept:?} got {:?} from the cache ({:?})",
                r.header("content-encoding"),
                r.header("x-cache")
            );
            if want.is_none() {
                assert_eq!(r.body, identity_body, "{path} {accept:?}");
            }
        }
    }
}
