//! The status page in a real browser: Debian's headless chromium, driven
//! by playwright-core (tests/browser/site_page.mjs), against the real
//! server frozen at [`NOW`], with the browser's clock frozen at the same
//! instant. At 1280 px (light) and 390 px (dark), in English and Chinese:
//! the verdict, the next reset and the history show, nothing overflows
//! (the heatmap scrolls inside its own area, opened on the newest week),
//! no date or time wraps inside itself, the label column of a list of
//! facts takes at most 40 % of it, the heatmap names its months and
//! weekdays and has a legend, its cell titles count in the language's
//! plural forms, no raw identifier (`five_hour`, `weekly`, `unknown`,
//! `business`…) reaches the visible text, the countdown moves, axe-core
//! finds no serious or critical violation, the page loads nothing but
//! itself and logs no error; a history link opens its record page, laid
//! out under the same rules. The verdict follows the visitor's local day:
//! a completion at 23:30 UTC yesterday is "yes" in Tokyo (08:30 today
//! there) and "no" in New York and UTC. 31 hours on, the page's own script
//! turns the verdict to Unknown and shows the note to the operator. The
//! language switch works, and hostile record texts open no dialog. A font
//! for Chinese must be installed (`fc-list`), so 中文 is not drawn as boxes.
//!
//! The screenshots land in the test's target folder; the ones in
//! docs/screenshots/ are made from the bundled history by `make
//! screenshots` (tests/browser/screenshots.sh).

use std::path::Path;

use serde_json::Value;

use crate::docs_page::{browser_dir, run_browser};
use crate::site::{completion, pending, scoped, three_resets_and_a_later_schedule};
use crate::util::server::Server;
use crate::util::World;

const NOW: &str = "2026-11-24T10:00:00.000Z";

/// Identifiers of the records that must reach a visitor only in words
/// (compared as whole words, case-sensitively): English has words of its
/// own that look like some of them ("weekly limit", "all plans").
const RAW_IDS_EN: &[&str] = &[
    "five_hour",
    "business",
    "plus",
    "pro",
    "team",
    "ok",
    "stale",
];
/// In Chinese no English word of the records or the page may show.
const RAW_IDS_ZH: &[&str] = &[
    "five_hour",
    "weekly",
    "unknown",
    "business",
    "plus",
    "pro",
    "team",
    "all",
    "ok",
    "stale",
    "pending",
    "elapsed",
    "fulfilled",
    "completion",
    "completions",
    "plans",
];

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array, got {v}"))
        .iter()
        .map(|s| s.as_str().map_or_else(|| s.to_string(), str::to_owned))
        .collect()
}

/// `1 d 22 h 59 m 57 s` in seconds.
fn seconds(text: &Value) -> Option<i64> {
    let words: Vec<&str> = text.as_str()?.split(' ').collect();
    words.chunks(2).try_fold(0, |sum, pair| {
        let n: i64 = pair.first()?.parse().ok()?;
        let unit = match *pair.get(1)? {
            "d" => 86_400,
            "h" => 3_600,
            "m" => 60,
            "s" => 1,
            _ => return None,
        };
        Some(sum + n * unit)
    })
}

/// The serious and critical axe-core violations of a report's list.
fn serious(violations: &Value) -> Vec<Value> {
    violations
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
        .cloned()
        .collect()
}

/// Asserts that fontconfig knows a font for Simplified Chinese, without
/// which chromium draws the Chinese pages (and their screenshots) as boxes.
fn assert_a_cjk_font() {
    let out = std::process::Command::new("fc-list")
        .args([":lang=zh-cn", "family"])
        .output()
        .expect("fc-list (fontconfig, installed with chromium): run `make test-deps`");
    assert!(
        out.status.success() && !out.stdout.trim_ascii().is_empty(),
        "no font for Chinese is installed, so chromium draws 中文 as boxes: run `make test-deps` (apt-get install fonts-noto-cjk)"
    );
}

