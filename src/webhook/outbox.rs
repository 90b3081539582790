//! The webhook outbox: every published change, durable before any pointer
//! moves and before anything is sent.
//!
//! `<data-dir>/webhooks/outbox.jsonl` is append-only JSON lines, written
//! only under the data-dir lock by the one publish step
//! ([`SnapshotStore::publish`](crate::snapshot::SnapshotStore::publish) and
//! [`rollback`](crate::snapshot::SnapshotStore::rollback)):
//!
//! - a header line naming the outbox (a random id, so message ids of a
//!   re-created data dir never collide with old ones);
//! - one `change` line per change, carrying the record exactly as served,
//!   so the outbox is self-contained and snapshot retention never matters
//!   to delivery;
//! - one `commit` line per publish that had changes, naming the snapshot it
//!   brought receivers to.
//!
//! Readers (the deliverer, `status`) take no lock and see only lines up to
//! the last commit, so a publish killed half way (or a torn last line) is
//! invisible; the next writer cuts such a tail off before it appends.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::changes::{diff, ChangeKind};
use crate::model::{Record, Timestamp};
use crate::query::KindFilter;
use crate::store::DataDirLock;

/// The outbox file name, under `webhooks/`.
pub const OUTBOX_FILE: &str = "outbox.jsonl";

/// One line of the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "camelCase")]
pub enum Line {
    /// The first line: who this outbox is.
    Header {
        /// A random id, part of every message id.
        outbox: String,
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

/// One change, as every endpoint will be told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEntry {
    /// Position in the outbox (0, 1, 2, …): the deliverer's cursor counts these.
    pub n: u64,
    /// The message id (`webhook-id`), unique and stable across retries.
    pub id: String,
    /// `record.created`, `record.updated` or `record.removed`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// The kind filters (`all`, `reset_scheduled`, `reset_completed`) under
    /// which this change is seen as `event_type` (a fulfilment removes a
    /// schedule from `all` but updates it in `reset_scheduled`).
    pub kinds: Vec<String>,
    /// The snapshot sequence that made the change.
    pub sequence: u64,
    /// That snapshot's `generatedAt`.
    pub generated_at: Timestamp,
    /// When it was published (the payload's `timestamp`).
    pub published_at: Timestamp,
    /// The record as the API serves it (for a removal, as last served).
    pub record: Record,
}

/// Why the outbox could not be read or appended to.
#[derive(Debug, thiserror::Error)]
#[error("webhook outbox {path}: {source}")]
pub struct OutboxError {
    /// The outbox file.
    pub path: PathBuf,
    /// The underlying error.
    #[source]
    pub source: io::Error,
}

/// The committed part of the outbox.
#[derive(Debug, Default, Clone)]
pub struct Committed {
    /// The outbox id, once there is one.
    pub outbox: Option<String>,
    /// Every committed change, by `n`.
    pub entries: Vec<OutboxEntry>,
    /// The snapshot the last commit led to.
    pub last_sequence: Option<u64>,
    /// The next entry number.
    pub next: u64,
    /// Where the committed part ends, in bytes.
    pub end: u64,
}

/// The outbox of one data dir.
#[derive(Debug, Clone)]
pub struct Outbox {
    path: PathBuf,
}

impl Outbox {
    /// The outbox of `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join("webhooks").join(OUTBOX_FILE),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, source: io::Error) -> OutboxError {
        OutboxError {
            path: self.path.clone(),
            source,
        }
    }

