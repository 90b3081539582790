//! Recent delivery attempts, `webhooks/deliveries.jsonl`: one JSON line per
//! attempt, appended in one `write` (so concurrent writers never interleave
//! inside a line), trimmed to the newest lines when it grows past a bound.
//! It is a report for operators, not state: the deliverer's cursor and
//! retry schedule live in `state/`.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::Timestamp;

/// Past this size the log is cut to its newest [`KEEP_LINES`] lines.
const MAX_BYTES: u64 = 1 << 20;

/// The largest log read: trimmed past [`MAX_BYTES`], so a larger file was not made by a deliverer.
const READ_CAP: crate::durable::Cap = crate::durable::Cap::mib(64);
const KEEP_LINES: usize = 2000;

/// What came of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// A 2xx answer.
    Delivered,
    /// Failed; tried again at `nextRetryAt`.
    Retrying,
    /// Failed for the whole retry window: given up, the cursor moved on.
    Failed,
    /// 410 Gone: the endpoint was disabled.
    Disabled,
}

impl Outcome {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Retrying => "retrying",
            Outcome::Failed => "failed",
            Outcome::Disabled => "disabled",
        }
    }
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// The endpoint id.
    pub endpoint: String,
    /// The event type.
    pub event: String,
    /// The message id (`webhook-id`).
    pub message: String,
    /// When the attempt was made (the deliverer's clock).
    pub at: Timestamp,
    /// Which attempt of this message (1, 2, …).
    pub attempt: u32,
    /// The answer's status code, if there was an answer.
    pub status: Option<u16>,
    /// Why there was no usable answer.
    pub error: Option<String>,
    /// What came of it.
    pub outcome: Outcome,
    /// When the next attempt is due, while retrying.
    pub next_retry_at: Option<Timestamp>,
}

fn path(data_dir: &Path) -> PathBuf {
    crate::data_dir::DataDir::of(data_dir).deliveries()
}

/// Appends one attempt (best effort: a full disk must not stop delivery).
pub fn append(data_dir: &Path, attempt: &Attempt) {
    let path = path(data_dir);
    let mut line = serde_json::to_vec(attempt).expect("an attempt serialises");
    line.push(b'\n');
    let _ = fs::create_dir_all(crate::data_dir::DataDir::of(data_dir).webhooks());
    if let Ok(mut file) =
        crate::durable::open_data_file(&path, OpenOptions::new().create(true).append(true))
    {
        let _ = file.write_all(&line);
    }
}

/// Cuts the log to its newest lines when it grew past its bound (called by
/// the deliverer, the log's main writer).
pub fn trim(data_dir: &Path) {
    let path = path(data_dir);
    if fs::metadata(&path).map(|m| m.len()).unwrap_or(0) <= MAX_BYTES {
        return;
    }
    let bytes = match crate::durable::read_data_file(&path, READ_CAP) {
        Ok(Some(bytes)) => bytes,
        // Grown past what is read (appends while trimming failed): the
        // log is informational, so it starts afresh rather than grow on.
        Err(crate::durable::ReadError::TooLarge { .. }) => Vec::new(),
        _ => return,
    };
    let lines: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let keep = &lines[lines.len().saturating_sub(KEEP_LINES)..];
    let mut out = keep.join(&b'\n');
    out.push(b'\n');
    let _ = crate::durable::write_atomic(&path, &out);
}

/// The newest `limit` attempts (of one endpoint, if given), oldest first.
pub fn recent(data_dir: &Path, endpoint: Option<&str>, limit: usize) -> Vec<Attempt> {
    let Ok(Some(bytes)) = crate::durable::read_data_file(&path(data_dir), READ_CAP) else {
        return Vec::new();
    };
    let all: Vec<Attempt> = bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Attempt>(line).ok())
        .filter(|a| endpoint.is_none_or(|id| a.endpoint == id))
        .collect();
    all[all.len().saturating_sub(limit)..].to_vec()
}
