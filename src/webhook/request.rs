//! Pure renderers: from one event to the request an endpoint's format
//! documents (method, URL, headers, body). No I/O and no clock: the
//! signing time is an argument.

use reqwest::Url;
use serde_json::json;

use crate::changes::Transition;
use crate::model::{Kind, Link, Record, ScheduleWindow, Timestamp};

use super::endpoint::Endpoint;
use super::format::Format;
use super::outbox::{OutboxEntry, ReminderFacts};
use super::target::{bark_key, telegram_parts, TargetError};
use crate::remind::ReminderKind;
use crate::site::i18n::{Lang, Notify};

/// The test event type (`webhook test`).
pub const TEST_EVENT: &str = "webhook.test";

/// One thing to tell an endpoint: a change from the outbox, or a test.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    /// The message id (`webhook-id`).
    pub id: &'a str,
    /// A change ([`crate::changes::EVENT_TYPES`]), a time event
    /// ([`crate::remind::ReminderKind`]) or `webhook.test`.
    pub event_type: &'a str,
    /// When it happened (the publish time).
    pub timestamp: Timestamp,
    /// The record (none for a test).
    pub record: Option<&'a Record>,
    /// The record's page on the status site, when it has one.
    pub page: Option<String>,
    /// The snapshot sequence.
    pub sequence: Option<u64>,
    /// The snapshot's `generatedAt`.
    pub generated_at: Option<Timestamp>,
    /// For a reminder: its lead and the instant it refers to.
    pub reminder: Option<&'a ReminderFacts>,
    /// `schedule.moved`: the window before.
    pub previous_window: Option<ScheduleWindow>,
    /// `schedule.fulfilled`: the completion that fulfilled it.
    pub completion: Option<&'a Record>,
    /// A completion's: the schedules it fulfilled in the same version.
    pub fulfils: &'a [Record],
}

impl<'a> Event<'a> {
    /// The event of an outbox entry.
    pub fn of(entry: &'a OutboxEntry) -> Self {
        Self {
            id: &entry.id,
            event_type: &entry.event_type,
            timestamp: entry.published_at,
            record: Some(&entry.record),
            page: None,
            sequence: Some(entry.sequence),
            generated_at: Some(entry.generated_at),
            reminder: entry.reminder.as_ref(),
            previous_window: entry.previous_window,
            completion: entry.completion.as_ref(),
            fulfils: &entry.fulfils,
        }
    }
}

/// A request ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Always POST for the formats here.
    pub method: &'static str,
    /// Where it goes.
    pub url: Url,
    /// Headers, names in lowercase.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// Why an event cannot be rendered for an endpoint.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The target URL does not fit the format.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The standard format's secret is missing or malformed.
    #[error("the endpoint has no usable signing secret")]
    Secret,
    /// The format does not send HTTP requests (e-mail).
    #[error("e-mail is not sent as an HTTP request")]
    NotHttp,
}

/// Renders `event` for `endpoint`; `signed_at` is the Unix time of the attempt.
pub fn render(endpoint: &Endpoint, event: &Event, signed_at: i64) -> Result<Request, RenderError> {
    let url = Url::parse(&endpoint.url).map_err(|e| TargetError::Url(e.to_string()))?;
    // The human message of the ready-made formats, in the endpoint's words.
    let message = || message(event, endpoint.language, endpoint.zone()).neutralised();
    match endpoint.format {
        Format::Standard => {
            let secret = endpoint.secret.as_deref().ok_or(RenderError::Secret)?;
            standard(url, secret, event, signed_at)
        }
        Format::Ntfy => Ok(ntfy(url, message())),
        Format::Discord => Ok(discord(url, message())),
        Format::Slack => Ok(slack(url, message())),
        Format::Telegram => telegram(url, message()),
        Format::Bark => bark(url, message()),
        Format::Feishu => Ok(feishu(url, message(), endpoint.language)),
        // Not an HTTP request: [`super::email`] composes and sends it.
        Format::Email => Err(RenderError::NotHttp),
    }
}

