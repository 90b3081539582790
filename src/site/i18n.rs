//! The page's languages: English and Simplified Chinese, one table of
//! strings each ([`Strings`]), and the choice of one from `Accept-Language`.
//!
//! Every word the status page, the record pages and the page's script show
//! comes from these tables; the templates hold none. Push messages (every
//! ready-made webhook format and e-mail) take their words from here too:
//! [`Notify`] for what happened, [`Strings`] for a record's type, scope and
//! state, so a message and a page never word one thing twice.

use crate::model::{Record, ResetType, ScheduleState};
use std::borrow::Cow;

/// A language of the pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English (the default of webhook messages).
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Both, in the order the language switch lists them.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The BCP 47 tag (`lang` attribute, `Content-Language`).
    pub const fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-Hans",
        }
    }

    /// The language the switch offers from this one.
    pub const fn other(self) -> Self {
        match self {
            Lang::En => Lang::Zh,
            Lang::Zh => Lang::En,
        }
    }

    /// The path segment of the explicit pages (`/en/`, `/zh/`).
    pub const fn segment(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// The documentation page in this language.
    pub const fn docs_path(self) -> &'static str {
        match self {
            Lang::En => crate::paths::DOCS_EN,
            Lang::Zh => crate::paths::DOCS_ZH,
        }
    }

    /// The language of a path segment.
    pub fn from_segment(segment: &str) -> Option<Self> {
        Lang::ALL.into_iter().find(|l| l.segment() == segment)
    }

    /// The table of strings.
    pub fn strings(self) -> &'static Strings {
        match self {
            Lang::En => &EN,
            Lang::Zh => &ZH,
        }
    }

    /// The language `Accept-Language` prefers (RFC 9110 section 12.5.4):
    /// the highest `q` among `zh*` and `en*` ranges, the first listed on a
    /// tie; `*` counts as English; English when none matches.
    pub fn negotiate(accept_language: Option<&str>) -> Self {
        let mut best: Option<(u16, Lang)> = None;
        for item in accept_language.unwrap_or_default().split(',') {
            let mut parts = item.split(';');
            let range = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .next()
                .map_or(Some(1000), parse_q);
            let Some(q) = q.filter(|q| *q > 0) else {
                continue;
            };
            let primary = range.split('-').next().unwrap_or_default();
            let lang = match primary {
                "zh" => Lang::Zh,
                "en" | "*" => Lang::En,
                _ => continue,
            };
            if best.is_none_or(|(b, _)| q > b) {
                best = Some((q, lang));
            }
        }
        best.map_or(Lang::En, |(_, lang)| lang)
    }
}

impl Lang {
    /// The words of push messages (the chat and phone webhook formats).
    pub fn notify(self) -> &'static Notify {
        match self {
            Lang::En => &NOTIFY_EN,
            Lang::Zh => &NOTIFY_ZH,
        }
    }
}

impl serde::Serialize for Lang {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.segment())
    }
}

impl<'de> serde::Deserialize<'de> for Lang {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Lang::from_segment(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("{text:?} is not en or zh")))
    }
}

/// Every word of a push message (the ready-made webhook formats and
/// e-mail) in one language, beside [`Strings`]' words for a record's type,
/// scope and state. `{n}` in [`Notify::upcoming`] stands for the lead in
/// minutes.
#[derive(Debug, PartialEq)]
pub struct Notify {
    /// `record.created` of a schedule.
    pub announced: &'static str,
    /// `record.created` of a completion.
    pub completed: &'static str,
    /// `schedule.moved`.
    pub moved: &'static str,
    /// Before the window a moved schedule had.
    pub was: &'static str,
    /// `schedule.fulfilled`, told on its own.
    pub fulfilled: &'static str,
    /// Before the time a schedule was announced for, in the message of
    /// the completion that fulfilled it.
    pub as_scheduled: &'static str,
    /// `schedule.elapsed`.
    pub unconfirmed: &'static str,
    /// The line of `schedule.elapsed`.
    pub unconfirmed_line: &'static str,
    /// `record.removed` of a schedule.
    pub schedule_withdrawn: &'static str,
    /// `record.removed` of a completion.
    pub completion_withdrawn: &'static str,
    /// `record.updated` of a schedule.
    pub schedule_updated: &'static str,
    /// `record.updated` of a completion.
    pub completion_updated: &'static str,
    /// `reset.upcoming`: `{d}` is the time left in words ([`Notify::duration`]).
    pub upcoming: &'static str,
    /// `reset.window_started` of a window that is one instant.
    pub due_now: &'static str,
    /// `reset.window_started` of a longer window.
    pub window_open: &'static str,
    /// `reset.window_ended`.
    pub window_closed: &'static str,
    /// Between a window's start and end.
    pub to: &'static str,
    /// Before the schedule state.
    pub state: &'static str,
    /// Before the record page's link.
    pub details: &'static str,
    /// Before the source post's link.
    pub source: &'static str,
    /// The test message's title.
    pub test_title: &'static str,
    /// The test message's line: `{id}` is its message id.
    pub test_line: &'static str,
    /// The footer of an e-mail: why the reader gets it.
    pub email_footer: &'static str,
    /// What a schedule announced inside a lead says of its time: `{d}` the
    /// time left in words, `{when}` the window.
    pub announced_soon: &'static str,
    /// Minutes, in [`Notify::duration`].
    pub minutes: Plural,
    /// Hours, in [`Notify::duration`].
    pub hours: Plural,
    /// Between hours and minutes, in [`Notify::duration`].
    pub and: &'static str,
    /// Under a minute left, in [`Notify::duration`].
    pub under_a_minute: &'static str,
    /// A completion whose time changed: `{old}` and `{new}` its times.
    pub time_corrected: &'static str,
    /// A schedule no longer fulfilled (an unlink).
    pub unfulfilled: &'static str,
    /// Before the window of a schedule a withdrawn completion no longer fulfils.
    pub open_again: &'static str,
    /// Before what an update changed.
    pub changed: &'static str,
    /// The parts of a record an update can change ([`crate::changes::Field`]).
    pub fields: FieldWords,
    /// After the first story's title when a message tells more: `{n}` how many.
    pub more: &'static str,
    /// The title of a digest of many changes: `{n}` how many.
    pub digest_title: &'static str,
    /// One line of a digest: `{n}` how many, `{what}` the headline.
    pub digest_line: &'static str,
    /// The digest's link to the status page.
    pub digest_page: &'static str,
    /// The zone as its readers name it ([`Notify::zone_name`]): a zone
    /// this table names, else the IANA name (`None`: the UTC offset).
    pub zone_names: Option<&'static [(&'static str, &'static str)]>,
    /// Around a local time's UTC time: before and after.
    pub utc_around: (&'static str, &'static str),
    /// A withdrawal because the data was restored: `{at}` the backup's time.
    pub restored: &'static str,
}

