//! The status page, the record pages and the badge over HTTP against the
//! real binary (docs/spec/decisions.md, "Beyond the spec"): the verdict's rules for
//! the UTC day (yes, no, and unknown for each reason), the badge in the
//! shields.io endpoint format with 304 and without counting, escaping of
//! hostile record texts, language negotiation, record permalinks and
//! `--no-site`. The page in a real browser is `site_page.rs`.

use serde_json::{json, Value};

use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::World;

/// The instant every server here is frozen at.
const NOW: &str = "2026-11-24T10:00:00.000Z";
/// A successful check two hours before [`NOW`].
const CHECKED: &str = "2026-11-24T08:00:00.000Z";

fn source(id: &str) -> Value {
    json!({"origin": "x", "postId": id, "handle": "h", "url": format!("https://x.com/h/status/{id}")})
}

pub fn completion(id: &str, at: &str, text: &str) -> Value {
    json!({
        "id": id, "kind": "reset_completed", "resetType": "global",
        "announcedAt": at, "effectiveAt": at, "text": text,
        "confidence": 0.9, "scope": {"plans": ["all"], "windows": ["five_hour"]}, "source": source(id),
        "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null, "scheduleState": null,
        "completedAt": at, "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

pub fn pending(id: &str, start: &str, end: &str) -> Value {
    json!({
        "id": id, "kind": "reset_scheduled", "resetType": "global",
        "announcedAt": "2026-11-20T09:00:00.000Z", "effectiveAt": start, "text": format!("schedule {id}"),
        "confidence": 0.9, "scope": {"plans": ["all"], "windows": ["weekly"]}, "source": source(id),
        "schedulePrecision": "window", "scheduleBasis": "explicit",
        "scheduleWindow": {"startAt": start, "endAt": end},
        "scheduleState": "pending", "completedAt": null, "completionRecordId": null,
        "fulfillmentOrigin": null, "relatedRecordIds": []
    })
}

/// `record` with its scope's plans and windows replaced.
pub fn scoped(mut record: Value, plans: &[&str], windows: &[&str]) -> Value {
    record["scope"] = json!({"plans": plans, "windows": windows});
    record
}

fn elapsed(id: &str, start: &str, end: &str) -> Value {
    let mut record = pending(id, start, end);
    record["scheduleState"] = json!("elapsed");
    record
}

/// A server frozen at [`NOW`] over `records` checked at `checked`.
fn serve(records: &[Value], checked: Option<&str>, args: &[&str]) -> (World, Server) {
    let w = World::new();
    w.publish_checked(records, "2026-11-24T09:00:00.000Z", checked);
    let mut all = vec!["--now", NOW];
    all.extend_from_slice(args);
    let s = Server::start(&w, &all, &[]);
    (w, s)
}

/// The `data-verdict` of the page's verdict and its detail line's text.
fn verdict(page: &str) -> (String, String) {
    let attr = page
        .split("data-verdict=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no data-verdict in the page:\n{page}"))
        .to_owned();
    let detail = page
        .split("id=\"verdict-detail\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("no verdict detail in the page:\n{page}"))
        .to_owned();
    (attr, detail)
}

/// The verdict's word, as the page shows it.
fn verdict_word(page: &str) -> String {
    page.split("data-verdict=\"")
        .nth(1)
        .and_then(|rest| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split('<').next())
        .unwrap_or_else(|| panic!("no verdict in the page:\n{page}"))
        .to_owned()
}

fn badge(s: &Server) -> Value {
    let reply = s.get("/openapi/v1/badge.json");
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

#[test]
fn a_completion_during_the_utc_day_is_a_yes_with_what_and_when() {
    let (_w, s) = serve(
        &[
            completion("101", "2026-11-24T03:15:00.000Z", "reset done"),
            completion("100", "2026-11-23T23:30:00.000Z", "yesterday"),
        ],
        Some(CHECKED),
        &[],
    );
    let page = s.get("/en/");
    assert_eq!(page.status, 200);
    let (name, detail) = verdict(&page.text());
    assert_eq!(name, "yes");
    assert_eq!(
        detail,
        "A reset was confirmed: <span class=\"nowrap\">2026-11-24 03:15 UTC</span> · Global reset · all plans · 5-hour limit <a href=\"/en/records/101\">details</a>"
    );
    assert_eq!(
        badge(&s),
        json!({"schemaVersion": 1, "label": "usage reset", "message": "reset today", "color": "brightgreen"})
    );
}

#[test]
fn an_elapsed_schedule_of_the_day_is_a_yes_that_says_it_was_not_confirmed() {
    let (_w, s) = serve(
        &[elapsed(
            "200",
            "2026-11-24T01:00:00.000Z",
            "2026-11-24T02:00:00.000Z",
        )],
        Some(CHECKED),
        &[],
    );
    let page = s.get("/en/").text();
    let (name, detail) = verdict(&page);
    assert_eq!(name, "yes");
    // Past the match tolerance (180 minutes after the window): "not
    // confirmed", the words every message uses at that instant, on the
    // page, in the badge.
    assert_eq!(verdict_word(&page), "Not confirmed");
    assert!(
        detail.starts_with("A scheduled reset was not confirmed: <span class=\"nowrap\">2026-11-24 01:00 UTC</span>"),
        "{detail}"
    );
    assert_eq!(verdict_word(&s.get("/zh/").text()), "未确认");
    assert_eq!(badge(&s)["message"], "reset due today, not confirmed");
    // The history and the record page say the same.
    assert_eq!(states(&s, "200"), ["not confirmed", "未确认"]);
}

/// The state words of the schedule `id` in the history and on its record
/// page, in English and in Chinese (each the same in both places).
fn states(s: &Server, id: &str) -> [String; 2] {
    ["en", "zh"].map(|lang| {
        let page = s.get(&format!("/{lang}/")).text();
        let item = page
            .split(&format!("<li data-id=\"{id}\">"))
            .nth(1)
            .unwrap_or_else(|| panic!("no history item {id}:\n{page}"));
        let tag = item
            .split("<span class=\"tag\">")
            .nth(2)
            .and_then(|rest| rest.split('<').next())
            .unwrap_or_else(|| panic!("no state tag:\n{item}"));
        let record = s.get(&format!("/{lang}/records/{id}")).text();
        let label = if lang == "en" { "State" } else { "状态" };
        let state = record
            .split(&format!("<dt>{label}</dt><dd>"))
            .nth(1)
            .and_then(|rest| rest.split('<').next())
            .unwrap_or_else(|| panic!("no state on the record page:\n{record}"));
        assert_eq!(tag, state, "/{lang}/: the history and the record page");
        tag.to_owned()
    })
}

#[test]
fn a_window_of_the_day_that_passed_inside_the_tolerance_is_due_not_unconfirmed() {
    // NOW is 10:00; the window ended at 09:00, so a completion until 12:00
    // still fulfils it: due, not confirmed yet; never "not confirmed".
    let (_w, s) = serve(
        &[elapsed(
            "200",
            "2026-11-24T08:00:00.000Z",
            "2026-11-24T09:00:00.000Z",
        )],
        Some(CHECKED),
        &[],
    );
    let page = s.get("/en/").text();
    let (name, detail) = verdict(&page);
    assert_eq!(name, "yes");
    assert_eq!(verdict_word(&page), "Due");
    assert!(
        detail.starts_with("A scheduled reset is due, not confirmed yet: <span class=\"nowrap\">2026-11-24 08:00 UTC</span>"),
        "{detail}"
    );
    assert_eq!(verdict_word(&s.get("/zh/").text()), "应已重置");
    assert_eq!(badge(&s)["message"], "reset due today, not confirmed yet");
    // The history and the record page say the same: not "not confirmed"
    // (the API's `elapsed`) before the messages say it.
    assert_eq!(
        states(&s, "200"),
        ["due, not confirmed yet", "已到时间，尚未确认"]
    );
    // A window open now is due too; one to come is scheduled.
    let (_w, s) = serve(
        &[
            pending(
                "201",
                "2026-11-24T09:00:00.000Z",
                "2026-11-24T11:00:00.000Z",
            ),
            pending(
                "202",
                "2026-11-24T12:00:00.000Z",
                "2026-11-24T12:00:00.000Z",
            ),
        ],
        Some(CHECKED),
        &[],
    );
    assert_eq!(
        states(&s, "201"),
        ["due, not confirmed yet", "已到时间，尚未确认"]
    );
    assert_eq!(states(&s, "202"), ["scheduled", "已计划"]);
}

/// The page's line about a schedule due after the day's confirmed reset.
fn verdict_later(page: &str) -> String {
    page.split("<p id=\"verdict-later\"")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("no verdict-later in the page:\n{page}"))
        .to_owned()
}

/// A day of three confirmed resets (a completion, a fulfilled schedule,
/// a completion) and a schedule of 09:30 that nothing confirms.
pub fn three_resets_and_a_later_schedule() -> Vec<Value> {
    let mut fulfilled = pending(
        "301",
        "2026-11-24T03:00:00.000Z",
        "2026-11-24T03:00:00.000Z",
    );
    fulfilled["scheduleState"] = json!("fulfilled");
    fulfilled["completedAt"] = json!("2026-11-24T03:01:00.000Z");
    fulfilled["completionRecordId"] = json!("302");
    fulfilled["fulfillmentOrigin"] = json!("auto");
    let mut matched = completion("302", "2026-11-24T03:01:00.000Z", "second");
    matched["relatedRecordIds"] = json!(["301"]);
    vec![
        completion("300", "2026-11-24T01:00:00.000Z", "first"),
        fulfilled,
        matched,
        completion("303", "2026-11-24T05:00:00.000Z", "third"),
        elapsed(
            "304",
            "2026-11-24T09:30:00.000Z",
            "2026-11-24T09:30:00.000Z",
        ),
    ]
}

#[test]
fn a_confirmed_reset_is_yes_whatever_falls_due_later_that_day() {
    // 10:00: the 09:30 schedule is due (a completion until 12:30 still
    // confirms it); 12:30: not confirmed. Either way the day had a reset:
    // Yes, and the later schedule is told beside it.
    for (now, en, zh) in [
        (
            NOW,
            "A later scheduled reset is due, not confirmed yet",
            "随后的一次计划重置已到时间，尚未确认",
        ),
        (
            "2026-11-24T12:30:00.000Z",
            "A later scheduled reset was not confirmed",
            "随后的一次计划重置未得到确认",
        ),
    ] {
        let w = World::new();
        w.publish_checked(
            &three_resets_and_a_later_schedule(),
            "2026-11-24T09:00:00.000Z",
            Some(CHECKED),
        );
        let s = Server::start(&w, &["--now", now], &[]);
        let page = s.get("/en/").text();
        assert_eq!(
            (verdict(&page), verdict_word(&page).as_str()),
            (
                (
                    "yes".to_owned(),
                    "A reset was confirmed: <span class=\"nowrap\">2026-11-24 05:00 UTC</span> · Global reset · all plans · 5-hour limit <a href=\"/en/records/303\">details</a>".to_owned()
                ),
                "Yes"
            ),
            "at {now}"
        );
        assert_eq!(
            verdict_later(&page),
            format!(">{en}: <span class=\"nowrap\">2026-11-24 09:30 UTC</span> · Global reset · all plans · weekly limit <a href=\"/en/records/304\">details</a>"),
            "at {now}"
        );
        let zh_page = s.get("/zh/").text();
        assert_eq!(verdict_word(&zh_page), "是", "at {now}");
        assert!(
            verdict_later(&zh_page).starts_with(&format!(
                ">{zh}：<span class=\"nowrap\">2026-11-24 09:30 UTC</span>"
            )),
            "at {now}: {}",
            verdict_later(&zh_page)
        );
        assert_eq!(
            badge(&s),
            json!({"schemaVersion": 1, "label": "usage reset", "message": "reset today", "color": "brightgreen"}),
            "at {now}"
        );
    }
    // Nothing due after the day's reset: the line is there, empty and hidden.
    let (_w, s) = serve(
        &[completion("101", "2026-11-24T03:15:00.000Z", "reset done")],
        Some(CHECKED),
        &[],
    );
    assert_eq!(verdict_later(&s.get("/en/").text()), " hidden>");
}

#[test]
fn the_badge_says_not_yet_today_and_names_only_a_time_to_come() {
    // No reset yet today, one announced for 15:00 today: not "no reset
    // today · next <today>", and the time without a date.
    let later_today = pending(
        "310",
        "2026-11-24T15:00:00.000Z",
        "2026-11-24T15:00:00.000Z",
    );
    let (_w, s) = serve(
        &[
            completion("100", "2026-11-23T23:30:00.000Z", "yesterday"),
            later_today.clone(),
        ],
        Some(CHECKED),
        &[],
    );
    assert_eq!(
        badge(&s),
        json!({"schemaVersion": 1, "label": "usage reset", "message": "not yet today · next 15:00 UTC", "color": "blue"})
    );
    // After a reset today, the next one today is also a time without a date.
    let (_w, s) = serve(
        &[
            completion("101", "2026-11-24T03:15:00.000Z", "done"),
            later_today,
        ],
        Some(CHECKED),
        &[],
    );
    assert_eq!(badge(&s)["message"], "reset today · next 15:00 UTC");
    // A window open now is the verdict's, not "next"; the next is tomorrow's.
    let (_w, s) = serve(
        &[
            pending(
                "320",
                "2026-11-24T09:00:00.000Z",
                "2026-11-24T11:00:00.000Z",
            ),
            pending(
                "321",
                "2026-11-25T03:00:00.000Z",
                "2026-11-25T03:00:00.000Z",
            ),
        ],
        Some(CHECKED),
        &[],
    );
    assert_eq!(
        badge(&s),
        json!({"schemaVersion": 1, "label": "usage reset", "message": "reset due today, not confirmed yet · next 2026-11-25 03:00 UTC", "color": "green"})
    );
}

#[test]
fn no_reset_today_is_a_no_with_the_next_reset_and_a_countdown() {
    let (_w, s) = serve(
        &[
            completion("100", "2026-11-23T23:30:00.000Z", "yesterday"),
            pending(
                "300",
                "2026-11-26T09:00:00.000Z",
                "2026-11-26T11:00:00.000Z",
            ),
            pending(
                "301",
                "2026-12-01T09:00:00.000Z",
                "2026-12-01T09:00:00.000Z",
            ),
        ],
        Some(CHECKED),
        &[],
    );
    let page = s.get("/en/").text();
    let (name, detail) = verdict(&page);
    assert_eq!(name, "no");
    assert_eq!(detail, "No reset has been recorded for this day.");
    // The soonest pending schedule, 1 d 23 h from NOW.
    assert!(
        page.contains(r#"<span class="countdown" id="countdown" data-target="1795683600000">1 d 23 h 0 m 0 s</span>"#),
        "{page}"
    );
    assert!(page.contains(r#"<time id="next-start" datetime="2026-11-26T09:00:00.000Z" data-local>2026-11-26 09:00 UTC</time>"#));
    assert!(page.contains("a time window") && page.contains("stated by the source"));
    assert_eq!(
        badge(&s),
        json!({"schemaVersion": 1, "label": "usage reset", "message": "no reset today · next 2026-11-26 09:00 UTC", "color": "blue"})
    );
}

#[test]
fn unknown_when_never_checked_or_the_check_is_over_30_hours_old() {
    let records = [completion("101", "2026-11-24T03:15:00.000Z", "reset done")];
    for (checked, why) in [
        (None, "The data has never been checked successfully."),
        (
            Some("2026-11-23T03:59:00.000Z"),
            "The last successful check is more than 30 hours old, so the data may be out of date.",
        ),
    ] {
        let (_w, s) = serve(&records, checked, &[]);
        let page = s.get("/en/").text();
        let (name, detail) = verdict(&page);
        assert_eq!(name, "unknown", "checked {checked:?}");
        assert_eq!(detail, why);
        // What to run is said to the operator, apart from the verdict.
        assert!(
            page.contains(r#"<p class="operator-note" id="operator-note" role="note"><strong>For the operator of this site:</strong> after checking the source, run <code>resetctl mark-checked</code> on the server, or let a monitor run it: the page trusts a check for 30 hours.</p>"#),
            "{page}"
        );
        assert_eq!(
            badge(&s),
            json!({"schemaVersion": 1, "label": "usage reset", "message": "unknown", "color": "lightgrey"})
        );
    }
    // 29 hours is still trusted; the note is there for the page's script,
    // hidden.
    let (_w, s) = serve(&records, Some("2026-11-23T05:00:00.000Z"), &[]);
    let page = s.get("/en/").text();
    assert_eq!(verdict(&page).0, "yes");
    assert!(
        page.contains(r#"id="operator-note" role="note" hidden>"#),
        "{page}"
    );
}

#[test]
fn unknown_when_the_upstream_is_stale_even_with_a_fresh_check() {
    let doc = json!({
        "generatedAt": "2026-11-24T09:00:00.000Z",
        "lastSuccessfulCheckAt": "2026-11-24T09:00:00.000Z",
        "records": [completion("101", "2026-11-24T03:15:00.000Z", "reset done")],
    })
    .to_string();
    let up = Upstream::start(Behavior::Serve {
        body: doc.into_bytes(),
        etag: Some("\"v1\"".into()),
        last_modified: None,
    });
    let w = World::new();
    let sync = |now: &str| {
        w.run(&[
            "--now",
            now,
            "sync",
            "--upstream",
            &up.url("/r.json"),
            "--source-id",
            "peer",
            "--source-name",
            "Peer <b>instance</b>",
            "--page-url",
            "https://peer.example/",
            "--once",
        ])
    };
    sync("2026-11-24T09:30:00.000Z").success();
    let s = Server::start(&w, &["--now", NOW], &[]);
    let page = s.get("/en/").text();
    assert_eq!(verdict(&page).0, "yes", "a fresh ok upstream is trusted");
    assert!(page.contains(r#"<a href="https://peer.example/" rel="noopener noreferrer">Peer &lt;b&gt;instance&lt;/b&gt;</a>"#), "{page}");
    drop(s);

    up.set(Behavior::Status(503));
    sync("2026-11-24T09:45:00.000Z").code(69);
    let s = Server::start(&w, &["--now", NOW], &[]);
    let page = s.get("/en/").text();
    let (name, detail) = verdict(&page);
    assert_eq!(name, "unknown");
    assert_eq!(
        detail,
        "The upstream source reports its data as out of date."
    );
    // A mirror's operator mends its sync, not its check: no note.
    assert!(!page.contains("id=\"operator-note\""), "{page}");
    assert!(
        page.contains("<dt>Sync status</dt><dd>out of date</dd>"),
        "{page}"
    );
    let zh = s.get("/zh/").text();
    assert_eq!(verdict(&zh).1, "上游数据源报告的状态为“已过时”。");
    assert!(zh.contains("<dt>同步状态</dt><dd>已过时</dd>"), "{zh}");
    assert_eq!(badge(&s)["message"], "unknown");
}

#[test]
fn hostile_record_texts_and_urls_are_escaped_text() {
    let mut evil_link = completion("102", "2026-11-24T02:00:00.000Z", "plain");
    evil_link["source"]["url"] = json!("javascript:alert(3)");
    let (_w, s) = serve(
        &[
            completion(
                "100",
                "2026-11-24T03:15:00.000Z",
                "<script>alert(1)</script>",
            ),
            completion(
                "101",
                "2026-11-24T03:00:00.000Z",
                "\"><img src=x onerror=alert(2)>",
            ),
            evil_link,
        ],
        Some(CHECKED),
        &[],
    );
    for path in ["/en/", "/zh/", "/records/100", "/records/101"] {
        let page = s.get(path).text();
        assert!(!page.contains("<script>alert"), "{path}: {page}");
        assert!(!page.contains("<img"), "{path}: {page}");
        assert!(!page.contains("javascript:"), "{path}: {page}");
    }
    let index = s.get("/en/").text();
    assert!(index.contains("<blockquote>&lt;script&gt;alert(1)&lt;/script&gt;</blockquote>"));
    assert!(index.contains("<blockquote>&quot;&gt;&lt;img src=x onerror=alert(2)&gt;</blockquote>"));
    // The page's script data cannot close its element either.
    assert!(!index.contains("alert(1)</script>"));
    let csp = s
        .get("/en/")
        .header("content-security-policy")
        .unwrap()
        .to_owned();
    assert!(
        csp.starts_with("default-src 'none'; script-src 'sha256-"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
}

#[test]
fn the_language_follows_accept_language_and_the_explicit_paths() {
    let (_w, s) = serve(
        &[completion("101", "2026-11-24T03:15:00.000Z", "done")],
        Some(CHECKED),
        &[],
    );
    let zh = s.request(
        "GET",
        "/",
        &[("accept-language", "zh-CN,zh;q=0.9,en;q=0.5")],
    );
    assert_eq!(zh.status, 200);
    assert_eq!(zh.header("content-language"), Some("zh-Hans"));
    assert_eq!(zh.header("vary"), Some("Accept-Language, Accept-Encoding"));
    assert!(zh.text().contains(r#"<html lang="zh-Hans">"#));
    assert!(zh.text().contains(r#"data-verdict="yes">是</p>"#));
    let en = s.request("GET", "/", &[("accept-language", "fr, en;q=0.3")]);
    assert!(en.text().contains(r#"<html lang="en">"#));
    assert!(en.text().contains(r#"data-verdict="yes">Yes</p>"#));
    // Explicit paths ignore Accept-Language and do not vary on it.
    let explicit = s.request("GET", "/en/", &[("accept-language", "zh")]);
    assert!(explicit.text().contains(r#"<html lang="en">"#));
    assert_eq!(explicit.header("vary"), Some("Accept-Encoding"));
    // Each links to the other.
    assert!(explicit
        .text()
        .contains(r#"<a href="/zh/" hreflang="zh-Hans" lang="zh-Hans">中文</a>"#));
    assert!(s
        .get("/zh/")
        .text()
        .contains(r#"<a href="/en/" hreflang="en" lang="en">English</a>"#));
    let bare = s.get("/zh");
    assert_eq!((bare.status, bare.header("location")), (308, Some("/zh/")));
}

#[test]
fn record_pages_live_at_the_encoded_id_and_link_their_records() {
    let mut fulfilled = pending(
        "300",
        "2026-11-24T03:00:00.000Z",
        "2026-11-24T03:00:00.000Z",
    );
    fulfilled["scheduleState"] = json!("fulfilled");
    fulfilled["completedAt"] = json!("2026-11-24T03:15:00.000Z");
    fulfilled["completionRecordId"] = json!("manual:m1");
    fulfilled["fulfillmentOrigin"] = json!("manual");
    let mut manual = completion("manual:m1", "2026-11-24T03:15:00.000Z", "by hand");
    manual["source"] = json!({"origin": "operator", "postId": null, "handle": null, "url": null});
    manual["relatedRecordIds"] = json!(["300"]);
    manual["fulfillmentOrigin"] = json!("manual");
    manual["announcedAt"] = Value::Null;
    manual["confidence"] = Value::Null;
    manual["text"] = Value::Null;
    manual["scope"] = Value::Null;
    let (_w, s) = serve(&[fulfilled, manual], Some(CHECKED), &[]);
    let index = s.get("/en/").text();
    let link = "/en/records/manual%3Am1";
    assert!(index.contains(&format!("href=\"{link}\"")), "{index}");
    let page = s.get(link);
    assert_eq!(page.status, 200);
    let text = page.text();
    assert!(text.contains("<code>manual:m1</code>"), "{text}");
    assert!(
        text.contains(r#"<a href="/en/records/300"><code>300</code></a>"#),
        "{text}"
    );
    // The fulfilled schedule (history under schedules) links back.
    let schedule = s.get("/zh/records/300").text();
    assert!(schedule.contains(r#"<html lang="zh-Hans">"#));
    assert!(schedule.contains(r#"href="/zh/records/manual%3Am1""#));
    let missing = s.get("/records/nope");
    assert_eq!(missing.status, 404);
    assert!(missing.text().contains("<h1>No such record</h1>"));
    assert!(missing.text().contains("<code>nope</code>"));
    // The history switch.
    let schedules = s.get("/en/?kind=reset_scheduled").text();
    assert!(schedules.contains(r#"data-id="300""#) && !schedules.contains(r#"data-id="manual:"#));
    // A query the page does not take: a page that says what it takes
    // (issue 39, item 8, where the rest of that answer is tested).
    let bad = s.get("/en/?kind=everything");
    assert_eq!(bad.status, 400);
    assert!(bad
        .text()
        .contains("The status page takes one query parameter, kind"));
}

#[test]
fn pages_and_badge_are_not_counted_and_answer_304_on_a_matching_tag() {
    let records: Vec<Value> = (0..60)
        .map(|i| {
            completion(
                &format!("{}", 1000 + i),
                &format!("2026-11-{:02}T{:02}:00:00.000Z", 1 + i / 3, 8 + i % 3),
                &"A long record text that people read. ".repeat(3),
            )
        })
        .collect();
    let (_w, s) = serve(&records, Some(CHECKED), &[]);
    let page = s.get("/en/");
    assert!(
        page.body.len() < 60_000,
        "the page with 50 records is {} bytes",
        page.body.len()
    );
    assert_eq!(page.text().matches("<li data-id=").count(), 50);
    let tag = page.header("etag").unwrap().to_owned();
    let again = s.request("GET", "/en/", &[("if-none-match", &tag)]);
    assert_eq!((again.status, again.body.len()), (304, 0));
    let badge = s.get("/openapi/v1/badge.json");
    assert_eq!(badge.header("cache-control"), Some("public, max-age=300"));
    let badge_tag = badge.header("etag").unwrap().to_owned();
    let not_modified = s.request(
        "GET",
        "/openapi/v1/badge.json",
        &[("if-none-match", &badge_tag)],
    );
    assert_eq!(not_modified.status, 304);
    for _ in 0..25 {
        assert_eq!(s.get("/").status, 200);
        assert_eq!(s.get("/openapi/v1/badge.json").status, 200);
    }
    let counted = s.get("/openapi/v1/records/latest");
    assert_eq!(counted.status, 200);
    assert_eq!(counted.header("x-ratelimit-remaining"), Some("19"));
    // Other methods: 405 with Allow.
    let post = s.request("POST", "/en/", &[("content-length", "0")]);
    assert_eq!(
        (post.status, post.header("allow")),
        (405, Some("GET, HEAD"))
    );
}

#[test]
fn no_site_turns_the_pages_off_and_keeps_the_api() {
    let (_w, s) = serve(
        &[completion("101", "2026-11-24T03:15:00.000Z", "done")],
        Some(CHECKED),
        &["--no-site"],
    );
    for path in ["/", "/en/", "/zh/", "/records/101", "/en/records/101"] {
        let reply = s.get(path);
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(reply.json()["error"], "not_found", "{path}");
    }
    assert_eq!(s.get("/openapi/v1/badge.json").status, 200);
    assert_eq!(s.get("/openapi/v1/records/latest").status, 200);
    // And so does the environment.
    let w = World::new();
    w.publish_checked(
        &[completion("101", "2026-11-24T03:15:00.000Z", "done")],
        NOW,
        Some(CHECKED),
    );
    let s = Server::start(&w, &[], &[("RESETCTL_NO_SITE", "true")]);
    assert_eq!(s.get("/").status, 404);
}