/// The Standard Webhooks request (<https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md>):
/// the payload `{type, timestamp, data}` and the three `webhook-*` headers.
fn standard(url: Url, secret: &str, event: &Event, signed_at: i64) -> Result<Request, RenderError> {
    // Structs, not `json!`: the record keeps the field order the API serves.
    #[derive(serde::Serialize)]
    struct Payload<'a, D> {
        #[serde(rename = "type")]
        event_type: &'a str,
        timestamp: Timestamp,
        data: D,
    }
    let body = match (
        event.reminder,
        event.record,
        event.sequence,
        event.generated_at,
    ) {
        // A reminder's data is the one every channel sends.
        (Some(reminder), Some(record), Some(sequence), Some(generated_at)) => {
            serde_json::to_vec(&Payload {
                event_type: event.event_type,
                timestamp: event.timestamp,
                data: crate::remind::ReminderData {
                    record,
                    sequence,
                    generated_at,
                    lead_minutes: reminder.lead_minutes,
                    at: reminder.at,
                },
            })
        }
        _ => serde_json::to_vec(&Payload {
            event_type: event.event_type,
            timestamp: event.timestamp,
            data: crate::changes::ChangeData {
                record: event.record,
                sequence: event.sequence,
                generated_at: event.generated_at,
                previous_window: event.previous_window,
                completion: event.completion,
            },
        }),
    }
    .expect("a payload serialises");
    let signature =
        super::sign::sign(secret, event.id, signed_at, &body).map_err(|_| RenderError::Secret)?;
    Ok(Request {
        method: "POST",
        url,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("webhook-id".into(), event.id.to_owned()),
            ("webhook-timestamp".into(), signed_at.to_string()),
            ("webhook-signature".into(), signature),
        ],
        body,
    })
}

/// Discord, "Execute Webhook" (<https://discord.com/developers/docs/resources/webhook#execute-webhook>):
/// POST JSON with `content` (at most 2000 characters) to the webhook URL;
/// `allowed_mentions` with an empty `parse` list, as the page advises, so
/// no text can mention `@everyone`, a role or a user. Links as `<url>`.
fn discord(url: Url, message: Message) -> Request {
    let text = message.render(super::markup::discord, |link| format!("<{link}>"));
    json_post(
        url,
        &json!({ "content": clip(&text, 2000), "allowed_mentions": { "parse": [] } }),
    )
}

/// Slack, "Sending messages using incoming webhooks"
/// (<https://api.slack.com/messaging/webhooks>): POST JSON `{text}` to the
/// webhook URL, the text escaped as "Escaping text" asks
/// (<https://api.slack.com/reference/surfaces/formatting#escaping>).
/// Mattermost and Rocket.Chat incoming webhooks accept the same.
fn slack(url: Url, message: Message) -> Request {
    let text = message.render(super::markup::slack, |link| link.to_string());
    json_post(url, &json!({ "text": text }))
}

/// Feishu custom bot, "Custom bot usage guide"
/// (<https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot>):
/// POST JSON to `https://open.feishu.cn/open-apis/bot/v2/hook/<token>`, as
/// a `post` (rich text) message: a title and one paragraph per line of
/// `text` elements, which are literal (an `<at>` mention is only ever its
/// own `at` element, never parsed from text), and `a` elements for links;
/// the post is filed under the endpoint's language (`en_us`, `zh_cn`).
fn feishu(url: Url, message: Message, language: Lang) -> Request {
    let locale = match language {
        Lang::En => "en_us",
        Lang::Zh => "zh_cn",
    };
    let text = |t: &str| json!({ "tag": "text", "text": super::markup::feishu(t) });
    let mut paragraphs: Vec<serde_json::Value> = message
        .lines
        .iter()
        .map(|line| json!([text(line)]))
        .collect();
    for (label, link) in message.links() {
        paragraphs.push(json!([
            text(label),
            { "tag": "a", "text": link.as_str(), "href": link.as_str() }
        ]));
    }
    json_post(
        url,
        &json!({
            "msg_type": "post",
            "content": { "post": { locale: {
                "title": super::markup::feishu(&message.title),
                "content": paragraphs,
            } } }
        }),
    )
}

