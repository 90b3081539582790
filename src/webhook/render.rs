//! Pure renderers: from one event to the request an endpoint's format
//! documents (method, URL, headers, body). No I/O and no clock: the
//! signing time is an argument.

use reqwest::Url;
use serde_json::json;

use crate::model::{Kind, Record, ScheduleState, Timestamp};

use super::endpoint::Endpoint;
use super::format::Format;
use super::outbox::OutboxEntry;

/// The test event type (`webhook test`).
pub const TEST_EVENT: &str = "webhook.test";

/// One thing to tell an endpoint: a change from the outbox, or a test.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    /// The message id (`webhook-id`).
    pub id: &'a str,
    /// `record.created`, `record.updated`, `record.removed` or `webhook.test`.
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
    #[error("{0}")]
    Target(String),
    /// The standard format's secret is missing or malformed.
    #[error("the endpoint has no usable signing secret")]
    Secret,
}

/// Checks that `url` fits `format` (for instance, Telegram needs a chat id).
pub fn check_target(format: Format, url: &Url) -> Result<(), String> {
    match format {
        Format::Telegram => telegram_parts(url).map(|_| ()),
        Format::Bark => bark_key(url).map(|_| ()),
        _ => Ok(()),
    }
}

/// Renders `event` for `endpoint`; `signed_at` is the Unix time of the attempt.
pub fn render(endpoint: &Endpoint, event: &Event, signed_at: i64) -> Result<Request, RenderError> {
    let url = Url::parse(&endpoint.url).map_err(|e| RenderError::Target(e.to_string()))?;
    match endpoint.format {
        Format::Standard => {
            let secret = endpoint.secret.as_deref().ok_or(RenderError::Secret)?;
            standard(url, secret, event, signed_at)
        }
        Format::Ntfy => Ok(ntfy(url, event)),
        Format::Discord => Ok(discord(url, event)),
        Format::Slack => Ok(slack(url, event)),
        Format::Telegram => telegram(url, event),
        Format::Bark => bark(url, event),
        Format::Feishu => Ok(feishu(url, event)),
    }
}