#[test]
fn the_status_page_works_in_chromium_in_two_widths_zones_and_languages() {
    let browser_dir = browser_dir();
    assert_a_cjk_font();
    let w = World::new();
    let mut records = vec![
        completion(
            "100",
            "2026-11-23T23:30:00.000Z",
            "Limits were reset for everyone.",
        ),
        pending(
            "300",
            "2026-11-26T09:00:00.000Z",
            "2026-11-26T11:00:00.000Z",
        ),
        completion(
            "666",
            "2026-11-20T10:00:00.000Z",
            "<script>alert(1)</script>",
        ),
        completion(
            "667",
            "2026-11-19T10:00:00.000Z",
            "\"><img src=x onerror=alert(1)>",
        ),
        // Raw ids that must reach no visitor: plans, windows, `unknown`.
        scoped(
            completion("668", "2026-11-19T12:00:00.000Z", "Paid plans."),
            &["business", "plus", "pro", "team"],
            &["five_hour", "weekly"],
        ),
        scoped(
            completion("669", "2026-11-18T12:00:00.000Z", "Who knows."),
            &["unknown"],
            &["unknown"],
        ),
    ];
    for day in 1..=12 {
        records.push(completion(
            &format!("{}", 2000 + day),
            &format!("2026-{:02}-{:02}T12:00:00.000Z", 1 + day % 11, 3 + day),
            "An earlier reset.",
        ));
    }
    w.publish_checked(
        &records,
        "2026-11-24T09:00:00.000Z",
        Some("2026-11-24T08:00:00.000Z"),
    );
    let s = Server::start(
        &w,
        &["--now", NOW],
        &[("RESETCTL_SITE_NAME", "Reset watch")],
    );
    let origin = format!("http://{}", s.addr);
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site_page");
    std::fs::create_dir_all(&out_dir).unwrap();
    let scratch = w.path("browser");
    std::fs::create_dir_all(&scratch).unwrap();

    let report = run_browser(
        "site_page.mjs",
        &origin,
        &out_dir,
        &browser_dir,
        &scratch,
        &[NOW],
    );
    eprintln!(
        "chromium {} through playwright-core {}",
        report["browser"], report["playwrightCore"]
    );
    let mut failed = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failed.push(what);
        }
    };
    for vp in report["viewports"].as_array().expect("viewports") {
        let width = vp["width"].as_u64().unwrap();
        let lang = vp["langPath"].as_str().unwrap().to_owned();
        let en = lang == "en";
        let at = |what: &str| format!("{width} px /{lang}/: {what}");
        eprintln!("screenshot: {}", vp["screenshot"]);
        check(vp["status"] == 200, at(&format!("status {}", vp["status"])));
        check(
            vp["innerWidth"] == width,
            at(&format!("viewport {}", vp["innerWidth"])),
        );
        let (no, question, next, title) = if en {
            (
                "No",
                "Reset today (your time)?",
                "Nov 26, 2026, 9:00 AM",
                "Did the usage limits reset? · Reset watch",
            )
        } else {
            (
                "否",
                "今天（你的时区）重置了吗？",
                "2026年11月26日 09:00",
                "用量限制重置了吗？ · Reset watch",
            )
        };
        check(
            vp["title"] == title && vp["siteName"] == "Reset watch",
            at(&format!(
                "the site name in the title and header: got {} and {}",
                vp["title"], vp["siteName"]
            )),
        );
        check(
            vp["verdict"] == "no" && vp["verdictText"] == no && vp["verdictVisible"] == true,
            at(&format!(
                "verdict in UTC: expected a visible No, got {} {} {}",
                vp["verdict"], vp["verdictText"], vp["verdictVisible"]
            )),
        );
        check(
            vp["question"] == question,
            at(&format!(
                "the script relabels the question: got {}",
                vp["question"]
            )),
        );
        check(
            vp["nextShown"] == true && vp["nextLocal"] == next,
            at(&format!(
                "next reset in local time: got {} {}",
                vp["nextShown"], vp["nextLocal"]
            )),
        );
        check(
            vp["historyItems"] == 18,
            at(&format!(
                "history items: expected 18, got {}",
                vp["historyItems"]
            )),
        );
        check(
            vp["scrollWidth"].as_u64().unwrap() <= width && strings(&vp["overflowing"]).is_empty(),
            at(&format!(
                "horizontal overflow: scrollWidth {}, elements {}",
                vp["scrollWidth"], vp["overflowing"]
            )),
        );
        for (what, layout) in [("status page", vp), ("record page", &vp["recordLayout"])] {
            let wrapped = strings(&layout["wrapped"]);
            check(
                wrapped.is_empty(),
                at(&format!(
                    "{what}: dates and times broken over lines: {wrapped:?}"
                )),
            );
            let shares: Vec<f64> = layout["labelShares"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            check(
                !shares.is_empty() && shares.iter().all(|s| *s <= 0.405),
                at(&format!(
                    "{what}: the label column of each list of facts takes at most 40 %: got {shares:?}"
                )),
            );
            check(
                strings(&layout["overflowing"]).is_empty(),
                at(&format!(
                    "{what}: elements past the edge: {}",
                    layout["overflowing"]
                )),
            );
            let text = layout["text"].as_str().unwrap();
            let raw: Vec<&str> = (if en { RAW_IDS_EN } else { RAW_IDS_ZH })
                .iter()
                .copied()
                .filter(|id| {
                    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .any(|word| word == *id)
                })
                .collect();
            check(
                raw.is_empty(),
                at(&format!(
                    "{what}: raw identifiers in the visible text: {raw:?}"
                )),
            );
        }
        let months = strings(&vp["months"]);
        let weekdays = strings(&vp["weekdays"]);
        let (dec, nov, days, legend) = if en {
            ("Dec", "Nov", ["Mon", "Wed", "Fri"], "Less  More")
        } else {
            ("12月", "11月", ["周一", "周三", "周五"], "少  多")
        };
        check(
            months.len() == 12 && months[0] == dec && months[11] == nov && weekdays == days,
            at(&format!(
                "heatmap labels: expected 12 months from {dec} to {nov} and {days:?}, got {months:?} and {weekdays:?}"
            )),
        );
        check(
            vp["legend"] == legend,
            at(&format!("heatmap legend: got {}", vp["legend"])),
        );
        let (one, two) = if en {
            ("1 completion on 2026-", "2 completions on 2026-11-19")
        } else {
            ("1 次重置，日期 2026-", "2 次重置，日期 2026-11-19")
        };
        check(
            vp["cellTitles"]["1"]
                .as_str()
                .is_some_and(|t| t.starts_with(one))
                && vp["cellTitles"]["2"] == two,
            at(&format!(
                "heatmap cell titles in the plural form: expected {one:?}-like and {two:?}, got {}",
                vp["cellTitles"]
            )),
        );
        // At 390 px the year does not fit: it scrolls, opened on the newest week.
        check(
            vp["heatmapScrolls"] == (width < 700) && vp["heatmapAtNewest"] == true,
            at(&format!(
                "heatmap: scrolls {} (expected {}), newest week in view {}",
                vp["heatmapScrolls"],
                width < 700,
                vp["heatmapAtNewest"]
            )),
        );
        check(
            vp["operatorNote"] == "hidden",
            at(&format!(
                "a trusted page hides the operator note: got {}",
                vp["operatorNote"]
            )),
        );
        // The browser's clock starts at NOW and runs (load takes a moment),
        // then is moved 3 s on: the countdown to 2026-11-26T09:00Z follows.
        let (before, after) = (seconds(&vp["countdown"]), seconds(&vp["countdownAfter"]));
        check(
            !en || before.is_some_and(|b| (47 * 3600 - 20..=47 * 3600).contains(&b))
                && after.is_some_and(|a| before.is_some_and(|b| (b - 5..=b - 3).contains(&a))),
            at(&format!(
                "countdown: expected 47 h less the load time, then 3 s less, got {} then {}",
                vp["countdown"], vp["countdownAfter"]
            )),
        );
        if !en {
            // The countdown's units are the language's.
            check(
                vp["countdown"].as_str().is_some_and(|c| c.ends_with('秒')),
                at(&format!(
                    "countdown in Chinese units: got {}",
                    vp["countdown"]
                )),
            );
        }
        let quotes = strings(&vp["quotes"]);
        check(
            quotes.contains(&"<script>alert(1)</script>".to_owned())
                && quotes.contains(&"\"><img src=x onerror=alert(1)>".to_owned()),
            at(&format!("hostile texts shown as text: got {quotes:?}")),
        );
        for list in ["violations", "recordViolations"] {
            let bad = serious(&vp[list]);
            check(bad.is_empty(), at(&format!("axe-core {list}: {bad:?}")));
        }
        check(
            vp["record"]["path"]
                .as_str()
                .is_some_and(|p| p.starts_with(&format!("/{lang}/records/")))
                && vp["record"]["fields"].as_u64().unwrap_or(0) >= 5,
            at(&format!(
                "a history link opens its record page: got {}",
                vp["record"]
            )),
        );
        let errors = strings(&vp["consoleErrors"]);
        check(
            errors.is_empty(),
            at(&format!("console errors: {errors:?}")),
        );
        let requests = strings(&vp["requests"]);
        let own = |u: &String| u.starts_with(&format!("{origin}/{lang}/"));
        check(
            requests.iter().all(own) && requests.len() == 2,
            at(&format!(
                "requests: expected the page and its record page only, got {requests:?}"
            )),
        );
    }
    let zones = &report["zones"];
    check(
        zones["Asia/Tokyo"]["verdict"] == "yes",
        format!(
            "Tokyo (the completion is at 08:30 today there): expected yes, got {}",
            zones["Asia/Tokyo"]
        ),
    );
    check(
        zones["America/New_York"]["verdict"] == "no",
        format!(
            "New York (18:30 yesterday there): expected no, got {}",
            zones["America/New_York"]
        ),
    );
    let overdue = &report["overdue"];
    check(
        overdue["verdict"] == "unknown"
            && overdue["operatorNote"].as_str().is_some_and(|n| {
                n.contains("For the operator of this site:") && n.contains("resetctl mark-checked")
            }),
        format!(
            "31 h after the check: expected Unknown and the operator note, got {} and {}",
            overdue["verdict"], overdue["operatorNote"]
        ),
    );
    let switched = &report["switched"];
    check(
        switched["path"] == "/zh/"
            && switched["lang"] == "zh-Hans"
            && switched["verdictText"] == "否",
        format!("language switch: got {switched}"),
    );
    let bad = serious(&report["switchedViolations"]);
    check(bad.is_empty(), format!("axe-core on /zh/: {bad:?}"));
    let dialogs = strings(&report["dialogs"]);
    check(dialogs.is_empty(), format!("dialogs opened: {dialogs:?}"));
    assert!(
        failed.is_empty(),
        "the status page in chromium:\n  {}",
        failed.join("\n  ")
    );
}