fn json_post(url: Url, body: &serde_json::Value) -> Request {
    Request {
        method: "POST",
        url,
        headers: vec![("content-type".into(), "application/json".into())],
        body: serde_json::to_vec(body).expect("a body serialises"),
    }
}

/// ntfy, "Publishing" (<https://docs.ntfy.sh/publish/>): POST the message as
/// the body to the topic URL; `Title`, `Tags` and `Click` as headers. The
/// body is plain text (no `Markdown` header is sent) of at most 4,000
/// bytes (past 4,096 ntfy turns a message into an attachment); `Click`
/// takes any scheme, so only a link ([`Link`]) goes there. A title that
/// is not ASCII (Chinese) is an RFC 2047 encoded word, as ntfy documents
/// for headers. A reminder is tagged `alarm_clock`, a change
/// `arrows_counterclockwise`.
fn ntfy(url: Url, message: Message) -> Request {
    let title = if message.title.is_ascii() {
        message.title.clone()
    } else {
        use base64::Engine;
        format!(
            "=?UTF-8?B?{}?=",
            base64::engine::general_purpose::STANDARD.encode(message.title.as_bytes())
        )
    };
    let tag = if message.reminder {
        "alarm_clock"
    } else {
        "arrows_counterclockwise"
    };
    let mut headers = vec![
        (
            "content-type".to_owned(),
            "text/plain; charset=utf-8".to_owned(),
        ),
        ("title".to_owned(), title),
        ("tags".to_owned(), tag.to_owned()),
    ];
    if let Some((_, link)) = message.links().next() {
        headers.push(("click".to_owned(), link.to_string()));
    }
    Request {
        method: "POST",
        url,
        headers,
        body: clip_bytes(&message.body(), 4000).into_bytes(),
    }
}

/// Telegram Bot API `sendMessage` (<https://core.telegram.org/bots/api#sendmessage>):
/// POST JSON `{chat_id, text}` to `…/bot<token>/sendMessage`, without
/// `parse_mode` (so nothing is Markdown or HTML). The target is
/// `https://api.telegram.org/bot<token>/sendMessage?chat_id=<chat>`; the chat
/// id moves from the query into the body.
fn telegram(url: Url, message: Message) -> Result<Request, RenderError> {
    let (endpoint, chat_id) = telegram_parts(&url)?;
    let text = message.render(super::markup::telegram, |link| link.to_string());
    Ok(json_post(
        endpoint,
        &json!({ "chat_id": chat_id, "text": clip(&text, 4096) }),
    ))
}
/// Bark (<https://bark.day.app/#/tutorial>, "POST requests support JSON"):
/// POST JSON `{title, body, url, group}` to `https://api.day.app/<device key>`.
/// The body is plain (no `markdown` field); `url` opens any scheme on the
/// phone, so only a link ([`Link`]) goes there; nothing from a record sets
/// `level`, `call`, `sound` or `icon`.
fn bark(url: Url, message: Message) -> Result<Request, RenderError> {
    bark_key(&url)?;
    let mut body = json!({ "title": message.title, "body": message.body(), "group": "resetctl" });
    if let Some((_, link)) = message.links().next() {
        body["url"] = json!(link.as_str());
    }
    Ok(json_post(url, &body))
}
/// A short human message: what happened, for whom, when, and the source.
/// Its lines may carry an upstream's or an operator's text: each format
/// escapes them with its own [`markup`](super::markup) function.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// One line.
    pub title: String,
    /// The details, one per line.
    pub lines: Vec<String>,
    /// The source post, when its URL may be a link.
    pub link: Option<Link>,
    /// The record's page on the status site.
    pub page: Option<Link>,
    /// The words of its language (the links' labels).
    pub words: &'static Notify,
    /// Whether it is a reminder.
    pub reminder: bool,
}

