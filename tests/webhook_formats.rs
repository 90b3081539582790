//! The ready-made formats: for each service, a loopback receiver checks the
//! exact request (method, path, headers, body fields) against the request
//! shape that service documents (named in src/webhook/request.rs).

use serde_json::{json, Value};

use crate::util::receiver::Receiver;
use crate::util::World;
use crate::webhooks::{add, deliver_at, schedule};

const T0: &str = "2026-11-20T10:00:00.000Z";
const A: &str = "2090000000000000001";
const SOURCE: &str = "https://x.com/h/status/2090000000000000001";

/// Adds one endpoint of `format` at `target` (a receiver path), publishes
/// one announced reset, delivers, and returns the one request.
fn one_request(format: &str, target: &str) -> Value {
    let r = Receiver::start();
    let w = World::new();
    let (_, secret) = add(&w, &r.url(target), &["--format", format]);
    assert!(
        secret.is_none(),
        "{format}: only the standard format has a secret"
    );
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    let requests = r.requests();
    assert_eq!(requests.len(), 1, "{format}: {requests:?}");
    let request = requests.into_iter().next().unwrap();
    assert_eq!(request["method"], "POST", "{format}");
    for header in ["webhook-id", "webhook-signature", "webhook-timestamp"] {
        assert!(
            request["headers"][header].is_null(),
            "{format}: no {header}"
        );
    }
    request
}

fn body_json(request: &Value) -> Value {
    assert!(
        request["headers"]["content-type"]
            .as_str()
            .unwrap()
            .starts_with("application/json"),
        "{request:#}"
    );
    serde_json::from_str(request["body"].as_str().unwrap()).unwrap()
}

/// The title of the message: what happened and when (UTC).
const TITLE: &str = "Reset announced: 2026-11-24 18:00 UTC";

/// The human message, exactly: the title, the reset's type and plans in
/// words, the operator's text, and the source post (its link as the
/// format writes links).
#[track_caller]
fn assert_message(text: &str, link: &str) {
    assert_eq!(
        text,
        format!("{TITLE}\nGlobal reset · Pro\nResets on Monday\nSource: {link}")
    );
}

#[test]
fn ntfy_posts_the_message_to_the_topic_with_title_and_click() {
    let request = one_request("ntfy", "/ntfy/resets");
    assert_eq!(request["path"], "/ntfy/resets");
    let headers = &request["headers"];
    assert!(headers["content-type"]
        .as_str()
        .unwrap()
        .starts_with("text/plain"));
    assert_eq!(headers["title"], TITLE);
    assert_eq!(headers["click"], SOURCE);
    assert!(headers["tags"].is_string());
    let body = request["body"].as_str().unwrap();
    assert_message(&format!("{TITLE}\n{body}"), SOURCE);
}

#[test]
fn discord_executes_the_webhook_with_content() {
    let request = one_request("discord", "/api/webhooks/123/tok");
    assert_eq!(request["path"], "/api/webhooks/123/tok");
    let body = body_json(&request);
    assert_eq!(body.as_object().unwrap().len(), 2, "{body}");
    assert_eq!(body["allowed_mentions"], json!({ "parse": [] }));
    let content = body["content"].as_str().unwrap();
    assert!(content.chars().count() <= 2000);
    // Discord's Markdown escape: a backslash before punctuation, shown as the character.
    assert_message(&content.replace('\\', ""), &format!("<{SOURCE}>"));
    assert!(content.contains(&format!("<{SOURCE}>")), "{content}");
}

#[test]
fn slack_posts_text_to_the_incoming_webhook() {
    let request = one_request("slack", "/services/T0/B0/X");
    assert_eq!(request["path"], "/services/T0/B0/X");
    let body = body_json(&request);
    assert_eq!(body.as_object().unwrap().len(), 1, "{body}");
    assert_message(body["text"].as_str().unwrap(), SOURCE);
}

#[test]
fn telegram_sends_a_message_to_the_chat_of_the_target() {
    let request = one_request("telegram", "/bot123:ABC/sendMessage?chat_id=-100200");
    assert_eq!(request["path"], "/bot123:ABC/sendMessage");
    assert_eq!(request["query"], "", "the chat id moves into the body");
    let body = body_json(&request);
    assert_eq!(body["chat_id"], "-100200");
    let text = body["text"].as_str().unwrap();
    assert!(text.chars().count() <= 4096);
    assert_message(text, SOURCE);
    // Without a chat id the target is refused.
    let w = World::new();
    let run = w.run(&[
        "webhook",
        "add",
        "http://127.0.0.1:9/bot1:A/sendMessage",
        "--format",
        "telegram",
        "--allow-private-targets",
    ]);
    assert_eq!(run.code, 64, "{run:?}");
    assert!(run.stderr.contains("chat_id"), "{run:?}");
}

#[test]
fn bark_pushes_title_body_and_url_to_the_device_key() {
    let request = one_request("bark", "/DeviceKey123");
    assert_eq!(request["path"], "/DeviceKey123");
    let body = body_json(&request);
    assert_eq!(body["title"], TITLE);
    assert_eq!(body["url"], SOURCE);
    assert_eq!(body["group"], "resetctl");
    assert_message(
        &format!("{TITLE}\n{}", body["body"].as_str().unwrap()),
        SOURCE,
    );
}