/// The words of each part of a record an update can change.
#[derive(Debug, PartialEq)]
pub struct FieldWords {
    /// `text`.
    pub text: &'static str,
    /// `confidence`.
    pub confidence: &'static str,
    /// `resetType`.
    pub reset_type: &'static str,
    /// `scope`.
    pub scope: &'static str,
    /// `announcedAt`.
    pub announced: &'static str,
    /// `source`.
    pub source: &'static str,
    /// The time.
    pub time: &'static str,
    /// A schedule's window.
    pub window: &'static str,
    /// A schedule's fulfilment.
    pub fulfilment: &'static str,
    /// A completion's linked schedules.
    pub links: &'static str,
    /// Anything else.
    pub other: &'static str,
    /// Between two of them.
    pub separator: &'static str,
}

impl Notify {
    /// `minutes` in words: "1 minute", "10 minutes", "1 hour", "3 hours",
    /// "1 hour 30 minutes" (and the same in Chinese); 0 is "less than a
    /// minute".
    pub fn duration(&self, minutes: u32) -> String {
        let count = |words: &Plural, n: u32| {
            let (before, after) = if n == 1 { words.one } else { words.other };
            format!("{before}{n}{after}")
        };
        match (minutes / 60, minutes % 60) {
            (0, 0) => self.under_a_minute.to_owned(),
            (0, m) => count(&self.minutes, m),
            (h, 0) => count(&self.hours, h),
            (h, m) => format!(
                "{}{}{}",
                count(&self.hours, h),
                self.and,
                count(&self.minutes, m)
            ),
        }
    }

    /// How readers of this language name `zone` at `at`: a zone the table
    /// names ("北京时间"), else its IANA name (English) or its offset
    /// from UTC then ("UTC+8", "UTC-3:30").
    pub fn zone_name(&self, zone: chrono_tz::Tz, at: chrono::DateTime<chrono::Utc>) -> String {
        match self.zone_names {
            None => zone.name().to_owned(),
            Some(names) => lookup(names, zone.name()).map_or_else(
                || {
                    use chrono::Offset;
                    let seconds = at.with_timezone(&zone).offset().fix().local_minus_utc();
                    let (sign, abs) = if seconds < 0 {
                        ('-', -seconds)
                    } else {
                        ('+', seconds)
                    };
                    match (abs / 3600, abs % 3600 / 60) {
                        (h, 0) => format!("UTC{sign}{h}"),
                        (h, m) => format!("UTC{sign}{h}:{m:02}"),
                    }
                },
                str::to_owned,
            ),
        }
    }
}

/// Zones as Chinese readers name them.
const ZONE_NAMES_ZH: &[(&str, &str)] = &[
    ("Asia/Shanghai", "北京时间"),
    ("Asia/Chongqing", "北京时间"),
    ("Asia/Chungking", "北京时间"),
    ("Asia/Harbin", "北京时间"),
    ("Asia/Urumqi", "新疆时间"),
    ("PRC", "北京时间"),
    ("Asia/Hong_Kong", "香港时间"),
    ("Hongkong", "香港时间"),
    ("Asia/Macau", "澳门时间"),
    ("Asia/Macao", "澳门时间"),
    ("Asia/Taipei", "台北时间"),
    ("ROC", "台北时间"),
    ("Asia/Singapore", "新加坡时间"),
    ("Singapore", "新加坡时间"),
    ("Asia/Tokyo", "东京时间"),
    ("Japan", "东京时间"),
    ("Asia/Seoul", "首尔时间"),
    ("ROK", "首尔时间"),
];