impl Message {
    /// The message with its title and every line neutralised
    /// ([`super::markup::neutralise`]): what every format and e-mail send.
    pub fn neutralised(mut self) -> Self {
        super::markup::neutralise(&mut self.title);
        self.lines.iter_mut().for_each(super::markup::neutralise);
        self
    }

    /// The links, labelled: the record's page first, then the source post.
    pub fn links(&self) -> impl Iterator<Item = (&'static str, &Link)> {
        let page = self.page.iter().map(|l| (self.words.details, l));
        page.chain(self.link.iter().map(|l| (self.words.source, l)))
    }

    /// The details and the links, as plain text.
    pub fn body(&self) -> String {
        self.render_body(|t| t.to_owned(), |l| l.to_string())
    }

    /// Title, details and links: every line through `escape`, every link
    /// through `link`.
    pub fn render(
        &self,
        escape: impl Fn(&str) -> String,
        link: impl Fn(&Link) -> String,
    ) -> String {
        format!(
            "{}\n{}",
            escape(&self.title),
            self.render_body(&escape, link)
        )
    }

    fn render_body(
        &self,
        escape: impl Fn(&str) -> String,
        link: impl Fn(&Link) -> String,
    ) -> String {
        let mut lines: Vec<String> = self.lines.iter().map(|l| escape(l)).collect();
        for (label, url) in self.links() {
            lines.push(format!("{}{}", escape(label), link(url)));
        }
        lines.join("\n")
    }

    /// Title, details and links, as plain text.
    pub fn text(&self) -> String {
        self.render(|t| t.to_owned(), |l| l.to_string())
    }
}