#[test]
fn feishu_posts_a_text_message_to_the_bot_hook() {
    let request = one_request("feishu", "/open-apis/bot/v2/hook/abc");
    assert_eq!(request["path"], "/open-apis/bot/v2/hook/abc");
    let body = body_json(&request);
    assert_eq!(body["msg_type"], "post");
    assert_eq!(body.as_object().unwrap().len(), 2, "{body}");
    let post = &body["content"]["post"]["en_us"];
    assert_eq!(post["title"], TITLE);
    assert_message(&format!("{TITLE}\n{}", feishu_text(post)), SOURCE);
    // The source post is a link element.
    let link = post["content"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p.as_array().unwrap())
        .find(|e| e["tag"] == "a")
        .expect("an a element");
    assert_eq!(link["href"], SOURCE);
}

/// The text of a Feishu `post`: its paragraphs' elements, one paragraph a line.
pub(crate) fn feishu_text(post: &Value) -> String {
    post["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|paragraph| {
            paragraph
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["text"].as_str().unwrap())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text that tries every service's mention and link syntax.
const HOSTILE: &str =
    r#"@everyone @here <!channel> <@U1> <at user_id="all">all</at> [x](https://evil) a&b"#;

/// Each ready-made format, given a record whose text is [`HOSTILE`]:
/// the one request it sends.
fn hostile_request(format: &str, target: &str) -> Value {
    let r = Receiver::start();
    let w = World::new();
    add(&w, &r.url(target), &["--format", format]);
    w.run(&[
        "--now",
        T0,
        "record",
        "schedule",
        "--post-url",
        SOURCE,
        "--at",
        "2026-11-24 10:00 -08:00",
        "--text",
        HOSTILE,
    ])
    .success();
    deliver_at(&w, T0).success();
    let requests = r.requests();
    assert_eq!(requests.len(), 1, "{format}: {requests:?}");
    requests.into_iter().next().unwrap()
}

#[test]
fn no_chat_format_lets_record_text_mention_a_channel_or_hide_a_link() {
    // Discord: mentions parsed from nothing, Markdown escaped.
    let body = body_json(&hostile_request("discord", "/api/webhooks/1/t"));
    assert_eq!(body["allowed_mentions"], json!({ "parse": [] }));
    let content = body["content"].as_str().unwrap();
    assert!(
        content.contains(r#"\@everyone \@here \<\!channel\> \<\@U1\>"#),
        "{content}"
    );
    assert!(content.contains(r"\[x\]\(https\:\/\/evil\)"), "{content}");
    // Slack (and Mattermost): & < > escaped; @ broken for Mattermost; no Markdown link.
    let text = body_json(&hostile_request("slack", "/services/T/B/X"))["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("@\u{200B}everyone @\u{200B}here &lt;!channel&gt; &lt;@\u{200B}U1&gt; &lt;at user_id=\"all\"&gt;all&lt;/at&gt; [x]\u{200B}(https://evil) a&amp;b"),
        "{text:?}"
    );
    // Feishu: a post whose text elements are literal; no at element; no tag can form.
    let body = body_json(&hostile_request("feishu", "/open-apis/bot/v2/hook/abc"));
    let post = &body["content"]["post"]["en_us"];
    let elements: Vec<&Value> = post["content"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p.as_array().unwrap())
        .collect();
    assert!(
        elements
            .iter()
            .all(|e| e["tag"] == "text" || e["tag"] == "a"),
        "{post}"
    );
    assert!(
        elements.iter().all(|e| e.get("un_escape").is_none()),
        "{post}"
    );
    let text = feishu_text(post);
    assert!(!text.contains("<at"), "{text:?}");
    assert!(text.contains("<\u{200B}at user_id"), "{text:?}");
    // Telegram: no parse mode; @ broken.
    let body = body_json(&hostile_request(
        "telegram",
        "/bot1:A/sendMessage?chat_id=-1",
    ));
    assert!(body.get("parse_mode").is_none(), "{body}");
    let text = body["text"].as_str().unwrap();
    assert!(text.contains("@\u{200B}everyone"), "{text:?}");
    assert!(!text.contains("@everyone"), "{text:?}");
    // ntfy and Bark: plain text, never asked to render Markdown.
    let request = hostile_request("ntfy", "/topic");
    for header in ["markdown", "x-markdown", "md", "x-template", "template"] {
        assert!(request["headers"][header].is_null(), "{header}: {request}");
    }
    assert!(request["headers"]["content-type"]
        .as_str()
        .unwrap()
        .starts_with("text/plain"));
    assert!(request["body"].as_str().unwrap().contains(HOSTILE));
    let body = body_json(&hostile_request("bark", "/DeviceKey"));
    for field in ["markdown", "level", "call", "sound", "icon"] {
        assert!(body.get(field).is_none(), "{field}: {body}");
    }
    assert!(body["body"].as_str().unwrap().contains(HOSTILE));
}

/// With a public base URL in the config file when the endpoint is added
/// (and the status site on), a notification links to the record's page and
/// keeps the source post; the base is kept with the endpoint, so a
/// deliverer started without that config links the same.
#[test]
fn a_public_base_url_links_notifications_to_the_record_page() {
    let r = Receiver::start();
    let w = World::new();
    let config = w.path("config.toml");
    std::fs::write(
        &config,
        "public-base-url = \"https://status.example/team\"\n",
    )
    .unwrap();
    add(
        &w,
        &r.url("/ntfy/resets"),
        &["--format", "ntfy", "--config", config.to_str().unwrap()],
    );
    schedule(&w, T0, A, "pro");
    deliver_at(&w, T0).success();
    let requests = r.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let page = format!("https://status.example/team/records/{A}");
    assert_eq!(requests[0]["headers"]["click"], page.as_str());
    let body = requests[0]["body"].as_str().unwrap();
    assert!(
        body.contains(&format!("Details: {page}\nSource: {SOURCE}")),
        "{body:?}"
    );
}
