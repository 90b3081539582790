//! One line of the outbox: the header, a change (a transition or a time
//! event) and a commit; their bytes; and the id a change is sent under.

use crate::model::{Record, ScheduleWindow, Timestamp};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// One line of the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "camelCase")]
pub enum Line {
    /// The first line: who this outbox is.
    Header {
        /// A random id (the epoch), part of every message id.
        outbox: String,
        /// The number of the first change held (past 0 once compacted).
        #[serde(default, skip_serializing_if = "is_zero")]
        first: u64,
        /// Reminders appended before `first` that have not expired.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reminded: Vec<Reminded>,
        /// The `webhooks/` directory it was made in ([`home_of`]): another
        /// one means a restore or a copy.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        home: Option<String>,
        /// Time events due before this instant are not appended (set when
        /// the outbox found itself restored).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quiet_until: Option<Timestamp>,
    },
    /// One change.
    Change(Box<OutboxEntry>),
    /// The end of one publish's changes.
    Commit {
        /// The snapshot the changes above lead to.
        sequence: u64,
        /// The next entry number.
        next: u64,
    },
}

pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A reminder the outbox has held, by its key, until it expires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reminded {
    /// [`crate::remind::Reminder::key`].
    pub key: String,
    /// From this instant on it is never sent.
    pub expires_at: Timestamp,
}

/// What makes an entry a reminder ([`crate::remind`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReminderFacts {
    /// [`crate::remind::Reminder::key`].
    pub key: String,
    /// Minutes before the window starts (`reset.upcoming`).
    pub lead_minutes: Option<u32>,
    /// The instant it refers to.
    pub at: Timestamp,
    /// From this instant on it is not sent (the deliverer skips it).
    pub expires_at: Timestamp,
}

/// One change, as every endpoint will be told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEntry {
    /// Position in the outbox (0, 1, 2, …): the deliverer's cursor counts these.
    pub n: u64,
    /// The message id (`webhook-id`), unique and stable across retries.
    pub id: String,
    /// A change ([`crate::changes::EVENT_TYPES`]) or a time event
    /// ([`crate::remind::ReminderKind`]).
    #[serde(rename = "type")]
    pub event_type: String,
    /// The kind filters (`all`, `reset_scheduled`, `reset_completed`)
    /// whose subscribers hear of it: those the record is of
    /// ([`crate::changes::concerns`]).
    pub kinds: Vec<String>,
    /// The snapshot sequence that made the change.
    pub sequence: u64,
    /// That snapshot's `generatedAt`.
    pub generated_at: Timestamp,
    /// When it was published (the payload's `timestamp`).
    pub published_at: Timestamp,
    /// The record as the API serves it (for a removal, as last served).
    pub record: Record,
    /// For a reminder: its key, lead, instant and expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminder: Option<ReminderFacts>,
    /// `schedule.moved`: the window before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_window: Option<ScheduleWindow>,
    /// `schedule.fulfilled`: the completion that fulfilled it, as served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<Record>,
    /// `schedule.fulfilled` by a completion recorded in the same version:
    /// that completion's id. A message for people tells it in the
    /// completion's message, not in one of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub told_with: Option<String>,
    /// A completion's: the schedules it fulfilled in the same version
    /// (written by earlier versions; a moment's entries say it now).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fulfils: Vec<Record>,
    /// The number of the first change of the publish (or the append of
    /// due time events) it came with: one moment, told to a person as one
    /// message. Lines of earlier versions have none: each is its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<u64>,
    /// `record.updated`: what changed ([`crate::changes::Field`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<crate::changes::Field>,
    /// A completion whose time changed: its time before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_time: Option<Timestamp>,
    /// A change a restore made (`resetctl restore`): when the backup's
    /// data was last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored: Option<Timestamp>,
}

impl OutboxEntry {
    /// The moment it belongs to ([`OutboxEntry::moment`]).
    pub fn moment(&self) -> u64 {
        self.moment.unwrap_or(self.n)
    }
}

/// A message id that names one message forever: the outbox's epoch, the
/// entry's number and the first 32 bits of a SHA-256 of what it says. The
/// epoch changes when the outbox is restored or copied; the digest keeps
/// two outboxes that share an epoch anyway (a file-system snapshot rolled
/// back) from giving one id to two different messages.
pub fn message_id(outbox: &str, entry: &OutboxEntry) -> String {
    use sha2::{Digest, Sha256};
    let content = serde_json::to_vec(entry).expect("an outbox entry serialises");
    let digest = Sha256::digest(&content);
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("msg_{outbox}_{}_{hex}", entry.n)
}

/// What names a `webhooks/` directory: its inode and, where the file
/// system keeps it, its birth time. A directory made by a restore (`tar`,
/// `cp`, `rsync`) has another; a rename within the file system keeps it.
pub fn home_of(dir: &Path) -> io::Result<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir)?;
    let born = meta
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    Ok(match born {
        Some(born) => format!("{}-{}", meta.ino(), born.as_nanos()),
        None => meta.ino().to_string(),
    })
}

pub(super) fn line_bytes(line: &Line) -> Vec<u8> {
    let mut out = Vec::new();
    push_line(&mut out, line);
    out
}

pub(super) fn push_line(out: &mut Vec<u8>, line: &Line) {
    serde_json::to_writer(&mut *out, line).expect("an outbox line serialises");
    out.push(b'\n');
}
