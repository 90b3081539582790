//! What a visitor reads on the pages, over HTTP against the real binary
//! (issue 29, item 7): every identifier a record carries (plans, quota
//! windows, `unknown`, the source's origin) reaches the page in words of
//! its language, counts take the language's plural forms, and
//! `--site-name` (env `RESETCTL_SITE_NAME`, config key `site-name`) names
//! the pages in their header and titles. Layout, heatmap labels and the
//! 390 px page are checked in a real browser (`site_page.rs`).

use serde_json::Value;

use crate::site::{completion, scoped};
use crate::util::server::Server;
use crate::util::World;

const NOW: &str = "2026-11-24T10:00:00.000Z";
const CHECKED: &str = "2026-11-24T08:00:00.000Z";

fn records() -> Vec<Value> {
    vec![
        scoped(
            completion("101", "2026-11-24T03:15:00.000Z", "paid plans"),
            &["business", "plus", "pro", "team"],
            &["five_hour", "weekly"],
        ),
        scoped(
            completion("102", "2026-11-23T03:15:00.000Z", "nobody said"),
            &["unknown"],
            &["unknown"],
        ),
        completion("103", "2026-11-23T05:00:00.000Z", "everyone"),
    ]
}

/// The text between `start` and the next `end` after it.
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    page.split(start)
        .nth(1)
        .and_then(|rest| rest.split(end).next())
        .unwrap_or_else(|| panic!("no {start:?} in the page:\n{page}"))
}

#[test]
fn identifiers_reach_visitors_as_words_in_both_languages() {
    let w = World::new();
    w.publish_checked(&records(), "2026-11-24T09:00:00.000Z", Some(CHECKED));
    let s = Server::start(&w, &["--now", NOW], &[]);

    let en = s.get("/en/").text();
    assert_eq!(
        between(&en, "id=\"verdict-detail\">", "</p>"),
        "A reset was confirmed: <span class=\"nowrap\">2026-11-24 03:15 UTC</span> · Global reset · Business, Plus, Pro, Team · 5-hour limit, weekly limit <a href=\"/en/records/101\">details</a>"
    );
    // Plans not stated are said so; windows not stated are left out.
    assert!(
        en.contains("<strong>Global reset · plans not stated</strong>"),
        "{en}"
    );
    assert!(
        en.contains("<strong>Global reset · all plans · 5-hour limit</strong>"),
        "{en}"
    );
    // Counts in English's plural forms.
    assert!(
        en.contains("<title>1 completion on 2026-11-24</title>"),
        "{en}"
    );
    assert!(
        en.contains("<title>2 completions on 2026-11-23</title>"),
        "{en}"
    );
    assert!(
        en.contains("<title id=\"heatmap-title\">3 completions in 53 weeks (UTC days)</title>"),
        "{en}"
    );

    let zh = s.get("/zh/").text();
    assert_eq!(
        between(&zh, "id=\"verdict-detail\">", " <a "),
        "已确认一次重置：<span class=\"nowrap\">2026-11-24 03:15 UTC</span> · 全局重置 · Business、Plus、Pro、Team · 5 小时限额、每周限额"
    );
    assert!(
        zh.contains("<strong>全局重置 · 套餐未说明</strong>"),
        "{zh}"
    );
    assert!(
        zh.contains("<strong>全局重置 · 所有套餐 · 5 小时限额</strong>"),
        "{zh}"
    );
    // Chinese has no plural form.
    assert!(
        zh.contains("<title>1 次重置，日期 2026-11-24</title>"),
        "{zh}"
    );
    assert!(
        zh.contains("<title>2 次重置，日期 2026-11-23</title>"),
        "{zh}"
    );
    // The heatmap's months and weekdays, in each language.
    assert!(
        en.contains(">Dec</text>") && en.contains(">Mon</text>"),
        "{en}"
    );
    assert!(
        zh.contains(">12月</text>") && zh.contains(">周一</text>"),
        "{zh}"
    );

    // The record page lists plans, limits and where the source lives in words.
    let record = s.get("/en/records/101").text();
    assert!(
        record.contains("<dt>Plans</dt><dd>Business, Plus, Pro, Team</dd><dt>Limits</dt><dd>5-hour limit, weekly limit</dd>"),
        "{record}"
    );
    assert!(
        record.contains("<dt>Source</dt><dd>a post on X @h"),
        "{record}"
    );
    let record = s.get("/zh/records/102").text();
    assert!(
        record.contains("<dt>套餐</dt><dd>套餐未说明</dd><dt>限额</dt><dd>未说明</dd>"),
        "{record}"
    );
    assert!(
        record.contains("<dt>来源</dt><dd>X 上的帖子 @h"),
        "{record}"
    );
    for page in [&en, &zh] {
        for raw in [
            "five_hour",
            "· weekly",
            "business, plus",
            "· unknown",
            ">x @h",
        ] {
            assert!(!page.contains(raw), "{raw:?} reached the page:\n{page}");
        }
    }
}

