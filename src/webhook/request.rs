//! Pure renderers: from one event (the standard format) or one message
//! for people ([`super::message`], every other format) to the request an
//! endpoint's format documents (method, URL, headers, body). No I/O and no
//! clock: the signing time is an argument.

use reqwest::Url;
use serde_json::json;

use crate::model::{Record, ScheduleWindow, Timestamp};

use super::endpoint::Endpoint;
use super::format::Format;
use super::message::{clip, Line, Message};
use super::outbox::{OutboxEntry, ReminderFacts};
use super::target::{bark_key, telegram_parts, TargetError};
use crate::site::i18n::Lang;

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
}

impl<'a> Event<'a> {
    /// The event of an outbox entry.
    pub fn of(entry: &'a OutboxEntry) -> Self {
        Self {
            id: &entry.id,
            event_type: &entry.event_type,
            timestamp: entry.published_at,
            record: Some(&entry.record),
            sequence: Some(entry.sequence),
            generated_at: Some(entry.generated_at),
            reminder: entry.reminder.as_ref(),
            previous_window: entry.previous_window,
            completion: entry.completion.as_ref(),
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

/// Renders `event` for a standard endpoint; `signed_at` is the Unix time
/// of the attempt.
pub fn render(endpoint: &Endpoint, event: &Event, signed_at: i64) -> Result<Request, RenderError> {
    let url = Url::parse(&endpoint.url).map_err(|e| TargetError::Url(e.to_string()))?;
    let secret = endpoint.secret.as_deref().ok_or(RenderError::Secret)?;
    standard(url, secret, event, signed_at)
}

/// Renders `message` for an endpoint of a ready-made format (the request
/// its service documents).
pub fn render_message(endpoint: &Endpoint, message: &Message) -> Result<Request, RenderError> {
    let url = Url::parse(&endpoint.url).map_err(|e| TargetError::Url(e.to_string()))?;
    let message = &message.clone().neutralised();
    match endpoint.format {
        Format::Ntfy => Ok(ntfy(url, message)),
        Format::Discord => Ok(discord(url, message)),
        Format::Slack => Ok(slack(url, message)),
        Format::Telegram => telegram(url, message),
        Format::Bark => bark(url, message),
        Format::Feishu => Ok(feishu(url, message, endpoint.language)),
        // Signed events, not messages.
        Format::Standard => Err(RenderError::Secret),
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
fn discord(url: Url, message: &Message) -> Request {
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
fn slack(url: Url, message: &Message) -> Request {
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
fn feishu(url: Url, message: &Message, language: Lang) -> Request {
    let locale = match language {
        Lang::En => "en_us",
        Lang::Zh => "zh_cn",
    };
    let text = |t: &str| json!({ "tag": "text", "text": super::markup::feishu(t) });
    let paragraphs: Vec<serde_json::Value> = message
        .lines
        .iter()
        .map(|line| match line {
            Line::Text(line) => json!([text(line)]),
            Line::Link(label, link) => json!([
                text(label),
                { "tag": "a", "text": link.as_str(), "href": link.as_str() }
            ]),
        })
        .collect();
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
fn ntfy(url: Url, message: &Message) -> Request {
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
fn telegram(url: Url, message: &Message) -> Result<Request, RenderError> {
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
fn bark(url: Url, message: &Message) -> Result<Request, RenderError> {
    bark_key(&url)?;
    let mut body = json!({ "title": message.title, "body": message.body(), "group": "resetctl" });
    if let Some((_, link)) = message.links().next() {
        body["url"] = json!(link.as_str());
    }
    Ok(json_post(url, &body))
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