/// The page's script words a schedule of the visitor's day as the server
/// does (html/mod.rs `yes_word`): "Due" while a completion may still
/// confirm it (within the match tolerance after its window), "Not
/// confirmed" once the tolerance has passed, in both languages.
#[test]
fn the_pages_script_says_due_then_not_confirmed_as_the_server_does() {
    let browser_dir = browser_dir();
    assert_a_cjk_font();
    let w = World::new();
    // A schedule of 08:00 to 09:00 UTC on NOW's day, served elapsed.
    let mut record = pending(
        "300",
        "2026-11-24T08:00:00.000Z",
        "2026-11-24T09:00:00.000Z",
    );
    record["scheduleState"] = "elapsed".into();
    w.publish_checked(
        &[record],
        "2026-11-24T09:30:00.000Z",
        Some("2026-11-24T09:30:00.000Z"),
    );
    let s = Server::start(&w, &["--now", NOW], &[]);
    let origin = format!("http://{}", s.addr);
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site_page_due");
    std::fs::create_dir_all(&out_dir).unwrap();
    // 10:00: one hour after the window, inside the 180-minute tolerance;
    // 12:30: past it.
    for (at, en, zh) in [
        (NOW, "Due", "应已重置"),
        ("2026-11-24T12:30:00.000Z", "Not confirmed", "未确认"),
    ] {
        let scratch = w.path(&format!("browser-{}", &at[11..13]));
        std::fs::create_dir_all(&scratch).unwrap();
        let report = run_browser(
            "site_page.mjs",
            &origin,
            &out_dir,
            &browser_dir,
            &scratch,
            &[at],
        );
        let words: Vec<(String, String)> = report["viewports"]
            .as_array()
            .expect("viewports")
            .iter()
            .map(|vp| {
                (
                    vp["langPath"].as_str().unwrap().to_owned(),
                    vp["verdictText"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        assert!(!words.is_empty());
        for (lang, text) in &words {
            let expected = if lang == "en" { en } else { zh };
            assert_eq!(text, expected, "at {at}, /{lang}/: {words:?}");
        }
    }
}

/// The page's script keeps a day with a confirmed reset a "Yes" in the
/// visitor's day as the server does (verdict.rs, `verdict`): a schedule
/// whose time comes after it is told beside it ("due", then "not
/// confirmed" once the tolerance has passed), never instead of it.
#[test]
fn the_pages_script_keeps_a_confirmed_reset_a_yes_and_tells_a_later_schedule_beside_it() {
    let browser_dir = browser_dir();
    assert_a_cjk_font();
    let w = World::new();
    // Resets at 01:00, 03:00 (a fulfilled schedule) and 05:00 UTC, and a
    // schedule of 09:30 nothing confirms.
    w.publish_checked(
        &three_resets_and_a_later_schedule(),
        "2026-11-24T09:00:00.000Z",
        Some("2026-11-24T08:00:00.000Z"),
    );
    let s = Server::start(&w, &["--now", NOW], &[]);
    let origin = format!("http://{}", s.addr);
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("site_page_later");
    std::fs::create_dir_all(&out_dir).unwrap();
    // The browser's clock at 10:00 (inside the 180-minute tolerance of
    // 09:30) and at 12:30 (past it); the server stays at 10:00, so what
    // changes is the script's doing.
    for (at, en, zh) in [
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
        let scratch = w.path(&format!("browser-{}", &at[11..13]));
        std::fs::create_dir_all(&scratch).unwrap();
        let report = run_browser(
            "site_page.mjs",
            &origin,
            &out_dir,
            &browser_dir,
            &scratch,
            &[at],
        );
        let seen: Vec<(String, Value, Value)> = report["viewports"]
            .as_array()
            .expect("viewports")
            .iter()
            .map(|vp| {
                (
                    vp["langPath"].as_str().unwrap().to_owned(),
                    vp["verdictText"].clone(),
                    vp["verdictLater"].clone(),
                )
            })
            .collect();
        assert!(!seen.is_empty());
        for (lang, word, later) in &seen {
            let expected = if lang == "en" {
                (
                    "Yes",
                    format!("{en}: Nov 24, 2026, 9:30 AM · Global reset · all plans · weekly limit details"),
                )
            } else {
                (
                    "是",
                    format!("{zh}：2026年11月24日 09:30 · 全局重置 · 所有套餐 · 每周限额 详情"),
                )
            };
            assert_eq!(
                (word, later),
                (&Value::from(expected.0), &Value::from(expected.1)),
                "at {at}, /{lang}/: {seen:?}"
            );
        }
    }
}