/// English push messages.
pub static NOTIFY_EN: Notify = Notify {
    announced: "Reset announced",
    completed: "Reset completed",
    moved: "Scheduled reset moved",
    was: "Was: ",
    fulfilled: "Scheduled reset completed",
    as_scheduled: "Scheduled for: ",
    unconfirmed: "Scheduled reset not confirmed",
    unconfirmed_line: "No completion has been recorded since the scheduled time.",
    schedule_withdrawn: "Scheduled reset withdrawn",
    completion_withdrawn: "Completed reset withdrawn",
    schedule_updated: "Scheduled reset updated",
    completion_updated: "Completed reset updated",
    upcoming: "Reset in {d}",
    due_now: "Reset due now",
    window_open: "Reset window open",
    window_closed: "Reset window closed, no completion recorded yet",
    to: " to ",
    state: "State: ",
    details: "Details: ",
    source: "Source: ",
    test_title: "resetctl test notification",
    test_line: "This endpoint receives resetctl changes (message {id}).",
    email_footer: "You receive this because this address subscribes to reset notifications from resetctl; its operator can stop them.",
    announced_soon: "in {d}, at {when}",
    minutes: Plural {
        one: ("", " minute"),
        other: ("", " minutes"),
    },
    hours: Plural {
        one: ("", " hour"),
        other: ("", " hours"),
    },
    and: " ",
    under_a_minute: "less than a minute",
    time_corrected: "Completion time corrected: {old} → {new}",
    unfulfilled: "Scheduled reset no longer completed",
    open_again: "Open again: ",
    changed: "Changed: ",
    fields: FieldWords {
        text: "text",
        confidence: "confidence",
        reset_type: "type",
        scope: "plans and limits",
        announced: "announcement time",
        source: "source",
        time: "time",
        window: "window",
        fulfilment: "completion",
        links: "linked schedules",
        other: "details",
        separator: ", ",
    },
    more: " (+{n} more)",
    digest_title: "{n} changes to reset records",
    digest_line: "{n} × {what}",
    digest_page: "Status page: ",
    zone_names: None,
    utc_around: (" (", " UTC)"),
    restored: "No longer announced: restored from a backup of {at}",
};

/// Simplified Chinese push messages.
pub static NOTIFY_ZH: Notify = Notify {
    announced: "已公布重置",
    completed: "重置已完成",
    moved: "计划重置时间已更改",
    was: "原定：",
    fulfilled: "计划重置已完成",
    as_scheduled: "原计划时间：",
    unconfirmed: "计划重置未得到确认",
    unconfirmed_line: "计划时间过后尚未记录到重置完成。",
    schedule_withdrawn: "计划重置已撤回",
    completion_withdrawn: "重置完成记录已撤回",
    schedule_updated: "计划重置已更新",
    completion_updated: "重置完成记录已更新",
    upcoming: "{d}后重置",
    due_now: "现在应当重置",
    window_open: "重置窗口已开始",
    window_closed: "重置窗口已结束，尚未记录到完成",
    to: " 至 ",
    state: "状态：",
    details: "详情：",
    source: "来源：",
    test_title: "resetctl 测试通知",
    test_line: "此端点接收 resetctl 变更（消息 {id}）。",
    email_footer: "你收到此邮件，是因为此地址订阅了 resetctl 的重置通知；运营者可以停止发送。",
    announced_soon: "{d}后，{when}",
    minutes: Plural {
        one: ("", " 分钟"),
        other: ("", " 分钟"),
    },
    hours: Plural {
        one: ("", " 小时"),
        other: ("", " 小时"),
    },
    and: " ",
    under_a_minute: "不到 1 分钟",
    time_corrected: "重置完成时间已更正：{old} → {new}",
    unfulfilled: "计划重置不再标记为已完成",
    open_again: "重新待定：",
    changed: "变更：",
    fields: FieldWords {
        text: "文字",
        confidence: "置信度",
        reset_type: "类型",
        scope: "套餐和额度",
        announced: "公布时间",
        source: "来源",
        time: "时间",
        window: "时间窗口",
        fulfilment: "完成情况",
        links: "关联的计划",
        other: "详情",
        separator: "、",
    },
    more: "（另有 {n} 项）",
    digest_title: "重置记录有 {n} 项变化",
    digest_line: "{n} × {what}",
    digest_page: "状态页：",
    zone_names: Some(ZONE_NAMES_ZH),
    utc_around: ("（", " UTC）"),
    restored: "不再公布：已从备份恢复，备份时间 {at}",
};

/// A `q` value in thousandths; `None` when malformed.
fn parse_q(text: &str) -> Option<u16> {
    let value: f64 = text.trim().parse().ok()?;
    (0.0..=1.0)
        .contains(&value)
        .then(|| (value * 1000.0).round() as u16)
}

/// The command the operator note names (the same in every language).
pub const OPERATOR_COMMAND: &str = "resetctl mark-checked";

/// A count in words: the text before and after the number, for a count of
/// one and for every other count. A language without plural forms
/// (Chinese) gives both the same words; [`Strings::count`] picks the form.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct Plural {
    /// For 1.
    pub one: (&'static str, &'static str),
    /// For any other count.
    pub other: (&'static str, &'static str),
}