/// The Standard Webhooks request (<https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md>):
/// the payload `{type, timestamp, data}` and the three `webhook-*` headers.
fn standard(url: Url, secret: &str, event: &Event, signed_at: i64) -> Result<Request, RenderError> {
    // Structs, not `json!`: the record keeps the field order the API serves.
    #[derive(serde::Serialize)]
    struct Payload<'a> {
        #[serde(rename = "type")]
        event_type: &'a str,
        timestamp: Timestamp,
        data: Data<'a>,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Data<'a> {
        record: Option<&'a Record>,
        sequence: Option<u64>,
        generated_at: Option<Timestamp>,
    }
    let body = serde_json::to_vec(&Payload {
        event_type: event.event_type,
        timestamp: event.timestamp,
        data: Data {
            record: event.record,
            sequence: event.sequence,
            generated_at: event.generated_at,
        },
    })
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
/// POST JSON with `content` (at most 2000 characters) to the webhook URL.
fn discord(url: Url, event: &Event) -> Request {
    json_post(
        url,
        &json!({ "content": clip(&message(event).text(), 2000) }),
    )
}

/// Slack, "Sending messages using incoming webhooks"
/// (<https://api.slack.com/messaging/webhooks>): POST JSON `{text}` to the
/// webhook URL. Mattermost and Rocket.Chat incoming webhooks accept the same.
fn slack(url: Url, event: &Event) -> Request {
    json_post(url, &json!({ "text": message(event).text() }))
}

/// Feishu custom bot, "Custom bot usage guide"
/// (<https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot>):
/// POST JSON `{"msg_type": "text", "content": {"text": …}}` to
/// `https://open.feishu.cn/open-apis/bot/v2/hook/<token>`.
fn feishu(url: Url, event: &Event) -> Request {
    json_post(
        url,
        &json!({ "msg_type": "text", "content": { "text": message(event).text() } }),
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
/// the body to the topic URL; `Title`, `Tags` and `Click` as headers.
fn ntfy(url: Url, event: &Event) -> Request {
    let message = message(event);
    let mut headers = vec![
        (
            "content-type".to_owned(),
            "text/plain; charset=utf-8".to_owned(),
        ),
        // Headers must be ASCII-safe: ntfy documents RFC 2047 for others; the title here is ASCII.
        ("title".to_owned(), message.title.clone()),
        ("tags".to_owned(), "arrows_counterclockwise".to_owned()),
    ];
    if let Some(link) = message.page.as_ref().or(message.link.as_ref()) {
        headers.push(("click".to_owned(), link.clone()));
    }
    Request {
        method: "POST",
        url,
        headers,
        body: message.body().into_bytes(),
    }
}

/// Telegram Bot API `sendMessage` (<https://core.telegram.org/bots/api#sendmessage>):
/// POST JSON `{chat_id, text}` to `…/bot<token>/sendMessage`. The target is
/// `https://api.telegram.org/bot<token>/sendMessage?chat_id=<chat>`; the chat
/// id moves from the query into the body.
fn telegram(url: Url, event: &Event) -> Result<Request, RenderError> {
    let (endpoint, chat_id) = telegram_parts(&url).map_err(RenderError::Target)?;
    Ok(json_post(
        endpoint,
        &json!({ "chat_id": chat_id, "text": clip(&message(event).text(), 4096) }),
    ))
}

fn telegram_parts(url: &Url) -> Result<(Url, String), String> {
    let chat_id = url
        .query_pairs()
        .find(|(k, _)| k == "chat_id")
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty())
        .ok_or("a telegram target needs ?chat_id=<chat> (https://api.telegram.org/bot<token>/sendMessage?chat_id=…)")?;
    let mut endpoint = url.clone();
    endpoint.set_query(None);
    if !endpoint.path().ends_with("/sendMessage") {
        let path = format!("{}/sendMessage", endpoint.path().trim_end_matches('/'));
        endpoint.set_path(&path);
    }
    Ok((endpoint, chat_id))
}

/// Bark (<https://bark.day.app/#/tutorial>, "POST requests support JSON"):
/// POST JSON `{title, body, url, group}` to `https://api.day.app/<device key>`.
fn bark(url: Url, event: &Event) -> Result<Request, RenderError> {
    bark_key(&url).map_err(RenderError::Target)?;
    let message = message(event);
    let mut body = json!({ "title": message.title, "body": message.body(), "group": "resetctl" });
    if let Some(link) = message.page.as_ref().or(message.link.as_ref()) {
        body["url"] = json!(link);
    }
    Ok(json_post(url, &body))
}

fn bark_key(url: &Url) -> Result<String, String> {
    url.path_segments()
        .and_then(|mut s| s.next_back().map(str::to_owned))
        .filter(|k| !k.is_empty())
        .ok_or_else(|| "a bark target is https://api.day.app/<device key>".to_owned())
}

/// A short human message: what happened, for whom, when, and the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// One line (ASCII).
    pub title: String,
    /// The details, one per line.
    pub lines: Vec<String>,
    /// The source post.
    pub link: Option<String>,
    /// The record's page on the status site.
    pub page: Option<String>,
}

impl Message {
    /// The details and the link.
    pub fn body(&self) -> String {
        let mut lines = self.lines.clone();
        if let Some(page) = &self.page {
            lines.push(format!("Details: {page}"));
        }
        if let Some(link) = &self.link {
            lines.push(format!("Source: {link}"));
        }
        lines.join("\n")
    }

    /// Title, details and link.
    pub fn text(&self) -> String {
        format!("{}\n{}", self.title, self.body())
    }
}

/// The human message of an event.
pub fn message(event: &Event) -> Message {
    let Some(record) = event.record else {
        return Message {
            title: "resetctl test notification".to_owned(),
            lines: vec![format!(
                "This endpoint receives resetctl changes (message {}).",
                event.id
            )],
            link: None,
            page: None,
        };
    };
    let what = match (record.kind, event.event_type) {
        (Kind::Scheduled, "record.created") => "Reset announced",
        (Kind::Completed, "record.created") => "Reset completed",
        (Kind::Scheduled, "record.removed") => "Scheduled reset withdrawn",
        (Kind::Completed, "record.removed") => "Completed reset withdrawn",
        (Kind::Scheduled, _) => match record.schedule_state {
            Some(ScheduleState::Fulfilled) => "Scheduled reset fulfilled",
            Some(ScheduleState::Elapsed) => "Scheduled reset window elapsed",
            _ => "Scheduled reset updated",
        },
        (Kind::Completed, _) => "Completed reset updated",
    };
    let whom = match &record.scope {
        None => "plans not stated".to_owned(),
        Some(scope) if scope.plans.is_empty() => "plans not stated".to_owned(),
        Some(scope) => format!("plans: {}", scope.plans.join(", ")),
    };
    let mut lines = vec![format!("{} reset, {whom}", record.reset_type.as_str())];
    if let Some(window) = record.schedule_window {
        if window.start_at == window.end_at {
            lines.push(format!("When: {} UTC", utc(window.start_at)));
        } else {
            lines.push(format!(
                "Window: {} to {} UTC",
                utc(window.start_at),
                utc(window.end_at)
            ));
        }
    }
    if let Some(state) = record.schedule_state {
        lines.push(format!("State: {}", state.as_str()));
    }
    if let Some(at) = record
        .completed_at
        .filter(|_| record.kind == Kind::Completed)
    {
        lines.push(format!("Completed: {} UTC", utc(at)));
    }
    if let Some(text) = record.text.as_deref().filter(|t| !t.is_empty()) {
        lines.push(clip(text, 280));
    }
    Message {
        title: what.to_owned(),
        lines,
        link: record.source.url.clone(),
        page: event.page.clone(),
    }
}

/// `2026-11-24 18:00` (UTC, minutes).
fn utc(at: Timestamp) -> String {
    at.to_datetime().format("%Y-%m-%d %H:%M").to_string()
}

fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars - 1).collect();
    out.push('…');
    out
}
