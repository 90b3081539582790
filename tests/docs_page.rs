//! The docs page in a real browser: Debian's headless chromium, driven by
//! playwright-core (tests/browser/docs_page.mjs), loads `/openapi/v1/docs`
//! from the real server at 1280×800 and 390×844 and screenshots both. The
//! page must fit each width without horizontal page scroll, show its
//! examples with the address it was served from, offer the Atom feed to
//! feed readers, stay self-contained and log no console error.
//!
//! A missing browser or npm package is a failure that says how to install
//! it (`make test-deps`), never a skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::server::Server;
use crate::util::{repo_root, World};

const CHROMIUM: &str = "/usr/bin/chromium";
const VIEWPORTS: [(u64, u64); 2] = [(1280, 800), (390, 844)];

/// The playwright-core version pinned in tests/browser/package.json.
fn pinned_playwright() -> String {
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(repo_root().join("tests/browser/package.json")).unwrap(),
    )
    .unwrap();
    manifest["dependencies"]["playwright-core"]
        .as_str()
        .expect("tests/browser/package.json pins playwright-core")
        .to_owned()
}

/// The folder `make test-deps` installs the npm packages into, checked:
/// chromium, node and the pinned playwright-core must all be there.
pub(crate) fn browser_dir() -> PathBuf {
    let hint = "run `make test-deps` (apt-get install chromium nodejs npm; npm ci in .browser/ from tests/browser/package-lock.json)";
    assert!(
        Path::new(CHROMIUM).exists(),
        "chromium is not installed at {CHROMIUM}; {hint}"
    );
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|out| out.status.success()),
        "node is not on PATH; {hint}"
    );
    let dir = repo_root().join(".browser");
    let installed = dir.join("node_modules/playwright-core/package.json");
    let version = std::fs::read(&installed)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|manifest| manifest["version"].as_str().map(str::to_owned));
    let pinned = pinned_playwright();
    assert_eq!(
        version.as_deref(),
        Some(pinned.as_str()),
        "playwright-core {pinned} is not installed in {} (found {version:?}); {hint}",
        dir.display()
    );
    dir
}

/// Runs the browser script `tests/browser/SCRIPT` against `origin` (with
/// `extra` arguments after the usual four); its JSON report.
pub(crate) fn run_browser(
    script: &str,
    origin: &str,
    out_dir: &Path,
    browser_dir: &Path,
    scratch: &Path,
    extra: &[&str],
) -> Value {
    let script = repo_root().join("tests/browser").join(script);
    let mut child = Command::new("node")
        .arg(&script)
        .arg(origin)
        .arg(out_dir)
        .arg(browser_dir)
        .arg(CHROMIUM)
        .args(extra)
        // Chromium writes its profile and crash dumps under HOME and TMPDIR.
        .env("HOME", scratch)
        .env("TMPDIR", scratch)
        .current_dir(scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn node");
    // A hung browser must not hang the suite: two minutes, then kill.
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("poll node").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the browser script did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("node output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser script failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("the report is not JSON ({e}):\n{stdout}\n{stderr}"))
}

/// Every expectation of one viewport that does not hold, as "what: expected …, got …".
fn failures(report: &Value, origin: &str, path: &str, (width, height): (u64, u64)) -> Vec<String> {
    let mut failed = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failed.push(format!("{width}x{height}: {what}"));
        }
    };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap_or_else(|| panic!("an array, got {v}"))
            .iter()
            .map(|s| s.as_str().map_or_else(|| s.to_string(), str::to_owned))
            .collect()
    };
    check(
        report["status"] == 200,
        format!("status: expected 200, got {}", report["status"]),
    );
    check(
        report["innerWidth"] == width,
        format!("viewport: expected {width}, got {}", report["innerWidth"]),
    );
    let scroll_width = report["scrollWidth"].as_u64().unwrap();
    check(
        scroll_width <= width,
        format!("documentElement.scrollWidth: expected <= {width}, got {scroll_width}"),
    );
    let body_width = report["bodyScrollWidth"].as_u64().unwrap();
    check(
        body_width <= width,
        format!("body.scrollWidth: expected <= {width}, got {body_width}"),
    );
    check(
        report["overflowingCount"] == 0,
        format!(
            "elements wider than the viewport, unclipped: expected none, got {} (first: {})",
            report["overflowingCount"], report["overflowing"]
        ),
    );
    let violations = report["violations"]
        .as_array()
        .unwrap_or_else(|| panic!("axe-core's violations, got {}", report["violations"]));
    check(
        violations.is_empty(),
        format!(
            "axe-core (WCAG 2.1 A, AA, best practices): expected no violation, got {violations:?}"
        ),
    );
    let errors = strings(&report["consoleErrors"]);
    check(
        errors.is_empty(),
        format!("console errors: expected none, got {errors:?}"),
    );
    let requests = strings(&report["requests"]);
    let page = format!("{origin}{path}");
    check(
        requests == [page.clone()],
        format!("requests (self-contained page): expected [{page:?}], got {requests:?}"),
    );
    let slots = strings(&report["originSlots"]);
    check(
        !slots.is_empty() && slots.iter().all(|s| s == origin),
        format!("examples' origin: expected every [data-origin] to read {origin:?}, got {slots:?}"),
    );
    check(
        report["placeholders"] == 0,
        format!(
            "placeholder hosts left in the text: expected 0, got {}",
            report["placeholders"]
        ),
    );
    let curls = strings(&report["curlUrls"]);
    let prefix = format!("{origin}/");
    check(
        !curls.is_empty() && curls.iter().all(|u| u.starts_with(&prefix)),
        format!("curl examples: expected every URL to start with {prefix:?}, got {curls:?}"),
    );
    let feed = format!("{origin}/openapi/v1/records.atom");
    let alternate = &report["atomAlternate"];
    check(
        alternate["href"] == feed.as_str()
            && alternate["title"].as_str().is_some_and(|t| !t.is_empty()),
        format!("Atom alternate link: expected href {feed:?} with a title, got {alternate}"),
    );
    // A hash-based CSP must list the hash of every inline block, or chromium
    // refuses it (and logs a console error, caught above).
    let csp = report["contentSecurityPolicy"].as_str().unwrap_or_default();
    for hash in strings(&report["inlineScriptHashes"])
        .into_iter()
        .chain(strings(&report["inlineStyleHashes"]))
    {
        check(
            csp.contains(&hash),
            format!("Content-Security-Policy: expected it to list {hash}, got {csp:?} (update DOCS_CSP in src/api/assets.rs)"),
        );
    }
    failed
}

