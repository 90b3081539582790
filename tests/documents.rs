//! The documents, read as their readers meet them: every relative link of
//! the Markdown files reaches a file, and a `#fragment` a heading of it (as
//! GitHub makes a heading's anchor); the README stays a landing page; the
//! operator's manual, rendered as CommonMark, shows each alternative folded
//! beneath the step it replaces; the README's and the API reference's
//! examples (curl, the badge, an MCP client's config) run against a real
//! server and answer as they say.

use std::path::{Path, PathBuf};

use crate::util::repo_root;

/// The Markdown files a reader follows links between (the specification's
/// files under `docs/spec/` are copies, left as they came).
fn documents() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "ARCHITECTURE.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|f| root.join(f))
    .collect();
    for dir in ["docs", "docs/manual", "snapshots", "deploy"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// GitHub's anchor of a heading: lower case, characters other than
/// letters, digits, spaces, `-` and `_` dropped, spaces made `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (fenced code left out).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of `[text](target)` links outside fenced code.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_link_between_the_documents_reaches_its_file_and_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file
            .strip_prefix(repo_root())
            .unwrap()
            .display()
            .to_string();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let linked: PathBuf = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !linked.exists() {
                broken.push(format!("{name}: ({target}): no {}", linked.display()));
                continue;
            }
            if fragment.is_empty() {
                continue;
            }
            let heads = if linked.is_file() && linked.extension().is_some_and(|e| e == "md") {
                anchors(&std::fs::read_to_string(&linked).unwrap())
            } else {
                Vec::new()
            };
            if !heads.iter().any(|h| h == fragment) {
                broken.push(format!("{name}: ({target}): no heading #{fragment}"));
            }
        }
    }
    assert!(checked >= 40, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_landing_page_that_links_each_reader_on() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines < 250, "README.md has {lines} lines");
    for linked in [
        "docs/clients.md",
        "docs/api.md",
        "docs/manual/README.md",
        "CONTRIBUTING.md",
        "ARCHITECTURE.md",
    ] {
        assert!(
            readme.contains(&format!("]({linked})")),
            "README.md does not link {linked}"
        );
        assert!(Path::new(&repo_root().join(linked)).is_file(), "{linked}");
    }
}

/// The manual's alternatives (another way to the same end, not a step):
/// the first line of each, which must be shown folded in a `<details>`.
const ALTERNATIVES: [&str; 5] = [
    "sudo useradd --system",
    "sudo systemctl disable --now resetctl-sync.timer",
    "RESETCTL_CONFIG=/etc/resetctl/config.toml\n17 * * * * /usr/local/bin/resetctl sync --once",
    "RESETCTL_CONFIG=/etc/resetctl/config.toml\n0 7 * * * /usr/local/bin/resetctl mark-checked",
    "sudo -u resetctl flock /var/lib/resetctl/resetctl.lock tar",
];

#[test]
fn the_manual_shows_each_alternative_folded_beneath_its_step() {
    let mut folded: Vec<String> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for (file, text) in crate::deployment::chapters() {
        let mut html = String::new();
        pulldown_cmark::html::push_html(
            &mut html,
            pulldown_cmark::Parser::new_ext(&text, pulldown_cmark::Options::ENABLE_TABLES),
        );
        // What the reader sees: each <details> and its code, rendered.
        let mut rest = html.as_str();
        while let Some(start) = rest.find("<details>") {
            let end = rest[start..]
                .find("</details>")
                .map(|e| start + e)
                .unwrap_or_else(|| panic!("{file}: a <details> is never closed"));
            let details = &rest[start..end];
            assert!(
                details.contains("<summary>Alternative: "),
                "{file}: a <details> without a <summary>Alternative: …</summary>:\n{details}"
            );
            let codes = code_blocks(details);
            assert!(
                !codes.is_empty(),
                "{file}: an alternative shows no code block:\n{details}"
            );
            folded.extend(codes);
            rest = &rest[end..];
        }
        shown.extend(code_blocks(&html));
    }
    for alternative in ALTERNATIVES {
        assert!(
            shown.iter().any(|c| c.starts_with(alternative)),
            "the manual no longer shows {alternative:?}"
        );
        assert!(
            folded.iter().any(|c| c.starts_with(alternative)),
            "the manual shows {alternative:?} as a step, not folded as an alternative"
        );
    }
}

/// The text of each fenced block rendered in `html`.
fn code_blocks(html: &str) -> Vec<String> {
    html.split("<pre><code class=\"language-")
        .skip(1)
        .map(|code| code.split_once('>').map_or("", |(_, c)| c))
        .map(|code| unescape(code.split("</code></pre>").next().unwrap_or("")))
        .collect()
}