    /// Reads the committed lines from byte `from` on (0 for all), adding
    /// them to `into`. Lines past the last commit are not taken.
    pub fn read_from(&self, into: &mut Committed) -> Result<(), OutboxError> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(self.err(e)),
        };
        file.seek(SeekFrom::Start(into.end))
            .map_err(|e| self.err(e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| self.err(e))?;
        let base = into.end;
        let mut pending = Vec::new();
        let mut offset = 0usize;
        while let Some(len) = bytes[offset..].iter().position(|b| *b == b'\n') {
            let line = &bytes[offset..offset + len];
            offset += len + 1;
            match serde_json::from_slice::<Line>(line) {
                // The header stands on its own: committed when written.
                Ok(Line::Header { outbox }) => {
                    into.outbox = Some(outbox);
                    into.end = base + offset as u64;
                }
                Ok(Line::Change(entry)) => pending.push(*entry),
                Ok(Line::Commit { sequence, next }) => {
                    into.entries.append(&mut pending);
                    into.last_sequence = Some(sequence);
                    into.next = next;
                    into.end = base + offset as u64;
                }
                // A torn or foreign line ends what can be trusted.
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Reads everything committed.
    pub fn read(&self) -> Result<Committed, OutboxError> {
        let mut committed = Committed::default();
        self.read_from(&mut committed)?;
        Ok(committed)
    }

    /// Appends the changes from `old` to `new` (snapshot `sequence`) and
    /// makes them durable. The caller holds the data-dir lock: this is a
    /// step of the one publish step, run before the pointer moves.
    pub fn append(
        &self,
        _lock: &DataDirLock,
        old: &[Record],
        new: &[Record],
        sequence: u64,
        generated_at: Timestamp,
        published_at: Timestamp,
    ) -> Result<usize, OutboxError> {
        let committed = self.read()?;
        let changes = changes_by_filter(old, new);
        if changes.is_empty() {
            return Ok(0);
        }
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir).map_err(|e| self.err(e))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| self.err(e))?;
        // Cut off whatever a killed publish left past the last commit.
        file.set_len(committed.end).map_err(|e| self.err(e))?;
        file.seek(SeekFrom::End(0)).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        let outbox = match committed.outbox {
            Some(id) => id,
            None => {
                let id = crate::webhook::random_token(9);
                push_line(&mut out, &Line::Header { outbox: id.clone() });
                id
            }
        };
        let mut n = committed.next;
        let count = changes.len();
        for (kind, record, kinds) in changes {
            push_line(
                &mut out,
                &Line::Change(Box::new(OutboxEntry {
                    n,
                    id: format!("msg_{outbox}_{n}"),
                    event_type: kind.event_type().to_owned(),
                    kinds,
                    sequence,
                    generated_at,
                    published_at,
                    record: record.clone(),
                })),
            );
            n += 1;
        }
        push_line(&mut out, &Line::Commit { sequence, next: n });
        crate::testhook::reached("outbox:append");
        file.write_all(&out).map_err(|e| self.err(e))?;
        file.sync_data().map_err(|e| self.err(e))?;
        if committed.end == 0 {
            if let Some(dir) = self.path.parent() {
                crate::store::sync_dir(dir).map_err(|e| self.err(e))?;
            }
        }
        crate::testhook::reached("outbox:appended");
        Ok(count)
    }
}

fn push_line(out: &mut Vec<u8>, line: &Line) {
    serde_json::to_writer(&mut *out, line).expect("an outbox line serialises");
    out.push(b'\n');
}

/// The changes under every kind filter, merged: one item per (change
/// type, record), listing the filters that see it so.
fn changes_by_filter<'a>(
    old: &'a [Record],
    new: &'a [Record],
) -> Vec<(ChangeKind, &'a Record, Vec<String>)> {
    let mut merged: Vec<(ChangeKind, &'a Record, Vec<String>)> = Vec::new();
    for filter in KindFilter::ALL {
        for change in diff(old, new, filter) {
            match merged
                .iter_mut()
                .find(|(k, r, _)| *k == change.kind && r.id == change.record.id)
            {
                Some((_, _, kinds)) => kinds.push(filter.as_str().to_owned()),
                None => merged.push((change.kind, change.record, vec![filter.as_str().to_owned()])),
            }
        }
    }
    // The same stable order the diff uses: by record id, then change type.
    merged.sort_by(|a, b| {
        crate::query::compare_ids(&a.1.id, &b.1.id).then(rank(a.0).cmp(&rank(b.0)))
    });
    merged
}

fn rank(kind: ChangeKind) -> u8 {
    match kind {
        ChangeKind::Removed => 0,
        ChangeKind::Created => 1,
        ChangeKind::Updated => 2,
    }
}