#[test]
fn the_docs_page_fits_a_phone_and_a_desktop_in_chromium() {
    let browser_dir = browser_dir();
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &[], &[]);
    let origin = format!("http://{}", s.addr);
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs_page");
    std::fs::create_dir_all(&out_dir).unwrap();
    let scratch = w.path("browser");
    std::fs::create_dir_all(&scratch).unwrap();

    let mut failed = Vec::new();
    // English as negotiated by default, and Chinese by its path.
    for path in ["/openapi/v1/docs", "/openapi/v1/docs/zh"] {
        let report = run_browser(
            "docs_page.mjs",
            &origin,
            &out_dir,
            &browser_dir,
            &scratch,
            &[path],
        );
        eprintln!(
            "{path}: chromium {} through playwright-core {}",
            report["browser"], report["playwrightCore"]
        );
        let viewports = report["viewports"].as_array().expect("viewports");
        assert_eq!(viewports.len(), VIEWPORTS.len(), "{report}");
        for (viewport, size) in viewports.iter().zip(VIEWPORTS) {
            eprintln!(
                "screenshot {}x{}: {} (scrollWidth {}, scrolling inside: {})",
                size.0,
                size.1,
                viewport["screenshot"].as_str().unwrap(),
                viewport["scrollWidth"],
                viewport["scrollers"]
            );
            assert_eq!(viewport["width"], size.0, "{viewport}");
            failed.extend(
                failures(viewport, &origin, path, size)
                    .into_iter()
                    .map(|f| format!("{path} {f}")),
            );
        }
    }
    assert!(
        failed.is_empty(),
        "the docs page in chromium:\n  {}",
        failed.join("\n  ")
    );
}

