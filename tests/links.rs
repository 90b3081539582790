//! One rule for which URLs become links (src/model/link.rs), seen in every
//! output: a record whose `source.url` is `javascript:…` is served as data
//! by the API, but no page, feed, calendar or notification makes it a link.

use std::time::Duration;

use serde_json::Value;

use crate::util::receiver::Receiver;
use crate::util::server::Server;
use crate::util::upstream::{Behavior, Upstream};
use crate::util::World;
use crate::webhooks::add;

const NOW: &str = "2026-11-20T10:00:00.000Z";
const HOSTILE_URL: &str = "javascript:alert(document.domain)";

#[test]
fn a_javascript_source_url_is_a_link_in_no_output() {
    let mut doc: Value = serde_json::from_str(&crate::util::bundled_document(
        "2026-11-20T09:00:00.000Z",
        3,
    ))
    .unwrap();
    // The newest completion gets the hostile URL.
    let record = doc["records"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["kind"] == "reset_completed" && r["source"]["origin"] == "x")
        .expect("a completion from a post");
    record["source"]["url"] = Value::from(HOSTILE_URL);
    let id = record["id"].as_str().unwrap().to_owned();
    // A mirror's first sync is its baseline (nothing is announced), so the
    // first document lacks the hostile completion and the second brings it.
    let mut before = doc.clone();
    before["records"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["id"] != id.as_str());
    let up = Upstream::start(Behavior::Serve {
        body: before.to_string().into_bytes(),
        etag: None,
        last_modified: None,
    });
    let w = World::new();
    let r = Receiver::start();
    add(
        &w,
        &r.url("/ntfy"),
        &["--format", "ntfy", "--kind", "reset_completed"],
    );
    add(
        &w,
        &r.url("/DeviceKey"),
        &["--format", "bark", "--kind", "reset_completed"],
    );
    add(
        &w,
        &r.url("/slack"),
        &["--format", "slack", "--kind", "reset_completed"],
    );
    let sync = || {
        w.run(&[
            "--now",
            NOW,
            "sync",
            "--upstream",
            &up.url("/doc.json"),
            "--once",
        ])
        .success();
    };
    sync();
    up.set(Behavior::Serve {
        body: doc.to_string().into_bytes(),
        etag: None,
        last_modified: None,
    });
    sync();
    w.run(&["--now", NOW, "webhook", "deliver", "--once"])
        .success();
    // The API serves the record as it came: it is data.
    let s = Server::start(&w, &["--now", NOW], &[]);
    let records = s.get("/openapi/v1/records?kind=reset_completed").json();
    let served = records["data"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .expect("the record is served")
        .clone();
    assert_eq!(served["source"]["url"], HOSTILE_URL);
    // No output makes it a link.
    for path in [
        "/openapi/v1/records.atom?kind=reset_completed".to_owned(),
        "/openapi/v1/records.ics?kind=reset_completed".to_owned(),
        format!("/en/records/{id}"),
        "/en/?kind=reset_completed".to_owned(),
    ] {
        let reply = s.get(&path);
        assert_eq!(reply.status, 200, "{path}");
        let text = reply.text();
        assert!(
            !text.to_ascii_lowercase().contains("javascript:"),
            "{path} carries the URL:\n{text}"
        );
    }
    let requests = r.wait_for("/ntfy", 1, Duration::from_secs(1));
    for request in &requests {
        assert!(request["headers"]["click"].is_null(), "{request}");
        assert!(!request["body"].as_str().unwrap().contains("javascript"));
    }
    for request in r.requests_to("/DeviceKey") {
        let body: Value = serde_json::from_str(request["body"].as_str().unwrap()).unwrap();
        assert!(body.get("url").is_none(), "{body}");
        assert!(!body.to_string().contains("javascript"), "{body}");
    }
    let slack = r.requests_to("/slack");
    assert!(!slack.is_empty());
    for request in slack {
        assert!(
            !request["body"].as_str().unwrap().contains("javascript"),
            "{request}"
        );
    }
}