/// The human message of an event, in `language`, local times in `zone`:
/// a headline with the time it is about, then the record's type and scope
/// in words, its window, what the event adds (the window before a move,
/// the time a completion was scheduled for), and the record's text. Every
/// word comes from the tables the pages use ([`crate::site::i18n`]).
pub fn message(event: &Event, language: Lang, zone: chrono_tz::Tz) -> Message {
    let words = language.notify();
    let strings = language.strings();
    let Some(record) = event.record else {
        return Message {
            title: words.test_title.to_owned(),
            lines: vec![words.test_line.replace("{id}", event.id)],
            link: None,
            page: None,
            words,
            reminder: false,
        };
    };
    let window = record.schedule_window;
    let when = |w: ScheduleWindow| window_words(w, words, zone);
    let completed = record
        .completed_at
        .or_else(|| event.completion.and_then(|c| c.completed_at));
    let time_event = event
        .reminder
        .and(ReminderKind::of_event_type(event.event_type));
    // The headline, and the time it is about when it has one.
    let (headline, about): (String, Option<String>) = match time_event {
        Some(ReminderKind::Upcoming) => (
            words.upcoming.replace(
                "{n}",
                &event
                    .reminder
                    .and_then(|r| r.lead_minutes)
                    .unwrap_or(0)
                    .to_string(),
            ),
            window.map(when),
        ),
        Some(ReminderKind::WindowStarted) => match window {
            Some(w) if w.end_at > w.start_at => (words.window_open.to_owned(), Some(when(w))),
            _ => (words.due_now.to_owned(), window.map(when)),
        },
        Some(ReminderKind::WindowEnded) => (
            words.window_closed.to_owned(),
            window.map(|w| local_and_utc(w.end_at, zone)),
        ),
        Some(ReminderKind::Elapsed) => (words.unconfirmed.to_owned(), window.map(when)),
        None => match (Transition::of_event_type(event.event_type), record.kind) {
            (Some(Transition::Created), Kind::Scheduled) => {
                (words.announced.to_owned(), window.map(when))
            }
            (Some(Transition::Created), Kind::Completed) => (
                words.completed.to_owned(),
                completed.map(|at| local_and_utc(at, zone)),
            ),
            (Some(Transition::Moved), _) => (words.moved.to_owned(), window.map(when)),
            (Some(Transition::Fulfilled), _) => (
                words.fulfilled.to_owned(),
                completed.map(|at| local_and_utc(at, zone)),
            ),
            (Some(Transition::Withdrawn), Kind::Scheduled) => {
                (words.schedule_withdrawn.to_owned(), window.map(when))
            }
            (Some(Transition::Withdrawn), Kind::Completed) => (
                words.completion_withdrawn.to_owned(),
                completed.map(|at| local_and_utc(at, zone)),
            ),
            (_, Kind::Scheduled) => (words.schedule_updated.to_owned(), window.map(when)),
            (_, Kind::Completed) => (
                words.completion_updated.to_owned(),
                completed.map(|at| local_and_utc(at, zone)),
            ),
        },
    };
    let title = match about {
        Some(about) => format!("{headline}{}{about}", strings.colon),
        None => headline,
    };
    let mut lines = vec![strings.what(record)];
    match (time_event, Transition::of_event_type(event.event_type)) {
        (Some(ReminderKind::Elapsed), _) => lines.push(words.unconfirmed_line.to_owned()),
        (_, Some(Transition::Moved)) => {
            if let Some(before) = event.previous_window {
                lines.push(format!("{}{}", words.was, when(before)));
            }
        }
        (_, Some(Transition::Fulfilled)) => {
            if let Some(w) = window {
                lines.push(format!("{}{}", words.as_scheduled, when(w)));
            }
        }
        (None, Some(Transition::Updated)) => {
            if let Some(state) = record.schedule_state {
                lines.push(format!("{}{}", words.state, strings.state_words(state)));
            }
        }
        _ => {}
    }
    for schedule in event.fulfils {
        if let Some(w) = schedule.schedule_window {
            lines.push(format!("{}{}", words.as_scheduled, when(w)));
        }
    }
    if let Some(text) = record.text.as_deref().filter(|t| !t.is_empty()) {
        lines.push(clip(text, 280));
    }
    Message {
        title,
        lines,
        link: record.source.link(),
        page: event.page.as_deref().and_then(Link::parse),
        words,
        reminder: time_event.is_some(),
    }
}

/// A window in words: `2026-11-24 18:00 UTC` for an instant (with the
/// local time first in another zone), `2026-11-24 18:00 to 2026-11-24
/// 20:00 UTC` for a longer one.
fn window_words(window: ScheduleWindow, words: &Notify, zone: chrono_tz::Tz) -> String {
    let (start, end) = (window.start_at, window.end_at);
    if start == end {
        local_and_utc(start, zone)
    } else if zone == chrono_tz::UTC {
        format!("{}{}{} UTC", utc(start), words.to, utc(end))
    } else {
        format!(
            "{}{}{}",
            local_and_utc(start, zone),
            words.to,
            local_and_utc(end, zone)
        )
    }
}

/// `2026-11-24 18:00 UTC`, or in another zone
/// `2026-11-25 02:00 Asia/Shanghai (2026-11-24 18:00 UTC)`.
fn local_and_utc(at: Timestamp, zone: chrono_tz::Tz) -> String {
    if zone == chrono_tz::UTC {
        format!("{} UTC", utc(at))
    } else {
        format!(
            "{} {} ({} UTC)",
            crate::civil::local_minutes(at, zone),
            zone.name(),
            utc(at)
        )
    }
}

/// `2026-11-24 18:00` (UTC, minutes).
fn utc(at: Timestamp) -> String {
    at.to_datetime().format("%Y-%m-%d %H:%M").to_string()
}

/// `text` cut to at most `max_bytes` bytes, at a character boundary.
fn clip_bytes(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut end = max_bytes - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars - 1).collect();
    out.push('…');
    out
}