#[test]
fn the_site_name_setting_names_the_pages() {
    let w = World::new();
    w.publish_checked(&records(), "2026-11-24T09:00:00.000Z", Some(CHECKED));
    let title = |s: &Server, path: &str| {
        let page = s.get(path).text();
        (
            between(&page, "<title>", "</title>").to_owned(),
            between(&page, "<strong id=\"site-name\">", "</strong>").to_owned(),
        )
    };
    // The default.
    let s = Server::start(&w, &["--now", NOW], &[]);
    assert_eq!(
        title(&s, "/en/"),
        (
            "Did the usage limits reset? · resetctl".to_owned(),
            "resetctl".to_owned()
        )
    );
    drop(s);
    // The flag, escaped as any text.
    let s = Server::start(
        &w,
        &["--now", NOW, "--site-name", " Team <b>resets</b> "],
        &[],
    );
    assert_eq!(
        title(&s, "/zh/"),
        (
            "用量限制重置了吗？ · Team &lt;b&gt;resets&lt;/b&gt;".to_owned(),
            "Team &lt;b&gt;resets&lt;/b&gt;".to_owned()
        )
    );
    assert_eq!(
        title(&s, "/en/records/101").0,
        "Global reset · Business, Plus, Pro, Team · 5-hour limit, weekly limit · Record · Team &lt;b&gt;resets&lt;/b&gt;"
    );
    drop(s);
    // The environment, and the config file's key.
    let s = Server::start(&w, &["--now", NOW], &[("RESETCTL_SITE_NAME", "重置观察")]);
    assert_eq!(title(&s, "/en/").1, "重置观察");
    drop(s);
    let config = w.path("config.toml");
    std::fs::write(&config, "site-name = \"From the file\"\n").unwrap();
    let config = config.to_str().unwrap();
    let s = Server::start(&w, &["--now", NOW, "--config", config], &[]);
    assert_eq!(title(&s, "/en/").1, "From the file");
    drop(s);
    // Refused before anything listens: empty, too long, a control character.
    let long = "x".repeat(81);
    for (args, env) in [
        (vec!["serve", "--site-name", "  "], None),
        (vec!["serve", "--site-name", long.as_str()], None),
        (vec!["serve"], Some("a\u{1b}[2Jb")),
    ] {
        let mut cmd = w.cmd();
        if let Some(value) = env {
            cmd.env("RESETCTL_SITE_NAME", value);
        }
        let out = cmd
            .args(&args)
            .args(["--listen", "127.0.0.1:0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{args:?} {env:?}: {stderr}");
        assert!(
            stderr.contains("site-name must be 1 to 80 characters without control characters"),
            "{stderr}"
        );
        assert!(
            env.is_none() || stderr.contains("RESETCTL_SITE_NAME"),
            "names where it came from: {stderr}"
        );
        assert!(
            !stderr.contains('\u{1b}'),
            "no control character echoed: {stderr:?}"
        );
    }
}
