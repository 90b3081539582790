//! A webhook receiver process on loopback (tests/util/webhook_receiver.py):
//! logs every request, answers as scripted per path, and verifies signed
//! requests with the Standard Webhooks reference library from PyPI.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::{python, repo_root, wait_until};

/// A running receiver; killed on drop.
pub struct Receiver {
    child: Child,
    dir: tempfile::TempDir,
    /// Its port on 127.0.0.1.
    pub port: u16,
    control: std::sync::Mutex<Value>,
}

impl Receiver {
    /// Starts a receiver and waits until it listens.
    pub fn start() -> Self {
        Self::start_on(0)
    }

    /// [`Receiver::start`] on `port` of 127.0.0.1 (0: a free one): for
    /// endpoints whose URL was written before the test (a data dir of an
    /// earlier version), in a network namespace where that port is free.
    pub fn start_on(port: u16) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port_file = dir.path().join("port");
        let child = Command::new(python())
            .arg(repo_root().join("tests/util/webhook_receiver.py"))
            .arg(&port_file)
            .arg(dir.path().join("log.jsonl"))
            .arg(dir.path().join("control.json"))
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start the webhook receiver");
        wait_until(Duration::from_secs(20), "the receiver listens", || {
            port_file.exists()
        });
        let port = std::fs::read_to_string(&port_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Self {
            child,
            dir,
            port,
            control: std::sync::Mutex::new(json!({"secrets": {}, "scripts": {}})),
        }
    }

    /// `http://127.0.0.1:PORT/PATH`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn write_control(&self, change: impl FnOnce(&mut Value)) {
        let mut control = self.control.lock().unwrap();
        change(&mut control);
        let tmp = self.dir.path().join("control.tmp");
        std::fs::write(&tmp, serde_json::to_vec(&*control).unwrap()).unwrap();
        std::fs::rename(tmp, self.dir.path().join("control.json")).unwrap();
    }

    /// Verify requests to `path` with `secret`.
    pub fn secret(&self, path: &str, secret: &str) {
        self.write_control(|c| c["secrets"][path] = json!(secret));
    }

    /// Answer the n-th request to `path` with `statuses[n]` after `delays[n]` seconds, then `default`.
    pub fn script(&self, path: &str, statuses: &[u16], delays: &[f64], default: u16) {
        self.write_control(|c| {
            c["scripts"][path] = json!({"statuses": statuses, "delays": delays, "default": default})
        });
    }

    /// Answer the n-th request to `path` with `answers[n]` (its status,
    /// headers and body), then with `default`: how a test makes a receiver
    /// refuse in a body, or ask for a wait (`Retry-After`).
    pub fn answer(&self, path: &str, answers: &[Answer], default: Answer) {
        let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
        let bodies: Vec<Value> = answers.iter().map(Answer::json).collect();
        self.write_control(|c| {
            c["scripts"][path] = json!({
                "statuses": statuses,
                "default": default.status,
                "answers": bodies,
                "default_answer": default.json(),
            })
        });
    }

    /// Answer every request to `path` with `status` and a `Location` header.
    pub fn redirect(&self, path: &str, status: u16, location: &str) {
        self.write_control(|c| {
            c["scripts"][path] = json!({"default": status, "location": location})
        });
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("log.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The requests to `path`.
    pub fn requests_to(&self, path: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["path"] == path)
            .collect()
    }

    /// Waits until `path` got at least `n` requests; returns them.
    #[track_caller]
    pub fn wait_for(&self, path: &str, n: usize, timeout: Duration) -> Vec<Value> {
        wait_until(timeout, &format!("{n} requests to {path}"), || {
            self.requests_to(path).len() >= n
        });
        self.requests_to(path)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One scripted answer of the receiver ([`Receiver::answer`]).
#[derive(Debug, Clone)]
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// Its headers.
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: String,
}

impl Answer {
    /// `status` with `body` and no header of note.
    pub fn new(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }

    /// The same answer with the header `name: value` too.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    fn json(&self) -> Value {
        let headers: serde_json::Map<String, Value> = self
            .headers
            .iter()
            .map(|(n, v)| (n.clone(), Value::from(v.as_str())))
            .collect();
        json!({"headers": headers, "body": self.body})
    }
}

/// The verified payload of a standard request (panics, showing the
/// request, when the reference library refused it).
#[track_caller]
pub fn verified(request: &Value) -> Value {
    let payload = &request["verified"];
    assert!(
        payload.is_object(),
        "the standardwebhooks library refused the request: {request:#}"
    );
    payload.clone()
}