/// Without a browser: the page documents the feeds, the status feed mirror
/// and conditional requests, offers the Atom feed in its head, and is sent
/// with a Content-Security-Policy that lets nothing load.
#[test]
fn the_docs_page_documents_feeds_and_conditional_requests() {
    let w = World::new();
    let s = Server::start(&w, &[], &[]);
    let docs = s.get("/openapi/v1/docs");
    assert_eq!(docs.status, 200);
    let html = docs.text();
    let head = &html[..html.find("</head>").expect("a head")];
    assert!(
        head.contains(r#"<link rel="alternate" type="application/atom+xml" title="Reset records (Atom feed)" href="/openapi/v1/records.atom">"#),
        "the head offers the Atom feed:\n{head}"
    );
    for needle in [
        "/records.atom",
        "/records.ics",
        "/api/status.json",
        "<code>plan</code>",
        "<code>alarm</code>",
        "If-None-Match",
        "If-Modified-Since",
        "304 Not Modified",
        "not counted against the 20-per-hour quota",
        "Cache-Control: no-cache",
        "--etag-compare",
    ] {
        assert!(html.contains(needle), "the docs page mentions {needle}");
    }
    assert!(
        !html.contains("example.com/"),
        "examples use the served origin, never example.com"
    );
    let csp = docs
        .header("content-security-policy")
        .expect("a Content-Security-Policy");
    assert!(
        csp.starts_with("default-src 'none'; "),
        "nothing loads by default: {csp}"
    );
}

/// The block `<TAG>…</TAG>` of a page.
fn block<'a>(html: &'a str, tag: &str) -> &'a str {
    let start = html
        .find(&format!("<{tag}>"))
        .unwrap_or_else(|| panic!("no <{tag}>"));
    let end = html[start..].find(&format!("</{tag}>")).unwrap() + start;
    &html[start..end]
}

#[test]
fn the_docs_page_speaks_the_readers_language_and_each_links_the_other() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &[], &[]);
    let page = |path: &str, accept: &[(&str, &str)]| {
        let reply = s.request("GET", path, accept);
        assert_eq!(reply.status, 200, "{path}");
        reply
    };
    for (path, accept, lang, other, negotiated) in [
        ("/openapi/v1/docs", None, "en", "/openapi/v1/docs/zh", true),
        (
            "/openapi/v1/docs",
            Some("zh-CN,zh;q=0.9,en;q=0.8"),
            "zh-Hans",
            "/openapi/v1/docs/en",
            true,
        ),
        (
            "/openapi/v1/docs/en",
            Some("zh-CN"),
            "en",
            "/openapi/v1/docs/zh",
            false,
        ),
        (
            "/openapi/v1/docs/zh",
            None,
            "zh-Hans",
            "/openapi/v1/docs/en",
            false,
        ),
    ] {
        let headers: Vec<(&str, &str)> =
            accept.map(|a| ("Accept-Language", a)).into_iter().collect();
        let reply = page(path, &headers);
        let what = format!("{path} ({accept:?})");
        assert_eq!(reply.header("content-language"), Some(lang), "{what}");
        let vary = reply.header("vary").unwrap_or_default();
        assert_eq!(
            vary.contains("Accept-Language"),
            negotiated,
            "{what}: Vary {vary}"
        );
        let html = reply.text();
        assert!(html.contains(&format!("<html lang=\"{lang}\">")), "{what}");
        assert!(
            html.contains(&format!("href=\"{other}\"")),
            "{what}: no link to {other}"
        );
    }
    // One CSP for both: the Chinese page's style and script are the English page's.
    let (en, zh) = (
        page("/openapi/v1/docs/en", &[]).text(),
        page("/openapi/v1/docs/zh", &[]).text(),
    );
    for tag in ["style", "script"] {
        assert_eq!(
            block(&en, tag),
            block(&zh, tag),
            "the <{tag}> blocks differ"
        );
    }
    assert!(zh.contains("配额"), "the Chinese page speaks Chinese");
    // On a phone a cell names its column itself (data-label): in the page's
    // own language, as that column's header says it.
    for (lang, html) in [("en", &en), ("zh", &zh)] {
        let mut labelled = 0;
        for table in html.split("<table").skip(1) {
            let table = table.split("</table>").next().unwrap_or("");
            let header: Vec<String> = table
                .split("<th>")
                .skip(1)
                .map(|th| {
                    crate::documents::without_tags(th.split("</th>").next().unwrap_or(""))
                        .to_lowercase()
                })
                .collect();
            for row in table.split("<tr>").skip(1) {
                for (column, cell) in row.split("<td").skip(1).enumerate() {
                    let Some((_, rest)) = cell.split_once("data-label=\"") else {
                        continue;
                    };
                    let label = rest.split('"').next().unwrap_or("");
                    assert_eq!(
                        Some(&label.to_lowercase()),
                        header.get(column),
                        "the {lang} page labels column {column} of a table headed {header:?}"
                    );
                    labelled += 1;
                }
            }
        }
        assert!(labelled >= 20, "{lang}: {labelled} labelled cells");
    }
    // Each language's status page links its own docs page.
    for (status, docs) in [
        ("/en/", "/openapi/v1/docs/en"),
        ("/zh/", "/openapi/v1/docs/zh"),
    ] {
        let html = page(status, &[]).text();
        assert!(
            html.contains(&format!("href=\"{docs}\"")),
            "{status} links {docs}"
        );
        assert!(!html.contains("href=\"/openapi/v1/docs\""), "{status}");
    }
}