/// The text of rendered code (pulldown-cmark, and the docs pages, escape `<>&"`).
fn unescape(code: &str) -> String {
    code.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The documents whose `curl` examples a reader runs against their own
/// instance (the client guide's run in tests/clients.rs): the `sh` blocks
/// of the Markdown files, and the code blocks of the docs pages.
const CURL_DOCUMENTS: [&str; 4] = [
    "README.md",
    "docs/api.md",
    "src/api/assets/docs.html",
    "src/api/assets/docs.zh.html",
];

/// The example tags the documents show, which stand for the served one.
const PLACEHOLDER_TAGS: [&str; 3] = ["\"TAG\"", "\"9f2c…\"", "\"9f2c41d07b3e5a18\""];

/// The commands of `file`, a line each: its `sh` blocks (Markdown), or the
/// text of its `<pre>` blocks (HTML, tags dropped, entities read).
fn command_lines(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo_root().join(file)).unwrap();
    if file.ends_with(".html") {
        return text
            .split("<pre")
            .skip(1)
            .map(|pre| pre.split_once('>').map_or("", |(_, code)| code))
            .map(|code| unescape(&without_tags(code.split("</pre>").next().unwrap_or(""))))
            .flat_map(|code| code.lines().map(str::to_owned).collect::<Vec<_>>())
            .collect();
    }
    crate::deployment::blocks_in(file, &text)
        .into_iter()
        .filter(|block| block.kind == "sh")
        .flat_map(|block| {
            block
                .text
                .lines()
                .filter(|line| !line.trim().is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `html` without its tags.
pub(crate) fn without_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[test]
fn every_example_of_the_readme_the_api_reference_and_the_docs_pages_runs_as_it_says() {
    let curl = crate::util::tool(&["curl"], "--version", "curl");
    // The bundled history, standalone; and a mirror of the public status
    // feed for the examples of /api/status.json (a standalone instance has
    // none). Room for every example (the quota is counted as the examples
    // say, not by how many there are).
    let w = crate::util::World::new();
    w.seed_bundled();
    let now = "2026-11-25T12:00:00.000Z";
    let server =
        crate::util::server::Server::start(&w, &["--now", now, "--rate-limit", "100/3600"], &[]);
    // The hot set is compressed in the background after the first publish
    // (docs/api.md: "until then those bodies are answered as they are").
    // Asked conditionally, which is free, the 304 names the form a request
    // would get: the brotli one's tag once it is made.
    let identity = server.get("/openapi/v1/records");
    let tag = identity.header("etag").unwrap().to_owned();
    crate::util::wait_until(
        std::time::Duration::from_secs(10),
        "the hot set compressed",
        || {
            let reply = crate::util::server::raw_request(
                server.addr,
                "GET",
                "/openapi/v1/records",
                &[("Accept-Encoding", "br"), ("If-None-Match", &tag)],
            );
            reply.status == 304 && reply.header("etag").is_some_and(|t| t.ends_with("-br\""))
        },
    );
    use crate::util::upstream::{Behavior, Upstream};
    let feed = std::fs::read(crate::util::fixture(
        "feed/codexrunway-status-2026-08-01.json",
    ))
    .unwrap();
    let upstream = Upstream::start(Behavior::Serve {
        body: feed,
        etag: Some("\"feed\"".into()),
        last_modified: None,
    });
    let m = crate::util::World::new();
    let status_feed = upstream.url("/api/status.json");
    let then = "2026-08-01T06:00:00.000Z";
    m.run(&["--now", then, "sync", "--upstream", &status_feed, "--once"])
        .success();
    let mirror = crate::util::server::Server::start(&m, &["--now", then], &[]);
    let base = format!("http://{}", server.addr);
    let mut ran = 0;
    // The quota left after the last counted answer.
    let mut left: Option<String> = None;
    for file in CURL_DOCUMENTS {
        // Each document as a reader new to it runs it (no etag.txt yet).
        let scratch = tempfile::tempdir().unwrap();
        for line in command_lines(file) {
            let line = line.trim();
            let (command, comment) = match line.split_once(" # ") {
                Some((command, comment)) => (command.trim(), comment.trim()),
                None => (line, ""),
            };
            let Some(args) = command.strip_prefix("curl ") else {
                continue;
            };
            // The reader's instance is this one; a placeholder ETag is the one served.
            let base = match args.contains("/api/status.json") {
                true => format!("http://{}", mirror.addr),
                false => base.clone(),
            };
            let mut args = args
                .replace("http://127.0.0.1:8080", &base)
                .replace("https://your-instance.example", &base);
            for placeholder in PLACEHOLDER_TAGS {
                if args.contains(placeholder) {
                    let url = args
                        .split_whitespace()
                        .map(|w| w.trim_matches('\''))
                        .find(|w| w.starts_with(&base))
                        .unwrap();
                    let reply = server.get(url.strip_prefix(&base).unwrap());
                    left = reply.header("x-ratelimit-remaining").map(str::to_owned);
                    args = args.replace(placeholder, reply.header("etag").unwrap());
                }
            }
            // A pipe's tail reads the example's output; ours (the status and
            // the quota left) goes to stderr.
            let (args, tail) = match args.split_once(" | ") {
                Some((args, tail)) => (args.to_owned(), format!(" | {tail}")),
                None => (args, String::new()),
            };
            let stream = args.starts_with("-N ");
            let script = format!(
                "{curl} --no-progress-meter --max-time {} {args} -w '%{{stderr}}%{{http_code}} %header{{x-ratelimit-remaining}}\\n'{tail}",
                if stream { 2 } else { 10 }
            );
            let out = std::process::Command::new("bash")
                .args(["-o", "pipefail", "-c", &script])
                .current_dir(scratch.path())
                .output()
                .unwrap();
            let body = String::from_utf8_lossy(&out.stdout).into_owned();
            let said = String::from_utf8_lossy(&out.stderr).into_owned();
            // Ours is the last line (curl's own progress meter is off).
            let ours = said.trim().lines().last().unwrap_or("");
            let (status, remaining) = ours.split_once(' ').unwrap_or((ours, ""));
            let at = format!("{file}: {line}");
            let shown: String = body.chars().take(600).collect();
            ran += 1;
            if stream {
                // Runs until the reader stops it: curl's --max-time (exit 28).
                assert_eq!(out.status.code(), Some(28), "{at}: {said}");
                assert!(body.starts_with("event:ready\ndata:{"), "{at}: {shown}");
                continue;
            }
            assert!(out.status.success(), "{at}: {out:?}");
            let named = comment
                .split(|c: char| !c.is_ascii_digit())
                .find(|w| w.len() == 3);
            let expected = match named {
                Some(status) => status,
                None if args.contains("If-None-Match") => "304",
                None => "200",
            };
            assert_eq!(status, expected, "{at}: {shown}");
            // What the reader is shown (a 304 has no body).
            assert!(
                expected == "304" || !body.is_empty(),
                "{at}: printed nothing"
            );
            if expected == "304" {
                // "not counted", "free of quota": the quota left is as it was.
                assert_eq!(
                    Some(remaining),
                    left.as_deref(),
                    "{at}: the 304 was counted"
                );
            }
            left = Some(remaining.to_owned());
            if comment.starts_with("content-encoding: br (or gzip") {
                let headers = body.to_ascii_lowercase();
                assert!(
                    headers.contains("content-encoding: br")
                        || headers.contains("content-encoding: gzip"),
                    "{at}: {shown}"
                );
            }
        }
    }
    assert!(
        ran >= 20,
        "only {ran} curl examples found in {CURL_DOCUMENTS:?}"
    );

    // The badge's example has the served badge's fields and label.
    let api = std::fs::read_to_string(repo_root().join("docs/api.md")).unwrap();
    let example: serde_json::Value = api
        .split("```json\n")
        .skip(1)
        .filter_map(|b| serde_json::from_str(b.split("\n```").next()?).ok())
        .find(|v: &serde_json::Value| v.get("schemaVersion").is_some())
        .expect("docs/api.md shows the badge");
    let served = server.get("/openapi/v1/badge.json").json();
    let keys =
        |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(keys(&example), keys(&served), "{example} / {served}");
    assert_eq!(example["label"], served["label"]);

    // The MCP client's config names a server that answers an MCP handshake.
    let config: serde_json::Value = api
        .split("```json\n")
        .skip(1)
        .filter_map(|b| serde_json::from_str(b.split("\n```").next()?).ok())
        .find(|v: &serde_json::Value| v.get("mcpServers").is_some())
        .expect("docs/api.md shows an MCP client's config");
    let url = config["mcpServers"]["reset-records"]["url"]
        .as_str()
        .unwrap();
    let path = url
        .strip_prefix("http://127.0.0.1:8080")
        .unwrap_or_else(|| panic!("the MCP config's url {url} is not the instance's"));
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "docs", "version": "1"}}})
    .to_string();
    let length = init.len().to_string();
    let reply = crate::util::server::raw_request_with_body(
        server.addr,
        "POST",
        path,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Content-Length", &length),
        ],
        init.as_bytes(),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.text().contains("\"serverInfo\""), "{}", reply.text());
}