/// Every string of the pages in one language.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Strings {
    /// The page title and main heading.
    pub title: &'static str,
    /// The question the verdict answers, for the UTC day.
    pub question_utc: &'static str,
    /// The question the verdict answers, for the visitor's day (script).
    pub question_local: &'static str,
    /// The verdicts: a reset confirmed today.
    pub yes: &'static str,
    /// A schedule of the day whose time has come, not confirmed yet
    /// (within the matcher's tolerance).
    pub yes_due: &'static str,
    /// A schedule of the day that passed the tolerance unconfirmed: the
    /// words every message uses at that instant.
    pub yes_unconfirmed: &'static str,
    /// No reset.
    pub no: &'static str,
    /// Cannot tell.
    pub unknown: &'static str,
    /// How a yes is known: a completion.
    pub hit_completed: &'static str,
    /// A fulfilled schedule.
    pub hit_fulfilled: &'static str,
    /// An elapsed schedule.
    pub hit_elapsed: &'static str,
    /// A schedule due now.
    pub hit_due: &'static str,
    /// A "no" with nothing ahead.
    pub no_detail: &'static str,
    /// Why unknown: never checked.
    pub distrust_never: &'static str,
    /// Why unknown: an old check; the words around the trust limit's
    /// hours ([`TRUST_HOURS`](crate::site::verdict::TRUST_HOURS)).
    pub distrust_stale: (&'static str, &'static str),
    /// Why unknown: the upstream's status, around its words.
    pub distrust_source: (&'static str, &'static str),
    /// Between a label and what follows it (`A reset was confirmed: …`).
    pub colon: &'static str,
    /// The note to the operator of a standalone instance whose check is
    /// missing or too old: its label, and the words around the command.
    pub operator_note_label: &'static str,
    /// Before [`OPERATOR_COMMAND`] in the note, between it and the trust
    /// limit's hours, and after them.
    pub operator_note: (&'static str, &'static str, &'static str),
    /// The next reset section.
    pub next_heading: &'static str,
    /// No pending schedule.
    pub none_announced: &'static str,
    /// Before the countdown.
    pub starts_in: &'static str,
    /// A window under way.
    pub in_window_now: &'static str,
    /// Labels of a schedule's details.
    pub window: &'static str,
    /// Precision label.
    pub precision: &'static str,
    /// Basis label.
    pub basis: &'static str,
    /// Precision words.
    pub precision_date: &'static str,
    /// An exact time.
    pub precision_datetime: &'static str,
    /// A window.
    pub precision_window: &'static str,
    /// Basis words: stated.
    pub basis_explicit: &'static str,
    /// Inferred.
    pub basis_inferred: &'static str,
    /// Freshness section.
    pub freshness_heading: &'static str,
    /// Published at.
    pub generated_at: &'static str,
    /// Last successful check.
    pub last_check: &'static str,
    /// Never.
    pub never: &'static str,
    /// The upstream source.
    pub source: &'static str,
    /// Last sync.
    pub last_sync: &'static str,
    /// Sync status.
    pub sync_status: &'static str,
    /// Sync status words: ok.
    pub status_ok: &'static str,
    /// Stale.
    pub status_stale: &'static str,
    /// Error.
    pub status_error: &'static str,
    /// Pending (no sync yet).
    pub status_pending: &'static str,
    /// Relative time: under a minute.
    pub just_now: &'static str,
    /// Relative time: "{n} minutes ago" as prefix and suffix around n.
    pub minutes_ago: (&'static str, &'static str),
    /// Hours ago.
    pub hours_ago: (&'static str, &'static str),
    /// Days ago.
    pub days_ago: (&'static str, &'static str),
    /// Countdown units.
    pub units: [&'static str; 4],
    /// History section.
    pub history_heading: &'static str,
    /// History filter: all.
    pub filter_all: &'static str,
    /// Schedules.
    pub filter_schedules: &'static str,
    /// Completions.
    pub filter_completions: &'static str,
    /// No records.
    pub no_records: &'static str,
    /// Kinds.
    pub kind_schedule: &'static str,
    /// Completion.
    pub kind_completion: &'static str,
    /// Reset types.
    pub type_global: &'static str,
    /// Banked.
    pub type_banked: &'static str,
    /// Both.
    pub type_both: &'static str,
    /// Schedule states.
    pub state_pending: &'static str,
    /// Elapsed.
    pub state_elapsed: &'static str,
    /// Fulfilled.
    pub state_fulfilled: &'static str,
    /// Unknown.
    pub state_unknown: &'static str,
    /// Scope: every plan.
    pub all_plans: &'static str,
    /// Scope: plans not stated.
    pub plans_unknown: &'static str,
    /// Words of plan ids (`plus` → `Plus`); an id not listed is shown as it is.
    /// (The script gets records in words already: not sent to it.)
    #[serde(skip)]
    pub plan_names: &'static [(&'static str, &'static str)],
    /// Words of quota-window ids (`five_hour`, `weekly`…); `unknown` is
    /// left out of a record's summary line.
    #[serde(skip)]
    pub window_names: &'static [(&'static str, &'static str)],
    /// Quota windows not stated.
    pub windows_unknown: &'static str,
    /// Between the items of a list (`Plus, Pro`; `Plus、Pro`).
    pub list_separator: &'static str,
    /// Scope label.
    pub scope: &'static str,
    /// The plans of a record (record page).
    pub plans: &'static str,
    /// The quota windows of a record (record page).
    pub windows: &'static str,
    /// Link to the source post.
    pub source_post: &'static str,
    /// Link to the record's page.
    pub details: &'static str,
    /// The heatmap heading.
    pub heatmap_heading: &'static str,
    /// The heatmap's summary, around the total.
    pub heatmap_total: Plural,
    /// One cell's label, around the count (the date follows).
    pub heatmap_cell: Plural,
    /// Month names, short, January first (the heatmap's columns).
    pub months: [&'static str; 12],
    /// Weekday names, short, Monday first (the heatmap's rows).
    pub weekdays: [&'static str; 7],
    /// The heatmap's legend: fewer completions.
    pub legend_less: &'static str,
    /// More completions.
    pub legend_more: &'static str,
    /// The label of the heatmap's scrolling area (narrow screens).
    pub heatmap_scroll_label: &'static str,
    /// Subscribe section.
    pub subscribe_heading: &'static str,
    /// Atom.
    pub sub_atom: &'static str,
    /// ICS over https.
    pub sub_ics: &'static str,
    /// ICS as webcal.
    pub sub_webcal: &'static str,
    /// SSE.
    pub sub_stream: &'static str,
    /// Webhooks.
    pub sub_webhooks: &'static str,
    /// Reminders before a reset (stream and webhooks).
    pub sub_reminders: &'static str,
    /// API docs.
    pub sub_docs: &'static str,
    /// MCP.
    pub sub_mcp: &'static str,
    /// The badge.
    pub sub_badge: &'static str,
    /// The language switch's label.
    pub other_language: &'static str,
    /// Record page.
    pub record_heading: &'static str,
    /// Field labels.
    pub kind: &'static str,
    /// Reset type.
    pub reset_type: &'static str,
    /// Announced.
    pub announced_at: &'static str,
    /// Effective.
    pub effective_at: &'static str,
    /// State.
    pub state: &'static str,
    /// Completed.
    pub completed_at: &'static str,
    /// Confidence.
    pub confidence: &'static str,
    /// The text.
    pub text: &'static str,
    /// Linked records.
    pub linked: &'static str,
    /// Back.
    pub back: &'static str,
    /// Not known.
    pub not_known: &'static str,
    /// Times are UTC until the script runs.
    pub times_note: &'static str,
    /// The footer.
    pub served_by: &'static str,
    /// The label of a record's id (record page).
    pub id: &'static str,
    /// Words of a source's origin: a post on X.
    pub origin_x: &'static str,
    /// An operator's note.
    pub origin_operator: &'static str,
    /// A feed item.
    pub origin_rss: &'static str,
    /// A GitHub item.
    pub origin_github: &'static str,
    /// The main navigation's label.
    pub nav_label: &'static str,
    /// A record page of an id that is not published.
    pub record_not_found: &'static str,
    /// The title of a page asked with a query it does not take.
    pub bad_query: &'static str,
    /// What the status page takes.
    pub index_query_rule: &'static str,
    /// What a record page takes.
    pub record_query_rule: &'static str,
    /// The title of a page while no records are published.
    pub nothing_published: &'static str,
    /// What that means, and what its operator does about it.
    pub nothing_published_note: &'static str,
    /// Beside a confirmed reset of the day: a schedule whose time came
    /// after it, not confirmed yet (within the matcher's tolerance).
    pub later_due: &'static str,
    /// Beside a confirmed reset of the day: a schedule whose time came
    /// after it and that passed the tolerance unconfirmed.
    pub later_unconfirmed: &'static str,
    /// The state of a schedule whose time has come, not confirmed yet (in
    /// its window, or within the matcher's tolerance after it; the API
    /// serves `pending`, then `elapsed`).
    pub state_due: &'static str,
}

/// English.
pub static EN: Strings = Strings {
    title: "Did the usage limits reset?",
    question_utc: "Reset today (UTC)?",
    question_local: "Reset today (your time)?",
    yes: "Yes",
    yes_due: "Due",
    yes_unconfirmed: "Not confirmed",
    no: "No",
    unknown: "Unknown",
    hit_completed: "A reset was confirmed",
    hit_fulfilled: "A scheduled reset happened and was confirmed",
    hit_elapsed: "A scheduled reset was not confirmed",
    hit_due: "A scheduled reset is due, not confirmed yet",
    no_detail: "No reset has been recorded for this day.",
    distrust_never: "The data has never been checked successfully.",
    distrust_stale: (
        "The last successful check is more than ",
        " hours old, so the data may be out of date.",
    ),
    distrust_source: ("The upstream source reports its data as ", "."),
    colon: ": ",
    operator_note_label: "For the operator of this site:",
    operator_note: (
        "after checking the source, run ",
        " on the server, or let a monitor run it: the page trusts a check for ",
        " hours.",
    ),
    next_heading: "Next reset",
    none_announced: "None announced.",
    starts_in: "Starts in",
    in_window_now: "Its window is open now.",
    window: "Window",
    precision: "Precision",
    basis: "Basis",
    precision_date: "a day, time not given",
    precision_datetime: "an exact time",
    precision_window: "a time window",
    basis_explicit: "stated by the source",
    basis_inferred: "inferred from context",
    freshness_heading: "Freshness",
    generated_at: "Published",
    last_check: "Last successful check",
    never: "never",
    source: "Source",
    last_sync: "Last sync",
    sync_status: "Sync status",
    status_ok: "up to date",
    status_stale: "out of date",
    status_error: "failing",
    status_pending: "not synced yet",
    just_now: "just now",
    minutes_ago: ("", " min ago"),
    hours_ago: ("", " h ago"),
    days_ago: ("", " days ago"),
    units: ["d", "h", "m", "s"],
    history_heading: "History",
    filter_all: "All",
    filter_schedules: "Schedules",
    filter_completions: "Completions",
    no_records: "No records yet.",
    kind_schedule: "Schedule",
    kind_completion: "Completion",
    type_global: "Global reset",
    type_banked: "Banked reset",
    type_both: "Global and banked reset",
    state_pending: "scheduled",
    state_elapsed: "not confirmed",
    state_fulfilled: "completed",
    state_unknown: "time not stated",
    all_plans: "all plans",
    plans_unknown: "plans not stated",
    plan_names: &[
        ("free", "Free"),
        ("go", "Go"),
        ("plus", "Plus"),
        ("pro", "Pro"),
        ("team", "Team"),
        ("business", "Business"),
        ("enterprise", "Enterprise"),
        ("edu", "Edu"),
    ],
    window_names: &[
        ("five_hour", "5-hour limit"),
        ("daily", "daily limit"),
        ("weekly", "weekly limit"),
        ("monthly", "monthly limit"),
    ],
    windows_unknown: "not stated",
    list_separator: ", ",
    scope: "Scope",
    plans: "Plans",
    windows: "Limits",
    source_post: "source",
    details: "details",
    heatmap_heading: "Completions in the last year",
    heatmap_total: Plural {
        one: ("", " completion in 53 weeks (UTC days)"),
        other: ("", " completions in 53 weeks (UTC days)"),
    },
    heatmap_cell: Plural {
        one: ("", " completion on "),
        other: ("", " completions on "),
    },
    months: [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ],
    weekdays: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
    legend_less: "Less",
    legend_more: "More",
    heatmap_scroll_label: "Completions per day, scrollable",
    subscribe_heading: "Subscribe",
    sub_atom: "Atom feed",
    sub_ics: "Calendar (ICS)",
    sub_webcal: "Add to your calendar",
    sub_stream: "Live stream (SSE)",
    sub_webhooks: "Webhooks (operators)",
    sub_reminders: "Reminders before a reset: 60 and 10 minutes ahead, when the window starts and when it ends unconfirmed",
    sub_docs: "API documentation",
    sub_mcp: "MCP endpoint",
    sub_badge: "README badge",
    other_language: "中文",
    record_heading: "Record",
    kind: "Kind",
    reset_type: "Type",
    announced_at: "Announced",
    effective_at: "Effective",
    state: "State",
    completed_at: "Completed",
    confidence: "Confidence",
    text: "Text",
    linked: "Linked records",
    back: "Back to the status page",
    not_known: "not known",
    times_note: "Times are in UTC; with JavaScript on they are also shown in your time zone.",
    served_by: "Served by resetctl",
    id: "ID",
    origin_x: "a post on X",
    origin_operator: "an operator's note",
    origin_rss: "a feed item",
    origin_github: "a GitHub item",
    nav_label: "Site",
    record_not_found: "No such record",
    bad_query: "This page cannot show that",
    index_query_rule: "The status page takes one query parameter, kind: all, reset_scheduled or reset_completed.",
    record_query_rule: "A record page takes no query parameters.",
    nothing_published: "Nothing is published yet",
    nothing_published_note: "This instance has no records to show yet. Its operator publishes them with resetctl seed, resetctl record or resetctl sync; this page shows them as soon as they are published.",
    later_due: "A later scheduled reset is due, not confirmed yet",
    later_unconfirmed: "A later scheduled reset was not confirmed",
    state_due: "due, not confirmed yet",
};

/// Simplified Chinese.
pub static ZH: Strings = Strings {
    title: "用量限制重置了吗？",
    question_utc: "今天（UTC）重置了吗？",
    question_local: "今天（你的时区）重置了吗？",
    yes: "是",
    yes_due: "应已重置",
    yes_unconfirmed: "未确认",
    no: "否",
    unknown: "未知",
    hit_completed: "已确认一次重置",
    hit_fulfilled: "计划中的重置已发生并已确认",
    hit_elapsed: "计划重置未得到确认",
    hit_due: "计划中的重置已到时间，尚未确认",
    no_detail: "这一天没有记录到重置。",
    distrust_never: "数据从未成功检查过。",
    distrust_stale: ("上次成功检查已超过 ", " 小时，数据可能已过时。"),
    distrust_source: ("上游数据源报告的状态为“", "”。"),
    colon: "：",
    operator_note_label: "致本站运营者：",
    operator_note: (
        "核对来源后，请在服务器上运行 ",
        "，或交由监控程序运行：页面对一次检查的信任期为 ",
        " 小时。",
    ),
    next_heading: "下一次重置",
    none_announced: "暂无公告。",
    starts_in: "距开始还有",
    in_window_now: "时间窗口现已开始。",
    window: "时间窗口",
    precision: "精度",
    basis: "依据",
    precision_date: "某一天（未给出时间）",
    precision_datetime: "精确时间",
    precision_window: "时间窗口",
    basis_explicit: "来源明确说明",
    basis_inferred: "根据上下文推断",
    freshness_heading: "数据新鲜度",
    generated_at: "发布于",
    last_check: "上次成功检查",
    never: "从未",
    source: "来源",
    last_sync: "上次同步",
    sync_status: "同步状态",
    status_ok: "正常",
    status_stale: "已过时",
    status_error: "出错",
    status_pending: "尚未同步",
    just_now: "刚刚",
    minutes_ago: ("", " 分钟前"),
    hours_ago: ("", " 小时前"),
    days_ago: ("", " 天前"),
    units: ["天", "小时", "分", "秒"],
    history_heading: "历史记录",
    filter_all: "全部",
    filter_schedules: "计划",
    filter_completions: "已完成",
    no_records: "暂无记录。",
    kind_schedule: "计划",
    kind_completion: "已完成",
    type_global: "全局重置",
    type_banked: "储备重置",
    type_both: "全局与储备重置",
    state_pending: "已计划",
    state_elapsed: "未确认",
    state_fulfilled: "已完成",
    state_unknown: "时间未定",
    all_plans: "所有套餐",
    plans_unknown: "套餐未说明",
    plan_names: &[
        ("free", "免费版"),
        ("go", "Go"),
        ("plus", "Plus"),
        ("pro", "Pro"),
        ("team", "Team"),
        ("business", "Business"),
        ("enterprise", "企业版"),
        ("edu", "教育版"),
    ],
    window_names: &[
        ("five_hour", "5 小时限额"),
        ("daily", "每日限额"),
        ("weekly", "每周限额"),
        ("monthly", "每月限额"),
    ],
    windows_unknown: "未说明",
    list_separator: "、",
    scope: "范围",
    plans: "套餐",
    windows: "限额",
    source_post: "来源",
    details: "详情",
    heatmap_heading: "近一年的重置",
    // Chinese has no plural form: one and other are the same words.
    heatmap_total: Plural {
        one: ("53 周内共 ", " 次重置（按 UTC 日期）"),
        other: ("53 周内共 ", " 次重置（按 UTC 日期）"),
    },
    heatmap_cell: Plural {
        one: ("", " 次重置，日期 "),
        other: ("", " 次重置，日期 "),
    },
    months: [
        "1月", "2月", "3月", "4月", "5月", "6月", "7月", "8月", "9月", "10月", "11月", "12月",
    ],
    weekdays: ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
    legend_less: "少",
    legend_more: "多",
    heatmap_scroll_label: "每日重置次数（可横向滚动）",
    subscribe_heading: "订阅",
    sub_atom: "Atom 订阅源",
    sub_ics: "日历（ICS）",
    sub_webcal: "添加到日历",
    sub_stream: "实时推送（SSE）",
    sub_webhooks: "Webhook（运营者）",
    sub_reminders: "重置前提醒：提前 60 分钟和 10 分钟，窗口开始时，以及窗口结束仍未确认时",
    sub_docs: "API 文档",
    sub_mcp: "MCP 端点",
    sub_badge: "README 徽章",
    other_language: "English",
    record_heading: "记录",
    kind: "类别",
    reset_type: "类型",
    announced_at: "公告时间",
    effective_at: "生效时间",
    state: "状态",
    completed_at: "完成时间",
    confidence: "置信度",
    text: "原文",
    linked: "关联记录",
    back: "返回状态页",
    not_known: "未知",
    times_note: "时间以 UTC 显示；启用 JavaScript 后也会显示你所在时区的时间。",
    served_by: "由 resetctl 提供",
    id: "ID",
    origin_x: "X 上的帖子",
    origin_operator: "运营者备注",
    origin_rss: "订阅源条目",
    origin_github: "GitHub 条目",
    nav_label: "站点",
    record_not_found: "没有这条记录",
    bad_query: "此页面无法显示该内容",
    index_query_rule: "状态页只接受一个查询参数 kind：all、reset_scheduled 或 reset_completed。",
    record_query_rule: "记录页面不接受查询参数。",
    nothing_published: "尚未发布任何内容",
    nothing_published_note: "此实例还没有可显示的记录。运营者用 resetctl seed、resetctl record 或 resetctl sync 发布记录；发布后此页面会立即显示。",
    later_due: "随后的一次计划重置已到时间，尚未确认",
    later_unconfirmed: "随后的一次计划重置未得到确认",
    state_due: "已到时间，尚未确认",
};

impl Strings {
    /// `n` in words, in the plural form `n` takes (English: one for 1,
    /// other otherwise; a language without plurals gives both the same).
    pub fn count(&self, words: &Plural, n: u64) -> String {
        let (before, after) = if n == 1 { words.one } else { words.other };
        format!("{before}{n}{after}")
    }

    /// The words of plan id `id`; a plan the table does not name is said
    /// as its id in words, capitalised as a name (`max` → "Max",
    /// `pro_plus` → "Pro plus"), never as an identifier.
    pub fn plan<'a>(&self, id: &'a str) -> Cow<'a, str> {
        lookup(self.plan_names, id).map_or_else(
            || {
                let spoken = id.replace('_', " ");
                let mut chars = spoken.chars();
                Cow::Owned(match chars.next() {
                    Some(first) => first.to_uppercase().chain(chars).collect(),
                    None => spoken,
                })
            },
            Cow::Borrowed,
        )
    }

    /// The words of quota-window id `id`; one the table does not name is
    /// said as its id in words (`five_minute` → "five minute").
    pub fn window<'a>(&self, id: &'a str) -> Cow<'a, str> {
        lookup(self.window_names, id)
            .map_or_else(|| Cow::Owned(id.replace('_', " ")), Cow::Borrowed)
    }

    /// A reset type in words.
    pub fn type_words(&self, t: ResetType) -> &'static str {
        match t {
            ResetType::Global => self.type_global,
            ResetType::Banked => self.type_banked,
            ResetType::GlobalAndBanked => self.type_both,
        }
    }

    /// A schedule state in words.
    pub fn state_words(&self, state: ScheduleState) -> &'static str {
        match state {
            ScheduleState::Pending => self.state_pending,
            ScheduleState::Elapsed => self.state_elapsed,
            ScheduleState::Fulfilled => self.state_fulfilled,
            ScheduleState::Unknown => self.state_unknown,
        }
    }

    /// `Global reset · all plans · 5-hour limit, weekly limit`: every id
    /// of a record's type and scope in words (the pages' summary line and
    /// every push message's); windows not stated are left out.
    pub fn what(&self, record: &Record) -> String {
        let mut out = self.type_words(record.reset_type).to_owned();
        if let Some(scope) = &record.scope {
            let plans = self.plan_words(&scope.plans);
            if !plans.is_empty() {
                out.push_str(" · ");
                out.push_str(&plans);
            }
            let windows = self.window_words(&scope.windows);
            if !windows.is_empty() {
                out.push_str(" · ");
                out.push_str(&windows);
            }
        }
        out
    }

    /// A scope's plans in words: every plan, not stated, or the plans' names.
    pub fn plan_words(&self, plans: &[String]) -> String {
        if plans.iter().any(|p| p == "all") {
            self.all_plans.to_owned()
        } else if !plans.is_empty() && plans.iter().all(|p| p == "unknown") {
            self.plans_unknown.to_owned()
        } else {
            let named: Vec<Cow<str>> = plans
                .iter()
                .filter(|p| *p != "unknown")
                .map(|p| self.plan(p))
                .collect();
            named.join(self.list_separator)
        }
    }

    /// A scope's quota windows in words; empty when none is stated.
    pub fn window_words(&self, windows: &[String]) -> String {
        let named: Vec<Cow<str>> = windows
            .iter()
            .filter(|w| *w != "unknown")
            .map(|w| self.window(w))
            .collect();
        named.join(self.list_separator)
    }

    /// `secs` seconds ago, in words.
    pub fn ago(&self, secs: i64) -> String {
        let around = |(before, after): (&str, &str), n: i64| format!("{before}{n}{after}");
        match secs {
            s if s < 60 => self.just_now.to_owned(),
            s if s < 3_600 => around(self.minutes_ago, s / 60),
            s if s < 172_800 => around(self.hours_ago, s / 3_600),
            s => around(self.days_ago, s / 86_400),
        }
    }
}

fn lookup(table: &'static [(&'static str, &'static str)], id: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(key, _)| *key == id)
        .map(|(_, words)| *words)
}

#[cfg(test)]
mod tests {

    #[test]
    fn durations_and_zones_are_said_as_people_say_them() {
        let (en, zh) = (Lang::En.notify(), Lang::Zh.notify());
        for (minutes, english, chinese) in [
            (0, "less than a minute", "不到 1 分钟"),
            (1, "1 minute", "1 分钟"),
            (10, "10 minutes", "10 分钟"),
            (60, "1 hour", "1 小时"),
            (90, "1 hour 30 minutes", "1 小时 30 分钟"),
            (180, "3 hours", "3 小时"),
            (1440, "24 hours", "24 小时"),
        ] {
            assert_eq!(en.duration(minutes), english);
            assert_eq!(zh.duration(minutes), chinese);
        }
        let at = crate::model::Timestamp::parse("2026-12-01T10:00:00.000Z")
            .unwrap()
            .to_datetime();
        for (zone, english, chinese) in [
            (chrono_tz::Asia::Shanghai, "Asia/Shanghai", "北京时间"),
            (chrono_tz::Asia::Hong_Kong, "Asia/Hong_Kong", "香港时间"),
            (chrono_tz::America::New_York, "America/New_York", "UTC-5"),
            (chrono_tz::Asia::Kolkata, "Asia/Kolkata", "UTC+5:30"),
        ] {
            assert_eq!(en.zone_name(zone, at), english);
            assert_eq!(zh.zone_name(zone, at), chinese);
        }
    }
    use super::{Lang, EN, ZH};

    #[test]
    fn counts_take_the_plural_form_of_their_language() {
        assert_eq!(EN.count(&EN.heatmap_cell, 1), "1 completion on ");
        assert_eq!(EN.count(&EN.heatmap_cell, 2), "2 completions on ");
        assert_eq!(EN.count(&EN.heatmap_cell, 0), "0 completions on ");
        assert_eq!(ZH.count(&ZH.heatmap_cell, 1), "1 次重置，日期 ");
        assert_eq!(ZH.count(&ZH.heatmap_cell, 2), "2 次重置，日期 ");
    }

    #[test]
    fn both_tables_name_the_same_identifiers() {
        fn ids(table: &[(&'static str, &'static str)]) -> Vec<&'static str> {
            table.iter().map(|(id, _)| *id).collect()
        }
        assert_eq!(ids(EN.plan_names), ids(ZH.plan_names));
        assert_eq!(ids(EN.window_names), ids(ZH.window_names));
        assert_eq!(EN.plan("plus"), "Plus");
        assert_eq!(ZH.window("weekly"), "每周限额");
        assert_eq!(EN.plan("mystery"), "Mystery");
        assert_eq!(EN.plan("pro_plus"), "Pro plus");
        assert_eq!(ZH.window("five_minute"), "five minute");
    }

    #[test]
    fn accept_language_picks_the_highest_q_of_the_two() {
        assert_eq!(Lang::negotiate(None), Lang::En);
        assert_eq!(Lang::negotiate(Some("zh-CN,zh;q=0.9,en;q=0.8")), Lang::Zh);
        assert_eq!(Lang::negotiate(Some("en-US,zh;q=0.5")), Lang::En);
        assert_eq!(Lang::negotiate(Some("fr, zh-Hans;q=0.4")), Lang::Zh);
        assert_eq!(Lang::negotiate(Some("zh;q=0, en;q=0.1")), Lang::En);
        assert_eq!(Lang::negotiate(Some("de")), Lang::En);
        assert_eq!(Lang::negotiate(Some("zh;q=oops")), Lang::En);
    }
}
